"""Keys in dialogs: the line that names them, a count typed into an input, and keys typed
faster than the app handles them (a paste, a script, a fast typist).

A burst of keys lands in order, whatever the app's speed, as if each key had been typed once
the one before it had taken effect:

- the app (``tui.app.CurateApp.on_event``) handles one key at a time wherever a key's effect
  travels through messages: on a dialog, in a text input, and after a key that opened or
  closed a screen or moved (or asked to move) the focus. The keys read meanwhile are kept
  (``KeyGate``, reason ``ORDER``) until the app and every widget of its screen have handled
  what that key set going (``workarounds.keys.idle``), then handed back in order
  (``keys_in_order``). So the keys typed before an input has focus go to it once it has, an
  input's enter is handled before the keys typed after it, and a dialog's result (and the
  dialog it opens next) is in place before the next key is read;
- on the review screen (``KEYS_AT_ONCE``) every key is a priority binding that takes effect as
  the app reads it: there keys are not kept, so a held key goes at the app's pace;
- in an input, text and the input's own keys (backspace, arrows) are handled in its queue in
  the order typed (``TypedInput``, ``PlainTextArea``: ``RunsOwnBindings``,
  ``tui/workarounds/keys.py``); the note, reject, search, edit and hand-pair dialogs take enter
  and escape with priority bindings that first wait for their inputs (``keys_handled``);
- while a change waits on a server (``tui.changes``), every key is kept (reason ``CHANGE``):
  handed back once it is saved, dropped (and said so) when it is not.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from rich.text import Text
from textual import events
from textual.app import App
from textual.widget import Widget
from textual.widgets import Input, TextArea

from mtcb_curate.tui.workarounds.keys import RunsOwnBindings, focus_pending

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


#: Why the app keeps keys (``KeyGate.hold``): a change waits on a server (``tui.changes``) ...
CHANGE = "change"
#: ... or the key before has left work that decides where the next one goes (``keys_in_order``).
ORDER = "order"


class KeyGate:
    """Keys the app keeps, in the order read, while something must happen before they are
    handled: a change waiting on a server (``CHANGE``: none is handled behind a change that may
    yet fail), or the work the key before set going (``ORDER``: a dialog to mount, an input
    to focus, a submitted input, a closed dialog's callback). ``hold(reason)`` starts keeping
    them; once no reason holds, ``release(reason, replay=True)`` has them handed back to the
    app one at a time, in order, behind none read later (``drain``); ``replay=False`` drops
    every kept key. ``PASS`` keys (quitting) are never kept.

    The app calls ``take(event)`` for each key it reads (True: kept, the app does nothing more
    with it) and runs ``drain`` on its own task when asked to (``KeysReleased``).
    """

    #: Keys handled even while held: the app's own ways out.
    PASS = frozenset({"ctrl+q", "ctrl+c"})

    def __init__(self) -> None:
        self._kept: deque[events.Key] = deque()
        self._holds: set[str] = set()
        self._replaying: events.Key | None = None

    @property
    def holding(self) -> bool:
        """Whether any reason holds the keys."""
        return bool(self._holds)

    @property
    def kept(self) -> int:
        """How many keys are kept."""
        return len(self._kept)

    def hold(self, reason: str = CHANGE) -> None:
        """Keep every key read from now on until ``release(reason)`` (and every other reason's)."""
        self._holds.add(reason)

    def take(self, event: events.Key) -> bool:
        """Keep ``event`` when holding, or while kept keys wait to be replayed (so that none
        overtakes them); False: the app handles it now."""
        if event is self._replaying or event.key in self.PASS:
            return False
        if self._holds or self._kept:
            self._kept.append(event)
            return True
        return False

    def release(self, reason: str = CHANGE, *, replay: bool) -> int:
        """Stop holding for ``reason``. ``replay``: the kept keys are to be handled once no
        reason holds (``drain``, on the app's task); else every kept key is dropped. Returns
        how many were kept."""
        self._holds.discard(reason)
        kept = len(self._kept)
        if not replay:
            self._kept.clear()
        return kept

    async def drain(self, handle: Callable[[events.Key], Awaitable[object]]) -> None:
        """Hand the kept keys to ``handle`` (the app's key handling), oldest first, until none
        is left or one of them makes the gate hold again (the rest stay kept)."""
        while self._kept and not self._holds:
            key = self._replaying = self._kept.popleft()
            try:
                await handle(key)
            finally:
                self._replaying = None


def is_text_input(widget: object) -> bool:
    """Whether ``widget`` takes typed text (an ``Input``, a ``TextArea``)."""
    return isinstance(widget, (Input, TextArea))


def keys_in_order(app: App, before: tuple[object, object]) -> bool:
    """Whether the keys read after the one just handled must wait until the work it set going is
    done (``KeyGate.hold(ORDER)`` until ``workarounds.keys.idle``): ``before`` is
    ``(app.screen, app.focused)`` as they were before it.

    True when the key opened or closed a screen or moved the focus, asked for the focus
    (``Widget.focus`` does it later: ``workarounds.keys.focus_pending``), or was read on a
    screen whose keys act through messages (a dialog: its bindings run when the key has
    bubbled up, an input's text as the input reads it) or by a text input. False on a screen
    whose keys all take effect as the app reads them (``KEYS_AT_ONCE``: the review screen's
    priority bindings), so that held keys there go at the app's pace.
    """
    screen, focused = app.screen, app.focused
    if screen is not before[0] or focused is not before[1]:
        return True
    if is_text_input(focused) or not getattr(screen, "KEYS_AT_ONCE", False):
        return True
    return focus_pending(app)


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
