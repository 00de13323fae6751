"""The lexical "shrink" repair: the shortest run of whole units of a passage that still holds
what the answer needs, proposed to the curator (MTCB's checklist: "Passages are minimal
sufficient context").

Offline and fast (well under 100 ms for a 3,500-character table passage). The passage is cut
into units: sentences for prose (a line break ends a sentence only after sentence punctuation or
after a short line, so hard-wrapped prose keeps its sentences whole), which makes every short
line of a table, or of a line-structured block, a unit of its own (a table row, a line). The
proposal is the shortest contiguous run of units (in characters), widened to whole table rows
(a row's label line and all its lines of figures), that holds:

- every figure of the answer (a year only when the passage holds it): numbers compared as digit strings, so ``1,234.5``, ``$1,234.50``,
  ``(1,234.5)`` and ``1234.5 %`` are one figure (``$1.2 billion`` is ``1.2``: a figure written in
  another unit, ``$1,200 million``, is not recognised); single-digit list markers ``(1) ...`` are
  not figures. When a figure of the answer is not in the passage at all (an answer computed from
  it, ``24.26``) nothing is proposed: the passage cannot be shown to keep it;
- every content word of the answer that the whole passage holds (``checks`` ``content_words``:
  lower case, stopwords removed);
- inside a table, the table's header (its first lines up to the first row of figures), when the
  run with it stays within ``max_chars``. A passage must stay ONE contiguous verbatim quote, so a
  header far above the rows is joined only by taking every row in between; when that is too
  long the rows are proposed without it, and the reason says so (with the figures and words only
  the header held, which the proposal then lacks).

A run shorter than ``min_chars`` grows by whole units (the next one first) up to that length.
The proposal is an exact substring of the passage, trimmed of edge whitespace, with its offsets
in the passage: ``passage[p.start:p.end] == p.text``. Nothing is proposed when the passage is
already minimal, or when the answer gives nothing to keep (no figure and under half of its
content words in the passage, the ``answerable`` threshold). :func:`plan_shrink` says why;
:func:`shrink_lexical` returns the proposal or None.

Nothing here changes a pair: the app applies a proposal as an edit (undoable, re-verified).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mtcb_curate.verify.words import MIN_ANSWER_OVERLAP, content_words

#: Longest proposal aimed at (characters): the checklist's default ``max_passage_chars``.
MAX_CHARS = 600
#: Shortest proposal (characters): the checklist's default ``min_passage_chars``.
MIN_CHARS = 30
#: A line of at most this many characters (stripped) ends a unit at its line break: a table
#: cell, a heading, a short line of a list. Longer lines are hard-wrapped prose and continue.
SHORT_LINE_CHARS = 60
#: Passages longer than this are not split (a runaway edit: no MTCB chunk holds one; the split is
#: linear, about 0.25 s for 50,000 characters of one-number lines).
MAX_PASSAGE_CHARS = 50_000

#: Answer words that are not content to keep ("Yes, ..." / "No, ...").
_NOT_CONTENT = frozenset({"yes", "no"})
_NUMBER = re.compile(r"(?<![0-9])[0-9][0-9,]*(?:\.[0-9]+)?")
_LIST_MARKER = re.compile(r"\(\d\)(?=\s+\w)")
_YEAR = re.compile(r"(?:19|20)\d\d")
# A sentence ends after . ! ? (and a closing quote or bracket) before white space and a capital,
# a digit or an opening quote/bracket: unless the word before the stop is an abbreviation.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]?[ \t\u00a0]+(?=[A-Z0-9\"'\u201c\u2018(\[])")
_ABBREVIATIONS = frozenset("inc co corp ltd no nos mr mrs ms dr jr sr st vs etc approx fig e.g i.e u.s".split())


@dataclass(frozen=True, slots=True)
class ShrinkProposal:
    """A shorter passage proposed by :func:`shrink_lexical`.

    Attributes:
        text: the new passage, an exact substring of the old one with no edge whitespace.
        start, end: its character offsets in the old passage (end exclusive):
            ``passage[start:end] == text``; add the passage's offset in the document to get
            document offsets.
        unit: the unit of the run: ``sentence``, ``line`` or ``table row``.
        keeps: the answer's figures (as written in the answer) and content words it holds.
        reason: one line for the curator (what was cut, the header, what is missing).
        with_header: inside a table: whether the table's header is included; None outside a table.
        dropped: the answer's figures and words the old passage held and this one does not
            (only ever the ones held by a table header left out).
    """

    text: str
    start: int
    end: int
    unit: str
    keeps: tuple[str, ...]
    reason: str
    with_header: bool | None = None
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ShrinkOutcome:
    """What :func:`plan_shrink` found: a proposal, or None and why (one line)."""

    proposal: ShrinkProposal | None
    reason: str


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int          # exclusive; text[start:end] has no edge whitespace
    line: bool        # the unit is one whole line
    table: bool       # ... a line of a table (short or mostly figures)
    data: bool        # ... a line of figures (a table row's values)
    items: frozenset[int] = field(default=frozenset())


def figure_key(number: str) -> str:
    """A number as a digit string to compare: no thousands separators, no trailing zeros after
    the decimal point (``"1,234.50"`` -> ``"1234.5"``, ``"27.0"`` -> ``"27"``, ``"007"`` -> ``"7"``)."""
    n = number.replace(",", "")
    if "." in n:
        n = n.rstrip("0").rstrip(".")
    n = n.lstrip("0")
    if not n or n.startswith("."):
        n = "0" + n
    return n


def answer_figures(answer: str) -> dict[str, str]:
    """The figures of ``answer``: ``{figure_key: the number as written}``, in order, without
    single-digit list markers ``(1) ...``."""
    text = _LIST_MARKER.sub(" ", answer)
    out: dict[str, str] = {}
    for m in _NUMBER.finditer(text):
        raw = m.group().rstrip(",.")
        out.setdefault(figure_key(raw), raw)
    return out


def text_figures(text: str) -> set[str]:
    """Every number of ``text`` as a :func:`figure_key`."""
    return {figure_key(m.group().rstrip(",.")) for m in _NUMBER.finditer(text)}


_figures = text_figures


def _words(text: str) -> set[str]:
    return {w for w in content_words(text) if not any(c.isdigit() for c in w) and w not in _NOT_CONTENT}


def _is_data_line(s: str) -> bool:
    """Mostly figures, and at least one that is not a year: ``34,229 $``, ``(4.2) %``."""
    digits = sum(c.isdigit() for c in s)
    letters = sum(c.isalpha() for c in s)
    if digits == 0 or letters > digits:
        return False
    return any(not _YEAR.fullmatch(m.group().replace(",", "")) for m in _NUMBER.finditer(s))


def _units(passage: str) -> list[_Unit]:
    """Sentences and short lines of ``passage`` (see the module docstring), in order."""
    units: list[_Unit] = []
    pending: int | None = None  # start of a sentence continuing over a line break
    pos = 0
    n = len(passage)
    while pos < n:
        nl = passage.find("\n", pos)
        line_end = n if nl < 0 else nl
        raw = passage[pos:line_end]
        s = raw.strip()
        if s:
            lead = pos + (len(raw) - len(raw.lstrip()))
            tail = lead + len(s)
            short = len(s) <= SHORT_LINE_CHARS
            # sentence ends inside the line
            cut = lead if pending is None else pending
            for m in _SENTENCE_END.finditer(passage, lead, tail):
                word = re.search(r"([\w.]+)$", passage[max(lead, m.start() - 40):m.start()])
                if word and (word.group(1).lower().rstrip(".") in _ABBREVIATIONS or len(word.group(1)) == 1):
                    continue
                stop = m.start() + len(m.group().rstrip(" \t\u00a0"))
                units.append(_Unit(cut, stop, False, False, False))
                cut = m.end()
            if short or s[-1] in ".!?:;":
                # A table row: a short line, or a line of figures under its (maybe long) label.
                whole = cut == lead and pending is None
                data = _is_data_line(s) and (whole or not _SENTENCE_END.search(passage, cut, tail))
                units.append(_Unit(cut, tail, whole or data, data or (whole and short), data))
                pending = None
            else:
                pending = cut
        elif pending is not None:  # a blank line ends a paragraph
            last = passage[:pos].rstrip()
            units.append(_Unit(pending, len(last), False, False, False))
            pending = None
        pos = line_end + 1
    if pending is not None:
        units.append(_Unit(pending, len(passage.rstrip()), False, False, False))
    return [u for u in units if u.end > u.start]


def _best_run(units: list[_Unit], need: set[int], lo: int = 0) -> tuple[int, int] | None:
    """The shortest run ``(first, last)`` of ``units[lo:]`` (in characters) holding every item
    of ``need``; None when none does. Two pointers: O(units x items)."""
    if not need:
        return None
    count: dict[int, int] = {}
    best: tuple[int, int] | None = None
    left = lo
    for right in range(lo, len(units)):
        for i in units[right].items & need:
            count[i] = count.get(i, 0) + 1
        while len(count) == len(need):
            if best is None or units[right].end - units[left].start < units[best[1]].end - units[best[0]].start:
                best = (left, right)
            for i in units[left].items & need:
                count[i] -= 1
                if not count[i]:
                    del count[i]
            left += 1
    return best


def _table_header(units: list[_Unit], first: int) -> tuple[int, int] | None:
    """The header ``(first unit, last unit)`` of the table holding ``units[first]``: from the
    table's first line (going up over table lines) to the line before its first row of figures;
    None when the unit is not in a table or the table has no header above it."""
    if not units[first].table:
        return None
    top = first
    while top > 0 and units[top - 1].table:
        top -= 1
    k = top
    while k < first and not units[k].data:
        k += 1
    if k == top:
        return None
    return top, k - 1


def plan_shrink(passage: str, answer: str, question: str = "", *, max_chars: int = MAX_CHARS,
                min_chars: int = MIN_CHARS) -> ShrinkOutcome:
    """The lexical shrink of ``passage`` for ``answer``, or why there is none.

    Args:
        passage: the current passage (verbatim in its document).
        answer: the pair's answer; its figures and content words are what must be kept.
        question: the pair's question: among runs of the same length, the one holding more of
            its content words wins.
        max_chars: the longest proposal aimed at (the checklist's ``max_passage_chars``): the
            table header is joined only within it.
        min_chars: a shorter run grows by whole units to at least this (when the passage has them).

    Returns:
        A :class:`ShrinkOutcome`; ``proposal`` is None when the passage is already minimal, a
        figure of the answer is not in the passage, or the answer gives nothing to keep.
        Never raises on any text.
    """
    if not passage.strip():
        return ShrinkOutcome(None, "the passage is empty")
    if len(passage) > MAX_PASSAGE_CHARS:
        return ShrinkOutcome(None, f"the passage has {len(passage):,} characters: over the {MAX_PASSAGE_CHARS:,} "
                                   "a lexical shrink reads")
    figures = answer_figures(answer)
    have_figures = _figures(passage)
    # A year the passage does not hold is the answer's context ("As of FY2022, ..."), not a figure.
    figures = {k: raw for k, raw in figures.items() if k in have_figures or not _YEAR.fullmatch(k)}
    missing = [raw for key, raw in figures.items() if key not in have_figures]
    if missing:
        return ShrinkOutcome(None, "the answer's figure" + ("s " if len(missing) > 1 else " ")
                             + ", ".join(missing[:5]) + (" are" if len(missing) > 1 else " is")
                             + " not in the passage (computed from it?): a shorter passage cannot be shown to keep "
                             + ("them" if len(missing) > 1 else "it"))
    answer_words = sorted(_words(answer))
    units = _units(passage)
    unit_words = [_words(passage[u.start:u.end]) for u in units]
    unit_figures = [_figures(passage[u.start:u.end]) for u in units]
    held = set().union(*unit_words) if units else set()
    words = [w for w in answer_words if w in held]
    if not figures and (not answer_words or len(words) < MIN_ANSWER_OVERLAP * len(answer_words)):
        if not answer_words:
            return ShrinkOutcome(None, "the answer has no figure or content word to keep")
        return ShrinkOutcome(None, f"the answer has no figure and the passage holds only {len(words)} of its "
                                   f"{len(answer_words)} content words: nothing to anchor a shorter passage")
    labels = [raw for raw in figures.values()] + words
    keys = list(figures) + words
    qwords = _words(question)
    units = [_Unit(u.start, u.end, u.line, u.table, u.data,
                   frozenset(i for i, k in enumerate(keys)
                             if (k in unit_figures[j] if i < len(figures) else k in unit_words[j])))
             for j, u in enumerate(units)]
    need = set(range(len(keys)))
    run = _best_run(units, need)
    if run is None:  # every figure and word is in some unit, so this cannot happen; be safe
        return ShrinkOutcome(None, "no run of whole units holds the answer's figures and words")
    run = _prefer_question(units, run, need, passage, qwords)
    first, last = _whole_rows(units, *run, passage)
    first, last = _grow(units, first, last, min_chars)
    note = ""
    with_header: bool | None = None
    dropped: tuple[str, ...] = ()
    header = _table_header(units, first)
    if header is not None:
        if first <= header[0]:
            with_header = True
        elif units[last].end - units[header[0]].start <= max_chars:
            first, with_header = header[0], True
            note = "with the table's header"
        else:
            with_header = False
            note = (f"without the table's header: not adjacent ({units[last].end - units[header[0]].start:,} "
                    f"characters with it, over {max_chars})")
    if units[last].end - units[first].start > max_chars:
        alt = _rows_without_header(units, need, first, last, max_chars)
        if alt is not None:
            first, last, in_header, hdr_len = alt
            first, last = _grow(units, *_whole_rows(units, first, last, passage), min_chars)
            with_header = False
            dropped = tuple(labels[i] for i in sorted(in_header))
            note = (f"without the table's header ({hdr_len:,} characters with it, over {max_chars}); "
                    f"only the header held {', '.join(dropped)}")
    start, end = units[first].start, units[last].end
    text = passage[start:end]
    whole = passage.strip()
    if len(text) >= len(whole):
        return ShrinkOutcome(None, "the passage is already minimal: no shorter run of whole "
                                   "sentences, lines or table rows holds the answer's figures and words")
    unit = _unit_name(units[first:last + 1])
    kept = tuple(labels[i] for i in sorted(need) if labels[i] not in dropped)
    n_units = last - first + 1
    what = "table lines" if unit == "table row" else unit + ("s" if n_units != 1 else "")
    reason = (f"{n_units} {what}, {len(text):,} characters (from {len(whole):,}), "
              f"holding {', '.join(kept) if kept else 'the answer'}")
    if note:
        reason += "; " + note
    if len(text) > max_chars:
        reason += f"; still over {max_chars} characters"
    return ShrinkOutcome(ShrinkProposal(text, start, end, unit, kept, reason, with_header, dropped), reason)


def _prefer_question(units: list[_Unit], run: tuple[int, int], need: set[int], passage: str,
                     qwords: set[str]) -> tuple[int, int]:
    """Among the runs as short as ``run`` holding ``need``, the one with most question words."""
    if not qwords:
        return run
    size = units[run[1]].end - units[run[0]].start
    width = run[1] - run[0]
    best, best_score = run, -1
    for a in range(0, len(units) - width):
        b = a + width
        if units[b].end - units[a].start != size:
            continue
        items: set[int] = set()
        for u in units[a:b + 1]:
            items |= u.items
        if not need <= items:
            continue
        score = len(qwords & _words(passage[units[a].start:units[b].end]))
        if score > best_score:
            best, best_score = (a, b), score
    return best


def _whole_rows(units: list[_Unit], first: int, last: int, passage: str) -> tuple[int, int]:
    """Widen a run that starts or ends inside a table row to whole rows: back from a line of
    figures to its label (the nearest line above with letters), on over the lines of figures (or
    bare ``$``) that follow its last line."""
    def bare(u: _Unit) -> bool:
        return u.table and not any(c.isalpha() for c in passage[u.start:u.end])

    if bare(units[first]):
        while first > 0 and bare(units[first - 1]):
            first -= 1
        if first > 0 and units[first - 1].table:
            first -= 1
    if units[last].table:
        while last + 1 < len(units) and bare(units[last + 1]):
            last += 1
    return first, last


def _grow(units: list[_Unit], first: int, last: int, min_chars: int) -> tuple[int, int]:
    """Add whole units (the next one first) until the run has ``min_chars`` characters."""
    while units[last].end - units[first].start < min_chars:
        if last + 1 < len(units):
            last += 1
        elif first > 0:
            first -= 1
        else:
            break
    return first, last


def _rows_without_header(units: list[_Unit], need: set[int], first: int, last: int,
                         max_chars: int) -> tuple[int, int, set[int], int] | None:
    """For a run over ``max_chars`` in a table: the shortest run below the table's header
    holding every item except those the header holds. ``(first, last, items left to the
    header, characters with the header)``, or None when that is not shorter."""
    header = _table_header(units, last)
    if header is None:
        return None
    in_header: set[int] = set()
    for u in units[header[0]:header[1] + 1]:
        in_header |= u.items
    rest = need - in_header
    if not rest or not in_header & need:
        return None
    alt = _best_run(units, rest, header[1] + 1)
    if alt is None:
        return None
    if units[alt[1]].end - units[alt[0]].start >= units[last].end - units[first].start:
        return None
    return alt[0], alt[1], in_header & need, units[alt[1]].end - units[header[0]].start


def _unit_name(run: list[_Unit]) -> str:
    if all(u.line for u in run):
        return "table row" if sum(u.table for u in run) * 2 > len(run) else "line"
    return "sentence"


def shrink_lexical(passage: str, answer: str, question: str = "", *, max_chars: int = MAX_CHARS,
                   min_chars: int = MIN_CHARS) -> ShrinkProposal | None:
    """The shortest run of whole sentences, lines or table rows of ``passage`` that still
    holds the answer's figures and content words (see the module docstring and
    :func:`plan_shrink`, which also says why there is none); None when there is none."""
    return plan_shrink(passage, answer, question, max_chars=max_chars, min_chars=min_chars).proposal
