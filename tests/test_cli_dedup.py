"""``mtcb-curate dedup``: clusters, JSON, exit codes; ``--llm`` against the fake chat server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import fake_secret
from support import opened, run_cli, write_source

DOCS = [{"ticker": "AAA", "company": "Alpha", "text": "Alpha makes anvils. Alpha sells its anvils in Europe, Asia and the Americas through distributors.\n"},
        {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells. Its best year was 2021.\n"}]
ROWS = [
    {"question": "What product does Alpha make?", "answer": "Anvils", "supporting_passage": "Alpha makes anvils.",
     "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "What product does Alpha make?", "answer": "Anvils", "supporting_passage": "Alpha makes anvils.",
     "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "Where does Alpha sell its anvils?", "answer": "Europe",
     "supporting_passage": "Alpha sells its anvils in Europe, Asia and the Americas through distributors.", "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "In which region are Alpha's anvils sold?", "answer": "Europe",
     "supporting_passage": "anvils in Europe, Asia and the Americas through distributors", "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "What does Beta sell?", "answer": "Bells", "supporting_passage": "Beta sells bells.",
     "ticker": "BBB", "company": "Beta", "chunk_index": 0},
]


@pytest.fixture
def data(tmp_path) -> Path:
    return write_source(tmp_path / "d", DOCS, ROWS)


def test_dedup_lists_clusters_and_exits_1_while_unresolved(data, tmp_path, cli):
    proc = cli("dedup", "ficha", "--source", data, "--json", tmp_path / "d.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    clusters = report["clusters"]
    ids = sorted(c["ids"] for c in clusters)
    # Changed with shared_passage: 2 and 3 ask different questions on overlapping passages, a
    # shared-passage group reported apart, not a cluster.
    assert ids == [[0, 1]]
    assert [c["ids"] for c in report["shared_passages"]] == [[2, 3]]
    assert report["shared_passages"][0]["reasons"] == ["overlapping passage"]
    assert "1 shared-passage group(s) (2 pairs)" in proc.stdout
    assert all({"ids", "scores", "reason"} <= set(c) for c in clusters)
    assert all(len(s) == 3 for c in clusters for s in c["scores"])


def test_settled_clusters_exit_0_and_not_duplicates_are_remembered(data, tmp_path, cli):
    s = opened(data, tmp_path / "ws")
    s.keep_one(0, [0, 1])
    s.mark_not_duplicates([2, 3])
    s.workspace.close()
    proc = cli("dedup", "ficha", "--source", data, "--workspace", tmp_path / "ws")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 unresolved" in proc.stdout


def test_threshold_out_of_range_is_exit_2(data, cli):
    assert cli("dedup", "ficha", "--source", data, "--threshold", "0").returncode == 2


def test_llm_dedup_clusters_join_and_are_stored(data, tmp_path, fake_llm, cli):
    # One batch of 5: keep 0, 2, 4; 1 duplicates 0 and 3 duplicates 2.
    fake_llm.script = [{"indices": [0, 2, 4], "groups": [[0, 1], [2, 3]]}]
    key = fake_secret("llm-key")
    env = {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": fake_llm.base_url}
    # A real process: the key must not reach anything it prints, loggers included.
    proc = run_cli("dedup", "ficha", "--source", data, "--workspace", tmp_path / "ws", "--llm",
                   "--model", "fake-model", "--json", tmp_path / "d.json", env=dict(os.environ, **env))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "LLM dedup: 2 question(s) judged duplicates in 2 cluster(s)" in proc.stderr
    assert key not in proc.stdout + proc.stderr
    s = opened(data, tmp_path / "ws", read_only=True)
    from mtcb_curate.app import clusters

    assert sorted(clusters.llm_clusters(s)) == [[0, 1], [2, 3]]
    s.workspace.close()
    # Re-running pays nothing: the replies come from the workspace's cache.
    calls = len(fake_llm.requests)
    proc = cli("dedup", "ficha", "--source", data, "--workspace", tmp_path / "ws", "--llm",
               "--model", "fake-model", env=env)
    assert "1 call(s), 1 from the cache" in proc.stderr, proc.stderr
    assert len(fake_llm.requests) == calls


def test_llm_clusters_merge_with_rapidfuzz_clusters_and_respect_not_duplicates(data, tmp_path):
    from mtcb_curate.app import clusters

    s = opened(data, tmp_path / "ws")
    clusters.store_llm_clusters(s, [[1, 4]])  # the LLM joins #4 to the #0/#1 cluster
    found = clusters.find(s)
    big = next(c for c in found if 4 in c.ids)
    assert big.ids == (0, 1, 4) and clusters.REASON_LLM in big.reasons
    assert big.closest(4, 1)[0][0] in (0, 1) and "LLM" in big.reason
    s.mark_not_duplicates([1, 4])
    assert not any(4 in c.ids for c in clusters.find(s))
    s.workspace.close()
