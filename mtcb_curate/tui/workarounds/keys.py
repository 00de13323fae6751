"""Keys typed faster than the app handles them: whether any wait, and bindings run as a key is read.

Textual reads a key from the app's queue and hands it at once to the focused widget's own queue
(or runs it, if a priority binding takes it). The focused widget's other bindings (an ``Input``'s
backspace, arrows, enter) run only when the key has bubbled back up to the app, and then on
whatever has the focus at that moment; meanwhile the widget has handled the keys typed after it.
Typed at once, ``h i enter x`` into an ``Input`` submits ``hix``; ``a backspace b`` leaves ``a``.
Two answers, both here:

- :class:`RunsOwnBindings`: a mixin for a text input (``TypedInput``, ``PlainTextArea``) that runs
  the input's own bindings in its own queue as it reads the key, in the order typed, whatever
  has the focus by then (public API: the classes' ``BINDINGS``, ``BindingsMap``,
  ``App.run_action``). A dialog takes enter and escape with
  priority bindings that first wait for its input to handle the keys already handed to it
  (``tui/keys.keys_handled``), so the keys typed after them reach the screen below once the
  dialog has closed.
- :func:`keys_waiting`: whether a key is waiting in the app's queue, read from Textual's private
  queue (``MessagePump._message_queue``, ``_pending_message``): no public call says so. The
  review screen puts off drawing a pair while keys wait (a held key, a burst).
- :func:`focus_pending` and :func:`idle`, for the app's keys one at a time
  (``tui/keys.keys_in_order``): ``Widget.focus`` moves the focus later, through a callback
  queued on the app behind the keys already read (``focus_pending`` finds it there); ``idle``
  waits until the app and every widget of its screen have handled what they hold (their
  queues, the private ``_next_callbacks``), as Textual's ``Pilot`` waits for a screen.

Canaries: ``tests/test_workarounds.py`` (Textual still runs a focused input's enter after the
keys typed behind it; the private queue still holds waiting keys where ``keys_waiting`` looks;
``Widget.focus`` still queues its callback where ``focus_pending`` looks; ``idle`` still waits
for what a submitted input and a dismissed screen set going).
Upstream report: ``docs/textual-workarounds.md``.
"""

from __future__ import annotations

import asyncio
import functools

from textual import events
from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.message_pump import MessagePump

__all__ = ["RunsOwnBindings", "focus_pending", "idle", "keys_waiting"]

#: The most rounds ``idle`` waits (each: every pump handles what it held), and the longest
#: wait for one round, seconds: a widget that keeps posting to itself (a timer) never makes
#: the keys wait longer.
IDLE_ROUNDS = 20
IDLE_ROUND_S = 2.0


def keys_waiting(app: App) -> bool:
    """Whether a key event waits in ``app``'s message queue, or was peeked from it (read
    without being taken, as Textual's loop does to merge messages). False when this Textual's
    queue is not where this looks (the canary fails then)."""
    if isinstance(getattr(app, "_pending_message", None), events.Key):
        return True
    queue = getattr(app, "_message_queue", None)
    return any(isinstance(m, events.Key) for m in getattr(queue, "values", ()))


def _queued(pump: MessagePump) -> list:
    """The messages waiting in ``pump``'s queue (private: ``_message_queue.values``), the one
    peeked from it (``_pending_message``) first."""
    queue = getattr(pump, "_message_queue", None)
    waiting = list(getattr(queue, "values", ()))
    pending = getattr(pump, "_pending_message", None)
    return waiting if pending is None else [pending, *waiting]


def focus_pending(app: App) -> bool:
    """Whether a widget asked for the focus (``Widget.focus``) and does not have it yet: Textual
    queues that as a callback on the app, behind the keys already read."""
    for message in _queued(app):
        callback = getattr(message, "callback", None)
        func = getattr(callback, "func", callback)
        if isinstance(message, events.Callback) and getattr(func, "__qualname__", "") == "Widget.focus.<locals>.set_focus":
            return True
    return False


def _has_work(pump: MessagePump, app: App) -> bool:
    """Whether ``pump`` holds a message or a callback to run next (the app: anything but a key
    not read yet; a key that bubbled back up to it is work)."""
    if getattr(pump, "_next_callbacks", None):
        return True
    if pump is app:
        return any(not isinstance(m, events.Key) or m.is_forwarded for m in _queued(app))
    return pump.message_queue_size > 0 or getattr(pump, "_pending_message", None) is not None


async def idle(app: App) -> None:
    """Return once the app and every widget of its current screen have handled what they held:
    the work the keys read so far set going (a focus, an input's submission bubbling up, a
    dismissed screen's callback, the next screen's mount). In rounds: a callback queued on each
    pump runs once it has handled what was before it; the rounds go on while any holds more
    (each round's screen taken afresh), at most ``IDLE_ROUNDS``, ``IDLE_ROUND_S`` each."""
    for round_ in range(IDLE_ROUNDS):
        pumps = [app, *app.screen.walk_children(with_self=True)]
        if round_ and not any(_has_work(p, app) for p in pumps):
            return
        left = 0
        done = asyncio.Event()

        def marker() -> None:
            nonlocal left
            left -= 1
            if not left:
                done.set()

        for pump in pumps:
            if pump.call_later(marker):
                left += 1
        if not left:
            return
        try:
            await asyncio.wait_for(done.wait(), IDLE_ROUND_S)
        except TimeoutError:
            return


@functools.cache
def own_bindings(cls: type) -> dict[str, tuple[Binding, ...]]:
    """Key -> the bindings a widget class declares for it (its ``BINDINGS`` and its bases',
    a subclass's replacing a base's for the same key, as Textual merges them)."""
    out: dict[str, tuple[Binding, ...]] = {}
    for base in reversed(cls.__mro__):
        declared = vars(base).get("BINDINGS")
        if declared:
            out.update((key, tuple(found)) for key, found in BindingsMap(declared).key_to_bindings.items())
    return out


class RunsOwnBindings:
    """Mixin, before the widget class (``class TypedInput(RunsOwnBindings, Input)``): a key that
    is not text and that one of this widget's own (non-priority) bindings takes runs that
    binding as the widget reads it, in its own queue, on this widget (even if the focus has
    moved on meanwhile), instead of after bubbling up to the app. Text keys and enter are left
    to the widget (enter: a dialog takes it first)."""

    async def on_key(self, event: events.Key) -> None:
        if getattr(self, "read_only", False) or event.is_printable or event.key == "enter":
            return
        for binding in own_bindings(type(self)).get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):  # type: ignore[attr-defined]
                event.stop()
                event.prevent_default()
                return
