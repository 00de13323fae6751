"""Content words of a text, and how much of an answer a passage holds: the lexical measure the
``answerable`` check and the passage shrink share (our own rule: lower case, stopwords removed,
numbers without thousands separators)."""

from __future__ import annotations

import re
from functools import lru_cache

#: ``answerable`` warns when fewer than this share of the answer's content words (lower case,
#: stopwords removed, numbers without separators) occur in the passage. Our own lexical
#: threshold: a supporting passage normally contains the figure or name the answer gives; a
#: paraphrased answer ("It increased") has few content words and is judged on those.
MIN_ANSWER_OVERLAP = 0.5

_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but as is are was were be been being it its this "
    "that these those which who whom whose what when where why how do does did has have had not no "
    "than then so such there their they them he she his her we our you your i me my than about into "
    "over under also per".split())
_TOKEN = re.compile(r"[^\W_]+(?:[.,][0-9]+)*")


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` minus stopwords; numbers lose their thousands separators
    (``1,234.5`` -> ``1234.5``)."""
    out = set()
    for w in _TOKEN.findall(text.lower()):
        w = w.replace(",", "") if any(ch.isdigit() for ch in w) else w
        if w and w not in _STOPWORDS:
            out.add(w)
    return out


@lru_cache(maxsize=4096)
def answer_overlap(answer: str, passage: str) -> float | None:
    """Share (0-1) of the answer's content words found in the passage; None when the answer
    has none (empty, or stopwords only). Cached for the last 4,096 (answer, passage) pairs: the
    review screen's queue asks again for every row it shows each time the set-wide results
    change."""
    words = content_words(answer)
    if not words:
        return None
    have = content_words(passage)
    # A number in the answer also matches a number in the passage written with a unit glued
    # on ("$10" / "10"): compare digits-only forms too.
    digits = {re.sub(r"[^0-9.]", "", w) for w in have}
    hit = sum(1 for w in words if w in have or (any(c.isdigit() for c in w) and re.sub(r"[^0-9.]", "", w) in digits))
    return hit / len(words)
