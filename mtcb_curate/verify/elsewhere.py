"""Evidence elsewhere in the document: when neither the passage nor the text around it can hold
what the answer needs inside one chunk of the reference chunker, the smallest span of the whole
document that holds it and lies inside one chunk (MTCB counts a hit only when one chunk holds
the whole passage).

A careful curator does this by hand: the figures a computed answer needs often stand together
somewhere else in a filing (a five-year summary holds net income and total assets side by side;
an MD&A paragraph restates a statement's figures; a list cut by a page break in one section is
whole in another). :func:`plan_elsewhere` looks for

- **the answer's figures as written** (``evidence.same_figure``: within rounding, across
  scales), each where the text around it (its sentence or its row's label) holds a word the
  question or the answer holds that is rare in the document (in at most :data:`MAX_WORD_SHARE`
  of its chunks, and not a word of arithmetic such as "average" or "margin"): a "4.2 %" of a
  loan's interest rate is not a D&A margin's;
- **the operands of the derivations found near the passage** (the rows the question names,
  ``ShrinkOutcome.derivations``): the same figures, as written, all inside one chunk, and the
  answer computed from them there again (from rows the question names: never from every figure
  of a chunk, which a big table meets by chance);
- when no derivation was found near the passage, **the rows the question names** anywhere
  (only for answer figures of at least :data:`MIN_DIGITS_OPEN` significant digits, in at most
  :data:`MAX_OPEN_CHUNKS` chunks that name most of those rows);
- for an answer without figures, **its content words** (its own, not the question's nor words
  of arithmetic; at least :data:`verify.shrink.REACH_MIN_WORDS` of them, as many of them rare
  in the document: "Performance is not measured through operating margin" leaves "performance"
  and "measured", which any chunk may hold; a span must hold as many as the passage and the
  text around it hold, and :data:`verify.shrink.REACH_WORD_SHARE` of them).

Each chunk (the intersection of one chunk of every chunker given, as chonkie cut them) is first
screened on the document's numbers and lowered text (:class:`DocumentIndex`, built once per
document: about 0.1 s for a 1 MB filing); only the chunks that pass are read as a passage of
their own (``verify.shrink``'s units, figures and derivations: a few ms each). Among the spans
found, the shortest wins (then the one holding more of the answer's words, then the nearest to
the passage; for an answer without figures, the one holding most of its words first); the proposal says where it is (its characters, its chunk counted from 0, its
distance from the passage, the heading above it) and why it was looked for.

Nothing here changes a pair; plain domain code (no Textual, no I/O).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mtcb_curate.evidence import Derivation, figure_label, parse_figures, same_figure, stated_scale
from mtcb_curate.evidence.compute import question_stems
from mtcb_curate.evidence.figures import significant_digits
from mtcb_curate.evidence.words import content_stems, content_words, stem
from mtcb_curate.verify.shrink import (
    GENERIC_LABEL_WORDS,
    MAX_CHARS,
    MIN_CHARS,
    REACH_MIN_WORDS,
    REACH_WORD_SHARE,
    ChunkSpans,
    ShrinkOutcome,
    ShrinkProposal,
    _NOT_CONTENT,
    _NOT_ROWS,
    _plan,
    _row_words,
    _unit_name,
    _units,
)

#: An answer figure no derivation near the passage explains is looked for from the rows the
#: question names only when it has at least this many significant digits ("4.2 %" is met by
#: some pair of named rows somewhere in a 1 MB filing; "12.4 %" far less often).
MIN_DIGITS_OPEN = 3
#: At most this many chunks are read for such an open search (those naming most of the rows).
MAX_OPEN_CHUNKS = 40
#: A word of the question or the answer anchors a figure found as written only when at most this
#: share of the document's chunks hold it (the company's name, "million", "fiscal" anchor nothing).
MAX_WORD_SHARE = 0.2
#: Words about the arithmetic or the period, not about what a figure measures: never anchors.
ARITHMETIC_WORDS = frozenset(stem(w) for w in (
    "average averages ratio ratios margin margins percent percentage change changes growth rate rates total "
    "totals year years fiscal annual amount amounts number value values increase decrease round rounded "
    "decimal places calculate units usd million millions billion billions thousand thousands data based "
    "company companies report reported answer metric metrics").split())
#: Characters either side of a figure read for its anchor words (with its row's label).
_CONTEXT = 120
#: Scale ratios under which a number written in the document may be an answer's figure ("$5,466
#: million" is "5,466,312" in thousands).
_RATIOS = (1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.,])\d+(?:\.\d+)?")
#: A line that heads a part of a filing: "ITEM 8.", "Note 6. Property and Equipment", a title in
#: capitals, "Consolidated Statements of Cash Flows".
_HEADING = re.compile(r"^(?:item\s+\d+[a-z]?\b|note\s+\d+\b|consolidated\s+(?:statements?|balance)\b|"
                      r"(?=[^a-z]*$)[A-Z][A-Z0-9 ,.&'’()/-]{9,}$)", re.I)
_HEADING_BACK = 6000


class DocumentIndex:
    """One document's numbers as written (offsets and values, no sign or scale: a screen, not a
    parse) and its lowered text, for :func:`plan_elsewhere`. About 0.1 s for a 1 MB filing:
    build it once per document (``app.findability.DocumentChunks.index`` keeps the last few)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        starts, values = [], []
        for m in _NUMBER.finditer(text):
            starts.append(m.start())
            values.append(float(m.group().replace(",", "")))
        self.starts = np.array(starts, dtype=np.int64)
        self.values = np.array(values, dtype=np.float64)

    def values_in(self, start: int, end: int) -> np.ndarray:
        """The numbers written in ``[start, end)``."""
        a, b = np.searchsorted(self.starts, [start, end])
        return self.values[a:b]


@dataclass(frozen=True)
class _Need:
    """What a chunk must show to be read: per answer figure, the magnitudes that may be it as
    written (across scales, with its tolerance) and, when computed near the passage, its
    operands' magnitudes; the word prefixes of an answer without figures."""

    claims: tuple[tuple[float, float, tuple[float, ...], bool], ...]  # (magnitude, tolerance, operands, scaled)
    open_claims: int          # answer figures explained by no derivation near the passage
    prefixes: tuple[str, ...]  # the answer's words (for an answer without figures)
    min_words: int            # ... of which a chunk must hold at least this many
    row_prefixes: tuple[str, ...]  # the rows the question names (open search)
    anchors: frozenset[str] = frozenset()  # stems that may anchor a figure found as written


def _prefix(stem: str) -> str:
    """A stem as a prefix to look for in lowered text ("compani" -> "compan")."""
    s = stem.rstrip("i") if len(stem) > 4 else stem
    return s if len(s) >= 3 else stem


def _needs(answer: str, question: str, derivations: Sequence[Derivation], held_words: int) -> _Need | str:
    """What the answer needs, or why nothing can be looked for (a line)."""
    claims = []
    open_claims = 0
    seen = set()
    figures = [f for f in parse_figures(answer, default_scale=stated_scale(question)) if not f.is_year]
    for f in figures:
        key = (f.magnitude, f.kind)
        if key in seen:
            continue
        seen.add(key)
        d = next((d for d in derivations if abs(abs(d.value) - f.magnitude) <= f.tolerance * (1 + 1e-9)
                  or (f.scale is not None and d.operands and d.operands[0].scale is not None
                      and abs(abs(d.value) * d.operands[0].scale - f.magnitude * f.scale)
                      <= f.tolerance * f.scale * (1 + 1e-9))), None)
        operands = tuple(sorted(o.magnitude for o in d.operands)) if d is not None else ()
        if d is None:
            open_claims += 1
        claims.append((f.magnitude, f.tolerance, operands, f.scale is not None))
    row_prefixes = tuple(sorted({_prefix(s) for s in _row_words(question) - GENERIC_LABEL_WORDS
                                 if s.isalpha() and len(s) >= 3}))
    if claims:
        words = {w.stem for w in content_words(answer)
                 if not any(f.start <= w.start < f.end for f in figures) and w.text.lower() not in _NOT_CONTENT}
        anchors = frozenset((question_stems(_NOT_ROWS.sub(" ", question)) | words) - ARITHMETIC_WORDS
                            - GENERIC_LABEL_WORDS)
        return _Need(tuple(claims), open_claims, (), 0, row_prefixes, anchors)
    asked = content_stems(question)
    stems = {w.stem for w in content_words(answer) if w.stem not in asked and w.text.lower() not in _NOT_CONTENT
             and w.stem not in ARITHMETIC_WORDS}
    if len(stems) < REACH_MIN_WORDS:
        return (f"the answer has no figure and {len(stems)} word{'s' if len(stems) != 1 else ''} of its own (not the "
                f"question's): fewer than {REACH_MIN_WORDS} to look for elsewhere in the document")
    need = max(held_words, -(-int(REACH_WORD_SHARE * 10 * len(stems)) // 10))
    return _Need((), 0, tuple(sorted(_prefix(s) for s in stems)), min(need, len(stems)), row_prefixes,
                 frozenset(stems))


def _windows(chunkers: Sequence[ChunkSpans], length: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """The intersections of one chunk of every chunker: ``(start, end, chunk numbers)``."""
    windows: list[tuple[int, int, tuple[int, ...]]] = [(0, length, ())]
    for _, chunks in chunkers:
        starts = [c[0] for c in chunks]
        nxt = []
        for a, b, ids in windows:
            k = max(0, bisect.bisect_right(starts, a) - 1)
            while k < len(chunks) and chunks[k][0] < b:
                lo, hi = max(a, chunks[k][0]), min(b, chunks[k][1])
                if hi > lo:
                    nxt.append((lo, hi, ids + (k,)))
                k += 1
        windows = nxt
    return windows


def _has(values: np.ndarray, magnitude: float, tolerance: float, scaled: bool) -> bool:
    """Whether a number of ``values`` may be the figure as written (at another scale only when
    the figure has one: "0.01" is no "10,000" in thousands)."""
    if not len(values):
        return False
    for r in _RATIOS if scaled else (1.0,):
        if np.any(np.abs(values * r - magnitude) <= tolerance * (1 + 1e-9)):
            return True
    return False


def _screen(index: DocumentIndex, need: _Need, a: int, b: int, open_ok: bool) -> int | None:
    """Whether the chunk ``[a, b)`` may hold what the answer needs: None when not, else a score
    (the rows the question names that it holds, for the open search's order)."""
    if need.prefixes:
        text = index.lower[a:b]
        return 0 if sum(p in text for p in need.prefixes) >= need.min_words else None
    values = index.values_in(a, b)
    opened = False
    for magnitude, tolerance, operands, scaled in need.claims:
        if _has(values, magnitude, tolerance, scaled):
            continue
        if operands:
            if all(np.any(np.abs(values - o) <= 1e-9 * max(1.0, o)) for o in operands):
                continue
            return None
        if not open_ok:
            return None
        opened = True
    if not opened:
        return 1_000
    text = index.lower[a:b]
    return sum(p in text for p in need.row_prefixes)


def _rare(index: DocumentIndex, stems: frozenset[str], chunkers: Sequence[ChunkSpans]) -> frozenset[str]:
    """The stems of ``stems`` (as prefixes) held by at most :data:`MAX_WORD_SHARE` of the first
    chunker's chunks."""
    chunks = chunkers[0][1]
    if not chunks:
        return frozenset()
    out = set()
    for s in stems:
        p = _prefix(s)
        n = sum(1 for a, b in chunks if p in index.lower[a:b])
        if n <= MAX_WORD_SHARE * len(chunks):
            out.add(s)
    return frozenset(out)


def _anchored(document: str, ds: int, de: int, claim, anchors: frozenset[str]) -> bool:
    """Whether the span ``[ds, de)`` holds ``claim`` as written with an anchor word around it
    (its sentence or row, :data:`_CONTEXT` characters either side, and its row's label)."""
    if not anchors:
        return False
    text = document[ds:de]
    for g in parse_figures(text):
        if g.is_year or not same_figure(claim, g):
            continue
        around = text[max(0, g.start - _CONTEXT):g.end + _CONTEXT] + "\n" + figure_label(text, g)
        if content_stems(around) & anchors:
            return True
    return False


def _titled(line: str, text: str, end: int) -> bool:
    """A title in title case ("Our Divisions") over a paragraph: two to eight words, every
    word of four letters or more capitalized, no figure, no end stop; the next line is prose (at
    least 50 characters with lower-case words). A table's row label has figures under it."""
    words = line.split()
    if not 2 <= len(words) <= 8 or any(c.isdigit() for c in line) or line[-1] in ".:;,!?":
        return False
    if not all(w[0].isupper() for w in words if len(w) >= 4):
        return False
    nxt_end = text.find("\n", end + 1)
    nxt = text[end + 1:nxt_end if nxt_end >= 0 else len(text)].strip()
    return len(nxt) >= 50 and sum(c.islower() for c in nxt) > len(nxt) // 2


def section_heading(text: str, pos: int) -> str:
    """The nearest line ending at or above ``pos`` (within 6,000 characters) that heads a part of a filing
    ("ITEM 6. SELECTED FINANCIAL DATA", "Note 6. Property and Equipment, Net", "Consolidated
    Statements of Cash Flows", a title over a paragraph: ``_titled``), stripped; "" when none."""
    end = pos
    floor = max(0, pos - _HEADING_BACK)
    while end > floor:
        start = text.rfind("\n", floor, end - 1) + 1
        line = " ".join(text[start:end].split())
        if 4 <= len(line) <= 90 and sum(c.isalpha() for c in line) >= 4 and (
                _HEADING.match(line) or _titled(line, text, end)):
            return line
        if start <= floor:
            break
        end = start - 1
    return ""


def plan_elsewhere(document: str, start: int, end: int, answer: str, question: str,
                   chunkers: Sequence[ChunkSpans], *, derivations: Sequence[Derivation] = (), held_words: int = 0,
                   why: str = "", index: DocumentIndex | None = None, max_chars: int = MAX_CHARS,
                   min_chars: int = MIN_CHARS) -> ShrinkOutcome:
    """The smallest span of ``document`` inside one chunk of every chunker of ``chunkers`` that
    holds what the answer needs (module docstring), for the passage ``document[start:end]``.

    Args:
        start, end: the passage's located span (the distance and the proposal's offsets are
            counted from it).
        chunkers: per chunker, its name and the document's chunks (``verify.shrink.ChunkSpans``,
            as chonkie cut them).
        derivations: the derivations found near the passage (``ShrinkOutcome.derivations`` of
            ``plan_evidence``): their operands are what a chunk must hold.
        held_words: for an answer without figures, how many of its words the passage and the
            text around it hold (a span elsewhere must hold at least as many).
        why: why the passage and the text around it do not do (one clause), for the proposal's
            ``where``.
        index: the document's :class:`DocumentIndex` (default: built here).

    Returns:
        A ``ShrinkOutcome``: the proposal (``where`` says where it is and why it was chosen;
        ``doc_start``/``doc_end`` its offsets; ``outside`` its characters outside the passage),
        or None and why. Never raises on any text.

    Raises:
        ValueError: a span outside the document.
    """
    if not 0 <= start <= end <= len(document):
        raise ValueError(f"bad span [{start}, {end}) in a document of {len(document)} characters")
    if not chunkers:
        return ShrinkOutcome(None, "no chunker configured")
    need = _needs(answer, question, derivations, held_words)
    if isinstance(need, str):
        return ShrinkOutcome(None, need)
    index = index if index is not None and index.text is document else DocumentIndex(document)
    if need.prefixes and len(_rare(index, need.anchors, chunkers)) < REACH_MIN_WORDS:
        return ShrinkOutcome(None, f"fewer than {REACH_MIN_WORDS} of the answer's words are rare in the document "
                                   "(in at most a fifth of its chunks): any chunk would hold them by chance")
    weak = [f for f in parse_figures(answer, default_scale=stated_scale(question))
            if not f.is_year and significant_digits(f) < MIN_DIGITS_OPEN]
    open_ok = not weak and bool(need.row_prefixes)
    screened = []
    for a, b, ids in _windows(chunkers, len(document)):
        score = _screen(index, need, a, b, open_ok)
        if score is not None:
            screened.append((score, a, b, ids))
    if need.open_claims:
        screened.sort(key=lambda w: -w[0])
        screened = [w for w in screened if w[0] == 1_000 or w[0] >= 2][:MAX_OPEN_CHUNKS]
    found: list[tuple[tuple, int, int, tuple[int, ...], ShrinkOutcome]] = []
    want = [ops for _, _, ops, _ in need.claims if ops]
    written = [f for f in parse_figures(answer, default_scale=stated_scale(question)) if not f.is_year]
    anchors = _rare(index, need.anchors, chunkers) if written else frozenset()
    for _, a, b, ids in screened:
        text = document[a:b]
        seen: list = []
        out = _plan(text, 0, len(text), answer, question, max_chars, min_chars, a, 0, seen, True)
        got = seen[0] if seen else None
        if got is None or got.missing or got.failure:
            continue
        if want and sorted(tuple(sorted(o.magnitude for o in d.operands)) for d in got.derived) != sorted(want):
            continue  # not the figures found near the passage: maybe a chance derivation
        if need.prefixes and len(got.words) < need.min_words:
            continue
        if out.proposal is not None:
            ds, de = out.proposal.doc_start, out.proposal.doc_end
        elif "already minimal" in out.reason:
            lead = len(text) - len(text.lstrip())
            ds, de = a + lead, a + len(text.rstrip())
        else:
            continue
        derived = {round(abs(d.value), 9) for d in got.derived}
        as_written = [f for f in written if not any(abs(v - f.magnitude) <= f.tolerance * (1 + 1e-9) or
                                                     (f.scale and abs(v * 1e6 - f.magnitude * f.scale) < 1) for v in derived)]
        if not all(_anchored(document, ds, de, f, anchors) for f in as_written):
            continue  # a figure found as written about something else (chance)
        held = len(got.words) + sum(1 for i in got.soft if got.priority.get(i) == 1)
        near = min(abs(ds - start), abs(de - end))
        # an answer without figures: the span holding most of its words first; else the shortest
        key = (-held, de - ds, near) if need.prefixes else (de - ds, -held, near)
        found.append((key, ds, de, ids, out))
    if not found:
        what = ("the answer's words" if need.prefixes else
                "the figures the answer is computed from" if want else "the answer's figures")
        return ShrinkOutcome(None, f"no one chunk of {chunkers[0][0]} anywhere in the document holds {what}")
    _, ds, de, ids, out = min(found, key=lambda f: f[0])
    return ShrinkOutcome(_proposal(document, start, end, ds, de, ids, out, chunkers, why, bool(need.prefixes)), out.reason,
                         out.computed, out.derivations)


def _proposal(document: str, start: int, end: int, ds: int, de: int, ids: tuple[int, ...], out: ShrinkOutcome,
              chunkers: Sequence[ChunkSpans], why: str, words: bool) -> ShrinkProposal:
    text = document[ds:de]
    p = out.proposal
    overlap = max(0, min(de, end) - max(ds, start))
    if de <= start:
        away = f"{start - de:,} characters before the passage"
    elif ds >= end:
        away = f"{ds - end:,} characters after the passage"
    else:
        away = "overlapping the passage"
    chunk = ", ".join(f"chunk {k} of {name}" for (name, _), k in zip(chunkers, ids))
    first_line = document.find("\n", ds, de)
    heading = section_heading(document, first_line if first_line > ds else de)  # the span's own first line too
    where = f"characters {ds:,}-{de:,} ({chunk}, chunks counted from 0), {away}"
    if heading:
        where += f", under “{heading}”"
    keeps = p.keeps if p is not None else ()
    held = ", ".join(keeps) if keeps else "what the answer needs"
    where += (f"; chosen as the span inside one chunk holding most of the answer's words ({held}), the shortest such"
              if words else f"; chosen as the smallest span inside one chunk that holds {held}")
    if why:
        where += f"; looked for because {why}"
    reason = out.reason if p is not None else f"the whole of {chunk}: nothing shorter holds what the answer needs"
    if p is not None:
        return ShrinkProposal(text, ds - start, de - start, p.unit, p.keeps, reason, p.with_header, p.dropped,
                              p.computed, ds, de, len(text) - overlap, where)
    return ShrinkProposal(text, ds - start, de - start, _unit_name(_units(text)) if text else "line", (),
                          reason, None, (), out.computed, ds, de, len(text) - overlap, where)
