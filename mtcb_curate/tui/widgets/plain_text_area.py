"""A TextArea that never sends a control character from its text to the terminal.

Textual's TextArea renders its text as is, so an ANSI escape sequence inside a passage being
edited would reach the terminal. This subclass maps control characters to visible stand-ins
(``plaintext.printable``) when rendering; the text being edited is unchanged.
"""

from __future__ import annotations

import difflib

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import TextArea

from mtcb_curate.plaintext import has_control, printable
from mtcb_curate.tui.workarounds.keys import RunsOwnBindings


class PlainTextArea(RunsOwnBindings, TextArea):
    """``TextArea`` whose rendered rows contain no control characters (same row width), and
    that runs its own key bindings (backspace, the arrows, ctrl+z ...) as it reads the key.

    Textual runs a widget's bindings only when the key has bubbled back up to the app, and then
    on whatever has the focus at that moment: a backspace typed just before tab deleted in the
    next field, and one typed just before ctrl+s was applied after the save. Here every key is
    done in this widget's own queue, in the order typed (``RunsOwnBindings``,
    ``tui/workarounds/keys.py``).
    """

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not any(has_control(seg.text, keep_newlines=False) for seg in strip):
            return strip
        safe = [Segment(printable(seg.text, keep_newlines=False), seg.style, seg.control) for seg in strip]
        return Strip(safe).adjust_cell_length(strip.cell_length)


# The breaks Enter may stand for, in the order that wins a tie (see ``restore_line_breaks``).
_ENTER_BREAKS = ("\r\n", "\n", "\r")
# The breaks after which the editor shows an empty last line (Textual's ``VALID_NEWLINES``).
_EDITOR_TRAILING = ("\r\n", "\n", "\r")


def split_line_breaks(text: str) -> tuple[list[str], list[str], str]:
    """``text`` as the editor's lines, the break that followed each line, and a tail.

    The lines are exactly what a ``TextArea`` holds for ``text`` (``str.splitlines``, plus an
    empty last line when ``text`` is empty or ends with ``\n``, ``\r\n`` or ``\r``); the breaks
    are every kind ``str.splitlines`` knows (``\x0b``, ``\x0c``, U+0085, U+2028, ...), the last
    one ``""``. ``tail`` is a break ending ``text`` that the editor does not show (``"a\u2028"``
    is the one line ``a``), else ``""``. ``"".join(l + b ...) + tail == text``.
    """
    lines: list[str] = []
    breaks: list[str] = []
    for part in text.splitlines(keepends=True):
        body = part.splitlines()[0] if part.splitlines() else ""
        lines.append(body)
        breaks.append(part[len(body):])
    tail = ""
    if not text or text.endswith(_EDITOR_TRAILING):
        lines.append("")
        breaks.append("")
    elif breaks[-1]:
        tail, breaks[-1] = breaks[-1], ""
    return lines, breaks, tail


def restore_line_breaks(original: str, lines: list[str]) -> str:
    """Join an editor's ``lines`` into text, with ``original``'s own line breaks where the lines
    still match it.

    A ``TextArea`` holds lines and joins them with one newline style, so a passage with mixed
    breaks (``\n`` and ``\r\n``, or ``\r``, ``\x0b``, ``\x0c``, U+0085, U+2028) would come back
    changed though nobody touched it. Here the lines are aligned with ``original``'s lines
    (``difflib.SequenceMatcher``): an unchanged line keeps the break that followed it, a changed
    line in place of an original one keeps that one's break, and a new line gets the original's
    most common Enter break (``\r\n``, ``\n`` or ``\r``; ``\n`` when it has none). Lines equal
    to the editor's view of ``original`` give ``original`` back byte for byte.

    Args:
        original: the text the editor was opened with.
        lines: the editor's lines now (``TextArea.document.lines``), without line breaks.

    Returns:
        The edited text.
    """
    old, breaks, tail = split_line_breaks(original)
    if lines == old:
        return original
    counts = [sum(1 for b in breaks if b == e) for e in _ENTER_BREAKS]
    default = _ENTER_BREAKS[counts.index(max(counts))] if max(counts) else "\n"
    seps: list[str | None] = [None] * len(lines)
    matcher = difflib.SequenceMatcher(None, old, lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            seps[j1:j2] = breaks[i1:i2]
        elif tag == "replace":
            for k in range(min(i2 - i1, j2 - j1) - 1):
                seps[j1 + k] = breaks[i1 + k]
            seps[j2 - 1] = breaks[i2 - 1]  # the text before the original break keeps it
    last = len(lines) - 1
    out = []
    for j, line in enumerate(lines):
        sep = seps[j]
        if j == last:
            sep = ""
        elif not sep:  # a new line, or the original last line that is no longer last
            sep = default
        elif j == last - 1 and not lines[last] and sep not in _EDITOR_TRAILING:
            sep = default  # the editor shows an empty last line only after these breaks
        if sep == "\n" and not line and out and out[-1].endswith("\r"):
            sep = "\r"  # "\r" + "" + "\n" would read as one "\r\n" break: one line fewer
        out.append(line + sep)
    return "".join(out) + tail
