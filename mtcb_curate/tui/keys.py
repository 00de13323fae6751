"""Keys in dialogs: the line that names them, a count typed into an input, and keys typed
faster than the app handles them (a paste, a script, a fast typist).

A burst of keys lands in order, whatever the app's speed:

- the review screen's keys are priority bindings, run as the app reads them; one that opens a
  dialog holds the app's queue until the dialog is mounted (Textual's ``push_screen`` does),
  and the dialog focuses its input in ``on_mount`` (``Screen.set_focus``, at once), so the keys
  typed after it go to that input;
- in the input, text and the input's own keys (backspace, arrows) are handled in its queue in
  the order typed (``TypedInput``: ``RunsOwnBindings``, ``tui/workarounds/keys.py``);
- enter and escape are the dialog's priority bindings: read by the app, they first wait until
  the input has handled the keys handed to it before them (``keys_handled``), then close the
  dialog; its result reaches the screen below before the app reads the next key, which then
  goes to that screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Input

from mtcb_curate.tui.workarounds.keys import RunsOwnBindings

#: The longest wait (seconds) for widgets to take the keys already handed to them.
KEYS_WAIT_S = 2.0


async def keys_handled(widgets: Iterable[Widget], timeout: float = KEYS_WAIT_S) -> None:
    """Return once each of ``widgets`` has handled every event already in its queue (the app
    hands keys to the focused widget without waiting for it to take them): a marker is queued
    behind them in each widget at once. Returns after ``timeout`` seconds at most."""
    widgets = [w for w in widgets if w.is_attached]
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


class TypedInput(RunsOwnBindings, Input):
    """``Input`` that runs its own keys (backspace, delete, the arrows, home, end ...) as it
    reads them, in the order typed. Enter is left to the dialog around it (a priority binding
    that waits for the keys typed before it: see the module docstring)."""


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
