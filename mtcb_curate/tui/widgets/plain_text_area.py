"""A TextArea that never sends a control character from its text to the terminal.

Textual's TextArea renders its text as is, so an ANSI escape sequence inside a passage being
edited would reach the terminal. This subclass maps control characters to visible stand-ins
(``plaintext.printable``) when rendering; the text being edited is unchanged.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import TextArea

from mtcb_curate.plaintext import has_control, printable


class PlainTextArea(TextArea):
    """``TextArea`` whose rendered rows contain no control characters (same row width)."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not any(has_control(seg.text, keep_newlines=False) for seg in strip):
            return strip
        safe = [Segment(printable(seg.text, keep_newlines=False), seg.style, seg.control) for seg in strip]
        return Strip(safe).adjust_cell_length(strip.cell_length)
