"""The shrink repair in the app: ``z`` (lexical proposal, at once), ``Z`` (the LLM's minimal
exact quote, against the loopback chat server), accept / edit / refuse / cancel, undo; and the
span selection's unit keys and typed-string start."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Input

from support import current, opened, review_app, review_at_once, settle, text_of, wait_until, write_source

from mtcb_curate.app import review as app_review
from mtcb_curate.tui.screens.edit import EditScreen
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.screens.select_span import SelectSpanScreen
from mtcb_curate.tui.screens.shrink import ShrinkScreen

SIZE = (120, 30)
# A FinanceBench-like table passage: label lines, then each figure on its own line.
TABLE = ("CONSOLIDATED STATEMENTS OF INCOME\n(Millions)\n2022\n2021\n"
         "Net sales\n$\n34,229 $\n35,355\n"
         "Cost of sales\n19,232\n18,795\n"
         "Selling, general and administrative expenses\n6,011\n6,191\n"
         "Research, development and related expenses\n1,862\n1,994\n"
         "Operating income\n6,539\n7,369\n"
         "Other expense (income), net\n(1,203)\n165\n"
         "Income before income taxes\n7,742\n7,204\n"
         "Net income\n$\n5,777 $\n5,921")
DOC = "3M Company annual report.\n\nThe results were as follows.\n" + TABLE + "\n\nRisk factors follow. Sales fell.\n"
PAIRS = [
    {"question": "What was 3M's operating income in 2022?", "answer": "Operating income was $6,539 million in 2022.",
     "supporting_passage": TABLE, "ticker": "MMM", "company": "3M", "chunk_index": 0},
    # computed from the table (operating income / net sales): recognised, with its derivation
    {"question": "What was 3M's operating margin in 2022?", "answer": "19.1%",
     "supporting_passage": TABLE, "ticker": "MMM", "company": "3M", "chunk_index": 0},
    # a figure neither in the passage nor computable from the rows the question names
    {"question": "What was 3M's free cash flow in 2022?", "answer": "$4,771 million",
     "supporting_passage": TABLE, "ticker": "MMM", "company": "3M", "chunk_index": 0},
]
QUOTE = "Operating income\n6,539\n7,369"
# The LLM's quote keeps the header's 2022 too (else it is sent back: a figure of the answer left out).
LLM_QUOTE = TABLE[:TABLE.index("Other expense")].strip()


@pytest.fixture
def table_source(tmp_path, monkeypatch):
    review_at_once(monkeypatch)
    return write_source(tmp_path / "fb", [{"ticker": "MMM", "company": "3M", "text": DOC}], PAIRS)


@pytest.fixture
def llm(monkeypatch, fake_llm):
    from conftest import fake_secret

    monkeypatch.setenv("OPENAI_API_KEY", fake_secret("llm-key"))
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    return fake_llm


async def until(app, pilot, cond, what: str) -> None:
    """Let the app run until ``cond()`` holds (``support.wait_until``: not a timing assertion)."""
    await wait_until(pilot, cond, what, step=0.01)


async def on(app, pilot, kind) -> None:
    """Let the app run until a screen of ``kind`` is on top (Pilot's ``press`` only waits for
    the app to look idle, which a loaded machine fakes)."""
    await until(app, pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted,
                f"a {kind.__name__} on top, mounted")


async def span_keys(app, pilot, scr, *keys: str) -> None:
    """Press ``keys`` one at a time, each time letting the app run until the span has moved."""
    for key in keys:
        before = (scr.start, scr.end)
        await pilot.press(key)
        await until(app, pilot, lambda: (scr.start, scr.end) != before, f"the span moved by {key}")


async def find_box(app, pilot, box, *keys: str) -> None:
    """Press ``keys`` (the first opens the find box, the last closes it) and let the app run
    until the box has opened and closed again."""
    await pilot.press(keys[0])
    await until(app, pilot, lambda: box.display and box.has_focus, "the find box open")
    await pilot.press(*keys[1:])
    await until(app, pilot, lambda: not box.display, "the find box closed")


async def shrink_dialog(app, pilot, *keys: str) -> None:
    """Press ``keys`` (the last one ``z``) and wait for the shrink dialog: a proposal not yet
    worked out ahead is worked out in a worker, and the dialog opens when it is done."""
    await pilot.press(*keys)
    await on(app, pilot, ShrinkScreen)


def static(app, selector: str) -> str:
    """What the shrink dialog shows: ``#shrink-text`` (the head line and the proposed text),
    ``#shrink-facts``, ``#shrink-title``."""
    return app.screen.shown(selector.removeprefix("#shrink-"))


def spy_proposals(monkeypatch) -> list[int]:
    """The pairs whose shrink proposal is worked out from now on (``propose_shrink`` is still
    called: the next pair's proposal is worked out ahead in the background meanwhile)."""
    real, calls = app_review.propose_shrink, []

    def spy(session, pair_id, **kw):
        calls.append(pair_id)
        return real(session, pair_id, **kw)

    monkeypatch.setattr(app_review, "propose_shrink", spy)
    return calls


def notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- app layer --------------------------------------------------------------------------------------


def test_apply_shrink_refuses_text_that_is_not_part_of_the_passage(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    try:
        with pytest.raises(app_review.NotApplicable):
            app_review.apply_shrink(session, 0, "Operating income was 6,539")
        with pytest.raises(app_review.NotApplicable):
            app_review.apply_shrink(session, 0, TABLE)
        assert not session.workspace.history()
        outcome = app_review.propose_shrink(session, 0)
        assert outcome.proposal is not None and "6,539" in outcome.proposal.text
        change = app_review.apply_shrink(session, 0, outcome.proposal.text)
        assert change.via == "shrink" and change.verdict == "exact" and change.fields == ("supporting_passage",)
        assert [e.via for e in session.workspace.history()] == ["shrink"]
    finally:
        session.workspace.close()


# -- z: the lexical proposal ---------------------------------------------------------------------


async def test_z_shows_the_proposal_enter_applies_it_and_u_restores(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        assert current(app) == 0
        await shrink_dialog(app, pilot, "z")
        body = static(app, "#shrink-text")
        new = app.screen.text
        assert f"{len(TABLE):,} → {len(new):,} characters" in body
        # a table extracted one cell a line is shown a row a line; the passage keeps its lines
        assert "Operating income  6,539  7,369" in body and "a table row a line" in body and QUOTE in new
        facts = static(app, "#shrink-facts")
        assert "keeps:" in facts and "6,539" in facts and "why:" in facts
        await pilot.press("enter")
        await on(app, pilot, ReviewScreen)
        await until(app, pilot, lambda: session.view(0).passage != TABLE, "the shrink applied")
        await settle(app, pilot)
        passage = session.view(0).passage
        assert passage == new and len(passage) < len(TABLE) and passage in DOC and "6,539" in passage
        assert "EXACT" in text_of(app, "#qa-verdict")
        assert [e.via for e in session.workspace.history()] == ["shrink"]
        await pilot.press("u")
        await until(app, pilot, lambda: session.view(0).passage != new, "the shrink undone")
        await settle(app, pilot)
        assert session.view(0).passage == TABLE


async def test_z_refused_says_why_in_one_line(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await pilot.press("j", "j", "z")
        await until(app, pilot, lambda: any(n.startswith("No shrink:") for n in notes(app)), "the refusal")
        assert isinstance(app.screen, ReviewScreen) and current(app) == 2
        said = [n for n in notes(app) if n.startswith("No shrink:")]
        assert len(said) == 1 and "4,771" in said[0] and "not computable" not in said[0] and "\n" not in said[0]
        assert "nor computable from the rows the question names" in said[0]
        assert session.view(2).passage == TABLE and not session.workspace.history()


async def test_z_recognises_a_computed_answer_and_says_so(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await shrink_dialog(app, pilot, "j", "z")
        facts = static(app, "#shrink-facts")
        assert "computed answer:" in facts and "6,539 / 34,229 x 100 = 19.1" in facts
        assert "Operating income" in facts and "Net sales" in facts
        new = app.screen.text
        assert "Operating income\n6,539" in new and "Net sales\n$\n34,229" in new and "Net income" not in new
        await pilot.press("enter")
        await until(app, pilot, lambda: session.view(1).passage != TABLE, "the shrink applied")
        await settle(app, pilot)
        assert session.view(1).passage == new and [e.via for e in session.workspace.history()] == ["shrink"]


async def test_z_esc_refuses_and_e_opens_the_edit_dialog_with_the_proposal(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await shrink_dialog(app, pilot, "z")
        await pilot.press("escape")
        await on(app, pilot, ReviewScreen)
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and not session.workspace.history()
        await shrink_dialog(app, pilot, "z")
        proposed = app.screen.text
        await pilot.press("e")
        await on(app, pilot, EditScreen)
        await settle(app, pilot)
        assert app.screen.query_one("#edit-supporting_passage").text == proposed
        await pilot.press("ctrl+s")
        await on(app, pilot, ReviewScreen)
        await until(app, pilot, lambda: session.view(0).passage != TABLE, "the edit saved")
        await settle(app, pilot)
        assert session.view(0).passage == proposed
        assert [e.via for e in session.workspace.history()] == ["shrink"]


# -- Z: the LLM's minimal exact quote -------------------------------------------------------------


async def test_Z_shows_the_llms_quote_with_the_failed_replies_and_enter_applies_it(table_source, tmp_path, llm):
    llm.script = [{"quote": "Operating income 6,539"}, {"quote": LLM_QUOTE}]
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await pilot.press("Z")
        await on(app, pilot, ShrinkScreen)
        await until(app, pilot, lambda: app.screen.phase == "shown", "the LLM's quote")
        assert app.screen.text == LLM_QUOTE and "Operating income  6,539  7,369" in static(app, "#shrink-text")
        facts = static(app, "#shrink-facts")
        assert "replies not used (1)" in facts and "attempt 1:" in facts and "verbatim" in facts
        assert "after 2 replies" in str(app.screen.status.content)
        await pilot.press("enter")
        await until(app, pilot, lambda: session.view(0).passage != TABLE, "the quote applied")
        await settle(app, pilot)
        assert session.view(0).passage == LLM_QUOTE
        assert [e.via for e in session.workspace.history()] == ["shrink"]
        await pilot.press("u")
        await until(app, pilot, lambda: session.view(0).passage != LLM_QUOTE, "the quote undone")
        assert session.view(0).passage == TABLE
    assert len(llm.requests) == 2


async def test_Z_esc_cancels_the_llm_and_nothing_changes(table_source, tmp_path, llm):
    gate = threading.Event()

    def slow(body):
        gate.wait(20)  # in flight until the test lets it go (never: the cancel closes it)
        return {"quote": "not in the passage at all"}

    llm.default = slow
    session = opened(table_source, tmp_path / "ws")
    try:
        async with review_app(session, size=SIZE) as (app, pilot):
            await pilot.press("Z")
            await until(app, pilot, lambda: len(llm.requests) == 1, "the first request")
            assert "asking the LLM" in str(app.screen.status.content)
            await pilot.press("escape")  # the request in flight is closed at once
            await until(app, pilot, lambda: isinstance(app.screen, ReviewScreen), "the review screen")
            assert not gate.is_set()
            await settle(app, pilot)
            assert any("cancelled" in n for n in notes(app))
            assert session.view(0).passage == TABLE and not session.workspace.history()
        assert len(llm.requests) == 1
    finally:
        gate.set()


async def test_Z_hostile_reply_is_shown_literally(table_source, tmp_path, llm):
    hostile = "[bold]x[/bold] [@click=app.quit]y[/]"
    llm.script = [{"quote": hostile}] * 3
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await pilot.press("Z")
        await on(app, pilot, ShrinkScreen)
        await until(app, pilot, lambda: app.screen.phase == "refused", "the refusal")
        assert "refused" in str(app.screen.status.content)
        assert "replies not used (3)" in static(app, "#shrink-facts")
        await pilot.press("enter")  # nothing to accept
        assert isinstance(app.screen, ShrinkScreen)
        await pilot.press("escape")
        await on(app, pilot, ReviewScreen)
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and not session.workspace.history()


# -- span selection: units and typed start ---------------------------------------------------------


async def test_select_span_extends_and_shrinks_by_row_and_starts_at_typed_text(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await pilot.press("m")
        await on(app, pilot, SelectSpanScreen)
        scr = app.screen
        box = scr.query_one("#select-find", Input)
        await find_box(app, pilot, box, "slash", *"operating income", "enter")  # lower case: any case
        assert scr.start == DOC.index("Operating income")
        scr.end = scr.start
        await span_keys(app, pilot, scr, "r")
        assert DOC[scr.start:scr.end] == QUOTE
        await span_keys(app, pilot, scr, "r", "r")
        assert DOC[scr.start:scr.end].endswith("Income before income taxes\n7,742\n7,204")
        await span_keys(app, pilot, scr, "R")
        assert DOC[scr.start:scr.end].endswith("(1,203)\n165")
        await span_keys(app, pilot, scr, "W")
        assert DOC[scr.start:scr.end].endswith("(1,203)")
        await span_keys(app, pilot, scr, "l")
        assert DOC[scr.start:scr.end].endswith("(1,203)\n165")
        await find_box(app, pilot, box, "slash", *"Risk", "escape")  # esc closes the input; the span stays
        assert isinstance(app.screen, SelectSpanScreen) and scr.start == DOC.index("Operating income")
        await span_keys(app, pilot, scr, "s")  # a sentence: in a table, up to the end of a short line
        assert DOC[scr.start:scr.end].endswith("165\nIncome before income taxes")
        await span_keys(app, pilot, scr, "p")  # a paragraph: up to the blank line
        assert DOC[scr.start:scr.end].endswith("$\n5,777 $\n5,921")
        await pilot.press("enter")
        await until(app, pilot, lambda: session.view(0).passage != TABLE, "the span saved")
        await settle(app, pilot)
        assert session.view(0).passage == DOC[DOC.index("Operating income"):DOC.index("\n\nRisk")]
        assert [e.via for e in session.workspace.history()] == ["select"]


async def test_select_span_ends_at_typed_text_normalized_like_verification(table_source, tmp_path):
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        await pilot.press("m")
        await on(app, pilot, SelectSpanScreen)
        scr = app.screen
        box = scr.query_one("#select-find", Input)
        await find_box(app, pilot, box, "slash", *"cost of sales", "enter")
        assert scr.start == DOC.index("Cost of sales")
        # "e": the end at a typed string; a space typed matches the filing's line break
        await pilot.press("e")
        await until(app, pilot, lambda: box.display and box.has_focus, "the find box open")
        assert "end" in box.placeholder
        await pilot.press(*"income taxes 7,742", "enter")
        await until(app, pilot, lambda: not box.display, "the find box closed")
        assert DOC[scr.start:scr.end] == DOC[DOC.index("Cost of sales"):DOC.index("7,742") + len("7,742")]
        await find_box(app, pilot, box, "e", *"no such words", "enter")  # not found: the span stays, a notice says so
        await until(app, pilot, lambda: any("Not in the document" in n for n in notes(app)), "the notice")
        assert DOC[scr.start:scr.end].endswith("7,742")
        await span_keys(app, pilot, scr, "r")  # the rest of the row's cells
        assert DOC[scr.start:scr.end].endswith("7,742\n7,204")
        await pilot.press("enter")
        await until(app, pilot, lambda: session.view(0).passage != TABLE, "the span saved")
        await settle(app, pilot)
        assert session.view(0).passage == DOC[DOC.index("Cost of sales"):DOC.index("7,204") + len("7,204")]


async def test_select_span_mouse_drag_selects_the_whole_span_in_one_gesture(table_source, tmp_path):
    from mtcb_curate.tui.widgets.source_viewer import SourceViewer

    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        viewer = app.screen.query_one(SourceViewer)
        await pilot.press("m")
        await on(app, pilot, SelectSpanScreen)
        scr = app.screen

        def cell(offset: int) -> tuple[int, int]:
            row = viewer.line_of_offset(offset)
            viewer.scroll_to_offset(offset, center=False)
            start, _ = viewer.row_span(row)
            region = viewer.content_region
            return (region.x + viewer._gutter_width() + offset - start,
                    region.y + row - viewer.scroll_offset.y)

        a = DOC.index("Cost of sales")
        b = DOC.index("18,795") + len("18,795")
        assert viewer.offset_at(*cell(a)) == a and viewer.offset_at(*cell(b)) == b
        await pilot.mouse_down(None, offset=cell(a))
        await pilot.hover(None, offset=cell(b - 3))
        await until(app, pilot, lambda: scr.end == b - 3, "the span at the pointer")
        assert DOC[scr.start:scr.end] == DOC[a:b - 3]  # the span follows the pointer
        await pilot.mouse_up(None, offset=cell(b))
        await until(app, pilot, lambda: scr.end == b, "the span at the release")
        assert (scr.start, scr.end) == (a, b)
        # dragging upwards works the same way
        scr.start = scr.end = a + 1
        await pilot.mouse_down(None, offset=cell(b))
        await pilot.mouse_up(None, offset=cell(a))
        await until(app, pilot, lambda: (scr.start, scr.end) != (a + 1, a + 1), "the span of the upward drag")
        assert (scr.start, scr.end) == (a, b)
        await pilot.press("enter")
        await until(app, pilot, lambda: session.view(0).passage != TABLE, "the span saved")
        await settle(app, pilot)
        assert session.view(0).passage == DOC[a:b]
        assert [e.via for e in session.workspace.history()] == ["select"]


async def test_z_shows_the_proposal_worked_out_ahead(table_source, tmp_path, monkeypatch):
    from mtcb_curate.tui.screens import shrink_ahead

    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        screen = app.screen
        await until(app, pilot, lambda: screen._shrink_key(0) in screen._shrink_store(), "the proposal ahead")
        calls = spy_proposals(monkeypatch)
        await pilot.press("z")  # shown from what was worked out ahead: nothing computed now
        await on(app, pilot, ShrinkScreen)
        assert QUOTE in app.screen.text and 0 not in calls
        await pilot.press("escape")
        # an edited passage is another proposal: worked out again
        session.edit(0, {"supporting_passage": TABLE[:TABLE.index("Net income")].strip()})
        assert screen._shrink_key(0) not in screen._shrink_store()
        assert shrink_ahead.AHEAD_S > 0


async def test_z_before_the_proposal_is_worked_out_waits_for_the_worker(table_source, tmp_path, monkeypatch):
    """z pressed at once (before the pair has been read for AHEAD_S): the proposal is worked out
    in the worker, never on the key (the app's thread), and the dialog opens when it is done; a
    curator who moved on meanwhile gets no dialog."""
    import threading

    from mtcb_curate.tui.screens import shrink_ahead

    monkeypatch.setattr(shrink_ahead, "AHEAD_S", 30.0)  # nothing worked out ahead in this test
    gate = threading.Event()
    threads: list[str] = []
    real = app_review.propose_shrink

    def slow(*a, **k):
        threads.append(threading.current_thread().name)
        gate.wait(10)
        return real(*a, **k)

    monkeypatch.setattr(app_review, "propose_shrink", slow)
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        main = threading.current_thread().name
        await pilot.press("z")
        await until(app, pilot, lambda: len(threads) == 1, "the worker started")
        assert isinstance(app.screen, ReviewScreen)  # the key did not wait for it
        assert any(n.startswith("Working out the shrink proposal") for n in notes(app))
        gate.set()
        await until(app, pilot, lambda: isinstance(app.screen, ShrinkScreen), "the dialog, once worked out")
        assert QUOTE in app.screen.text and threads == [threads[0]] and threads[0] != main
        await pilot.press("escape")
        await on(app, pilot, ReviewScreen)
        await settle(app, pilot)
        # z, then j before it is worked out: the next pair is shown, no dialog opens
        gate.clear()
        await pilot.press("j")
        await until(app, pilot, lambda: current(app) == 1, "pair 1")
        await settle(app, pilot)
        await pilot.press("z", "j")
        await until(app, pilot, lambda: current(app) == 2, "pair 2, before z's proposal is worked out")
        gate.set()
        await settle(app, pilot)
        await pilot.pause(0.2)
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and current(app) == 2


async def test_shrink_dialogs_opened_and_closed_leave_nothing_for_full_collections(table_source, tmp_path):
    """``z``, ``escape`` on and on: the objects a full collection walks do not grow with every
    dialog shown (Textual's ``StylesCache.get_inner_outer`` kept every closed widget's painted
    lines alive; ``tui.workarounds.styles``)."""
    import gc

    from textual._styles_cache import StylesCache

    def alive() -> tuple[int, int]:
        gc.collect()
        objects = gc.get_objects()
        return sum(1 for o in objects if type(o) is StylesCache), len(objects)

    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        for _ in range(2):
            await shrink_dialog(app, pilot, "z")
            await pilot.press("escape")
            await on(app, pilot, ReviewScreen)
            await settle(app, pilot)
        caches, objects = alive()
        for _ in range(12):
            await shrink_dialog(app, pilot, "z")
            await pilot.press("escape")
            await on(app, pilot, ReviewScreen)
            await settle(app, pilot)
        now_caches, now_objects = alive()
        assert now_caches <= caches
        # measured: about 200 more a dialog (caches filling); without the workaround, 3,400
        assert now_objects - objects < 12 * 500


async def test_the_next_pairs_proposal_is_worked_out_ahead_too(table_source, tmp_path, monkeypatch):
    """Once a pair has been read, the worker works out the next pair's proposal as well: ``j``
    then ``z`` opens it with nothing worked out on arrival (a whole-document search can take
    longer than the moment a curator reads)."""
    session = opened(table_source, tmp_path / "ws")
    async with review_app(session, size=SIZE) as (app, pilot):
        screen = app.screen
        await until(app, pilot, lambda: screen._shrink_key(1) in screen._shrink_store(), "the next pair's proposal")
        assert current(app) == 0 and screen._shrink_key(2) not in screen._shrink_store()  # one pair ahead only
        calls = spy_proposals(monkeypatch)
        await pilot.press("j")
        await until(app, pilot, lambda: current(app) == 1, "pair 1")
        await pilot.press("z")
        await on(app, pilot, ShrinkScreen)
        assert 1 not in calls
        assert "computed answer" in static(app, "#shrink-text") + static(app, "#shrink-facts")
