"""The review screen's curator keys: notes (N), hand-written pairs (H), backspace undoes, the help
legend, "decided" as the checklist counts it, every action in the palette, the reject reason
"other" typed, the source header with no empty field, queue marks of the current passage."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from support import current, opened, review_app, settle, text_of, wait_until, write_source  # noqa: F401

from mtcb_curate.dataset.model import Status
from mtcb_curate.tui.screens.hand_pair import HandPairScreen
from mtcb_curate.tui.screens.help import HelpScreen
from mtcb_curate.tui.screens.note import NoteScreen
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.screens.select_span import SelectSpanScreen
from mtcb_curate.tui.widgets.pair_list import PairList

pytestmark = pytest.mark.usefixtures("review_at_once")


async def on_screen(app, pilot, kind) -> None:
    """Let the app run until a screen of ``kind`` is on top: Pilot's ``press`` and ``pause``
    only wait for the app to look idle, which a loaded machine fakes."""
    await wait_until(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted,
                     f"a {kind.__name__} on top, mounted")


def row(app, pid: int) -> str:
    queue = app.screen.query_one(PairList)
    return queue._row_text(pid, 80)


async def test_note_is_written_shown_and_undone_with_backspace(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("N")
        await on_screen(app, pilot, NoteScreen)
        await pilot.press(*"check [bold]x[/]", "enter")   # markup stays plain text
        await wait_until(pilot, lambda: session.note(0) is not None, "the note saved")
        await on_screen(app, pilot, ReviewScreen)
        await settle(app, pilot)
        assert session.note(0) == "check [bold]x[/]"
        assert "note: check [bold]x[/]" in text_of(app, "#qa-head")
        await pilot.press("backspace")                      # undo, as u
        await wait_until(pilot, lambda: session.note(0) is None, "the note undone")
        await settle(app, pilot)
        assert session.note(0) is None and "note:" not in text_of(app, "#qa-head")
        await pilot.press("N")
        await on_screen(app, pilot, NoteScreen)
        await pilot.press("escape")                         # esc: nothing changes
        await on_screen(app, pilot, ReviewScreen)
        await settle(app, pilot)
        assert session.note(0) is None and not [e for e in session.workspace.history() if e.kind == "note"]


async def test_backspace_undoes_a_decision(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("a")
        await wait_until(pilot, lambda: session.status(0) is not Status.UNDECIDED, "the decision saved")
        assert session.status(0) is Status.ACCEPTED
        await pilot.press("backspace")
        await wait_until(pilot, lambda: session.status(0) is not Status.ACCEPTED, "the decision undone")
        await settle(app, pilot)
        assert session.status(0) is Status.UNDECIDED and current(app) == 0


async def test_hand_written_pair_is_verified_and_queued(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        n = len(session)
        await pilot.press("H")
        await on_screen(app, pilot, SelectSpanScreen)
        app.screen.start, app.screen.end = 20, 52  # "Revenue was $10 million in 2022."
        await pilot.press("enter")
        await on_screen(app, pilot, HandPairScreen)
        await pilot.press(*"How much revenue in 2022?", "enter", *"$10 million", "enter")
        await wait_until(pilot, lambda: len(session) != n, "the pair added")
        await on_screen(app, pilot, ReviewScreen)
        await settle(app, pilot)
        assert len(session) == n + 1
        pair = session.pairs[n]
        assert pair.origin == "hand" and pair.passage == "Revenue was $10 million in 2022."
        assert pair.chunk_index == 0 and session.status(n) is Status.UNDECIDED
        assert [e.via for e in session.workspace.history() if e.kind == "add"] == ["hand"]
        assert current(app) == n
        assert "✎ added by hand" in text_of(app, "#qa-head") and "✎" in row(app, n)
        assert "EXACT" in text_of(app, "#qa-verdict")
        await pilot.press("u")
        await wait_until(pilot, lambda: len(session) != n + 1, "the added pair undone")
        await settle(app, pilot)
        assert len(session) == n


async def test_hand_pair_needs_question_and_answer(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("H")
        await on_screen(app, pilot, SelectSpanScreen)
        await pilot.press("enter")   # the starting span
        await on_screen(app, pilot, HandPairScreen)
        dialog = app.screen
        await pilot.press("enter", "enter")  # nothing typed
        await wait_until(pilot, lambda: str(dialog.query_one("#hand-error").content), "the dialog's answer to enter")
        assert app.screen is dialog
        assert "type the question" in str(app.screen.query_one("#hand-error").content)
        await pilot.press("escape")
        await on_screen(app, pilot, ReviewScreen)
        assert len(session) == 3


async def test_help_has_a_legend_of_every_mark(tiny, ws):
    from mtcb_curate.tui.screens import review

    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("question_mark")
        await on_screen(app, pilot, HelpScreen)
        marks = {m for m, _where, _meaning in app.screen.legend}
        expected = {*review.GLYPH.values(), *(m for m in review.VERDICT_MARK.values() if m.strip()),
                    review.FAIL_MARK, review.UNFINDABLE_MARK, review.HAND_MARK, "!", "◇"}
        assert expected <= marks, expected - marks
        keys = {k for k, _id, _d in app.screen.rows}
        assert any("backspace" in k for k in keys)


async def test_decided_counts_what_the_checklist_counts(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("a", "f", "space")  # accepted, flagged, skipped
        await wait_until(pilot, lambda: session.status(2) is not Status.UNDECIDED, "the three keys handled")
        await settle(app, pilot)
        assert [session.status(i) for i in range(3)] == [Status.ACCEPTED, Status.FLAGGED, Status.SKIPPED]
        assert "decided 1/3" in text_of(app, "#progress")


async def test_palette_lists_every_binding_with_its_key(tiny, ws):
    from mtcb_curate.tui.palette import entries, key_of
    from mtcb_curate.tui.screens.review import BINDINGS

    listed = {e.binding_id for e in entries()}
    assert {b.id for b in BINDINGS if b.id} <= listed
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        assert key_of(app, "note") == "key: N" and "backspace" in key_of(app, "undo")
        note = next(e for e in entries() if e.binding_id == "note")
        note.run(app.screen)
        await on_screen(app, pilot, NoteScreen)


async def test_reject_other_takes_typed_text(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        await pilot.press("x", "7")
        await wait_until(pilot, lambda: any(w.has_focus for w in app.screen.query("#reject-other")),
                         "the reason typed in its own field")
        assert app.screen.query_one("#reject-other", Input).has_focus
        await pilot.press(*"wrong 10-K year x", "enter")
        await wait_until(pilot, lambda: session.status(0) is not Status.UNDECIDED, "the rejection saved")
        assert session.view(0).reason == "other: wrong 10-K year x" and session.status(0) is Status.REJECTED
        await on_screen(app, pilot, ReviewScreen)
        await pilot.press("x", "7")
        await wait_until(pilot, lambda: any(w.has_focus for w in app.screen.query("#reject-other")),
                         "the reason field again")
        await pilot.press("escape", "escape")  # back to the list, then cancel
        await on_screen(app, pilot, ReviewScreen)
        await settle(app, pilot)
        assert session.status(1) is Status.UNDECIDED


async def test_source_header_has_no_empty_field(tmp_path, ws):
    src = write_source(tmp_path / "src", corpus=[
        {"ticker": "AAA", "company": "", "text": "Alpha makes anvils.\n"}],
        questions=[{"question": "What does Alpha make?", "answer": "Anvils",
                    "supporting_passage": "Alpha makes anvils.", "ticker": "AAA", "chunk_index": 0}])
    session = opened(src, ws)
    async with review_app(session) as (app, pilot):
        title = text_of(app, "#doc-title")
        assert "·  ·" not in title and "company" not in title and "· ·" not in title
        assert title.endswith("characters")


async def test_queue_mark_follows_the_current_passage_after_a_group_undo(tiny, ws):
    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        assert row(app, 2)[1] == "≈"  # "Beta sells  bells." is normalized
        session.edit_many({2: {"supporting_passage": "Beta sells bells."},
                           0: {"supporting_passage": "Alpha makes anvils."}})  # a bulk snap, one step
        app.screen._apply(app.screen.controller.after_change(0, rebuild_queue=True))
        await settle(app, pilot)
        assert row(app, 2)[1] != "≈"  # no stale "normalized" on the snapped passage
        await pilot.press("u")       # the group undone: the old passage, its mark again
        await wait_until(pilot, lambda: session.view(2).passage != "Beta sells bells.", "the group undone")
        await settle(app, pilot)
        assert row(app, 2)[1] == "≈"


async def test_checklist_reasons_are_not_cut_for_the_question(tmp_path, ws):
    from textual.widgets import OptionList

    from mtcb_curate.tui.screens.checklist import ChecklistScreen

    long_q = "What was the total amount of revenue that Alpha reported for the fiscal year in question? " * 3
    src = write_source(tmp_path / "src", corpus=[{"ticker": "AAA", "text": "Alpha makes anvils.\n"}],
                       questions=[{"question": long_q, "answer": "Anvils", "supporting_passage": "Beta sells bells.",
                                   "ticker": "AAA", "chunk_index": 0}])
    session = opened(src, ws)
    session.decide(0, Status.ACCEPTED)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        app.push_screen(ChecklistScreen(session, loads=False))
        await settle(app, pilot)
        screen = app.screen
        from dataclasses import replace

        reason = "not found verbatim in its document; the closest span differs in 3 words (fuzzy 91.2)"
        verbatim = replace(next(c for c in screen.report.checks if c.id == "verbatim"), reasons={0: reason})
        assert len(reason) > 48  # longer than the old fixed column
        screen._open(verbatim)
        await pilot.pause()
        prompt = str(screen.query_one("#checklist-pairs", OptionList).options[0].prompt)
        assert reason in prompt, (reason, prompt)
        assert "What was the total" in str(screen.query_one("#checklist-detail").content)


async def test_top_bar_counts_hand_written_pairs_apart(tiny, ws):
    from mtcb_curate.app.hand import add_hand_pair

    session = opened(tiny, ws)
    add_hand_pair(session, "AAA", 0, 19, "What does Alpha make?", "Anvils")
    async with review_app(session) as (app, pilot):
        bar = text_of(app, "#source-bar")
        assert "4 pairs (1 by hand)" in bar and "generated" not in bar
        app.screen.goto(3)
        await wait_until(pilot, lambda: app.screen._shown_pair == 3, "pair 3 shown")
        await settle(app, pilot)
        assert text_of(app, "#qa-head").count("added by hand") == 1


async def test_hand_pair_keys_typed_in_one_burst_land_in_their_fields(tiny, ws):
    """A paste or a fast typist: question, enter, answer, enter all queued at once; the answer
    must not end up in the question field (the enter moves the focus as it is read)."""
    from test_edit_integrity import type_at_once

    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        n = len(session)
        await pilot.press("H")
        await on_screen(app, pilot, SelectSpanScreen)
        await pilot.press("enter")   # the starting span
        await on_screen(app, pilot, HandPairScreen)
        type_at_once(app, [*"How much revenue?", "enter", *"$10 million", "enter"])
        await wait_until(pilot, lambda: len(session) != n, "the pair added")
        await settle(app, pilot)
        assert len(session) == n + 1
        assert (session.pairs[n].question, session.pairs[n].answer) == ("How much revenue?", "$10 million")


async def test_bulk_reject_dialog_names_the_view_not_one_pair(tiny, ws):
    from mtcb_curate.tui.screens.reject import RejectScreen

    session = opened(tiny, ws)
    async with review_app(session) as (app, pilot):
        app.screen.run_bulk("reject")
        await on_screen(app, pilot, RejectScreen)
        title = str(app.screen.query_one("Static").render())
        assert f"Reject {len(session)} pairs of this view" in title and "#" not in title
