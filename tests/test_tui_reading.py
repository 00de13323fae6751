"""Reading every pair at any terminal size: keys scroll the QA panel, its
"more lines" hint names them and is readable in every built-in theme, a compact layout at
<= 120 columns or <= 30 rows shows question, answer and verdict first, and the edit dialog
leaves the source visible beside it at >= 120 columns."""

from __future__ import annotations

import pytest
from textual.color import Color

from conftest import QUESTIONS
from mtcb_curate.tui.screens.edit import EditScreen
from mtcb_curate.tui.widgets.qa_panel import QAPanel
from mtcb_curate.tui.widgets.source_viewer import SourceViewer
from support import opened, review_app, settle, write_source

pytestmark = pytest.mark.usefixtures("review_at_once")


def _luminance(c: Color) -> float:
    """WCAG relative luminance of an opaque colour."""
    def ch(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.r) + 0.7152 * ch(c.g) + 0.0722 * ch(c.b)


def contrast(a: Color, b: Color) -> float:
    """WCAG contrast ratio (1 to 21) of two opaque colours."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def region_text(app, widget) -> str:
    """What the screen shows inside ``widget``'s region, rows joined by spaces, whitespace
    collapsed (a wrapped sentence reads whole again)."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    rows = [strips[y].crop(region.x, region.right).text for y in range(region.y, region.bottom)]
    return " ".join(" ".join(rows).split())


def screen_text(app) -> str:
    return "\n".join(s.text for s in app.screen._compositor.render_strips())


def first_words(text: str, n: int = 4) -> str:
    return " ".join(text.split()[:n])


def long_answer_source(tmp_path):
    rows = [dict(q) for q in QUESTIONS]
    rows[0]["answer"] = "\n".join(f"line {i}" for i in range(60))
    return write_source(tmp_path / "long", questions=rows)


@pytest.mark.slow
async def test_more_hint_is_readable_in_every_builtin_theme(tmp_path, ws):
    session = opened(long_answer_source(tmp_path), ws)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        checked = 0
        for name in sorted(app.available_themes):
            app.theme = name
            await pilot.pause()
            last = panel.render_line(panel.scrollable_content_region.height - 1)
            assert "more line" in last.text, name
            style = next(seg.style for seg in last if seg.text.strip())
            if name.startswith("ansi"):  # the terminal's own palette: its default pair is readable
                assert style.color is None or style.color.is_default or style.color != style.bgcolor, name
                continue
            fg, bg = Color.from_rich_color(style.color), Color.from_rich_color(style.bgcolor)
            assert contrast(fg, bg) >= 3.0, (name, fg.hex, bg.hex)
            # The section labels (Question, Answer) are drawn with a theme colour too.
            label = next(panel.render_line(y) for y in range(panel.scrollable_content_region.height)
                         if panel.render_line(y).text.startswith("Question"))
            lstyle = next(seg.style for seg in label if seg.text.strip())
            assert contrast(Color.from_rich_color(lstyle.color), Color.from_rich_color(lstyle.bgcolor)) >= 3.0, (name, lstyle, label)
            checked += 1
        assert checked >= 10


async def test_panel_scroll_keys_and_the_hint_names_them(tmp_path, ws):
    session = opened(long_answer_source(tmp_path), ws)
    async with review_app(session, size=(160, 45)) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        height = panel.scrollable_content_region.height
        hint = panel.render_line(height - 1).text
        assert "[ ]" in hint and "e shows the whole texts" in hint and "mouse" not in hint
        assert panel.scroll_offset.y == 0
        await pilot.press("right_square_bracket")
        assert panel.scroll_offset.y == height - 1  # a page, the hint row kept as overlap
        await pilot.press("shift+down")
        assert panel.scroll_offset.y == 2 * (height - 1)
        await pilot.press("left_square_bracket", "shift+up")
        assert panel.scroll_offset.y == 0
        await pilot.press("j")  # the next pair starts at its top
        await pilot.press("k")
        assert panel.scroll_offset.y == 0


async def test_rebound_panel_keys_are_named_in_the_hint(tmp_path, ws):
    session = opened(long_answer_source(tmp_path), ws)
    keymap = {"panel_down": "ctrl+j", "panel_up": "ctrl+k"}
    async with review_app(session, size=(160, 45), keymap=keymap) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        hint = panel.render_line(panel.scrollable_content_region.height - 1).text
        assert "ctrl+k ctrl+j" in hint, hint
        await pilot.press("ctrl+j")
        assert panel.scroll_offset.y > 0


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_compact_layout_shows_question_answer_and_verdict_of_every_sample_pair(ws, size):
    session = opened(None, ws, sample=True)
    async with review_app(session, size=size) as (app, pilot):
        assert app.screen.has_class("compact")
        panel = app.screen.query_one(QAPanel)
        assert len(session) == 23
        for pid in range(len(session)):
            if pid:
                await pilot.press("j")
                await settle(app, pilot)
            view = session.view(pid)
            shown = region_text(app, panel)
            badge = panel.section_text("verdict").split()[0]
            assert badge in {"EXACT", "NORMALIZED", "FUZZY", "MISSING", "EMPTY"}, (pid, badge)
            assert badge in shown, (pid, shown)
            assert first_words(view.question) in shown, (pid, shown)
            assert first_words(view.answer) in shown, (pid, shown)
            # The source stays on screen below the panel, scrolled to the passage.
            viewer = app.screen.query_one(SourceViewer)
            assert viewer.region.height >= 3 and viewer.region.y > panel.region.y


async def test_wide_layout_is_not_compact(ws):
    session = opened(None, ws, sample=True)
    async with review_app(session, size=(160, 48)) as (app, pilot):
        assert not app.screen.has_class("compact")
        await pilot.resize_terminal(100, 40)
        await pilot.pause()
        assert app.screen.has_class("compact")
        await pilot.resize_terminal(160, 31)
        await pilot.pause()
        assert not app.screen.has_class("compact")


@pytest.mark.parametrize("size", [(120, 30), (160, 45)])
async def test_edit_dialog_leaves_the_source_visible_beside_it(ws, size):
    session = opened(None, ws, sample=True)
    async with review_app(session, size=size) as (app, pilot):
        review = app.screen
        viewer = review.query_one(SourceViewer)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditScreen)
        dialog = app.screen.query_one("#edit-dialog")
        assert not dialog.region.overlaps(viewer.region), (dialog.region, viewer.region)
        # Not dimmed away either: the source's rows read as they did before the dialog.
        row = viewer.render_line(0).text.strip()
        assert row and row in screen_text(app)


async def test_edit_dialog_is_centred_below_120_columns(ws):
    session = opened(None, ws, sample=True)
    async with review_app(session, size=(100, 30)) as (app, pilot):
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen.query_one("#edit-dialog")
        assert dialog.region.width >= 80  # the texts get the room


async def test_palette_scrolls_the_panel_and_shows_the_keys(tmp_path, ws):
    from mtcb_curate.tui.palette import ENTRIES, key_of

    session = opened(long_answer_source(tmp_path), ws)
    async with review_app(session, size=(160, 45)) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        down = next(e for e in ENTRIES if e.binding_id == "panel_down")
        up = next(e for e in ENTRIES if e.binding_id == "panel_up")
        assert key_of(app, "panel_down") == "key: ],shift+down"
        assert key_of(app, "panel_up") == "key: [,shift+up"
        down.run(app.screen)
        assert panel.scroll_offset.y > 0
        up.run(app.screen)
        assert panel.scroll_offset.y == 0


async def test_pair_shown_again_unchanged_keeps_the_panel_scroll(tmp_path, ws):
    # A worker's result that changes nothing on screen (the same pair shown again) neither
    # scrolls the QA panel back to the top nor repaints it; a changed pair does both.
    session = opened(long_answer_source(tmp_path), ws)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        panel.scroll_page(1)
        await pilot.pause()
        scrolled = panel.scroll_offset.y
        assert scrolled > 0
        app.screen._show_current()
        await pilot.pause()
        assert panel.scroll_offset.y == scrolled
        await pilot.press("j")
        await settle(app, pilot)
        assert panel.scroll_offset.y == 0 and app.screen._shown_pair == 1
