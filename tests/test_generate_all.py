"""``mtcb-curate generate NAME --all``: every document, concurrent calls, resumable."""

from __future__ import annotations

import json
import re
import threading
import time

from conftest import fake_secret
from mtcb_curate.cli import build_parser
from mtcb_curate.cli.generate import PLAN_FILE, run_all
from mtcb_curate.dataset.model import Status
from support import opened, write_source

KEY = fake_secret("llm-key")
NAMES = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"]
CORPUS = [{"ticker": n[:3].upper(), "company": n,
           "text": f"In 2022, {n} sold {100 + i} anvils across its stores. Other text follows here.\n"}
          for i, n in enumerate(NAMES)]
# AAA (Alpha) already has two pairs: it is the best covered, so it comes last.
QUESTIONS = [{"question": f"Where did Alpha sell anvils, question {k}?", "answer": "stores",
              "supporting_passage": "sold 100 anvils across its stores", "ticker": "ALP", "company": "Alpha",
              "chunk_index": 0} for k in range(2)]


def reply(body):
    """A valid pair from the window in the prompt; later documents answer first."""
    text = "\n".join(m["content"] for m in body["messages"])
    m = re.search(r"In 2022, (\w+) sold (\d+) anvils across its stores\.", text)
    time.sleep(0.02 * (6 - NAMES.index(m.group(1))))
    return {"question": f"How many anvils did {m.group(1)} sell in 2022?", "answer": f"{m.group(2)} anvils",
            "supporting_passage": m.group(0)}


def args_for(tmp_path, *extra):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\nconcurrency = 3\n", encoding="utf-8")
    return build_parser().parse_args(["generate", "ficha", "--source", str(tmp_path / "d"), "--workspace",
                                      str(tmp_path / "ws"), "--all", "--model", "fake-model", "--yes",
                                      "--config", str(cfg), "--mode", "quote", *extra])


def test_all_then_resume_after_a_cancel_pays_no_finished_call_twice(tmp_path, fake_llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    cancel = threading.Event()
    seen = []

    def first_run(body):
        seen.append(1)
        if len(seen) >= 2:
            cancel.set()  # the "kill": no new call starts after the second
        return reply(body)

    fake_llm.default = first_run
    assert run_all(args_for(tmp_path), cancel=cancel) == 1
    out = capsys.readouterr()
    assert "rerun the same command to resume" in out.out
    assert (tmp_path / "ws" / PLAN_FILE).is_file()
    first_calls = len(fake_llm.requests)
    assert 2 <= first_calls < 6
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    added_first = len(s) - 2  # may be 0: the cancel closes the calls in flight at once
    s.workspace.close()

    fake_llm.default = reply
    assert run_all(args_for(tmp_path)) == 0
    out = capsys.readouterr()
    assert "resuming the unfinished run" in out.err and "pairs added as undecided from" in out.out
    assert not (tmp_path / "ws" / PLAN_FILE).exists()
    bodies = [json.dumps(r, sort_keys=True) for r in fake_llm.requests]
    # One request per document. A finished call is never paid again; only the calls in flight
    # when the cancel closed them (at most the 3 at once) were sent again.
    assert len(set(bodies)) == 6 and len(bodies) - 6 <= 3
    repeated = {b for b in bodies if bodies.count(b) > 1}
    assert len(repeated) <= 6 - added_first
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    assert len(s) == 2 + 6
    new = [s.view(i) for i in range(2, len(s))]
    assert all(s.status(i) is Status.UNDECIDED for i in range(2, len(s)))
    # Under-covered first: Alpha (2 pairs) comes last; the rest in key order, whatever order the
    # replies came back in.
    order = [v.pair.doc_key for v in new]
    assert order[-1] == "ALP" and set(order) == {c["ticker"] for c in CORPUS}
    assert "document ALP: 1 pair(s) added (#7)" in out.err  # progress per document
    s.workspace.close()


def test_all_is_deterministic_whatever_order_replies_arrive(tmp_path, fake_llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    fake_llm.default = reply
    assert run_all(args_for(tmp_path, "--docs", "GAM,BET", "--per-doc", "2")) == 0
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    # Two jobs per document; the second reply repeats the first question and is dropped.
    assert len(fake_llm.requests) == 4
    assert [s.view(i).pair.doc_key for i in range(2, len(s))] == ["BET", "GAM"]
    s.workspace.close()
    err = capsys.readouterr().err
    assert err.count("document BET:") == 1 and "document BET: 1 pair(s) added (#2)" in err


def test_all_refuses_both_sizes_and_an_unknown_document(tmp_path, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    assert run_all(args_for(tmp_path, "--per-doc", "1", "--per-window", "1")) == 2
    assert run_all(args_for(tmp_path, "--docs", "NOPE")) == 2
    assert fake_llm.requests == []


def test_a_kill_between_adding_pairs_and_saving_the_plan_adds_nothing_twice(tmp_path, fake_llm, monkeypatch):
    from mtcb_curate.app import generation

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    fake_llm.default = reply
    real_save = generation.CorpusRun.save
    saves = []

    def killed_after_adding(self):
        # The plan is saved before the calls (1st save) and after the pairs are added (2nd): die there.
        saves.append(1)
        if len(saves) == 2:
            raise KeyboardInterrupt("killed")
        real_save(self)

    monkeypatch.setattr(generation.CorpusRun, "save", killed_after_adding)
    monkeypatch.setattr(generation.Path, "unlink", lambda self, missing_ok=False: killed_after_adding(None))
    try:
        run_all(args_for(tmp_path, "--docs", "GAM,BET"))
    except KeyboardInterrupt:
        pass
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    assert len(s) == 2 + 2  # both pairs were added before the kill
    s.workspace.close()
    monkeypatch.undo()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    sent = len(fake_llm.requests)
    assert run_all(args_for(tmp_path, "--docs", "GAM,BET")) == 0
    assert len(fake_llm.requests) == sent  # the resumed run is answered by the cache
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    assert len(s) == 2 + 2  # and adds nothing twice
    details = [v["details"] for v in s.workspace.added_pairs().values()]
    assert sorted(tuple(d["job"]) for d in details) == [("BET", 0, 0), ("GAM", 0, 0)]
    assert len({d["run"] for d in details}) == 1
    s.workspace.close()
    assert not (tmp_path / "ws" / PLAN_FILE).exists()


def test_examples_and_form_shares_go_in_the_prompt_tail(tmp_path, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    fake_llm.default = reply
    examples = tmp_path / "examples.txt"
    examples.write_text("# seed questions\nHow many stores did Omega open in 2021?\n\nWhen did Omega list?\n",
                        encoding="utf-8")
    args = args_for(tmp_path, "--docs", "GAM,BET,DEL", "--examples", str(examples))
    args.config.write_text('[llm]\nconcurrency = 3\n[generate]\nforms = { "how much" = 0.5, when = 0.5 }\n',
                           encoding="utf-8")
    assert run_all(args) == 0
    users = sorted((b["messages"][1]["content"] for b in fake_llm.requests), key=lambda u: u[u.index("(chunk"):])
    for user in users:
        window_end = user.index("DOCUMENT WINDOW>>>")
        assert user.index("- How many stores did Omega open in 2021?") > window_end
        assert "seed questions" not in user
    asked = sorted(re.search(r"Ask (a \"\w+)", u).group(1) for u in users)
    # 2 existing questions are "where" (form other): 3 new ones are planned towards 50/50.
    assert asked == ['a "How', 'a "How', 'a "When'] or asked == ['a "How', 'a "When', 'a "When']


def test_a_bad_examples_file_is_refused_naming_the_line(tmp_path, fake_llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    bad = tmp_path / "bad.txt"
    bad.write_text("ok question?\n" + "x" * 600 + "\n", encoding="utf-8")
    assert run_all(args_for(tmp_path, "--examples", str(bad))) == 2
    assert "line 2" in capsys.readouterr().err and fake_llm.requests == []


def test_all_with_json_writes_every_candidate_with_its_provenance(tmp_path, fake_llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    write_source(tmp_path / "d", CORPUS, QUESTIONS)
    fake_llm.default = reply
    out_file = tmp_path / "all.json"
    assert run_all(args_for(tmp_path, "--docs", "GAM,BET", "--json", str(out_file))) == 0
    out = json.loads(out_file.read_text(encoding="utf-8"))
    assert out["mode"] == "quote" and out["finished"] and len(out["candidates"]) == 2
    c = out["candidates"][0]
    assert {c["mode"], c["verdict"], c["attempts"], c["supported"]} == {"quote", "exact", 1, True}
    assert c["model_text"] == c["supporting_passage"] and isinstance(c["pair_id"], int)
    err = capsys.readouterr().err
    # Every progress line is whole: none glued to the next one.
    assert all(line.startswith("mtcb-curate: ") for line in err.splitlines() if line)
    assert f"#{c['pair_id']}: quote, exact" in err
