"""The lexical "shrink" repair: the shortest run of whole units that still holds what the answer
needs, proposed to the curator (MTCB's checklist: "Passages are minimal sufficient context"),
and "fit in one chunk": the largest part of a passage inside one chunk that still holds it.

Offline and fast (a few ms for a 3,500-character table passage; the figures and derivations
come from ``mtcb_curate.evidence``). The text is cut into units: sentences for prose (a line
break ends a sentence only after sentence punctuation or after a short line, so hard-wrapped
prose keeps its sentences whole), which makes every short line of a table, or of a
line-structured block, a unit of its own (a table row's label, a cell). A proposal is the
shortest contiguous run of units (in characters), widened to whole table rows (a row's label
lines and all its lines of figures), that holds what the answer needs:

- **the answer's figures** (``evidence.parse_figures``; years are context, not figures), each
  either *as written* in the run (``evidence.same_figure``: within rounding, across scales,
  ``$5466.00`` in USD millions is ``5,466,312`` under "(in thousands"), or *computed* from
  figures of the rows the question names (``evidence.derive``: sum, difference, ratio,
  percentage change, averages, ratio to an average, (a + b) / c, a + b - c; each operand's row
  label must share a content word with the question, financial abbreviations expanded: "PP&E"
  names "Property and equipment, net"). A computed answer is said so on the proposal, with its
  derivation. When no figure of the text holds it and no derivation is found, nothing is
  proposed and the reason says so;
- **the answer's content words** (stemmed, ``evidence.content_words``; those the question
  already holds left out) that the passage holds: all of them when the answer has no figure;
  with figures, as many as fit within ``max_chars`` (the figures are the claim);
- inside a table, **the table's header** (its first lines up to the first row of figures:
  the years, the unit), when the run with it stays within ``max_chars``. A passage must stay
  ONE contiguous verbatim quote, so a header far above the rows is joined only by taking every
  row in between; when that is too long the rows are proposed without it, and the reason says
  so (with the figures and words only the header held, which the proposal then lacks).

:func:`plan_shrink` works inside the passage. :func:`plan_evidence` works on the document around
it: it looks ``reach`` characters before and after the located passage, and proposes a span
there only when the passage itself cannot hold what the answer needs (a table row just above
it, the other statement a ratio is computed from); the proposal says how far it reaches out.
Within the passage, a run inside it is always preferred. :func:`plan_fit` proposes the largest
part of the passage inside one chunk of each given chunker (chunk boundaries as chonkie draws
them) that still holds what the answer needs, or says which chunks hold which figures.

A run shorter than ``min_chars`` grows by whole units (the next one first) up to that length.
The proposal is an exact substring of the text with its offsets: ``passage[p.start:p.end] ==
p.text`` for a proposal inside the passage, ``document[p.doc_start:p.doc_end] == p.text`` always
(:func:`plan_shrink`: the passage is the document). Nothing is proposed when the passage is
already minimal, or when the answer gives nothing to keep (no figure and under half of its
content words in the passage, the ``answerable`` threshold).

Nothing here changes a pair: the app applies a proposal as an edit (undoable, re-verified).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from mtcb_curate.evidence import Derivation, Figure, FigureKind, derivations, figure_label, parse_figures, same_figure, stated_scale
from mtcb_curate.evidence.compute import question_stems
from mtcb_curate.evidence.figures import significant_digits
from mtcb_curate.evidence.words import content_stems, content_words, is_stopword, stem

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
#: Share of the answer's content words the passage must hold when the answer has no figure
#: (the ``answerable`` check's threshold).
MIN_ANSWER_OVERLAP = 0.5
#: A derivation from ALL the passage's figures (not only those of rows the question names) is
#: tried only for targets of at least this many significant digits: a one-digit "0.01" is met
#: by chance in any table.
MIN_DIGITS_UNNAMED = 4
#: An answer without figures reaches out of the passage for its words only when the text
#: around holds at least this share of them, and at least :data:`REACH_MIN_WORDS` words (a list
#: of segments continued on the next page).
REACH_WORD_SHARE = 0.8
REACH_MIN_WORDS = 3
#: No answer figure of fewer significant digits is taken as computed ("0.01", "5%": any table
#: meets it by chance).
MIN_DIGITS_COMPUTED = 2
#: A row is named by the question when at least this share of its label's content words
#: (:data:`GENERIC_LABEL_WORDS` set aside) are the question's (abbreviations expanded).
MIN_LABEL_SHARE = 0.5
#: Label words that name no line item ("Total net revenues" is named by "revenue").
GENERIC_LABEL_WORDS = frozenset("total net consolid attribut other adjust unadjust gross sub subtot amount "
                                "amounts includ less plus".split())
#: Words of a question that name a statement or the answer's format, not a row: set aside
#: before the question names rows ("calculate ... from the statement of income").
_NOT_ROWS = re.compile(
    r"(?:statements?\s+of\s+(?:consolidated\s+)?(?:comprehensive\s+)?(?:income|operations|earnings|cash\s+flows?|"
    r"financial\s+position|financial\s+condition)|(?:income|cash\s+flows?|p&l|financial)\s+statements?|"
    r"balance\s+sheets?|\bp&l\b|round(?:ed)?\s+(?:your\s+answer\s+)?to\s+\w+\s+decimal\s+places?|"
    r"in\s+units\s+of\s+\w+|answer\s+in\s+usd\s+\w+|line\s+items?|"
    r"(?:base|give|address|respond\s+to)\s+(?:your\s+judgments?|a\s+response|the\s+question)[^.?]*)",
    re.I)
#: "a 3 year average": the answer averages a measure over years; only an average computes it.
_YEARS_AVERAGE = re.compile(r"\b(?:\d|two|three|four|five)[- ]year\s+average\b", re.I)
_AVERAGES = frozenset({"average", "average of three"})
#: The forms over three figures that add two of them, tried only when the question adds
#: ("+", "plus", "EBITDA": operating income plus depreciation and amortization).
_SUMS_OF_THREE = frozenset({"sum to a ratio", "sum to a percentage", "sum less one"})
_SUM_CUE = re.compile(r"\+|\bplus\b|\bebitda\b|\badd(?:ed|ing)?\b|\bsum\b", re.I)
#: Question words that say which operation computes the answer: its derivations rank first.
_CUES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(?:chang\w*|grow\w*|growth|increas\w*|decreas\w*|drop\w*|declin\w*|rose|fell)\b", re.I),
     frozenset({"percentage change", "difference"})),
    (re.compile(r"\baverage\b", re.I), frozenset({"average", "ratio to an average", "average of three"})),
    (re.compile(r"%|\bmargin\b|\bpercent", re.I), frozenset({"percent of", "sum to a percentage",
                                                               "percentage change"})),
    (re.compile(r"\b(?:ratio|turnover)\b", re.I), frozenset({"ratio", "ratio to an average"})),
    (re.compile(r"\b(?:less|minus)\b", re.I), frozenset({"difference", "sum less one"})),
    (re.compile(r"\+|\b(?:plus|sum|add(?:ed|ing)?|combined|together)\b", re.I),
     frozenset({"sum", "sum to a ratio", "sum to a percentage", "sum less one"})),
)
_DASH_CELL = re.compile(r"\$?[\s\u00a0]*[—–-][\s\u00a0]*(?:%|\$)?")

#: Answer words that are not content to keep ("Yes, ..." / "No, ...").
_NOT_CONTENT = frozenset({"yes", "no", "none", "true", "false"})
_NUMBER = re.compile(r"(?<![0-9])[0-9][0-9,]*(?:\.[0-9]+)?")
_LIST_MARKER = re.compile(r"\(\d\)(?=\s+\w)")
_YEAR = re.compile(r"(?:19|20)\d\d")
# A sentence ends after . ! ? (and a closing quote or bracket) before white space and a capital,
# a digit or an opening quote/bracket: unless the word before the stop is an abbreviation.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]?[ \t\u00a0]+(?=[A-Z0-9\"'\u201c\u2018(\[])")
_ABBREVIATIONS = frozenset("inc co corp ltd no nos mr mrs ms dr jr sr st vs etc approx fig e.g i.e u.s".split())


@dataclass(frozen=True, slots=True)
class ShrinkProposal:
    """A shorter passage proposed by :func:`plan_shrink`, :func:`plan_evidence` or
    :func:`plan_fit`.

    Attributes:
        text: the new passage, an exact substring of the document with no edge whitespace.
        start, end: its character offsets relative to the old passage (end exclusive):
            ``passage[start:end] == text`` when it lies inside the passage; negative, or past
            the passage's end, when it reaches out (:attr:`outside`).
        unit: the unit of the run: ``sentence``, ``line`` or ``table row``.
        keeps: the answer's figures (as written in the answer) and content words it holds.
        reason: one line for the curator (what was cut, the header, what is missing).
        with_header: inside a table: whether the table's header is included; None outside a table.
        dropped: the answer's figures and words the old passage held and this one does not
            (the ones only a table header left out held, or words that did not fit).
        computed: one line per figure of the answer computed from the proposal's figures
            (``evidence.Derivation.describe``); empty when every figure is as written.
        doc_start, doc_end: its offsets in the document (``document[doc_start:doc_end] ==
            text``; for :func:`plan_shrink` the passage is the document).
        outside: characters of the proposal outside the old passage (0: a shrink within it).
        where: for a span found elsewhere in the document (:func:`plan_document`), where it
            is and why it was chosen (one line); "" otherwise.
    """

    text: str
    start: int
    end: int
    unit: str
    keeps: tuple[str, ...]
    reason: str
    with_header: bool | None = None
    dropped: tuple[str, ...] = ()
    computed: tuple[str, ...] = ()
    doc_start: int = 0
    doc_end: int = 0
    outside: int = 0
    where: str = ""

    @property
    def inside(self) -> bool:
        """The proposal is a part of the old passage."""
        return self.outside == 0


@dataclass(frozen=True, slots=True)
class ShrinkOutcome:
    """What :func:`plan_shrink` (or :func:`plan_evidence`, :func:`plan_fit`) found: a proposal,
    or None and why (one line). ``computed``: the derivations of the answer's computed figures
    found (also when no shorter passage is proposed)."""

    proposal: ShrinkProposal | None
    reason: str
    computed: tuple[str, ...] = ()
    #: The derivations of the computed figures (``evidence.Derivation``, operands as figures
    #: of the text they were found in): what a search elsewhere in the document looks for.
    derivations: tuple[Derivation, ...] = ()


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
    """The digit strings of ``answer``: ``{figure_key: the number as written}``, in order,
    without single-digit list markers ``(1) ...``. A coarse test (the figures as written, no
    scale, no rounding); the shrink itself compares with ``evidence.same_figure``."""
    text = _LIST_MARKER.sub(" ", answer)
    out: dict[str, str] = {}
    for m in _NUMBER.finditer(text):
        raw = m.group().rstrip(",.")
        out.setdefault(figure_key(raw), raw)
    return out


def text_figures(text: str) -> set[str]:
    """Every number of ``text`` as a :func:`figure_key`."""
    return {figure_key(m.group().rstrip(",.")) for m in _NUMBER.finditer(text)}


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


def _best_run(units: list[_Unit], need: set[int], lo: int = 0, hi: int | None = None) -> tuple[int, int] | None:
    """The shortest run ``(first, last)`` of ``units[lo:hi]`` (in characters) holding every
    item of ``need``; None when none does. Two pointers: O(units x items)."""
    if not need:
        return None
    hi = len(units) if hi is None else hi
    count: dict[int, int] = {}
    best: tuple[int, int] | None = None
    left = lo
    for right in range(lo, hi):
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


def _table_header(units: list[_Unit], first: int, floor: int = 0) -> tuple[int, int] | None:
    """The header ``(first unit, last unit)`` of the table holding ``units[first]``: from the
    table's first line (going up over table lines, not above ``units[floor]``) to the line
    before its first row of figures; None when the unit is not in a table or the table has no
    header above it."""
    if not units[first].table:
        return None
    top = first
    while top > floor and units[top - 1].table:
        top -= 1
    k = top
    while k < first and not units[k].data:
        k += 1
    if k == top:
        return None
    return top, k - 1


# -- what the answer needs --------------------------------------------------------------------


@dataclass
class _Analysis:
    """What the answer needs in ``text`` (a passage, or a document region around one).

    ``units`` carry item ids; ``labels[i]`` names item ``i`` for the curator. ``hard``: items
    every proposal holds (figures, computed figures' operands, years the passage holds, or the
    words of an answer without figures); ``soft``: words kept when they fit. ``computed``: one
    line per computed figure; ``missing``: the answer's figures neither written nor computed;
    ``failure``: why there is nothing to anchor a proposal ("" when there is).
    """

    text: str
    units: list[_Unit]
    labels: list[str]
    hard: set[int]
    soft: set[int]
    years: set[int]
    words: set[int]
    computed: list[str]
    missing: list[str]
    failure: str = ""
    priority: dict[int, int] = field(default_factory=dict)
    #: The answer's content words to look for, and how many of them the text holds.
    n_words: int = 0
    held_words: int = 0
    #: The derivation of each computed figure of the answer.
    derived: list[Derivation] = field(default_factory=list)


def _unit_at(units: list[_Unit], starts: list[int], offset: int) -> int | None:
    """The unit holding character ``offset`` (the nearest one after it when it falls between)."""
    k = bisect.bisect_right(starts, offset) - 1
    if k >= 0 and units[k].start <= offset < units[k].end:
        return k
    k += 1
    return k if k < len(units) else None


def _row_words(question: str) -> frozenset[str]:
    """The stems of the question's words that can name a table row: its content words and
    expanded abbreviations, without the words naming a statement or the answer's format."""
    
    return question_stems(_NOT_ROWS.sub(" ", question))


def _names_row(label: str, qstems: frozenset[str]) -> bool:
    """The question names the row ``label``: at least :data:`MIN_LABEL_SHARE` of its content
    stems (generic words set aside) are the question's."""
    stems = content_stems(label) - GENERIC_LABEL_WORDS
    return bool(stems) and len(stems & qstems) >= MIN_LABEL_SHARE * len(stems)


def _column_years(text: str, units: list[_Unit], starts: list[int], figures: list[Figure]) -> dict[int, int]:
    """Figure index -> the year of its table column, for tables with a header of years: the
    last run of lines holding only years (and date words) before a table's rows gives the
    columns in order; a row's cells (its lines of figures, a line of dashes an empty cell) take
    them in order when it has at least as many cells as the header has years."""
    by_unit: dict[int, list[int]] = {}
    for i, f in enumerate(figures):
        u = _unit_at(units, starts, f.end - 1)
        if u is not None:
            by_unit.setdefault(u, []).append(i)
    out: dict[int, int] = {}
    header: list[int] = []
    years_run = False
    cells: list[int | None] = []

    def close_row() -> None:
        if header and len(cells) >= len(header):
            for k, i in enumerate(cells[:len(header)]):
                if i is not None:
                    out[i] = header[k]
        cells.clear()

    for k, u in enumerate(units):
        figs = [figures[i] for i in by_unit.get(k, [])]
        ys = [f for f in figs if f.is_year]
        if figs and len(ys) == len(figs) and u.table:
            close_row()
            if not years_run:
                header = []
            header += [int(f.value) for f in ys]
            years_run = True
            continue
        years_run = False
        if u.data:
            cells.extend(i for i in by_unit.get(k, []) if not figures[i].is_year)
        elif u.table and _DASH_CELL.fullmatch(text[u.start:u.end]):
            cells.append(None)  # a dash: an empty cell
        elif u.table and not any(c.isalnum() for c in text[u.start:u.end]):
            continue  # a bare "$" or "%" between a row's cells
        else:
            close_row()
    close_row()
    return out


def _tighten(d: Derivation, named: list[Figure], text: str) -> Derivation:
    """``d`` with each operand moved to the nearest repeat of its value in a row the question
    names (net income shown again at the top of the next statement), so the operands lie as
    close together as the text allows."""
    ops = list(d.operands)
    if len(ops) < 2:
        return d
    for _ in range(2):
        for k, f in enumerate(ops):
            others = [g.start for j, g in enumerate(ops) if j != k]
            centre = sorted(others)[len(others) // 2]
            pct = f.kind == FigureKind.PERCENT
            twins = [g for g in named if g.magnitude == f.magnitude and (g.kind == FigureKind.PERCENT) == pct]
            ops[k] = min(twins or [f], key=lambda g: abs(g.start - centre))
    if ops == list(d.operands):
        return d
    from dataclasses import replace

    return replace(d, operands=tuple(ops), labels=tuple(figure_label(text, g) for g in ops))


#: "X is defined as: <formula>." / "Define X as <formula>": a question that says how its figure
#: is computed (FinanceBench's metric questions).
_DEFINED = re.compile(r"\b(?:is\s+defined\s+as|define\s+[^.?]{1,80}?\s+as)\s*:?\s*(?P<f>.+?)(?:\.(?:\s|$)|\?|$)",
                      re.I | re.S)
_TERM_AVERAGE = re.compile(r"^(?:the\s+)?average\s+(?P<x>.+?)\s+between\s+(?P<a>\S+)\s+and\s+(?P<b>\S+)$", re.I)
_TERM_CHANGE = re.compile(r"^(?:the\s+)?change\s+in\s+(?P<x>.+?)\s+between\s+(?P<a>\S+)\s+and\s+(?P<b>\S+)$", re.I)
_TOKEN = re.compile(r"\s*(?:(?P<num>\d+(?:\.\d+)?)(?![\w])|(?P<op>[-+*/()])|(?P<term>[^-+*/()]+))")
#: Candidate rows tried per term of a definition.
_ROWS_PER_TERM = 3


def _year_of(word: str) -> int | None:
    got = [f for f in parse_figures(word) if f.is_year]
    return int(got[0].value) if got else None


def _parse_definition(question: str) -> list | None:
    """The question's definition of its figure as tokens: numbers, operators and terms
    ``(kind, item words, years)`` with kind ``value``/``average``/``change``; None when the
    question defines nothing or the formula is not one of these."""
    m = _DEFINED.search(question)
    if m is None:
        return None
    formula = re.sub(r"\[[^\]]*\]", " ", m.group("f"))
    default = max((int(f.value) for f in parse_figures(question) if f.is_year), default=None)
    out: list = []
    for t in _TOKEN.finditer(formula):
        if t.group("num"):
            out.append(float(t.group("num")))
        elif t.group("op"):
            out.append(t.group("op"))
        else:
            words = " ".join(t.group("term").split())
            if not words:
                continue
            for kind, pattern in (("average", _TERM_AVERAGE), ("change", _TERM_CHANGE)):
                got = pattern.match(words)
                if got:
                    ya, yb = _year_of(got.group("a")), _year_of(got.group("b"))
                    if ya is None or yb is None:
                        return None
                    out.append((kind, got.group("x"), (ya, yb)))
                    break
            else:
                years = [int(f.value) for f in parse_figures(words) if f.is_year]
                item = _FISCAL_WORD.sub(" ", words).strip()
                year = years[0] if years else default
                if not item or year is None:
                    return None
                out.append(("value", item, (year,)))
    return out or None


_FISCAL_WORD = re.compile(r"\b(?:FY\s?'?\d{2,4}|fiscal\s+(?:year\s+)?\d{4}|(?:19|20)\d\d)\b", re.I)


def _evaluate(tokens: list) -> float | None:
    """The value of a parsed definition (numbers only: terms replaced), None when it is not a
    well-formed formula or divides by zero."""
    pos = 0

    def expr() -> float:
        nonlocal pos
        v = term()
        while pos < len(tokens) and tokens[pos] in ("+", "-"):
            op = tokens[pos]
            pos += 1
            w = term()
            v = v + w if op == "+" else v - w
        return v

    def term() -> float:
        nonlocal pos
        v = atom()
        while pos < len(tokens) and tokens[pos] in ("*", "/"):
            op = tokens[pos]
            pos += 1
            w = atom()
            v = v * w if op == "*" else v / w
        return v

    def atom() -> float:
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t == "(":
            v = expr()
            if tokens[pos] != ")":
                raise ValueError
            pos += 1
            return v
        if t == "-":
            return -atom()
        if isinstance(t, float):
            return t
        raise ValueError

    try:
        v = expr()
        return v if pos == len(tokens) else None
    except (ValueError, IndexError, ZeroDivisionError):
        return None


def _by_definition(target: Figure, figures: list[Figure], text: str, question: str,
                   years: dict[int, int]) -> Derivation | None:
    """``target`` computed as the question defines it ("ROA is defined as: FY2017 net income /
    (average total assets between FY2016 and FY2017)"): each term's line item is a row whose
    label it names (abbreviations expanded), each year that row's column; the first choice of
    rows (at most :data:`_ROWS_PER_TERM` per term, best named first) whose value rounds to the
    target (as a ratio, or x 100 for a percentage) is the derivation. None when the question
    defines nothing this reads, or no choice of rows gives the target."""
    import itertools

    tokens = _parse_definition(question)
    if tokens is None:
        return None
    terms = [t for t in tokens if isinstance(t, tuple)]
    if not terms:
        return None
    index = {id(f): i for i, f in enumerate(figures)}
    labels = {id(g): content_stems(figure_label(text, g)) - GENERIC_LABEL_WORDS for g in figures if not g.is_year}
    # each term's candidate rows: label -> {year: figure}
    choices: list[list[dict[int, Figure]]] = []
    for _, item, yrs in terms:
        want = question_stems(item) - GENERIC_LABEL_WORDS
        rows: dict[tuple, dict[int, Figure]] = {}
        scores: dict[tuple, float] = {}
        for g in figures:
            stems = labels.get(id(g))
            y = years.get(index[id(g)])
            if not stems or y is None or not stems & want:
                continue
            key = (figure_label(text, g), g.start // 4096)  # one row, its repeats far apart kept apart
            rows.setdefault(key, {}).setdefault(y, g)
            scores[key] = len(stems & want) / len(stems)
        ok = [key for key, by_year in rows.items() if all(y in by_year for y in yrs) and scores[key] >= MIN_LABEL_SHARE]
        ok.sort(key=lambda k: -scores[k])
        if not ok:
            return None
        choices.append([rows[k] for k in ok[:_ROWS_PER_TERM]])
    pct = target.kind == FigureKind.PERCENT
    for pick in itertools.product(*choices):
        numbers: list = []
        used: list[Figure] = []
        shown: list[str] = []
        k = 0
        for t in tokens:
            if not isinstance(t, tuple):
                numbers.append(t)
                shown.append(f"{t:g}" if isinstance(t, float) else t)
                continue
            kind, _, yrs = t
            by_year = pick[k]
            k += 1
            fs = [by_year[y] for y in yrs]
            vals = [f.magnitude for f in fs]
            if kind == "average":
                numbers += ["(", vals[0], "+", vals[1], ")", "/", 2.0]
                shown.append(f"({fs[0].describe()} + {fs[1].describe()}) / 2")
            elif kind == "change":
                numbers += ["(", vals[1], "-", vals[0], ")"]
                shown.append(f"({fs[1].describe()} - {fs[0].describe()})")
            else:
                numbers.append(vals[0])
                shown.append(fs[0].describe())
            used += fs
        value = _evaluate(numbers)
        if value is None:
            continue
        for v in ((value * 100, value) if pct else (value,)):
            if abs(abs(v) - target.magnitude) <= target.tolerance * (1 + 1e-9):
                formula = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", " ".join(shown))) + f" = {v:,.4g}"
                return Derivation("as the question defines it", tuple(used), v, formula, len(used),
                                  tuple(figure_label(text, f) for f in used))
    return None


def _derive(target: Figure, figures: list[Figure], text: str, question: str, qstems: frozenset[str],
            years: dict[int, int], qyears: frozenset[int], lo: int, hi: int, units: list[_Unit] | None = None,
            strict: bool = False) -> Derivation | None:
    """``target`` computed from the figures of the rows ``question`` names (:func:`_names_row`),
    each in a column of a year the question names (when both are known), the derivation the
    question's wording asks for first (:data:`_CUES`). Only when the question names no row of
    ``text`` at all, from every figure of ``text[lo:hi]`` (the passage), for a target of at
    least :data:`MIN_DIGITS_UNNAMED` significant digits (a table of 80 figures meets a
    4-digit ratio by chance: the rows must be named). None for a target of fewer than
    :data:`MIN_DIGITS_COMPUTED` significant digits. A total the question names that the
    filing does not print ("working capital") is tried as a sum of rows of the blocks it
    names (:func:`_named_sum`) when nothing else gives the target. ``strict``: never the
    derivation from every figure of the passage (the whole-document search, where a chance
    match is likelier)."""
    defined = _by_definition(target, figures, text, question, years)
    if defined is not None:
        return defined
    if significant_digits(target) < MIN_DIGITS_COMPUTED:
        return None
    index = {id(f): i for i, f in enumerate(figures)}
    named = [g for g in figures if not g.is_year and (not qyears or years.get(index[id(g)], min(qyears)) in qyears)
             and _names_row(figure_label(text, g), qstems)]
    about = _NOT_ROWS.sub(" ", question)
    if named:
        cues = frozenset().union(*(ops for cue, ops in _CUES if cue.search(question)))
        labels = {id(g): content_stems(figure_label(text, g)) - GENERIC_LABEL_WORDS for g in named}
        found = [d for d in derivations(target, named, passage=text, about=about, limit=200,
                                        sums_of_three=bool(_SUM_CUE.search(question)))
                 if d.related == len(d.operands)]
        if _YEARS_AVERAGE.search(question):
            found = [d for d in found if d.operation in _AVERAGES]
        if not _SUM_CUE.search(question):
            found = [d for d in found if d.operation not in _SUMS_OF_THREE]
        if not found:
            return _named_sum(target, figures, text, units, years, question, qyears)

        def specific(f: Figure) -> float:
            stems = labels.get(id(f), frozenset())
            return len(stems & qstems) / len(stems) if stems else 0.0

        found = [_tighten(d, named, text) for d in found]

        def key(p: tuple[int, Derivation]) -> tuple:
            d = p[1]
            n = len(d.operands)
            dated = sum(1 for f in d.operands if index[id(f)] in years) / n
            share = round(sum(specific(f) for f in d.operands) / n, 1)
            width = max(f.end for f in d.operands) - min(f.start for f in d.operands)
            return d.operation not in cues, -dated, -share, n, width, p[0]

        return min(enumerate(found), key=key)[1]
    summed = _named_sum(target, figures, text, units, years, question, qyears)
    if summed is not None or strict or significant_digits(target) < MIN_DIGITS_UNNAMED:
        return summed
    inside = [g for g in figures if lo <= g.start and g.end <= hi and not g.is_year]
    found = derivations(target, inside, passage=text, about=about, limit=1)
    return found[0] if found else None


_HEADING_END = re.compile(r"[\s:]+$")


def _block_rows(text: str, units: list[_Unit], figures: list[Figure], years: dict[int, int], name: str,
                qyears: frozenset[int]) -> tuple[list[Figure], list[str]] | None:
    """The rows of the block ``name`` ("current assets") of a statement in ``text``: from a
    heading line that is the block's name ("Current assets:") to its total ("Total current
    assets", left out), one figure per row: the cell in the column of a year the question
    names (the table's year header above the block gives the columns in order; the row's
    first cell when the table has none or the question names no year). A row's cells are its
    lines of figures, or the figures after its label on the label's own line; figures inside
    a label ("net of doubtful accounts - $40 and $42") are not cells. ``(figures, row
    labels)``, or None when there is no such block, a row has no cell in that column, or the
    block has more than :data:`evidence.compute.MAX_SUM_ROWS` rows."""
    from mtcb_curate.evidence.compute import MAX_SUM_ROWS

    want = " ".join(name.lower().split())
    index = {id(f): i for i, f in enumerate(figures)}
    by_unit: dict[int, list[Figure]] = {}
    starts = [u.start for u in units]
    for f in figures:
        k = _unit_at(units, starts, f.end - 1)
        if k is not None:
            by_unit.setdefault(k, []).append(f)
    header: list[int] = []
    in_run = False
    for h, u in enumerate(units):
        figs = by_unit.get(h, [])
        if figs and all(f.is_year for f in figs) and u.table:
            header = (header if in_run else []) + [int(f.value) for f in figs]
            in_run = True
            continue
        in_run = False
        if u.data or " ".join(_HEADING_END.sub("", text[u.start:u.end]).lower().split()) != want:
            continue
        rows: list[tuple[str, list[Figure], list[Figure]]] = []  # label, cells below it, cells on its line
        for k in range(h + 1, min(len(units), h + 1 + 8 * MAX_SUM_ROWS)):
            v = units[k]
            line = text[v.start:v.end]
            low = " ".join(line.lower().split())
            if low.startswith("total") and want in low:
                break
            cells = [f for f in by_unit.get(k, []) if not f.is_year or "," in f.text]
            letters = [i for i, c in enumerate(line) if c.isalpha()]
            if letters:  # a label (with its first cells when the extraction glued them on)
                # the label's last line with letters; figures on the lines after it are cells
                label_end = v.start + line.find("\n", letters[-1]) if "\n" in line[letters[-1]:] else v.end
                below = [f for f in cells if f.start >= label_end]
                tail = [f for f in cells if v.start + letters[-1] <= f.start < label_end]
                rows.append((text[v.start:label_end].strip()[:100], below, tail))
            elif rows:
                rows[-1][1].extend(cells)
        else:
            continue
        if not rows or len(rows) > MAX_SUM_ROWS:
            return None
        out: list[Figure] = []
        for _, below, tail in rows:
            cells = below or tail
            if not cells:
                return None
            pick: Figure | None = None
            if qyears and header and len(cells) >= len(header):
                cols = [k for k, y in enumerate(header) if y in qyears]
                pick = cells[cols[0]] if cols else None
            elif qyears and any(index[id(f)] in years for f in cells):
                pick = next((f for f in cells if years.get(index[id(f)]) in qyears), None)
            elif not qyears or not header:
                pick = cells[0]
            if pick is None:
                return None
            out.append(pick)
        return out, [label for label, _, _ in rows]
    return None


def _named_sum(target: Figure, figures: list[Figure], text: str, units: list[_Unit] | None,
               years: dict[int, int], question: str, qyears: frozenset[int]) -> Derivation | None:
    """``target`` as a total the question names ("working capital") that the filing need not
    print: a signed sum of rows of the blocks it adds (``evidence.compute.NAMED_SUMS``,
    ``signed_sums``, with its guards against chance); None when the question names none of
    them or the text has not every block."""
    from mtcb_curate.evidence.compute import NAMED_SUMS, signed_sums

    if units is None:
        return None
    low = " ".join(question.lower().split())
    for name, parts in NAMED_SUMS.items():
        if name not in low:
            continue
        blocks, labels = [], []
        for block, sign in parts:
            got = _block_rows(text, units, figures, years, block, qyears)
            if got is None:
                break
            blocks.append((got[0], sign))
            labels.append(got[1])
        else:
            d = signed_sums(target, blocks, labels=labels)
            if d is not None:
                return d
    return None


def _unit_stems(text: str, units: list[_Unit], starts: list[int]) -> list[set[str]]:
    """Each unit's content stems (``evidence.content_stems``), from one pass over ``text``."""
    out: list[set[str]] = [set() for _ in units]
    for w in content_words(text):
        k = bisect.bisect_right(starts, w.start) - 1
        if k >= 0 and w.end <= units[k].end:
            out[k].add(w.stem)
            if "-" in w.text:
                out[k].update(stem(p) for p in w.text.split("-") if p and not is_stopword(p))
    return out


def _analyse(text: str, lo: int, hi: int, answer: str, question: str, strict: bool = False) -> _Analysis:
    """What ``answer`` needs in ``text``, whose passage is ``text[lo:hi]`` (module docstring);
    ``strict`` as :func:`_derive`."""
    units = _units(text)
    starts = [u.start for u in units]
    in_passage = [lo <= u.start and u.end <= hi for u in units]
    items: list[set[int]] = [set() for _ in units]
    labels: list[str] = []
    hard: set[int] = set()
    soft: dict[int, int] = {}  # item -> priority (0 first)
    years: set[int] = set()
    computed: list[str] = []
    missing: list[str] = []
    derived: list[Derivation] = []

    def add(label: str, where: set[int], priority: int | None) -> int:
        i = len(labels)
        labels.append(label)
        if priority is None:
            hard.add(i)
        else:
            soft[i] = priority
        for u in where:
            items[u].add(i)
        return i

    # the rows the question and the answer name ("ROA" names net income and total assets)
    qstems = (_row_words(question) | _row_words(answer)) if (question + answer).strip() else frozenset()
    figures = parse_figures(text)
    columns = _column_years(text, units, starts, figures)
    qyears = frozenset(int(f.value) for f in parse_figures(f"{question}\n{answer}") if f.is_year)
    claims, seen = [], set()
    answer_figs = parse_figures(answer, default_scale=stated_scale(question))
    for f in answer_figs:
        key = (f.magnitude, f.kind, f.is_year)
        if key not in seen:
            seen.add(key)
            claims.append(f)
    for f in claims:
        if f.is_year:
            # a year is context, kept when it fits: where the passage itself names it (a header)
            where = {u for g in figures if same_figure(f, g) and (u := _unit_at(units, starts, g.end - 1)) is not None
                     and in_passage[u]}
            if where:
                years.add(add(str(int(f.value)), where, 0))
            continue
        where = {u for g in figures if not g.is_year and same_figure(f, g)
                 and (u := _unit_at(units, starts, g.end - 1)) is not None}
        if where:
            add(f.describe(), where, None)
            continue
        d = _derive(f, figures, text, f"{question}\n{answer}", qstems, columns, qyears, lo, hi, units, strict)
        if d is None:
            missing.append(f.describe())
            continue
        computed.append(f"{f.describe()} = {d.describe()}")
        derived.append(d)
        for op in d.operands:
            u = _unit_at(units, starts, op.end - 1)
            if u is not None:
                add(op.describe(), {u}, None)
    # the answer's content words that the question does not already hold
    asked = content_stems(question)
    words: dict[str, str] = {}
    for w in content_words(answer):
        if any(f.start <= w.start < f.end for f in answer_figs):
            continue  # "million" of "$6,539 million": part of a figure
        if w.stem not in asked and w.text.lower() not in _NOT_CONTENT:
            words.setdefault(w.stem, w.text)
    unit_stems = _unit_stems(text, units, starts)
    held = {s: {u for u in range(len(units)) if s in unit_stems[u]} for s in words}
    in_p = {s for s, us in held.items() if any(in_passage[u] for u in us)}
    in_r = {s for s, us in held.items() if us}
    word_items: set[int] = set()
    out = _Analysis(text, units, labels, hard, set(), years, word_items, computed, missing,
                    n_words=len(words), held_words=len(in_r), derived=derived)
    if any(not f.is_year for f in claims):
        for s in in_p:  # kept where the passage holds them, when they fit
            add(words[s], {u for u in held[s] if in_passage[u]}, 1)
    else:
        if not words:
            out.failure = "the answer has no figure or content word to keep"
        elif len(in_r) < MIN_ANSWER_OVERLAP * len(words) or (not in_p and len(in_r) < REACH_MIN_WORDS):
            where = "the passage" if lo == 0 and hi == len(text) else "the passage and the text around it"
            out.failure = (f"the answer has no figure and {where} holds only {len(in_r)} of its "
                           f"{len(words)} content words: nothing to anchor a shorter passage")
        else:
            # the passage's words when it holds enough of them; else reach out for them
            take = in_p if len(in_p) >= MIN_ANSWER_OVERLAP * len(words) else in_r
            if len(in_r) > len(in_p) and len(in_r) >= REACH_WORD_SHARE * len(words) and len(in_r) >= REACH_MIN_WORDS:
                take = in_r  # the rest of a list the passage cuts short ("Trillium, Array, and Therachon")
            if take is in_r and (len(in_r) < REACH_WORD_SHARE * len(words) or len(in_r) < REACH_MIN_WORDS):
                out.failure = (f"the answer has no figure and the passage holds only {len(in_p)} of its "
                               f"{len(words)} content words: nothing to anchor a shorter passage")
                take = set()
            for s in take:
                word_items.add(add(words[s], held[s], None))
    # one row per line item the question names, kept when it fits ("liabilities" for "the
    # largest liability": the block's label)
    row_stems = _row_words(question) - GENERIC_LABEL_WORDS if question.strip() else frozenset()
    for s in sorted(row_stems):
        where = {k for k, u in enumerate(units) if u.table and not u.data and s in unit_stems[k]}
        if where and not any(items[k] for k in where):
            add(s, where, 2)
    out.soft = set(soft)
    out.priority = soft
    out.units = [_Unit(u.start, u.end, u.line, u.table, u.data, frozenset(items[k])) for k, u in enumerate(units)]
    return out


def _add_soft(units: list[_Unit], run: tuple[int, int], soft: dict[int, int], max_chars: int,
              bounds: tuple[int, int]) -> tuple[int, int]:
    """Widen ``run`` by the soft items (priority first, then the nearest first), each only when
    the run stays within ``max_chars`` and the units ``bounds`` (first, end)."""
    first, last = run
    held = {i for u in units[first:last + 1] for i in u.items}
    for i in sorted(soft, key=lambda i: soft[i]):
        if i in held:
            continue
        best = None
        for k in range(*bounds):
            u = units[k]
            if i not in u.items:
                continue
            f, l = min(first, k), max(last, k)
            size = units[l].end - units[f].start
            if size <= max_chars and (best is None or size < best[0]):
                best = (size, f, l)
        if best is not None:
            _, first, last = best
            held = {j for u in units[first:last + 1] for j in u.items}
    return first, last


def _passage_units(units: list[_Unit], lo: int, hi: int) -> tuple[int, int]:
    """``(first, end)`` indices of the units lying wholly inside ``[lo, hi)``."""
    first = next((k for k, u in enumerate(units) if u.start >= lo), len(units))
    end = first
    while end < len(units) and units[end].end <= hi:
        end += 1
    return first, end


def _missing_reason(missing: list[str], reach: int) -> str:
    where = "in the passage" if not reach else f"in the passage or within {reach:,} characters of it"
    many = len(missing) > 1
    return (f"the answer's figure{'s' if many else ''} {', '.join(missing[:5])} {'are' if many else 'is'} not "
            f"{where}, nor computable from the rows the question names (sum, difference, ratio, percentage "
            f"change, averages): no passage here can be shown to hold {'them' if many else 'it'}")


def _plan(text: str, lo: int, hi: int, answer: str, question: str, max_chars: int, min_chars: int,
          base: int, reach: int, seen: list | None = None, strict: bool = False) -> ShrinkOutcome:
    """The proposal over ``text`` (document offset ``base``) for the passage ``text[lo:hi]``;
    ``seen`` (a list) receives the analysis; the outcome carries the derivations found."""
    got: list[_Analysis] = [] if seen is None else seen
    before = len(got)
    out = _plan_run(text, lo, hi, answer, question, max_chars, min_chars, base, reach, got, strict)
    if len(got) > before and got[before].derived:
        from dataclasses import replace

        out = replace(out, derivations=tuple(got[before].derived))
    return out


def _plan_run(text: str, lo: int, hi: int, answer: str, question: str, max_chars: int, min_chars: int,
              base: int, reach: int, seen: list, strict: bool) -> ShrinkOutcome:
    """:func:`_plan` (without the derivations on the outcome)."""
    if not text[lo:hi].strip():
        return ShrinkOutcome(None, "the passage is empty")
    if hi - lo > MAX_PASSAGE_CHARS:
        return ShrinkOutcome(None, f"the passage has {hi - lo:,} characters: over the {MAX_PASSAGE_CHARS:,} "
                                   "a lexical shrink reads")
    a = _analyse(text, lo, hi, answer, question, strict)
    if seen is not None:
        seen.append(a)
    computed = tuple(a.computed)
    if a.failure:
        return ShrinkOutcome(None, a.failure, computed)
    if a.missing:
        return ShrinkOutcome(None, _missing_reason(a.missing, reach), computed)
    units, labels = a.units, a.labels
    if not units:
        return ShrinkOutcome(None, "the passage has no sentence, line or table row", computed)
    need = set(a.hard)
    p_first, p_end = _passage_units(units, lo, hi)
    run = _best_run(units, need, p_first, p_end) or _best_run(units, need)
    if run is None:
        return ShrinkOutcome(None, "no run of whole units holds the answer's figures and words", computed)
    run = _prefer_question(units, run, need, text, question)
    first, last = _whole_rows(units, *run, text)
    if a.priority:
        inside = p_first <= run[0] and run[1] < p_end
        bounds = (p_first, p_end) if inside else (0, len(units))
        first, last = _whole_rows(units, *_add_soft(units, (first, last), a.priority, max_chars, bounds), text)
        if units[last].end - units[first].start > max_chars and units[run[1]].end - units[run[0]].start <= max_chars:
            first, last = _whole_rows(units, *run, text)  # whole rows of a soft item overshot: without it
    need |= {i for u in units[first:last + 1] for i in u.items & a.soft}
    note = ""
    with_header: bool | None = None
    dropped: tuple[str, ...] = ()
    # a run inside the passage takes the header the passage holds (a table continued above it
    # in the document is not this passage's header)
    header = _table_header(units, first, p_first if p_first <= first and last < p_end else 0)
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
            first, last = _whole_rows(units, first, last, text)
            with_header = False
            dropped = tuple(labels[i] for i in sorted(in_header))
            note = (f"without the table's header ({hdr_len:,} characters with it, over {max_chars}); "
                    f"only the header held {', '.join(dropped)}")
    if p_first <= first and last < p_end:
        first, last = _grow(units[:p_end], first, last, min_chars, text, p_first)
    else:
        first, last = _grow(units, first, last, min_chars, text)
    start, end = units[first].start, units[last].end
    out_text = text[start:end]
    whole = text[lo:hi].strip()
    p_start = lo + (len(text[lo:hi]) - len(text[lo:hi].lstrip()))
    p_stop = p_start + len(whole)
    # the proposal's characters outside the passage (a proposal apart from it is all outside)
    outside = (end - start) - max(0, min(end, p_stop) - max(start, p_start))
    if out_text == whole or (not outside and len(out_text) >= len(whole)):
        return ShrinkOutcome(None, "the passage is already minimal: no shorter run of whole "
                                   "sentences, lines or table rows holds the answer's figures and words", computed)
    unit = _unit_name(units[first:last + 1])
    held_items = {i for u in units[first:last + 1] for i in u.items}
    kept = tuple(dict.fromkeys(labels[i] for i in sorted(need & held_items) if a.priority.get(i, 0) < 2))
    lost = [i for i in sorted(a.soft - held_items) if a.priority[i] < 2]
    dropped = tuple(dict.fromkeys((*dropped, *(labels[i] for i in lost))))
    n_units = last - first + 1
    what = "table lines" if unit == "table row" else unit + ("s" if n_units != 1 else "")
    reason = (f"{n_units} {what}, {len(out_text):,} characters (from {len(whole):,}), "
              f"holding {', '.join(kept) if kept else 'the answer'}")
    if computed:
        reason += "; computed: " + "; ".join(computed)
    if note:
        reason += "; " + note
    lost_words = [labels[i] for i in lost if a.priority[i] == 1]
    if lost_words:
        reason += f"; without the words {', '.join(lost_words)} (more than {max_chars} characters with them)"
    if outside:
        before, after = max(0, p_start - start), max(0, end - p_stop)
        parts = [f"{before:,} characters before it" if before else "", f"{after:,} after it" if after else ""]
        reason += "; reaches out of the passage: " + " and ".join(p for p in parts if p)
    if len(out_text) > max_chars:
        reason += f"; still over {max_chars} characters"
    proposal = ShrinkProposal(out_text, start - p_start + (p_start - lo), end - p_start + (p_start - lo), unit, kept,
                              reason, with_header, dropped, computed, base + start, base + end, outside)
    return ShrinkOutcome(proposal, reason, computed)


def plan_shrink(passage: str, answer: str, question: str = "", *, max_chars: int = MAX_CHARS,
                min_chars: int = MIN_CHARS) -> ShrinkOutcome:
    """The lexical shrink of ``passage`` for ``answer``, or why there is none (module docstring).

    Args:
        passage: the current passage (verbatim in its document).
        answer: the pair's answer; its figures (as written or computed) and content words are
            what must be kept.
        question: the pair's question: its words count as given (not looked for), it names the
            rows a computed figure comes from, and among runs of the same length the one holding
            more of its content words wins.
        max_chars: the longest proposal aimed at (the checklist's ``max_passage_chars``): the
            table header and the answer's words are joined only within it.
        min_chars: a shorter run grows by whole units to at least this (when the passage has them).

    Returns:
        A :class:`ShrinkOutcome`; ``proposal`` is None when the passage is already minimal, a
        figure of the answer is neither in the passage nor computable from it, or the answer
        gives nothing to keep. Never raises on any text.
    """
    return _plan(passage, 0, len(passage), answer, question, max_chars, min_chars, 0, 0)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    i = text.find("\n", pos)
    return len(text) if i < 0 else i


def plan_evidence(document: str, start: int, end: int, answer: str, question: str = "", *,
                  reach: int = 2048, max_chars: int = MAX_CHARS, min_chars: int = MIN_CHARS) -> ShrinkOutcome:
    """The shrink of the passage ``document[start:end]`` (its located span), allowed to reach up
    to ``reach`` characters out of it (whole lines) when the passage itself cannot hold what the
    answer needs: a computed figure's operands in the rows around it, the answer's figure in the
    table just above (module docstring). A run inside the passage is always preferred.

    Returns:
        As :func:`plan_shrink`; the proposal's ``doc_start``/``doc_end`` are document offsets,
        ``outside`` the characters taken from around the passage.

    Raises:
        ValueError: a span outside the document.
    """
    if not 0 <= start <= end <= len(document):
        raise ValueError(f"bad span [{start}, {end}) in a document of {len(document)} characters")
    seen: list[_Analysis] = []
    inside = _plan(document[start:end], 0, end - start, answer, question, max_chars, min_chars, start, 0, seen)
    a = seen[0] if seen else None
    if not reach or a is None or not (a.missing or a.failure or (not a.hard - a.words and a.held_words < a.n_words)
                                      or (a.words and a.held_words < a.n_words)):
        return inside  # the passage holds what the answer needs (or nothing can be said of it)
    lo = _line_start(document, max(0, start - reach))
    hi = _line_end(document, min(len(document), end + reach))
    around: list[_Analysis] = []
    out = _plan(document[lo:hi], start - lo, end - lo, answer, question, max_chars, min_chars, lo, reach, around)
    if a.words and not a.missing and not a.failure:
        # the passage held enough of the answer's words: reach out only for more of them
        b = around[0] if around else None
        if out.proposal is None or b is None or b.failure or len(b.words) <= len(a.words):
            return inside
    return out


def _prefer_question(units: list[_Unit], run: tuple[int, int], need: set[int], text: str,
                     question: str) -> tuple[int, int]:
    """Among the runs as short as ``run`` holding ``need``, the one with most question words."""
    qwords = content_stems(question) if question.strip() else frozenset()
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
        score = len(qwords & content_stems(text[units[a].start:units[b].end]))
        if score > best_score:
            best, best_score = (a, b), score
    return best


def _label_line(u: _Unit, passage: str) -> bool:
    """A long row label on a line of its own ("Trade accounts receivable, net of doubtful
    accounts - $40 and $42"): one line of at most twice :data:`SHORT_LINE_CHARS`, with letters,
    not ending a sentence."""
    s = passage[u.start:u.end]
    return ("\n" not in s and len(s) <= 2 * SHORT_LINE_CHARS and any(c.isalpha() for c in s)
            and s[-1] not in ".!?" and (u.start == 0 or passage[u.start - 1] in "\n \t\u00a0"))


def _whole_rows(units: list[_Unit], first: int, last: int, passage: str) -> tuple[int, int]:
    """Widen a run that starts or ends inside a table row to whole rows: back from a line of
    figures to its label (the nearest line above with letters; a long label on a line of its
    own too, :func:`_label_line`), on over the lines of figures (or bare ``$``) that follow its
    last line."""
    def bare(u: _Unit) -> bool:
        return u.table and not any(c.isalpha() for c in passage[u.start:u.end])

    if bare(units[first]):
        while first > 0 and bare(units[first - 1]):
            first -= 1
        if first > 0 and (units[first - 1].table or _label_line(units[first - 1], passage)):
            first -= 1
    if units[last].table:
        while last + 1 < len(units) and bare(units[last + 1]):
            last += 1
    return first, last


def _grow(units: list[_Unit], first: int, last: int, min_chars: int, text: str, floor: int = 0) -> tuple[int, int]:
    """Add whole units (the next one first; none before ``units[floor]``), widened to whole
    table rows, until the run has ``min_chars`` characters."""
    while units[last].end - units[first].start < min_chars:
        if last + 1 < len(units):
            first, last = _whole_rows(units, first, last + 1, text)
        elif first > floor:
            first, last = _whole_rows(units, first - 1, last, text)
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


# -- fit in one chunk ---------------------------------------------------------------------------


#: One chunker's chunks of a document: its name (``recursive:2048``) and each chunk's
#: ``(start, end)`` character offsets in the document, in order (index = chunk number, 0-based).
ChunkSpans = tuple[str, Sequence[tuple[int, int]]]


def _chunk_of(chunks: Sequence[tuple[int, int]], offset: int) -> int | None:
    k = bisect.bisect_right([c[0] for c in chunks], offset) - 1
    return k if k >= 0 and chunks[k][0] <= offset < chunks[k][1] else None


def chunks_holding(chunks: Sequence[tuple[int, int]], start: int, end: int) -> list[int]:
    """The numbers (0-based) of the chunks wholly holding ``[start, end)``."""
    return [k for k, (a, b) in enumerate(chunks) if a <= start and end <= b]


def plan_fit(document: str, start: int, end: int, answer: str, question: str, chunkers: Sequence[ChunkSpans], *,
             min_chars: int = MIN_CHARS, reach: int = 0) -> ShrinkOutcome:
    """"Fit in one chunk": the largest part of the passage ``document[start:end]`` (whole
    sentences, lines or table rows) that lies inside one chunk of every chunker of ``chunkers``
    and still holds what the answer needs: every figure the passage holds for it (as written, or
    the rows a computed one comes from in the passage: a part is never taken for a derivation of
    its own, which could be a chance one) and, for an answer without figures, the content words
    the passage holds; or why there is none (which chunks hold which of the answer's figures).

    The answer is judged as :func:`plan_evidence` judges it: when a figure of the answer is
    neither in the passage nor computable from it alone, the passage is read inside the text
    around it (``reach`` characters either side, whole lines): a table's year header above the
    passage gives its columns, and an operand outside the passage means no part of it can do.

    Args:
        chunkers: per chunker, its name and the document's chunks (:data:`ChunkSpans`), as
            chonkie cut them.
        reach: characters either side of the passage read for what the passage alone does not
            tell (0: the passage alone); the shrink's own reach, so both say the same.

    Returns:
        A :class:`ShrinkOutcome`; the proposal's ``reason`` names the chunk (0-based, as
        ``chunk_index`` counts). None when the passage already lies inside one chunk of each.

    Raises:
        ValueError: a span outside the document.
    """
    if not 0 <= start < end <= len(document):
        raise ValueError(f"bad span [{start}, {end}) in a document of {len(document)} characters")
    if not chunkers:
        return ShrinkOutcome(None, "no chunker configured")
    holders = [chunks_holding(c, start, end) for _, c in chunkers]
    if all(holders):
        where = ", ".join(f"chunk {h[0]} of {name}" for (name, _), h in zip(chunkers, holders))
        return ShrinkOutcome(None, f"the passage already lies inside one chunk ({where}; chunks counted from 0)")
    windows: list[tuple[int, int, tuple[int, ...]]] = [(start, end, ())]
    for _, chunks in chunkers:
        nxt = []
        for a, b, ids in windows:
            for k, (c0, c1) in enumerate(chunks):
                lo, hi = max(a, c0), min(b, c1)
                if hi > lo:
                    nxt.append((lo, hi, ids + (k,)))
        windows = nxt
    passage = document[start:end]
    base = _analyse(passage, 0, len(passage), answer, question)
    # what the passage is read in: itself, or the text around it (offset ``off`` in the document)
    text, off, p_lo, p_hi, wide = passage, start, 0, len(passage), 0
    if reach and base.missing:
        lo = _line_start(document, max(0, start - reach))
        hi = _line_end(document, min(len(document), end + reach))
        text, off, p_lo, p_hi, wide = document[lo:hi], lo, start - lo, end - lo, reach
        base = _analyse(text, p_lo, p_hi, answer, question)
    units = base.units
    best: tuple[int, int, int, tuple[int, ...], _Analysis] | None = None
    for a, b, ids in windows:
        inside = [u for u in units if p_lo <= u.start and u.end <= p_hi and off + u.start >= a and off + u.end <= b]
        if not inside:
            continue
        ps, pe = inside[0].start, inside[-1].end
        if pe - ps < min_chars and pe - ps < len(passage.strip()):
            continue
        part = (_analyse(text, ps, pe, answer, question) if wide
                else _analyse(passage[ps:pe], 0, pe - ps, answer, question))
        if part.missing or (not base.failure and part.failure):
            continue
        if any(not any(i in u.items for u in inside) for i in base.hard - base.years):
            continue  # a figure, an operand of a computed one, or a needed word would be lost
        if best is None or pe - ps > best[1] - best[0]:
            best = (ps, pe, 0, ids, part)
    if best is None:
        return ShrinkOutcome(None, _no_fit_reason(off, base, chunkers, wide), tuple(base.computed),
                             tuple(base.derived))
    ps, pe, _, ids, part = best
    a0, a1 = (ps, pe) if wide else (0, pe - ps)  # the part in its analysis's text
    held = {i for u in part.units if a0 <= u.start and u.end <= a1 for i in u.items}
    kept = tuple(dict.fromkeys(part.labels[i] for i in range(len(part.labels))
                               if i in held and part.priority.get(i, 0) < 2))  # not the rows' names
    ps, pe = ps - p_lo, pe - p_lo  # in the passage
    text = passage[ps:pe]
    where = ", ".join(f"chunk {k} of {name}" for (name, _), k in zip(chunkers, ids))
    reason = (f"{len(text):,} of the passage's {len(passage.strip()):,} characters, inside {where} "
              f"(chunks counted from 0), holding {', '.join(kept) if kept else 'what the answer needs'}")
    if part.computed:
        reason += "; computed: " + "; ".join(part.computed)
    unit = _unit_name(_units(text)) if text else "line"
    p = ShrinkProposal(text, ps, pe, unit, kept, reason, None, (), tuple(part.computed), start + ps, start + pe, 0)
    return ShrinkOutcome(p, reason, tuple(part.computed), tuple(part.derived))


def _no_fit_reason(off: int, a: _Analysis, chunkers: Sequence[ChunkSpans], reach: int = 0) -> str:
    """Why no part of the passage inside one chunk holds what the answer needs: where its
    figures lie (``a``: the analysis of the text at document offset ``off``; ``reach``: how far
    around the passage it read)."""
    name, chunks = chunkers[0]
    places = []
    for i in sorted(a.hard - a.years):
        at = next((u for u in a.units if i in u.items), None)
        if at is None:
            continue
        k = _chunk_of(chunks, off + at.start)
        places.append(f"{a.labels[i]} in chunk {k}" if k is not None else a.labels[i])
    if a.missing:
        return _missing_reason(a.missing, reach)
    if not places:
        return f"no part of the passage inside one chunk of {name} holds what the answer needs"
    return (f"no one chunk of {name} holds what the answer needs: " + "; ".join(places[:8])
            + " (chunks counted from 0)")
