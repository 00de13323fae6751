"""The review app, driven with Textual's Pilot: every key, resume, hostile text, bad input."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from conftest import CORPUS, QUESTIONS
from mtcb_curate.dataset.model import Status
from mtcb_curate.tui.screens.help import HelpScreen
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.widgets.pair_list import PairList
from mtcb_curate.tui.widgets.qa_panel import QAPanel
from mtcb_curate.tui.widgets.source_viewer import SourceViewer
# SIZE, opened, settle, text_of and current are imported from here by other test modules.
from support import SIZE, current, opened, review_app, settle, text_of, write_source  # noqa: F401

pytestmark = pytest.mark.usefixtures("review_at_once")


async def test_opens_on_first_pair_with_source_and_progress(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        assert isinstance(app.screen, ReviewScreen)
        assert current(app) == 0
        assert "What does Alpha make?" in text_of(app, "#qa-question")
        bar = text_of(app, "#source-bar")
        assert str(tiny) in bar and "--source" in bar
        progress = text_of(app, "#progress")
        assert "decided 0/3" in progress and "1 passages not verbatim" in progress
        assert "EXACT" in text_of(app, "#qa-verdict")


async def test_decision_keys_commit_and_advance(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("a")
        assert session.status(0) is Status.ACCEPTED and current(app) == 1
        await pilot.press("f")
        assert session.status(1) is Status.FLAGGED and current(app) == 2
        await pilot.press("space")
        assert session.status(2) is Status.SKIPPED
        assert "decided 1/3" in text_of(app, "#progress")  # skipped and flagged are not decided
    # Committed: a fresh connection sees every decision.
    again = opened(tiny, ws)
    assert [again.status(i) for i in range(3)] == [Status.ACCEPTED, Status.FLAGGED, Status.SKIPPED]
    again.workspace.close()


async def test_reject_with_reason_without_reason_and_cancel(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("x", "2")  # duplicate
        assert session.view(0).status is Status.REJECTED and session.view(0).reason == "duplicate"
        assert current(app) == 1
        await pilot.press("x", "enter")
        assert session.view(1).status is Status.REJECTED and session.view(1).reason is None
        await pilot.press("x", "escape")
        assert session.status(2) is Status.UNDECIDED and current(app) == 2
        await pilot.press("k", "k")
        assert "duplicate" in text_of(app, "#qa-head")


async def test_undo_is_unlimited_and_survives_restart(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("a", "a", "a", "a")  # pair 2 is not verbatim: its accept asks, `a` confirms
        await pilot.press("u")
        assert session.status(2) is Status.UNDECIDED and current(app) == 2
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        assert current(app) == 2  # resumes at the first undecided pair
        await pilot.press("u", "u")
        assert [session.status(i) for i in range(3)] == [Status.UNDECIDED] * 3
        assert current(app) == 0
        await pilot.press("u")  # nothing left: no crash, nothing changes
        assert session.decided == 0


async def test_navigation_keys(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("j")
        assert current(app) == 1
        await pilot.press("down")
        assert current(app) == 2
        await pilot.press("down")  # clamps at the end
        assert current(app) == 2
        await pilot.press("k", "up")
        assert current(app) == 0
        session.decide(1, Status.ACCEPTED)
        await pilot.press("n")
        assert current(app) == 2
        await pilot.press("n")  # wraps to the first undecided
        assert current(app) == 0


async def test_filter_view_cycles_and_decisions_leave_the_undecided_view(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        queue = app.screen.query_one(PairList)
        await pilot.press("v")
        assert "undecided (3)" in text_of(app, "#queue-title")
        await pilot.press("a")
        assert list(queue.ids) == [1, 2] and current(app) == 1
        await pilot.press("v")
        assert "accepted (1)" in text_of(app, "#queue-title") and list(queue.ids) == [0]
        for _ in range(4):
            await pilot.press("v")
        assert "all (3)" in text_of(app, "#queue-title")


async def test_edit_passage_is_rechecked_and_undoable(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("j", "j")
        await settle(app, pilot)
        assert "NORMALIZED" in text_of(app, "#qa-verdict")
        assert "not verbatim" in text_of(app, "#qa-verdict")
        await pilot.press("e")
        area = app.screen.query_one("#edit-supporting_passage", TextArea)
        area.text = "Beta sells bells."
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert session.view(2).passage == "Beta sells bells."
        assert "EXACT" in text_of(app, "#qa-verdict")
        assert "edited: supporting_passage" in text_of(app, "#qa-head")
        await pilot.press("u")
        await settle(app, pilot)
        assert session.view(2).passage == QUESTIONS[2]["supporting_passage"]
        assert "NORMALIZED" in text_of(app, "#qa-verdict")
        await pilot.press("e", "escape")  # cancel changes nothing
        assert session.view(2).edited == frozenset()


async def test_search_jumps_to_matches(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("slash", *"bells", "enter")
        assert current(app) == 2
        await pilot.press("slash", *"no such text", "enter")
        assert current(app) == 2
        await pilot.press("slash")
        app.screen.query_one("Input").value = "revenue"
        await pilot.press("enter")
        assert current(app) == 1


async def test_help_lists_every_key_and_rebinding_works(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session, keymap={"accept": "y"}) as (app, pilot):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        rows = {action for _, action, _ in app.screen.rows}
        assert {"accept", "reject", "skip", "flag", "undo", "next", "previous", "next_undecided", "edit",
                "search", "help", "quit", "filter"} <= rows
        assert ("y", "accept", "accept") in app.screen.rows
        await pilot.press("escape")
        await pilot.press("y")
        assert session.status(0) is Status.ACCEPTED


async def test_quit_key_exits(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_read_only_refuses_decisions(tiny, ws):
    opened(tiny, ws).workspace.close()
    session = opened(tiny, ws, read_only=True)
    async with review_app(session) as (app, pilot):
        assert "READ-ONLY" in text_of(app, "#source-bar")[:60]  # before the source, never cut at 80 columns
        await pilot.press("a", "u", "e")
        assert session.decided == 0 and current(app) == 0


HOSTILE = ["[/]", "[bold]bold?[/bold]", "[@click=app.quit]click me[/]", "\x1b[31mred\x1b[0m", "[$accent]var"]


async def test_hostile_strings_show_literally_and_do_nothing(tmp_path, ws):
    text = "Intro line.\n" + " ".join(HOSTILE) + "\nEnd."
    write_source(tmp_path / "h", [{"ticker": "[/]", "company": "[bold]", "text": text}], [
        {"question": " ".join(HOSTILE), "answer": "[@click=app.quit]a[/]", "supporting_passage": " ".join(HOSTILE),
         "ticker": "[/]", "company": "[bold]", "chunk_index": None},
        {"question": "second", "answer": "b", "supporting_passage": "\x1b[2J", "ticker": "[/]",
         "company": "[bold]", "chunk_index": None},
    ])
    session = opened(tmp_path / "h", ws)
    async with review_app(session) as (app, pilot):
        question = text_of(app, "#qa-question")
        for h in ("[/]", "[bold]bold?[/bold]", "[@click=app.quit]click me[/]", "[$accent]var"):
            assert h in question
        assert "\x1b" not in question and "␛[31mred" in question
        assert "[@click=app.quit]a[/]" in text_of(app, "#qa-answer")
        assert "EXACT" in text_of(app, "#qa-verdict")
        # The source viewer renders the same characters literally.
        viewer = app.screen.query_one(SourceViewer)
        rendered = "".join(viewer.render_line(y).text for y in range(viewer.size.height))
        assert "[@click=app.quit]click me[/]" in rendered and "\x1b" not in rendered
        # Clicking where the "link" is does nothing; the app keeps running.
        await pilot.click("#qa")
        await pilot.click(SourceViewer)
        await pilot.pause()
        assert app.is_running
        # The edit dialog shows the escape visibly too, and keeps the real text.
        await pilot.press("e")
        area = app.screen.query_one("#edit-supporting_passage", TextArea)
        assert "\x1b" in area.text
        rows = "".join(area.render_line(y).text for y in range(area.size.height))
        assert "\x1b" not in rows and "␛[31mred" in rows
        await pilot.press("escape")
        await pilot.press("a")
        await settle(app, pilot)
        assert current(app) == 1 and "\x1b" not in text_of(app, "#qa-passage")


async def test_bad_rows_open_with_visible_flags(tmp_path, ws):
    rows = [dict(q) for q in QUESTIONS]
    rows[1]["ticker"] = "ZZZ"  # matches no document
    rows[2]["chunk_index"] = "abc"
    corpus = CORPUS + [dict(CORPUS[0], company="Alpha again")]  # duplicate key AAA
    write_source(tmp_path / "bad", corpus, rows)
    session = opened(tmp_path / "bad", ws)
    async with review_app(session) as (app, pilot):
        assert "input problem" in text_of(app, "#source-bar")
        assert "matches 2 corpus rows" in text_of(app, "#qa-flags")
        await pilot.press("j")
        await settle(app, pilot)
        assert "'ZZZ' matches no document" in text_of(app, "#qa-flags")
        viewer = app.screen.query_one(SourceViewer)
        assert "no document" in viewer.render_line(0).text
        await pilot.press("j")
        assert "chunk_index" in text_of(app, "#qa-flags")
        await pilot.press("a", "a")  # still decidable (it fails links: the accept asks, `a` confirms)
        assert session.status(2) is Status.ACCEPTED


async def test_passage_is_highlighted_and_centred_in_a_long_document(tmp_path, ws):
    lines = [f"Line {i} of a long filing with some words." for i in range(30000)]
    passage = lines[25000]
    write_source(tmp_path / "long", [{"ticker": "L", "text": "\n".join(lines)}],
                 [{"question": "q?", "answer": "a", "supporting_passage": passage, "ticker": "L"}])
    session = opened(tmp_path / "long", ws)
    async with review_app(session) as (app, pilot):
        viewer = app.screen.query_one(SourceViewer)
        row = viewer.line_of_offset(session.dataset.documents["L"].text.find(passage))
        top = viewer.scroll_offset.y
        assert top <= row < top + viewer.size.height
        assert abs((row - top) - viewer.size.height // 2) <= 2
        middle = viewer.render_line(row - top)
        assert passage in middle.text


async def test_sample_opens_with_real_filings(sample_dir, ws):
    session = opened(None, ws, sample=True)
    async with review_app(session) as (app, pilot):
        assert len(session) >= 20
        progress = text_of(app, "#progress")
        assert "passages not verbatim" in progress
        assert "bundled sample (asked for with --sample)" in text_of(app, "#source-bar")


async def test_qa_panel_says_how_many_lines_are_hidden_below(tmp_path, ws):
    rows = [dict(q) for q in QUESTIONS]
    rows[0]["answer"] = "\n".join(f"line {i}" for i in range(60))
    write_source(tmp_path / "long", questions=rows)
    session = opened(tmp_path / "long", ws)
    async with review_app(session) as (app, pilot):
        panel = app.screen.query_one(QAPanel)
        height = panel.scrollable_content_region.height
        last = panel.render_line(height - 1).text
        assert "more lines" in last and "e shows the whole texts" in last
        await pilot.press("j")  # a short pair fits: no note
        await settle(app, pilot)
        assert "more line" not in "".join(panel.render_line(y).text for y in range(height))
