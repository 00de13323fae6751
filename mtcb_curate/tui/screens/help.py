"""The help screen: every key of the review screen, as currently bound, then a legend of every
mark the queue and the QA panel show."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    """Lists (keys, action id, description) rows, then ``legend`` rows (mark, where, meaning);
    any of escape, q or ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "close")]

    def __init__(self, rows: list[tuple[str, str, str]], config_hint: str,
                 legend: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.config_hint = config_hint
        self.legend = legend or []

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("keys", no_wrap=True)
        table.add_column("action")
        table.add_column("id (for rebinding)", style="dim")
        for keys, action_id, description in self.rows:
            table.add_row(Text(keys, style="bold"), Text(description), Text(action_id))
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"))
            yield Static(table)
            yield Static(Text(self.config_hint, style="dim"))
            if self.legend:
                marks = Table(box=None, show_header=True, header_style="bold", expand=True)
                marks.add_column("mark", no_wrap=True)
                marks.add_column("where", no_wrap=True, style="dim")
                marks.add_column("meaning")
                for mark, where, meaning in self.legend:
                    marks.add_row(Text(mark, style="bold"), Text(where), Text(meaning))
                yield Static(Text("\nMarks", style="bold"))
                yield Static(marks, id="help-legend")

    def action_close(self) -> None:
        self.dismiss(None)
