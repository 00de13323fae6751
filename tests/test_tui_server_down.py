"""The review screen at 80x24 on a shared workspace whose PostgreSQL server goes down mid-review:
a decision's commit runs off the app's thread, the screen says it is reconnecting at once and
keeps drawing, the keys typed meanwhile wait for the commit, and none is applied behind a
change that was not saved."""

from __future__ import annotations

import threading

import pytest
from textual import events

from mtcb_curate.dataset.model import Status
from mtcb_curate.store import postgres

from support import WAIT_S, current, opened, review_app, settle
from test_tui_reading import screen_text

SIZE = (80, 24)


@pytest.fixture(scope="module")
def own_server():
    """A server this module may stop and start (the shared one serves other tests)."""
    from conftest import pg_server_or_skip

    server = pg_server_or_skip()
    yield server
    server.cleanup()


@pytest.fixture(autouse=True)
def accept_at_once(tmp_path, monkeypatch):
    config = tmp_path / "c.toml"
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))


def _keys(app, *keys: str) -> None:
    for key in keys:
        app.post_message(events.Key(key, key))


async def _until(pilot, condition) -> bool:
    """Let the app run (0.05 s a round) until ``condition()`` holds, for at most ``WAIT_S``
    seconds (a guard against a hang, not a speed bound); whether it did."""
    import time

    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        if condition():
            return True
        await pilot.pause(0.05)
    return condition()


async def test_a_decision_while_the_server_is_down_fails_without_freezing_and_drops_the_keys_behind_it(
        own_server, monkeypatch):
    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 3.0)
    s = opened(None, own_server.url(), sample=True, curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            start = current(app)
            own_server.stop("fast")
            try:
                drawn_while_waiting: list[bool] = []
                _keys(app, "a", "j", "j")
                # The app's thread is free while the commit waits: a callback runs before the
                # commit has given up, and the screen says what is going on.
                app.call_later(lambda: drawn_while_waiting.append(s.status(start) is Status.UNDECIDED))
                assert await _until(pilot, lambda: "reconnecting" in screen_text(app).lower())
                assert drawn_while_waiting == [True]
                assert s.status(start) is Status.UNDECIDED
                assert await _until(pilot, lambda: any("Not saved" in n.message for n in app._notifications))
                await settle(app, pilot)
                # neither j moved past the unsaved pair
                assert current(app) == start and s.status(start) is Status.UNDECIDED
                notices = [n.message for n in app._notifications]
                assert any("2 keys typed while it waited were not applied" in n for n in notices), notices
            finally:
                own_server.start()
    finally:
        s.workspace.close()


async def test_a_decision_saved_once_the_server_is_back_lets_the_keys_behind_it_run_in_order(own_server, monkeypatch):
    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 30.0)
    s = opened(None, own_server.url(), sample=True, curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            start = current(app)
            own_server.stop("fast")
            restarted = threading.Event()
            try:
                _keys(app, "a", "j", "f")
                assert await _until(pilot, lambda: "reconnecting" in screen_text(app).lower())
                threading.Thread(target=lambda: (own_server.start(), restarted.set())).start()
                assert await _until(pilot, lambda: s.status(start + 2) is Status.FLAGGED)
                await settle(app, pilot)
                assert s.status(start) is Status.ACCEPTED and s.status(start + 1) is Status.UNDECIDED
                assert current(app) == start + 3  # a moved on, j skipped one, f flagged and moved on
                assert "reconnecting" not in screen_text(app).lower()
            finally:
                restarted.wait(120)
    finally:
        s.workspace.close()


async def test_the_key_gate_replays_kept_keys_in_order_behind_none_read_later_and_drops_them_on_failure():
    from mtcb_curate.tui.keys import KeyGate

    gate = KeyGate()
    k = {c: events.Key(c, c) for c in "abcdefq"}
    assert not gate.take(k["a"])  # not holding: handled now
    gate.hold()
    assert gate.take(k["b"]) and gate.take(k["c"]) and gate.take(k["d"])
    assert not gate.take(events.Key("ctrl+q", None))  # quitting is never kept
    assert gate.release(replay=True) == 3
    assert gate.take(k["e"])  # read after the release, before the replay: behind the kept ones
    handled: list[str] = []

    async def handle(key):
        assert not gate.take(key)  # the key being replayed is not kept again
        handled.append(key.key)
        if key.key == "c":
            gate.hold()  # c waits on the server again: the rest stays kept

    await gate.drain(handle)
    assert handled == ["b", "c"]
    assert gate.release(replay=False) == 2  # d and e dropped: c failed
    await gate.drain(handle)
    assert handled == ["b", "c"] and not gate.take(k["f"])


# -- every other change to a pair takes the same way as a decision --------------------------------


def _says_reconnecting(app) -> bool:
    """The screen says it is reconnecting: on the review screen's progress line (shown under a
    dialog too), or in a notification (a dialog over the whole screen)."""
    return ("reconnecting" in screen_text(app).lower()
            or any("reconnecting" in n.message for n in app._notifications))


async def _restart_when_reconnecting(app, pilot, server) -> threading.Event:
    """Wait until the screen says it is reconnecting, then start the server again (on a thread:
    ``pg_ctl start`` takes a second or two). Returns the event set once it is up."""
    assert await _until(pilot, lambda: _says_reconnecting(app))
    restarted = threading.Event()
    threading.Thread(target=lambda: (server.start(), restarted.set())).start()
    return restarted


async def test_an_edit_while_the_server_is_down_keeps_its_dialog_open_then_saves_once_and_the_keys_behind_run(
        own_server, monkeypatch):
    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 30.0)
    s = opened(None, own_server.url(), sample=True, curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            start = current(app)
            question = s.view(start).question
            await pilot.press("e")
            await settle(app, pilot)
            assert type(app.screen).__name__ == "EditScreen"
            own_server.stop("fast")
            restarted = threading.Event()
            try:
                drawn_while_waiting: list[bool] = []
                _keys(app, "Z", "ctrl+s", "j")
                app.call_later(lambda: drawn_while_waiting.append(s.view(start).question == question))
                restarted = await _restart_when_reconnecting(app, pilot, own_server)
                assert drawn_while_waiting == [True]  # the app's thread ran while the edit waited
                assert type(app.screen).__name__ == "EditScreen"  # open until it is saved
                assert await _until(pilot, lambda: s.view(start).question != question)
                await settle(app, pilot)
                assert s.view(start).question == "Z" + question
                assert type(app.screen).__name__ == "ReviewScreen" and current(app) == start + 1  # then j
                assert [(e.kind, e.pair_id) for e in s.workspace.history()] == [("edit", start)]  # once
                assert "reconnecting" not in screen_text(app).lower()
            finally:
                restarted.wait(120)
    finally:
        s.workspace.close()


async def test_a_note_while_the_server_stays_down_is_kept_in_its_dialog_and_the_keys_behind_are_dropped(
        own_server, monkeypatch):
    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 3.0)
    s = opened(None, own_server.url(), sample=True, curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            start = current(app)
            own_server.stop("fast")
            try:
                _keys(app, "N", "h", "i", "enter", "j", "j")
                assert await _until(pilot, lambda: _says_reconnecting(app))
                assert await _until(pilot, lambda: "Not saved" in screen_text(app))
                await settle(app, pilot)
                screen = app.screen
                assert type(screen).__name__ == "NoteScreen"  # the text is not lost
                assert screen.query_one("#note-input").value == "hi" and s.note(start) is None
                notices = [n.message for n in app._notifications]
                assert any("2 keys typed while it waited were not applied: the note on" in n for n in notices), notices
            finally:
                own_server.start()
            await pilot.press("enter")  # the server is back: enter tries again
            await settle(app, pilot)
            assert s.note(start) == "hi" and type(app.screen).__name__ == "ReviewScreen" and current(app) == start
    finally:
        s.workspace.close()


async def test_undo_and_a_bulk_action_while_the_server_is_down_are_made_once_it_is_back(own_server, monkeypatch):
    from mtcb_curate.app.bulk import ACCEPT, ACTIONS

    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 30.0)
    s = opened(None, own_server.url(), sample=True, curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            start = current(app)
            await pilot.press("a")
            await settle(app, pilot)
            assert s.status(start) is Status.ACCEPTED and current(app) == start + 1
            own_server.stop("fast")
            restarted = threading.Event()
            try:
                _keys(app, "u", "j")
                restarted = await _restart_when_reconnecting(app, pilot, own_server)
                assert await _until(pilot, lambda: s.status(start) is Status.UNDECIDED)
                await settle(app, pilot)
                assert current(app) == start + 1  # the undo showed #start, then j
            finally:
                restarted.wait(120)
            _keys(app, "B", str(list(ACTIONS).index(ACCEPT) + 1))
            await settle(app, pilot)
            assert type(app.screen).__name__ == "ConfirmScreen"
            own_server.stop("fast")
            restarted = threading.Event()
            try:
                await pilot.pause(0.2)
                _keys(app, "a", "j")
                restarted = await _restart_when_reconnecting(app, pilot, own_server)
                assert await _until(pilot, lambda: s.counts()[Status.ACCEPTED] == len(s))
                await settle(app, pilot)
            finally:
                restarted.wait(120)
            # once: one bulk entry per pair, in one group (the accept was undone)
            entries = s.workspace.history()
            assert sorted(e.pair_id for e in entries) == list(range(len(s)))
            assert {(e.kind, e.via) for e in entries} == {("decide", "bulk")} and len({e.group for e in entries}) == 1
    finally:
        s.workspace.close()


async def test_a_cluster_kept_while_the_server_stays_down_fails_with_one_line_and_changes_nothing(
        own_server, monkeypatch, tmp_path):
    from test_tui_dedup import write_data

    from mtcb_curate.app import clusters
    from mtcb_curate.tui.screens.cluster import ClusterScreen

    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 3.0)
    s = opened(write_data(tmp_path), own_server.url(), curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            cluster = next(c for c in clusters.find(s) if c.ids == (0, 1, 2))
            app.push_screen(ClusterScreen(s, cluster, chosen_id=1))
            await settle(app, pilot)
            own_server.stop("fast")
            try:
                _keys(app, "k", "escape")
                assert await _until(pilot, lambda: _says_reconnecting(app))
                assert type(app.screen).__name__ == "ClusterScreen"
                assert await _until(pilot, lambda: any("Not saved" in n.message for n in app._notifications))
                await settle(app, pilot)
                assert type(app.screen).__name__ == "ClusterScreen"  # escape, typed behind it, dropped
                assert {s.status(i) for i in cluster.ids} == {Status.UNDECIDED}
                assert any("1 key typed while it waited was not applied: keeping #1 was not saved" in n.message
                           for n in app._notifications)
            finally:
                own_server.start()
    finally:
        s.workspace.close()


async def test_a_typed_reject_reason_is_kept_in_its_dialog_when_the_rejection_is_not_saved(own_server, monkeypatch):
    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 3.0)
    s = opened(None, own_server.url(), sample=True, curator="ann")
    try:
        async with review_app(s, size=SIZE, close=False) as (app, pilot):
            start = current(app)
            own_server.stop("fast")
            try:
                _keys(app, "x", "7", "m", "y", "enter", "j")
                assert await _until(pilot, lambda: _says_reconnecting(app))
                assert await _until(pilot, lambda: any("Not saved" in n.message for n in app._notifications))
                await settle(app, pilot)
                assert type(app.screen).__name__ == "RejectScreen"
                assert app.screen.query_one("#reject-other").value == "my"
                assert s.status(start) is Status.UNDECIDED
            finally:
                own_server.start()
            await pilot.press("enter")  # the server is back: enter tries again
            await settle(app, pilot)
            assert s.decisions()[start] == (Status.REJECTED.value, "other: my")
            assert type(app.screen).__name__ == "ReviewScreen" and current(app) == start + 1
    finally:
        s.workspace.close()
