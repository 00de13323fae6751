"""``mtcb-curate check`` and ``mtcb-curate publish`` end to end (the Hub is the loopback fake)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret, write_jsonl  # noqa: E402
from hubfake import HubFake  # noqa: E402

from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.app.sources import Options, open_session  # noqa: E402

pytestmark = pytest.mark.slow  # every test here runs the command line as a real process

GOOD = [
    {"question": "What does Alpha make according to its filing?", "answer": "Anvils",
     "supporting_passage": "Alpha makes anvils and ships them worldwide.", "ticker": "AAA", "company": "Alpha",
     "chunk_index": 0},
    {"question": "What was Beta's best year according to the filing?", "answer": "2021",
     "supporting_passage": "Its best year was 2021, by revenue and by profit.", "ticker": "BBB",
     "company": "Beta", "chunk_index": 0},
]
DOCS = [
    {"ticker": "AAA", "company": "Alpha", "text": "Alpha makes anvils and ships them worldwide.\nMore text.\n"},
    {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells.\nIts best year was 2021, by revenue and by profit.\n"},
]


def run_cli(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtcb_curate", *map(str, args)], env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def good(tmp_path) -> Path:
    d = tmp_path / "good"
    write_jsonl(d / "corpus.jsonl", DOCS)
    write_jsonl(d / "questions.jsonl", GOOD)
    return d


def reviewed(source: Path, ws: Path, status=Status.ACCEPTED) -> None:
    s = open_session(Options("ficha", source=[str(source)], workspace=ws))
    for pid in range(len(s)):
        s.decide(pid, status)
    s.workspace.close()


def test_check_passes_on_curated_data_and_writes_json_and_markdown(good, tmp_path):
    reviewed(good, tmp_path / "ws")
    proc = run_cli("check", "ficha", "--source", good, "--workspace", tmp_path / "ws",
                   "--json", tmp_path / "c.json", "--markdown", tmp_path / "c.md")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert report["passed"] is True
    assert [c["id"] for c in report["checks"]][:3] == ["verbatim", "unique_passage", "duplicates"]
    assert all({"id", "status", "pairs", "message"} <= set(c) for c in report["checks"])
    assert "`loads`" in (tmp_path / "c.md").read_text(encoding="utf-8")


def test_check_without_workspace_treats_all_as_accepted_and_fails_on_bad_pairs(tiny, tmp_path):
    proc = run_cli("check", "ficha", "--source", tiny, "--json", tmp_path / "c.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["reviewed"]["status"] == "skip" and "no workspace" in proc.stderr
    assert checks["verbatim"]["status"] == "fail" and checks["verbatim"]["pairs"] == [2]
    assert run_cli("check", "ficha", "--source", tmp_path / "missing").returncode == 2


def test_publish_is_refused_by_the_gate_and_force_needs_a_reason(tiny, tmp_path):
    proc = run_cli("publish", "ficha", "--source", tiny, "--license", "cc-by-4.0", "--yes")
    assert proc.returncode == 1 and "publish refused" in proc.stderr
    proc = run_cli("publish", "ficha", "--source", tiny, "--force")
    assert proc.returncode == 2 and "--reason" in proc.stderr


def test_publish_dry_run_writes_loadable_files(good, tmp_path):
    reviewed(good, tmp_path / "ws")
    out = tmp_path / "dry"
    proc = run_cli("publish", "ficha", "--source", good, "--workspace", tmp_path / "ws", "--license", "cc-by-4.0",
                   "--dry-run", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import datasets

    corpus = datasets.load_dataset(str(out), "corpus", split="train", cache_dir=str(tmp_path / "cache"))
    questions = datasets.load_dataset(str(out), "questions", split="train", cache_dir=str(tmp_path / "cache"))
    assert corpus.num_rows == 2 and questions.num_rows == 2
    assert questions[0]["supporting_passage"] == GOOD[0]["supporting_passage"]
    assert "license: cc-by-4.0" in (out / "README.md").read_text(encoding="utf-8")


def test_publish_commits_to_the_hub_and_prints_the_commit_url(good, tmp_path):
    reviewed(good, tmp_path / "ws")
    with HubFake() as hub:
        env = hub.env(tmp_path / "hf")
        token = fake_secret("hub-token")
        env["HF_TOKEN"] = token
        proc = run_cli("publish", "ficha", "--source", good, "--workspace", tmp_path / "ws",
                       "--repo-id", "me/ficha-curated", "--license", "cc-by-4.0", "--yes", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "published and verified: 2 questions, 2 documents" in proc.stdout
        assert "/me/ficha-curated/commit/" in proc.stdout
        assert token not in proc.stdout + proc.stderr
        files = hub.files("me/ficha-curated")
        assert {"README.md", "corpus/train-00000-of-00001.parquet",
                "questions/train-00000-of-00001.parquet"} <= set(files)
