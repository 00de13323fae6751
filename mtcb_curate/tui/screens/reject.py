"""The reject dialog: pick an optional reason with one key."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from mtcb_curate.dataset.model import REJECT_REASONS

#: What the dialog returns when the curator cancels (None means "reject with no reason").
CANCEL = "__cancel__"
#: The reason that takes typed text.
OTHER = "other"


class RejectScreen(ModalScreen[str | None]):
    """Returns a reason from ``REJECT_REASONS``, None (no reason) or ``CANCEL``.

    Keys: 1-7 pick a reason; enter, space or x reject without one; escape cancels. ``7``
    (other) opens a line to type the reason: enter returns ``other: TEXT`` (``other`` when
    left empty), escape goes back to the list.
    """

    BINDINGS = [
        Binding("escape", "cancel", "cancel"),
        Binding("enter,space,x", "no_reason", "reject, no reason"),
        *[Binding(str(i + 1), f"pick({i})", r, show=False) for i, r in enumerate(REJECT_REASONS)],
    ]

    def __init__(self, pair_id: int | None, *, count: int | None = None) -> None:
        """``pair_id``: the pair rejected; or ``count``: how many pairs of the view a bulk
        reject touches (the title names them instead of one pair)."""
        super().__init__()
        self.pair_id = pair_id
        self.count = count

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

    def _other(self) -> Input | None:
        found = self.query("#reject-other")
        return found.first(Input) if found else None

    def action_pick(self, index: int) -> None:
        if REJECT_REASONS[index] == OTHER:
            if self._other() is None:  # mounted now, not before: no key reaches it until then
                other = Input(placeholder="the reason, in your words (enter rejects, esc goes back)",
                              id="reject-other")
                self.query_one("#reject-dialog").mount(other)
                other.focus()
            return
        self.dismiss(REJECT_REASONS[index])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = " ".join(event.value.split())
        self.dismiss(f"{OTHER}: {text}" if text else OTHER)

    def action_no_reason(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        other = self._other()
        if other is not None:
            other.remove()
            self.set_focus(None)
            return
        self.dismiss(CANCEL)
