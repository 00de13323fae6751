"""Every text input of the app takes a burst of keys (a paste, a script, a fast typist over SSH)
as if each key had been typed once the one before it had taken effect: the keys typed before
the input has focus go to it, in order, enter is handled before the keys typed after it, and
those go to the screen the input leaves to (``tui.keys.keys_in_order``). At 80x24."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from mtcb_curate.app.bulk import ACTIONS, REJECT
from mtcb_curate.dataset.model import Status

from support import current, opened, review_app, settle, write_source

SIZE = (80, 24)
#: Key names (as Textual's terminal driver names them) -> the character they type.
NAMED = {"enter": "\r", "escape": "\x1b", "backspace": "\x7f", "space": " ", "slash": "/"}
#: Characters typed in a word -> their key name.
KEY_OF = {" ": "space", "/": "slash", "#": "number_sign", "-": "minus", ".": "full_stop", ":": "colon"}


@pytest.fixture(autouse=True)
def accept_at_once(tmp_path, monkeypatch):
    """``a`` accepts a pair that fails a check without asking."""
    config = tmp_path / "c.toml"
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))


def typed(app, *items: str) -> None:
    """Queue every key of ``items`` on the app at once (as a terminal does for keys typed faster
    than the app handles them): a key name of ``NAMED`` is that key, a single letter that key,
    anything else the characters of a word."""
    for item in items:
        for char in [item] if item in NAMED or len(item) == 1 else list(item):
            key = KEY_OF.get(char, char)
            app.post_message(events.Key(key, NAMED.get(char, char)))


async def done(app, pilot) -> None:
    for _ in range(3):
        await pilot.pause(0.05)
        await settle(app, pilot)


async def test_a_filter_typed_in_a_burst_is_applied_and_the_key_after_it_moves_in_the_new_view(tmp_path):
    from mtcb_curate.tui.widgets.filter_bar import FilterBar

    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        session.decide(current(app), Status.ACCEPTED)
        typed(app, "V", "status:undecided", "enter", "j")
        await done(app, pilot)
        screen = app.screen
        bar = screen.query_one(FilterBar)
        assert type(screen).__name__ == "ReviewScreen" and not bar.is_open
        assert bar.input.value == "status:undecided"
        # no letter of the filter reached the review screen's keys (s snaps, t trims, a accepts ...)
        assert [e.kind for e in session.workspace.history()] == ["decide"]
        undecided = session.ids(Status.UNDECIDED)
        assert screen.controller.queue.ids == undecided
        assert current(app) == undecided[1]  # j, read after enter, moved in the new view


def _words(text: str) -> list[str]:
    return [w for w in text.split() if w.isalpha() and w.islower() and len(w) > 4]


async def test_select_span_searches_typed_in_a_burst_start_and_end_the_span_then_enter_uses_it(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        doc = session.dataset.document_for(session.pairs[first]).text
        start = app.screen.controller.select_start(first)[0]
        word = _words(doc[start + 40:start + 400])[0]
        at = doc.lower().index(word, start + 1)
        last = _words(doc[at + len(word) + 40:at + 400])[0]
        # / starts the span at a typed word, e ends it at another
        typed(app, "m", "slash", word, "enter", "e", last, "enter", "enter", "j")
        await done(app, pilot)
        assert type(app.screen).__name__ == "ReviewScreen"
        passage = session.view(first).passage
        assert passage.lower().startswith(word) and passage.lower().endswith(last) and passage in doc
        assert [(e.kind, e.via) for e in session.workspace.history()] == [("edit", "select")]
        assert current(app) == first + 1


async def test_a_pair_written_by_hand_in_a_burst_keeps_its_question_and_answer(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        n = len(session)
        typed(app, "H", "enter", "what is it", "enter", "an answer", "enter")
        await done(app, pilot)
        assert type(app.screen).__name__ == "ReviewScreen"
        assert len(session) == n + 1
        added = session.view(n)
        assert (added.question, added.answer) == ("what is it", "an answer")


async def test_a_bulk_reject_reason_typed_in_a_burst_lands_in_the_reason(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        typed(app, "B", str(list(ACTIONS).index(REJECT) + 1), "7", "my reason", "enter")
        await done(app, pilot)
        # the question that guards the bulk action is answered only by a key typed after it shows
        assert type(app.screen).__name__ == "ConfirmScreen"
        assert "(reason: other: my reason)" in app.screen.prompt
        await pilot.press("a")
        await done(app, pilot)
        assert set(session.decisions().values()) == {(Status.REJECTED.value, "other: my reason")}
        assert len(session.decisions()) == len(session)


async def test_the_publish_screen_takes_a_target_and_a_licence_typed_in_bursts(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        # t focuses the target with its text selected: what is typed replaces it
        typed(app, "P", "t", "owner/namex", "backspace", "enter")
        await done(app, pilot)
        screen = app.screen
        assert type(screen).__name__ == "PublishScreen" and screen.focused is None
        assert screen.repo_id == "owner/name"
        assert screen.plan is not None  # the offline preview (HF_HUB_OFFLINE=1 in the tests)
        typed(app, "l", "cc-by-4.0", "enter")
        await done(app, pilot)
        assert screen.license == "cc-by-4.0" and screen.focused is None


async def test_the_number_of_pairs_to_generate_takes_the_keys_typed_right_after_g(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        typed(app, "G", "backspace", "7")
        await done(app, pilot)
        screen = app.screen
        assert type(screen).__name__ == "GenerateMoreScreen"
        field = screen.query_one("#gen-n", Input)
        assert screen.focused is field and field.value == "7"


async def test_held_keys_on_the_review_screen_are_not_kept_one_at_a_time(tmp_path):
    """The review screen's keys take effect as read: a burst of j is not slowed down by waiting
    for each key's work (the gate keeps none of them)."""
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        kept: list[int] = []
        real = app.key_gate.take

        def take(event):
            held = real(event)
            kept.append(held)
            return held

        app.key_gate.take = take
        typed(app, *"jjjjjj")
        await done(app, pilot)
        assert current(app) == first + 6
        assert kept == [False] * 6


async def test_a_key_handed_to_the_app_once_its_last_screen_is_gone_is_dropped(tmp_path):
    """A key kept for ordering is replayed when the keys are released (``KeysReleased``); when
    the app has closed its last screen by then (the curator quit), the key goes nowhere, and no
    ``ScreenStackError`` ends the app with a traceback."""
    from mtcb_curate.tui.app import CurateApp

    session = opened(write_source(tmp_path / "src"), tmp_path / "ws")
    try:
        app = CurateApp(session)  # never run: no screen on its stack, as at the end of closing
        await app.on_event(events.Key("j", "j"))
        assert app.key_gate.kept == 0
    finally:
        session.workspace.close()
