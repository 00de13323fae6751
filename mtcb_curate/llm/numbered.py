"""Quotes exact by construction: a window shown with its sentences numbered, and the passage cut
back out of the window's own text from the number range the model names.

A small model rarely copies a quote character for character; it can name sentence numbers. The
window is cut into *units* (sentences of running text, and whole lines where the text is laid
out in lines: table rows, list items, headings, short lines), each given a number from 1
(:func:`sentence_map`). The model answers with the question, the answer and the first and last
number of the consecutive units that support it; :meth:`SentenceMap.passage` returns
``window_text[units[first].start:units[last].end]``, so the passage is a substring of the window,
and of the document, whatever the model wrote. A range that cannot be used (out of range,
reversed, too short or too long for the checklist's limits) is refused with feedback that names
what was wrong (:meth:`SentenceMap.range_problem`).

Unit rules (ours, for text extracted from PDF filings, Wikipedia articles and Markdown):

- Lines are read with ``\\r\\n``, ``\\r`` and ``\\n`` alike; a unit never contains a blank line.
- A line is a unit of its own (a *laid-out* line) when it holds a table cell separator (``|``
  or a tab), starts with a list marker (``•``, ``-``, ``*``, ``1.``, ``(a)``), or is short
  (under :data:`SHORT_LINE_SHARE` of the window's typical long line) and does not end in the
  middle of a sentence; a line holding only a list marker is joined to the next line.
- Other consecutive lines are running text (a wrapped paragraph) and are cut into sentences
  after ``.``, ``!`` or ``?`` (and any closing quote or bracket) followed by white space and an
  upper-case letter, digit, quote or bracket, except after a known abbreviation
  (:data:`ABBREVIATIONS`) or a single capital initial.
- A unit longer than :data:`MAX_UNIT_CHARS` is cut at the last ``; ``, ``, `` or space before
  that length, so that any passage the checklist allows can be named by a range.

The display (:meth:`SentenceMap.numbered_text`) writes each unit on one line as ``[n] text``
with its inner line breaks shown as spaces; only the display changes, never the passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

#: Most characters of one unit: longer sentences are cut (see the module docstring). Our bound:
#: half the checklist's default maximum passage (600), so a range can be as fine as needed.
MAX_UNIT_CHARS = 300
#: A line shorter than this share of the window's long lines (their 90th percentile length) is
#: "short": a heading, a table row, the last line of a paragraph. Our threshold for PDF text,
#: whose wrapped lines fill the width.
SHORT_LINE_SHARE = 0.6
#: Abbreviations after which a full stop does not end a sentence (lower case, without the stop).
ABBREVIATIONS = frozenset(
    "inc corp co ltd llc plc no nos mr mrs ms dr prof st jr sr vs etc e.g i.e u.s u.k fig figs approx "
    "dept est jan feb mar apr jun jul aug sep sept oct nov dec art sec secs vol pp op cf al".split())

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_LIST_MARKER = re.compile(r"^\s*(?:[•●▪◦‣∙·\-*–—]|\(?[0-9ivxlcdmIVXLCDM]{1,4}[.)]|\([a-zA-Z]\))(?:\s|$)")
_MARKER_ONLY = re.compile(r"^\s*(?:[•●▪◦‣∙·\-*–—]|\(?[0-9ivxlcdmIVXLCDM]{1,4}[.)]|\([a-zA-Z]\))\s*$")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"'“‘(\[A-Z0-9])")
_ENDS_SENTENCE = re.compile(r"[.!?:][\"'”’)\]]*\s*$")


@dataclass(frozen=True, slots=True)
class Unit:
    """One numbered unit: ``window_text[start:end]`` (no surrounding white space).

    Attributes:
        start, end: character offsets in the window text (end exclusive).
        kind: ``sentence`` (running text) or ``line`` (a laid-out line: table row, list item,
            heading, short line).
    """

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class SentenceMap:
    """A window's units, numbered from 1 in reading order (see the module docstring).

    Attributes:
        text: the window text the offsets refer to.
        units: the units in order; unit ``n`` (1-based) is ``units[n - 1]``.
    """

    text: str
    units: tuple[Unit, ...]

    def __len__(self) -> int:
        """Number of units."""
        return len(self.units)

    def unit_text(self, n: int) -> str:
        """The exact text of unit ``n`` (1-based). Raises IndexError out of range."""
        if not 1 <= n <= len(self.units):
            raise IndexError(n)
        u = self.units[n - 1]
        return self.text[u.start:u.end]

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Window character offsets ``(start, end)`` of units ``first`` to ``last`` (1-based,
        inclusive). Raises IndexError when the range is out of range or reversed."""
        if not (1 <= first <= last <= len(self.units)):
            raise IndexError((first, last))
        return self.units[first - 1].start, self.units[last - 1].end

    def passage(self, first: int, last: int) -> str:
        """The exact window text of units ``first`` to ``last`` (1-based, inclusive): a
        substring of the window by construction (with the white space between the units as
        it is in the window). Raises IndexError when the range is out of range or reversed."""
        s, e = self.span(first, last)
        return self.text[s:e]

    def range_of(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest unit range covering window offsets ``[start, end)``, or None when no
        unit overlaps them (1-based, inclusive)."""
        hit = [i + 1 for i, u in enumerate(self.units) if u.start < end and u.end > start]
        return (hit[0], hit[-1]) if hit else None

    @cached_property
    def _display(self) -> list[str]:
        return [" ".join(self.text[u.start:u.end].split()) for u in self.units]

    def display(self, n: int) -> str:
        """Unit ``n`` as shown to the model: on one line (inner white space runs as one space)."""
        return self._display[n - 1]

    def numbered_text(self) -> str:
        """The window as shown to the model: one unit a line, ``[n] text``."""
        return "\n".join(f"[{i}] {t}" for i, t in enumerate(self._display, 1))

    def range_problem(self, first: int, last: int, *, min_chars: int, max_chars: int,
                      min_units: int = 1) -> str | None:
        """Why units ``first``..``last`` cannot be the passage (a sentence for the model), or
        None. Checks, in order: numbers in range, not reversed, at least ``min_units`` units,
        at least ``min_chars`` and at most ``max_chars`` characters. The sentence proposes no
        other range: the caller proposes one only after checking it (see ``generate``)."""
        n = len(self.units)
        if n == 0:
            return "The window has no sentences to choose from."
        bad = [k for k in (first, last) if not 1 <= k <= n]
        if bad:
            return (f"Sentence {bad[0]} does not exist: the window's sentences are numbered 1 to {n}. "
                    "Give the numbers shown in square brackets before the sentences that support the answer.")
        if first > last:
            return (f"first_sentence {first} comes after last_sentence {last}: give the lower number as "
                    "first_sentence and the higher as last_sentence.")
        count = last - first + 1
        if count < min_units:
            return (f"Sentences {first} to {last} are {count} sentence{'s' if count != 1 else ''}; this run asks for "
                    f"evidence of at least {min_units} consecutive sentences (a list, a comparison or a summary "
                    "of a passage): ask a question whose answer needs all of them.")
        size = self.units[last - 1].end - self.units[first - 1].start
        if size < min_chars:
            shown = " ".join(self.passage(first, last).split())
            return (f'Sentences {first} to {last} ("{_short(shown, 80)}") hold {size} characters, fewer than the '
                    f"{min_chars} a supporting passage needs: a heading or a figure alone is not a passage. "
                    "Choose sentences that state the facts of the answer.")
        if size > max_chars:
            return (f"Sentences {first} to {last} hold {size:,} characters, more than the {max_chars:,} a supporting "
                    "passage may have: choose the fewest consecutive sentences that state the answer.")
        return None


def _short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with "…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sentence_map(text: str, *, max_unit_chars: int = MAX_UNIT_CHARS) -> SentenceMap:
    """Cut ``text`` (a window) into numbered units by the rules of the module docstring.

    Cost: linear in the text; about 10 ms for a 35,000-character window.
    """
    lines: list[tuple[int, int]] = []  # (start, end) of each line's content, without its break
    for m in _LINE.finditer(text):
        if m.start() == m.end():
            break
        content = m.group(0).rstrip("\r\n")
        lines.append((m.start(), m.start() + len(content)))
    lengths = sorted(e - s for s, e in lines if text[s:e].strip())
    wide = lengths[int(0.9 * (len(lengths) - 1))] if lengths else 0
    short = SHORT_LINE_SHARE * wide

    units: list[Unit] = []
    para: list[tuple[int, int]] = []  # running-text lines waiting to be cut into sentences
    pending_marker: int | None = None  # start of a line holding only a list marker

    def flush() -> None:
        if para:
            _sentences(text, para[0][0], para[-1][1], units, max_unit_chars)
            para.clear()

    for s, e in lines:
        body = text[s:e]
        if not body.strip():
            flush()
            continue
        ls = s + (len(body) - len(body.lstrip()))
        le = s + len(body.rstrip())
        if _MARKER_ONLY.match(body):
            flush()
            if pending_marker is None:
                pending_marker = ls
            continue
        if pending_marker is not None:
            flush()
            _add(text, pending_marker, le, "line", units, max_unit_chars)
            pending_marker = None
            continue
        laid_out = ("|" in body or "\t" in body.strip() or _LIST_MARKER.match(body) is not None)
        if laid_out:
            flush()
            _add(text, ls, le, "line", units, max_unit_chars)
            continue
        para.append((ls, le))
        if (le - ls) < short:
            # A short line ends its paragraph (a heading, a paragraph's last line, a table row).
            flush()
    flush()
    if pending_marker is not None:
        _add(text, pending_marker, len(text.rstrip()), "line", units, max_unit_chars)
    return SentenceMap(text, tuple(units))


def _sentences(text: str, start: int, end: int, out: list[Unit], max_chars: int) -> None:
    """Append the sentences of running text ``text[start:end]``."""
    chunk = text[start:end]
    pos = 0
    for m in _SENTENCE_END.finditer(chunk):
        stop = m.end()
        before = chunk[pos:m.start()]
        word = re.search(r"([A-Za-z][A-Za-z.]*)$", before)
        if word is not None:
            w = word.group(1).lower().rstrip(".")
            if w in ABBREVIATIONS or len(w) == 1:
                continue
        if chunk[pos:stop].strip():
            _add(text, start + pos, start + stop, "sentence", out, max_chars)
        pos = stop
    if chunk[pos:].strip():
        _add(text, start + pos, end, "sentence", out, max_chars)


def _add(text: str, start: int, end: int, kind: str, out: list[Unit], max_chars: int) -> None:
    """Append ``text[start:end]`` trimmed, cut into pieces of at most ``max_chars``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    while end - start > max_chars:
        piece = text[start:start + max_chars]
        cut = max(piece.rfind("; "), piece.rfind(", "))
        if cut < max_chars // 3:
            cut = piece.rfind(" ")
        if cut < max_chars // 3:
            cut = max_chars - 1
        stop = start + cut + 1
        out.append(Unit(start, _rstrip(text, start, stop), kind))
        start = stop
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        out.append(Unit(start, end, kind))


def _rstrip(text: str, start: int, end: int) -> int:
    """``end`` moved left past white space (not before ``start + 1``)."""
    while end > start + 1 and text[end - 1].isspace():
        end -= 1
    return end
