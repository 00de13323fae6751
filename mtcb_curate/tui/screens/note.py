"""The note dialog: the curator's free-text note on one pair (``N`` in the review screen)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.tui.changes import ChangeResult, run_change
from mtcb_curate.tui.keys import KEYS_WAIT_S, TypedInput, keys_handled


class NoteScreen(ModalScreen[str | None]):
    """Edit pair ``pair_id``'s note. Returns the text typed (enter; '' removes the note), or
    None (escape: nothing changes).

    ``save``, when given, saves the text as a change of the app's (``tui.changes.run_change``)
    before the dialog closes, and ``saved`` gets what it returned: on a shared workspace whose
    server does not answer at once the dialog stays open until the note is saved; when a write
    fails it stays open with the text as typed and one line (enter tries again).

    Keys typed in one burst land in order (``tui/keys.py``): those typed right after ``N`` go
    to the note, enter and escape wait for them before closing, and those typed after enter go
    to the review screen (``N hello enter a`` saves "hello", then accepts).
    """

    AUTO_FOCUS = None  # ``on_mount`` focuses the input at once
    BINDINGS = [
        Binding("enter", "save", "save", priority=True, show=False),
        Binding("escape", "cancel", "cancel", priority=True, show=False),
    ]

    def __init__(self, pair_id: int, note: str | None, *, save: Callable[[str], object] | None = None,
                 saved: Callable[[Any], object] | None = None) -> None:
        super().__init__()
        self.pair_id = pair_id
        self.note = note or ""
        self.save = save
        self.saved = saved

    def compose(self) -> ComposeResult:
        title = Text()
        title.append(f"Note on pair #{self.pair_id}", style="bold")
        title.append("  enter saves · an empty note removes it · esc cancels (u undoes)", style="dim")
        with Vertical(id="note-dialog", classes="dialog"):
            yield Static(title)
            yield TypedInput(value=self.note, placeholder="why this pair needs a second look, what to check ...",
                             id="note-input")
            yield Static("", id="note-status")

    def on_mount(self) -> None:
        self.query_one("#note-dialog").styles.width = 80  # inline: `.dialog { width: auto }` outranks DEFAULT_CSS
        self.query_one("#note-status").display = False
        self.set_focus(self.query_one(TypedInput))

    async def action_save(self) -> None:
        field = self.query_one(TypedInput)
        await keys_handled([field], KEYS_WAIT_S)
        if self.app.screen is not self:
            return
        text, save = field.value, self.save
        if save is None:
            self.dismiss(text)
            return
        run_change(self.app, lambda: save(text), what=f"the note on #{self.pair_id}",
                   then=lambda result: self._saved(result, text))

    def _saved(self, result: ChangeResult, text: str) -> None:
        """The save is done: say what it came to (``saved``); close, or stay open when it failed."""
        value = result.get()
        if self.saved is not None:
            self.saved(value)
        if result.failed:
            status = self.query_one("#note-status", Static)
            status.update(Text("Not saved: the note is kept here: enter tries again, esc discards it.",
                               style="bold yellow"))
            status.display = True
            return
        if self.is_attached and self.app.screen is self:
            self.dismiss(text)

    async def action_cancel(self) -> None:
        await keys_handled([self.query_one(TypedInput)], KEYS_WAIT_S)
        if self.app.screen is self:
            self.dismiss(None)
