"""Source document viewer: a read-only, soft-wrapping Line API widget with highlighted spans.

`SourceViewer` shows one source document (a 10-K filing, a web page dump, ...) beside the QA pair
under review and highlights character ranges of it (`Span`): the located supporting passage
("exact"), the closest fuzzy match ("closest"), the retrieval window ("window") and the curator's
own pick ("selection").

Design (in the manner of Textual's `Log` widget and Toolong):

* It is a `ScrollView` that implements `render_line(y) -> Strip`; Textual asks only for the rows
  on screen, so a 1 MB document costs what one screen costs to draw.
* A document's lines are indexed once (`LineIndex`: the offset at which each line starts, an
  8-byte integer array, built a megabyte at a time; no list of line strings is kept) and the
  index is cached for the last few documents shown, so showing a document again (coming back
  to it, re-centring) costs no pass over it. A 50 MB filing indexes in well under a second.
* The document is soft-wrapped once per content width into *visual rows*: a sorted array of the
  character offset at which each row starts (rows are contiguous, so a row's `(start, end)` is
  implied: see `SourceViewer.row_span`). A character offset maps to its row with `bisect`.
  Wraps are cached per width (in the document's `LineIndex`), so toggling the gutter or
  resizing back and forth is free.
* Text is untrusted. It is never parsed as markup or ANSI: rows are built from
  `rich.segment.Segment`s with `rich.style.Style` objects, and each drawn piece of text is first
  passed through `mtcb_curate.plaintext.printable` (one character for one character, so offsets
  still hold; applied per row, so the viewer never copies the document). Each strip is
  cropped/padded to the widget width in terminal cells, so wide (CJK) characters cannot push
  the layout out of shape.

Units: offsets, `Span.start` / `Span.end` and `document_length` are in *characters* of the
document string (Python `str` indices); rows are *visual rows* after wrapping (0 = first row of
the document); widths are terminal *cells*.
"""

from __future__ import annotations

import functools
import re
from array import array
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import Callable, ClassVar, Sequence

import numpy as np

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.selection import Selection
from textual.strip import Strip

from mtcb_curate.plaintext import printable
from mtcb_curate.tui.widgets.scrolling import BareScrollView, bare_box, paint_rows, prefilter
from mtcb_curate.tui.workarounds.text import cell_width_ranges

__all__ = ["LineIndex", "Span", "SPAN_KINDS", "SourceViewer", "wrap_rows"]


#: Sets of highlights remembered for the row cache before it starts afresh.
_SPAN_KEYS = 64
#: Painted rows kept: the pair on screen, the one before and the one warmed ahead, on a tall
#: terminal. Every kept row is some twenty objects the cyclic garbage collector walks (a
#: ``Strip`` and its caches): 1,024 made each full collection several times longer
#: (``tui/memory.py``).
_LINE_CACHE_ROWS = 320


class _RowCache(OrderedDict):
    """Painted rows by key; past ``size`` the least recently used go. An ``OrderedDict``
    rather than Textual's ``LRUCache``: that one links its entries in a ring of lists, which
    ``clear()`` leaves whole, every row in it, for the cyclic garbage collector (each pair
    change clears this cache; ``tui/memory.py``). Here a dropped row is freed at once."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def get(self, key, default=None):  # type: ignore[override]
        """The row for ``key`` (now the most recently used), or ``default``."""
        row = super().get(key, default)
        if row is not default:
            self.move_to_end(key)
        return row

    def __setitem__(self, key, row) -> None:
        super().__setitem__(key, row)
        self.move_to_end(key)
        if len(self) > self.size:
            self.popitem(last=False)


@dataclass(frozen=True, slots=True)
class Span:
    """A highlighted range of the document.

    Attributes:
        start: first character offset (inclusive) into the text given to `SourceViewer.show`.
        end: character offset one past the last highlighted character (exclusive).
        kind: "exact", "normalized", "closest" (a fuzzy match), "window", "selection",
            "match" (the queue filter's text query), "chunk"/"chunk-alt" (alternate tints of a
            chunker's chunks) or "boundary" (a chunk's first character; its ``label`` is drawn
            in the gutter); anything else is drawn as "exact".
    """

    start: int
    end: int
    kind: str = "exact"
    #: A "boundary" span's mark for the gutter of the row it starts on (a chunk number, "#117").
    label: str = ""


SPAN_KINDS: tuple[str, ...] = ("chunk", "chunk-alt", "window", "closest", "normalized", "exact", "boundary",
                               "selection", "match")
"""Known span kinds in paint order: where spans overlap, a later kind is drawn over earlier ones."""

_KIND_RANK = {kind: rank for rank, kind in enumerate(SPAN_KINDS)}
_KIND_CLASS = {kind: f"source-viewer--{kind}" for kind in SPAN_KINDS}

EMPTY_DOCUMENT_MESSAGE = "(empty document)"
"""Placeholder shown (dim) for an empty document."""

_FALLBACK_WIDTH = 80
"""Content width (cells) used to wrap a document before the widget has been laid out."""

_THUMB_CELLS = 1
"""Cells of the viewer's own scroll thumb column (``SourceViewer._thumb``)."""

_WRAP_CACHE_SIZE = 4
"""How many widths' wraps are kept per document."""

_INDEX_CACHE_SIZE = 3
"""How many documents' line indexes (with their wraps) the viewer keeps."""

_INDEX_CACHE_MIN_CHARS = 100_000
"""Documents shorter than this are indexed again when shown again (it costs under 10 ms)."""

_PIECE_CHARS = 1 << 20
"""Characters indexed per step by `LineIndex` (each step's temporary line list is small)."""


def _build_non_single_cell_pattern() -> re.Pattern[str]:
    """A regex matching any character that may not be exactly one terminal cell wide.

    Built from Rich's cell-width table (ranges of 0- and 2-cell characters), so that a line with
    no match can be wrapped by counting characters. Only the Basic Multilingual Plane is listed
    range by range (that keeps the class a bitmap, about 5 ms per MB to scan); every astral
    character counts as "maybe not one cell", as does everything outside printable Latin if
    Rich's table is unavailable (``tui/workarounds/text.py``). Over-matching is safe: it only sends a line to the
    exact, slower wrap path.
    """
    widths = cell_width_ranges()
    if widths is None:
        return re.compile("[^\n\x20-\x7e\xa0-\u02ff]")
    ranges = [(start, min(end, 0xFFFF)) for start, end, _width in widths if start <= 0xFFFF]
    ranges += [(0x00, 0x09), (0x0B, 0x1F), (0x7F, 0x9F), (0xD800, 0xDFFF), (0x10000, 0x10FFFF)]
    parts = []
    for start, end in sorted(ranges):
        if start == end:
            parts.append(re.escape(chr(start)))
        else:
            parts.append(f"{re.escape(chr(start))}-{re.escape(chr(end))}")
    return re.compile("[" + "".join(parts) + "]")


_NON_SINGLE_CELL = _build_non_single_cell_pattern()


class _CellWidths(dict):
    """Character -> cell width (0, 1 or 2), filled on demand; `__getitem__` stays a C call."""

    def __missing__(self, character: str) -> int:
        width = self[character] = get_character_cell_size(character)
        return width


_CELL_WIDTHS = _CellWidths()


def wrap_rows(
    lines: Sequence[str],
    line_starts: list[int],
    width: int,
    wide_lines: Sequence[bool] | None = None,
) -> list[int]:
    """Soft-wrap source lines into visual rows no wider than `width` cells.

    A line longer than the width is broken after the last space that still fits (a space exactly
    at the width ends the row and is cropped when drawn), otherwise hard-broken at the width.
    Rows are contiguous: a row ends where the next row of the same line starts, or at its line's
    end (just before the "\\n"), so only row starts need storing (see `SourceViewer.row_span`);
    every character offset belongs to exactly one row, the "\\n" to the last row of its line.

    Args:
        lines: the source lines (the text split on "\\n"), without their newlines.
        line_starts: character offset of each line in the text; same length as `lines`.
        width: content width in terminal cells (clamped to at least 1).
        wide_lines: per line, True if it may hold a character that is not exactly one cell wide
            (CJK, combining marks, ...); None means no line does. Lines flagged False are
            wrapped by counting characters, which is what makes a 1 MB document wrap in a few
            milliseconds.

    Returns:
        The character offset at which each visual row starts, ascending; one entry per row
        (an empty line is one empty row). When nothing needs wrapping this is `line_starts`
        itself (not a copy); treat it as read-only.
    """
    width = max(1, width)
    half = width // 2
    lengths = list(map(len, lines))
    # Lines that may need breaking: longer than the width, or (if they may hold wide
    # characters) longer than half of it. Found with C-level iteration only.
    candidates = list(
        compress(range(len(lines)), map((width if wide_lines is None else half).__lt__, lengths))
    )
    if not candidates:
        return line_starts  # fast path: nothing to wrap, one row per line

    row_starts: list[int] = []
    add_row = row_starts.append
    extend = row_starts.extend
    copied = 0  # line_starts[:copied] are already in row_starts
    for index in candidates:
        length = lengths[index]
        wide = wide_lines is not None and wide_lines[index]
        if not wide and length <= width:
            continue
        extend(line_starts[copied : index + 1])  # unwrapped lines before, and this line's start
        copied = index + 1
        _line_breaks(lines[index], line_starts[index], width, wide, add_row)
    extend(line_starts[copied:])
    return row_starts


def _line_breaks(line: str, base: int, width: int, wide: bool, add_row: Callable[[int], None]) -> None:
    """Call `add_row(offset)` for each continuation row of one source line (see `wrap_rows`).

    `line` is the raw source line (no newline) starting at offset `base`; `wide`: it may hold
    characters that are not one cell wide, so cells are counted on its printable form (a
    control character is drawn as a one-cell stand-in).
    """
    if wide:
        line = printable(line)  # same length; a tab is drawn (and breaks) as a space
    length = len(line)
    rfind = line.rfind
    pos = 0
    if not wide:
        while length - pos > width:
            limit = pos + width
            space = rfind(" ", pos + 1, limit + 1)
            pos = space + 1 if space > pos else limit
            if pos < length:
                add_row(base + pos)
        return
    # prefix[k] = cells of line[:k]; non-decreasing, so bisect finds the fitting length.
    prefix = list(accumulate(map(_CELL_WIDTHS.__getitem__, line), initial=0))
    total = prefix[length]
    while total - prefix[pos] > width:
        limit = bisect_right(prefix, prefix[pos] + width, pos) - 1
        if limit <= pos:  # a single character wider than the row: it gets a row alone
            pos += 1
        else:
            space = rfind(" ", pos + 1, limit + 1)
            pos = space + 1 if space > pos else limit
        if pos < length:
            add_row(base + pos)


class LineIndex:
    """Where the lines of one document start, computed once; its wraps, cached per width.

    Built `_PIECE_CHARS` characters at a time with numpy (the newlines of each piece's code
    points; the wide-character test), so no list of line strings, and no copy of the document
    bigger than a piece, is ever made: 8 bytes per line and 8 per wrapped row are kept (a 50 MB
    filing of a million lines: about 20 MB). About 0.3 s for 50 MB, 0.3 s more per wrap width.

    Attributes:
        text: the document (not copied).
        starts: character offset at which each line starts (`array('q')`, ascending; a final
            newline ends the last line and starts none; an empty text has one empty line).
        wide: per line, 1 when it may hold a character that is not exactly one cell wide (or a
            control character, drawn as a one-cell stand-in); None when no line does.
        digits: digits of the last line number (the gutter's width is `digits + 2`).
    """

    __slots__ = ("text", "starts", "wide", "digits", "_wraps")

    def __init__(self, text: str) -> None:
        self.text = text
        found = [np.zeros(1, dtype=np.int64)]  # line starts, a piece at a time
        wide_lines: list[np.ndarray] = []
        n = len(text)
        for a in range(0, n, _PIECE_CHARS):
            piece = text[a:a + _PIECE_CHARS]
            if piece.isascii():
                codes = np.frombuffer(piece.encode("ascii"), dtype=np.uint8).astype(np.uint32)
            else:  # one 4-byte code per character, so positions are character offsets
                codes = np.frombuffer(piece.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            found.append(np.flatnonzero(codes == 10) + (a + 1))
            # Characters outside printable Latin (U+0020-U+007E, U+00A0-U+02FF), then the
            # table for those few: every other character of a filing is one cell.
            odd = np.flatnonzero((codes < 0x20) | ((codes >= 0x7F) & (codes < 0xA0)) | (codes >= 0x300))
            if odd.size:
                odd_codes = codes[odd]
                odd = odd[_wide_table()[np.minimum(odd_codes, 0xFFFF)] | (odd_codes > 0xFFFF)]
                wide_lines.append(odd + a)
        starts_np = np.concatenate(found)
        if len(starts_np) > 1 and starts_np[-1] == n:
            starts_np = starts_np[:-1]  # a final newline ends the last line; it starts none
        starts = array("q")
        starts.frombytes(starts_np.tobytes())
        wide: bytearray | None = None
        if wide_lines:
            positions = np.concatenate(wide_lines)
            if positions.size:
                flags = np.zeros(len(starts_np), dtype=np.uint8)
                flags[np.searchsorted(starts_np, positions, side="right") - 1] = 1
                wide = bytearray(flags.tobytes())
        self.starts = starts
        self.wide = wide
        self.digits = len(str(len(starts)))
        self._wraps: dict[int, array] = {}

    def wrap(self, width: int) -> array:
        """Visual row starts at `width` cells (as `wrap_rows`; cached for `_WRAP_CACHE_SIZE`
        widths). Read-only: it may be `starts` itself."""
        rows = self._wraps.get(width)
        if rows is None:
            rows = self._wrap(max(1, width))
            if len(self._wraps) >= _WRAP_CACHE_SIZE:
                self._wraps.pop(next(iter(self._wraps)))
            self._wraps[width] = rows
        return rows

    def _wrap(self, width: int) -> array:
        text = self.text
        starts = np.frombuffer(self.starts, dtype=np.int64)
        ends = np.empty_like(starts)
        ends[:-1] = starts[1:] - 1
        ends[-1] = len(text) - text.endswith("\n")
        lengths = ends - starts
        may_break = lengths > width
        if self.wide is not None:
            wide = np.frombuffer(self.wide, dtype=np.uint8).astype(bool)
            may_break |= wide & (lengths > width // 2)
        else:
            wide = None
        breaks: list[int] = []
        add_row = breaks.append
        for index in np.flatnonzero(may_break).tolist():
            s, e = int(starts[index]), int(ends[index])
            _line_breaks(text[s:e], s, width, wide is not None and bool(wide[index]), add_row)
        if not breaks:
            return self.starts
        extra = np.array(breaks, dtype=np.int64)
        rows = np.insert(starts, np.searchsorted(starts, extra, side="right"), extra)
        out = array("q")
        out.frombytes(rows.tobytes())
        return out


@functools.cache
def _wide_table() -> np.ndarray:
    """`_NON_SINGLE_CELL` as a lookup table over the Basic Multilingual Plane: entry `c` is True
    when `chr(c)` may not be exactly one cell wide (every astral character may not be either)."""
    table = np.zeros(0x10000, dtype=bool)
    every = "".join(map(chr, range(0x10000)))
    table[[m.start() for m in _NON_SINGLE_CELL.finditer(every)]] = True
    return table


class SourceViewer(BareScrollView, can_focus=True):
    """Read-only viewer of one source document with highlighted character spans.

    Load a document with `show`, change highlights with `set_spans`, show a notice instead of a
    document with `show_message`. Scrolling keys come from `ScrollView`: up/down (one row),
    pageup/pagedown (one screen), home/end (start/end of the document).
    """

    ALLOW_SELECT = True

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "source-viewer--exact",
        "source-viewer--normalized",
        "source-viewer--closest",
        "source-viewer--window",
        "source-viewer--selection",
        "source-viewer--match",
        "source-viewer--chunk",
        "source-viewer--chunk-alt",
        "source-viewer--boundary",
        "source-viewer--gutter",
        "source-viewer--message",
        "source-viewer--thumb",
        "source-viewer--track",
    }
    """
    | Class | Description |
    | :- | :- |
    | `source-viewer--exact` | The located supporting passage. |
    | `source-viewer--normalized` | The span a passage matches after normalization (not verbatim). |
    | `source-viewer--closest` | The closest fuzzy match when no exact passage was found. |
    | `source-viewer--window` | A surrounding window (e.g. the retrieval chunk). |
    | `source-viewer--selection` | A range picked by the curator. |
    | `source-viewer--match` | A match of the queue filter's text query. |
    | `source-viewer--chunk`, `source-viewer--chunk-alt` | Alternate tints of a chunker's chunks. |
    | `source-viewer--boundary` | A chunk's first character, and its number in the gutter. |
    | `source-viewer--gutter` | The line-number gutter. |
    | `source-viewer--message` | The placeholder / message line. |
    | `source-viewer--thumb` | The scroll thumb (the visible share of the document). |
    | `source-viewer--track` | The rest of the thumb's column. |
    """

    DEFAULT_CSS = """
    SourceViewer {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 0;  /* the viewer draws its own one-cell thumb (_thumb) */
        &:focus {
            background-tint: $foreground 5%;
        }
        & > .source-viewer--exact {
            background: $success 55%;
            color: $text;
            text-style: bold;
        }
        & > .source-viewer--normalized {
            background: $secondary 55%;
            color: $text;
            text-style: underline;
        }
        & > .source-viewer--closest {
            background: $warning 45%;
            color: $text;
        }
        & > .source-viewer--window {
            background: $primary 15%;
        }
        & > .source-viewer--selection {
            background: $primary 70%;
            color: $text;
            text-style: underline;
        }
        & > .source-viewer--match {
            background: $accent 60%;
            color: $text;
            text-style: bold;
        }
        & > .source-viewer--chunk {
            background: $accent 10%;
        }
        & > .source-viewer--chunk-alt {
            background: $secondary 16%;
        }
        & > .source-viewer--boundary {
            background: $error 75%;
            color: $text;
            text-style: bold;
        }
        & > .source-viewer--gutter {
            color: $text-muted;
            background: $panel;
        }
        & > .source-viewer--thumb {
            background: $foreground 35%;
        }
        & > .source-viewer--track {
            background: $panel;
        }
        & > .source-viewer--message {
            color: $text-muted;
            text-style: dim italic;
        }
    }
    """

    show_line_numbers: reactive[bool] = reactive(True, init=False)
    """Show a gutter with the 1-based source line number on the first row of each source line."""

    def __init__(
        self,
        *,
        show_line_numbers: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        """Create an (empty) viewer; call `show` to load a document.

        Args:
            show_line_numbers: initial value of the `show_line_numbers` reactive.
            name: widget name.
            id: widget id.
            classes: space-separated CSS classes.
            disabled: whether the widget starts disabled.
        """
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.set_reactive(SourceViewer.show_line_numbers, show_line_numbers)
        self._text = ""
        self._display = ""  # the document itself: `printable` is applied per drawn row
        self._message: str | None = EMPTY_DOCUMENT_MESSAGE
        self._index = LineIndex("")
        self._indexes: OrderedDict[int, LineIndex] = OrderedDict()  # id(text) -> index, LRU
        self._line_starts: Sequence[int] = self._index.starts
        self._digits = 1
        self._wrap_width = 0
        self._row_starts: Sequence[int] = []
        self._spans: tuple[Span, ...] = ()
        self._span_starts: list[int] = []
        #: Gutter marks of "boundary" spans: (offset, label), by offset.
        self._marks: list[tuple[int, str]] = []
        self._mark_starts: list[int] = []
        #: A small number per set of highlights shown or warmed (the row cache's key).
        self._span_keys: dict[tuple[Span, ...], int] = {(): 0}
        self._spans_key = 0
        # Range (start, end offsets) kept in view across resizes while the user has not scrolled.
        self._follow: tuple[int, int] | None = None
        self._follow_y: int | None = None
        self._pending_follow = False
        #: Painted rows by (highlights, row, width, offsets, thumb): rows of other highlights
        #: of this document stay (``warm`` paints the next pair's rows ahead of time).
        self._line_cache: _RowCache = _RowCache(_LINE_CACHE_ROWS)
        #: True while Textual paints the viewer (``render_lines``): rows without offsets.
        self._painting = False
        #: The thumb's rows during a paint (``_thumb``), worked out once per paint.
        self._paint_thumb: tuple[int, int] | None = None
        #: The viewer's width and text selection during a paint, read once per paint.
        self._paint_state: tuple[int, Selection | None] | None = None
        #: Rich styles by component class (None: the viewer's own), resolved once per style
        #: update: every painted row asks for several.
        self._rich_styles: dict[str | None, Style] = {}

    # ------------------------------------------------------------------ public API

    @property
    def document_length(self) -> int:
        """Length of the current document in characters (0 for an empty document or a message)."""
        return len(self._display)

    @property
    def visual_line_count(self) -> int:
        """Number of visual rows of the current document at the current wrap width.

        0 when a message (including the empty-document placeholder) is shown.
        """
        return 0 if self._message is not None else len(self._row_starts)

    @property
    def text(self) -> str:
        """The current document as given to `show` (not made printable)."""
        return self._text

    @property
    def spans(self) -> tuple[Span, ...]:
        """Current highlights, clamped to the document and sorted by start offset."""
        return self._spans

    @property
    def wrap_width(self) -> int:
        """Cells the document is currently wrapped to (excludes the gutter and the scrollbar)."""
        return self._wrap_width

    def show(self, text: str, spans: Sequence[Span] = (), focus: Span | None = None) -> None:
        """Load a document, replacing the previous one (or a message), and highlight `spans`.

        Args:
            text: the document; shown literally (markup and escape sequences do nothing,
                control characters are shown as visible stand-ins such as "␛").
            spans: ranges to highlight, as character offsets into `text` (end exclusive);
                out-of-range offsets are clamped.
            focus: the range to bring into view, its first row vertically centred (or its first
                row at the top if it is taller than the viewport); defaults to `spans[0]`. With
                neither, the view goes to the top. Scrolling is immediate (no animation).
        """
        self._text = text
        self._display = text
        self._message = None if text else EMPTY_DOCUMENT_MESSAGE
        self._index = self._index_of(text)
        self._line_starts = self._index.starts
        self._digits = self._index.digits
        self._wrap_width = 0
        self._store_spans(spans)
        self._rewrap()
        if focus is None and self._spans:
            focus = spans[0]
        if focus is None:
            self._focus_range(0, 0, center=True)  # i.e. the top (centring clamps to row 0)
        else:
            self._focus_range(focus.start, focus.end, center=True)
        self.refresh()

    def prepare(self, text: str) -> None:
        """Index and wrap ``text`` at the viewer's width ahead of ``show(text)`` with the same
        string (the screen calls this for the next pair's document while idle): about 10 ms
        of a 550,000-character filing's first showing. Changes nothing on screen."""
        width = self._text_width()
        if not width or not text:
            return
        index = self._index_of(text)
        gutter = index.digits + 2 if self.show_line_numbers else 0
        index.wrap(max(1, width - gutter))

    def _index_of(self, text: str) -> LineIndex:
        """The `LineIndex` of `text`: cached for the last `_INDEX_CACHE_SIZE` documents of at
        least `_INDEX_CACHE_MIN_CHARS` characters (by identity: the same string object)."""
        key = id(text)
        index = self._indexes.get(key)
        if index is not None and index.text is text:
            self._indexes.move_to_end(key)
            return index
        index = LineIndex(text)
        if len(text) >= _INDEX_CACHE_MIN_CHARS:
            self._indexes[key] = index
            while len(self._indexes) > _INDEX_CACHE_SIZE:
                self._indexes.popitem(last=False)
        return index

    def set_spans(self, spans: Sequence[Span], focus: Span | None = None) -> None:
        """Replace the highlights of the current document without re-wrapping it.

        Args:
            spans: the new highlights (character offsets into the current document).
            focus: range to bring into view as in `show`; defaults to `spans[0]`. With
                neither, the scroll position is kept.

        The same highlights again with no ``focus`` change nothing (no scroll, no repaint):
        a worker's result that leaves the highlights as they are draws no second frame.
        """
        before = self._spans
        self._store_spans(spans)
        if focus is None and self._spans == before:
            return
        if focus is None and self._spans:
            focus = spans[0]
        if focus is not None:
            self._focus_range(focus.start, focus.end, center=True)
        self.refresh()

    def warm(self, spans: Sequence[Span], stop: Callable[[], bool] | None = None) -> None:
        """Paint, ahead of time, the rows that ``set_spans(spans)`` would show (the screen
        calls this for the next pair of the same document while idle), so that showing it
        builds no row. Changes nothing on screen. ``stop``: checked before each row; True ends
        the painting there (the rows painted are kept)."""
        height = self._viewport_height()
        if self._message is not None or not self._row_starts or not height or self.text_selection is not None:
            return
        current = self._spans, self._span_starts, self._spans_key
        self._store_spans(spans)
        try:
            if not self._spans:
                return
            focus = spans[0]
            top = self._centred_top(focus.start, focus.end)
            thumb = self._thumb(top) if self._has_thumb() else None
            width = self.size.width
            painted = []
            for y in range(height):
                if stop is not None and stop():
                    break
                on_thumb = None if thumb is None else thumb[0] <= y < thumb[1]
                key = (self._spans_key, top + y, width, False, on_thumb)
                if key not in self._line_cache:
                    self._line_cache[key] = strip = self._render_row(top + y, width, None, False, on_thumb)
                    painted.append(strip)
            prefilter(self, painted)
        finally:
            self._spans, self._span_starts, self._spans_key = current

    def show_message(self, text: str) -> None:
        """Show a single dim line (e.g. "no document for key 'XYZ'") instead of a document.

        Args:
            text: the message; made printable, whitespace runs and newlines collapsed to one space,
                cropped to the width.
        """
        self.show("")
        self._message = " ".join(printable(text).split())
        self.refresh()

    def line_of_offset(self, offset: int) -> int:
        """Return the visual row (0-based) that shows character `offset` of the document.

        Offsets are clamped to `[0, document_length]`; a newline maps to the row it ends.
        Returns 0 when no document is shown.
        """
        if self._message is not None or not self._row_starts:
            return 0
        offset = min(max(offset, 0), len(self._display))
        return max(0, bisect_right(self._row_starts, offset) - 1)

    def offset_of_line(self, row: int) -> int:
        """Return the character offset at which visual row `row` starts (clamped to the rows)."""
        if self._message is not None or not self._row_starts:
            return 0
        return self._row_starts[min(max(row, 0), len(self._row_starts) - 1)]

    def row_span(self, row: int) -> tuple[int, int]:
        """Return `(start, end)`: the character offsets (end exclusive) shown on visual row `row`.

        `end` excludes the "\\n" that ends a source line. `(0, 0)` if there is no such row.
        """
        starts = self._row_starts
        if self._message is not None or not 0 <= row < len(starts):
            return 0, 0
        if row + 1 < len(starts):
            end = starts[row + 1]
        else:
            end = len(self._display)
        if end > starts[row] and self._display[end - 1] == "\n":
            end -= 1
        return starts[row], end

    def offset_at(self, x: int, y: int, clamp: bool = False) -> int | None:
        """The document offset drawn at screen cell ``(x, y)`` (a mouse event's ``screen_x``,
        ``screen_y``): the character under it, the end of its row when the cell is past the
        row's text, the row's start over the gutter. None outside the viewer's text area (with
        ``clamp``: the nearest visible row instead) or when no document is shown. Wide
        characters count one cell each here, so on a row holding some the offset can be off by
        their extra cells."""
        if self._message is not None or not self._row_starts:
            return None
        region = self.content_region
        inside = region.contains(x, y)
        if not inside and not clamp:
            return None
        top = self.scroll_offset.y
        height = max(1, self._viewport_height())
        row = top + min(max(y - region.y, 0), height - 1)
        row = min(max(row, 0), len(self._row_starts) - 1)
        start, end = self.row_span(row)
        column = x - region.x - self._gutter_width()
        if clamp and y < region.y:
            return start
        if clamp and y >= region.y + height:
            return end
        return min(start + max(column, 0), end)

    def scroll_to_offset(self, offset: int, center: bool = True) -> None:
        """Scroll, immediately, so that character `offset` is visible.

        Args:
            offset: character offset into the document.
            center: True to put its row in the vertical centre of the viewport (kept there across
                resizes until the user scrolls); False to scroll as little as possible.
        """
        self._focus_range(offset, offset + 1, center=center)

    # ------------------------------------------------------------------ layout

    def _text_width(self) -> int:
        """Cells available for gutter + text (widget content width minus the vertical scrollbar,
        or the viewer's own one-cell thumb when the stylesheet gives the scrollbar no cells)."""
        width = self.size.width
        if not width:
            return 0
        if self.styles.overflow_y != "hidden":
            width -= self.styles.scrollbar_size_vertical or _THUMB_CELLS
        return max(1, width)

    def _has_thumb(self) -> bool:
        """Whether the last column is the viewer's own scroll thumb (see ``_thumb``)."""
        return self.styles.overflow_y != "hidden" and not self.styles.scrollbar_size_vertical

    def _thumb(self, scroll_y: int | None = None) -> tuple[int, int]:
        """Viewport rows ``[first, last)`` of the scroll thumb: the visible share of the
        document's rows at its position (``scroll_y``: the top row shown, default the current
        one; a whole-height thumb when it all fits). Drawn in the rows themselves: Textual's
        scrollbar widget repainted its every row on each scroll."""
        height = self._viewport_height()
        total = max(1, self.virtual_size.height)
        if height <= 0 or total <= height:
            return 0, height
        size = max(1, round(height * height / total))
        y = self.scroll_offset.y if scroll_y is None else scroll_y
        top = round(y / (total - height) * (height - size))
        top = min(max(0, top), height - size)
        return top, top + size

    def _gutter_width(self) -> int:
        """Width in cells of the line-number gutter (0 if hidden or no document)."""
        if not self.show_line_numbers or self._message is not None:
            return 0
        return self._digits + 2

    def _content_width(self) -> int:
        """Width in cells that the text is wrapped to."""
        text_width = self._text_width() or _FALLBACK_WIDTH
        return max(1, text_width - self._gutter_width())

    def _rewrap(self) -> None:
        """Wrap (or fetch the cached wrap of) the document at the current content width."""
        width = self._content_width()
        self._row_starts = self._index.wrap(width)
        self._wrap_width = width
        self._line_cache.clear()
        height = 1 if self._message is not None else len(self._row_starts)
        self._set_virtual_size(Size(self._text_width(), height))

    def _set_virtual_size(self, size: Size) -> None:
        """Set the scrollable size without the reactive's layout pass over the whole screen
        (15 ms at ficha scale, on every pair of another document): the viewer's own size is
        fixed by the stylesheet and it gives Textual's scrollbar no cells, so the layout would
        not change; the rows are repainted."""
        if size != self.virtual_size:
            self.set_reactive(SourceViewer.virtual_size, size)
            self.refresh()

    def _viewport_height(self) -> int:
        """Rows visible at once (0 before layout)."""
        return max(0, self.size.height - self.scrollbar_size_horizontal)

    def _focus_range(self, start: int, end: int, center: bool) -> None:
        """Scroll to the character range [start, end) (see `show`); remember it if centred."""
        if center:
            self._follow = (start, end)
            self._pending_follow = self._viewport_height() == 0
        else:
            self._follow = None
            self._pending_follow = False
        if self._viewport_height():
            self._scroll_to_range(start, end, center)

    def _scroll_to_range(self, start: int, end: int, center: bool) -> None:
        """Immediately scroll so that the rows of [start, end) are in view."""
        start, end = min(start, end), max(start, end)
        top = self.line_of_offset(start)
        bottom = self.line_of_offset(max(start, end - 1))
        height = self._viewport_height()
        if center:
            y = self._centred_top(start, end)
        else:
            current = self.scroll_offset.y
            if top < current or bottom - top + 1 > height:
                y = top
            elif bottom >= current + height:
                y = bottom - height + 1
            else:
                return
        self.scroll_to(None, max(0, y), animate=False, immediate=True, force=True)
        if center:
            self._follow_y = round(self.scroll_y)

    def _centred_top(self, start: int, end: int) -> int:
        """The top row shown once [start, end) is scrolled into view centred (``show``,
        ``set_spans``): its first row in the middle, or at the top when it is taller than the
        viewport; clamped to the scrollable rows."""
        start, end = min(start, end), max(start, end)
        top = self.line_of_offset(start)
        bottom = self.line_of_offset(max(start, end - 1))
        height = self._viewport_height()
        y = top if bottom - top + 1 > height else top - height // 2
        return min(max(0, y), self.max_scroll_y)

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()

    def watch_show_line_numbers(self, show: bool) -> None:
        """Re-wrap for the new text width (the gutter takes `digits + 2` cells)."""
        self._relayout()
        self.refresh()

    def _relayout(self) -> None:
        """Re-wrap after a width change, keeping the followed span (or the top row) in view."""
        if not self._text_width():
            return
        following = self._follow is not None and (
            self._pending_follow or round(self.scroll_y) == self._follow_y
        )
        anchor = self.offset_of_line(self.scroll_offset.y)
        if self._content_width() != self._wrap_width:
            self._rewrap()
            if not following:
                self.scroll_to(
                    None, self.line_of_offset(anchor), animate=False, immediate=True, force=True
                )
        else:
            self._set_virtual_size(Size(self._text_width(), self.virtual_size.height))
        if following and self._follow is not None:
            self._pending_follow = False
            self._scroll_to_range(*self._follow, center=True)
        self.refresh()

    # ------------------------------------------------------------------ spans

    def _store_spans(self, spans: Sequence[Span]) -> None:
        """Clamp spans to the document, map unknown kinds to "exact", and sort them by start."""
        length = len(self._display)
        stored = []
        for span in spans:
            start, end = sorted((span.start, span.end))
            start = min(max(start, 0), length)
            end = min(max(end, 0), length)
            kind = span.kind if span.kind in _KIND_RANK else "exact"
            stored.append(Span(start, end, kind, span.label))
        stored.sort(key=lambda span: (span.start, span.end))
        self._spans = tuple(stored)
        self._span_starts = [span.start for span in stored]
        self._marks = sorted((span.start, span.label) for span in stored if span.kind == "boundary" and span.label)
        self._mark_starts = [m[0] for m in self._marks]
        keys = self._span_keys
        if self._spans not in keys and len(keys) >= _SPAN_KEYS:
            keys.clear()  # and the rows painted under them
            self._line_cache.clear()
        self._spans_key = keys.setdefault(self._spans, len(keys))

    # ------------------------------------------------------------------ rendering

    def notify_style_update(self) -> None:
        """Drop cached rows when CSS (e.g. the theme) changes."""
        super().notify_style_update()
        self._line_cache.clear()
        self._rich_styles.clear()

    def _style(self, component: str | None = None) -> Style:
        """The Rich style of component class ``component`` (None: the viewer's own), as
        Textual resolves it, kept until the next style update."""
        style = self._rich_styles.get(component)
        if style is None:
            style = self.visual_style.rich_style if component is None else self.get_component_rich_style(component)
            self._rich_styles[component] = style
        return style

    def render_lines(self, crop: Region) -> list[Strip]:
        """Rows for the screen: without the per-cell selection offsets, which only Textual's
        hit test reads, and it asks ``render_line`` for the row under the mouse itself. A
        style per cell position would defeat the style caches of every later paint step."""
        self._painting = True
        self._paint_thumb = self._thumb() if self._has_thumb() else None
        self._paint_state = (self.size.width, self.text_selection)
        try:
            if not bare_box(self):
                return super().render_lines(crop)
            return paint_rows(self, crop, self.render_line)
        finally:
            self._painting = False
            self._paint_thumb = None
            self._paint_state = None

    def render_line(self, y: int) -> Strip:
        """Render row `y` of the viewport (0 = top visible row) as a strip of widget width;
        each text cell carries its (column, row) offset for text selection, except while
        painting (``render_lines``)."""
        row = self.scroll_offset.y + y
        width, selection = self._paint_state or (self.size.width, self.text_selection)
        offsets = not self._painting
        thumb = self._paint_thumb or (self._thumb() if self._has_thumb() else None)
        on_thumb = None if thumb is None else thumb[0] <= y < thumb[1]
        key = (self._spans_key, row, width, offsets, on_thumb)
        if selection is None:
            cached = self._line_cache.get(key)
            if cached is not None:
                return cached
        strip = self._render_row(row, width, selection, offsets, on_thumb)
        if selection is None:
            self._line_cache[key] = strip
        return strip

    def _render_row(self, row: int, width: int, selection: Selection | None, offsets: bool = True,
                    on_thumb: bool | None = None) -> Strip:
        """Build the strip for visual row `row` of the document (gutter + text + padding, then
        the thumb's cell: ``on_thumb`` True or False, None for no thumb column); ``offsets``:
        each text segment carries its ``{"offset": (column, row)}`` meta (what
        ``Strip.apply_offsets`` adds), which Textual's text selection reads."""
        base = self._style()
        if self._message is not None:
            if row != 0:
                return Strip.blank(width, base)
            style = base + self._style("source-viewer--message")
            return Strip([Segment(self._message, style)]).adjust_cell_length(width, base)
        if row < 0 or row >= len(self._row_starts):
            return Strip.blank(width, base)

        start, end = self.row_span(row)
        content_width = self._wrap_width
        segments = self._text_segments(row, start, end, base, selection)
        cells = sum(cell_len(segment.text) for segment in segments)
        if cells > content_width:  # a wide character at the wrap edge: let Strip cut it
            segments = list(Strip(segments).adjust_cell_length(content_width, base))
        elif cells < content_width:
            segments.append(Segment(" " * (content_width - cells), base))
        out: list[Segment] = []
        gutter_width = self._gutter_width()
        if gutter_width:
            mark = self._mark_on(start, end)
            if mark:
                out.append(Segment(f"{mark[:gutter_width - 1]:>{gutter_width - 1}} ",
                                   self._style("source-viewer--boundary")))
            else:
                line_index = bisect_right(self._line_starts, start) - 1
                if self._line_starts[line_index] == start:
                    label = f" {line_index + 1:>{self._digits}} "
                else:
                    label = " " * gutter_width
                out.append(Segment(label, self._style("source-viewer--gutter")))
        # One Strip per row: each text cell carries its (column, row) offset, which Textual's
        # text selection reads (what ``Strip.apply_offsets`` does, without three more strips).
        if offsets:
            x = 0
            from_meta = Style.from_meta
            for text, style, _ in segments:
                offset = from_meta({"offset": (x, row)})
                out.append(Segment(text, style + offset if style else offset))
                x += len(text)
        else:
            out.extend(segments)
        used = gutter_width + content_width
        end = width - (on_thumb is not None)
        if used < end:
            out.append(Segment(" " * (end - used), base))
            used = end
        if on_thumb is not None and used < width:
            part = "source-viewer--thumb" if on_thumb else "source-viewer--track"
            out.append(Segment(" ", self._style(part)))
            used += 1
        strip = Strip(out, used)
        return strip if used == width else strip.adjust_cell_length(width, base)

    def _mark_on(self, start: int, end: int) -> str:
        """The label of a "boundary" span starting on the row ``[start, end]`` (its line break
        included; "" when none)."""
        k = bisect_right(self._mark_starts, end) - 1
        return self._marks[k][1] if k >= 0 and self._mark_starts[k] >= start else ""

    def _text_segments(
        self, row: int, start: int, end: int, base: Style, selection: Selection | None
    ) -> list[Segment]:
        """Segments for the text of [start, end), styled by the spans (and text selection) over it.

        If a span also covers the newline that ends this row's source line, one extra highlighted
        cell is added so that a passage spanning several lines reads as one block.
        """
        display = self._display
        # (lo, hi, rank, style) layers clipped to the row; higher rank paints over lower.
        layers: list[tuple[int, int, int, Style]] = []
        newline_layers: list[tuple[int, Style]] = []
        ends_line = end < len(display) and display[end] == "\n"
        spans = self._spans
        for index in range(bisect_right(self._span_starts, end)):
            span = spans[index]
            if span.end <= start:
                continue
            rank = _KIND_RANK[span.kind]
            style = self._style(_KIND_CLASS[span.kind])
            lo = max(span.start, start)
            hi = min(span.end, end)
            if hi > lo:
                layers.append((lo, hi, rank, style))
            if ends_line and span.start <= end < span.end:
                newline_layers.append((rank, style))
        if selection is not None:
            selected = selection.get_span(row)
            if selected is not None:
                sel_start, sel_end = selected
                lo = start + sel_start
                hi = end if sel_end == -1 else min(end, start + sel_end)
                if hi > lo:
                    style = self.screen.get_component_rich_style("screen--selection")
                    layers.append((lo, hi, len(SPAN_KINDS), style))

        if not layers:
            segments = [Segment(printable(display[start:end]), base)] if end > start else []
        else:
            layers.sort(key=lambda layer: layer[2])
            cuts = sorted({start, end, *(lo for lo, *_ in layers), *(hi for _, hi, *_ in layers)})
            segments = []
            for lo, hi in zip(cuts, cuts[1:]):
                style = base
                for layer_lo, layer_hi, _rank, layer_style in layers:
                    if layer_lo <= lo and hi <= layer_hi:
                        style = style + layer_style
                segments.append(Segment(printable(display[lo:hi]), style))
        if newline_layers:
            style = base
            for _rank, layer_style in sorted(newline_layers, key=lambda layer: layer[0]):
                style = style + layer_style
            segments.append(Segment(" ", style))
        return segments

    # ------------------------------------------------------------------ text selection

    def selection_range(self, selection: Selection | None = None) -> tuple[int, int] | None:
        """Character offsets ``(start, end)`` of a mouse selection (default: the current one)
        in the document; None without a selection, a document, or for an empty selection.

        Selection offsets are (character within row, visual row); they are mapped back to
        character offsets of the document, so soft wraps do not add newlines.
        """
        selection = self.text_selection if selection is None else selection
        if selection is None or self._message is not None or not self._row_starts:
            return None
        last = len(self._row_starts) - 1

        def to_offset(x: int, y: int) -> int:
            row = min(max(y, 0), last)
            row_start, row_end = self.row_span(row)
            return min(row_start + max(x, 0), row_end)

        start = 0 if selection.start is None else to_offset(*selection.start)
        end = len(self._display) if selection.end is None else to_offset(*selection.end)
        start, end = min(start, end), max(start, end)
        return (start, end) if end > start else None

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """Return the displayed document text under a mouse selection (for copying)."""
        span = self.selection_range(selection)
        if span is None:
            return None
        return printable(self._display[span[0]:span[1]]), "\n"
