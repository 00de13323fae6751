"""A one-line confirmation at the bottom of the screen: ``a``/``enter``/``y`` yes, ``esc``/``n`` no.

Used before accepting a pair whose checks fail (``[review] confirm_failing_accept``). The prompt
is plain text (it names check ids and may quote dataset text), never markup.

Keys typed before the question was on screen (a held ``a``, keys typed ahead of the frames) are
dropped, not taken as the answer: a question that guards a decision is answered only by a key
pressed after it could be read.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
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
        #: When the question was first painted (Textual's event clock, ``Message.time``);
        #: None until then. Keys from before it are dropped (``on_key``).
        self.shown_at: float | None = None
        #: Keys dropped so far for having been typed before the question was shown.
        self.dropped = 0

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {self.prompt}"), id="confirm-line")

    def on_mount(self) -> None:
        self.call_after_refresh(self._shown)

    def _shown(self) -> None:
        self.shown_at = Message().time  # now, on the clock Textual stamps each event's ``time`` with

    def on_key(self, event: events.Key) -> None:
        """Drop a key typed before the question was shown: it stops here, before any binding."""
        if self.shown_at is None or event.time < self.shown_at:
            self.dropped += 1
            event.stop()
            event.prevent_default()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
