"""Write a pair by hand: the passage is the span just selected in the source (``H`` in the review
screen runs the select-span screen first); the curator types the question and the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.plaintext import printable
from mtcb_curate.tui.changes import ChangeResult, run_change
from mtcb_curate.tui.keys import KEYS_WAIT_S, TypedInput, keys_handled

#: How much of the passage the dialog shows (characters).
PASSAGE_SHOWN = 600


class HandPairScreen(ModalScreen[tuple[str, str] | None]):
    """Returns ``(question, answer)`` (enter in the answer, or ctrl+s), or None (escape).
    Enter in the question moves to the answer; both must be non-blank. ``save``, when given,
    adds the pair as a change of the app's (``tui.changes.run_change``) before the dialog
    closes, and ``saved`` gets what it returned; when the write fails the dialog stays open
    with the text as typed.

    Keys typed in one burst (a paste, a script) land where they were typed: enter and ctrl+s
    are priority bindings, so the focus moves to the answer as the enter is read (the keys
    after it go to the answer, those before it stay in the question), and saving first waits
    until each field has handled the keys already handed to it (the app hands keys over
    without waiting for the field to take them).
    """

    AUTO_FOCUS = None  # ``on_mount`` focuses the question
    BINDINGS = [
        Binding("escape", "cancel", "cancel", priority=True),
        Binding("ctrl+s", "save", "add the pair", priority=True),
        Binding("enter", "enter", "next field / add", priority=True, show=False),
    ]

    def __init__(self, doc_key: str, passage: str, *, save: Callable[[str, str], object] | None = None,
                 saved: Callable[[Any], object] | None = None) -> None:
        super().__init__()
        self.doc_key = doc_key
        self.passage = passage
        self.save = save
        self.saved = saved

    def compose(self) -> ComposeResult:
        title = Text()
        title.append(f"New pair by hand · document {printable(self.doc_key, keep_newlines=False)}", style="bold")
        title.append("  enter: next field / add · ctrl+s add · esc cancel", style="dim")
        shown = self.passage if len(self.passage) <= PASSAGE_SHOWN else self.passage[:PASSAGE_SHOWN] + "…"
        body = Text()
        body.append(f"passage ({len(self.passage):,} characters, verbatim from the source)\n", style="dim")
        body.append(printable(shown))
        with Vertical(id="hand-dialog", classes="dialog"):
            yield Static(title)
            yield Static(body, id="hand-passage")
            yield TypedInput(placeholder="question", id="hand-question")
            yield TypedInput(placeholder="answer", id="hand-answer")
            yield Static("", id="hand-error")

    def on_mount(self) -> None:
        # Inline: the app's `.dialog { width: auto }` outranks a screen's DEFAULT_CSS.
        self.query_one("#hand-dialog").styles.width = 90
        passage = self.query_one("#hand-passage")
        passage.styles.max_height = max(3, min(11, self.app.size.height - 18))  # the inputs stay visible at 80x24
        passage.styles.margin = (0, 0, 1, 0)
        self.set_focus(self.query_one("#hand-question", TypedInput))  # at once: the keys typed next land here

    def _inputs(self) -> list[TypedInput]:
        return [self.query_one("#hand-question", TypedInput), self.query_one("#hand-answer", TypedInput)]

    async def _typed_keys_done(self) -> None:
        """Return once every key already handed to a field has been handled (``keys_handled``)."""
        await keys_handled(self._inputs(), KEYS_WAIT_S)

    async def action_enter(self) -> None:
        question, answer = self._inputs()
        if self.focused is question:
            self.set_focus(answer)  # now: the keys read after this enter go to the answer
            return
        await self.action_save()

    async def action_save(self) -> None:
        await self._typed_keys_done()
        question = self.query_one("#hand-question", TypedInput).value.strip()
        answer = self.query_one("#hand-answer", TypedInput).value.strip()
        if not question or not answer:
            missing = "question" if not question else "answer"
            self.query_one("#hand-error", Static).update(Text(f"type the {missing} first", style="bold yellow"))
            self.set_focus(self.query_one(f"#hand-{missing}", TypedInput))
            return
        save = self.save
        if save is None:
            self.dismiss((question, answer))
            return
        run_change(self.app, lambda: save(question, answer), what=f"the new pair on {self.doc_key}",
                   then=lambda result: self._added(result, question, answer))

    def _added(self, result: ChangeResult, question: str, answer: str) -> None:
        """The pair is added (``saved`` gets what ``save`` returned): close; or, when the write
        failed, stay open with the text as typed and one line."""
        value = result.get()
        if self.saved is not None:
            self.saved(value)
        if result.failed:
            self.query_one("#hand-error", Static).update(Text(
                "Not added: the question and answer are kept here: ctrl+s tries again, esc discards them.",
                style="bold yellow"))
            return
        if self.is_attached and self.app.screen is self:
            self.dismiss((question, answer))

    async def action_cancel(self) -> None:
        await self._typed_keys_done()
        if self.app.screen is self:
            self.dismiss(None)
