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


def typed_keys(app, keys: str) -> str:
    """A binding's keys (``"u,backspace"``, ``"full_stop"``, ``"right_square_bracket,shift+down"``)
    as a curator types them (``u ⌫``, ``.``, ``] shift+↓``): Textual's own key display."""
    return " ".join(app.get_key_display(Binding(key.strip(), "")) for key in keys.split(",") if key.strip())


class HelpScreen(ModalScreen[None]):
    """Lists (keys, action id, description) rows, then ``legend`` rows (mark, where, meaning);
    any of escape, q or ? closes it. A row with an action id gives its keys as bound (Textual
    key names, comma-separated) and shows them as typed (``typed_keys``); a row without one
    shows its keys as given. The ids are shown whole: they are what the config file's
    ``[keys]`` table rebinds."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "close")]

    def __init__(self, rows: list[tuple[str, str, str]], config_hint: str,
                 legend: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.config_hint = config_hint
        self.legend = legend or []

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        shown = [(typed_keys(self.app, keys) if action_id else keys, action_id, description)
                 for keys, action_id, description in self.rows]
        id_width = max((len(action_id) for _k, action_id, _d in shown), default=0)
        table.add_column("keys", no_wrap=True)
        table.add_column("action", ratio=1)
        table.add_column("id (for rebinding)", style="dim", no_wrap=True, min_width=max(id_width, 18))
        for keys, action_id, description in shown:
            table.add_row(Text(keys, style="bold"), Text(description), Text(action_id))
        #: The keys table as shown (``rich.table.Table``).
        self.table = table
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
