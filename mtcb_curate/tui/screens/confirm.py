"""A one-line confirmation at the bottom of the screen: ``a``/``enter``/``y`` yes, ``esc``/``n`` no.

Used before accepting a pair whose checks fail (``[review] confirm_failing_accept``). The prompt
is plain text (it names check ids and may quote dataset text), never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``prompt`` on one line; dismisses with True (a, enter, y) or False (escape, n)."""

    BINDINGS = [
        Binding("a,enter,y", "answer(True)", "yes"),
        Binding("escape,n", "answer(False)", "no"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center bottom; background: $background 30%; }
    ConfirmScreen > #confirm-line { dock: bottom; height: 1; width: 100%; background: $warning 40%;
                                    color: $text; text-style: bold; }
    """

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {self.prompt}"), id="confirm-line")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
