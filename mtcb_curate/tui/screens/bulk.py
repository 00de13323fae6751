"""The bulk-actions menu: one action over every pair of the current view, picked with one key.

Each line names an action (``app.bulk.ACTIONS``) and how many pairs of the view it touches
(counted when the menu opens for the cheap ones; the slow ones, snap, shrink and chunk_index,
are counted after they are picked, in a worker of the review screen). Dismisses with the
action id, or None on escape. The review screen then asks once (``ConfirmScreen``) and applies
it as ONE undo step.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.app.bulk import ACTIONS

#: The menu's keys, in ``ACTIONS`` order.
KEYS = "123456789"


class BulkScreen(ModalScreen[str | None]):
    """Pick a bulk action for ``n`` shown pairs; ``counts``: action id -> pairs it touches
    (absent: counted after picking)."""

    BINDINGS = [
        Binding("escape,q", "cancel", "cancel"),
        *[Binding(k, f"pick({i})", show=False) for i, k in enumerate(KEYS[:len(ACTIONS)])],
    ]
    DEFAULT_CSS = """
    BulkScreen { align: center middle; background: $background 40%; }
    BulkScreen #bulk-dialog > Static { width: 100%; height: auto; }
    """

    def __init__(self, n: int, scope: str, counts: dict[str, int]) -> None:
        super().__init__()
        self.n = n
        self.scope = scope
        self.counts = counts

    def compose(self) -> ComposeResult:
        body = Text()
        body.append(f"Bulk action on the {self.n:,} pairs of this view", style="bold")
        body.append(f"\n{self.scope}\n\n", style="dim")
        for key, (action, (label, _slow)) in zip(KEYS, ACTIONS.items()):
            body.append(f" {key} ", style="bold reverse")
            count = self.counts.get(action)
            body.append(f" {label}  ")
            body.append("(counted when picked)" if count is None else f"{count:,} pairs", style="dim" if not count
                        else "bold")
            body.append("\n")
        body.append("\nAsks once before writing; one u undoes it whole.  ")
        body.append(" esc ", style="bold reverse")
        body.append(" cancel")
        with Vertical(id="bulk-dialog", classes="dialog"):
            yield Static(body)

    def action_pick(self, index: int) -> None:
        self.dismiss(list(ACTIONS)[index])

    def action_cancel(self) -> None:
        self.dismiss(None)
