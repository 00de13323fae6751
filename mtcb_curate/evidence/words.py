"""Content words of a text after stemming: what the ``answerable`` check, the passage shrink and
the generation filters compare, so "founded" meets "founding" and "companies" meets "company".

A content word is a run of letters (inner apostrophes and hyphens kept as one word: "o'clock",
"well-known"), lower-cased, not a stopword (:data:`STOPWORDS`, our list: articles, pronouns,
auxiliaries, prepositions, conjunctions and the words questions are built with), stemmed with
the Snowball English stemmer (Porter's second algorithm) of the ``snowballstemmer`` package
(pinned below 3: its 3.x English stemmer changed, "internal" no longer meets "intern").
Figures are not words here: :mod:`~mtcb_curate.evidence.figures` compares them as numbers.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

#: Words that carry no content of their own (our list, lower case, straight apostrophes).
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but nor as is are was were be been being am "
    "it its it's this that these those which who whom whose what when where why how whether "
    "do does did doing done has have had having not no than then so such there their theirs they "
    "them themselves he him his himself she her hers herself we us our ours ourselves you your "
    "yours yourself i me my mine myself about into onto over under also per via upon within "
    "without between among amongst through throughout during before after above below up down out "
    "off again further once here all any both each few more most other some own same too very can "
    "could will would shall should may might must just only own s t don't isn't aren't wasn't "
    "weren't hasn't haven't hadn't doesn't didn't won't wouldn't shan't shouldn't can't cannot "
    "couldn't mustn't let's that's who's what's here's there's when's where's why's how's "
    "i'm you're he's she's we're they're i've you've we've they've i'd you'd he'd she'd we'd "
    "they'd i'll you'll he'll she'll we'll they'll if while because until against etc "
    "yes mr mrs ms dr".split())

_WORD = re.compile(r"(?<![0-9])[^\W\d_]+(?:['’-][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class Word:
    """One content word of a text.

    Attributes:
        text: the word as written.
        stem: its Snowball stem (lower case).
        start, end: character offsets in the text (end exclusive).
    """

    text: str
    stem: str
    start: int
    end: int


_STEM_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _stemmer():
    # snowballstemmer rather than nltk's copy of the same algorithm: nltk's package init loads
    # most of nltk (even with scipy kept out), in the app's process and in the analysis's
    # (measured in docs/performance.md)
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball stem of one word, lower-cased (``"Founded"`` -> ``"found"``); cached."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    with _STEM_LOCK:  # a snowballstemmer stemmer keeps its word in itself while it works
        return _stemmer().stemWord(w)


def is_stopword(word: str) -> bool:
    """True for a word of :data:`STOPWORDS` (case-insensitive, either apostrophe)."""
    return word.lower().replace("’", "'") in STOPWORDS


def content_words(text: str) -> list[Word]:
    """The content words of ``text`` in order (module docstring), with their spans."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group(0)
        if is_stopword(w) or len(w) == 1:
            continue
        out.append(Word(w, stem(w), m.start(), m.end()))
    return out


def content_stems(text: str) -> frozenset[str]:
    """The set of stems of ``text``'s content words (hyphenated words also give their parts)."""
    out = set()
    for w in content_words(text):
        out.add(w.stem)
        if "-" in w.text:
            out.update(stem(p) for p in w.text.split("-") if p and not is_stopword(p))
    return frozenset(out)
