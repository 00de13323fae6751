"""Offline retrievers over chunk texts: BM25 (``bm25s``, the default) and dense (``wordllama``).

A retriever is fitted once on all chunk texts and then gives a score per chunk for a question
(``scores``: a float array, one entry per chunk, higher is better). BM25 is lexical: it
favours questions that reuse the passage's words, so its scores flatter lexical questions and
understate paraphrased ones. The dense retriever uses wordllama, whose wheel carries its 16 MB
of weights, loaded with downloads disabled.
"""

from __future__ import annotations

from importlib import metadata

import numpy as np

from mtcb_curate.errors import InputError

RETRIEVERS = ("bm25", "dense")
LEXICAL_NOTE = ("BM25 is a lexical retriever: it favours questions that reuse the passage's words "
                "(MTCB itself ranks with an embedding model)")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


class BM25Retriever:
    """bm25s with its English stopwords, no stemmer (none needed offline)."""

    name = "bm25"
    library = "bm25s"

    def __init__(self) -> None:
        import bm25s

        self._bm25s = bm25s
        self.model = None
        self.n = 0

    @property
    def version(self) -> str:
        return _version("bm25s")

    def fit(self, texts: list[str]) -> None:
        bm25s = self._bm25s
        self.model = bm25s.BM25()
        self.n = len(texts)
        self.model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def scores(self, question: str) -> np.ndarray:
        return next(iter(self.scores_many([question])))

    def scores_many(self, questions):
        """Score arrays for many questions, tokenized in one call (a generator).

        Equal to bm25s's ``get_scores`` element for element, summed the same way (term by term
        in query order), without its ``np.add.at``: within one term's posting list the chunk
        indices are distinct, so a fancy-indexed ``+=`` is exact and about 10x faster.
        """
        questions = list(questions)
        if not questions:
            return
        tokens = self._bm25s.tokenize(questions, stopwords="en", show_progress=False, return_ids=False)
        m = self.model
        data, indices, indptr = m.scores["data"], m.scores["indices"], m.scores["indptr"]
        vocab = m.vocab_dict
        for words in tokens:
            out = np.zeros(self.n, dtype=np.float32)
            ids = [vocab[w] for w in words if w in vocab]
            for t in ids:  # only stopwords or punctuation: every chunk scores 0
                a, b = indptr[t], indptr[t + 1]
                out[indices[a:b]] += data[a:b]
            if ids and m.nonoccurrence_array is not None:
                out += m.nonoccurrence_array[np.asarray(ids)].sum()
            yield out

    def __getstate__(self):
        return {"model": self.model, "n": self.n}

    def __setstate__(self, state) -> None:
        import bm25s

        self._bm25s, self.model, self.n = bm25s, state["model"], state["n"]


class DenseRetriever:
    """wordllama embeddings (weights inside its wheel), cosine similarity."""

    name = "dense"
    library = "wordllama"

    def __init__(self) -> None:
        self.model = _load_wordllama()
        self.matrix = None

    @property
    def version(self) -> str:
        return _version("wordllama")

    def fit(self, texts: list[str]) -> None:
        self.matrix = np.asarray(self.model.embed(texts, norm=True), dtype=np.float32)

    def scores(self, question: str) -> np.ndarray:
        q = np.asarray(self.model.embed([question], norm=True), dtype=np.float32)[0]
        return self.matrix @ q

    def scores_many(self, questions):
        """Score arrays for many questions, embedded in one call (a generator)."""
        questions = list(questions)
        if questions:
            q = np.asarray(self.model.embed(questions, norm=True), dtype=np.float32)
            for row in q:
                yield self.matrix @ row

    def __getstate__(self):
        return {"matrix": self.matrix}

    def __setstate__(self, state) -> None:
        self.model, self.matrix = _load_wordllama(), state["matrix"]


def _load_wordllama():
    try:
        from pathlib import Path

        import wordllama
        from wordllama import WordLlama
    except ImportError:
        raise InputError("--retriever", "dense needs wordllama, a dependency of mtcb-curate that is "
                         "missing from this installation: pip install wordllama") from None
    # cache_dir = the package folder: its wheel holds weights/ and tokenizers/ (load's own lookup
    # of the tokenizer in the package looks in a folder named tokenizer/, and misses).
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def make_retriever(name: str):
    """``bm25`` or ``dense``.

    Raises:
        InputError: an unknown name, or ``dense`` without the ``dense`` extra (one line).
    """
    if name == "bm25":
        return BM25Retriever()
    if name == "dense":
        return DenseRetriever()
    raise InputError("--retriever", f"unknown retriever {name!r}: use bm25 or dense")


def retriever_version(name: str) -> str:
    """The version of the library behind retriever ``name`` (for reports and cache keys)."""
    return _version("bm25s" if name == "bm25" else "wordllama")
