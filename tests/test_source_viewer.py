"""Behaviour of the source document viewer (`mtcb_curate.tui.widgets.source_viewer`)."""

from __future__ import annotations

import html
import random
import re
from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip

from mtcb_curate.tui.widgets.source_viewer import (
    _NON_SINGLE_CELL,
    LineIndex,
    SourceViewer,
    Span,
    wrap_rows,
)


class ViewerApp(App[None]):
    """The smallest app that hosts a viewer filling the screen."""

    CSS = "SourceViewer { width: 1fr; height: 1fr; }"

    def __init__(self, **viewer_options: object) -> None:
        super().__init__()
        self.animation_level = "none"  # TEXTUAL_ANIMATIONS is read at import time
        self.viewer_options = viewer_options

    def compose(self) -> ComposeResult:
        yield SourceViewer(**self.viewer_options)  # type: ignore[arg-type]


def filing(target_bytes: int = 1_000_000, seed: int = 7) -> str:
    """A 10-K-like document: ~30k short lines, with curly quotes and dashes (non-ASCII)."""
    rng = random.Random(seed)
    words = (
        "the Company fiscal year net revenue income operations 2023 $1,234 million "
        "’s — segment risk factors Item 7 Management’s Discussion and Analysis"
    ).split()
    lines: list[str] = []
    size = 0
    while size < target_bytes:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def screenshot_text(app: App) -> str:
    """The text content of `app.export_screenshot()` (SVG tags removed, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", app.export_screenshot())).replace("\xa0", " ")


def bg(viewer: SourceViewer, kind: str):
    return viewer.get_component_rich_style(f"source-viewer--{kind}").bgcolor


def row_has_bg(strip: Strip, color) -> bool:
    return any(seg.style is not None and seg.style.bgcolor == color for seg in strip)


def visible_row(viewer: SourceViewer, row: int) -> Strip:
    y = row - viewer.scroll_offset.y
    assert 0 <= y < viewer.size.height, f"row {row} is not on screen"
    return viewer.render_line(y)


# --------------------------------------------------------------------------- 1. big document


async def test_megabyte_document_centres_focus_span_near_the_end() -> None:
    text = filing()
    assert len(text) >= 1_000_000
    line_count = text.count("\n") + 1
    assert line_count > 25_000
    # A non-empty line about 500 lines from the end.
    lines = text.split("\n")
    target = next(i for i in range(line_count - 500, line_count) if len(lines[i]) > 10)
    start = sum(len(line) + 1 for line in lines[:target])
    span = Span(start, start + 5, "exact")

    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [span])
        await pilot.pause()

        assert viewer.document_length == len(text)
        assert viewer.visual_line_count == line_count  # short lines: one row each at width ~90
        row = viewer.line_of_offset(start)
        assert row == target
        height = viewer.size.height
        assert abs(viewer.scroll_offset.y - (row - height // 2)) <= 1
        assert 0 <= row - viewer.scroll_offset.y < height

        exact = bg(viewer, "exact")
        highlighted = visible_row(viewer, row)
        assert row_has_bg(highlighted, exact)
        assert not row_has_bg(visible_row(viewer, row - 1), exact)
        assert not row_has_bg(visible_row(viewer, row + 1), exact)
        # Only the 5 span characters carry the style.
        styled = "".join(
            seg.text for seg in highlighted if seg.style is not None and seg.style.bgcolor == exact
        )
        assert styled == text[start : start + 5]
        # Gutter shows the 1-based source line number on the row.
        assert highlighted.text.lstrip().startswith(f"{target + 1} ")
        assert highlighted.cell_length == viewer.size.width


async def test_focus_defaults_to_first_span_and_can_be_given() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    early = Span(text.index("line 100\n"), text.index("line 100\n") + 8, "window")
    late = Span(text.index("line 800\n"), text.index("line 800\n") + 8, "exact")
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [late, early])
        await pilot.pause()
        assert viewer.scroll_offset.y == 800 - viewer.size.height // 2
        viewer.show(text, [late, early], focus=early)
        await pilot.pause()
        assert viewer.scroll_offset.y == 100 - viewer.size.height // 2
        viewer.show(text)  # no spans: back to the top
        await pilot.pause()
        assert viewer.scroll_offset.y == 0


async def test_span_taller_than_viewport_is_top_aligned() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    start = text.index("line 500\n")
    end = text.index("line 600\n")
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [Span(start, end, "exact")])
        await pilot.pause()
        assert viewer.scroll_offset.y == 500


# --------------------------------------------------------------------------- 2. hostile text

HOSTILE = "[bold]x[/] [@click=app.quit]click[/] \x1b[31mred"


async def test_markup_and_ansi_are_shown_literally_and_inert() -> None:
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(HOSTILE)
        await pilot.pause()

        line = viewer.render_line(0).text
        assert "[bold]x[/]" in line
        assert "[@click=app.quit]click[/]" in line
        assert "␛[31mred" in line
        assert "\x1b" not in line
        colors = set()
        for segment in viewer.render_line(0):
            style = segment.style
            assert style is not None
            assert not style.bold  # "[bold]" did not embolden
            assert "@click" not in style.meta and not style.link  # no action link
            colors.add(style.color)
        assert len(colors) == 2  # gutter colour + text colour: "\x1b[31m" did not recolour

        assert "[@click=app.quit]click[/]" in screenshot_text(app)

        # Click right on the would-be link: nothing happens, the app keeps running.
        column = line.index("click[/]")
        await pilot.click(SourceViewer, offset=(column, 0))
        await pilot.pause()
        assert app.return_code is None
        assert app.is_running and viewer.is_attached
        assert "[@click=app.quit]" in viewer.render_line(0).text


# --------------------------------------------------------------------------- 3. wrapping

WORDS_250 = ("abcdefghi " * 25)[:-1] + "j"  # 250 characters, a space every 10
assert len(WORDS_250) == 250


async def test_long_line_wraps_at_spaces_and_rewraps_on_resize() -> None:
    # 61 columns = 60 for text + 1 for the viewer's scroll thumb; no gutter.
    app = ViewerApp(show_line_numbers=False)
    async with app.run_test(size=(61, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(WORDS_250)
        await pilot.pause()
        assert viewer.wrap_width == 60
        assert viewer.visual_line_count == 5
        assert [viewer.row_span(r) for r in range(5)] == [
            (0, 60),
            (60, 120),
            (120, 180),
            (180, 240),
            (240, 250),
        ]
        for offset, row in [(0, 0), (59, 0), (60, 1), (125, 2), (239, 3), (240, 4), (249, 4)]:
            assert viewer.line_of_offset(offset) == row
        rendered = [viewer.render_line(y).text for y in range(6)]
        assert rendered[0].startswith("abcdefghi abcdefghi")
        assert rendered[4].rstrip() == "abcdefghij"
        assert rendered[5].strip() == ""

        await pilot.resize_terminal(41, 30)
        await pilot.pause()
        assert viewer.wrap_width == 40
        assert viewer.visual_line_count == 7  # ceil(250 / 40)
        assert viewer.line_of_offset(45) == 1
        assert viewer.line_of_offset(249) == 6
        assert viewer.render_line(0).cell_length == viewer.size.width

        await pilot.resize_terminal(61, 30)
        await pilot.pause()
        assert viewer.visual_line_count == 5


async def test_hard_break_without_spaces_and_gutter_only_on_first_row() -> None:
    app = ViewerApp()
    async with app.run_test(size=(65, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show("x" * 250 + "\nshort")
        await pilot.pause()
        # 65 - 1 (the scroll thumb) - 3 (gutter " 2 ") = 61 cells of text.
        assert viewer.wrap_width == 61
        assert viewer.visual_line_count == 5 + 1
        rows = [viewer.render_line(y).text for y in range(6)]
        assert rows[0].startswith(" 1 xxx")
        assert all(r.startswith("   xxx") for r in rows[1:5])
        assert rows[5].startswith(" 2 short")

        viewer.show_line_numbers = False
        await pilot.pause()
        assert viewer.wrap_width == 64
        assert viewer.visual_line_count == 4 + 1
        assert viewer.render_line(0).text.startswith("xxx")


async def test_wide_characters_do_not_break_layout() -> None:
    text = "中文字符" * 100 + "\n" + "ab中" * 50
    app = ViewerApp(show_line_numbers=False)
    async with app.run_test(size=(40, 20)) as pilot:  # odd width: 39 text cells and the thumb
        viewer = app.query_one(SourceViewer)
        viewer.show(text)
        await pilot.pause()
        width = viewer.size.width
        for y in range(viewer.size.height):
            assert viewer.render_line(y).cell_length == width
        # 400 two-cell characters at 39 cells = 19 per row.
        assert viewer.row_span(0) == (0, 19)
        assert viewer.line_of_offset(400) == viewer.line_of_offset(399)
        assert viewer.line_of_offset(401) == viewer.line_of_offset(400) + 1


def test_wrap_rows_on_a_megabyte_keeps_every_row_within_the_width() -> None:
    # The speed of this (``wrap`` and ``wrap@40``) is reported by benchmarks/bench_source_viewer.py.
    text = filing() + "\n" + "\n".join(["lorem ipsum dolor sit amet " * 4000] * 10)  # + ten 100 KB lines
    lines, starts, wide = _prepare(text)
    assert not any(wide)  # curly quotes and dashes are one cell: the character-counting path
    viewer_index = LineIndex(text)  # what the viewer wraps with: the same rows as `wrap_rows`
    assert list(viewer_index.starts) == starts
    for width in (40, 60):
        rows = wrap_rows(lines, starts, width, wide)
        assert list(viewer_index.wrap(width)) == rows
        assert rows == sorted(set(rows)) and set(starts) <= set(rows)
        line = 0
        for index, row_start in enumerate(rows):
            while line + 1 < len(starts) and starts[line + 1] <= row_start:
                line += 1
            line_end = starts[line] + len(lines[line])
            row_end = min(rows[index + 1] if index + 1 < len(rows) else len(text), line_end)
            chunk = text[row_start:row_end]
            # Fits, or ends with the space it was broken at (cropped when drawn).
            assert len(chunk) <= width or (len(chunk) == width + 1 and chunk.endswith(" ")), (width, chunk)
            if row_end < line_end:  # a break inside a line is at a space: these texts have one per word
                assert chunk.endswith(" ") or text[row_end] == " ", (width, chunk)
    # Nothing to wrap: one row per line, the line starts themselves (no copy).
    assert wrap_rows(lines, starts, 10**6, wide) is starts


def _prepare(text: str) -> tuple[list[str], list[int], list[bool]]:
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return lines, starts, [bool(_NON_SINGLE_CELL.search(line)) for line in lines]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab  中é\u0301\n", max_size=300),
    width=st.integers(min_value=1, max_value=30),
)
def test_wrap_rows_invariants(text: str, width: int) -> None:
    lines, starts, wide = _prepare(text)
    for flags in (wide, [True] * len(lines)):  # the exact (cell) path must agree on narrow lines
        rows = wrap_rows(lines, starts, width, flags)
        assert rows == sorted(set(rows))
        assert set(starts) <= set(rows)
        if flags is wide and not any(wide):
            assert rows == wrap_rows(lines, starts, width, None)
        if flags is not wide:
            assert rows == wrap_rows(lines, starts, width, wide)
        for index, row_start in enumerate(rows):
            line = bisect_right(starts, row_start) - 1
            line_end = starts[line] + len(lines[line])
            row_end = rows[index + 1] if index + 1 < len(rows) else len(text)
            row_end = min(row_end, line_end)
            chunk = text[row_start:row_end]
            fits = cell_len(chunk) <= width
            space_break = chunk.endswith(" ") and cell_len(chunk[:-1]) <= width
            assert fits or space_break or len(chunk) == 1, (chunk, width)
            oversized_char = len(chunk) == 1 and cell_len(chunk) > width  # gets a row alone
            if row_end < line_end and not chunk.endswith(" ") and not oversized_char:
                # Hard break: only when no space fits, and the row is full.
                assert " " not in text[row_start + 1 : row_end + 1]
                assert cell_len(text[row_start : row_end + 1]) > width or len(chunk) == 0


# --------------------------------------------------------------------------- 4. set_spans


async def test_set_spans_switches_kind_on_the_same_rows() -> None:
    text = "\n".join(f"row {i} of the filing" for i in range(200))
    start = text.index("row 120 ")
    end = text.index("row 122 ") + 7  # three source lines
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [Span(start, end, "exact")])
        await pilot.pause()
        exact, closest = bg(viewer, "exact"), bg(viewer, "closest")
        assert exact != closest
        rows = range(viewer.line_of_offset(start), viewer.line_of_offset(end - 1) + 1)
        assert list(rows) == [120, 121, 122]
        y_before = viewer.scroll_offset.y
        for row in rows:
            assert row_has_bg(visible_row(viewer, row), exact)
            assert not row_has_bg(visible_row(viewer, row), closest)

        viewer.set_spans([Span(start, end, "closest")])
        await pilot.pause()
        assert viewer.scroll_offset.y == y_before
        assert viewer.visual_line_count == 200
        for row in rows:
            assert row_has_bg(visible_row(viewer, row), closest)
            assert not row_has_bg(visible_row(viewer, row), exact)
        assert not row_has_bg(visible_row(viewer, 119), closest)
        assert not row_has_bg(visible_row(viewer, 123), closest)

        # Unknown kinds draw as "exact"; overlapping kinds paint in a fixed order.
        viewer.set_spans([Span(start, end, "mystery")])
        await pilot.pause()
        assert row_has_bg(visible_row(viewer, 121), exact)
        viewer.set_spans([Span(start, end, "window"), Span(start, start + 3, "selection")])
        await pilot.pause()
        strip = visible_row(viewer, 120)
        assert row_has_bg(strip, bg(viewer, "selection"))
        assert row_has_bg(strip, bg(viewer, "window"))


# --------------------------------------------------------------------------- 5. empty / message


async def test_empty_document_and_message() -> None:
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show("some text")
        await pilot.pause()
        viewer.show("")
        await pilot.pause()
        assert viewer.document_length == 0
        assert viewer.visual_line_count == 0
        first = viewer.render_line(0)
        assert first.text.strip() == "(empty document)"
        assert any(seg.style is not None and seg.style.dim for seg in first if seg.text.strip())
        assert viewer.render_line(1).text.strip() == ""
        assert viewer.line_of_offset(10) == 0

        viewer.show_message("no document for key 'XYZ'\n[bold]still literal[/]")
        await pilot.pause()
        assert viewer.document_length == 0
        line = viewer.render_line(0)
        assert line.text.strip() == "no document for key 'XYZ' [bold]still literal[/]"
        assert line.cell_length == viewer.size.width
        assert any(seg.style is not None and seg.style.dim for seg in line if seg.text.strip())
        assert "no document for key 'XYZ'" in screenshot_text(app)

        viewer.show("back to a document")
        await pilot.pause()
        assert viewer.render_line(0).text.strip() == "1 back to a document"


# --------------------------------------------------------------------------- keyboard & misc


async def test_keyboard_scrolling() -> None:
    text = "\n".join(f"line {i}" for i in range(300))
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text)
        viewer.focus()
        await pilot.pause()
        assert viewer.has_focus
        height = viewer.size.height
        await pilot.press("down", "down")
        await pilot.pause()
        assert viewer.scroll_offset.y == 2
        await pilot.press("up")
        await pilot.pause()
        assert viewer.scroll_offset.y == 1
        await pilot.press("pagedown")
        await pilot.pause()
        assert viewer.scroll_offset.y == 1 + height
        await pilot.press("pageup")
        await pilot.pause()
        assert viewer.scroll_offset.y == 1
        await pilot.press("end")
        await pilot.pause()
        assert viewer.scroll_offset.y == 300 - height
        await pilot.press("home")
        await pilot.pause()
        assert viewer.scroll_offset.y == 0


async def test_scroll_to_offset_and_resize_keeps_focus_centred() -> None:
    text = "\n".join(f"line {i} " + "word " * 30 for i in range(400))
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text)
        offset = text.index("line 300 ")
        viewer.scroll_to_offset(offset)
        await pilot.pause()
        row = viewer.line_of_offset(offset)
        assert viewer.scroll_offset.y == row - viewer.size.height // 2

        await pilot.resize_terminal(60, 24)  # rows get wrapped; the offset stays centred
        await pilot.pause()
        new_row = viewer.line_of_offset(offset)
        assert new_row > row
        assert viewer.scroll_offset.y == new_row - viewer.size.height // 2

        viewer.scroll_to_offset(0, center=False)
        await pilot.pause()
        assert viewer.scroll_offset.y == 0
        viewer.scroll_to_offset(offset, center=False)  # minimal scroll: row ends up at the bottom
        await pilot.pause()
        assert viewer.line_of_offset(offset) - viewer.scroll_offset.y == viewer.size.height - 1


def test_usable_without_an_app() -> None:
    viewer = SourceViewer()
    viewer.show("hello\nworld", [Span(6, 11)])
    assert viewer.visual_line_count == 2
    assert viewer.line_of_offset(7) == 1
    viewer.show("x")
    viewer.set_spans([Span(0, 1, "closest")])
    viewer.show_message("nothing here")
    assert viewer.document_length == 0


async def test_show_before_mount_is_applied_on_layout() -> None:
    text = "\n".join(f"line {i}" for i in range(500))
    offset = text.index("line 400")

    class EarlyApp(App[None]):
        def __init__(self) -> None:
            super().__init__()
            self.animation_level = "none"

        def compose(self) -> ComposeResult:
            viewer = SourceViewer()
            viewer.show(text, [Span(offset, offset + 8, "exact")])
            yield viewer

    app = EarlyApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        viewer = app.query_one(SourceViewer)
        assert viewer.scroll_offset.y == 400 - viewer.size.height // 2
        assert row_has_bg(visible_row(viewer, 400), bg(viewer, "exact"))


async def test_text_selection_copies_document_text_across_wraps() -> None:
    app = ViewerApp(show_line_numbers=False)
    async with app.run_test(size=(62, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(WORDS_250 + "\nnext line")
        await pilot.pause()
        text, _ending = viewer.get_selection(Selection(Offset(5, 0), Offset(3, 1)))
        assert text == WORDS_250[5:63]  # no newline inserted at the soft wrap
        text, _ending = viewer.get_selection(Selection(Offset(0, 5), None))
        assert text == "next line"

        # A mouse selection is drawn with the screen's selection style.
        app.screen.selections = {viewer: Selection(Offset(5, 0), Offset(3, 1))}
        await pilot.pause()
        selected = viewer.screen.get_component_rich_style("screen--selection").bgcolor
        styled = "".join(
            seg.text
            for y in (0, 1)
            for seg in viewer.render_line(y)
            if seg.style is not None and seg.style.bgcolor == selected
        )
        assert styled == WORDS_250[5:63]


async def test_same_highlights_again_keep_the_scroll_and_draw_nothing() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    span = Span(text.index("line 800\n"), text.index("line 800\n") + 8, "exact")
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [span])
        await pilot.pause()
        viewer.scroll_to(y=10, animate=False, immediate=True)
        await pilot.pause()
        refreshed = []
        original = viewer.refresh
        viewer.refresh = lambda *a, **k: (refreshed.append(1), original(*a, **k))[1]
        viewer.set_spans([span])  # unchanged: the curator's scroll stays, no repaint
        assert viewer.scroll_offset.y == 10 and not refreshed
        viewer.set_spans([span, Span(0, 4, "match")])  # changed: repainted and centred again
        await pilot.pause()
        assert refreshed and viewer.scroll_offset.y == 800 - viewer.size.height // 2
