"""The bulk-actions menu: one action over every pair of the current view, picked with one key.

Each line names an action (``app.bulk.ACTIONS``), how many pairs of the view it touches
(counted when the menu opens for the cheap ones; the slow ones, snap, shrink, fit and
chunk_index, are counted after they are picked, in a worker of the review screen) and how many
it would reject (``app.bulk.rejects``: only "reject" rejects; a repair never discards a pair).
Dismisses with the action id, or None on escape. The review screen then asks once
(``ConfirmScreen``, or :class:`BulkPlanScreen` listing the pairs a repair could not fix, with
the reason) and applies it as ONE undo step.
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
KEYS = "1234567890"


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

    def __init__(self, n: int, scope: str, counts: dict[str, int], rejects: dict[str, int] | None = None) -> None:
        super().__init__()
        self.n = n
        self.scope = scope
        self.counts = counts
        #: action id -> pairs it would reject (absent: none).
        self.rejects = rejects or {}

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
            rejected = self.rejects.get(action, 0)
            body.append(f" · rejects {rejected:,}" if rejected else " · rejects none",
                        style="bold red" if rejected else "dim")
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


class BulkPlanScreen(ModalScreen[bool]):
    """Confirm a bulk repair that could not fix every pair: how many it changes, then each pair
    it could not fix with the reason (plain text), left as it is for the curator. ``a``/``enter``/``y``
    apply, ``esc``/``n`` cancel."""

    BINDINGS = [
        Binding("a,enter,y", "answer(True)", "apply"),
        Binding("escape,n", "answer(False)", "cancel"),
    ]
    DEFAULT_CSS = """
    BulkPlanScreen { align: center middle; background: $background 40%; }
    BulkPlanScreen #bulk-plan { width: 90%; max-width: 110; height: auto; max-height: 90%; }
    BulkPlanScreen #bulk-plan-list { height: auto; max-height: 60vh; }
    """

    #: Pairs listed at most (the rest counted).
    MAX_LISTED = 200

    def __init__(self, label: str, touched: int, total: int, skipped: dict[int, str]) -> None:
        super().__init__()
        self.label, self.touched, self.total, self.skipped = label, touched, total, skipped

    def compose(self) -> ComposeResult:
        from textual.containers import VerticalScroll

        from mtcb_curate.plaintext import printable

        head = Text()
        head.append(f"{self.label}: {self.touched:,} of the {self.total:,} pairs of this view", style="bold")
        head.append(f"\n{len(self.skipped):,} could not be fixed and stay as they are (nothing is rejected):",
                    style="yellow")
        body = Text()
        for pid, why in list(sorted(self.skipped.items()))[:self.MAX_LISTED]:
            body.append(f"#{pid}", style="bold")
            body.append(" " + printable(why, keep_newlines=False) + "\n")
        if len(self.skipped) > self.MAX_LISTED:
            body.append(f"… and {len(self.skipped) - self.MAX_LISTED:,} more\n", style="dim")
        keys = Text()
        keys.append(" a/enter ", style="bold reverse")
        keys.append(f" apply to the {self.touched:,}  " if self.touched else " nothing to apply  ")
        keys.append(" esc ", style="bold reverse")
        keys.append(" cancel")
        with Vertical(id="bulk-plan", classes="dialog"):
            yield Static(head)
            with VerticalScroll(id="bulk-plan-list"):
                yield Static(body)
            yield Static(keys)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(bool(yes and self.touched))
