"""The search prompt: a query for the next pair whose texts, key or note contain it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.tui.keys import KEYS_WAIT_S, TypedInput, keys_handled


class SearchScreen(ModalScreen[str | None]):
    """Returns the query typed (enter), or None (escape). Keys typed in one burst land in order:
    those after ``/`` in the query, those after enter on the review screen (``tui/keys.py``)."""

    AUTO_FOCUS = None  # ``on_mount`` focuses the input at once
    BINDINGS = [
        Binding("enter", "search", "search", priority=True, show=False),
        Binding("escape", "cancel", "cancel", priority=True, show=False),
    ]

    def __init__(self, last: str = "") -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(id="search-dialog", classes="dialog"):
            yield Static("Search question, answer, passage, document key, note or #id (enter: next match)",
                         markup=False)
            yield TypedInput(value=self.last, placeholder="text to find", id="search-input")

    def on_mount(self) -> None:
        self.set_focus(self.query_one(TypedInput))

    async def action_search(self) -> None:
        field = self.query_one(TypedInput)
        await keys_handled([field], KEYS_WAIT_S)
        if self.app.screen is self:
            self.dismiss(field.value)

    async def action_cancel(self) -> None:
        await keys_handled([self.query_one(TypedInput)], KEYS_WAIT_S)
        if self.app.screen is self:
            self.dismiss(None)
