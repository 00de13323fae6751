"""The LLM judge of ``answerable`` (``check --llm-judge``) against the fake chat server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret, write_jsonl  # noqa: E402
from test_llm_client import make_config  # noqa: E402

from mtcb_curate.llm.client import ChatClient  # noqa: E402
from mtcb_curate.llm.judge import judge_pairs  # noqa: E402

DOCS = [{"ticker": "AAA", "company": "Alpha",
         "text": "Alpha's revenue grew by a tenth in 2022, to 110 million dollars, as anvil demand rose.\n"}]
ROWS = [
    # The answer's figure is not in the passage ("10%" for "a tenth"): the rule-based check warns,
    # the passage does support it.
    {"question": "How did Alpha's revenue change in 2022?", "answer": "It increased 10%",
     "supporting_passage": "Alpha's revenue grew by a tenth in 2022, to 110 million dollars",
     "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    # Unsupported answer.
    {"question": "Who is Alpha's chief executive officer?", "answer": "Jane Smith, since 2019",
     "supporting_passage": "as anvil demand rose", "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
]


def test_judge_reads_verdicts_and_reports_unusable_replies(fake_llm):
    fake_llm.script = [{"supported": True, "reason": "a tenth is ten percent"}, "not json at all",
                       {"supported": "maybe"}]
    client = ChatClient(make_config(fake_llm))
    out = judge_pairs(client, [(0, "q0", "a0", "p0"), (1, "q1", "a1", "p1"), (2, "q2", "a2", "p2")])
    assert [(j.pair_id, j.supported) for j in out] == [(0, True), (1, None), (2, None)]
    assert out[0].reason == "a tenth is ten percent" and "unreadable" in out[1].reason
    # The texts went to the server as fenced data.
    assert "<<<\nq0\n>>>" in fake_llm.requests[0]["messages"][1]["content"]


@pytest.mark.slow
def test_check_llm_judge_replaces_the_lexical_verdict(tmp_path, fake_llm):
    write_jsonl(tmp_path / "d" / "corpus.jsonl", DOCS)
    write_jsonl(tmp_path / "d" / "questions.jsonl", ROWS)
    fake_llm.script = [{"supported": True, "reason": "a tenth is ten percent"},
                       {"supported": False, "reason": "the passage names no executive"}]
    key = fake_secret("llm-key")
    env = dict(os.environ, OPENAI_API_KEY=key, OPENAI_BASE_URL=fake_llm.base_url)
    proc = subprocess.run([sys.executable, "-m", "mtcb_curate", "check", "ficha", "--source", str(tmp_path / "d"),
                           "--llm-judge", "--model", "fake-model", "--json", str(tmp_path / "c.json")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    checks = {c["id"]: c for c in json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["checks"]}
    answerable = checks["answerable"]
    assert answerable["pairs"] == [1] and "the passage names no executive" in answerable["reasons"]["1"]
    assert "2 judged, 1 supported after all" in answerable["message"]
    assert len(fake_llm.requests) == 2 and key not in proc.stdout + proc.stderr


def scored(a, s, c, m):
    """A four-criteria reply (None leaves a criterion out)."""
    out = {}
    for k, v in (("answerable", a), ("specific", s), ("self_contained", c), ("minimal", m)):
        if v is not None:
            out[k] = {"score": v, "reason": f"{k} is {v}"}
    return out


def test_judge_scores_four_criteria_against_the_keep_threshold(fake_llm):
    fake_llm.script = [scored(5, 4, 5, 3), scored(4, 2, 5, 5), scored(2, 5, 5, 5)]
    client = ChatClient(make_config(fake_llm))
    out = judge_pairs(client, [(i, f"q{i}", f"a{i}", f"p{i}") for i in range(3)])
    assert [j.keep for j in out] == [True, False, False]
    assert [j.supported for j in out] == [True, True, False]
    assert out[0].scores[1] == ("specific", 4, "specific is 4")
    assert "specific 2 (specific is 2)" in out[1].line() and out[1].line().endswith("below threshold")
    # The prompt asks for every criterion.
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert all(k in system for k in ("answerable", "specific", "self_contained", "minimal"))
    fake_llm.requests.clear()
    fake_llm.script = [scored(4, 2, 5, 5)]
    strict = judge_pairs(ChatClient(make_config(fake_llm)), [(1, "q1", "a1", "p1")], keep_threshold=2)
    assert strict[0].keep is True and strict[0].threshold == 2


def test_judge_reply_with_missing_scores_is_incomplete_not_guessed(fake_llm):
    fake_llm.script = [scored(5, None, 4, None), scored(None, 5, 5, 5),
                       {"answerable": {"score": 9, "reason": "off the scale"}, "specific": "4"}]
    client = ChatClient(make_config(fake_llm))
    out = judge_pairs(client, [(i, f"q{i}", f"a{i}", f"p{i}") for i in range(3)])
    assert out[0].supported is True and out[0].keep is None
    assert dict((k, v) for k, v, _ in out[0].scores) == {"answerable": 5, "specific": None,
                                                         "self_contained": 4, "minimal": None}
    assert "specific ? (missing score)" in out[0].line() and out[0].line().endswith("incomplete")
    # No answerable score: the pair keeps its lexical verdict (supported None), the reason says why.
    assert out[1].supported is None and "answerable" in out[1].reason
    assert out[2].supported is None and out[2].scores[0][1] is None and out[2].scores[1][1] == 4


def test_judge_runs_concurrently_in_input_order(fake_llm):
    import time

    from llmfake import InFlight

    in_flight = InFlight(together=2)

    def step(body):
        q = int(body["messages"][1]["content"].split("<<<\nq")[1].split("\n")[0])
        with in_flight:
            time.sleep(0.03 * (6 - q))
        return scored(q % 5 + 1, 5, 5, 5)

    fake_llm.default = step
    client = ChatClient(make_config(fake_llm))
    out = judge_pairs(client, [(i, f"q{i}", "a", "p") for i in range(6)], concurrency=4)
    assert [j.pair_id for j in out] == list(range(6))
    assert [j.scores[0][1] for j in out] == [i % 5 + 1 for i in range(6)] and in_flight.most > 1


@pytest.mark.slow
def test_check_llm_judge_prints_the_scores_beside_each_pair(tmp_path, fake_llm):
    write_jsonl(tmp_path / "d" / "corpus.jsonl", DOCS)
    write_jsonl(tmp_path / "d" / "questions.jsonl", ROWS)
    fake_llm.script = [scored(5, 4, 5, 4), scored(1, 3, 4, None)]
    key = fake_secret("llm-key")
    env = dict(os.environ, OPENAI_API_KEY=key, OPENAI_BASE_URL=fake_llm.base_url)
    proc = subprocess.run([sys.executable, "-m", "mtcb_curate", "check", "ficha", "--source", str(tmp_path / "d"),
                           "--llm-judge", "--judge-keep", "4", "--model", "fake-model"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert ("judge #0: answerable 5 (answerable is 5); specific 4 (specific is 4); self_contained 5 "
            "(self_contained is 5); minimal 4 (minimal is 4) -> keep") in proc.stdout
    assert "judge #1: answerable 1" in proc.stdout and "minimal ? (missing score) -> incomplete" in proc.stdout


def test_a_bad_judge_reply_is_not_cached_and_no_cache_asks_again(tmp_path, fake_llm):
    from mtcb_curate.cli import main

    write_jsonl(tmp_path / "d" / "corpus.jsonl", DOCS)
    write_jsonl(tmp_path / "d" / "questions.jsonl", ROWS)
    key = fake_secret("llm-key")
    os.environ.update(OPENAI_API_KEY=key, OPENAI_BASE_URL=fake_llm.base_url)
    argv = ["check", "ficha", "--source", str(tmp_path / "d"), "--workspace", str(tmp_path / "ws"), "--llm-judge",
            "--model", "fake-model"]
    from support import opened

    from mtcb_curate.dataset.model import Status

    session = opened(tmp_path / "d", tmp_path / "ws")
    for p in session.pairs:
        session.decide(p.id, Status.ACCEPTED)
    session.workspace.close()
    try:
        fake_llm.script = ["not json", "not json either"]  # a broken server: nothing usable
        main(argv)
        assert len(fake_llm.requests) == 2
        fake_llm.default = {"supported": True, "reason": "fine"}  # fixed: the bad replies are not replayed
        main(argv)
        assert len(fake_llm.requests) == 4
        main(argv)  # the good replies were kept: no call
        assert len(fake_llm.requests) == 4
        main([*argv, "--no-cache"])  # --no-cache: every call goes to the server again
        assert len(fake_llm.requests) == 6
    finally:
        os.environ.pop("OPENAI_API_KEY", None)
        os.environ.pop("OPENAI_BASE_URL", None)
