"""Paraphrase support: does a passage say an answer's word in other words ("physician" for
"doctor", "wedding" for "married")?

Two measures, the better one that is installed is used, and every result says which
(:attr:`Paraphraser.name`):

- ``wordllama`` (the optional ``dense`` extra; its wheel ships 16 MB of static token embeddings,
  loaded offline with ``disable_download=True``): each answer word is compared by cosine
  similarity with every passage phrase of one to three words that starts and ends with a content
  word; the best phrase counts when its similarity is at least :data:`WORDLLAMA_MIN_SIMILARITY`.
  A whole answer ("He became furious." for "flew into a terrible rage") is compared, with its
  question, to the passage's closest sentence (:meth:`WordLlamaParaphraser.says`,
  :data:`WORDLLAMA_MIN_QA_SIMILARITY`).
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
#: Cosine similarity (wordllama) of "question answer" with the passage's closest sentence from
#: which the answer counts as said in other words as a whole, even when its words are not
#: (``support``'s last resort before a word-share warning). Set on the novel fixture
#: (``tests/fixtures/checks/answerable_novel.jsonl``): human paraphrases scored 0.38-0.80,
#: answers that are not in the passage 0.07-0.34 (docs/checks.md).
WORDLLAMA_MIN_QA_SIMILARITY = 0.36
#: ... and the answer alone must reach this similarity with that sentence: a question that
#: matches its passage word for word carries "question + answer" over the bar above whatever
#: the answer says ("... net income ... 2021? Seventeen purple elephants": 0.43 together, 0.04
#: alone). Human paraphrases on the novel fixture: 0.12 and up.
WORDLLAMA_MIN_ANSWER_SIMILARITY = 0.10
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
    """A paraphrase measure: :func:`best` per answer word, :func:`says` for a whole answer."""

    name: str

    def best(self, words: list[str], passage: str) -> list[Match]:
        """For each of ``words``, the passage's best phrase (one :class:`Match` per word, in order)."""
        ...

    def says(self, question: str, answer: str, passage: str) -> Match | None:
        """How close question and answer together are to the passage's closest sentence:
        ``Match(answer, sentence, similarity, supported)``, or None when the measure cannot
        tell (the fallback)."""
        ...


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n{2,}")


def sentences(passage: str) -> list[str]:
    """The passage cut at sentence ends and blank lines (our rule), empty pieces dropped."""
    return [s.strip() for s in _SENTENCE.split(passage) if s.strip()]


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

    def says(self, question: str, answer: str, passage: str) -> Match | None:
        """The fallback cannot measure meaning: None."""
        return None


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

    def says(self, question: str, answer: str, passage: str) -> Match | None:
        """Cosine similarity of "question answer" with the passage's closest sentence
        (:func:`sentences`, at most the first 200); supported from
        :data:`WORDLLAMA_MIN_QA_SIMILARITY` when the answer alone reaches
        :data:`WORDLLAMA_MIN_ANSWER_SIMILARITY` with that sentence."""
        import numpy as np

        sents = sentences(passage)[:200]
        text = f"{question} {answer}".strip()
        if not sents or not answer.strip():
            return None
        with self._lock:
            e = np.asarray(self._model.embed([text, answer] + sents, norm=True), dtype=np.float32)
        sims = e[2:] @ e[0]
        j = int(np.argmax(sims))
        sim = float(sims[j])
        alone = float(e[2 + j] @ e[1])
        return Match(answer, sents[j], sim, sim >= WORDLLAMA_MIN_QA_SIMILARITY and alone >= WORDLLAMA_MIN_ANSWER_SIMILARITY)


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


def warm() -> threading.Thread:
    """Load the paraphrase model in a daemon thread (about 0.5 s for wordllama), so the first
    :func:`default_paraphraser` on a screen's thread does not wait for it. Returns the thread."""
    t = threading.Thread(target=default_paraphraser, name="evidence-warm", daemon=True)
    t.start()
    return t


def default_paraphraser() -> Paraphraser:
    """wordllama when the ``dense`` extra is installed and loads offline, else the fuzzy fallback
    (loaded once per process; thread-safe)."""
    with _LOCK:
        model = _wordllama()
    return WordLlamaParaphraser(model) if model is not None else FuzzyParaphraser()
