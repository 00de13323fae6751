"""Issue 15, small things a curator hit: pair ids in the plain ``verify`` and ``check`` output."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import call_main, write_source  # noqa: E402

from mtcb_curate.verify.report import id_list


def test_id_list_names_the_first_ten_then_how_many_more():
    assert id_list([]) == ""
    assert id_list([3, 7]) == "#3, #7"
    assert id_list(range(25)) == ", ".join(f"#{i}" for i in range(10)) + " +15 more"


def test_verify_and_check_print_pair_ids(tmp_path):
    rows = [{"question": f"What is fact {i}?", "answer": f"A{i}", "supporting_passage": f"Not in the text {i}.",
             "ticker": "AAA", "chunk_index": 0} for i in range(14)]
    src = write_source(tmp_path / "src", corpus=[{"ticker": "AAA", "text": "Alpha says nothing at all."}],
                       questions=rows)
    r = call_main("verify", "ficha", "--source", src)
    assert r.returncode == 1
    missing = next(line for line in r.stdout.splitlines() if line.startswith("missing"))
    assert re.search(r"#0, #1, .*#9 \+4 more$", missing), missing
    r = call_main("check", "ficha", "--source", src)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "verbatim" in line and "FAIL" in line)
    assert lines[at + 1].strip() == "pairs " + id_list(range(14)), lines[at:at + 2]
