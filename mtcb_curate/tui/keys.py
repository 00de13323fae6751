"""Keys typed faster than the app handles them (a paste, a script, a fast typist)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from textual.widget import Widget

#: The longest wait (seconds) for widgets to take the keys already handed to them.
KEYS_WAIT_S = 2.0


async def keys_handled(widgets: Iterable[Widget], timeout: float = KEYS_WAIT_S) -> None:
    """Return once each of ``widgets`` has handled every event already in its queue (the app
    hands keys to the focused widget without waiting for it to take them): a marker is queued
    behind them in each widget at once. Returns after ``timeout`` seconds at most."""
    widgets = list(widgets)
    if not widgets:
        return
    left = len(widgets)
    done = asyncio.Event()

    def marker() -> None:
        nonlocal left
        left -= 1
        if not left:
            done.set()

    for widget in widgets:
        widget.call_later(marker)
    try:
        await asyncio.wait_for(done.wait(), timeout)
    except TimeoutError:
        pass
