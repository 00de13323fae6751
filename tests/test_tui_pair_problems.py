"""Problems before acceptance in the review app (Pilot): the QA panel's problems lines with
their fix keys, the queue's mark, the confirmation before accepting a failing pair (and the
config switch that turns it off), and the checklist's "include undecided" toggle."""

from __future__ import annotations

import pytest

from support import current, opened, review_app, settle, text_of, wait_until

from mtcb_curate.dataset.model import Status
from mtcb_curate.tui.screens.checklist import ChecklistScreen
from mtcb_curate.tui.screens.confirm import ConfirmScreen
from mtcb_curate.tui.screens.review import FAIL_MARK, ReviewScreen

pytestmark = pytest.mark.usefixtures("review_at_once")


def _row(app, pid: int) -> str:
    return app.screen.rows.text(pid, 80)


async def test_panel_lists_problems_with_fix_keys_and_queue_marks_failing_pairs(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        # Pair 0: "Alpha makes anvils." is 19 characters: a passage_length warning only.
        problems = text_of(app, "#qa-problems")
        assert problems.startswith("! passage_length: 19 characters")
        assert "z shrink, m select" in problems
        assert FAIL_MARK not in _row(app, 0)
        await pilot.press("j", "j")
        await settle(app, pilot)
        assert current(app) == 2
        problems = text_of(app, "#qa-problems")
        # Pair 2 is not verbatim (a doubled space): verbatim fails, s snaps it.
        assert "✗ verbatim: " in problems and "s snap" in problems
        assert FAIL_MARK in _row(app, 2)
        # Snapped: the problem and the mark go, through the one refresh path.
        await pilot.press("s")
        await settle(app, pilot)
        assert "verbatim" not in text_of(app, "#qa-problems")
        assert FAIL_MARK not in _row(app, 2)


async def test_accepting_a_failing_pair_asks_a_confirms_esc_cancels(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("a")  # pair 0 only warns: accepted at once
        assert session.status(0) is Status.ACCEPTED and current(app) == 1
        await pilot.press("j")
        assert current(app) == 2
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        assert "fails verbatim: accept anyway? a/enter yes, esc no" in str(
            app.screen.query_one("#confirm-line").content)
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)
        assert session.status(2) is Status.UNDECIDED and current(app) == 2
        await pilot.press("a", "a")
        assert isinstance(app.screen, ReviewScreen)
        assert session.status(2) is Status.ACCEPTED
        await pilot.press("u")  # undone as any accept
        await pilot.press("a", "enter")
        assert session.status(2) is Status.ACCEPTED


async def test_keys_typed_before_the_question_never_answer_it(tiny, ws):
    """A held ``a``: the keys typed ahead decide the pairs before the failing one, and those
    still queued when the question comes up are dropped, not taken as "accept anyway"; a key
    pressed once it is shown answers it."""
    from textual import events

    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        assert current(app) == 0
        for _ in range(5):  # all queued before the first is handled
            app.post_message(events.Key("a", "a"))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.dropped == 2
                         and app.screen.shown_at is not None,  # painted: a key pressed now answers it
                         "asked, with the fourth and fifth key dropped")
        assert session.status(0) is Status.ACCEPTED and session.status(1) is Status.ACCEPTED
        assert isinstance(app.screen, ConfirmScreen)  # pair 2 fails verbatim: asked
        assert app.screen.dropped == 2  # the fourth and fifth key
        assert session.status(2) is Status.UNDECIDED
        await pilot.press("a")  # typed once the question is on screen
        assert isinstance(app.screen, ReviewScreen)
        assert session.status(2) is Status.ACCEPTED and len(session) == 3  # the last pair


async def test_config_off_accepts_without_asking(tiny, ws, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    session = opened(tiny, ws)
    async with review_app(session, config_path=config) as (app, pilot):
        await pilot.press("j", "j", "a")
        assert isinstance(app.screen, ReviewScreen)
        assert session.status(2) is Status.ACCEPTED


async def test_checklist_toggle_includes_undecided_pairs(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        app.push_screen(ChecklistScreen(session, loads=False))
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ChecklistScreen) and screen.report.accepted == []
        assert screen.report.get("reviewed").status == "fail"
        await pilot.press("u")
        await settle(app, pilot)
        report = screen.report
        assert screen.include_undecided and report.accepted == [0, 1, 2]
        assert 2 in report.get("verbatim").failing and report.get("reviewed").status == "skip"
        assert "WHAT WOULD FAIL IF ACCEPTED" in str(screen.query_one("#checklist-header").content)
        await pilot.press("u")
        await settle(app, pilot)
        assert screen.report.accepted == [] and not screen.include_undecided
