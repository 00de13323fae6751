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
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from rich.text import Text
from textual import events
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


class KeyGate:
    """Keys the app keeps, in the order read, while a change waits on a server (a decision's
    commit on a shared workspace whose connection is being replaced): none is handled behind a
    change that may yet fail. ``hold`` starts keeping them; ``release(replay=True)`` hands them
    back to the app one at a time, in order, behind none read later (``drain``); with
    ``replay=False`` they are dropped. ``PASS`` keys (quitting) are never kept.

    The app calls ``take(event)`` for each key it reads (True: kept, the app does nothing more
    with it) and runs ``drain`` on its own task when asked to (``KeysReleased``).
    """

    #: Keys handled even while held: the app's own ways out.
    PASS = frozenset({"ctrl+q", "ctrl+c"})

    def __init__(self) -> None:
        self._kept: deque[events.Key] = deque()
        self.holding = False
        self._replaying: events.Key | None = None

    def hold(self) -> None:
        """Keep every key read from now on until ``release``."""
        self.holding = True

    def take(self, event: events.Key) -> bool:
        """Keep ``event`` when holding, or while kept keys wait to be replayed (so that none
        overtakes them); False: the app handles it now."""
        if event is self._replaying or event.key in self.PASS:
            return False
        if self.holding or self._kept:
            self._kept.append(event)
            return True
        return False

    def release(self, *, replay: bool) -> int:
        """Stop holding. ``replay``: the kept keys are to be handled (``drain``, on the app's
        task); else they are dropped. Returns how many were kept."""
        self.holding = False
        kept = len(self._kept)
        if not replay:
            self._kept.clear()
        return kept

    async def drain(self, handle: Callable[[events.Key], Awaitable[object]]) -> None:
        """Hand the kept keys to ``handle`` (the app's key handling), oldest first, until none
        is left or one of them makes the gate hold again (the rest stay kept)."""
        while self._kept and not self.holding:
            key = self._replaying = self._kept.popleft()
            try:
                await handle(key)
            finally:
                self._replaying = None


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
