"""Hostile sizes: what is scored or read of a text is bounded.

- Near-duplicate scoring reads at most ``neardup.SCORED_CHARS`` characters of a question or an
  answer, so one 1,000,000-character question costs milliseconds, not 25 s per 11 pairs; the
  checklist reports such a question (``question_form``).
- An LLM reply is bounded before it is parsed, and a candidate outside the checklist's own
  bounds (passage length, answer length, question form) is refused with its reason, reported
  by ``generate`` and never added.

No timing here: the bound is asserted on what reaches rapidfuzz (a spy). The time of the
hostile case is printed by ``benchmarks/bench_neardup.py --hostile``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import rapidfuzz.process

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CORPUS, QUESTIONS, fake_secret, write_jsonl  # noqa: E402
from test_tui_llm import at_once, llm  # noqa: E402,F401 - fixtures of the app tests below

from mtcb_curate import neardup  # noqa: E402
from mtcb_curate.dataset import question_form  # noqa: E402
from mtcb_curate.checks import MAX_ANSWER_CHARS, run_checklist  # noqa: E402
from mtcb_curate.app.sources import Options, command_session, open_session  # noqa: E402

HUGE = 1_000_000


def eleven_items(huge_at: int = 4) -> list[neardup.Item]:
    """11 pairs of one document, two of them near-duplicates; pair ``huge_at`` has a
    1,000,000-character question that starts like pair 0's."""
    qs = [f"What was the figure reported for segment {w} in fiscal 2022?"
          for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa")]
    qs.append("What was the figure reported for segment alpha in fiscal year 2022?")  # near-duplicate of 0
    items = [neardup.Item(i, "AAA", q, f"answer {i}", f"Passage {i} quotes a distinct part of the filing.")
             for i, q in enumerate(qs)]
    words = " ".join(["segment", "figure", "reported", "fiscal"] * (HUGE // 30))
    huge = (qs[0] + " " + words)[:HUGE]
    items[huge_at] = items[huge_at]._replace(question=huge)
    return items


@pytest.fixture
def rapidfuzz_spy(monkeypatch):
    """Every string that reaches rapidfuzz's ``cdist``/``cpdist``/``extractOne``/``extract_iter``:
    returns the list of their lengths (the calls still run)."""
    seen: list[int] = []

    def lengths(value):
        if isinstance(value, str):
            seen.append(len(value))
        elif isinstance(value, dict):
            for v in value.values():
                lengths(v)
        elif isinstance(value, (list, tuple, np.ndarray)):
            for v in value:
                lengths(v)

    for name in ("cdist", "cpdist", "extractOne", "extract_iter"):
        real = getattr(rapidfuzz.process, name)

        def spy(*args, _real=real, **kw):
            for a in args[:2]:
                lengths(a)
            return _real(*args, **kw)

        monkeypatch.setattr(rapidfuzz.process, name, spy)
    return seen


# -- item 14: near-duplicate scoring reads a bounded prefix ----------------------------------------

def test_find_clusters_scores_capped_strings_and_finds_the_same_clusters_as_on_the_capped_text(rapidfuzz_spy):
    items = eleven_items()
    assert len(items[4].question) == HUGE
    clusters = neardup.find_clusters(items)
    assert rapidfuzz_spy and max(rapidfuzz_spy) <= neardup.SCORED_CHARS
    capped = [it._replace(question=it.question[:neardup.SCORED_CHARS]) for it in items]
    assert clusters == neardup.find_clusters(capped)
    # The near-duplicate pair is still found; the huge question links to pair 0 through its prefix.
    assert any({0, 10} <= set(c.ids) for c in clusters)


def test_question_similarity_reads_a_bounded_prefix(monkeypatch):
    seen = []
    real = neardup.fuzz.ratio

    def spy(a, b, **kw):
        seen.extend((len(a), len(b)))
        return real(a, b, **kw)

    monkeypatch.setattr(neardup.fuzz, "ratio", spy)
    huge = eleven_items()[4].question
    assert neardup.question_similarity(huge, huge + " more") == 100.0
    assert max(seen) <= neardup.SCORED_CHARS


def test_a_huge_answer_is_compared_on_its_prefix_only(rapidfuzz_spy):
    items = eleven_items(huge_at=1)
    items[2] = items[2]._replace(answer="x" * HUGE)
    neardup.find_clusters(items)
    assert max(rapidfuzz_spy) <= neardup.SCORED_CHARS


def test_the_apps_cluster_search_scores_capped_strings(tmp_path, rapidfuzz_spy):
    from mtcb_curate.app import clusters

    rows = [dict(QUESTIONS[0]), dict(QUESTIONS[0]), dict(QUESTIONS[1])]
    rows[1]["question"] = rows[0]["question"] + " " + "and more " * (HUGE // 9)
    write_jsonl(tmp_path / "d" / "corpus.jsonl", CORPUS)
    write_jsonl(tmp_path / "d" / "questions.jsonl", rows)
    s = open_session(Options("ficha", source=[str(tmp_path / "d")], workspace=tmp_path / "ws"))
    try:
        found, shared = clusters.find_both(s)
        assert max(rapidfuzz_spy) <= neardup.SCORED_CHARS
        # the same passage, different questions: a shared-passage group, not a cluster
        assert not found and shared and shared[0].closest(0)[0][0] == 1
    finally:
        s.workspace.close()


def test_llm_dedup_falls_back_to_rapidfuzz_on_capped_questions(fake_llm, rapidfuzz_spy):
    from test_llm_client import make_config

    from mtcb_curate.llm.client import ChatClient
    from mtcb_curate.llm.dedup import DedupItem, semantic_dedup

    items = eleven_items()
    # The model keeps 0..9 and names no group: rapidfuzz picks the kept question 10 duplicates.
    fake_llm.default = {"indices": list(range(10))}
    result = semantic_dedup(ChatClient(make_config(fake_llm)),
                            [DedupItem(it.id, it.question, it.answer, it.doc_key) for it in items])
    assert rapidfuzz_spy and max(rapidfuzz_spy) <= neardup.SCORED_CHARS
    assert result.dropped == [10] and [c.members for c in result.clusters] == [(0, 10)]


def test_prompts_list_a_huge_question_or_answer_cut_short():
    from mtcb_curate.llm.prompts import MAX_LISTED_CHARS, dedup_messages, generation_messages

    huge = eleven_items()[4].question
    user = generation_messages("Window.", doc_key="AAA", chunk_index=0,
                               existing_questions=["What does Alpha make?", huge])[1]["content"]
    assert len(user) < 2 * MAX_LISTED_CHARS and "- What does Alpha make?\n" in user and "…" in user
    user = dedup_messages(["What does Alpha make?", huge], answers=["Anvils", "x" * HUGE])[1]["content"]
    assert len(user) < 3 * MAX_LISTED_CHARS and "[0] What does Alpha make?  (answer: Anvils)" in user


# -- item 14: the checklist reports an over-long question ----------------------------------------------

def test_question_form_reports_an_over_long_question():
    assert question_form.form_problem("What was Alpha's revenue in 2022?") is None
    warn = question_form.form_problem("What was " + "x" * question_form.MAX_QUESTION_CHARS + "?")
    assert warn is not None and warn[0] == "warn" and "over-long question" in warn[1]
    fail = question_form.form_problem("What was " + "x" * HUGE + "?")
    assert fail is not None and fail[0] == "fail" and "1,000,010 characters" in fail[1]


@pytest.mark.slow
def test_check_fails_on_a_million_character_question_and_warns_on_a_huge_answer(tmp_path):
    rows = [dict(r) for r in QUESTIONS]
    rows[0]["question"] = "What " + "does Alpha make " * (HUGE // 16)
    rows[1]["answer"] = "It was ten million dollars. " * 100
    write_jsonl(tmp_path / "d" / "corpus.jsonl", CORPUS)
    write_jsonl(tmp_path / "d" / "questions.jsonl", rows)
    with command_session(Options("ficha", source=[str(tmp_path / "d")])) as (session, has_ws):
        report = run_checklist(session, has_workspace=has_ws, loads=False)
    form = report.get("question_form")
    assert form.status == "fail" and 0 in form.failing and "over-long question" in form.reasons[0]
    answerable = report.get("answerable")
    assert f"over the maximum {MAX_ANSWER_CHARS}" in answerable.reasons[1]


# -- item 13: LLM replies are bounded, and candidates meet the checklist's bounds ----------------------

KEY = fake_secret("llm-key")
GOOD = {"question": "How much revenue did Alpha report for 2022?", "answer": "$10 million",
        "supporting_passage": "Revenue was $10 million in 2022."}
FIVE_MB_ANSWER = {**GOOD, "answer": "ten million " * (5_000_000 // 12)}
ONE_CHAR_PASSAGE = {**GOOD, "supporting_passage": "R"}
YES_NO = {**GOOD, "question": "Did Alpha report revenue of $10 million in 2022?", "answer": "Yes."}


def run_generate(tmp_path, fake_llm, *extra, env_extra=None) -> tuple[subprocess.CompletedProcess, dict]:
    write_jsonl(tmp_path / "d" / "corpus.jsonl", CORPUS)
    write_jsonl(tmp_path / "d" / "questions.jsonl", QUESTIONS)
    env = dict(os.environ, OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake_llm.base_url, **(env_extra or {}))
    proc = subprocess.run([sys.executable, "-m", "mtcb_curate", "generate", "ficha", "--source", str(tmp_path / "d"),
                           "--workspace", str(tmp_path / "ws"), "--doc", "AAA", "--n", "1", "--model", "fake-model",
                           "--json", str(tmp_path / "g.json"), "--mode", "quote", *extra],
                          env=env, capture_output=True, text=True, timeout=120)
    out = json.loads((tmp_path / "g.json").read_text(encoding="utf-8")) if (tmp_path / "g.json").exists() else {}
    return proc, out


def workspace_pairs(tmp_path) -> int:
    s = open_session(Options("ficha", source=[str(tmp_path / "d")], workspace=tmp_path / "ws", read_only=True))
    try:
        return len(s)
    finally:
        s.workspace.close()


@pytest.mark.parametrize("reply, reason", [
    (FIVE_MB_ANSWER, "more than the 100,000 read"),
    (ONE_CHAR_PASSAGE, "supporting_passage has 1 characters; quote between 30 and 600"),
    (YES_NO, "is a yes/no question"),
], ids=["5-MB-answer", "1-char-passage", "yes-no-question"])
def test_generate_refuses_a_hostile_reply_with_its_reason_and_adds_nothing(tmp_path, fake_llm, reply, reason):
    fake_llm.default = reply  # every attempt gets the same reply
    proc, out = run_generate(tmp_path, fake_llm)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    assert "0 of 1 pairs generated for AAA" in proc.stdout
    assert out["candidates"] == [] and len(out["refused"]) == out["calls"] == 4
    assert all(any(reason in r for r in refusal["reasons"]) for refusal in out["refused"])
    assert reason in out["failures"][0]
    assert proc.stderr.count("refused: AAA chunk 0 attempt") == 4 and reason in proc.stderr
    assert len(proc.stderr) < 20_000  # the 5 MB reply is never echoed
    assert workspace_pairs(tmp_path) == 3  # nothing added


def test_generate_reports_the_refused_reply_before_the_candidate_it_kept(tmp_path, fake_llm):
    fake_llm.script = [ONE_CHAR_PASSAGE, GOOD]
    proc, out = run_generate(tmp_path, fake_llm)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [c["supporting_passage"] for c in out["candidates"]] == [GOOD["supporting_passage"]]
    assert [(r["attempt"], "between 30 and 600" in r["reasons"][0]) for r in out["refused"]] == [(1, True)]
    assert workspace_pairs(tmp_path) == 4


def test_generate_applies_the_config_files_checklist_bounds(tmp_path, fake_llm):
    config = tmp_path / "config.toml"
    config.write_text("[checklist]\nmin_passage_chars = 40\n", encoding="utf-8")
    fake_llm.default = GOOD  # a 32-character passage
    proc, out = run_generate(tmp_path, fake_llm, "--config", config)
    assert proc.returncode == 1 and out["candidates"] == []
    assert "quote between 40 and 600" in out["refused"][0]["reasons"][0]
    assert workspace_pairs(tmp_path) == 3


# -- item 13 in the app: the regenerate and generate-more screens say what was refused and why ---------

async def test_regenerate_screen_reports_the_refused_reply_and_shows_the_kept_candidate(tiny, tmp_path, llm):
    from test_app import SIZE, opened, settle
    from test_tui_llm import REVENUE, regen_ready, static, until

    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.regenerate import RegenerateScreen

    llm.script = [{**REVENUE, "supporting_passage": "R"}, REVENUE]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(RegenerateScreen(session, 0, n_candidates=1))
        await until(app, pilot, lambda: regen_ready(app), what="the candidate")
        assert "Candidate 1 of 1" in static(app, "#regen-candidate-text")
        note = static(app, "#regen-note")
        assert "1 reply refused: supporting_passage has 1 characters; quote between 30 and 600" in note
    session.workspace.close()


async def test_generate_more_screen_reports_a_five_megabyte_reply_and_adds_nothing(tiny, tmp_path, llm):
    from textual.widgets import Input

    from test_app import SIZE, opened, settle
    from test_tui_llm import static, until

    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.generate_more import GenerateMoreScreen

    llm.default = FIVE_MB_ANSWER
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(GenerateMoreScreen(session, "AAA", n=1))
        await pilot.pause()
        app.screen.query_one(Input).value = "1"
        await pilot.press("enter")
        await until(app, pilot, lambda: isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "ask"
                    and "no usable pair" in static(app, "#gen-note"), what="the failure note")
        note = static(app, "#gen-note")
        assert "4 replies refused" in note and "more than the 100,000 read" in note
        assert len(note) < 2_000
    assert len(session) == 3
    session.workspace.close()
