"""The closest match of a supporting passage that is not in its document, even normalized.

LLMs alter quotes (a word replaced, a phrase dropped, spaces added inside numbers), and PDF
extractors lose spaces between words. For such a passage the curator needs the span it was
taken from and how close it is. The search never slides a window over the whole document:

1. **Anchors.** The passage is normalized (``ascii`` level, :mod:`mtcb_curate.verify.normalize`) and
   reduced to its alphanumeric *skeleton*; up to :data:`MAX_ANCHORS` evenly spaced n-grams of
   the skeleton (:data:`ANCHOR_CHARS` characters) are looked up in the document's skeleton
   (``bytes.find``, C speed). Spacing and punctuation changes do not break an anchor; an
   altered word breaks only the anchors that overlap it. An anchor found more than
   :data:`MAX_ANCHOR_HITS` times says nothing about where the passage is and is ignored.
2. **Diagonals.** Each hit votes for where the passage would start in the skeleton
   (hit position - anchor offset). Votes within a tolerance form a candidate; the
   :data:`MAX_CANDIDATES` candidates with the most distinct anchors are kept.
3. **Alignment.** Around each candidate only, the original text is normalized (a region of a
   few KB, from the skeleton's block map), cut to the window the candidate's skeleton range
   covers, and aligned with the normalized passage by rapidfuzz's Indel (LCS) opcodes. The
   span is the chain of matching blocks (of at least :data:`MIN_BLOCK` characters) with the
   most matched characters net of extra document text between blocks; its ends are then
   extended over characters that agree with the passage's, spaces aside (the LCS may have
   placed the first or last letters elsewhere), and then out to word boundaries
   (:func:`word_bounds`: a location never starts or ends mid-word).
4. **Score.** ``rapidfuzz.fuzz.ratio`` (normalized Indel similarity, 0-100) between the
   normalized passage and the normalized span (after widening to whole words). The best candidate wins; it is a match when the
   score is at least :data:`FUZZY_MIN_SCORE`.

Passages longer than :data:`MAX_FUZZY_CHARS` normalized characters are not aligned; they get no
fuzzy match. Costs: ``docs/verification.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from mtcb_curate.verify.normalize import ALNUM_TABLE, SkeletonIndex, normalize, normalize_passage

#: Minimum fuzzy score (0-100, ``fuzz.ratio`` of the normalized passage and the normalized
#: span) for a ``fuzzy`` verdict. How 75 was chosen: ``docs/verification.md``.
FUZZY_MIN_SCORE = 75.0

#: Length of an anchor n-gram, in skeleton (alphanumeric) characters: about two words.
ANCHOR_CHARS = 12
#: Anchors looked up per passage at most.
MAX_ANCHORS = 32
#: An anchor with more hits than this in the document is ignored (a stock phrase).
MAX_ANCHOR_HITS = 50
#: Candidate regions aligned per passage at most.
MAX_CANDIDATES = 3
#: Matching blocks shorter than this (normalized characters) do not start a span.
MIN_BLOCK = 3
#: Passages longer than this (normalized characters) get no fuzzy alignment.
MAX_FUZZY_CHARS = 10_000
#: Skeletons shorter than this (alphanumeric characters) cannot be anchored.
MIN_SKELETON = 8

_NON_ALNUM_RE = re.compile(r"[^A-Za-z0-9]+")


def _wordish(ch: str) -> bool:
    return ch.isalnum() or ch in "'’"


def word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` moved out to word boundaries: a start inside a word (a letter or digit
    on both sides of it) moves back to the word's first character, an end inside a word moves
    on to its last ("n one of the most comfortable rooms" located in "...in one of..." becomes
    "in one of the most comfortable rooms"). A span already on boundaries is returned as it
    is; an empty span is left alone. Offsets are characters of ``text``; ``0 <= start <= end <=
    len(text)``."""
    if start >= end:
        return start, end
    s, e = start, end
    if 0 < s < len(text) and _wordish(text[s - 1]) and _wordish(text[s]):
        while s > 0 and _wordish(text[s - 1]):
            s -= 1
    if 0 < e < len(text) and _wordish(text[e - 1]) and _wordish(text[e]):
        while e < len(text) and _wordish(text[e]):
            e += 1
    return s, e


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    """The best fuzzy alignment found for a passage.

    Attributes:
        start, end: character offsets of the span in the original document text (end
            exclusive), or None when no candidate region was found at all.
        score: ``fuzz.ratio`` (0-100) of the normalized passage and the normalized span; 0.0
            when nothing was aligned.
        matched: True when ``score >= FUZZY_MIN_SCORE`` (the ``fuzzy`` verdict).
    """

    start: int | None
    end: int | None
    score: float

    @property
    def matched(self) -> bool:
        """True when a span was aligned with at least :data:`FUZZY_MIN_SCORE`."""
        return self.start is not None and self.score >= FUZZY_MIN_SCORE


NO_MATCH = FuzzyMatch(None, None, 0.0)


def _anchor_plan(sk: bytes) -> tuple[int, list[int]]:
    """Anchor length and offsets (into the passage skeleton ``sk``)."""
    n = ANCHOR_CHARS if len(sk) >= 4 * ANCHOR_CHARS else max(4, len(sk) // 4)
    count = min(MAX_ANCHORS, max(1, len(sk) // n))
    if count == 1:
        return n, [max(0, (len(sk) - n) // 2)]
    span = len(sk) - n
    return n, sorted({round(i * span / (count - 1)) for i in range(count)})


def candidates(skidx: SkeletonIndex, sk: bytes) -> list[tuple[int, int, int]]:
    """Candidate placements of a passage skeleton ``sk`` in a document skeleton.

    Returns up to :data:`MAX_CANDIDATES` tuples ``(support, lo, hi)``: the number of distinct
    anchors that agree, and the skeleton range ``[lo, hi)`` the passage would cover (from the
    smallest agreeing diagonal to the largest plus the passage skeleton's length, widened by
    a tenth of that length and at least 8 characters for insertions). Best first.
    """
    if len(sk) < MIN_SKELETON:
        return []
    n, offsets = _anchor_plan(sk)
    votes: list[tuple[int, int]] = []  # (diagonal, anchor number)
    found = skidx.find_each([sk[off:off + n] for off in offsets], limit=MAX_ANCHOR_HITS + 1)
    for number, (off, hits) in enumerate(zip(offsets, found)):
        if len(hits) > MAX_ANCHOR_HITS:
            continue
        votes.extend((h - off, number) for h in hits)
    if not votes:
        return []
    votes.sort()
    tol = max(32, len(sk) // 3)
    clusters: list[tuple[int, int, int]] = []
    start = 0
    for i in range(1, len(votes) + 1):
        if i == len(votes) or votes[i][0] - votes[i - 1][0] > tol:
            group = votes[start:i]
            support = len({a for _, a in group})
            slack = max(8, len(sk) // 10)
            lo = max(0, group[0][0] - slack)
            hi = min(len(skidx.skeleton), group[-1][0] + len(sk) + slack)
            clusters.append((support, lo, hi))
            start = i
    clusters.sort(key=lambda c: (-c[0], c[1]))
    return clusters[:MAX_CANDIDATES]


def align(passage_norm: str, region_norm: str) -> tuple[int, int, float] | None:
    """Where the normalized passage sits in a normalized region: ``(a, b, score)``.

    ``[a, b)`` indexes ``region_norm``; ``score`` is ``fuzz.ratio(passage_norm,
    region_norm[a:b])`` (0-100). None when no matching block of :data:`MIN_BLOCK` characters
    exists. Cost: rapidfuzz Indel opcodes, O(len(passage) * len(region) / 64).
    """
    if not passage_norm or not region_norm:
        return None
    blocks = [b for b in Indel.opcodes(passage_norm, region_norm).as_matching_blocks() if b.size > 0]
    big = [i for i, b in enumerate(blocks) if b.size >= MIN_BLOCK]
    if not big:
        return None
    # Best chain of consecutive big blocks: matched characters minus extra region text.
    best = (-1, 0, 0)
    cur, cur_start = 0, big[0]
    for pos, i in enumerate(big):
        blk = blocks[i]
        if pos == 0:
            cur, cur_start = blk.size, i
        else:
            prev = blocks[big[pos - 1]]
            extra = max(0, (blk.b - (prev.b + prev.size)) - (blk.a - (prev.a + prev.size)))
            if cur - extra > 0:
                cur += blk.size - extra
            else:
                cur, cur_start = blk.size, i
        if cur > best[0]:
            best = (cur, cur_start, i)
    _, first, last = best
    # Widen with small blocks next to the chain whose region gap is no larger than their
    # passage gap plus 2 (a one-letter word, a final period).
    while first > 0:
        prev, nxt = blocks[first - 1], blocks[first]
        if (nxt.b - (prev.b + prev.size)) <= (nxt.a - (prev.a + prev.size)) + 2:
            first -= 1
        else:
            break
    while last + 1 < len(blocks):
        prev, nxt = blocks[last], blocks[last + 1]
        if (nxt.b - (prev.b + prev.size)) <= (nxt.a - (prev.a + prev.size)) + 2:
            last += 1
        else:
            break
    a = blocks[first].b
    b = blocks[last].b + blocks[last].size
    # The LCS traceback may have matched the passage's first or last characters elsewhere
    # (an equally long alignment); take them back where the text right next to the span agrees,
    # spaces aside (a quote with spaces added or dropped inside words).
    i, j = blocks[first].a - 1, a - 1
    while i >= 0 and j >= 0:
        if passage_norm[i] == region_norm[j]:
            a = j
            i, j = i - 1, j - 1
        elif passage_norm[i] == " ":
            i -= 1
        elif region_norm[j] == " ":
            j -= 1
        else:
            break
    i, j = blocks[last].a + blocks[last].size, b
    while i < len(passage_norm) and j < len(region_norm):
        if passage_norm[i] == region_norm[j]:
            i, j = i + 1, j + 1
            b = j
        elif passage_norm[i] == " ":
            i += 1
        elif region_norm[j] == " ":
            j += 1
        else:
            break
    # Never start or end on a space.
    while a < b and region_norm[a] == " ":
        a += 1
    while b > a and region_norm[b - 1] == " ":
        b -= 1
    if a >= b:
        return None
    return a, b, float(fuzz.ratio(passage_norm, region_norm[a:b]))


def locate_fuzzy(skidx: SkeletonIndex, passage: str, passage_norm: str | None = None) -> FuzzyMatch:
    """The best fuzzy alignment of ``passage`` in the document of ``skidx`` (see module
    docstring); :data:`NO_MATCH` when no anchor is found or the passage is too short or too
    long to align.

    Args:
        skidx: the document's skeleton index (``SkeletonIndex(text)``; build once, reuse).
        passage: the supporting passage, as given.
        passage_norm: ``normalize_passage(passage)`` when the caller has it already.

    Cost: up to about 50 ms for a 3,500-character passage in a 1 MB filing, typically 5-15 ms.
    """
    pn = normalize_passage(passage) if passage_norm is None else passage_norm
    if not pn or len(pn) > MAX_FUZZY_CHARS:
        return NO_MATCH
    sk = _NON_ALNUM_RE.sub("", pn).encode("ascii")
    best = NO_MATCH
    text = skidx.text
    lead = len(pn) - len(pn.lstrip("".join(ch for ch in set(pn) if not ch.isalnum())))
    trail = len(pn) - len(pn.rstrip("".join(ch for ch in set(pn) if not ch.isalnum())))
    for _support, lo, hi in candidates(skidx, sk):
        a, b = skidx.region(lo, hi)
        base = skidx.region_base(lo)
        norm = normalize(text, "ascii", a, b)
        # The window of the normalized region that the skeleton range [lo, hi) covers, plus
        # room for the passage's own leading and trailing punctuation.
        alnum = np.flatnonzero(ALNUM_TABLE[np.frombuffer(norm.text.encode("ascii"), dtype=np.uint8)])
        if alnum.size == 0:
            continue
        i, j = lo - base, hi - base - 1
        wl = int(alnum[min(max(i, 0), alnum.size - 1)]) - lead - 2
        wr = int(alnum[min(max(j, 0), alnum.size - 1)]) + 1 + trail + 2
        wl, wr = max(0, wl), min(len(norm.text), wr)
        found = align(pn, norm.text[wl:wr])
        if found is None:
            continue
        na, nb, score = found
        if score > best.score:
            s0, e0 = norm.to_original(wl + na, wl + nb)
            s, e = word_bounds(text, s0, e0)
            if (s, e) != (s0, e0):  # widened to whole words: the score is the reported span's
                score = float(fuzz.ratio(pn, normalize_passage(text[s:e])))
            best = FuzzyMatch(s, e, score)
            if score >= 100.0:
                break
    return best
