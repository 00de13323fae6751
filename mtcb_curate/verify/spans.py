"""Span boundaries in a document, for picking a passage by keys: the next or previous end of a
word, sentence, line, paragraph or table row, and the next occurrence of a typed string.

Every function takes the document ``text`` and a character offset ``pos`` and returns an
offset in ``[0, len(text)]``. The ``*_end_after`` functions return the first boundary that
takes in at least one more non-space character after ``pos`` (``len(text)`` when there is
none): the span ``[start, result)`` grows by one unit. The ``*_end_before`` functions return
the last boundary strictly before ``pos`` once trailing white space is set aside (0 when there
is none): the span shrinks by one unit. A returned end never includes trailing white space.

Units, for text as PDF extractors give it (hard-wrapped lines, pages joined by a blank line,
table cells one per line):

- word: a run of non-space characters;
- sentence: up to ``.``, ``!`` or ``?`` (with a closing quote or bracket) followed by white
  space, unless the word before the stop is an abbreviation (``Inc.``, ``U.S.``) or one
  character; the end of a short line (at most :data:`SHORT_LINE_CHARS` characters: a heading,
  a table cell, the last line of a paragraph) and a paragraph end also end one, as in the
  shrink's units (``verify.shrink``);
- line: up to a line break;
- paragraph: up to a blank line (a line of white space only), or up to a line that ends with a
  sentence stop and is shorter than :data:`PARAGRAPH_LAST_LINE` of the longest line around it
  (the short last line of a hard-wrapped paragraph) or comes before a short line without a
  stop (a heading);
- table row: a label and its cells as extracted: the label's line (with up to
  :data:`MAX_LABEL_LINES` lines when a long label wraps), then every line of figures under it,
  white-space-only lines between them included (10-K tables extracted from PDF put each value
  on its own line: ``Net sales\\n$\\n34,229 $\\n \\n35,355``). A line of figures holds no
  letters, or more digits than letters; a line with only symbols (``$``, ``%``, ``—``) counts
  as one. A label ending in ``:`` (``Current assets:``) is a row of its own. A Markdown or
  pipe table has one row per line.

:func:`extend_end` and :func:`shrink_end` always move when the span allows it: a unit with no
boundary before the end of the text (or after the span's start) falls back to the next
smaller one (paragraph, sentence, line, word).

:func:`find` finds a typed string the way verification compares text (``verify.normalize``):
every run of white space (NBSP and line breaks included) matches any run, every quote or
apostrophe any quote, every dash any dash; smart case.

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
#: A line of at most this many characters (stripped) ends a sentence at its line break (the
#: shrink's ``SHORT_LINE_CHARS``).
SHORT_LINE_CHARS = 60
#: A line ending with a stop ends its paragraph when it is shorter than this share of the
#: longest line among the :data:`_NEIGHBOUR_LINES` lines on each side of it.
PARAGRAPH_LAST_LINE = 0.8
_NEIGHBOUR_LINES = 3
#: A table row's label takes at most this many lines (a long label wrapped by the extractor).
MAX_LABEL_LINES = 3
#: A label line at least this long (stripped) may continue on the next line.
_WRAPPED_LABEL_CHARS = 60
#: Lines read ahead when looking for a row's cells or a paragraph's end.
_LOOKAHEAD_LINES = 400


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


def _line_at(text: str, pos: int) -> tuple[int, int]:
    """``(start, end)`` of the line holding ``pos`` (end at its line break, exclusive)."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, len(text) if end < 0 else end


def _lines_from(text: str, start: int):
    """``(start, end)`` of each line from the line starting at ``start`` on."""
    n = len(text)
    while start <= n:
        end = text.find("\n", start)
        end = n if end < 0 else end
        yield start, end
        if end >= n:
            return
        start = end + 1


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
    """A real sentence stop: not after an abbreviation or a single character (``U.S.``, ``J.``,
    ``ITEM 7.``)."""
    if text[m.start()] != ".":
        return True
    word = re.search(r"([\w.]+)$", text[max(0, m.start() - 40):m.start()])
    if word is None:
        return True
    w = word.group(1).lower().rstrip(".")
    return not (w in _ABBREVIATIONS or len(w) == 1)


def _short_line_ends(text: str, lo: int, hi: int) -> list[int]:
    """Ends of the short lines (:data:`SHORT_LINE_CHARS`) whose line break lies in ``[lo, hi)``."""
    out = []
    i = text.find("\n", lo, hi)
    while i >= 0:
        a = text.rfind("\n", 0, i) + 1
        s = text[a:i].strip()
        if s and len(s) <= SHORT_LINE_CHARS:
            out.append(_back_space(text, i))
        i = text.find("\n", i + 1, hi)
    return out


def _sentence_ends(text: str, lo: int, hi: int) -> list[int]:
    """Sentence ends in ``text[lo:hi]``, ascending (stops, short line ends, paragraph ends)."""
    ends: list[int] = []
    for m in _STOP.finditer(text, lo, hi):
        if _is_stop(text, m):
            ends.append(m.end())
    ends += _short_line_ends(text, lo, hi)
    ends += _paragraph_ends(text, lo, hi)
    if hi == len(text):
        ends.append(_back_space(text, hi))
    return sorted(set(ends))


def sentence_end_after(text: str, pos: int) -> int:
    """The end of the sentence that takes in the next non-space character after ``pos``
    (``pos`` itself when only white space follows)."""
    start = _skip_space(text, pos)
    n = len(text)
    if start >= n:
        return pos
    window = _BACK_WINDOW
    while True:
        hi = min(n, start + window)
        ends = [e for e in _sentence_ends(text, start, hi) if e > start]
        # an end found well inside the window is final; one near its edge may be a line whose
        # break lies past it: look again with a bigger window
        if ends and (hi == n or ends[0] < hi - 1):
            return ends[0]
        if hi == n:
            return _back_space(text, n)
        window *= 2


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


def _is_last_line(text: str, a: int, b: int) -> bool:
    """The line ``text[a:b]`` ends its paragraph: it ends with a sentence stop, and it is
    shorter than :data:`PARAGRAPH_LAST_LINE` of the longest line among its neighbours or the
    next line is a short one without a stop (a heading). Blank lines are the caller's."""
    s = text[a:b].rstrip()
    if not s or not _STOP.search(s, len(s) - 3 if len(s) > 3 else 0) or s[-1] not in ".!?\"'\u201d\u2019)]":
        return False
    m = _STOP.search(s, max(0, len(s) - 4))
    if m is None or m.end() != len(s) or not _is_stop(s, m):
        return False
    longest = 0
    # lines before
    i, k = a, 0
    while i > 0 and k < _NEIGHBOUR_LINES:
        j = text.rfind("\n", 0, i - 1) + 1
        longest = max(longest, len(text[j:i - 1].strip()))
        i, k = j, k + 1
    # lines after
    i, k = b, 0
    n = len(text)
    while i < n and k < _NEIGHBOUR_LINES:
        j = text.find("\n", i + 1)
        j = n if j < 0 else j
        longest = max(longest, len(text[i + 1:j].strip()))
        i, k = j, k + 1
    if len(s.strip()) < PARAGRAPH_LAST_LINE * longest:
        return True
    # a short line right after it (a heading, a list item's label) starts something new
    n = len(text)
    j = text.find("\n", b + 1) if b < n else -1
    nxt = text[b + 1:n if j < 0 else j].strip() if b < n else ""
    return 0 < len(nxt) <= SHORT_LINE_CHARS and not _STOP.search(nxt)


def _paragraph_ends(text: str, lo: int, hi: int) -> list[int]:
    """Paragraph ends whose line break lies in ``text[lo:hi]`` (ascending): blank lines and
    short last lines ending with a stop."""
    ends = [_back_space(text, m.start() + 1) for m in _BLANK.finditer(text, lo, hi)]
    i = text.find("\n", lo, hi)
    while i >= 0:
        a = text.rfind("\n", 0, i) + 1
        if _is_last_line(text, a, i):
            ends.append(_back_space(text, i))
        i = text.find("\n", i + 1, hi)
    return sorted(set(e for e in ends if e > 0))


def paragraph_end_after(text: str, pos: int) -> int:
    """The end of the paragraph that takes in the next non-space character after ``pos``
    (``pos`` itself when only white space follows)."""
    start = _skip_space(text, pos)
    n = len(text)
    if start >= n:
        return pos
    window = _BACK_WINDOW
    while True:
        hi = min(n, start + window)
        ends = [e for e in _paragraph_ends(text, start, hi) if e > start]
        if ends:
            return ends[0]
        if hi == n:
            return _back_space(text, n)
        window *= 2


def paragraph_end_before(text: str, pos: int) -> int:
    """The end of the paragraph before the one ending at (or containing) ``pos``; 0 when none."""
    limit = _back_space(text, pos)
    return _last_before(text, limit, lambda lo, hi: _paragraph_ends(text, lo, hi))


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


def _row_end_from(text: str, start: int) -> int:
    """The end of the row whose label's first line starts at ``start`` (a line start of a line
    that is not one of figures): the label's lines and the cells under them, or the label's
    first line alone when no cells follow it."""
    lines = _lines_from(text, start)
    a, b = next(lines)
    first_end = b
    label = text[a:b].strip()
    if label.endswith(":"):
        return _back_space(text, first_end)
    n_label, end, cells, blank = 1, b, False, False
    for k, (a, b) in enumerate(lines):
        if k > _LOOKAHEAD_LINES or a == b:  # an empty line: a page join ends the row
            break
        line = text[a:b]
        if not line.strip():  # white space only: inside a row's cells as extracted
            blank = True
            continue
        if is_figure_line(line):
            cells, end = True, b
            continue
        if cells or blank or n_label >= MAX_LABEL_LINES or len(label) < _WRAPPED_LABEL_CHARS \
                or label[-1] in ".:;!?":
            break  # the next row (or prose): the label does not wrap onto it
        label, n_label, end = line.strip(), n_label + 1, b  # a long label wrapped by the extractor
    return _back_space(text, end if cells else first_end)


def _row_start_at(text: str, pos: int) -> int:
    """The start of the line holding ``pos``."""
    return text.rfind("\n", 0, pos) + 1


def row_end_after(text: str, pos: int) -> int:
    """The end of the table row that takes in the next non-space character after ``pos``: its
    label's line(s) and every line of figures under it (``pos`` itself when only white space
    follows). From inside a row's figures, the rest of its figures."""
    n = len(text)
    start = _skip_space(text, pos)
    if start >= n:
        return pos
    line_start = _row_start_at(text, start)
    if is_figure_line(text[line_start:_line_at(text, start)[1]]):
        # inside a row's cells: the cells that follow
        end = _line_at(text, start)[1]
        for a, b in _lines_from(text, end + 1 if end < n else n):
            line = text[a:b]
            if a == b:
                break  # an empty line: a page join ends the row
            if not line.strip():
                continue
            if not is_figure_line(line):
                break
            end = b
        return _back_space(text, end)
    return max(_row_end_from(text, line_start), _back_space(text, _line_at(text, start)[1]))


def _row_ends(text: str, lo: int, hi: int) -> list[int]:
    """Row ends found walking rows forward from the first line start at or after ``lo`` up to
    ``hi`` (ascending; the first row may be cut by ``lo``)."""
    out = []
    pos = text.rfind("\n", 0, lo) + 1 if lo else 0
    pos = _skip_space(text, pos)
    n = len(text)
    while pos < min(hi, n):
        e = row_end_after(text, pos)
        if e <= pos:
            break
        out.append(e)
        pos = _skip_space(text, e)
    return out


def row_end_before(text: str, pos: int) -> int:
    """The end of the table row before the one ending at (or containing) ``pos``; 0 when none."""
    limit = _back_space(text, pos)
    return _last_before(text, limit, lambda lo, hi: _row_ends(text, lo, hi))


def table_rows(text: str, min_lines: int = 12) -> list[str] | None:
    """``text`` shown a table row a line, for reading: each row's lines (its label and its cells,
    :func:`row_end_after`) stripped and joined by two spaces, white-space-only lines dropped
    (``"Net sales\\n$\\n34,229 $\\n35,355"`` -> ``"Net sales  $  34,229 $  35,355"``). None for
    text of fewer than ``min_lines`` lines or where rows do not gather at least two lines on
    average (prose: nothing to gain). A display only: the text itself keeps its line breaks."""
    lines = text.count("\n") + 1
    if lines < min_lines:
        return None
    out: list[str] = []
    pos = 0
    n = len(text)
    while pos < n:
        end = row_end_after(text, pos)
        if end <= pos:
            break
        row = "  ".join(part.strip() for part in text[pos:end].split("\n") if part.strip())
        if row:
            out.append(row)
        pos = end
    return out if out and len(out) * 2 <= lines else None


# -- by name ----------------------------------------------------------------------------------

#: The units of :func:`extend_end` / :func:`shrink_end`.
UNITS = ("word", "sentence", "line", "paragraph", "row")

_AFTER = {"word": word_end_after, "sentence": sentence_end_after, "line": line_end_after,
          "paragraph": paragraph_end_after, "row": row_end_after}
_BEFORE = {"word": word_end_before, "sentence": sentence_end_before, "line": line_end_before,
           "paragraph": paragraph_end_before, "row": row_end_before}
#: When a unit cannot move, the next smaller one is tried.
_SMALLER = {"paragraph": "sentence", "row": "line", "sentence": "line", "line": "word"}


def extend_end(text: str, start: int, end: int, unit: str) -> int:
    """The span ``[start, end)``'s end grown by one ``unit`` (one of :data:`UNITS`); a unit
    that cannot grow it (none ends before the text's end) falls back to a smaller one.

    Raises:
        ValueError: an unknown unit.
    """
    if unit not in _AFTER:
        raise ValueError(f"unknown unit {unit!r}: one of {', '.join(UNITS)}")
    while True:
        e = max(start, _AFTER[unit](text, end))
        if e > end or unit not in _SMALLER:
            return e
        unit = _SMALLER[unit]


def shrink_end(text: str, start: int, end: int, unit: str) -> int:
    """The span ``[start, end)``'s end moved back by one ``unit``, never to ``start`` or before:
    when the unit's previous boundary is at or before ``start``, a smaller unit is tried (a
    paragraph, then a sentence, a line, a word), and when none fits the end stays (a span is
    never emptied by a shrink key).

    Raises:
        ValueError: an unknown unit.
    """
    if unit not in _BEFORE:
        raise ValueError(f"unknown unit {unit!r}: one of {', '.join(UNITS)}")
    while True:
        e = _BEFORE[unit](text, end)
        if start < e < end:
            return e
        if unit not in _SMALLER:
            return end
        unit = _SMALLER[unit]


# -- typed string -----------------------------------------------------------------------------

_SPACE_CLASS = r"\s+"
_QUOTE_CLASS = "['\"`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2032\u2033\u00b4]"
_DASH_CLASS = "[-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d]"
_QUOTES = set(_QUOTE_CLASS[1:-1])
_DASHES = set(_DASH_CLASS[1:-1].replace("-", "", 1)) | {"-"}


def search_pattern(query: str) -> re.Pattern[str] | None:
    """The regular expression :func:`find` uses for ``query``: white space runs match any run
    of white space (NBSP and line breaks included), a quote any quote, a dash any dash; smart
    case (an upper-case letter in ``query``: exact case, else any case). None for a query of
    white space only."""
    if not query.strip():
        return None
    parts: list[str] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            while i < n and query[i].isspace():
                i += 1
            parts.append(_SPACE_CLASS)
            continue
        parts.append(_QUOTE_CLASS if c in _QUOTES else _DASH_CLASS if c in _DASHES else re.escape(c))
        i += 1
    flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
    return re.compile("".join(parts), flags)


def find(text: str, query: str, pos: int, *, wrap: bool = True) -> tuple[int, int] | None:
    """The next occurrence of ``query`` at or after ``pos``, normalized as verification
    compares text (see :func:`search_pattern`), as ``(start, end)`` character offsets of
    ``text`` (the match may be longer or shorter than ``query``: ``"Net cash"`` matches
    ``"Net\\u00a0cash"`` and ``"Net\\ncash"``); with ``wrap``, from the start of the text when
    there is none after ``pos``. None when there is none (or the query is blank)."""
    pattern = search_pattern(query)
    if pattern is None:
        return None
    pos = max(0, min(pos, len(text)))
    m = pattern.search(text, pos)
    if m is None and wrap and pos > 0:
        m = pattern.search(text, 0, min(len(text), pos + len(query) * 4))
    return (m.start(), m.end()) if m else None


def find_next(text: str, query: str, pos: int) -> int | None:
    """The start offset of :func:`find`'s match (wrapping), or None."""
    got = find(text, query, pos)
    return None if got is None else got[0]
