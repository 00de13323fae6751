"""The review screen's frame clock: at most one frame per interval counted from the previous
frame, none held back by a grid of ticks (a held key waited for Textual's grid)."""

from __future__ import annotations

import asyncio

import pytest
from textual import _time
from textual import timer as textual_timer

from mtcb_curate.tui.workarounds.frames import FrameClock

from support import opened, review_app, settle, text_of_head, wait_until

INTERVAL = 1 / 60


@pytest.fixture
def clock(monkeypatch):
    """A fake monotonic clock for Textual's timers: ``sleep`` moves it on at once."""
    now = [100.0]

    async def sleep(seconds: float) -> None:
        now[0] += max(0.0, seconds)
        await asyncio.sleep(0)

    monkeypatch.setattr(_time, "get_time", lambda: now[0])
    monkeypatch.setattr(_time, "sleep", sleep)
    monkeypatch.setattr(textual_timer, "sleep", sleep)
    return now


async def _frames(timer_class, clock, resumes: list[float]) -> list[float]:
    """When a paused ``timer_class`` calls back, resumed at each time of ``resumes`` (seconds on
    the fake clock, or when the timer's sleep ends, if later); like a screen, the callback pauses
    the timer again."""
    ticks: list[float] = []

    class Recording(timer_class):
        async def _tick(self, *, next_timer: float, count: int) -> None:
            ticks.append(round(clock[0], 6))
            self.pause()

    class Target:  # what the timer would post to (a weak reference)
        pass

    target = Target()
    timer = Recording(target, INTERVAL, name="screen_update", pause=True)
    timer._start()
    try:
        for at in resumes:
            for _ in range(50):
                await asyncio.sleep(0)
            clock[0] = max(clock[0], at)  # a timer's sleep moved the fake clock on at once
            timer.resume()
        for _ in range(50):
            await asyncio.sleep(0)
    finally:
        timer.stop()
    return ticks


async def test_a_refresh_long_after_the_last_frame_is_drawn_at_once_an_early_one_when_the_interval_is_up(clock):
    start = clock[0]
    resumes = [start, start + 0.005, start + 0.5, start + 0.5 + INTERVAL + 0.001]
    ticks = await _frames(FrameClock, clock, resumes)
    assert ticks == [round(t, 6) for t in (start,                # the first: at once
                                           start + INTERVAL,     # 5 ms after it: when the interval is up
                                           start + 0.5,          # long after: at once
                                           start + 0.5 + INTERVAL + 0.001)]  # just over the interval: at once


async def test_a_frame_waits_for_an_update_that_reaches_the_screen_a_turn_after_it_was_asked_for(clock):
    """A key handler refreshes several widgets; each refresh reaches the screen as a message
    from the widget's task, and the screen asks for a frame once its queue is empty: a widget
    whose message comes a turn of the event loop later is drawn in the same frame."""
    seen: list[list[str]] = []
    updates: list[str] = []

    class Recording(FrameClock):
        async def _tick(self, *, next_timer: float, count: int) -> None:
            seen.append(list(updates))
            self.pause()

    class Target:
        pass

    target = Target()
    timer = Recording(target, INTERVAL, name="screen_update", pause=True)
    timer._start()
    try:
        for _ in range(5):
            await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        timer.resume()  # the screen asks for a frame ...
        loop.call_soon(loop.call_soon, updates.append, "progress bar")  # ... a bar's update comes a turn later
        for _ in range(10):
            await asyncio.sleep(0)
    finally:
        timer.stop()
    assert seen == [["progress bar"]]


async def test_the_review_screen_draws_its_frames_from_the_frame_clock(tmp_path, monkeypatch):
    ticks: list[str] = []
    original = FrameClock._tick

    async def _tick(self, *, next_timer: float, count: int) -> None:
        ticks.append(self.name)
        await original(self, next_timer=next_timer, count=count)

    monkeypatch.setattr(FrameClock, "_tick", _tick)
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session) as (app, pilot):
        screen = app.screen
        assert isinstance(screen._update_timer, FrameClock)
        head, drawn = screen.queue.current, len(ticks)
        await pilot.press("j")
        await wait_until(pilot, lambda: len(ticks) > drawn and f"#{screen.queue.current} " in text_of_head(app),
                         "the next pair drawn by the frame clock")
        assert screen.queue.current != head
        assert f"#{screen.queue.current} " in text_of_head(app)
        assert len(ticks) > drawn and set(ticks) == {"screen_update"}


@pytest.mark.parametrize("key", ["a", "j"])
async def test_a_key_draws_one_frame_that_changes_every_widget_it_changed(tmp_path, monkeypatch, key):
    """By the time the painting ahead starts (after the key's frame), one frame has been drawn
    and it holds the panel, the source and the progress bar together; the painting ahead asks
    for no repaint."""
    config = tmp_path / "c.toml"
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        screen = app.screen
        frames: list[set[str]] = []
        update = screen._on_timer_update

        def _on_timer_update() -> None:
            dirty = {w.id or type(w).__name__ for w in screen._dirty_widgets}
            if dirty or screen._layout_required or screen._scroll_required or screen._repaint_required:
                frames.append(dirty)  # a tick with nothing to draw writes no frame
            update()

        # what each frame repaints: drawn by the frame clock, or by the Pilot's own call
        screen._update_timer._callback = screen._on_timer_update = _on_timer_update
        warm = screen._warm_next
        seen: list[tuple[list[set[str]], list[str]]] = []

        def _warm_next(shown: int) -> None:
            drawn = list(frames)
            warm(shown)
            asked = [w.id or type(w).__name__ for w in screen.walk_children() if w._repaint_required]
            seen.append((drawn, asked + sorted(w.id for w in screen._dirty_widgets)))

        screen._warm_next = _warm_next
        for _ in range(3):
            await pilot.pause(0.7)  # the last pair's full check (after 0.3-0.5 s) ...
            await settle(app, pilot)  # ... and every worker done: nothing else draws meanwhile
            frames.clear()
            seen.clear()
            await pilot.press(key)
            await wait_until(pilot, lambda: bool(seen), "painting ahead after the key's frame")
            drawn, asked = seen[0]
            assert len(drawn) == 1, drawn
            assert {"qa", "source"} <= drawn[0]
            if key == "a":
                assert "progress" in drawn[0]
            assert asked == []
