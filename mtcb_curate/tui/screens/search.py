"""The search prompt: a query for the next pair whose texts, key or note contain it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class SearchScreen(ModalScreen[str | None]):
    """Returns the query typed (enter), or None (escape)."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, last: str = "") -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(id="search-dialog", classes="dialog"):
            yield Static("Search question, answer, passage, document key, note or #id (enter: next match)",
                         markup=False)
            yield Input(value=self.last, placeholder="text to find", id="search-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
