"""The TUI's worker messages (posted from a thread, handled on the app's thread), the shared
LLM status line, and the command palette's entries for the review screen's rarer actions."""

from __future__ import annotations

import json
import threading

import pytest
from textual.command import CommandList, CommandPalette

from mtcb_curate.dataset.model import Status
from mtcb_curate.app.analysis import AnalysisFailed, AnalysisProgress
from mtcb_curate.tui.messages import AnalysisMessage, LLMFailed, LLMProgress, VerdictCompleted
from mtcb_curate.tui.screens.checklist import ChecklistScreen
from mtcb_curate.tui.screens.dedup import DedupScreen
from mtcb_curate.tui.screens.help import HelpScreen
from mtcb_curate.tui.screens.llm_run import LLMRunScreen
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.widgets.llm_status import LLMStatus
from support import current, opened, review_app, settle, text_of, wait_until

pytestmark = pytest.mark.usefixtures("review_at_once")


def from_thread(post) -> None:
    """Run ``post()`` in another thread, as a worker does, and wait for it."""
    t = threading.Thread(target=post)
    t.start()
    t.join()


# -- messages: posted from a thread, handled by the screen ------------------------------------------


async def test_analysis_events_posted_from_a_thread_reach_the_progress_bar_and_the_curator(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert "1 passages not verbatim" in text_of(app, "#progress")  # the real analysis: pair 2
        from_thread(lambda: screen.post_message(AnalysisMessage(AnalysisProgress("links", 5, 10))))
        await pilot.pause()
        assert "analysing: near-duplicates 5/10… (esc stops)" in text_of(app, "#progress")
        told = []
        screen.notify = lambda message, **kw: told.append(message)
        from_thread(lambda: screen.post_message(AnalysisMessage(AnalysisFailed("the analysis process stopped"))))
        await pilot.pause()
        assert "analysing" not in text_of(app, "#progress")
        assert told == ["Analysis: the analysis process stopped"]


async def test_a_verdict_for_a_passage_edited_since_is_dropped(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        screen = app.screen
        before = set(screen.controller.not_verbatim)
        assert 2 in before
        # A result for an older text of pair 2's passage: stale, nothing changes.
        from_thread(lambda: screen.post_message(VerdictCompleted(2, "an older passage")))
        await settle(app, pilot)
        assert screen.controller.not_verbatim == before
        # A result for its current passage re-checks it (still not verbatim: kept).
        passage = session.view(2).passage
        screen.controller.not_verbatim.discard(2)
        from_thread(lambda: screen.post_message(VerdictCompleted(2, passage)))
        await settle(app, pilot)
        assert 2 in screen.controller.not_verbatim


async def test_the_run_dialog_shows_a_failure_and_progress_posted_from_its_worker(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        dialog = LLMRunScreen("A job", job=lambda *a: None, total=3, unit="call")
        dialog._prepare = lambda: None  # no client: the test posts what the workers would
        app.push_screen(dialog)
        await settle(app, pilot)
        dialog.phase = "running"
        dialog.status.started()
        from_thread(lambda: dialog.post_message(LLMProgress(1, 3)))
        await settle(app, pilot)
        assert text_of(app, "#llm-run-status").startswith("1 of 3 calls done, asking for call 2…")
        from_thread(lambda: dialog.post_message(LLMFailed("[bold]no key[/] for the LLM")))
        await settle(app, pilot)
        assert dialog.phase == "failed" and dialog.error == "[bold]no key[/] for the LLM"
        status = app.screen.query_one("#llm-run-status", LLMStatus)
        assert str(status.content) == "[bold]no key[/] for the LLM"  # plain text, never markup
        assert status.has_class("-error")


def test_the_status_line_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown status kind"):
        LLMStatus().show("x", "fatal")


# -- the command palette -----------------------------------------------------------------------------


async def palette(app, pilot, query: str) -> list[str]:
    """Open the palette over the review screen, type ``query``; the entries listed."""
    await pilot.press("ctrl+p")
    await settle(app, pilot)
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*query)
    await wait_until(pilot, lambda: app.screen.query_one(CommandList).options, f"entries listed for {query!r}")
    return [str(o.prompt) for o in app.screen.query_one(CommandList).options]


async def test_the_palette_opens_the_checklist(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        listed = await palette(app, pilot, "check")
        assert any("Checklist" in row and "key: g" in row for row in listed), listed
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ChecklistScreen)


async def test_palette_entries_show_the_key_as_rebound(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session, keymap={"dedup": "z"}) as (app, pilot):
        listed = await palette(app, pilot, "near-dup")
        assert any("Near-duplicates" in row and "key: z" in row for row in listed), listed
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DedupScreen)


async def test_the_palette_switches_the_queue_view(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        await pilot.press("f")  # pair 0 flagged
        await palette(app, pilot, "view flagged")
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.controller.status_filter is Status.FLAGGED
        assert screen.queue.ids == [0] and current(app) == 0


async def test_the_palette_exports_and_opens_help(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        await pilot.press("a")
        await palette(app, pilot, "export")
        await pilot.press("enter")
        await settle(app, pilot)
        rows = [json.loads(line) for line in (tmp_path / "ws" / "export.jsonl").read_text("utf-8").splitlines()]
        assert [r["status"] for r in rows] == ["accepted", "undecided", "undecided"]
        await palette(app, pilot, "help")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
