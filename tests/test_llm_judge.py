"""The LLM judge of ``answerable`` (``check --llm-judge``) against the fake chat server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret, write_jsonl  # noqa: E402
from test_llm_client import make_config  # noqa: E402

from mtcb_curate.llm.client import ChatClient  # noqa: E402
from mtcb_curate.llm.judge import judge_pairs  # noqa: E402

DOCS = [{"ticker": "AAA", "company": "Alpha",
         "text": "Alpha's revenue grew by a tenth in 2022, to 110 million dollars, as anvil demand rose.\n"}]
ROWS = [
    # Paraphrased answer: the lexical check warns, the passage does support it.
    {"question": "How did Alpha's revenue change in 2022?", "answer": "It increased ten percent",
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
