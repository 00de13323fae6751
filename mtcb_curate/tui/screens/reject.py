"""The reject dialog: pick an optional reason with one key."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.dataset.model import REJECT_REASONS

#: What the dialog returns when the curator cancels (None means "reject with no reason").
CANCEL = "__cancel__"


class RejectScreen(ModalScreen[str | None]):
    """Returns a reason from ``REJECT_REASONS``, None (no reason) or ``CANCEL``.

    Keys: 1-7 pick a reason; enter, space or x reject without one; escape cancels.
    """

    BINDINGS = [
        Binding("escape", "cancel", "cancel"),
        Binding("enter,space,x", "no_reason", "reject, no reason"),
        *[Binding(str(i + 1), f"pick({i})", r, show=False) for i, r in enumerate(REJECT_REASONS)],
    ]

    def __init__(self, pair_id: int) -> None:
        super().__init__()
        self.pair_id = pair_id

    def compose(self) -> ComposeResult:
        body = Text()
        body.append(f"Reject pair #{self.pair_id}\n\n", style="bold")
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

    def action_pick(self, index: int) -> None:
        self.dismiss(REJECT_REASONS[index])

    def action_no_reason(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(CANCEL)
