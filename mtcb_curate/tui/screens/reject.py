"""The reject dialog: pick an optional reason with one key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.dataset.model import REJECT_REASONS
from mtcb_curate.tui.changes import ChangeResult, run_change
from mtcb_curate.tui.keys import KEYS_WAIT_S, TypedInput, keys_handled

#: What the dialog returns when the curator cancels (None means "reject with no reason").
CANCEL = "__cancel__"
#: The reason that takes typed text.
OTHER = "other"


class RejectScreen(ModalScreen[str | None]):
    """Returns a reason from ``REJECT_REASONS``, None (no reason) or ``CANCEL``.

    Keys: 1-7 pick a reason; enter, space or x reject without one; escape cancels. ``7``
    (other) opens a line to type the reason: enter returns ``other: TEXT`` (``other`` when
    left empty), escape goes back to the list.

    Every key is a priority binding, run as the app reads it, so a burst lands in order
    (``tui/keys.py``): ``x 7 my reason enter`` types "my reason" into the line that ``7``
    opened (mounted and focused before the next key is read), and enter waits for those keys
    before closing. While the line has focus, the list's keys (1-7, space, x) are text.
    """

    BINDINGS = [
        Binding("escape", "cancel", "cancel", priority=True),
        Binding("enter", "enter", "reject, no reason", priority=True),
        Binding("space,x", "no_reason", "reject, no reason", priority=True),
        *[Binding(str(i + 1), f"pick({i})", r, show=False, priority=True) for i, r in enumerate(REJECT_REASONS)],
    ]

    def __init__(self, pair_id: int | None, *, count: int | None = None,
                 save: Callable[[str | None], object] | None = None, saved: Callable[[Any], object] | None = None
                 ) -> None:
        """``pair_id``: the pair rejected; or ``count``: how many pairs of the view a bulk
        reject touches (the title names them instead of one pair). ``save``, when given, makes
        the rejection with the reason chosen, as a change of the app's
        (``tui.changes.run_change``), before the dialog closes, and ``saved`` gets what it
        returned: on a shared workspace whose server does not answer at once the dialog stays
        open until it is saved; when the write fails it stays open, the reason kept."""
        super().__init__()
        self.pair_id = pair_id
        self.count = count
        self.save = save
        self.saved = saved

    def compose(self) -> ComposeResult:
        body = Text()
        what = f"pair #{self.pair_id}" if self.count is None else (
            f"{self.count:,} pair{'s' if self.count != 1 else ''} of this view")
        body.append(f"Reject {what}\n\n", style="bold")
        for i, r in enumerate(REJECT_REASONS):
            body.append(f" {i + 1} ", style="bold reverse")
            body.append(f" {r}\n")
        body.append("\n")
        body.append(" enter ", style="bold reverse")
        body.append(" no reason   ")
        body.append(" esc ", style="bold reverse")
        body.append(" cancel")
        with Vertical(id="reject-dialog", classes="dialog"):
            yield Static(body)
            yield Static("", id="reject-status")

    def on_mount(self) -> None:
        self.query_one("#reject-status").display = False

    def _other(self) -> TypedInput | None:
        found = self.query("#reject-other")
        return found.first(TypedInput) if found else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the reason line has focus, 1-7, space and x are text typed into it."""
        if action in ("pick", "no_reason") and isinstance(self.focused, TypedInput):
            return False
        return True

    async def action_pick(self, index: int) -> None:
        if REJECT_REASONS[index] == OTHER:
            other = self._other()
            if other is None:
                other = TypedInput(placeholder="the reason, in your words (enter rejects, esc goes back)",
                                   id="reject-other")
                await self.query_one("#reject-dialog").mount(other)
            self.set_focus(other)  # at once: the next key read goes to the line
            return
        self._reject(REJECT_REASONS[index])

    async def action_enter(self) -> None:
        other = self._other()
        if other is None or self.focused is not other:
            self._reject(None)
            return
        await keys_handled([other], KEYS_WAIT_S)
        if self.app.screen is self:
            text = " ".join(other.value.split())
            self._reject(f"{OTHER}: {text}" if text else OTHER)

    def action_no_reason(self) -> None:
        self._reject(None)

    def _reject(self, reason: str | None) -> None:
        """Close with ``reason``; with ``save``, once the rejection is saved."""
        save = self.save
        if save is None:
            self.dismiss(reason)
            return
        run_change(self.app, lambda: save(reason), what=f"the rejection of #{self.pair_id}",
                   then=lambda result: self._saved(result, reason))

    def _saved(self, result: ChangeResult, reason: str | None) -> None:
        value = result.get()
        if self.saved is not None:
            self.saved(value)
        if result.failed:
            status = self.query_one("#reject-status", Static)
            status.update(Text("Not saved: the same key tries again (a typed reason is kept), esc cancels.",
                               style="bold yellow"))
            status.display = True
            return
        if self.is_attached and self.app.screen is self:
            self.dismiss(reason)

    async def action_cancel(self) -> None:
        other = self._other()
        if other is not None:
            await keys_handled([other], KEYS_WAIT_S)
            await other.remove()
            self.set_focus(None)
            return
        self.dismiss(CANCEL)
