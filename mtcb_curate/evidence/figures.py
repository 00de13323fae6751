"""Figures in text, parsed as numbers with their character spans, and equality of figures within
rounding and across scales.

A figure is a number as a reader of a filing or an article takes it: ``$12,345.00``, ``12345``,
``(4.2)`` (negative, the accountants' parentheses), ``-5.1%``, ``$1.2 billion``, ``450M``
after a currency sign, ``3,991`` under a table heading "(In millions, except per share
amounts)". Years are not figures: ``2022``, ``FY22``, ``FY 2022``, ``fiscal 2022`` and
``fiscal year 2022`` are :attr:`FigureKind.YEAR` with the value 2022, so the question's "FY22" is
never the figure 22. Note and item references ("Note 16", "Item 8"), list markers ("(1)"),
numbers glued to letters ("Q2", "3M", "10th", "cl100k") and the day of a date ("December 31")
are not figures and are not returned.

Rules (our own; tests in ``tests/test_evidence_figures.py``):

- the scale of a figure is the word after it (thousand, million, billion, trillion, their short
  forms "mn", "bn", and "k"/"m"/"b" glued after a currency figure), else the nearest table
  heading before it in the same text ("in millions", "(Millions, except ...)", "(in thousands)",
  "$ in billions") (:attr:`Figure.scale_source` says which), else unknown (None);
- the precision of a figure is half a unit of its last written digit; trailing zeros after the
  decimal point are formatting ("$5466.00" is written to the unit), so they add no precision;
- a passage's figure is an answer's figure (:func:`same_figure`) when their magnitudes (signs
  ignored: an answer says "fell 0.9 %" where the table says "(0.9)") are equal within the
  answer's precision, either as written or, when both scales are known, in absolute units. A year equals
  only a year. A percentage equals a percentage or a plain number (a table column of percents
  writes "%" once), never a currency amount.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum


class FigureKind(StrEnum):
    """What a figure is: a plain number, a currency amount, a percentage, or a year."""

    NUMBER = "number"
    CURRENCY = "currency"
    PERCENT = "percent"
    YEAR = "year"


#: Scale words and their multipliers (case-insensitive; "m"/"b"/"k" only glued after a currency
#: figure, as in "$450M", since "3M" is a company and "5 m" a length).
SCALE_WORDS: dict[str, float] = {
    "thousand": 1e3, "thousands": 1e3, "k": 1e3,
    "million": 1e6, "millions": 1e6, "mn": 1e6, "mm": 1e6, "mil": 1e6, "m": 1e6,
    "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9,
    "trillion": 1e12, "trillions": 1e12, "tn": 1e12,
}
_GLUED_ONLY = frozenset({"k", "m", "b", "mm", "mil"})

#: Words before a number that make it a reference, not a figure ("Note 16", "Item 7A").
REFERENCE_WORDS = frozenset("note notes item items section sections part parts page pages exhibit "
                            "exhibits schedule article rule chapter figure table step".split())
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")

_CURRENCY = r"(?:US\$|USD|EUR|GBP|JPY|CHF|[$€£¥])"
_NUMBER_RE = re.compile(
    r"(?P<open>\(\s*)?"
    r"(?P<cur1>" + _CURRENCY + r")?\s?"
    r"(?P<sign>(?<![0-9A-Za-z])[-−](?=[$€£¥]?[0-9.]))?"
    r"(?P<cur2>" + _CURRENCY + r")?\s?"
    r"(?P<num>(?<![0-9A-Za-z.,])(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?|(?<![0-9A-Za-z])\.[0-9]+)"
    r"(?P<glued>[A-Za-z]+)?"
    r"(?P<close>\s*\))?"
    r"(?P<pct>\s?(?:%|percent\b|per\s?cent\b))?"
    r"(?P<scale>\s(?:thousand|million|billion|trillion|mn|bn|tn)s?\b)?",
    re.I)
_FISCAL_RE = re.compile(
    r"\b(?:FY\s?'?(?P<fy>[0-9]{4}|[0-9]{2})|fiscal\s+(?:year\s+)?(?P<fiscal>(?:19|20)[0-9]{2}))(?![0-9A-Za-z])",
    re.I)
_CONTEXT_RE = re.compile(
    r"(?:\(|\b(?:in|amounts\s+in|dollars\s+in|\$\s*in|figures\s+in|expressed\s+in)\s+)"
    r"(?:(?:u\.?s\.?\s+)?dollars\s+in\s+|\$\s*)?"
    r"(?P<word>thousands|millions|billions)\b",
    re.I)
_REF_BEFORE = re.compile(r"(?:^|[^A-Za-z])(?P<w>[A-Za-z]+)\.?\s*$")
_DATE_BEFORE = re.compile(r"\b(?:" + _MONTHS + r")\.?\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure found in a text.

    Attributes:
        text: the figure as written, ``source[start:end]`` (sign, currency, parentheses, "%" and
            a scale word included).
        start, end: character offsets in the text it was parsed from (end exclusive).
        value: the signed number as written, before any scale (``"$1.2 billion"`` -> 1.2,
            ``"(0.9)"`` -> -0.9, ``"FY22"`` -> 2022).
        kind: :class:`FigureKind`.
        decimals: digits after the decimal point that carry precision (trailing zeros dropped:
            ``"5466.00"`` -> 0, ``"24.26"`` -> 2).
        scale: the multiplier from a scale word or the text's table heading (1e6 for millions),
            or None when unknown (a year: always None).
        scale_source: ``"word"``, ``"context"`` or ``""`` (unknown).
    """

    text: str
    start: int
    end: int
    value: float
    kind: FigureKind
    decimals: int = 0
    scale: float | None = None
    scale_source: str = ""

    @property
    def magnitude(self) -> float:
        """The absolute value as written (before scale)."""
        return abs(self.value)

    @property
    def tolerance(self) -> float:
        """Half a unit of the last digit written, in the figure's own (unscaled) units."""
        return 0.5 * 10.0 ** (-self.decimals)

    @property
    def absolute(self) -> float | None:
        """``|value| * scale`` when the scale is known, else None."""
        return None if self.scale is None else self.magnitude * self.scale

    @property
    def is_year(self) -> bool:
        """True for a year (``2022``, ``FY22``)."""
        return self.kind == FigureKind.YEAR

    def describe(self) -> str:
        """The figure for a message: as written, trimmed of parentheses' spaces."""
        return " ".join(self.text.split())


def _decimals(digits: str) -> int:
    if "." not in digits:
        return 0
    return len(digits.split(".", 1)[1].rstrip("0"))


def scale_contexts(text: str) -> list[tuple[int, float]]:
    """Table headings that set a scale for the figures after them: ``(offset, multiplier)`` in
    order of offset ("(in millions, except per share data)" -> 1e6)."""
    return [(m.start(), SCALE_WORDS[m.group("word").lower()]) for m in _CONTEXT_RE.finditer(text)]


def _context_scale(contexts: list[tuple[int, float]], at: int) -> float | None:
    scale = None
    for offset, mult in contexts:
        if offset >= at:
            break
        scale = mult
    return scale


def parse_figures(text: str, *, default_scale: float | None = None, years: bool = True) -> list[Figure]:
    """Every figure of ``text``, in order of offset.

    Args:
        text: any text (a passage, an answer, a question).
        default_scale: the scale of figures with neither a scale word nor a heading before them
            (e.g. the question's "in USD millions" for its answer), or None.
        years: include years (:attr:`FigureKind.YEAR`); False drops them.

    Returns:
        ``Figure``s with ``text[f.start:f.end] == f.text``. Never raises on any string.
    """
    out: list[Figure] = []
    taken: list[tuple[int, int]] = []
    for m in _FISCAL_RE.finditer(text):
        raw = m.group("fy") or m.group("fiscal")
        year = int(raw) if len(raw) == 4 else 2000 + int(raw)
        out.append(Figure(m.group(0), m.start(), m.end(), float(year), FigureKind.YEAR))
        taken.append((m.start(), m.end()))
    contexts = scale_contexts(text)
    for m in _NUMBER_RE.finditer(text):
        num_start, num_end = m.span("num")
        if any(s <= num_start < e for s, e in taken):
            continue
        digits = m.group("num")
        glued = m.group("glued")
        cur = m.group("cur1") or m.group("cur2")
        scale_word = None
        if glued:
            g = glued.lower()
            if cur and g in SCALE_WORDS:
                scale_word = g
            else:
                continue  # "Q2", "3M", "10th", "cl100k": not a figure
        if m.group("scale"):
            scale_word = m.group("scale").strip().lower()
        # A number right after a letter or digit run without space belongs to a word ("A380").
        if num_start > 0 and (text[num_start - 1].isalpha()) and not cur:
            continue
        before = text[max(0, num_start - 24):num_start]
        plain = "," not in digits and "." not in digits and not cur and not m.group("pct") and not scale_word
        if plain:
            ref = _REF_BEFORE.search(before.rstrip("( "))
            if ref and ref.group("w").lower() in REFERENCE_WORDS and len(digits) <= 3:
                continue
            if _DATE_BEFORE.search(before) and len(digits) <= 2:
                continue  # the day of "December 31"
            if m.group("open") and m.group("close") and len(digits) == 1:
                continue  # a list marker "(1)"
        open_, close = m.group("open"), m.group("close")
        paired = bool(open_ and close)
        first = [m.start(g) for g in ("cur1", "sign", "cur2") if m.group(g)]
        start = m.start() if paired else min(first + [num_start])
        if paired or not close:
            end = m.end()
        else:  # "... 1,234)" closes an earlier parenthesis: not the figure's
            end = m.end("glued") if glued else num_end
        while end > start and text[end - 1].isspace():
            end -= 1
        while start < end and text[start].isspace():
            start += 1
        negative = bool(m.group("sign")) or paired
        value = float(digits.replace(",", ""))
        if negative:
            value = -value
        pct = bool(m.group("pct")) and (paired or not close)
        if plain and len(digits) == 4 and 1900 <= value <= 2099 and not negative:
            kind = FigureKind.YEAR
        elif pct:
            kind = FigureKind.PERCENT
        elif cur:
            kind = FigureKind.CURRENCY
        else:
            kind = FigureKind.NUMBER
        if kind == FigureKind.YEAR:
            scale, source = None, ""
        elif scale_word is not None:
            scale, source = SCALE_WORDS[scale_word], "word"
        elif kind == FigureKind.PERCENT:
            scale, source = None, ""
        else:
            ctx = _context_scale(contexts, start)
            if ctx is not None:
                scale, source = ctx, "context"
            elif default_scale is not None:
                scale, source = default_scale, "default"
            else:
                scale, source = None, ""
        out.append(Figure(text[start:end], start, end, value, kind, _decimals(digits), scale, source))
    out.sort(key=lambda f: f.start)
    if not years:
        out = [f for f in out if not f.is_year]
    return out


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * (1 + 1e-9) + 1e-12 * max(abs(a), abs(b))


def same_figure(claim: Figure, found: Figure) -> bool:
    """True when ``found`` (a passage's figure) is ``claim`` (an answer's) within rounding to the
    claim's precision: ``found`` rounded to ``claim``'s last written digit gives ``claim``
    ("$1.2 billion" is "1,234" in millions; "24.6 %" is not "25 %": the passage would be
    coarser than the answer). Years only equal years; a percentage never equals a currency
    amount; magnitudes (signs ignored) compared as written, or in absolute units when both
    scales are known and differ."""
    if claim.is_year or found.is_year:
        return claim.is_year and found.is_year and claim.value == found.value
    if {claim.kind, found.kind} == {FigureKind.PERCENT, FigureKind.CURRENCY}:
        return False
    if _close(claim.magnitude, found.magnitude, claim.tolerance):
        return True
    if claim.scale is not None and found.scale is not None and claim.scale != found.scale:
        return _close(claim.magnitude * claim.scale, found.magnitude * found.scale, claim.tolerance * claim.scale)
    return False


def find_figure(target: Figure, figures: list[Figure]) -> Figure | None:
    """The first of ``figures`` that holds ``target`` (:func:`same_figure`), or None."""
    for f in figures:
        if same_figure(target, f):
            return f
    return None


_SCALE_PHRASE = re.compile(
    r"\b(?:in|of)\s+(?:(?:usd|us\$|\$|u\.s\.\s+dollars|dollars|eur|gbp)\s+)?(?P<word>thousands|millions|billions)\b",
    re.I)


def stated_scale(text: str) -> float | None:
    """The scale a question asks its answer in ("(in USD millions)", "Answer in USD
    thousands", "in millions of dollars"), or None."""
    m = _SCALE_PHRASE.search(text)
    return SCALE_WORDS[m.group("word").lower()] if m else None


def significant_digits(f: Figure) -> int:
    """Significant digits of a figure as written (``"24.26"`` -> 4, ``"0.01"`` -> 1, ``"1,200"``
    -> 4)."""
    if f.magnitude == 0:
        return 1
    whole = int(math.floor(math.log10(f.magnitude))) + 1
    return max(1, whole + f.decimals)


_LABEL_WORD = re.compile(r"[A-Za-z][A-Za-z&'-]{2,}")


def figure_label(text: str, figure: Figure, *, max_lines: int = 8) -> str:
    """The words that name ``figure`` in ``text``: its table row's label or the words before it
    in its sentence. The text between the start of the figure's line and the figure when that
    holds a word of three letters or more; else the nearest line above with such a word (a
    table extracted one cell per line puts "Net sales", "$", "34,229" on lines of their own).
    At most ``max_lines`` lines up; the last 100 characters; "" when none."""
    line_start = text.rfind("\n", 0, figure.start) + 1
    head = text[line_start:figure.start]
    if _LABEL_WORD.search(head):
        return head[-100:].strip()
    end = line_start - 1
    for _ in range(max_lines):
        if end <= 0:
            break
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if _LABEL_WORD.search(line) and not _NUMBER_RE.fullmatch(line.strip()):
            return line[-100:].strip()
        end = start - 1
    return ""
