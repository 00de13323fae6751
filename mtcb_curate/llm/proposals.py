"""Evidence the tool proposes in numbered mode: the ranges of a window's numbered units a
curator would want as a supporting passage, ranked, so a small model need not find them.

A 1.5B model asked to find evidence in a 2,048-token window and answer with it often chose a
table fragment, a heading or a sentence that introduces a table (docs/performance.md,
"Generation with a real local model"). Here the tool does the finding: :func:`candidate_ranges`
reads the window's sentence map (:mod:`mtcb_curate.llm.numbered`) and returns contiguous unit
ranges that state a fact with its subject, within the passage length limits the checks use,
best first; the prompt then asks for a question and a short answer about the first one
(``prompts.numbered_messages``, ``proposal``), and successive samples or retries take the next.

Rules (ours, read off the windows of ``../shared/data`` and what a careful curator kept):

- A *fact* unit is running text (at least :data:`MIN_FACT_CHARS` characters, at least half of
  it letters; :data:`MIN_PLAIN_FACT_CHARS` without a figure or date) that is not boilerplate
  (:data:`BOILERPLATE`: a table-of-contents line, a page header or number, a
  forward-looking-statement notice, "See Note 4", a cover page line) and does not introduce a
  table (ends with ``:``, "as follows", "the following table": it states nothing).
- Its score: +4 for one or two figures (a currency amount, a percentage, an amount in millions
  or billions), +3 for more (a sentence comparing several figures: a 1.5B model asked about
  one mixed them up), +1 for a year or a date, +1 when it starts as a sentence (a capital
  letter, a currency sign or a quote) and +1 when it ends as one (``.``); -2 when it starts in
  lower case (a fragment cut by the window or a wrapped line).
- A range is a fact unit extended forward while it does not end a sentence and the next unit
  continues it (running text not starting with a capital, a bullet, a dash or a parenthesis:
  lower case, a digit, a currency sign), and backward over a unit it continues (scored as one
  text); it must stand within ``[min_chars, max_chars]``.
- A *table row* range: a label unit (letters, starting with a capital: not the wrapped end of
  a longer label; shorter than twice :data:`MIN_FACT_CHARS`, not ending with ``:``) followed by
  the units of its figures, up to the next label or blank line (not a row of years alone: a
  column heading); scored 2, +1 when the label holds a year or date (it carries its own
  period). Tables rank after prose that states the same kind of fact, since a small model
  reads a prose sentence more reliably than cells.
- Evidence-dense runs (``min_units`` > 1): a block of ``min_units`` or more consecutive fact
  units, scored by their sum.
- Ranges are ranked by score (on a tie: prose before a table row, then the shorter, since a
  small model reads a short sentence better, then by position), and a range overlapping a
  better one is dropped, so each proposal is new evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mtcb_curate.llm.numbered import SentenceMap

#: Fewest characters of a fact unit (a shorter one is a heading or a cell). Our threshold.
MIN_FACT_CHARS = 40
#: Fewest characters of a fact unit with neither a figure nor a date ("We regularly evaluate all
#: of our financial assets for impairment." says nothing to ask about). Our threshold.
MIN_PLAIN_FACT_CHARS = 80
#: Most ranges returned (the retries and samples of one window never need more). Our bound.
MAX_PROPOSALS = 12

#: Boilerplate a curator never takes as evidence (case-insensitive, searched in the unit).
BOILERPLATE = re.compile(
    r"table of contents|forward-looking|safe harbor|see (?:the )?(?:accompanying )?notes?\b|"
    r"incorporated (?:herein )?by reference|^\s*(?:part\s+[ivx]+|item\s+\d+[a-z]?)\b|"
    r"securities and exchange commission|commission file number|^\s*form 10-k|"
    r"(?:continued)\s*$|^\s*notes to (?:the )?consolidated", re.I)
_FIGURE = re.compile(
    r"[$€£¥]\s?\(?\d[\d,]*(?:\.\d+)?(?:\s*(?:million|billion|thousand)\b)?|\d[\d,]*(?:\.\d+)?\s?%|"
    r"\d[\d,]*(?:\.\d+)?\s*(?:million|billion|thousand|percent)\b", re.I)
_DATE = re.compile(
    r"\b(?:19|20)\d\d\b|\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b|\bfiscal\b", re.I)
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s*$")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n|\r[ \t]*\r")
#: A unit that introduces a table or list instead of stating a fact.
_INTRODUCES = re.compile(r":\s*$|\bas follows\b|\bthe following table\b", re.I)


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposed evidence range.

    Attributes:
        first, last: unit numbers (1-based, inclusive) of the window's sentence map.
        score: its rank score (see the module docstring); kind: ``prose``, ``table`` or ``block``.
    """

    first: int
    last: int
    score: int
    kind: str


def _letters_share(text: str) -> float:
    stripped = "".join(text.split())
    return sum(c.isalpha() for c in stripped) / len(stripped) if stripped else 0.0


def is_boilerplate(text: str) -> bool:
    """True for a unit a curator never takes as evidence (:data:`BOILERPLATE`, a page number,
    a line in capitals only)."""
    t = " ".join(text.split())
    if BOILERPLATE.search(t) or re.fullmatch(r"[\dA-Z\-–—. ]{1,8}", t):
        return True
    letters = [c for c in t if c.isalpha()]
    return len(letters) >= 6 and all(c.isupper() for c in letters)


def fact_score(text: str) -> int:
    """The score of one unit as evidence (module docstring), or 0 when it is not a fact unit."""
    t = " ".join(text.split())
    if len(t) < MIN_FACT_CHARS or _letters_share(t) < 0.5 or is_boilerplate(t) or _INTRODUCES.search(t):
        return 0
    figures = len(_FIGURE.findall(t))
    if not figures and not _DATE.search(t) and len(t) < MIN_PLAIN_FACT_CHARS:
        return 0
    score = (4 if figures <= 2 else 3) if figures else 0
    score += 1 if _DATE.search(t) else 0
    score += 1 if t[0].isupper() or t[0] in "$“\"" else -2 if t[0].islower() else 0
    score += 1 if _SENTENCE_END.search(t) else 0
    return max(score, 0)


def candidate_ranges(smap: SentenceMap, *, min_chars: int, max_chars: int, min_units: int = 1,
                     limit: int = MAX_PROPOSALS) -> list[Proposal]:
    """The evidence ranges to propose for a window, best first (module docstring).

    Args:
        smap: the window's sentence map.
        min_chars, max_chars: the passage length limits (characters) a range must meet (the
            checklist's, ``checks.Limits``).
        min_units: the fewest units a range must span (``generate.DENSE_MIN_UNITS`` for
            evidence-dense runs).
        limit: most ranges returned.

    Returns:
        Non-overlapping :class:`Proposal` ranges, each passing ``smap.range_problem``; empty when
        the window holds none (the caller then asks without a proposal).

    Cost: linear in the units (a few ms for a 2,048-token window).
    """
    n = len(smap)
    texts = [smap.display(i) for i in range(1, n + 1)]
    scores = [fact_score(t) for t in texts]
    found: list[Proposal] = []

    def size(i: int, j: int) -> int:
        return smap.units[j - 1].end - smap.units[i - 1].start

    def continues(a: int) -> bool:
        """Unit a + 1 goes on with unit a's sentence: a does not end one, both are running text,
        and a + 1 does not start with a capital (lower case, a digit, a currency sign)."""
        nxt = texts[a]
        return (not _SENTENCE_END.search(texts[a - 1]) and not is_boilerplate(texts[a - 1])
                and _letters_share(texts[a - 1]) >= 0.5 and _letters_share(nxt) >= 0.5
                and bool(nxt) and not nxt[0].isupper() and not nxt[0] in "•-*(")

    def ok(i: int, j: int) -> bool:
        return smap.range_problem(i, j, min_chars=min_chars, max_chars=max_chars, min_units=min_units) is None

    if min_units <= 1:
        for k in range(1, n + 1):
            if scores[k - 1] <= 0:
                continue
            i = j = k
            # Backward over the unit this one continues (a sentence wrapped across units).
            while i > 1 and continues(i - 1) and size(i - 1, j) <= max_chars:
                i -= 1
            # Forward while the sentence goes on into the next unit.
            while j < n and continues(j) and size(i, j + 1) <= max_chars:
                j += 1
            score = scores[k - 1] if i == j else fact_score(" ".join(texts[i - 1:j]))
            if ok(i, j) and score > 0:
                found.append(Proposal(i, j, score, "prose"))
        # Table rows: a label with letters, then its figure cells up to the next label.
        k = 1
        while k <= n:
            label = texts[k - 1]
            if (_letters_share(label) >= 0.5 and label[:1].isupper() and not is_boilerplate(label)
                    and not label.endswith(":")
                    and len(label) < MIN_FACT_CHARS * 2):
                j = k
                while (j < n and _letters_share(texts[j]) < 0.34 and re.search(r"[\d$€£¥]", texts[j])
                       and not _BLANK_LINE.search(smap.text[smap.units[j - 1].end:smap.units[j].start])):
                    j += 1
                cells = " ".join(texts[k:j])
                years_only = re.fullmatch(r"[\s$]*(?:(?:19|20)\d\d[\s$]*)+", cells) is not None
                if j > k and re.search(r"\d", cells) and not years_only and ok(k, j):
                    found.append(Proposal(k, j, 2 + (1 if _DATE.search(label) else 0), "table"))
            k += 1
    else:
        for i in range(1, n + 1):
            if scores[i - 1] <= 0:
                continue
            j = i
            while j < n and scores[j] > 0 and size(i, j + 1) <= max_chars:
                j += 1
            if j - i + 1 >= min_units and ok(i, j):
                found.append(Proposal(i, j, sum(scores[i - 1:j]), "block"))
    found.sort(key=lambda p: (-p.score, p.kind == "table", size(p.first, p.last), p.first))
    chosen: list[Proposal] = []
    for p in found:
        if all(p.last < q.first or p.first > q.last for q in chosen):
            chosen.append(p)
            if len(chosen) >= limit:
                break
    return chosen
