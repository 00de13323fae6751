"""Pick a span of the source document with the keyboard, to make it the supporting passage.

The screen is see-through: the document stays in view with the span highlighted, and only a
one-line hint is drawn. It starts from the mouse selection when there is one, else from the
located span, else from the top of the visible text.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span

def word_end_after(text: str, pos: int) -> int:
    """The end of the next word after ``pos`` (words are runs of non-space characters)."""
    n, i = len(text), pos
    while i < n and text[i].isspace():
        i += 1
    while i < n and not text[i].isspace():
        i += 1
    return i


def word_end_before(text: str, pos: int) -> int:
    """The end of the word before the one ending at (or containing) ``pos``."""
    i = pos
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if i == pos:
        while i > 0 and not text[i - 1].isspace():
            i -= 1
        while i > 0 and text[i - 1].isspace():
            i -= 1
    return i


def word_start_after(text: str, pos: int) -> int:
    """The start of the word after the one at ``pos``."""
    n, i = len(text), pos
    while i < n and not text[i].isspace():
        i += 1
    while i < n and text[i].isspace():
        i += 1
    return i


def word_start_before(text: str, pos: int) -> int:
    """The start of the word before ``pos`` (or of the word ``pos`` is inside)."""
    i = pos
    while i > 0 and text[i - 1].isspace():
        i -= 1
    while i > 0 and not text[i - 1].isspace():
        i -= 1
    return i


class SelectSpanScreen(ModalScreen[tuple[int, int] | None]):
    """Adjust ``[start, end)`` over the viewer's document; dismisses with the span or None."""

    BINDINGS = [
        Binding("right", "end(1)", "end →", show=False),
        Binding("left", "end(-1)", "end ←", show=False),
        Binding("shift+right", "start(1)", "start →", show=False),
        Binding("shift+left", "start(-1)", "start ←", show=False),
        Binding("down", "end_line(1)", "end ↓", show=False),
        Binding("up", "end_line(-1)", "end ↑", show=False),
        Binding("shift+down", "start_line(1)", "start ↓", show=False),
        Binding("shift+up", "start_line(-1)", "start ↑", show=False),
        Binding("enter", "accept", "use as passage"),
        Binding("escape", "cancel", "cancel"),
    ]

    def __init__(self, viewer: SourceViewer, start: int, end: int) -> None:
        super().__init__()
        self.viewer = viewer
        self.text = viewer.text
        self._saved = viewer.spans
        n = len(self.text)
        self.start = max(0, min(start, n))
        self.end = max(self.start, min(end, n))

    def compose(self) -> ComposeResult:
        yield Static(id="select-hint")

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        self.viewer.set_spans([Span(self.start, self.end, "selection")])
        self.viewer.scroll_to_offset(self.end if self.end > self.start else self.start, center=False)
        hint = Text()
        hint.append(" Select the passage ", style="bold reverse")
        hint.append(f"  characters {self.start:,}–{self.end:,} ({self.end - self.start:,})   ")
        hint.append("←/→ end by word · shift+←/→ start by word · ↑/↓ end by line · shift+↑/↓ start by line · "
                    "enter use · esc cancel", style="dim")
        self.query_one("#select-hint", Static).update(hint)

    def action_end(self, direction: int) -> None:
        """Move the end of the span to the next/previous word end."""
        pos = word_end_after(self.text, self.end) if direction > 0 else word_end_before(self.text, self.end)
        self.end = max(self.start, pos)
        self._show()

    def action_start(self, direction: int) -> None:
        """Move the start of the span to the next/previous word start."""
        pos = word_start_after(self.text, self.start) if direction > 0 else word_start_before(self.text, self.start)
        self.start = min(pos, self.end)
        self._show()

    def _line_step(self, pos: int, direction: int) -> int:
        if direction > 0:
            i = self.text.find("\n", pos + 1)
            return len(self.text) if i < 0 else i
        i = self.text.rfind("\n", 0, max(0, pos - 1))
        return 0 if i < 0 else i + 1

    def action_end_line(self, direction: int) -> None:
        """Move the end of the span to the next/previous line end."""
        self.end = max(self.start, self._line_step(self.end, direction))
        self._show()

    def action_start_line(self, direction: int) -> None:
        """Move the start of the span to the next/previous line start."""
        self.start = min(self.end, self._line_step(self.start, direction))
        self._show()

    def action_accept(self) -> None:
        """Use the span as the pair's supporting passage."""
        self.viewer.set_spans(self._saved)
        self.dismiss((self.start, self.end) if self.end > self.start else None)

    def action_cancel(self) -> None:
        """Leave the passage as it is."""
        self.viewer.set_spans(self._saved)
        self.dismiss(None)
