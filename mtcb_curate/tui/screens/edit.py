"""The edit dialog: question, answer and supporting passage, edited in place."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from mtcb_curate.tui.widgets.plain_text_area import PlainTextArea

from mtcb_curate.session import PairView

FIELDS = (("question", "Question"), ("answer", "Answer"), ("supporting_passage", "Supporting passage"))


class EditScreen(ModalScreen[dict[str, str] | None]):
    """Returns {field: new text} for the three editable fields (ctrl+s), or None (escape).

    ``focus_field`` picks the area that has the cursor first (default: the question).
    """

    BINDINGS = [
        Binding("ctrl+s", "save", "save", priority=True),
        Binding("escape", "cancel", "cancel"),
    ]

    def __init__(self, view: PairView, focus_field: str = "question") -> None:
        super().__init__()
        self.view = view
        self.focus_field = focus_field

    def compose(self) -> ComposeResult:
        values = {"question": self.view.question, "answer": self.view.answer,
                  "supporting_passage": self.view.passage}
        with Vertical(id="edit-dialog", classes="dialog"):
            yield Static(f"Edit pair #{self.view.pair.id}   ctrl+s save · esc cancel · tab next field",
                         markup=False, id="edit-title")
            for name, label in FIELDS:
                yield Label(label, markup=False, classes="edit-label")
                yield PlainTextArea(values[name], id=f"edit-{name}", soft_wrap=True, tab_behavior="focus",
                               classes="edit-area")

    def on_mount(self) -> None:
        self.query_one(f"#edit-{self.focus_field}", TextArea).focus()

    def action_save(self) -> None:
        self.dismiss({name: self.query_one(f"#edit-{name}", TextArea).text for name, _ in FIELDS})

    def action_cancel(self) -> None:
        self.dismiss(None)
