"""``mtcb-curate export``: the BEIR layout, and the verdict / checks / scores columns of the jsonl."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import opened, write_source  # noqa: E402
from test_llm_client import make_config  # noqa: E402

from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.llm.cache import ResponseCache  # noqa: E402
from mtcb_curate.llm.client import ChatClient  # noqa: E402
from mtcb_curate.llm.judge import judge_pairs  # noqa: E402


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def decided(tmp_path, statuses: dict[int, Status]) -> None:
    s = opened(tmp_path / "d", tmp_path / "ws")
    for pid, status in statuses.items():
        s.decide(pid, status)
    s.workspace.close()


def test_beir_export_has_corpus_queries_and_document_qrels(tmp_path, cli):
    write_source(tmp_path / "d")
    decided(tmp_path, {0: Status.ACCEPTED, 1: Status.REJECTED, 2: Status.ACCEPTED})
    out = tmp_path / "beir"
    proc = cli("export", "ficha", "--source", tmp_path / "d", "--workspace", tmp_path / "ws",
               "--format", "beir", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    corpus = read_jsonl(out / "corpus.jsonl")
    assert [(d["_id"], d["title"]) for d in corpus] == [("AAA", "Alpha"), ("BBB", "Beta")]
    assert corpus[0]["text"] == "Alpha makes anvils.\nRevenue was $10 million in 2022.\n"
    queries = read_jsonl(out / "queries.jsonl")
    assert [q["_id"] for q in queries] == ["q0", "q2"]  # accepted only
    assert queries[0]["text"] == "What does Alpha make?"
    assert queries[0]["metadata"] == {"answer": "Anvils", "supporting_passage": "Alpha makes anvils."}
    with open(out / "qrels" / "test.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows == [["query-id", "corpus-id", "score"], ["q0", "AAA", "1"], ["q2", "BBB", "1"]]
    proc = cli("export", "ficha", "--source", tmp_path / "d", "--workspace", tmp_path / "ws",
               "--format", "beir", "--out", out, "--include-undecided")
    assert [q["_id"] for q in read_jsonl(out / "queries.jsonl")] == ["q0", "q2"]  # 1 is rejected, none undecided


def test_jsonl_export_has_verdict_checks_and_judge_scores(tmp_path, cli, fake_llm):
    write_source(tmp_path / "d")
    decided(tmp_path, {0: Status.ACCEPTED})
    # Pair 1 was judged earlier (check --llm-judge): its reply is in the workspace's LLM cache.
    fake_llm.script = [{"answerable": {"score": 5, "reason": "stated"}, "specific": {"score": 2, "reason": "g"},
                        "self_contained": {"score": 4, "reason": "ok"}}]
    cache = ResponseCache.in_workspace(tmp_path / "ws")
    judge_pairs(ChatClient(make_config(fake_llm), cache),
                [(1, "What was Alpha's revenue in 2022?", "$10 million", "Revenue was $10 million in 2022.")])
    cache.close()
    out = tmp_path / "e.jsonl"
    proc = cli("export", "ficha", "--source", tmp_path / "d", "--workspace", tmp_path / "ws", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = read_jsonl(out)
    assert [r["verdict"] for r in rows] == ["exact", "exact", "normalized"]
    assert rows[2]["checks"].get("verbatim") == "fail" and rows[0]["checks"].get("verbatim") is None
    assert rows[1]["scores"] == {"answerable": 5, "specific": 2, "self_contained": 4, "minimal": None}
    assert rows[1]["judge_keep"] is None  # a score is missing: no proposal
    assert rows[0]["scores"] is None and rows[0]["status"] == "accepted"


def load_like_beir(folder: Path) -> tuple[dict, dict, dict]:
    """Read a BEIR folder as BEIR's ``GenericDataLoader(folder).load(split="test")`` does
    (beir 2.x, not installed here: it pulls in torch): corpus and queries by ``_id``, qrels
    after a header row as ``query-id, corpus-id, int(score)``, then the queries kept to those
    with qrels; its log line then reads the first query, so an empty set raises IndexError."""
    corpus = {r["_id"]: {"text": r.get("text"), "title": r.get("title")} for r in read_jsonl(folder / "corpus.jsonl")}
    queries = {r["_id"]: r.get("text") for r in read_jsonl(folder / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / "test.tsv", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        next(reader)
        for row in reader:
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries = {qid: queries[qid] for qid in qrels}
    list(queries.values())[0]  # noqa: B018 - what BEIR's loader does (IndexError when empty)
    return corpus, queries, qrels


def test_beir_export_of_nothing_accepted_is_refused_and_writes_nothing(tmp_path, cli):
    """A fresh workspace: nothing accepted. BEIR's loader fails on an empty query set."""
    out = tmp_path / "beir"
    proc = cli("export", "ficha", "--sample", "--format", "beir", "--out", out)
    assert proc.returncode == 2
    [line] = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert "nothing to export as BEIR: no accepted pair (23 undecided)" in line and "--include-undecided" in line
    assert not out.exists()
    proc = cli("export", "ficha", "--sample", "--format", "beir", "--out", out, "--include-undecided")
    assert proc.returncode == 0, proc.stderr
    assert "wrote 6 documents and 23 queries (BEIR; accepted and undecided pairs)" in proc.stderr
    corpus, queries, qrels = load_like_beir(out)
    assert len(queries) == 23 == len(read_jsonl(out / "queries.jsonl")) and len(corpus) == 6
    assert all(set(rel) <= set(corpus) for rel in qrels.values())


def test_beir_counts_match_the_files(tmp_path, cli):
    write_source(tmp_path / "d")
    decided(tmp_path, {0: Status.ACCEPTED, 2: Status.ACCEPTED})
    out = tmp_path / "beir"
    proc = cli("export", "ficha", "--source", tmp_path / "d", "--workspace", tmp_path / "ws",
               "--format", "beir", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "wrote 2 documents and 2 queries (BEIR; accepted pairs)" in proc.stderr
    _, queries, qrels = load_like_beir(out)
    assert len(queries) == len(qrels) == 2


def test_a_failed_output_folder_write_leaves_no_partial_folder(tmp_path, cli, monkeypatch):
    """``export --format beir`` and ``publish --dry-run``: a write that fails half-way (the
    disk filling up) leaves neither the folder nor any file of it."""
    import errno

    from mtcb_curate import files

    real = files.atomic_write_bytes
    calls = []

    def fail_second(dest, data):  # the second file written under tmp_path (not the checklist's own)
        if str(dest).startswith(str(tmp_path / "home")) or not str(dest).startswith(str(tmp_path)):
            return real(dest, data)
        calls.append(dest)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(dest))
        return real(dest, data)

    monkeypatch.setattr(files, "atomic_write_bytes", fail_second)
    out = tmp_path / "beir"
    proc = cli("export", "ficha", "--sample", "--format", "beir", "--include-undecided", "--out", out)
    assert proc.returncode == 2
    assert f"{out / 'queries.jsonl'}: cannot write (No space left on device)" in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".beir*"))
    calls.clear()
    pub = tmp_path / "deep" / "pub"
    proc = cli("publish", "ficha", "--sample", "--dry-run", pub, "--license", "cc-by-4.0")
    assert proc.returncode == 2, proc.stderr
    assert "cannot write (No space left on device); nothing was left in" in proc.stderr
    assert not (tmp_path / "deep").exists()
