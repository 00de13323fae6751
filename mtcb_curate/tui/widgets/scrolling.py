"""A line-API scroll view that draws no Textual scrollbar.

The review screen's queue, QA panel and source viewer give Textual's vertical scrollbar no
cells (``scrollbar-size-vertical: 0``) and draw their position themselves (a title, a "more
below" line, a one-cell thumb). Textual's ``ScrollView`` still moves its zero-width scrollbar
widget on every scroll; that widget is not on screen, so refreshing it makes the compositor
rebuild its whole widget map on the next frame (about 1 ms a frame at 120x30). This base
class skips the hidden scrollbar and repaints only the view.
"""

from __future__ import annotations

from textual.scroll_view import ScrollView


class BareScrollView(ScrollView):
    """``ScrollView`` that leaves its vertical scrollbar alone while the stylesheet gives it no
    cells (``scrollbar-size-vertical: 0``); with a visible scrollbar it behaves as Textual's."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if self.styles.scrollbar_size_vertical:
            super().watch_scroll_y(old_value, new_value)
        elif round(old_value) != round(new_value):
            self.refresh(self.size.region)
