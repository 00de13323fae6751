"""The queue of QA pairs: one row per pair, rendered with the Line API.

Only the rows on screen are rendered, so 20,000 pairs cost what one screen costs, and a decision
repaints one row. Row text comes from a callback and is always plain text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from mtcb_curate.app.controller import Queue
from mtcb_curate.tui.widgets.scrolling import BareScrollView


#: Characters that make a terminal's idea of a row's width or order differ from the app's: the
#: zero-width joiner (a ZWJ emoji sequence is one 2-cell glyph for the app and up to 8 cells in
#: a terminal that does not join it), variation selectors (U+FE0F widens a 1-cell symbol to 2
#: in some terminals only), emoji skin-tone modifiers, bidirectional controls (embeddings,
#: overrides, isolates, marks: a bidi terminal would reorder the rest of the row) and other
#: zero-width characters. A queue row drops them; the QA panel shows the text unchanged.
_UNSTABLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufe00-\ufe0f\ufeff"
                       "\U0001f3fb-\U0001f3ff\U000e0000-\U000e007f]")


def display_row(text: str, width: int) -> str:
    """``text`` as one queue row of exactly ``width`` terminal cells: the characters of
    ``_UNSTABLE`` dropped, then cut on display width (``rich.cells``, never ``len``) with an
    ellipsis, or padded with spaces. Every character left has a width a terminal agrees on, so
    the row is not shifted."""
    if _UNSTABLE.search(text):
        text = _UNSTABLE.sub("", text)
    if cell_len(text) > width:
        return set_cell_size(text, max(0, width - 1)) + ("…" if width else "")
    return set_cell_size(text, width)


class PairList(BareScrollView, can_focus=False):
    """A scrolling list of pair ids with a cursor.

    ``set_ids(ids)`` sets the rows (pair ids, ascending); ``row_text(pair_id, width)``
    (given at construction) returns a row's plain text and ``row_class(pair_id)`` one of the
    component-class suffixes (``undecided``, ``accepted``, ``rejected``, ``skipped``, ``flagged``).
    """

    COMPONENT_CLASSES = {
        "pair-list--cursor",
        "pair-list--undecided",
        "pair-list--accepted",
        "pair-list--rejected",
        "pair-list--skipped",
        "pair-list--flagged",
    }

    DEFAULT_CSS = """
    PairList { background: $surface; }
    PairList > .pair-list--cursor { background: $accent; color: $text; text-style: bold; }
    PairList > .pair-list--undecided { color: $text; }
    PairList > .pair-list--accepted { color: $success; }
    PairList > .pair-list--rejected { color: $error; }
    PairList > .pair-list--skipped { color: $text-muted; }
    PairList > .pair-list--flagged { color: $warning; }
    """

    class Selected(Message):
        """The user clicked a row: ``pair_id`` is its pair."""

        def __init__(self, pair_id: int) -> None:
            self.pair_id = pair_id
            super().__init__()

    def __init__(self, row_text: Callable[[int, int], str], row_class: Callable[[int], str],
                 queue: Queue | None = None, **kwargs):
        super().__init__(**kwargs)
        self._row_text = row_text
        self._row_class = row_class
        #: The ids and the cursor (``app.controller.Queue``: the review controller's, which
        #: moves it; ``sync`` draws what it did).
        self.model = Queue() if queue is None else queue
        self._styles: dict[str, Style] = {}

    # -- data -------------------------------------------------------------------------------

    @property
    def ids(self) -> Sequence[int]:
        """The pair ids shown, in order."""
        return self.model.ids

    @property
    def cursor(self) -> int:
        """The cursor's row."""
        return self.model.cursor

    @property
    def current(self) -> int | None:
        """The pair id under the cursor, or None when the list is empty."""
        return self.model.current

    def index_of(self, pair_id: int) -> int | None:
        """The row of ``pair_id``, or None when it is not shown (a binary search: ids ascend)."""
        return self.model.index_of(pair_id)

    def sync(self, *, rebuilt: bool = False, moved_from: int | None = None, rows: Iterable[int] = ()) -> None:
        """Draw what the model's owner changed: ``rebuilt`` (the ids changed: every row),
        ``moved_from`` (the cursor left that row), ``rows`` (pair ids whose rows changed)."""
        if rebuilt:
            self.virtual_size = Size(self.size.width, len(self.model.ids))
            self._show_cursor()
            self.refresh()
            return
        for pid in rows:
            self.refresh_pair(pid)
        if moved_from is not None:
            self.refresh_line(moved_from)
            self.refresh_line(self.model.cursor)
            self._show_cursor()

    def set_ids(self, ids: list[int], keep: int | None = None) -> None:
        """Show ``ids`` (ascending pair ids); put the cursor on pair ``keep`` if shown, else on
        the nearest row."""
        self.model.set_ids(ids, keep)
        self.sync(rebuilt=True)

    def remove(self, pair_id: int) -> None:
        """Drop ``pair_id``'s row (it left the view); the cursor stays on the row that follows it,
        or the new last row. Costs one list deletion, not a rebuild of the list."""
        if self.model.remove(pair_id):
            self.sync(rebuilt=True)

    def move_to(self, pair_id: int) -> bool:
        """Put the cursor on ``pair_id``; False when that pair is not shown."""
        i = self.index_of(pair_id)
        if i is None:
            return False
        self._move_cursor(i)
        return True

    def move_by(self, delta: int) -> int | None:
        """Move the cursor ``delta`` rows (clamped); returns the new current pair id."""
        if self.model.ids:
            self._move_cursor(max(0, min(len(self.model.ids) - 1, self.cursor + delta)))
        return self.current

    def refresh_pair(self, pair_id: int) -> None:
        """Repaint one pair's row (after its status changed)."""
        i = self.index_of(pair_id)
        if i is not None:
            self.refresh_line(i)

    # -- rendering --------------------------------------------------------------------------

    def _move_cursor(self, i: int) -> None:
        self.sync(moved_from=self.model.move_to_row(i))

    def refresh_line(self, y: int) -> None:
        """Repaint row ``y`` of the list (a list row, not a screen row)."""
        self.refresh_lines(y, 1)

    def _show_cursor(self) -> None:
        """Keep the cursor's row on screen with a row of context above and below. Stepping
        past an edge moves the list by half a page, not a row: a scroll repaints every row
        of the list, so walking the queue repaints it once every half page instead of on
        every key (the way mutt's index pages)."""
        height = self.scrollable_content_region.height or 1
        top = self.scroll_offset.y
        if top + 1 <= self.cursor < top + height - 1:
            return
        half = height // 2
        if height <= 3:  # too short to page: one row of context, as far as it goes
            y = self.cursor - 1 if self.cursor < top + 1 else self.cursor - height + 2
        elif self.cursor < top + 1:  # up past the top edge: the cursor lands half a page from the bottom
            y = min(self.cursor - (height - 1 - half), self.cursor - 1)
        else:  # down past the bottom edge: the cursor lands half a page from the top
            y = max(self.cursor - half, self.cursor - height + 2)
        self.scroll_to(y=max(0, y), animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.model.ids))
        self._show_cursor()

    def notify_style_update(self) -> None:
        """Forget the cached row styles when CSS (e.g. the theme) changes."""
        super().notify_style_update()
        self._styles.clear()

    def _style(self, row_class: str, cursor: bool) -> Style:
        """The rich style of a row (base [+ status class] [+ cursor]), cached per theme: looking
        styles up costs about 50 µs a row, a third of the list's paint time."""
        key = f"{row_class}{'*' if cursor else ''}"
        style = self._styles.get(key)
        if style is None:
            style = self.rich_style
            if row_class:
                style += self.get_component_rich_style(f"pair-list--{row_class}", partial=True)
            if cursor:
                style += self.get_component_rich_style("pair-list--cursor", partial=True)
            self._styles[key] = style
        return style

    def render_line(self, y: int) -> Strip:
        row = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        model = self.model
        if row >= len(model.ids):
            return Strip.blank(width, self._style("", False))
        pid = model.ids[row]
        text = display_row(self._row_text(pid, width), width)
        style = self._style(self._row_class(pid), row == model.cursor)
        return Strip([Segment(text, style)], width)

    def on_click(self, event: events.Click) -> None:
        """A click on a row posts ``Selected``; whoever owns the model moves the cursor."""
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.model.ids):
            self.post_message(self.Selected(self.model.ids[row]))
