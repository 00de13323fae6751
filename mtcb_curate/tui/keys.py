"""Keys in dialogs: the line that names them, a count typed into an input, and keys typed
faster than the app handles them (a paste, a script, a fast typist)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from rich.text import Text
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


def keys_line(items: Iterable[tuple[str, str]]) -> Text:
    """A dialog's key line: each ``(key, what it does)`` as `` key `` in reverse, then the
    words (plain text)."""
    t = Text()
    for key, what in items:
        t.append(f" {key} ", style="bold reverse")
        t.append(f" {what}   ")
    return t


def typed_count(value: str, maximum: int) -> int | None:
    """The whole number typed in ``value`` if it is from 1 to ``maximum``, else None."""
    try:
        n = int(value.strip())
    except ValueError:
        return None
    return n if 1 <= n <= maximum else None
