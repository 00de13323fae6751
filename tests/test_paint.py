"""What the cheaper per-key painting must keep: the same rows, the same selection offsets, a
cursor always on screen, bars that say where they are cut."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult

from mtcb_curate.tui.widgets.bar import Bar, _cut
from mtcb_curate.tui.widgets.pair_list import PairList
from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span

from test_workarounds import assert_counts_arrangements, count_arrangements


@pytest.fixture
def accept_at_once(tmp_path, monkeypatch):
    """``a`` accepts a pair that fails a check without asking (as ``bench_pty`` configures it)."""
    config = tmp_path / "c.toml"
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))


# -- bars ------------------------------------------------------------------------------------


def test_a_bar_that_fits_is_whole_and_a_cut_one_says_so():
    t = Text("Queue · all (23) · row 1/23 · v: change view")
    assert _cut(t, 60) is t
    # a space on the edge: cut there, no ellipsis (what word wrapping showed)
    assert _cut(t, 27).plain == "Queue · all (23) · row 1/23"
    assert _cut(Text("filing_date: 2023-02-08 · 928,066 characters"), 25).plain == "filing_date: 2023-02-08"
    # inside a word: after the last whole word, no dangling separator, then "…"
    cut = _cut(Text("decided 0/23 (0%)  ✓ 0 accepted  — pairs/h"), 38).plain
    assert cut == "decided 0/23 (0%)  ✓ 0 accepted…" and cell_len(cut) <= 38
    # no space near the edge: a hard cut at the edge
    assert _cut(Text("x" * 50), 10).plain == "x" * 9 + "…"
    # wide characters: cut on cells
    wide = _cut(Text("文字" * 20), 11)
    assert cell_len(wide.plain) <= 11 and wide.plain.endswith("…")
    assert _cut(Text("abc"), 1).plain == "…" and _cut(Text("abc"), 0).plain == ""


def test_a_bar_keeps_its_styles_when_cut_and_shows_markup_literally():
    t = Text.assemble(("view: ", "bold"), "[red]12[/red] of 20 · ", ("a long filter line here", "italic"))
    cut = _cut(t, 30)
    assert cut.plain.startswith("view: [red]12[/red]") and cut.plain.endswith("…")
    assert any(str(span.style) == "bold" and span.end == 6 for span in cut.spans)


class BarApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Bar(Text("first"), id="b")


async def test_a_bar_paints_one_row_and_repaints_on_update():
    app = BarApp()
    async with app.run_test(size=(20, 3)) as pilot:
        bar = app.query_one(Bar)
        assert bar.render_line(0).text == "first".ljust(20)
        bar.update(Text("[b]not markup[/b] and more words"))
        await pilot.pause()
        row = bar.render_line(0).text
        assert row.startswith("[b]not markup[/b]") and row.rstrip().endswith("…") and len(row) == 20
        assert str(bar.content).startswith("[b]not markup")


# -- the queue -------------------------------------------------------------------------------


class QueueApp(App[None]):
    CSS = "PairList { height: 12; }"

    def compose(self) -> ComposeResult:
        yield PairList(lambda pid, width: f"pair {pid}", lambda pid: "undecided")


async def test_walking_the_queue_scrolls_by_half_a_page_and_keeps_the_cursor_in_view():
    app = QueueApp()
    async with app.run_test(size=(30, 14)) as pilot:
        queue = app.query_one(PairList)
        queue.set_ids(list(range(200)), keep=0)
        await pilot.pause()
        height = queue.scrollable_content_region.height
        tops = []
        for _ in range(120):
            queue.move_by(1)
            top = queue.scroll_offset.y
            assert top + 1 <= queue.cursor <= top + height - 2  # a row of context each side
            tops.append(top)
        scrolls = sum(1 for a, b in zip(tops, tops[1:]) if a != b)
        assert 0 < scrolls <= 120 // (height // 2) + 1  # once per half page, not once per key
        for _ in range(120):
            queue.move_by(-1)
            top = queue.scroll_offset.y
            assert top <= queue.cursor and (queue.cursor >= top + 1 or top == 0)
            assert queue.cursor <= top + height - 2
        assert queue.cursor == 0 and queue.scroll_offset.y == 0
        queue.move_to(150)  # a jump lands half a page from the top
        assert queue.scroll_offset.y == 150 - height // 2


# -- the source viewer -----------------------------------------------------------------------


class ViewerApp(App[None]):
    CSS = "SourceViewer { width: 1fr; height: 1fr; }"

    def compose(self) -> ComposeResult:
        yield SourceViewer()


@asynccontextmanager
async def shown_viewer(text: str, spans=(), size=(40, 20)):
    """A ``SourceViewer`` alone on screen showing ``text``: yields (app, pilot, viewer)."""
    app = ViewerApp()
    async with app.run_test(size=size) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, list(spans))
        await pilot.pause()
        yield app, pilot, viewer


def filter_calls(app) -> list:
    """The list that grows by one each time one of ``app``'s line filters runs over a row
    (``Strip.apply_filter`` hands back a row's kept filtered copy without running it)."""
    calls: list = []
    for line_filter in app.get_line_filters():
        run = line_filter.apply
        line_filter.apply = lambda segments, background, run=run: calls.append(1) or run(segments, background)
    return calls


async def test_source_rows_carry_the_selection_offsets_of_every_cell():
    text = "\n".join(f"line {i}: the Company’s net revenue — $1,234 million in fiscal 2023 and more words" for i in range(60))
    app = ViewerApp()
    async with app.run_test(size=(50, 12)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [Span(100, 180, "exact"), Span(150, 400, "window")])
        await pilot.pause()
        width = viewer.size.width
        for row in range(viewer.scroll_offset.y, viewer.scroll_offset.y + viewer.size.height):
            strip = viewer._render_row(row, width, None)
            assert strip.cell_length == width
            start, end = viewer.row_span(row)
            x = 0
            shown = ""
            for seg in strip:
                offset = seg.style.meta.get("offset") if seg.style else None
                if offset is None:  # the line-number gutter, or the padding after the scrollbar's cells
                    continue
                assert offset == (x, row)
                x += len(seg.text)
                shown += seg.text
            assert shown.startswith(text[start:end].replace("\n", ""))


# -- the QA panel ----------------------------------------------------------------------------


async def test_a_pair_wrapped_ahead_shows_the_same_rows_as_one_wrapped_on_the_spot(ws):
    from support import opened, review_app, settle, wait_until

    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        queue = app.screen.query_one(PairList)
        nxt = queue.ids[queue.cursor + 1]
        # the warm-up after the first frame (WARM_DELAY_S) wraps the next pair ahead
        await wait_until(pilot, lambda: any(key[1] == session.view(nxt).question for key in panel._wrapped),
                         "the next pair wrapped ahead")
        warmed = len(panel._wrapped)
        await pilot.press("j")
        await settle(app, pilot)
        assert queue.current == nxt and len(panel._wrapped) >= warmed
        rows = [strip.text for strip in panel.strips()]
        painted = [list(strip) for strip in panel.strips()]  # text and styles, as painted
        panel._wrapped.clear()  # the same pair wrapped from nothing
        panel._wrap()
        assert [strip.text for strip in panel.strips()] == rows
        assert [list(strip) for strip in panel.strips()] == painted
        assert any(text.startswith(session.view(nxt).question[:20]) or session.view(nxt).question[:20] in text
                   for text in rows)


@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_wrapping_the_next_pair_ahead_makes_only_the_rows_its_first_frame_paints(ws, size):
    """A long answer: wrapping the next pair ahead (what fills a decision's commit wait) makes
    the rows of the panel's first screenful and no more, and showing that pair then makes no
    row of it."""
    from support import opened, review_app, settle

    from mtcb_curate.app import review
    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    session = opened(None, ws, sample=True)
    long_answer = " ".join(f"word{i}" for i in range(300))  # under MAX_FIELD_CHARS: shown whole
    async with review_app(session, size=size) as (app, pilot):
        screen, panel = app.screen, app.screen.query_one(QAPanel)
        queue = screen.query_one(PairList)
        nxt = queue.ids[queue.cursor + 1]
        review.edit(session, nxt, {"answer": long_answer})
        panel._wrapped.clear()
        screen._wrap_row(queue.cursor + 1)
        sections = [rows for key, rows in panel._wrapped.items() if "word299" in key[1]]
        assert len(sections) == 1
        rows = sections[0]
        made = [i for i, strip in enumerate(rows._strips) if strip is not None]
        assert len(rows) > panel.size.height  # longer than the panel
        assert made and made == list(range(len(made))) and len(made) < panel.size.height
        await pilot.press("j")
        await settle(app, pilot)
        assert queue.current == nxt
        assert [i for i, strip in enumerate(rows._strips) if strip is not None] == made
        assert any("word0" in strip.text for strip in panel.strips()[:panel.size.height])


async def test_the_panel_problems_read_the_reference_size_of_the_apps_own_config(ws, tmp_path, monkeypatch):
    """``--config`` sets [preview] reference_size for the review screen too, not only the
    default config file (the problems line and the queue's ▲ mark read it, cached), from the
    first pair shown on: the first problems were worked out before the size was read and kept
    until the pair's verdict changed (a race the CI lost once)."""
    from support import opened, review_app

    from mtcb_curate.checks import pair
    from mtcb_curate.checks.pair import failing
    from mtcb_curate.app import controller as app_controller

    sizes = []
    real = pair.pair_problems

    def recording(*args, **kwargs):
        sizes.append(kwargs.get("reference_size"))
        return real(*args, **kwargs)

    monkeypatch.setattr(app_controller, "pair_problems", recording)
    config = tmp_path / "own.toml"
    config.write_text("[preview]\nreference_size = 20\n", encoding="utf-8")
    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30), config_path=config) as (app, pilot):
        screen = app.screen
        pid = screen.queue.current
        assert sizes and set(sizes) == {20}  # every pair's problems, the first shown's included
        found = [p for p in screen.controller.problems(pid) if p.check_id == "findable"]
        assert found and found[0].status == "fail" and "reference chunk size 20" in found[0].reason
        assert screen.controller.pair_fails(pid) and failing(screen.controller.problems(pid))
        assert screen.controller.problems(pid) == screen.controller.problems(pid)  # the cached list, copied


async def test_painted_source_rows_skip_the_offsets_that_the_mouse_hit_test_reads_itself():
    text = "\n".join(f"line {i}: net revenue of $1,234 million in fiscal 2023" for i in range(40))
    app = ViewerApp()
    async with app.run_test(size=(50, 12)) as pilot:
        viewer = app.query_one(SourceViewer)
        viewer.show(text, [Span(20, 90, "exact")])
        await pilot.pause()
        painted = viewer.render_lines(viewer.size.region)
        assert all("offset" not in (seg.style.meta if seg.style else {}) for strip in painted for seg in strip)
        assert [s.text for s in painted] == [viewer.render_line(y).text for y in range(viewer.size.height)]
        # what Textual's text selection reads (Compositor.get_widget_and_offset_at -> render_line)
        widget, offset = app.screen.get_widget_and_offset_at(12, 1)
        assert widget is viewer and offset is not None and offset.y == viewer.scroll_offset.y + 1
        # dragging the mouse selects the text under it, as before
        await pilot.mouse_down(SourceViewer, offset=(viewer._gutter_width() + 5, 0))
        await pilot.hover(SourceViewer, offset=(viewer._gutter_width() + 15, 0))
        await pilot.mouse_up(SourceViewer, offset=(viewer._gutter_width() + 15, 0))
        await pilot.pause()
        got = viewer.selection_range()
        assert got == (5, 16)  # from the cell pressed to the cell released, inclusive


async def test_the_source_draws_its_own_scroll_thumb_where_the_view_is():
    text = "\n".join(f"row {i}" for i in range(400))
    async with shown_viewer(text) as (app, pilot, viewer):
        height = viewer.size.height
        thumb = viewer._thumb()
        assert thumb == (0, max(1, round(height * height / 400)))  # at the top, its share of 400 rows

        def column():  # the last cell of every painted row: the thumb's or the track's style
            rows = viewer.render_lines(viewer.size.region)
            return [list(strip)[-1].style for strip in rows]

        thumb_style = viewer.get_component_rich_style("source-viewer--thumb")
        track_style = viewer.get_component_rich_style("source-viewer--track")
        styles = column()
        assert styles[:thumb[1]] == [thumb_style] * thumb[1] and set(styles[thumb[1]:]) == {track_style}
        viewer.scroll_to(y=400 - height, animate=False, immediate=True)
        await pilot.pause()
        assert viewer._thumb()[1] == height and column()[-1] == thumb_style and column()[0] == track_style
        viewer.show("short document")  # it all fits: the whole column is the thumb
        await pilot.pause()
        assert viewer._thumb() == (0, height)


async def test_scrolling_the_source_repaints_it_without_rebuilding_the_screen_map():
    """The viewer's Textual scrollbar has no cells: moving it made the compositor rebuild its
    whole widget map on the next frame (a ~1 ms layout-like pass on every key)."""
    text = "\n".join(f"row {i}" for i in range(400))
    async with shown_viewer(text) as (app, pilot, viewer):
        arranged = count_arrangements(app.screen._compositor)
        for y in (120, 121, 300):
            viewer.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            assert viewer.scroll_offset.y == y
            assert viewer.render_lines(viewer.size.region)[0].text.strip().endswith(f"row {y}")
        assert arranged == []
        await assert_counts_arrangements(pilot, app.screen, arranged)


async def test_source_rows_painted_ahead_are_the_rows_painted_on_the_spot():
    """``warm`` paints the next pair's rows of the same document; showing that pair then paints
    exactly those rows (text and styles, thumb included) without building any."""
    text = "\n".join(f"line {i}: the Company’s net revenue — $1,234 million in fiscal {2000 + i}" for i in range(300))
    first = [Span(text.index("line 20:"), text.index("line 21:"), "exact")]
    second = [Span(text.index("line 200:") + 5, text.index("line 203:"), "normalized"),
              Span(text.index("line 190:"), text.index("line 230:"), "window")]
    async with shown_viewer(text, first, size=(60, 16)) as (app, pilot, viewer):
        before = [list(s) for s in viewer.render_lines(viewer.size.region)]
        viewer.warm(second)
        assert viewer.spans == tuple(sorted(first, key=lambda sp: (sp.start, sp.end)))  # nothing shown changed
        assert [list(s) for s in viewer.render_lines(viewer.size.region)] == before
        built = []
        render_row = viewer._render_row
        viewer._render_row = lambda *a, **k: built.append(a[0]) or render_row(*a, **k)
        filtered = filter_calls(app)
        viewer.set_spans(second)
        await pilot.pause()
        warm_rows = [list(s) for s in viewer.render_lines(viewer.size.region)]
        assert built == []  # every row came from the warm-up
        assert filtered == []  # and went through the app's line filters there
        top = viewer.scroll_offset.y
        assert top == viewer.line_of_offset(second[0].start) - viewer.size.height // 2
        viewer._line_cache.clear()
        viewer.refresh()  # and Textual's own cache of painted lines
        assert [list(s) for s in viewer.render_lines(viewer.size.region)] == warm_rows
        assert built  # and painted from nothing they are the same


async def test_painting_ahead_ends_where_it_is_told_to_stop_and_keeps_what_it_painted():
    """``warm(spans, stop)`` (what fills a shared workspace's commit wait) checks ``stop``
    before each row: the rows painted until then are kept and the rest are built when shown."""
    text = "\n".join(f"line {i}: net revenue of $1,234 million in fiscal {2000 + i}" for i in range(300))
    second = [Span(text.index("line 200:"), text.index("line 201:"), "exact")]
    async with shown_viewer(text, [Span(0, 6, "exact")], size=(60, 16)) as (app, pilot, viewer):
        checks = []

        def stop() -> bool:
            checks.append(1)
            return len(checks) > 5  # five rows, then the commit "returned"

        viewer.warm(second, stop=stop)
        assert len(checks) == 6
        built = []
        render_row = viewer._render_row
        viewer._render_row = lambda *a, **k: built.append(a[0]) or render_row(*a, **k)
        viewer.set_spans(second)
        await pilot.pause()
        top = viewer.scroll_offset.y
        assert built == list(range(top + 5, top + viewer.size.height))


async def test_the_source_paints_the_same_rows_as_textuals_styles_cache():
    """The viewer paints its own rows (``scrolling.paint_rows``) when its styles add nothing
    around them: the same strips, filters applied, as Textual's own path, crops included."""
    from textual.geometry import Region
    from textual.widget import Widget

    from mtcb_curate.tui.widgets.scrolling import bare_box

    text = "\n".join(f"line {i}: the Company’s net revenue — $1,234 million in fiscal {2000 + i}" for i in range(300))
    async with shown_viewer(text, [Span(text.index("line 20:"), text.index("line 23:"), "exact")],
                            size=(60, 16)) as (app, pilot, viewer):
        assert bare_box(viewer)
        for crop in (viewer.size.region, Region(3, 2, 40, 5)):
            ours = viewer.render_lines(crop)
            viewer._painting = True
            try:
                textual = Widget.render_lines(viewer, crop)  # the styles cache's path
            finally:
                viewer._painting = False
            assert [list(s) for s in ours] == [list(s) for s in textual]
        # a new theme: the styles the rows are painted with (kept per style update) follow it
        before = viewer.render_lines(viewer.size.region)
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        after = viewer.render_lines(viewer.size.region)
        assert [list(s) for s in after] != [list(s) for s in before]
        fresh = viewer._render_row(viewer.scroll_offset.y, viewer.size.width, None, offsets=False,
                                   on_thumb=None)
        viewer._rich_styles.clear()
        assert list(fresh) == list(viewer._render_row(viewer.scroll_offset.y, viewer.size.width, None,
                                                      offsets=False, on_thumb=None))
        viewer.styles.padding = (0, 1)
        assert not bare_box(viewer)  # padding: Textual's path again


async def test_the_qa_panel_paints_the_same_rows_as_textuals_styles_cache(ws):
    """The panel pads its own rows and takes only its bottom border from Textual: the same
    strips as Textual's path, at every layout, crops included."""
    from support import opened, review_app
    from textual.geometry import Region
    from textual.widget import Widget

    from mtcb_curate.tui.widgets.qa_panel import QAPanel
    from mtcb_curate.tui.widgets.scrolling import bare_box

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(160, 48)) as (app, pilot):
        for size in ((160, 48), (120, 30), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            panel = app.screen.query_one(QAPanel)
            assert bare_box(panel, side_padding=True, bottom_border=True)
            full = panel.size.region
            for crop in (full, Region(2, 1, full.width - 5, full.height - 1), Region(0, full.height - 1, full.width, 1)):
                ours = panel.render_lines(crop)
                panel._paint = panel._paint_state()
                try:
                    textual = Widget.render_lines(panel, crop)  # the styles cache's path
                finally:
                    panel._paint = None
                assert [list(s) for s in ours] == [list(s) for s in textual], (size, crop)
            await pilot.press("j")


@pytest.mark.usefixtures("accept_at_once")
async def test_a_hidden_queue_follows_the_cursor_without_rebuilding_the_screen_map_and_shows_it_when_shown(ws):
    """Below 100 columns the queue pane is hidden but its cursor and title still follow every
    key: refreshing those hidden widgets made the compositor rebuild its widget map on every
    frame. Shown again, they paint what they hold now."""
    from support import opened, review_app, text_of

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        screen = app.screen
        queue = screen.query_one(PairList)
        assert screen.has_class("narrow") and queue.region.width == 0  # hidden
        await pilot.pause(0.1)
        compositor = screen._compositor
        arranged = count_arrangements(compositor)
        start = queue.cursor
        doc = session.view(queue.ids[start]).pair.doc_key
        assert session.view(queue.ids[start + 2]).pair.doc_key == doc  # no new document (a layout pass)
        for _ in range(2):
            await pilot.press("a")
            await pilot.pause()
        assert queue.cursor == start + 2
        assert arranged == []
        await assert_counts_arrangements(pilot, screen, arranged)
        await pilot.resize_terminal(120, 30)
        await pilot.pause(0.2)
        assert not screen.has_class("narrow")
        title = text_of(screen, "#queue-title")
        assert f"row {start + 3}/" in title
        rows = [strip.text for strip in queue.render_lines(queue.size.region)]
        cursor_row = queue.cursor - queue.scroll_offset.y
        assert f"{queue.ids[queue.cursor]:>2} " in rows[cursor_row] or str(queue.ids[queue.cursor]) in rows[cursor_row]
        assert rows[cursor_row].startswith("✓") is False and "✓" in rows[cursor_row - 1]  # the accepted pair above


@pytest.mark.usefixtures("accept_at_once")
async def test_review_keys_act_as_read_and_skip_the_focused_widget_but_not_a_text_input(ws):
    """The review screen's keys are priority bindings: ``a`` decides without first going to
    the focused source viewer and bubbling back up through its containers (a message hop
    each); a key the screen does not bind still reaches the viewer; while the filter bar is
    typed in, its letters are text, not actions."""
    from textual import events

    from support import opened, review_app
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.tui.widgets.filter_bar import FilterBar

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        screen = app.screen
        viewer = screen.query_one(SourceViewer)
        viewer.focus()
        await pilot.pause()
        reached: list[str] = []
        on_event = viewer.on_event

        async def record(event):
            if isinstance(event, events.Key):
                reached.append(event.key)
            return await on_event(event)

        viewer.on_event = record
        first = screen.queue.current
        await pilot.press("a")
        await pilot.pause()
        assert session.status(first) == Status.ACCEPTED and screen.queue.current != first
        assert reached == []
        await pilot.press("home")  # not the screen's: the viewer's own binding
        await pilot.pause()
        assert reached == ["home"]
        await pilot.press("V")
        bar = screen.query_one(FilterBar)
        bar.input.value = ""
        now = screen.queue.current
        await pilot.press("a", "x", "f", "j")
        await pilot.pause()
        assert bar.input.value == "axfj"
        assert screen.queue.current == now and session.status(now) == Status.UNDECIDED


async def test_still_widgets_keep_their_lines_until_restyled_or_resized(ws):
    """The review screen's containers, the screen itself and the bars hand back their last
    painted lines (Textual paints everything under a frame's changed area, on every key); a
    theme or a layout class paints them again, equal to Textual's own path."""
    from textual.widget import Widget

    from support import opened, review_app
    from mtcb_curate.tui.widgets.scrolling import KeepsPaintedLines

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(160, 48)) as (app, pilot):
        screen = app.screen
        still = [w for w in screen.walk_children(with_self=True) if isinstance(w, KeepsPaintedLines)]
        assert {type(w).__name__ for w in still} >= {"ReviewScreen", "StillHorizontal", "StillVertical", "Bar"}

        def painted():
            return {w: w.render_lines(w.size.region) for w in still if w.display and w.size.area}

        first = painted()
        again = painted()
        assert all(again[w] is first[w] for w in first)  # kept, not painted again
        for theme, size in (("textual-light", (160, 48)), ("textual-dark", (80, 24))):
            app.theme = theme
            await pilot.resize_terminal(*size)
            await pilot.pause()
            now = painted()
            for w, lines in now.items():
                assert [list(s) for s in lines] == [list(s) for s in Widget.render_lines(w, w.size.region)], (theme, w)
            if theme == "textual-light":
                bars = [w for w in now if type(w).__name__ == "Bar"]
                assert any(list(now[w][0]) != list(first[w][0]) for w in bars if w in first)  # new colours


async def test_a_document_prepared_ahead_is_shown_without_indexing_or_wrapping_it():
    """``prepare`` builds the next document's line index and its wrap at the viewer's width
    while idle; ``show`` with the same string then builds neither."""
    from mtcb_curate.tui.widgets import source_viewer as sv

    first = "\n".join(f"first document, line {i}" for i in range(50))
    second = "\n".join(f"line {i}: " + "the Company’s net revenue grew " * (1 + i % 9) for i in range(8_000))
    async with shown_viewer(first, size=(60, 16)) as (app, pilot, viewer):
        viewer.prepare(second)
        assert viewer._text is first  # nothing shown changed
        built: list[str] = []
        index_init, wrap = sv.LineIndex.__init__, sv.LineIndex._wrap
        sv.LineIndex.__init__ = lambda self, *a: built.append("index") or index_init(self, *a)
        sv.LineIndex._wrap = lambda self, width: built.append("wrap") or wrap(self, width)
        try:
            viewer.show(second, [sv.Span(second.index("line 4000:"), second.index("line 4001:"), "exact")])
            await pilot.pause()
        finally:
            sv.LineIndex.__init__, sv.LineIndex._wrap = index_init, wrap
        assert built == []
        assert viewer.line_of_offset(second.index("line 4000:")) > 4000  # wrapped: rows past lines


async def test_the_warm_up_works_out_the_problems_of_the_queue_rows_a_page_ahead(ws):
    """A half-page scroll of the queue paints about 20 new rows whose marks read each pair's
    problems; the warm-up after a pair is shown works them out ahead, a few at a time."""
    from support import opened, review_app
    from mtcb_curate.tui.screens import review_painting

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        screen = app.screen
        queue = screen.queue
        ahead = queue.ids[queue.cursor + 1:queue.cursor + 1 + queue.size.height]
        assert len(ahead) > review_painting.WARM_QUEUE_ROWS
        screen.controller.forget_problems()
        screen._warm_next(screen._shown_count)
        cached = [pid for pid in ahead if screen.controller.problems_cached(pid)]
        assert cached == ahead[:review_painting.WARM_QUEUE_ROWS + 1]  # and the next pair's, for its panel
        screen._warm_next(screen._shown_count)
        assert all(screen.controller.problems_cached(pid) for pid in ahead[:2 * review_painting.WARM_QUEUE_ROWS])


async def test_a_key_waiting_stops_the_warm_up_between_two_steps(ws):
    """A held key's next key comes about 20 ms after the last: the warm-up between them stops
    at its next step once a key waits for the app, and keeps what it made."""
    from support import opened, review_app

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        screen = app.screen
        queue = screen.queue
        ahead = queue.ids[queue.cursor + 1:queue.cursor + 1 + queue.size.height]
        screen.controller.forget_problems()
        worked: list[int] = []
        problems = screen.controller.problems
        waiting = [False]
        keys = [1]
        screen._keys_waiting = lambda: waiting[0]

        def a_key_comes(pid):
            worked.append(pid)
            if len(worked) == 2 and keys:  # the next pair's panel, then a queue row: a key waits
                waiting[0] = True
                keys.pop()
            return problems(pid)

        screen.controller.problems = a_key_comes
        screen._warm_next(screen._shown_count)
        assert worked == ahead[:2]
        assert [pid for pid in ahead if screen.controller.problems_cached(pid)] == ahead[:2]
        worked.clear()
        waiting[0] = False
        screen._warm_next(screen._shown_count)  # no key this time: the warm-up goes on from there
        assert worked[0] == ahead[0] and len(worked) > 2
        assert all(screen.controller.problems_cached(pid) for pid in worked)


@pytest.mark.usefixtures("accept_at_once")
async def test_a_decision_that_shows_another_document_runs_no_layout_pass(ws):
    """The source viewer's scrollable size changes with each document; it is set without
    Textual's layout pass over the whole screen (the viewer's own size is fixed by the
    stylesheet), and the new document is shown whole, scrolled to its passage."""
    from support import opened, review_app

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        screen = app.screen
        queue = screen.queue
        viewer = screen.query_one(SourceViewer)
        docs = [session.view(pid).pair.doc_key for pid in queue.ids]
        row = next(i for i in range(queue.cursor, len(docs) - 1) if docs[i + 1] != docs[i])
        queue.move_to(queue.ids[row])
        screen._show_current()
        await pilot.pause(0.1)
        arranged = count_arrangements(screen._compositor)
        await pilot.press("a")
        await pilot.pause(0.1)
        assert arranged == []
        await assert_counts_arrangements(pilot, screen, arranged)
        nxt = session.view(queue.current)
        doc = session.dataset.document_for(nxt.pair)
        # equal, not the same object: a start-up pass may have decoded the document again
        assert nxt.pair.doc_key == docs[row + 1] and viewer._text == doc.text
        assert viewer.virtual_size.height == len(viewer._row_starts) > viewer.size.height
        start = doc.text.find(nxt.passage)
        if start >= 0:  # the passage's row is on screen
            top = viewer.scroll_offset.y
            assert top <= viewer.line_of_offset(start) < top + viewer.size.height


async def test_keys_that_wait_are_decided_each_and_the_panel_shows_only_where_the_last_leads(ws, accept_at_once):
    """A held key: keys queued faster than the screen is built are each decided and saved, the
    queue's cursor moves with each, and the panel, the source and the bars are built once, for
    the pair the last key leads to (not for every pair passed over); a key arriving alone is
    shown at once as before."""
    from textual import events

    from support import opened, review_app, text_of_head, wait_until, while_running
    from mtcb_curate.dataset.model import Status

    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30), close=False) as (app, pilot):
        screen = app.screen
        start = screen.queue.current
        # Pairs shown by the keys' own handling (a decision, the catch-up); a worker's result
        # landing meanwhile (a locate, the set checks) may rightly show its pair again.
        shown = []
        handling = []
        real_show = screen._show_current

        screen._apply = while_running(screen._apply, handling)
        screen._catch_up = while_running(screen._catch_up, handling)

        def counting_show():
            if handling:
                shown.append(screen.queue.current)
            real_show()

        screen._show_current = counting_show
        for _ in range(5):
            app.post_message(events.Key("a", "a"))
        await wait_until(pilot, lambda: session.status(start + 4) is Status.ACCEPTED
                         and text_of_head(app).startswith(f"#{start + 5}"), "the five keys handled")
        assert [session.status(start + i) for i in range(5)] == [Status.ACCEPTED] * 5
        assert session.status(start + 5) == Status.UNDECIDED
        assert screen.queue.current == start + 5
        assert shown == [start + 5], shown
        assert text_of_head(app).startswith(f"#{start + 5}")
        assert screen._behind is False
        # one key alone: shown by its own decision
        await pilot.press("a")
        await wait_until(pilot, lambda: text_of_head(app).startswith(f"#{start + 6}"), "the next pair shown")
        assert shown == [start + 5, start + 6]
        assert text_of_head(app).startswith(f"#{start + 6}")
    # every decision reached the workspace
    decisions = session.workspace.decisions()
    assert [decisions[start + i].status for i in range(6)] == ["accepted"] * 6 and start + 6 not in decisions
    session.workspace.close()




# -- the QA panel's rows, made when painted --------------------------------------------------


def _wrapped_by_rich(text, width, console, base):
    """The rows as the panel made them before ``SectionRows``: Rich's ``Text.wrap`` at once."""
    from textual.strip import Strip

    out = []
    for line in text.wrap(console, width, overflow="fold", no_wrap=False):
        line.rstrip()
        line.end = ""
        out.append(Strip(list(line.render(console)), line.cell_len).apply_style(base).adjust_cell_length(width, base))
    return out


_WORDS = ["net", "income", "", " ", "  ", "\n", "\n\n", "\t", "revenue\tgrew", "営業利益", "😀", "x" * 70,
          "a-b-c", "1,234.5", "é", "\u200b", "Q4"]


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(_WORDS), max_size=60), width=st.integers(1, 90),
       marks=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 40)), max_size=4),
       label=st.sampled_from([None, "Question", "Supporting passage"]))
def test_section_rows_are_the_rows_rich_wraps_each_made_when_asked(words, width, marks, label):
    """``SectionRows`` breaks where Rich's ``Text.wrap`` breaks (tabs, blank lines, wide
    characters, words longer than the row, highlighted spans, a compact label) and makes each
    row only when it is asked for."""
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

    from mtcb_curate.tui.widgets.qa_panel import SectionRows

    console = Console(width=200, color_system="truecolor")
    base = Style(color="white", bgcolor="grey11")
    text = Text(" ".join(words))
    for start, length in marks:
        text.stylize("reverse bold", start, start + length)
    if label is not None:
        text = Text.assemble(Text(label + ": ", style="bold cyan"), text)
    plain_before = text.plain
    expected = _wrapped_by_rich(text.copy(), width, console, base)
    rows = SectionRows(text, width, console, base)
    assert len(rows) == len(expected)
    assert rows._strips.count(None) == len(expected)  # nothing made yet
    if expected:
        assert rows[-1] == expected[-1]
        assert rows._strips.count(None) == len(expected) - 1
    assert rows[:] == expected
    assert text.plain == plain_before  # the shown text is not changed (tabs expanded on a copy)


def test_section_rows_keep_the_texts_own_style_as_rich_prints_it():
    """A section made with a style and no spans ("(empty)", "checking…") is painted in that
    style, under any span, as Rich's console prints the Text (rendering its wrapped lines one
    by one dropped it)."""
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

    from mtcb_curate.tui.widgets.qa_panel import SectionRows, _field

    console = Console(width=200, color_system="truecolor")
    base = Style(bgcolor="grey11")
    empty = SectionRows(_field(""), 40, console, base)[0]
    assert [seg.text for seg in empty][0] == "(empty)"
    assert list(empty)[0].style == base + Style(dim=True, italic=True)
    text = Text("net income grew", style="dim")
    text.stylize("bold", 4, 10)
    row = list(SectionRows(text, 40, console, base)[0])
    assert [(seg.text, seg.style) for seg in row[:3]] == [
        ("net ", base + Style(dim=True)), ("income", base + Style(dim=True, bold=True)), (" grew", base + Style(dim=True))]
    # the same styles as Rich's console gives the Text, over the panel's base
    printed = [seg for seg in console.render_lines(text, console.options.update_width(40), pad=False)[0] if seg.text]
    assert [(seg.text, base + seg.style) for seg in printed] == [(seg.text, seg.style) for seg in row[:3]]


def test_the_viewers_row_cache_drops_the_least_recently_used_and_frees_what_it_drops():
    """The source viewer's painted rows (cleared at each pair change) are freed by reference
    counting; Textual's ``LRUCache`` leaves its ring of links, rows in it, to the collector."""
    import gc

    from rich.segment import Segment
    from textual.cache import LRUCache
    from textual.strip import Strip

    from mtcb_curate.tui.widgets.source_viewer import _RowCache

    cache = _RowCache(3)
    for key in "abc":
        cache[key] = Strip([Segment(key)])
    assert cache.get("a").text == "a" and cache.get("z") is None
    cache["d"] = Strip([Segment("d")])
    assert list(cache) == ["c", "a", "d"]  # b was used least recently
    assert "b" not in cache

    def garbage_after_clear(make) -> int:
        gc.disable()
        try:
            gc.collect()
            rows = make(8)
            for k in range(12):
                rows[k] = Strip([Segment(f"row {k}")])
            rows.clear()
            del rows
            return gc.collect()
        finally:
            gc.enable()

    assert garbage_after_clear(LRUCache) > 0
    assert garbage_after_clear(_RowCache) == 0
