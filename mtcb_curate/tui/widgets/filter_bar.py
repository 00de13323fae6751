"""The filter bar: one line of input above the queue that sets the review screen's view.

The line is read by ``app.filters.parse`` (``status:undecided verdict:fuzzy fails:verbatim
doc:AAPL is:edited -is:generated is:hand has:note form:what type:numeric in:q,a,p /regex/ plain
words``). Enter
applies it (posting :class:`FilterBar.Applied`), escape closes the bar and leaves the view as
it is (posting :class:`FilterBar.Closed`). A bad line (a bad regular expression, an unknown
word) is shown on the bar's second row, one line, and nothing is applied. The bar is hidden
until opened with :meth:`open`.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from mtcb_curate.app.filters import Filter, FilterError, parse

#: What the empty bar shows.
PLACEHOLDER = ("filter: status:undecided verdict:fuzzy fails:verbatim doc:KEY is:edited is:generated is:hand "
               "has:note is:discriminating form:what type:numeric in:q,a,p /regex/ words  (enter applies, empty clears, "
               "esc closes)")


class FilterBar(Vertical):
    """An ``Input`` for the filter line and a one-row message under it (errors, help)."""

    DEFAULT_CSS = """
    FilterBar { height: auto; display: none; background: $panel; }
    FilterBar.open { display: block; }
    FilterBar > Input { height: 1; border: none; padding: 0 1; background: $panel; }
    FilterBar > #filter-message { height: 1; color: $text-muted; padding: 0 1; }
    FilterBar > #filter-message.error { color: $text-error; text-style: bold; }
    """

    BINDINGS = [Binding("escape", "close", "close the filter bar", show=False)]

    class Applied(Message):
        """The curator applied ``filter`` (``line``: the text as typed)."""

        def __init__(self, filter: Filter, line: str) -> None:
            self.filter = filter
            self.line = line
            super().__init__()

    class Closed(Message):
        """The bar was closed without applying."""

    def compose(self) -> ComposeResult:
        # Disabled while closed: a hidden input must never hold the focus (it would take the
        # review screen's keys).
        yield Input(placeholder=PLACEHOLDER, compact=True, id="filter-input", disabled=True)
        yield Static(id="filter-message")

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    @property
    def is_open(self) -> bool:
        return self.has_class("open")

    def open(self, line: str) -> None:
        """Show the bar holding ``line`` and focus it."""
        self.add_class("open")
        self.input.disabled = False
        self.input.value = line
        self.input.cursor_position = len(line)
        self.say("")
        self.input.focus()

    def close(self) -> None:
        self.remove_class("open")
        self.input.disabled = True

    def say(self, text: str, error: bool = False) -> None:
        """One plain line under the input (never markup)."""
        msg = self.query_one("#filter-message", Static)
        msg.set_class(error, "error")
        msg.update(Text(text))

    @on(Input.Submitted, "#filter-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            f = parse(event.value)
        except FilterError as exc:
            self.say(str(exc), error=True)
            return
        self.close()
        self.post_message(self.Applied(f, event.value))

    def action_close(self) -> None:
        self.close()
        self.post_message(self.Closed())
