"""A repaint asked for while a widget is hidden: drop its painted lines, ask Textual for nothing.

Textual's screen hands every refreshed widget to its compositor (``update_widgets``), which
takes a widget missing from its visible map for a new one and rebuilds the whole map on the next
frame. A widget under ``display: none`` (the review screen's queue below 100 columns, which
still follows the cursor) is never in that map, so each of its repaints cost a full
arrangement (about 1 ms a key at 80x24). ``SkipsHiddenRepaint`` (``tui/widgets/scrolling.py``)
skips Textual's refresh while hidden and calls :func:`forget_painted_lines`, so that the widget
is painted whole from its current state when it is shown again; Textual keeps those lines in a
private cache (``Widget._styles_cache``) that no public call clears without the refresh.

Canary: ``tests/test_workarounds.py`` (the private cache still exists and still hands back stale
lines unless cleared; Textual still rebuilds its map for a hidden widget's refresh). Upstream
report: ``docs/textual-workarounds.md``.
"""

from __future__ import annotations

from textual.widget import Widget

__all__ = ["forget_painted_lines"]


def forget_painted_lines(widget: Widget) -> None:
    """Make Textual paint ``widget`` whole the next time it is on screen (its styles cache
    emptied), without asking for a frame or a layout now."""
    widget._styles_cache.clear()
