"""Paraphrase support: does a passage say an answer's word in other words ("physician" for
"doctor", "wedding" for "married")?

Two measures, the better one that is installed is used, and every result says which
(:attr:`Paraphraser.name`):

- ``wordllama`` (the optional ``dense`` extra; its wheel ships 16 MB of static token embeddings,
  loaded offline with ``disable_download=True``): each answer word is compared by cosine
  similarity with every passage phrase of one to three words that starts and ends with a content
  word; the best phrase counts when its similarity is at least :data:`WORDLLAMA_MIN_SIMILARITY`.
- ``fuzzy`` (the fallback, rapidfuzz, always installed): the best passage content word by
  ``fuzz.ratio`` of the stems, counted at :data:`FUZZY_MIN_RATIO` or more; it catches spelling
  variants and derivations the stemmer misses ("hatred"/"hate"), not synonyms.

The thresholds were set on the fixture sets under ``tests/fixtures/checks/`` (human-written
answers about novels and articles; ``benchmarks/bench_checks.py`` measures them): see
``docs/checks.md``. Neither measure tells a synonym from an antonym ("loved"/"hated" are close
in any such embedding), so paraphrase support can only clear a warning, never make one.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from mtcb_curate.evidence.words import is_stopword, stem

#: Cosine similarity (wordllama ``l2_supercat`` 256 dimensions, normalized) from which a passage
#: phrase counts as saying an answer word. Measured on our fixtures: unrelated word/phrase pairs
#: score 0.05-0.20, synonyms 0.35-0.70 (docs/checks.md).
WORDLLAMA_MIN_SIMILARITY = 0.35
#: ``rapidfuzz.fuzz.ratio`` (0-100) of two stems from which they count as one word (fallback).
FUZZY_MIN_RATIO = 80
#: Longest passage phrase compared, in words.
MAX_PHRASE_WORDS = 3

_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class Match:
    """The passage's best phrase for one answer word.

    Attributes:
        word: the answer word.
        phrase: the passage phrase ("" when the passage has no content word).
        similarity: 0-1 (cosine for wordllama; ratio / 100 for fuzzy).
        supported: ``similarity`` reaches the measure's threshold.
    """

    word: str
    phrase: str
    similarity: float
    supported: bool


class Paraphraser(Protocol):
    """A paraphrase measure: :func:`best` per answer word."""

    name: str

    def best(self, words: list[str], passage: str) -> list[Match]:
        """For each of ``words``, the passage's best phrase (one :class:`Match` per word, in order)."""
        ...


def _phrases(passage: str) -> list[str]:
    toks = _TOKEN.findall(passage)
    out: list[str] = []
    seen = set()
    for n in range(1, MAX_PHRASE_WORDS + 1):
        for i in range(len(toks) - n + 1):
            gram = toks[i:i + n]
            if is_stopword(gram[0]) or is_stopword(gram[-1]) or len(gram[0]) < 2 or len(gram[-1]) < 2:
                continue
            p = " ".join(gram)
            key = p.lower()
            if key not in seen:
                seen.add(key)
                out.append(p)
    return out


class FuzzyParaphraser:
    """Fallback measure: stems compared with ``rapidfuzz.fuzz.ratio`` (module docstring)."""

    name = "fuzzy"

    def best(self, words: list[str], passage: str) -> list[Match]:
        from rapidfuzz import fuzz, process

        cands = sorted({stem(t) for t in _TOKEN.findall(passage) if not is_stopword(t) and len(t) > 2})
        out = []
        for w in words:
            s = stem(w)
            got = process.extractOne(s, cands, scorer=fuzz.ratio) if cands else None
            if got is None:
                out.append(Match(w, "", 0.0, False))
            else:
                out.append(Match(w, got[0], got[1] / 100.0, got[1] >= FUZZY_MIN_RATIO))
        return out


class WordLlamaParaphraser:
    """wordllama's static embeddings (module docstring). Loading takes about 0.5 s, once."""

    name = "wordllama"

    def __init__(self, model) -> None:
        self._model = model
        self._lock = threading.Lock()

    def best(self, words: list[str], passage: str) -> list[Match]:
        import numpy as np

        phrases = _phrases(passage)
        if not phrases or not words:
            return [Match(w, "", 0.0, False) for w in words]
        with self._lock:
            e = np.asarray(self._model.embed(list(words) + phrases, norm=True), dtype=np.float32)
        sims = e[len(words):] @ e[:len(words)].T  # phrases x words
        out = []
        for k, w in enumerate(words):
            j = int(np.argmax(sims[:, k]))
            s = float(sims[j, k])
            out.append(Match(w, phrases[j], s, s >= WORDLLAMA_MIN_SIMILARITY))
        return out


_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _wordllama():
    try:
        from pathlib import Path

        import wordllama
        from wordllama import WordLlama
    except ImportError:
        return None
    try:
        # cache_dir = the package folder: its wheel holds weights/ and tokenizers/.
        return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    except Exception:  # noqa: BLE001 - a broken optional install falls back, and says so by name
        return None


def default_paraphraser() -> Paraphraser:
    """wordllama when the ``dense`` extra is installed and loads offline, else the fuzzy fallback
    (loaded once per process; thread-safe)."""
    with _LOCK:
        model = _wordllama()
    return WordLlamaParaphraser(model) if model is not None else FuzzyParaphraser()
