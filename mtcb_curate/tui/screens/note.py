"""The note dialog: the curator's free-text note on one pair (``N`` in the review screen)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class NoteScreen(ModalScreen[str | None]):
    """Edit pair ``pair_id``'s note. Returns the text typed (enter; '' removes the note), or
    None (escape: nothing changes)."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, pair_id: int, note: str | None) -> None:
        super().__init__()
        self.pair_id = pair_id
        self.note = note or ""

    def compose(self) -> ComposeResult:
        title = Text()
        title.append(f"Note on pair #{self.pair_id}", style="bold")
        title.append("  enter saves · an empty note removes it · esc cancels (u undoes)", style="dim")
        with Vertical(id="note-dialog", classes="dialog"):
            yield Static(title)
            yield Input(value=self.note, placeholder="why this pair needs a second look, what to check ...",
                        id="note-input")

    def on_mount(self) -> None:
        self.query_one("#note-dialog").styles.width = 80  # inline: `.dialog { width: auto }` outranks DEFAULT_CSS
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
