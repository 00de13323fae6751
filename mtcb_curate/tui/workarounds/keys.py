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

Canaries: ``tests/test_workarounds.py`` (Textual still runs a focused input's enter after the
keys typed behind it; the private queue still holds waiting keys where ``keys_waiting`` looks).
Upstream report: ``docs/textual-workarounds.md``.
"""

from __future__ import annotations

import functools

from textual import events
from textual.app import App
from textual.binding import Binding, BindingsMap

__all__ = ["RunsOwnBindings", "keys_waiting"]


def keys_waiting(app: App) -> bool:
    """Whether a key event waits in ``app``'s message queue, or was peeked from it (read
    without being taken, as Textual's loop does to merge messages). False when this Textual's
    queue is not where this looks (the canary fails then)."""
    if isinstance(getattr(app, "_pending_message", None), events.Key):
        return True
    queue = getattr(app, "_message_queue", None)
    return any(isinstance(m, events.Key) for m in getattr(queue, "values", ()))


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
