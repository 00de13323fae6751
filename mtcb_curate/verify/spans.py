"""Span boundaries in a document, for picking a passage by keys: the next or previous end of a
word, sentence, line, paragraph or table row, and the next occurrence of a typed string.

Every function takes the document ``text`` and a character offset ``pos`` and returns an
offset in ``[0, len(text)]``. The ``*_end_after`` functions return the first boundary that
takes in at least one more non-space character after ``pos`` (``len(text)`` when there is
none): the span ``[start, result)`` grows by one unit. The ``*_end_before`` functions return
the last boundary strictly before ``pos`` once trailing white space is set aside (0 when there
is none): the span shrinks by one unit. A returned end never includes trailing white space.

Units:

- word: a run of non-space characters;
- sentence: up to ``.``, ``!`` or ``?`` (with a closing quote or bracket) followed by white
  space, unless the word before the stop is an abbreviation (``Inc.``, ``U.S.``) or one letter;
  a paragraph end also ends a sentence (a heading or a table cell has no stop);
- line: up to a line break;
- paragraph: up to a blank line (a line of white space only);
- table row: a line and the lines of figures under it (10-K tables extracted from PDF put a
  row's label on one line and each value on its own: ``Net sales\\n$\\n34,229 $\\n35,355``).
  A line of figures holds no letters, or more digits than letters; a line with only symbols
  (``$``, ``%``) counts as one. A Markdown or pipe table has one row per line.

Pure and fast: each call reads only the text between ``pos`` and the boundary (backwards in
growing windows), so a key press on a 50 MB filing costs microseconds.
"""

from __future__ import annotations

import re

#: Sentence stop: punctuation (and closing quotes/brackets) followed by white space or the end.
_STOP = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s|$)")
#: A paragraph break: a line break, then a line of white space only (its start is the end).
_BLANK = re.compile(r"\n[ \t\u00a0\r]*\n")
_ABBREVIATIONS = frozenset("inc co corp ltd no nos mr mrs ms dr jr sr st vs etc approx fig e.g i.e u.s".split())
#: First window read backwards (characters); doubled until a boundary is found.
_BACK_WINDOW = 4096


def _skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


def _back_space(text: str, pos: int) -> int:
    while pos > 0 and text[pos - 1].isspace():
        pos -= 1
    return pos


def _last_before(text: str, limit: int, ends) -> int:
    """The largest boundary ``< limit`` that ``ends(lo, hi)`` yields (ascending) within
    ``text[lo:hi]``, searched backwards in doubling windows; 0 when none."""
    window = _BACK_WINDOW
    hi = limit
    while True:
        lo = max(0, limit - window)
        best = None
        for e in ends(lo, hi):
            if e < limit:
                best = e
        if best is not None:
            return best
        if lo == 0:
            return 0
        window *= 2


# -- words ------------------------------------------------------------------------------------


def word_end_after(text: str, pos: int) -> int:
    """The end of the next word after ``pos`` (``len(text)`` when only white space follows)."""
    n, i = len(text), _skip_space(text, pos)
    while i < n and not text[i].isspace():
        i += 1
    return i


def word_end_before(text: str, pos: int) -> int:
    """The end of the word before the one ending at (or containing) ``pos``."""
    i = _back_space(text, pos)
    if i == pos:
        while i > 0 and not text[i - 1].isspace():
            i -= 1
        i = _back_space(text, i)
    return i


# -- sentences --------------------------------------------------------------------------------


def _is_stop(text: str, m: re.Match[str]) -> bool:
    """A real sentence stop: not after an abbreviation or a single letter (``U.S.``, ``J.``)."""
    if text[m.start()] != ".":
        return True
    word = re.search(r"([\w.]+)$", text[max(0, m.start() - 40):m.start()])
    if word is None:
        return True
    w = word.group(1).lower().rstrip(".")
    return not (w in _ABBREVIATIONS or len(w) == 1)


def _sentence_ends(text: str, lo: int, hi: int):
    """Sentence ends in ``text[lo:hi]``, ascending (stops and paragraph ends)."""
    ends: list[int] = []
    for m in _STOP.finditer(text, lo, hi):
        if _is_stop(text, m):
            ends.append(m.end())
    for m in _BLANK.finditer(text, lo, hi):
        ends.append(_back_space(text, m.start() + 1))
    if hi == len(text):
        ends.append(_back_space(text, hi))
    return sorted(set(ends))


def sentence_end_after(text: str, pos: int) -> int:
    """The end of the sentence that takes in the next non-space character after ``pos``
    (``pos`` itself when only white space follows)."""
    start = _skip_space(text, pos)
    if start >= len(text):
        return pos
    stop = next((m.end() for m in _STOP.finditer(text, start) if m.end() > start and _is_stop(text, m)), None)
    blank = _BLANK.search(text, start, len(text) if stop is None else stop)
    if blank is not None:
        return _back_space(text, blank.start() + 1)
    return _back_space(text, len(text)) if stop is None else stop


def sentence_end_before(text: str, pos: int) -> int:
    """The end of the sentence before the one ending at (or containing) ``pos``; 0 when none."""
    limit = _back_space(text, pos)
    return _last_before(text, limit, lambda lo, hi: _sentence_ends(text, lo, hi))


# -- lines ------------------------------------------------------------------------------------


def line_end_after(text: str, pos: int) -> int:
    """The end of the line that takes in the next non-space character after ``pos`` (``pos``
    itself when only white space follows)."""
    start = _skip_space(text, pos)
    if start >= len(text):
        return pos
    i = text.find("\n", start)
    return _back_space(text, len(text) if i < 0 else i)


def line_end_before(text: str, pos: int) -> int:
    """The end of the last line ending before ``pos`` (its trailing white space set aside); 0
    when none."""
    i = text.rfind("\n", 0, _back_space(text, pos))
    return 0 if i < 0 else _back_space(text, i)


# -- paragraphs -------------------------------------------------------------------------------


def paragraph_end_after(text: str, pos: int) -> int:
    """The end of the paragraph that takes in the next non-space character after ``pos``
    (``pos`` itself when only white space follows)."""
    start = _skip_space(text, pos)
    if start >= len(text):
        return pos
    m = _BLANK.search(text, start)
    return _back_space(text, len(text) if m is None else m.start() + 1)


def paragraph_end_before(text: str, pos: int) -> int:
    """The end of the paragraph before the one ending at (or containing) ``pos``; 0 when none."""
    limit = _back_space(text, pos)

    def ends(lo: int, hi: int) -> list[int]:
        return [_back_space(text, m.start() + 1) for m in _BLANK.finditer(text, lo, hi)]

    return _last_before(text, limit, ends)


# -- table rows -------------------------------------------------------------------------------


def is_figure_line(line: str) -> bool:
    """A line of a table row's values: not blank, and no letters or more digits than letters
    (``34,229 $``, ``(4.2) %``, ``$``, ``—``). A line with cells of its own (``|`` or a tab)
    is a whole row, never one."""
    s = line.strip()
    if not s or "|" in s or "\t" in s:
        return False
    letters = sum(c.isalpha() for c in s)
    if letters == 0:
        return True
    return sum(c.isdigit() for c in s) > letters


def _line_at(text: str, pos: int) -> tuple[int, int]:
    """``(start, end)`` of the line holding ``pos`` (end at its line break, exclusive)."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, len(text) if end < 0 else end


def row_end_after(text: str, pos: int) -> int:
    """The end of the table row that takes in the next non-space character after ``pos``: its
    line, then every line of figures right under it (``pos`` itself when only white space
    follows)."""
    n = len(text)
    start = _skip_space(text, pos)
    if start >= n:
        return pos
    _, end = _line_at(text, start)
    while end < n:
        nxt_start = end + 1
        nxt_end = text.find("\n", nxt_start)
        nxt_end = n if nxt_end < 0 else nxt_end
        if not is_figure_line(text[nxt_start:nxt_end]):
            break
        end = nxt_end
    return _back_space(text, end)


def row_end_before(text: str, pos: int) -> int:
    """The end of the table row before the one ending at (or containing) ``pos``: the last
    line end before it that is followed by a line that is not one of figures; 0 when none."""
    limit = _back_space(text, pos)
    i = text.rfind("\n", 0, limit)
    while i >= 0:
        nxt_end = text.find("\n", i + 1)
        if not is_figure_line(text[i + 1:len(text) if nxt_end < 0 else nxt_end]):
            return _back_space(text, i)
        i = text.rfind("\n", 0, i)
    return 0


# -- by name ----------------------------------------------------------------------------------

#: The units of :func:`extend_end` / :func:`shrink_end`.
UNITS = ("word", "sentence", "line", "paragraph", "row")

_AFTER = {"word": word_end_after, "sentence": sentence_end_after, "line": line_end_after,
          "paragraph": paragraph_end_after, "row": row_end_after}
_BEFORE = {"word": word_end_before, "sentence": sentence_end_before, "line": line_end_before,
           "paragraph": paragraph_end_before, "row": row_end_before}


def extend_end(text: str, start: int, end: int, unit: str) -> int:
    """The span ``[start, end)``'s end grown by one ``unit`` (one of :data:`UNITS`).

    Raises:
        ValueError: an unknown unit.
    """
    if unit not in _AFTER:
        raise ValueError(f"unknown unit {unit!r}: one of {', '.join(UNITS)}")
    return max(start, _AFTER[unit](text, end))


def shrink_end(text: str, start: int, end: int, unit: str) -> int:
    """The span ``[start, end)``'s end moved back by one ``unit``, never before ``start``: when
    the unit's previous boundary is at or before ``start``, the end stays (a span is never
    emptied by a shrink key).

    Raises:
        ValueError: an unknown unit.
    """
    if unit not in _BEFORE:
        raise ValueError(f"unknown unit {unit!r}: one of {', '.join(UNITS)}")
    e = _BEFORE[unit](text, end)
    return e if e > start else end


# -- typed string -----------------------------------------------------------------------------


def find_next(text: str, query: str, pos: int) -> int | None:
    """The offset of the next occurrence of ``query`` at or after ``pos``, wrapping to the start
    of the text; None when there is none (or ``query`` is empty). Smart case: a query with an
    upper-case letter matches case exactly; an all lower-case one matches any case."""
    if not query:
        return None
    pos = max(0, min(pos, len(text)))
    if any(c.isupper() for c in query):
        i = text.find(query, pos)
        return i if i >= 0 else (j if (j := text.find(query, 0, pos + len(query) - 1)) >= 0 else None)
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    m = pattern.search(text, pos) or pattern.search(text, 0, min(len(text), pos + len(query) - 1))
    return m.start() if m else None
