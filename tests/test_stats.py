"""Statistics: each figure against a hand-computed fixture, the [stats] targets and the
balance check, the CLI in-process, the card section, and the statistics screen (Pilot; hostile
labels rendered literally; the text at 80x24)."""

from __future__ import annotations

import json

import pytest
from support import opened, review_app, settle, wait_until, write_source

from mtcb_curate.dataset.model import Status, Via
from mtcb_curate.errors import CurateError
from mtcb_curate.stats import Targets, balance_problems, compute_stats, question_form, question_type
from mtcb_curate.stats.render import card_markdown, text_report

A = "Alpha makes anvils.\nRevenue was $10 million in 2022.\n"
B = "Beta sells bells.\nIts year was 2021.\n"
CORPUS = [{"ticker": "AAA", "company": "Alpha", "text": A},
          {"ticker": "BBB", "company": "Beta", "text": B},
          {"ticker": "CCC", "company": "Gamma", "text": "Gamma has no question at all.\n"}]
QUESTIONS = [
    {"question": "What does Alpha make?", "answer": "Anvils", "supporting_passage": "Alpha makes anvils.",
     "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "How much revenue did Alpha have in 2022?", "answer": "$10 million",
     "supporting_passage": "Revenue was $10 million in 2022.", "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "Is Beta selling bells?", "answer": "Yes", "supporting_passage": "Beta sells bells.",
     "ticker": "BBB", "company": "Beta", "chunk_index": 0},
    {"question": "What does Zeta do?", "answer": "Nothing", "supporting_passage": "not in any document",
     "ticker": "ZZZ", "company": "Zeta", "chunk_index": 0},
]


@pytest.fixture
def session(tmp_path):
    s = opened(write_source(tmp_path / "src", CORPUS, QUESTIONS), tmp_path / "ws")
    yield s
    s.workspace.close()


# -- rules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("q, form", [
    ("What does Alpha make?", "what"), ("In which year did it start?", "which"),
    ("How many stores does it run?", "how much"), ("When was it founded?", "when"),
    ("Who is the CEO?", "who"), ("Why did sales fall?", "why"), ("List the segments.", "list"),
    ("Did revenue grow?", "yes-no"), ("Where is it based?", "other"), ("", "other"),
])
def test_question_forms_follow_the_documented_rules(q, form):
    assert question_form(q) == form


@pytest.mark.parametrize("q, a, p, kind", [
    ("What was revenue?", "$10 million", "", "numeric"),
    ("What year was it founded?", "1999", "", "date"),
    ("When did it close?", "March 3, 2020", "", "date"),
    ("Who is the CEO?", "Jane Doe", "", "entity"),
    ("What does EBITDA mean?", "earnings before interest, taxes, depreciation and amortization", "", "definition"),
    ("What are the segments?", "Retail, Wholesale, Online", "", "list"),
    ("What was revenue?", "$10", "Revenue\n2022\n$ 10\n$ 9\n", "table"),
    ("Why did it fall?", "because demand dropped sharply in every region", "", "other"),
])
def test_question_types_follow_the_documented_rules(q, a, p, kind):
    assert question_type(q, a, p) == kind


# -- figures against a hand-computed fixture --------------------------------------------------------

def test_each_statistic_matches_the_hand_computed_fixture(session):
    session.decide(0, Status.ACCEPTED)
    session.decide(2, Status.REJECTED, "yes/no")
    session.decide(3, Status.REJECTED, "duplicate of #0")
    session.edit(1, {"supporting_passage": "Revenue was $10 million"}, via=Via.TRIM)
    session.edit(1, {"question": "How much revenue did Alpha have in fiscal 2022?"})
    s = compute_stats(session, passage_limits=(30, 3000))
    assert s.scope == {"dataset": "ficha", "pairs": 4, "subset": False}
    cov = s.coverage
    assert cov["documents"] == 3 and cov["documents_without_pairs"] == ["CCC"]
    assert cov["unlinked_pairs"] == 1 and cov["unplaced_pairs"] == 0  # ZZZ is on no document
    by_doc = {d["doc"]: d for d in cov["per_document"]}
    assert by_doc["AAA"]["pairs"] == 2 and by_doc["AAA"]["per_window"] == [2]
    assert by_doc["BBB"]["per_window"] == [1] and by_doc["CCC"]["per_window"] == [0]
    assert cov["windows"] == 3 and cov["windows_without_pairs"] == 1
    # one window per document: all in the first tenth; AAA's 2 and BBB's 1 pairs placed
    assert cov["by_position"][0] == {"from": 0.0, "windows": 3, "without_pairs": 1, "pairs": 3}
    assert all(p["windows"] == 0 for p in cov["by_position"][1:])
    chars = s.length["chars"]
    # passages: 19, 23 (trimmed), 17, 19 characters
    assert chars["percentiles"]["min"] == 17 and chars["percentiles"]["max"] == 23 and chars["percentiles"]["p50"] == 19
    assert chars["counts"][0] == 4 and sum(chars["counts"]) == 4  # all in 0-31
    assert {m["label"]: m["bin"] for m in chars["marks"]}["min 30"] == 0
    assert {m["label"]: m["bin"] for m in chars["marks"]}["chunk 512"] == 6  # bin 512-767
    assert {m["label"]: m["bin"] for m in chars["marks"]}["max 3,000"] == 10  # bin 2048-4095
    assert s.length["limits"] == {"min_chars": 30, "max_chars": 3000}
    assert chars["longer_than"][256] == 0
    assert s.length["tokens"]["percentiles"]["max"] >= 4
    assert s.forms["what"] == 2 and s.forms["how much"] == 1 and s.forms["yes-no"] == 1 and s.forms["other"] == 0
    assert s.types["numeric"] == 1 and sum(s.types.values()) == 4
    assert s.verdicts["exact"] == 3 and s.verdicts["missing"] == 1
    assert s.statuses == {"undecided": 1, "accepted": 1, "rejected": 2, "skipped": 0, "flagged": 0}
    assert s.rejection_reasons == {"yes/no": 1, "duplicate": 1}
    assert s.edits == {"hand": 1, "trim": 1}
    assert s.pace["decisions"] == 3 and len(s.pace["per_day"]) == 1 and s.pace["per_day"][0]["decisions"] == 3
    assert s.llm == {"recorded": False}
    json.dumps(s.to_json())


def test_session_decisions_at_once_equal_status_and_reason_per_pair(session):
    session.decide(0, Status.ACCEPTED)
    session.decide(2, Status.REJECTED, "yes/no")
    got = session.decisions()
    assert got == {0: ("accepted", None), 2: ("rejected", "yes/no")}
    for i in range(len(session)):
        st, reason = got.get(i, ("undecided", None))
        assert (st, reason) == (session.status(i).value, session.view(i).reason)


def test_without_passage_limits_only_chunk_sizes_are_marked(session):
    s = compute_stats(session)
    assert s.length["limits"] is None
    assert [m["label"] for m in s.length["chars"]["marks"]] == [f"chunk {n:,}" for n in (256, 512, 1024, 2048)]


def test_the_app_marks_the_checklist_limits_of_the_config(session, tmp_path):
    from mtcb_curate.app.stats import session_stats

    cfg = tmp_path / "c.toml"
    cfg.write_text("[checklist]\nmin_passage_chars = 40\nmax_passage_chars = 900\n")
    s = session_stats(session, config=cfg)
    assert s.length["limits"] == {"min_chars": 40, "max_chars": 900}


def test_a_subset_counts_only_its_pairs(session):
    s = compute_stats(session, [0, 1])
    assert s.scope["pairs"] == 2 and s.scope["subset"]
    assert s.coverage["documents_without_pairs"] == ["BBB", "CCC"]
    assert s.forms["what"] == 1 and s.forms["how much"] == 1


def test_windows_are_cached_on_disk_and_reused(session, tmp_path, monkeypatch):
    compute_stats(session, windows_cache=tmp_path / "wc")
    assert len(list((tmp_path / "wc").glob("*.json"))) == 3
    from mtcb_curate.dataset import tokens

    monkeypatch.setattr(tokens, "windows", lambda text: (_ for _ in ()).throw(AssertionError("tokenized again")))
    s = compute_stats(session, windows_cache=tmp_path / "wc")
    assert s.coverage["windows"] == 3


def test_corpus_windows_on_threads_equal_one_by_one_and_fill_the_session_index(tmp_path, monkeypatch):
    from mtcb_curate.dataset import tokens
    from mtcb_curate.stats import windows as sw
    from mtcb_curate.verify import CorpusIndex

    texts = {f"D{i}": ("word café “q” " * (900 * (i + 1))) for i in range(5)}
    texts["E"] = ""
    monkeypatch.setattr(sw, "MAX_THREADS", 3)
    index = CorpusIndex(texts)
    spans = sw.corpus_window_spans(texts, index=index, cache_dir=tmp_path / "wc")
    assert spans == {k: [(w.start, w.end) for w in tokens.windows(t)] for k, t in texts.items()}
    assert len(spans["D4"]) > 1 and all(index.cached_windows(k) is not None for k in texts)
    assert sw.corpus_window_spans(texts, cache_dir=tmp_path / "wc", build=False) == spans  # from disk
    assert sw.corpus_window_spans(texts, cache_dir=tmp_path / "other", build=False) == dict.fromkeys(texts)


def test_per_pair_figures_are_cached_on_disk_and_not_verified_again(session, tmp_path, monkeypatch):
    first = compute_stats(session, located_cache=tmp_path / "located.arrow")
    import mtcb_curate.verify as verify

    monkeypatch.setattr(verify, "verify_dataset", lambda *a, **k: (_ for _ in ()).throw(AssertionError("verified again")))
    again = compute_stats(session, located_cache=tmp_path / "located.arrow")
    assert (again.verdicts, again.length, again.forms, again.types) == (first.verdicts, first.length, first.forms,
                                                                        first.types)
    session.edit(1, {"supporting_passage": "Revenue was $10 million"})  # an edited pair is verified again
    with pytest.raises(AssertionError, match="verified again"):
        compute_stats(session, located_cache=tmp_path / "located.arrow")


def test_a_quick_pass_leaves_verdicts_and_tokens_pending_and_a_full_pass_fills_them(session, tmp_path, monkeypatch):
    import mtcb_curate.verify as verify
    from mtcb_curate.stats import compute

    def boom(*a, **k):
        raise AssertionError("verified or counted in the quick pass")

    with monkeypatch.context() as m:
        m.setattr(verify, "verify_dataset", boom)
        m.setattr(compute, "count_passage_tokens", boom)
        m.setattr(compute, "question_type", boom)
        quick = compute_stats(session, located_cache=tmp_path / "located.arrow", verify=False, count_tokens=False,
                              tag=False)
    assert quick.pending == {"verdicts": 4, "tokens": 4, "tags": 4}
    assert sum(quick.forms.values()) == sum(quick.types.values()) == 0 and quick.balance == []
    assert quick.length["tokens"] is None and sum(quick.verdicts.values()) == 0
    # AAA's 2 and BBB's 1 pairs are not placed (no start yet); ZZZ's is on no document
    assert quick.coverage["unplaced_pairs"] == 3 and quick.coverage["unlinked_pairs"] == 1
    assert "passage length in tokens: not counted (4 passages)" in text_report(quick)
    tagged = compute_stats(session, located_cache=tmp_path / "located.arrow", verify=False, count_tokens=False)
    assert tagged.pending == {"verdicts": 4, "tokens": 4, "tags": 0}
    full = compute_stats(session, located_cache=tmp_path / "located.arrow")
    plain = compute_stats(session)
    assert full.pending == {"verdicts": 0, "tokens": 0, "tags": 0}
    assert quick.length["chars"] == full.length["chars"] and (tagged.forms, tagged.types) == (full.forms, full.types)
    assert {**full.to_json(), "seconds": 0} == {**plain.to_json(), "seconds": 0}
    assert full.verdicts["exact"] == 3 and full.coverage["unplaced_pairs"] == 0


def test_pairs_are_placed_at_once_as_one_by_one():
    import numpy as np

    from mtcb_curate.stats.compute import _place, _place_all

    spans = [(0, 100), (80, 200), (180, 300), (280, 350)]  # overlapping windows
    starts = [a for a, _ in spans]
    positions = np.array([0, 50, 79, 80, 99, 100, 150, 180, 199, 200, 279, 280, 299, 300, 349])
    assert _place_all(spans, positions).tolist() == [_place(spans, starts, int(p)) for p in positions]
    assert _place_all(spans, positions).tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    assert _place_all([(0, 0)], np.array([0])).tolist() == [0]


def test_passage_tokens_are_counted_once_per_distinct_text():
    from mtcb_curate.dataset.tokens import count_tokens
    from mtcb_curate.stats.compute import count_passage_tokens

    texts = ["hello world", "", "Revenue was $10 million in 2022.", "hello world", "café “q”"]
    assert count_passage_tokens(texts) == [count_tokens(t) for t in texts]
    assert count_passage_tokens(["hello world"]) == [2]


def test_passage_tokens_counted_on_threads_equal_one_by_one(tmp_path, monkeypatch):
    from mtcb_curate.dataset.tokens import count_tokens
    from mtcb_curate.stats import compute

    words = ["Revenue", "was", "$10", "million", "café", "“q”", "\n", "2022."]
    questions = [{**QUESTIONS[i % 3], "supporting_passage": " ".join(words[(i + k) % 8] for k in range(i % 13 + 1))}
                 for i in range(2500)]
    s = opened(write_source(tmp_path / "src", CORPUS, questions), tmp_path / "ws")
    from mtcb_curate.stats import located as loc

    monkeypatch.setattr(compute, "TOKEN_THREADS", 2)
    path = tmp_path / "located.arrow"
    got = compute_stats(s, build_windows=False, located_cache=path)
    want = [count_tokens(q["supporting_passage"]) for q in questions]
    assert sum(got.length["tokens"]["counts"]) == 2500 and got.length["tokens"]["percentiles"]["max"] == max(want)
    pairs = [s.pairs[i] for i in range(len(s))]  # each pair's count is its own passage's
    keys = loc.pair_keys([p.doc_key for p in pairs], [p.chunk_index for p in pairs], [p.passage for p in pairs],
                         [p.question for p in pairs], [p.answer for p in pairs])
    assert loc.load(path, loc.corpus_digest(s.dataset.documents)).lookup(keys)["tokens"] == want
    s.workspace.close()


def test_findability_shows_the_saved_preview_scores_without_scoring_again(session, tmp_path, monkeypatch):
    from mtcb_curate.app import preview as app_preview
    from mtcb_curate.app.stats import session_stats
    from mtcb_curate.preview import scoring
    from mtcb_curate.preview.chunkers import parse_spec
    from mtcb_curate.stats.render import markdown_report

    cfg = tmp_path / "c.toml"
    cfg.write_text('[preview]\nchunkers = ["recursive:64", "token:16"]\nk = [1, 3]\n')
    before = session_stats(session, config=cfg)
    assert before.findability == {"run": False}
    assert "no preview run yet" in text_report(before) and "no preview run yet" in markdown_report(before)
    report = app_preview.run_preview(session, [parse_spec("recursive:64")], ks=(1, 3), all_pairs=True,
                                     cache_dir=session.workspace.path)

    def boom(*a, **k):
        raise AssertionError("chunked or scored by the statistics")

    monkeypatch.setattr(scoring, "fill_memo", boom)
    monkeypatch.setattr(app_preview, "chunk_corpus", boom)
    s = session_stats(session, config=cfg)
    assert s.findability["run"] and s.findability["k"] == [1, 3] and s.findability["retriever"] == "bm25"
    row, other = s.findability["chunkers"]
    expected = report.scores[0]
    assert row["recall"] == {"@1": expected.recall[1], "@3": expected.recall[3]}
    assert row["ceiling"] == expected.ceiling and row["chunks"] == expected.n_chunks
    assert (row["scored"], row["pairs"]) == (4, 4) and other == {"chunker": "token:16", "pairs": 4, "scored": 0}
    text = text_report(s)
    assert "recursive:64" in text and "4/4" in text and f"{expected.ceiling:.1%}" in text
    session.edit(1, {"supporting_passage": "Revenue was $10 million"})  # no longer the text scored
    sub = session_stats(session, [0, 1], config=cfg)
    assert sub.findability["chunkers"][0]["scored"] == 1 and sub.findability["chunkers"][0]["pairs"] == 2
    assert session_stats(session, has_workspace=False, config=cfg).findability == {"run": False}


def test_llm_usage_is_read_from_the_cache_with_prices(session):
    from mtcb_curate.llm.cache import ResponseCache

    path = session.workspace.path / "llm.sqlite"
    with ResponseCache(path) as c:
        c.put("k1", model="m", server="s", request={}, response={}, prompt_tokens=1000, completion_tokens=500)
        c.put("k2", model="m", server="s", request={}, response={}, prompt_tokens=None, completion_tokens=None)
    from mtcb_curate.app.stats import llm_usage

    assert llm_usage(session.workspace.path / "none.sqlite") is None
    s = compute_stats(session, llm_usage=llm_usage(path), prices=(1.0, 2.0))
    assert s.llm == {"recorded": True, "calls": 2, "prompt_tokens": 1000, "completion_tokens": 500,
                     "cost_usd": pytest.approx(0.002)}


# -- targets and the balance check ----------------------------------------------------------------

def test_targets_resolve_from_stats_table_and_profile_subtable(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[stats]\nmax_form_share = 0.2\n[stats.ficha]\nmin_pairs_per_document = 3\n")

    class P:
        name = "ficha"

    t = Targets.resolve(P(), cfg)
    assert t.max_form_share == 0.2 and t.min_pairs_per_document == 3 and t.max_type_share is None
    with pytest.raises(CurateError, match="max_form_share"):
        Targets.resolve(None, {"max_form_share": 2})
    with pytest.raises(CurateError, match="unknown"):
        Targets.resolve(None, {"max_from_share": 0.2})


def test_balance_problems_name_the_form_over_its_share_and_short_documents():
    t = Targets(max_form_share=0.5, min_pairs_per_document=1)
    assert balance_problems({"what": 2, "who": 2}, {}, {"A": 1, "B": 3}, t) == []
    out = balance_problems({"what": 3, "who": 1}, {}, {"A": 4, "B": 0}, t)
    assert out[0].startswith("question form 'what' is 75% of 4 pairs") and "1 document(s)" in out[1] and "B" in out[1]


def _balance(session, **kw):
    from mtcb_curate.checks.base import CheckContext
    from mtcb_curate.checks.gate import CHECKS_BY_ID

    return CHECKS_BY_ID["balance"](CheckContext.build(session, has_workspace=False, loads=False, **kw))


def test_balance_check_passes_within_targets_and_warns_outside(session, tmp_path, monkeypatch):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[stats]\nmax_form_share = 0.9\nmin_pairs_per_document = 0\n")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(cfg))
    assert _balance(session).status == "pass"
    cfg.write_text("[stats]\nmax_form_share = 0.4\n")
    r = _balance(session)
    assert r.status == "warn" and "'what' is 50%" in r.message and "CCC" in r.message
    assert r.pairs == [0, 3]  # the 'what' questions


def test_balance_check_reads_the_config_given_not_the_default(session, tmp_path, monkeypatch):
    from mtcb_curate.app.gate import run_gate
    from mtcb_curate.checks import run_checklist

    default = tmp_path / "default.toml"
    default.write_text("[stats]\nmax_form_share = 0.9\nmin_pairs_per_document = 0\n")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(default))
    given = tmp_path / "given.toml"
    given.write_text("[stats]\nmax_form_share = 0.4\nmin_pairs_per_document = 0\n")
    assert run_gate(session, has_workspace=False, loads=False).get("balance").status == "pass"
    r = run_gate(session, has_workspace=False, config=given, loads=False).get("balance")
    assert r.status == "warn" and "'what' is 50%" in r.message and "target at most 40%" in r.message
    targets = Targets(max_form_share=0.4, min_pairs_per_document=0)
    assert run_checklist(session, has_workspace=False, loads=False, targets=targets).get("balance").status == "warn"
    assert _balance(session, targets=targets).status == "warn"


def test_check_command_balance_honours_config(tmp_path, cli, monkeypatch):
    src = write_source(tmp_path / "src", CORPUS, QUESTIONS)
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(tmp_path / "none.toml"))
    cfg = tmp_path / "c.toml"
    cfg.write_text("[stats]\nmax_form_share = 0.3\nmin_pairs_per_document = 0\n")
    out = tmp_path / "r.json"
    r = cli("check", "ficha", "--source", src, "--config", cfg, "--json", out)
    assert r.returncode in (0, 1), r.stderr
    bal = next(c for c in json.loads(out.read_text())["checks"] if c["id"] == "balance")
    assert bal["status"] == "warn" and "target at most 30%" in bal["message"]


# -- CLI and card -------------------------------------------------------------------------------

def test_stats_command_prints_tables_and_writes_json_and_markdown(tmp_path, cli):
    src = write_source(tmp_path / "src", CORPUS, QUESTIONS)
    r = cli("stats", "ficha", "--source", src, "--json", tmp_path / "s.json", "--markdown", tmp_path / "s.md")
    assert r.returncode == 0, r.stderr
    assert "statistics of ficha: 4 pairs" in r.stdout and "question forms:" in r.stdout
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["forms"]["what"] == 2 and data["coverage"]["documents_without_pairs"] == ["CCC"]
    md = (tmp_path / "s.md").read_text()
    assert "## Statistics" in md and "| AAA | 2 |" in md


def test_llm_tag_replies_are_read_strictly():
    from mtcb_curate.llm.tagging import _tag

    def pair(t):
        return t.form, t.type

    assert pair(_tag(3, None, '{"form": "How Much", "type": "numeric"}')) == ("how much", "numeric")
    assert pair(_tag(3, None, '```json\n{"form": "yes/no", "type": "entity"}\n```')) == ("yes-no", "entity")
    odd = _tag(3, None, '{"form": "whatever", "type": "numeric"}')
    assert (odd.form, odd.type) == (None, "numeric") and "no known form" in odd.problem
    assert _tag(3, None, "no json here").problem.startswith("unreadable reply")
    assert _tag(3, "refused", "").problem == "refused"


def test_stats_llm_tags_ask_the_llm_once_and_the_statistics_read_the_tags_back(tmp_path, cli, fake_llm):
    from conftest import fake_secret

    def reply(body):
        user = body["messages"][1]["content"]
        if "Is Beta" in user:
            return {"form": "yes-no", "type": "entity"}
        if "Zeta" in user:
            return "[/] not json"  # hostile and unusable: counted as such, never guessed
        return {"form": "what", "type": "numeric"}

    fake_llm.default = reply
    src = write_source(tmp_path / "src", CORPUS, QUESTIONS)
    ws = tmp_path / "ws"
    key = fake_secret("llm-key")
    env = {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": fake_llm.base_url}
    opened(src, ws).workspace.close()
    r = cli("stats", "ficha", "--workspace", ws, "--json", tmp_path / "a.json")
    assert "question forms and types by the LLM:\n  not run" in r.stdout, r.stdout + r.stderr
    r = cli("stats", "ficha", "--workspace", ws, "--llm-tags", "--model", "fake-model", "--json",
            tmp_path / "s.json", env=env)
    assert r.returncode == 0, r.stderr
    assert len(fake_llm.requests) == 4 and key not in r.stdout + r.stderr
    assert "1 replies without a known form or type" in r.stderr
    t = json.loads((tmp_path / "s.json").read_text())["llm_tags"]
    # The unusable reply is never cached (a bad reply is not replayed): that pair is not tagged.
    assert (t["tagged"], t["pairs"], t["unusable"]) == (3, 4, 0)
    assert t["forms"]["what"] == 2 and t["forms"]["yes-no"] == 1 and t["types"]["numeric"] == 2
    # rules: "What does Alpha make?" what/entity, "How much revenue ..." how much/numeric, "Is Beta ..."
    # yes-no/entity; the LLM: what/numeric, what/numeric, yes-no/entity
    assert t["agree"] == {"form": 2, "type": 2}
    assert "3 of 4 pairs tagged by the LLM" in r.stdout
    # the statistics read the tags back from the LLM cache, without any call
    r = cli("stats", "ficha", "--workspace", ws, "--json", tmp_path / "again.json")
    assert r.returncode == 0 and len(fake_llm.requests) == 4
    assert json.loads((tmp_path / "again.json").read_text())["llm_tags"] == t
    r = cli("stats", "ficha", "--workspace", ws, "--llm-tags", "--model", "fake-model", env=env)
    assert r.returncode == 0 and len(fake_llm.requests) == 5  # the 3 used replies cached; the bad one asked again
    r = cli("stats", "ficha", "--source", src, "--llm-tags", "--model", "fake-model", env=env)
    assert r.returncode == 2 and "needs a workspace" in r.stderr


def test_card_section_escapes_hostile_document_keys(tmp_path):
    corpus = [{"ticker": "[bold]x[/]", "company": "H", "text": A}, {"ticker": "|<b>", "company": "I", "text": B}]
    questions = [dict(QUESTIONS[0], ticker="[bold]x[/]"), dict(QUESTIONS[2], ticker="|<b>")]
    s = opened(write_source(tmp_path / "src", corpus, questions), tmp_path / "ws")
    try:
        md = card_markdown(compute_stats(s))
    finally:
        s.workspace.close()
    assert "\\[bold\\]x\\[/\\]" in md and "<b>" not in md and "&lt;b&gt;" in md
    assert "Question forms" in md and "Passage length" in md


# -- the screen ----------------------------------------------------------------------------------

def _screen_text(app) -> str:
    from textual.widgets import Static

    return "\n".join(str(w.content) for w in app.screen.query(Static))


async def test_key_opens_the_statistics_screen_with_the_numbers(session):
    from mtcb_curate.tui.screens.stats import StatsScreen

    async with review_app(session, size=(120, 30), close=False) as (app, pilot):
        await pilot.press("T")
        await settle(app, pilot)
        assert isinstance(app.screen, StatsScreen)
        text = _screen_text(app)
        assert "Statistics of ficha: all pairs, 4 pairs" in text
        assert "what" in text and "50%" in text and "without pairs: CCC" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, StatsScreen)


async def test_screen_follows_the_current_view(session):
    session.decide(0, Status.ACCEPTED)
    async with review_app(session, size=(120, 30), close=False) as (app, pilot):
        app.screen.show_view(Status.ACCEPTED)
        await pilot.press("T")
        await settle(app, pilot)
        assert "status:accepted, 1 pairs" in _screen_text(app)
        assert app.screen.stats.scope == {"dataset": "ficha", "pairs": 1, "subset": True}


async def test_screen_follows_the_filter_bar(session):
    """The filter bar's view (here: the pairs of document AAA with "Alpha" in them), not only
    the v status cycle."""
    from mtcb_curate.app import filters

    async with review_app(session, size=(120, 30), close=False) as (app, pilot):
        review = app.screen
        review.controller.view_filter = filters.parse("doc:AAA")
        review._apply(review.controller.apply_filter(None, None))
        await pilot.press("T")
        await settle(app, pilot)
        text = _screen_text(app)
        assert "doc:AAA, 2 pairs" in text
        s = app.screen.stats
        assert s.scope["pairs"] == 2 and s.forms["what"] == 1 and s.forms["how much"] == 1


def test_pairs_are_counted_along_the_documents_by_tenths():
    from mtcb_curate.stats.compute import _by_position

    parts = _by_position([{"per_window": [1, 0, 0, 2]}, {"per_window": [0]}, {"per_window": None}])
    # 4 windows: tenths 0, 2, 5, 7 (floor(10 i / 4)); 1 window: tenth 0; None: not tokenized
    got = {k: (p["windows"], p["without_pairs"], p["pairs"]) for k, p in enumerate(parts) if p["windows"]}
    assert got == {0: (2, 1, 1), 2: (1, 1, 0), 5: (1, 1, 0), 7: (1, 0, 2)}
    assert [p["from"] for p in parts][:3] == [0.0, 0.1, 0.2]


def test_chart_positions_put_marks_inside_their_bins():
    from mtcb_curate.tui.screens.stats import _x_of

    edges = [0, 32, 64, 128, None]
    assert _x_of(edges, 0) == 0 and _x_of(edges, 32) == 1 and _x_of(edges, 96) == 2.5
    assert _x_of(edges, 5000) == 3.5  # the open last bin: its middle


async def test_length_and_position_charts_are_drawn_with_their_numbers(session):
    from textual_plot import PlotWidget

    from mtcb_curate.tui.screens.stats import StatsScreen

    async with review_app(session, size=(120, 30), close=False) as (app, pilot):
        await pilot.press("T")
        await settle(app, pilot)
        assert isinstance(app.screen, StatsScreen)
        plots = list(app.screen.query(PlotWidget))
        assert len(plots) == 3  # along the documents, characters, tokens
        along, chars, tokens = plots
        assert [d.y.tolist() for d in chars._datasets] == [app.screen.stats.length["chars"]["counts"]]
        # the four chunk sizes as vertical lines
        assert len(tokens._v_lines) == 4
        assert along._datasets[0].y.tolist()[0] == pytest.approx(100 / 3)  # CCC's one window of 3
        for plot in plots:  # each beside its numbers
            numbers = plot.parent.query_one(".stats-numbers")
            assert numbers.region.x > plot.region.x and numbers.region.y == plot.region.y


async def test_hostile_labels_are_rendered_literally_at_80x24(tmp_path):
    corpus = [{"ticker": "[bold]x[/]", "company": "H", "text": A}, {"ticker": "[/]", "company": "I", "text": B}]
    questions = [dict(QUESTIONS[0], ticker="[bold]x[/]"), dict(QUESTIONS[2], ticker="[/]")]
    s = opened(write_source(tmp_path / "src", corpus, questions), tmp_path / "ws")
    async with review_app(s, size=(80, 24)) as (app, pilot):
        await pilot.press("T")
        await settle(app, pilot)
        text = _screen_text(app)
        assert "[bold]x[/]" in text
        assert any(line.startswith("[/] ") for line in text.splitlines())
        shown = "\n".join(str(app.screen.query_one("#stats-title").render()).splitlines())
        assert shown.startswith("Statistics of ficha: all pairs, 2 pairs")


def test_palette_has_the_statistics_entry():
    from mtcb_curate.tui.palette import ENTRIES

    assert any(e.binding_id == "stats" for e in ENTRIES)


def test_text_report_survives_an_empty_subset(session):
    out = text_report(compute_stats(session, []))
    assert "0 pairs" in out and "balance: within the targets" in out


def test_per_window_counts_are_one_character_per_window():
    from types import SimpleNamespace

    from mtcb_curate.stats.render import document_rows, window_strip

    assert window_strip([0, 0, 1, 9, 12, 0]) == "··19+·"
    assert window_strip(list(range(2)) * 40, 10) == "·1·1·1·1·1…"
    s = SimpleNamespace(coverage={"per_document": [{"doc": "AAA", "pairs": 3, "per_window": [0, 3, 0]},
                                                   {"doc": "BBB", "pairs": 0, "per_window": None}]})
    assert document_rows(s) == [("BBB", 0, "-", "-"), ("AAA", 3, "1/3", "·3·")]


async def test_at_80_columns_each_plot_sits_above_its_numbers(session):
    from mtcb_curate.tui.screens.stats import StatsScreen

    for size, stacked in (((80, 24), True), ((120, 30), False)):
        async with review_app(session, size=size, close=False) as (app, pilot):
            await pilot.press("T")
            await settle(app, pilot)
            assert isinstance(app.screen, StatsScreen)
            row = app.screen.query(".stats-row").first()
            plot, numbers = row.query_one(".stats-plot"), row.query_one(".stats-numbers")
            assert (plot.region.y < numbers.region.y) is stacked, size
            if stacked:
                assert numbers.region.width >= 70 and "·" in str(numbers.content)


@pytest.mark.slow
async def test_screen_shows_the_numbers_before_the_windows_are_tokenized(session, monkeypatch):
    import threading

    from mtcb_curate.stats import compute
    from mtcb_curate.tui.screens.stats import StatsScreen

    release = threading.Event()
    real = compute.corpus_window_spans

    def slow_spans(texts, **kw):  # tokenizing the corpus for its windows takes long
        if kw.get("build", True):
            release.wait(120)  # a guard against a hang: the test sets it
        return real(texts, **kw)

    monkeypatch.setattr(compute, "corpus_window_spans", slow_spans)
    async with review_app(session, size=(120, 30), close=False) as (app, pilot):
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None
                         and "windows: being tokenized" in _screen_text(app), "the numbers shown")
        screen = app.screen
        assert screen.stats is not None and not release.is_set()
        text = _screen_text(app)
        assert "what" in text and "windows: being tokenized" in text
        release.set()
        await wait_until(pilot, lambda: "3 windows of 8,192 tokens" in _screen_text(app), "the windows shown")
        text = _screen_text(app)
        assert "3 windows of 8,192 tokens" in text and "being tokenized" not in text


@pytest.mark.slow
async def test_screen_shows_the_findability_preview_or_says_none_was_run(session):
    from mtcb_curate.app.preview import run_preview
    from mtcb_curate.preview.settings import PreviewSettings
    from mtcb_curate.tui.screens.stats import StatsScreen

    async def shown() -> str:
        async with review_app(session, size=(120, 30), close=False) as (app, pilot):
            await pilot.press("T")
            await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen)
                             and "Findability preview" in _screen_text(app), "the statistics shown")
            return _screen_text(app)

    assert "no preview run yet" in await shown()
    settings = PreviewSettings.resolve(None)
    run_preview(session, settings.chunkers, retriever=settings.retriever, ks=settings.k, all_pairs=True,
                cache_dir=session.workspace.path)
    text = await shown()
    assert "Findability preview (recall, ceiling per chunker)" in text and "no preview run yet" not in text
    assert settings.chunkers[0].text in text and "4/4" in text


def test_a_damaged_or_foreign_figures_cache_is_a_miss(session, tmp_path):
    from mtcb_curate.stats import located as loc

    path = tmp_path / "located.arrow"
    path.write_bytes(b"not an arrow file")
    first = compute_stats(session, located_cache=path)
    assert first.verdicts["exact"] == 3
    corpus = loc.corpus_digest(session.dataset.documents)
    assert len(loc.load(path, corpus)) == 4 and len(loc.load(path, "another corpus")) == 0
    session.edit(1, {"supporting_passage": "Revenue was $10 million"})
    compute_stats(session, located_cache=path)  # the edited pair's row is added, the others kept
    assert len(loc.load(path, corpus)) == 5
    keys = loc.pair_keys(["A", "A"], [0, None], ["p", "p"], ["q", "q"], ["a", "a"])
    assert keys[0] != keys[1] and loc.pair_keys(["A"], [0], ["p"], ["q"], ["a"])[0] == keys[0]


def test_cached_many_gives_what_cached_gives(session):
    from mtcb_curate.app.verdicts import Verdicts

    v = Verdicts(session)
    v.scan()
    session.edit(1, {"supporting_passage": "Revenue was $10 million"})  # its result is now stale
    many = v.cached_many(range(len(session)))
    assert set(many) == {0, 2, 3} and all(many[i] is v.cached(i) for i in many) and v.cached(1) is None


def test_a_documents_digest_is_the_same_from_its_bytes_as_from_its_text():
    """The window cache and the figures cache are named by the text's digest; the statistics
    now read it from the kept UTF-8 bytes without decoding, and must find the same files."""
    from mtcb_curate.dataset.model import Document, encode_text
    from mtcb_curate.stats import located as loc

    text = "Revenue — €5 million\n“quoted” \ud800 lone surrogate"
    assert loc.text_digest(encode_text(text)) == loc.text_digest(text)

    class TextOnly:  # an object with .text only (the digest's documented input)
        def __init__(self, t):
            self.text = t

    docs = {"A": Document("A", text, 0), "B": Document("B", "plain", 1)}
    assert loc.corpus_digest(docs) == loc.corpus_digest({k: TextOnly(d.text) for k, d in docs.items()})
