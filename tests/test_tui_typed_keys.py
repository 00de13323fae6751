"""Keys typed in one burst (a paste, a script, a fast typist over SSH) land in order at 80x24:
those typed right after the key that opens a dialog go to its input, enter and escape close it
only after the keys typed before them, and those typed after it go to the review screen."""

from __future__ import annotations

import pytest
from textual import events

from mtcb_curate.dataset.model import REJECT_REASONS
from mtcb_curate.store.session import Status

from support import current, opened, review_app, settle

SIZE = (80, 24)
CHARS = {"space": " ", "enter": "\r", "escape": "\x1b", "backspace": "\x7f", "slash": "/", "number_sign": "#"}
#: Textual's names of the keys that are not letters or digits (as its terminal driver names them).
NAMES = {"/": "slash", "#": "number_sign", " ": "space"}


@pytest.fixture(autouse=True)
def accept_at_once(tmp_path, monkeypatch):
    """``a`` accepts a pair that fails a check without asking."""
    config = tmp_path / "c.toml"
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))


def burst(app, *keys: str) -> None:
    """Queue ``keys`` on the app all at once, as a terminal does for keys typed faster than the
    app handles them (``Pilot.press`` waits for the app after each key). A word stands for its
    letters, except Textual's key names (``enter``, ``space``, ...)."""
    for word in keys:
        for key in ([word] if word in CHARS or len(word) == 1 else list(word)):
            key = NAMES.get(key, key)
            app.post_message(events.Key(key, CHARS.get(key, key)))


async def burst_done(app, pilot) -> None:
    for _ in range(3):
        await pilot.pause(0.05)
        await settle(app, pilot)


async def test_a_note_typed_in_a_burst_keeps_its_text_and_the_keys_after_it_decide(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        burst(app, "N", "hello", "enter", "a", "x", "1")
        await burst_done(app, pilot)
        second = first + 1
        assert session.note(first) == "hello"
        assert session.decisions()[first] == (Status.ACCEPTED.value, None)
        assert session.decisions()[second] == (Status.REJECTED.value, REJECT_REASONS[0])
        assert type(app.screen).__name__ == "ReviewScreen"


async def test_a_typed_reject_reason_in_a_burst_is_kept_backspace_in_place(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        burst(app, "x", "7", "my", "space", "reasonn", "backspace", "enter", "j")
        await burst_done(app, pilot)
        assert session.decisions()[first] == (Status.REJECTED.value, "other: my reason")
        assert current(app) == first + 2  # the reject moved on, then j


async def test_escape_in_the_reason_line_goes_back_to_the_reasons_and_the_list_keys_work_again(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        burst(app, "x", "7", "x1 ", "escape", "2")
        await burst_done(app, pilot)
        assert session.decisions()[first] == (Status.REJECTED.value, REJECT_REASONS[1])


async def test_escape_closes_the_note_after_the_keys_before_it_and_the_key_after_it_decides(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        burst(app, "N", "draft", "escape", "f")
        await burst_done(app, pilot)
        assert session.note(first) is None
        assert session.decisions()[first] == (Status.FLAGGED.value, None)
        assert [e.kind for e in session.workspace.history()] == ["decide"]


async def test_a_search_typed_in_a_burst_finds_then_the_next_key_moves_on(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    target = next(i for i in range(len(session)) if i > 3 and "3M" not in session.view(i).question)
    async with review_app(session, size=SIZE) as (app, pilot):
        burst(app, "/", f"#{target}", "enter", "j")
        await burst_done(app, pilot)
        assert current(app) == target + 1


async def test_escape_from_the_editor_in_a_burst_discards_and_the_key_after_it_decides(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=SIZE) as (app, pilot):
        first = current(app)
        question = session.view(first).question
        burst(app, "e", "xyz", "escape", "a")
        await burst_done(app, pilot)
        assert session.view(first).question == question
        assert session.decisions()[first] == (Status.ACCEPTED.value, None)
