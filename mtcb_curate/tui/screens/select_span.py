"""Pick a span of the source document with the keyboard, to make it the supporting passage.

The screen is see-through: the document stays in view with the span highlighted, and only a
short hint is drawn. It starts from the mouse selection when there is one, else from the
located span, else from the top of the visible text.

Keys fit long documents: the arrows move the end (or, with shift, the start) by a word or a
line; ``w``/``s``/``l``/``p``/``r`` extend the end by a word, sentence, line, paragraph or table
row and ``W``/``S``/``L``/``P``/``R`` shrink it by one (boundaries from ``verify.spans``);
``/`` starts the span at a typed string: the input finds, as it is typed, the next occurrence
from the current span's start (smart case, wrapping), ``enter`` moves the start there (the end
too when it would fall before it), ``esc`` closes the input.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from mtcb_curate.verify import spans
from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span

#: The unit keys: lower case extends the span's end by one unit, upper case shrinks it.
UNIT_KEYS = (("w", "word"), ("s", "sentence"), ("l", "line"), ("p", "paragraph"), ("r", "row"))

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

    AUTO_FOCUS = None  # the keys go to the screen; only "/" focuses its input

    BINDINGS = [
        Binding("right", "end(1)", "end →", show=False),
        Binding("left", "end(-1)", "end ←", show=False),
        Binding("shift+right", "start(1)", "start →", show=False),
        Binding("shift+left", "start(-1)", "start ←", show=False),
        Binding("down", "end_line(1)", "end ↓", show=False),
        Binding("up", "end_line(-1)", "end ↑", show=False),
        Binding("shift+down", "start_line(1)", "start ↓", show=False),
        Binding("shift+up", "start_line(-1)", "start ↑", show=False),
        *(Binding(k, f"extend('{unit}')", f"end + {unit}", show=False) for k, unit in UNIT_KEYS),
        *(Binding(k.upper(), f"shrink('{unit}')", f"end - {unit}", show=False) for k, unit in UNIT_KEYS),
        Binding("slash", "find", "start at text", show=False),
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
        #: While the ``/`` input is open: where its search starts, and the occurrence found.
        self._find_from = self.start
        self.found: int | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="start the span at… (enter: set the start, esc: close)", id="select-find")
        yield Static(id="select-hint")

    def on_mount(self) -> None:
        box = self.query_one("#select-find", Input)
        box.display, box.disabled = False, True  # not focusable until "/" opens it
        self.set_focus(None)
        self._show()

    def _show(self, at: int | None = None) -> None:
        """Highlight the span (and a found occurrence) and scroll to ``at`` (default: the end)."""
        shown = [Span(self.start, self.end, "selection")]
        if self.found is not None:
            q = self.query_one("#select-find", Input).value
            shown.append(Span(self.found, self.found + len(q), "closest"))
        self.viewer.set_spans(shown)
        if at is None:
            at = self.end if self.end > self.start else self.start
        self.viewer.scroll_to_offset(at, center=False)
        # What ends the screen comes first, so that it shows whatever the width (the hint
        # takes at most three rows: at 80 columns the whole list of moves does not fit).
        hint = Text()
        hint.append(" Select the passage ", style="bold reverse")
        hint.append(f" {self.start:,}–{self.end:,} ({self.end - self.start:,} characters) ")
        hint.append(" enter", style="bold")
        hint.append(" use  ")
        hint.append("esc", style="bold")
        hint.append(" cancel\n")
        hint.append("←/→ ↑/↓ end by word/line · shift+ the same for the start · w s l p r end + "
                    "word/sentence/line/paragraph/row, W S L P R end − one · / start at text", style="dim")
        self.query_one("#select-hint", Static).update(hint)

    def action_extend(self, unit: str) -> None:
        """Move the end of the span forward by one ``unit`` (word, sentence, line, paragraph, row)."""
        self.end = spans.extend_end(self.text, self.start, self.end, unit)
        self._show()

    def action_shrink(self, unit: str) -> None:
        """Move the end of the span back by one ``unit``; never empties the span."""
        self.end = spans.shrink_end(self.text, self.start, self.end, unit)
        self._show()

    # -- "/": start the span at a typed string ---------------------------------------------------

    def action_find(self) -> None:
        """Open the input that starts the span at a typed string."""
        box = self.query_one("#select-find", Input)
        self._find_from = self.start + (1 if self.end > self.start else 0)
        self.found = None
        box.value = ""
        box.display, box.disabled = True, False
        box.focus()

    @on(Input.Changed, "#select-find")
    def _find_changed(self, event: Input.Changed) -> None:
        self.found = spans.find_next(self.text, event.value, self._find_from)
        self._show(at=self.found)
        if event.value and self.found is None:
            self.query_one("#select-hint", Static).update(Text(f" not in the document: {event.value}",
                                                                style="bold"))

    @on(Input.Submitted, "#select-find")
    def _find_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        found = spans.find_next(self.text, event.value, self._find_from)
        self._close_find()
        if found is None:
            self.notify("Not in the document: the span is unchanged.", severity="warning", timeout=3)
            self._show()
            return
        self.start = found
        if self.end < found + len(event.value):
            self.end = found + len(event.value)
        self._show(at=found)

    def _close_find(self) -> None:
        box = self.query_one("#select-find", Input)
        box.display, box.disabled = False, True
        self.found = None
        self.set_focus(None)

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
        if self.query_one("#select-find", Input).display:
            return  # the input's enter is handled above
        self.viewer.set_spans(self._saved)
        self.dismiss((self.start, self.end) if self.end > self.start else None)

    def action_cancel(self) -> None:
        """Leave the passage as it is (with the ``/`` input open: close it, the span stays)."""
        if self.query_one("#select-find", Input).display:
            self._close_find()
            self._show()
            return
        self.viewer.set_spans(self._saved)
        self.dismiss(None)
