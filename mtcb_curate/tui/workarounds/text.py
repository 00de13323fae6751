"""Two pieces of Rich used below its public API, for speed: its line breaker and its cell table.

- :func:`divide_line` is ``rich._wrap.divide_line``, the function ``Text.wrap`` breaks each line
  with. The QA panel (``SectionRows``) finds a section's row bounds with it at once and makes a
  row's ``Strip`` only when the row is painted, so that a long passage costs the rows a screen
  shows; ``Text.wrap`` would build every row as a ``Text``. Rows must match ``Text.wrap``'s row
  for row (the panel's rows are compared against it in the tests).
- :func:`cell_width_ranges` is the table behind ``rich.cells.cell_len`` (``rich._unicode_data``):
  ranges of characters that are not one cell wide. The source viewer builds one regular
  expression from it, so a line with no match is wrapped by counting characters. The public
  ``rich.cells.get_character_cell_size`` over the Basic Multilingual Plane takes about 80 ms
  (measured 2026-12, 2 cores): too slow at import. Without the table the viewer falls back to
  a cruder class (printable Latin only: more lines take the exact, slower path).

Canary: ``tests/test_workarounds.py`` (both names still exist; ``divide_line`` still breaks as
``Text.wrap`` does; the table still agrees with ``get_character_cell_size``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich._wrap import divide_line

__all__ = ["cell_width_ranges", "divide_line"]


def cell_width_ranges() -> Sequence[tuple[int, int, int]] | None:
    """``(first, last, cells)`` code point ranges (inclusive) whose characters are ``cells``
    (0 or 2) terminal cells wide, for the Unicode version Rich detects (``"auto"``); ranges not
    listed are one cell. None when this Rich has no such table."""
    try:
        from rich._unicode_data import load
    except ImportError:
        return None
    try:
        return [(start, end, width) for start, end, width in load("auto").widths if width != 1]
    except (AttributeError, TypeError, ValueError):
        return None
