"""A one-row bar (the review screen's source bar, titles and progress line), drawn with the Line API.

A ``Static`` turns every update into a Textual visual and measures it again, on every
decision for the titles and the progress line. A ``Bar`` keeps the ``rich.text.Text`` it was
given and renders its one row once per update (or width or style change), cut at the width
with an ellipsis instead of wrapping to a hidden second row (README, Performance). A bar made
with ``max_rows`` above 1 (the source bar, whose "why this source" must be readable) wraps its
text at word boundaries onto as many rows as it needs, up to that many, and sets its own height.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from mtcb_curate.tui.widgets.scrolling import KeepsPaintedLines, SkipsHiddenRepaint


class Bar(KeepsPaintedLines, SkipsHiddenRepaint, Widget):
    """One row of plain ``Text`` (``update(text)``); ``content`` is the text last given.

    Its height must be fixed by the stylesheet (1): ``update`` asks for no layout pass. A bar
    whose text did not change hands Textual its last painted line (``KeepsPaintedLines``).
    A ``str`` is shown literally; text from the data must come in as ``Text`` built with
    ``plaintext.printable`` (control characters shown, never markup).
    """

    DEFAULT_CSS = "Bar { height: 1; }"

    def __init__(self, content: Text | str = "", *, id: str | None = None, classes: str | None = None,
                 max_rows: int = 1) -> None:
        super().__init__(id=id, classes=classes)
        self.max_rows = max(1, max_rows)
        #: The wrapped rows of a multi-row bar, and the (width, text) they were wrapped for.
        self._rows: list[Text] = []
        self._rows_for: tuple[int, Text] | None = None
        self._content: Text | str = content
        self._text = content if isinstance(content, Text) else Text(content)
        self._row: Strip | None = None
        self._row_for: tuple[int, Style] | None = None
        self._base: Style | None = None  # rich_style (an ancestor walk), until restyled

    @property
    def content(self) -> Text | str:
        """What was last given to ``update`` (or the constructor)."""
        return self._content

    def update(self, content: Text | str = "", *, layout: bool = False) -> None:
        """Show ``content`` (a ``Text``, or a ``str`` shown literally); repaints one row."""
        text = content if isinstance(content, Text) else Text(content)
        self._content = content
        if text == self._text and self._row is not None:
            return
        self._text = text
        self._row = None
        if self.max_rows > 1:
            layout = self._fit_height() or layout
        self.refresh(layout=layout)

    def _wrapped(self, width: int) -> list[Text]:
        """The text in rows of ``width`` cells, at most ``max_rows`` (the last cut with "…")."""
        if self._rows_for != (width, self._text):
            rows = list(self._text.wrap(self.app.console, width, overflow="fold")) if width > 0 else [self._text]
            if len(rows) > self.max_rows:
                rest = Text(" ").join(rows[self.max_rows - 1:])
                rows = rows[:self.max_rows - 1] + [_cut(rest, width)]
            self._rows = [row for row in rows] or [Text()]
            self._rows_for = (width, self._text)
        return self._rows

    def _fit_height(self) -> bool:
        """A multi-row bar: set the height to the rows its text needs at its width (True when
        it changed: a layout pass is due)."""
        width = self.content_region.width if self.is_mounted else 0
        if not width:
            return False
        rows = len(self._wrapped(width))
        if self.styles.height is not None and self.styles.height.cells == rows:
            return False
        self.styles.height = rows
        return True

    def on_resize(self) -> None:
        if self.max_rows > 1 and self._fit_height():
            self.refresh(layout=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._row = None
        self._base = None

    def render_line(self, y: int) -> Strip:
        """The text on row 0, cut to the content width with "…" when longer; blank below."""
        width = self.content_region.width
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        if self.max_rows > 1:
            rows = self._wrapped(width)
            if y >= len(rows):
                return Strip.blank(width, base)
            segments = [s for s in rows[y].render(self.app.console) if s.text != "\n"]
            return Strip(Segment.apply_style(segments, base)).adjust_cell_length(width, base)
        if y > 0:
            return Strip.blank(width, base)
        if self._row is None or self._row_for != (width, base):
            text = _cut(self._text, width)
            console = self.app.console
            segments = [s for s in text.render(console) if s.text != "\n"]
            self._row = Strip(Segment.apply_style(segments, base)).adjust_cell_length(width, base)
            self._row_for = (width, base)
        return self._row


#: A bar cut within this many cells of its end breaks after the last word that fits.
_WORD_CUT_CELLS = 16


def _cut(text: Text, width: int) -> Text:
    """``text`` fitting ``width`` cells: whole when it fits; cut at a space that falls on the
    edge; else after the last whole word (within ``_WORD_CUT_CELLS``), or at the edge, with "…"."""
    plain = text.plain
    if cell_len(plain) <= width:
        return text
    if width <= 1:
        return Text("…"[:width])
    out = text.copy()
    if len(plain) == cell_len(plain):  # one cell per character: cut on characters
        if plain[width].isspace():  # a word ends on the edge: cut there, as word wrap did
            out.truncate(width)
            _drop_dangling(out)
            return out
        space = plain.rfind(" ", 0, width - 1)
        cut = space if space >= width - 1 - _WORD_CUT_CELLS and space > 0 else width - 1
        out.truncate(cut)
        _drop_dangling(out)
    else:
        out.truncate(width - 1)
    out.append("…")
    return out


def _drop_dangling(text: Text) -> None:
    """Drop trailing spaces and separators (" ·", " —") from a cut ``text``, in place."""
    dangling = len(text.plain) - len(text.plain.rstrip(" ·—"))
    if dangling:  # (right_crop(0) would empty the text)
        text.right_crop(dangling)
