"""The queue of QA pairs: one row per pair, rendered with the Line API.

Only the rows on screen are rendered, so 20,000 pairs cost what one screen costs, and a decision
repaints one row. Row text comes from a callback and is always plain text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.segment import Segment
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip


class PairList(ScrollView, can_focus=False):
    """A scrolling list of pair ids with a cursor.

    ``set_ids(ids)`` sets the rows (pair ids, in queue order); ``row_text(pair_id, width)``
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

    def __init__(self, row_text: Callable[[int, int], str], row_class: Callable[[int], str], **kwargs):
        super().__init__(**kwargs)
        self._row_text = row_text
        self._row_class = row_class
        self._ids: list[int] = []
        self._index_of: dict[int, int] = {}
        self.cursor = 0

    # -- data -------------------------------------------------------------------------------

    @property
    def ids(self) -> Sequence[int]:
        """The pair ids shown, in order."""
        return self._ids

    def set_ids(self, ids: list[int], keep: int | None = None) -> None:
        """Show ``ids``; put the cursor on pair ``keep`` if shown, else on the nearest row."""
        self._ids = ids
        self._index_of = {pid: i for i, pid in enumerate(ids)}
        self.virtual_size = Size(self.size.width, len(ids))
        if keep is not None and keep in self._index_of:
            self.cursor = self._index_of[keep]
        else:
            self.cursor = min(self.cursor, max(0, len(ids) - 1))
        self._show_cursor()
        self.refresh()

    @property
    def current(self) -> int | None:
        """The pair id under the cursor, or None when the list is empty."""
        return self._ids[self.cursor] if self._ids else None

    def index_of(self, pair_id: int) -> int | None:
        """The row of ``pair_id``, or None when it is not shown."""
        return self._index_of.get(pair_id)

    def move_to(self, pair_id: int) -> bool:
        """Put the cursor on ``pair_id``; False when that pair is not shown."""
        i = self._index_of.get(pair_id)
        if i is None:
            return False
        self._move_cursor(i)
        return True

    def move_by(self, delta: int) -> int | None:
        """Move the cursor ``delta`` rows (clamped); returns the new current pair id."""
        if self._ids:
            self._move_cursor(max(0, min(len(self._ids) - 1, self.cursor + delta)))
        return self.current

    def refresh_pair(self, pair_id: int) -> None:
        """Repaint one pair's row (after its status changed)."""
        i = self._index_of.get(pair_id)
        if i is not None:
            self.refresh_line(i)

    # -- rendering --------------------------------------------------------------------------

    def _move_cursor(self, i: int) -> None:
        old = self.cursor
        self.cursor = i
        self.refresh_line(old)
        self.refresh_line(i)
        self._show_cursor()

    def refresh_line(self, y: int) -> None:
        """Repaint row ``y`` of the list (a list row, not a screen row)."""
        self.refresh_lines(y, 1)

    def _show_cursor(self) -> None:
        height = self.scrollable_content_region.height or 1
        top = self.scroll_offset.y
        if self.cursor < top + 1:
            self.scroll_to(y=max(0, self.cursor - 1), animate=False, immediate=True)
        elif self.cursor >= top + height - 1:
            self.scroll_to(y=self.cursor - height + 2, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self._ids))
        self._show_cursor()

    def render_line(self, y: int) -> Strip:
        row = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if row >= len(self._ids):
            return Strip.blank(width, base)
        pid = self._ids[row]
        text = self._row_text(pid, width)
        style = base + self.get_component_rich_style(f"pair-list--{self._row_class(pid)}", partial=True)
        if row == self.cursor:
            style += self.get_component_rich_style("pair-list--cursor", partial=True)
        strip = Strip([Segment(text, style)])
        return strip.adjust_cell_length(width, style)

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self._ids):
            self._move_cursor(row)
            self.post_message(self.Selected(self._ids[row]))
