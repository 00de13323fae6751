"""Headless ``check --as-accepted`` on a workspace, and the bulk chunk_index fill of pairs with a
null chunk_index (``repair --chunk-index``) after which ``links`` passes."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import call_main, write_source  # noqa: E402

DOC = ("Alpha Corp makes industrial anvils in Ohio and Texas.\n"
       "Total revenue was $10 million in fiscal 2022, up from $8 million.\n")


def _source(tmp_path: Path) -> Path:
    rows = [{"question": "What does Alpha Corp make in Ohio and Texas?", "answer": "Industrial anvils",
             "supporting_passage": "Alpha Corp makes industrial anvils in Ohio and Texas.", "ticker": "AAA",
             "chunk_index": None},
            {"question": "What was Alpha's total revenue in fiscal 2022?", "answer": "$10 million",
             "supporting_passage": "Total revenue was $10 million in fiscal 2022, up from $8 million.",
             "ticker": "AAA", "chunk_index": None}]
    return write_source(tmp_path / "src", corpus=[{"ticker": "AAA", "company": "Alpha", "text": DOC}], questions=rows)


def test_null_chunk_index_warns_then_one_bulk_repair_fills_every_one(tmp_path):
    src, ws = _source(tmp_path), tmp_path / "ws"
    r = call_main("check", "ficha", "--source", src)
    assert "WARN  links" in r.stdout and "2 pair(s) without a chunk_index" in r.stdout, r.stdout
    r = call_main("repair", "ficha", "--source", src, "--workspace", ws, "--chunk-index", "--dry-run")
    assert "chunk_index: 2 pair(s) would change" in r.stdout
    r = call_main("repair", "ficha", "--source", src, "--workspace", ws, "--chunk-index")
    assert r.returncode == 0 and "chunk_index: 2 pair(s) changed" in r.stdout, (r.stdout, r.stderr)
    r = call_main("check", "ficha", "--source", src, "--workspace", ws, "--as-accepted")
    assert "ok    links" in r.stdout, r.stdout


def test_as_accepted_checks_undecided_pairs_and_skips_reviewed(tmp_path):
    src, ws = _source(tmp_path), tmp_path / "ws"
    call_main("repair", "ficha", "--source", src, "--workspace", ws, "--chunk-index")
    gate = call_main("check", "ficha", "--source", src, "--workspace", ws)
    assert gate.returncode == 1 and "FAIL  reviewed" in gate.stdout  # nothing decided yet
    assert "ok    verbatim" in gate.stdout and "0 of 0 accepted" in gate.stdout
    r = call_main("check", "ficha", "--source", src, "--workspace", ws, "--as-accepted")
    assert "skip  reviewed" in r.stdout and "2 of 2 accepted" in r.stdout, r.stdout
    assert "as accepted" in r.stderr
    assert r.returncode == 0, r.stdout
