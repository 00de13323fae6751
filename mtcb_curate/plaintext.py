"""Untrusted text (documents, LLM output) made safe to put on a terminal.

Text from a dataset is never interpreted: the TUI wraps it in ``rich.text.Text`` (no markup),
and this module makes control characters visible so that an ANSI escape sequence in a filing
shows as ``␛[31m`` instead of recolouring the terminal.

The mapping is one character to one character, so character offsets into the original text
(the offsets of a located supporting passage, for example) stay valid on the display string.
"""

from __future__ import annotations

import html
import re

# C0 controls (U+0000..U+001F) map to the Unicode "Control Pictures" block (U+2400..U+241F),
# DEL to U+2421; C1 controls (U+0080..U+009F) and lone surrogates to U+FFFD. Tab becomes a space
# and newline is left alone (callers split lines on it).
_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}
_TABLE[0x7F] = "\u2421"
_TABLE.update({c: "\ufffd" for c in range(0x80, 0xA0)})
_TABLE[0x09] = " "
_TABLE_KEEP_NEWLINE = dict(_TABLE)
del _TABLE_KEEP_NEWLINE[0x0A]
# The characters each table changes, plus lone surrogates: one regex scan tells whether a text
# needs any work, so a clean 1 MB filing costs one scan instead of a full ``str.translate``.
_CHANGED_KEEP_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_CHANGED = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def has_control(text: str, *, keep_newlines: bool = True) -> bool:
    """True when ``printable`` would change ``text`` (control characters or lone surrogates)."""
    return (_CHANGED_KEEP_NEWLINE if keep_newlines else _CHANGED).search(text) is not None


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """Return ``text`` with every control character replaced by a visible stand-in.

    Args:
        text: any string, possibly with control characters or lone surrogates.
        keep_newlines: leave ``\\n`` as is (default); when False it shows as ``␊``.

    Returns:
        A string of exactly ``len(text)`` characters (offsets are preserved) with no character
        a terminal would act on. Lone surrogates (invalid UTF-16 halves) become U+FFFD.
    """
    if not has_control(text, keep_newlines=keep_newlines):
        return text
    out = text.translate(_TABLE_KEEP_NEWLINE if keep_newlines else _TABLE)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:
        out = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in out)
    return out


def one_line(text: str, width: int) -> str:
    """Collapse ``text`` to a single printable line of at most ``width`` characters.

    Newlines and runs of whitespace become one space; an ellipsis marks a cut.
    """
    # Collapse whitespace first (\r, \f and \v too), then make the remaining controls visible.
    flat = printable(" ".join(text.split()), keep_newlines=False)
    if len(flat) <= width:
        return flat
    return flat[: max(0, width - 1)] + "…"


#: Characters that act as Markdown anywhere in a line: a backslash, code, emphasis with ``*``,
#: link and image brackets, a table cell break, strikethrough.
_MD_ANYWHERE = re.compile(r"([\\`*\[\]|~])")
#: ``_`` makes emphasis only at a word's edge: CommonMark never opens or closes emphasis with an
#: underscore between two letters or digits (``unique_passage`` stays as it is).
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: A heading, list or ordered-list marker, which acts only at the start of a line (a value may
#: follow "- " in a list item) and only when a space or the end follows it.
_MD_LEAD = re.compile(r"^([#+\-])(?=\s|$)|^(\d{1,9})([.)])(?=\s|$)")
_MD_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+")


def escape_md(value: object, max_chars: int = 300) -> str:
    """Untrusted text made inert in Markdown (CommonMark with GitHub's tables, as the Hub renders
    a card), escaped no more than needed so the raw card reads as plain text too.

    Newlines and other control characters become one space; ``& < >`` become entities (so no
    tag, autolink or ``<!--`` marker can form); ``\\ ` * [ ] | ~`` get a backslash everywhere,
    ``_`` only at a word's edge, and a heading or list marker only at the start (``10-K``,
    ``unique_passage`` and ``#2`` stay as they are). The result renders as the text it was
    given in a paragraph, a list item or a table cell. Longer values are cut to ``max_chars``
    characters with an ellipsis. (The dataset card, ``hub.card``, re-exports it.)
    """
    s = _MD_CONTROL.sub(" ", str(value)).strip()
    if len(s) > max_chars:
        s = s[: max_chars - 1] + "…"
    s = html.escape(s, quote=False)
    s = _MD_ANYWHERE.sub(r"\\\1", s)
    s = _MD_EDGE_UNDERSCORE.sub(r"\\_", s)
    return _MD_LEAD.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), s, count=1)
