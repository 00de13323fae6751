"""Pick a span of the source document with the keyboard or the mouse, to make it the
supporting passage.

The screen is see-through: the document stays in view with the span highlighted, and only a
short hint is drawn. It starts from the mouse selection when there is one, else from the
located span, else from the top of the visible text.

Keys fit long documents: the arrows move the end (or, with shift, the start) by a word or a
line; ``w``/``s``/``l``/``p``/``r`` extend the end by a word, sentence, line, paragraph or table
row and ``W``/``S``/``L``/``P``/``R`` shrink it by one (boundaries from ``verify.spans``: a
table row is a label and its cells as a PDF extractor gives them, one cell a line; a key that
cannot move by its unit moves by a smaller one). ``/`` starts the span at a typed string and
``e`` ends it at one: the input finds, as it is typed, the first occurrence from the span's start on
(``verify.spans.find``: white space, NBSP and line breaks alike, any quote for a quote, any
dash for a dash, smart case, wrapping); ``enter`` moves the start there (``/``; the end too
when it would fall before it) or the end to the end of the occurrence (``e``); ``esc`` closes
the input. Where the terminal reports the mouse, a drag over the source selects the whole span
in one gesture (from where the button went down to where it is).
"""

from __future__ import annotations

from rich.text import Text
from textual import events, on
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
        Binding("slash", "find('start')", "start at text", show=False),
        Binding("e", "find('end')", "end at text", show=False),
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
        #: While the ``/`` or ``e`` input is open: which end it moves (``start``/``end``), where
        #: its search starts, and the occurrence found (start, end offsets).
        self._find_for = "start"
        self._find_from = self.start
        self.found: tuple[int, int] | None = None
        #: A mouse drag in progress: the offset where the button went down.
        self._drag_anchor: int | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder=self._placeholder("start"), id="select-find")
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
            shown.append(Span(*self.found, "closest"))
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
                    "word/sentence/line/paragraph/row, W S L P R end − one · / e start/end at text · "
                    "drag the mouse", style="dim")
        self.query_one("#select-hint", Static).update(hint)

    def action_extend(self, unit: str) -> None:
        """Move the end of the span forward by one ``unit`` (word, sentence, line, paragraph, row)."""
        self.end = spans.extend_end(self.text, self.start, self.end, unit)
        self._show()

    def action_shrink(self, unit: str) -> None:
        """Move the end of the span back by one ``unit``; never empties the span."""
        self.end = spans.shrink_end(self.text, self.start, self.end, unit)
        self._show()

    # -- "/" and "e": start or end the span at a typed string ----------------------------------------

    @staticmethod
    def _placeholder(which: str) -> str:
        return (f"{which} the span at… (spaces, quotes and dashes of any kind match; enter: set the {which}, "
                "esc: close)")

    def action_find(self, which: str = "start") -> None:
        """Open the input that starts (``which="start"``) or ends (``"end"``) the span at a typed
        string."""
        box = self.query_one("#select-find", Input)
        self._find_for = which
        self._find_from = self.start  # the first occurrence from the span's start on: it may start there
        self.found = None
        box.value = ""
        box.placeholder = self._placeholder(which)
        box.display, box.disabled = True, False
        box.focus()

    def _search(self, query: str) -> tuple[int, int] | None:
        return spans.find(self.text, query, self._find_from)

    @on(Input.Changed, "#select-find")
    def _find_changed(self, event: Input.Changed) -> None:
        self.found = self._search(event.value)
        self._show(at=None if self.found is None else self.found[0])
        if event.value.strip() and self.found is None:
            self.query_one("#select-hint", Static).update(Text(f" not in the document: {event.value}",
                                                                style="bold"))

    @on(Input.Submitted, "#select-find")
    def _find_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        found = self._search(event.value)
        self._close_find()
        if found is None:
            self.notify("Not in the document: the span is unchanged.", severity="warning", timeout=3)
            self._show()
            return
        a, b = found
        if self._find_for == "end":
            if b <= self.start:  # wrapped before the start: the occurrence begins the span too
                self.start = a
            self.end = b
            self._show()
            return
        self.start = a
        if self.end < b:
            self.end = b
        self._show(at=a)

    def _close_find(self) -> None:
        box = self.query_one("#select-find", Input)
        box.display, box.disabled = False, True
        self.found = None
        self.set_focus(None)

    # -- the mouse: a drag selects the span ---------------------------------------------------------

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A button pressed over the source: the span starts (and ends) there."""
        if self.query_one("#select-find", Input).display or event.button not in (0, 1):
            return
        at = self.viewer.offset_at(event.screen_x, event.screen_y)
        if at is None:
            return
        self._drag_anchor = at
        self.capture_mouse()
        event.stop()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """While the button is down: the span runs from where it went down to here."""
        if self._drag_anchor is None:
            return
        self._drag_to(event.screen_x, event.screen_y)
        event.stop()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        """The button released: the drag's span is the span (a click alone changes nothing)."""
        if self._drag_anchor is None:
            return
        self._drag_to(event.screen_x, event.screen_y)
        self._drag_anchor = None
        self.release_mouse()
        event.stop()

    def _drag_to(self, x: int, y: int) -> None:
        at = self.viewer.offset_at(x, y, clamp=True)
        if at is None or at == self._drag_anchor:
            return
        self.start, self.end = min(self._drag_anchor, at), max(self._drag_anchor, at)
        self._show(at=at)

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
