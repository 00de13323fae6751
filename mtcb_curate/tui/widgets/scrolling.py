"""A line-API scroll view that draws no Textual scrollbar.

The review screen's queue, QA panel and source viewer give Textual's vertical scrollbar no
cells (``scrollbar-size-vertical: 0``) and draw their position themselves (a title, a "more
below" line, a one-cell thumb). Textual's ``ScrollView`` still moves its zero-width scrollbar
widget on every scroll; that widget is not on screen, so refreshing it makes the compositor
rebuild its whole widget map on the next frame (about 1 ms a frame at 120x30). This base
class skips the hidden scrollbar and repaints only the view.

Also the painting helpers the review screen's widgets share: skipping repaints while hidden,
keeping a still widget's lines (``KeepsPaintedLines``, and the screen's containers built on it),
and painting rows straight from a widget (``paint_rows``).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.style import Style as TextualStyle
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.screen import Screen
from textual.widget import Widget

from mtcb_curate.tui.workarounds.repaint import forget_painted_lines


def displayed(widget: Widget) -> bool:
    """False when ``widget`` or an ancestor below its screen has ``display: none`` (the review
    screen's queue pane below 100 columns)."""
    node = widget
    while node is not None and not isinstance(node, Screen):
        if node.styles.display == "none":
            return False
        node = node.parent
    return True


class SkipsHiddenRepaint:
    """Mixin (before the widget class: ``class Bar(SkipsHiddenRepaint, Widget)``; not a widget
    itself, so Textual's default CSS still follows the widget class) for a widget whose
    repaint-only ``refresh`` while it is not displayed (see :func:`displayed`)
    only drops its painted lines and asks Textual for nothing. Textual's screen takes any
    refreshed widget that is not on screen for a new one and rebuilds its whole widget map on
    the next frame (about 1 ms a key at 80x24, where the queue is hidden but still follows the
    cursor). Shown again, the widget is laid out and painted whole (``tui/workarounds/repaint.py``)."""

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> Widget:
        if repaint and not layout and not recompose and self.is_mounted and not displayed(self):  # type: ignore[attr-defined,arg-type]
            forget_painted_lines(self)  # type: ignore[arg-type]
            return self  # type: ignore[return-value]
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)  # type: ignore[misc]


class KeepsPaintedLines:
    """Mixin (before the widget class, as :class:`SkipsHiddenRepaint`) for a widget whose lines
    change only when it is refreshed, restyled (Textual calls ``notify_style_update`` on every
    node a stylesheet update reaches: a class, a theme) or resized: the lines of its last paint
    are handed back as they were for the same crop. Textual paints every widget under a frame's
    changed area, so a container the review screen's panes cover whole was painted again on
    every key through Textual's styles cache (about 0.3 ms each at 160x48)."""

    _kept_lines: tuple[object, list[Strip]] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        key = (crop, self.size, tuple(self.app.get_line_filters()))  # type: ignore[attr-defined]
        kept = self._kept_lines
        if kept is not None and kept[0] == key:
            return kept[1]
        lines = super().render_lines(crop)  # type: ignore[misc]
        self._kept_lines = (key, lines)
        return lines

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> Widget:
        self._kept_lines = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)  # type: ignore[misc]

    def notify_style_update(self) -> None:
        self._kept_lines = None
        super().notify_style_update()  # type: ignore[misc]


class StillVertical(KeepsPaintedLines, Vertical):
    """A ``Vertical`` that keeps its painted lines (``KeepsPaintedLines``)."""


class StillHorizontal(KeepsPaintedLines, Horizontal):
    """A ``Horizontal`` that keeps its painted lines (``KeepsPaintedLines``)."""


class BareScrollView(SkipsHiddenRepaint, ScrollView):
    """``ScrollView`` that leaves its vertical scrollbar alone while the stylesheet gives it no
    cells (``scrollbar-size-vertical: 0``); with a visible scrollbar it behaves as Textual's."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if self.styles.scrollbar_size_vertical:
            super().watch_scroll_y(old_value, new_value)
        elif round(old_value) != round(new_value):
            self.refresh(self.size.region)


def bare_box(widget: Widget, *, side_padding: bool = False, bottom_border: bool = False) -> bool:
    """Whether ``widget``'s styles add nothing around or over its rows: no padding, border or
    outline, no tint, hatch or transparency (``side_padding``: left and right padding
    allowed; ``bottom_border``: a bottom border allowed). Then its rows are what Textual's
    styles cache would paint (``paint_rows``)."""
    styles = widget.styles
    top, right, bottom, left = styles.padding
    (b_top, _), (b_right, _), (b_bottom, _), (b_left, _) = styles.border
    return (not (top or bottom) and (side_padding or not (left or right))
            and not (b_top or b_right or b_left) and (bottom_border or not b_bottom)
            and not any(edge for edge, _ in styles.outline) and not styles.tint.a
            and styles.opacity == 1.0 and styles.text_opacity == 1.0
            and (not styles.has_rule("hatch") or styles.hatch == "none"))


def paint_rows(widget: Widget, crop: Region, row: Callable[[int], Strip]) -> list[Strip]:
    """The rows of ``crop`` (in the widget's outer region) for a :func:`bare_box` widget whose
    ``row(y)`` gives a strip of the widget's outer width: each through the app's line filters (as Textual's styles cache does),
    then cut to the crop's columns. Textual's cache builds a new strip per row on every paint,
    so the filters ran again on each (about 45 µs a row); a row kept by the widget keeps its
    filtered copy too."""
    filters = widget.app.get_line_filters()
    background = widget.background_colors[1]
    strips = [_filtered(row(y), filters, background) for y in crop.line_range]
    x1, x2 = crop.column_span
    if (x1, x2) != (0, widget.outer_size.width):
        strips = [strip.crop(x1, x2) for strip in strips]
    return strips


def prefilter(widget: Widget, strips) -> None:
    """Run the app's line filters over ``strips`` (rows ``widget`` painted ahead) now, so that
    ``paint_rows`` finds their filtered copies kept (``Strip.apply_filter`` caches them per
    strip) instead of filtering in the frame."""
    filters = widget.app.get_line_filters()
    if not filters:
        return
    background = widget.background_colors[1]
    for strip in strips:
        _filtered(strip, filters, background)


def _filtered(strip: Strip, filters, background) -> Strip:
    """``strip`` through ``filters`` in order (each result kept by the strip it came from)."""
    for line_filter in filters:
        strip = strip.apply_filter(line_filter, background)
    return strip


def padded(strip: Strip, left: int, right: int, style: Style) -> Strip:
    """``strip`` with ``left`` and ``right`` blank cells in ``style`` (a widget's side padding,
    as Textual's styles cache adds it)."""
    if not (left or right):
        return strip
    segments = [Segment(" " * left, style)] if left else []
    segments.extend(strip)
    if right:
        segments.append(Segment(" " * right, style))
    return Strip(segments, strip.cell_length + left + right)


def inner_style(widget: Widget) -> Style:
    """The Rich style of ``widget``'s padding: its background over what is beneath it (what
    Textual's styles cache paints padding with)."""
    base_background, background = widget.background_colors
    return TextualStyle(background=base_background + background).rich_style
