"""When a screen draws its next frame: at most one frame per ``1 / TEXTUAL_FPS`` seconds, counted
from the previous frame.

Textual draws a screen from a repeating timer (``Screen._update_timer``, 60 a second by
default) that is paused while nothing needs drawing and resumed by the next refresh. That timer
keeps a grid: its ticks fall on multiples of the interval counted from when it started, and a
tick it missed (it was paused) moves the next one a whole interval past the current grid point.
After a frame, the next one can therefore wait up to two intervals (33 ms at 60 frames a
second), however long ago the previous frame was drawn: keys 20 ms apart (a held key) then wait
for a frame that nothing else holds back. ``FrameClock`` keeps Textual's cap and drops the
grid: a refresh asked for an interval or more after the previous frame is drawn at once, an
earlier one when the interval is up.

Private names used: ``Timer._run`` (overridden), ``Timer._active``/``_reset``/``_interval``/
``_tick``/``_start``, ``Screen._update_timer`` (overridden), ``Screen._on_timer_update`` and
``_timers``, ``textual._time``. Canary: ``tests/test_workarounds.py`` (Textual's own timer still
holds a refresh for its grid; every name above still exists). Upstream report:
``docs/textual-workarounds.md``.
"""

from __future__ import annotations

import asyncio

from textual import _time
from textual.screen import UPDATE_PERIOD
from textual.timer import EventTargetGone, Timer

__all__ = ["FrameClock", "PromptFrames"]


#: Turns of the event loop a frame waits once asked for. A widget's refresh reaches the screen
#: as a message (``Update``) from the widget's own task, and the screen asks for a frame once
#: its queue is empty: widgets refreshed by one key handler can reach it a turn apart, and a
#: frame drawn at once would leave the later ones to a second frame.
SETTLE_TURNS = 2


class FrameClock(Timer):
    """A paused-by-default repeating timer that calls back at most once per ``interval``
    seconds, counted from the previous call's start, whenever it is resumed (Textual's
    ``Timer``, with no grid of ticks), after ``SETTLE_TURNS`` turns of the event loop.
    ``reset()`` forgets the previous call."""

    async def _run(self) -> None:
        interval = self._interval
        last = float("-inf")
        count = 0
        while True:
            await self._active.wait()
            for _ in range(SETTLE_TURNS):
                await asyncio.sleep(0)
            if self._reset:
                self._reset = False
                last = float("-inf")
            wait = last + interval - _time.get_time()
            if wait > 0:
                await _time.sleep(wait)
                await self._active.wait()  # paused meanwhile: wait for the next resume
            last = _time.get_time()
            count += 1
            try:
                await self._tick(next_timer=last, count=count)
            except EventTargetGone:
                break


class PromptFrames:
    """Mixin for a ``Screen``: its frames come from a ``FrameClock`` (the same cap as Textual's,
    ``UPDATE_PERIOD`` seconds, counted from the previous frame) instead of Textual's screen
    update timer. Put it before ``Screen`` in the bases."""

    _frame_clock: FrameClock | None = None

    @property
    def _update_timer(self) -> Timer:
        clock = self._frame_clock
        if clock is None:
            clock = FrameClock(self, UPDATE_PERIOD, name="screen_update",
                               callback=self._on_timer_update, pause=True)  # type: ignore[attr-defined]
            clock._start()
            self._timers.add(clock)  # type: ignore[attr-defined]  # stopped with the screen's timers
            self._frame_clock = clock
        return clock
