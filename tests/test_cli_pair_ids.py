"""Pair ids in the plain ``verify`` and ``check`` output."""

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


# -- queue rows with ZWJ emoji or right-to-left text ------------------------------------------

ROWS = {
    0: "·  0 AAA What does the 👨‍👩‍👧‍👦 family plan cost?",
    1: "·  1 AAA מה הכנסות החברה ב־2022 \u202eevil\u202c?",
    2: "·  2 AAA Is ❤️ or 🏳️‍🌈 or 👍🏽 in the 10-K?",
    3: "·  3 AAA 収益はいくらでしたか、そして営業利益はどうでしたか、詳しく教えてください",
    4: "·  4 AAA plain ascii question",
}


def _naive_width(text: str) -> int:
    """The width a terminal that does not join graphemes gives: each code point alone."""
    from rich.cells import get_character_cell_size

    return sum(get_character_cell_size(ch) for ch in text)


def test_display_row_agrees_with_a_terminal_on_every_width():
    from mtcb_curate.tui.widgets.pair_list import display_row

    for width in (20, 37, 60, 120):
        for text in ROWS.values():
            row = display_row(text, width)
            assert _naive_width(row) == width, (width, text, row)
            assert "\u202e" not in row and "\u200d" not in row
    assert display_row("abc", 5) == "abc  " and display_row("abcdef", 4) == "abc…"


async def test_queue_rows_are_not_shifted():
    from textual.app import App, ComposeResult

    from mtcb_curate.tui.widgets.pair_list import PairList

    class Queue(App):
        def compose(self) -> ComposeResult:
            yield PairList(lambda pid, width: ROWS[pid], lambda pid: "undecided")

        def on_mount(self) -> None:
            self.query_one(PairList).set_ids(sorted(ROWS))

    app = Queue()
    async with app.run_test(size=(50, 8)) as pilot:
        await pilot.pause()
        lst = app.query_one(PairList)
        for y in range(len(ROWS)):
            text = "".join(seg.text for seg in lst.render_line(y))
            assert _naive_width(text) == lst.scrollable_content_region.width, (y, text)
