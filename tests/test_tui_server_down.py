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
