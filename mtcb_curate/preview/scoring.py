"""MTCB's scoring rule on our chunks, per pair and per chunker.

The rule (chonkie-inc/mtcb; ../shared/notes/mtcb.md): every chunk of every document is in one
index; for each question the top k chunks are retrieved, and the hit is the FIRST retrieved
chunk whose text contains the passage as a plain, case-sensitive substring
(``passage in chunk.text``). recall@k = share of questions with a hit in the top k; MRR@k = mean
of 1/rank of that hit (0 without one). An empty passage is a hit at rank 1, as in MTCB.

Per pair we also say where the passage lies: wholly inside chunk N (``fits``), cut across
chunks N-M (``cut``), or longer than the chunk size (``too_long``); and the retriever's rank of
the best chunk holding it, out of how many chunks. The chunks holding a passage are found from
its exact occurrences in the corpus (``verify.CorpusIndex.exact_occurrences_batch``: every
document, one pass), each confirmed with ``passage in chunk.text``; the ceiling is the share of
passages that some chunk holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mtcb_curate.preview.chunkers import Chunks, passage_size

DEFAULT_KS = (1, 3, 5, 10)


@dataclass
class Item:
    """One pair to score: id, question, current passage, document key."""

    pair_id: int
    question: str
    passage: str
    doc_key: str


@dataclass
class PairFindability:
    """Where one pair's passage lies under one chunker, and how the retriever ranks it.

    Attributes:
        fits: (document key, 1-based chunk number) of the first chunk holding the passage, or None.
        cut: (document key, first, last chunk numbers) the passage straddles when no chunk holds
            it, or None (not found in the corpus, or it fits).
        too_long: the passage is longer than the chunk size (in the spec's unit).
        best_rank: the retriever's 1-based rank of the best-ranked chunk holding the passage.
        hit_rank: the rank of the first retrieved chunk holding it within the top max(k) (MTCB's
            hit), or None.
        n_chunks: how many chunks the index holds.
    """

    pair_id: int
    fits: tuple[str, int] | None
    cut: tuple[str, int, int] | None
    too_long: bool
    best_rank: int | None
    hit_rank: int | None
    n_chunks: int

    def line(self, spec: str) -> str:
        """One plain line: ``recursive:2048: fits in chunk 13 (from 0) of AAPL; rank 3 of 3,127``
        (chunks numbered from 0 within the document, as ``chunk_index`` counts)."""
        if self.fits is not None:
            where = f"fits in chunk {self.fits[1] - 1} (from 0) of {self.fits[0]}"
        elif self.too_long:
            where = "longer than the chunk size"
        elif self.cut is not None:
            where = f"cut across chunks {self.cut[1] - 1}-{self.cut[2] - 1} (from 0) of {self.cut[0]}"
        else:
            where = "not found in any document"
        rank = f"; rank {self.best_rank:,} of {self.n_chunks:,}" if self.best_rank is not None else ""
        return f"{spec}: {where}{rank}"

    def to_dict(self) -> dict:
        return {"pair_id": self.pair_id, "fits": list(self.fits) if self.fits else None,
                "cut": list(self.cut) if self.cut else None, "too_long": self.too_long,
                "best_rank": self.best_rank, "hit_rank": self.hit_rank, "n_chunks": self.n_chunks}


@dataclass
class ChunkerScore:
    """One chunker's scores over the pairs: MTCB's recall@k and MRR@k, the ceiling, the
    passages longer than the chunk size, and each pair's findability."""

    spec: str
    retriever: str
    n_chunks: int
    recall: dict[int, float]
    mrr: dict[int, float]
    ceiling: float
    too_long: int
    versions: dict[str, str]
    pairs: list[PairFindability] = field(default_factory=list)

    def to_dict(self, with_pairs: bool = True) -> dict:
        out = {"chunker": self.spec, "retriever": self.retriever, "chunks": self.n_chunks,
               "pairs": len(self.pairs), "recall": {f"@{k}": v for k, v in self.recall.items()},
               "mrr": {f"@{k}": v for k, v in self.mrr.items()}, "ceiling": self.ceiling,
               "longer_than_chunk": self.too_long, "versions": dict(self.versions)}
        if with_pairs:
            out["per_pair"] = [p.to_dict() for p in self.pairs]
        return out


def holders(chunks: Chunks, items: Sequence[Item], occurrences: Callable[[Item], list[tuple[int, int]]]
            ) -> dict[int, tuple[list[int], list[tuple[int, int, int]]]]:
    """For each item: (global indices of the chunks holding its passage, in corpus order;
    the (doc, first, last) global chunk ranges its occurrences overlap).

    ``occurrences(item)`` gives (document position in ``chunks.doc_keys``, character offset) of
    every exact occurrence of the passage in the corpus.
    """
    out = {}
    for it in items:
        hold, spans = [], []
        p = it.passage
        for d, off in occurrences(it):
            rng = chunks.overlapping(d, off, off + len(p))
            if len(rng):
                spans.append((d, rng.start, rng.stop - 1))
            hold.extend(i for i in rng if p in chunks.texts[i])
        out[it.pair_id] = (sorted(set(hold)), spans)
    return out


def _rank(scores: np.ndarray, i: int) -> int:
    """1-based rank of chunk ``i`` under a stable descending sort (ties: lower index first)."""
    s = scores[i]
    return int(np.count_nonzero(scores > s) + np.count_nonzero(scores[:i] == s)) + 1


#: The top list scanned for MTCB's hit is at least this long, so results memoised for one set
#: of cut-offs serve any set up to it (the default k = 1, 3, 5, 10).
TOP_MIN = 10

#: A memo of per-pair results under one chunking and one fitted retriever:
#: (question, passage) -> (fits, cut, too_long, best_rank, hit_rank within the top
#: max(max k, TOP_MIN), n_chunks). The pair's id is not part of it.
Memo = dict[tuple[str, str], tuple]


def scores_many(retriever, questions: Sequence[str]):
    """The retriever's score arrays for ``questions`` in order (its batched ``scores_many``
    when it has one, else ``scores`` per question)."""
    many = getattr(retriever, "scores_many", None)
    return many(questions) if many is not None else map(retriever.scores, questions)


def find_one(chunks: Chunks, sc: np.ndarray, passage: str, holding: list[int],
             spans: list[tuple[int, int, int]], top_k: int) -> tuple:
    """One pair's memo entry (see ``Memo``) from the chunk scores ``sc`` and its holders."""
    n = len(chunks)
    texts = chunks.texts
    top_n = min(top_k, n)
    if top_n:
        part = np.argpartition(-sc, top_n - 1)[:top_n] if top_n < n else np.arange(n)
        top = sorted(part.tolist(), key=lambda i: (-float(sc[i]), i))
    else:
        top = []
    hit = next((r for r, i in enumerate(top, 1) if passage in texts[i]), None)
    holding = sorted(set(holding) | {top[hit - 1]} if hit is not None else set(holding))
    best = min((_rank(sc, i) for i in holding), default=None) if holding else None
    long_ = passage_size(chunks.spec, passage) > chunks.spec.size
    fits = (chunks.doc_keys[chunks.doc[holding[0]]], chunks.number_in_doc(holding[0])) if holding else None
    cut = None
    if not holding and spans:
        d, a, b = spans[0]
        cut = (chunks.doc_keys[d], chunks.number_in_doc(a), chunks.number_in_doc(b))
    return (fits, cut, long_, best, hit, n)


def fill_memo(chunks: Chunks, retriever, items: Sequence[Item], occurrences: Callable[[Item], list[tuple[int, int]]],
              memo: Memo, *, top_k: int = TOP_MIN, progress: Callable[[int, int], None] | None = None) -> int:
    """Score the items whose (question, passage) ``memo`` lacks, in one batch; how many were.

    ``top_k``: the length of the top list scanned for the hit (at least ``TOP_MIN``)."""
    todo: dict[tuple[str, str], Item] = {}
    for it in items:
        k = (it.question, it.passage)
        if k not in memo and k not in todo:
            todo[k] = it
    if not todo:
        return 0
    todo_items = list(todo.values())
    hold = holders(chunks, todo_items, occurrences)
    n = len(chunks)
    scored = scores_many(retriever, [it.question for it in todo_items]) if n else \
        (np.zeros(0, dtype=np.float32) for _ in todo_items)
    for done, (it, sc) in enumerate(zip(todo_items, scored), 1):
        holding, spans = hold[it.pair_id]
        memo[(it.question, it.passage)] = find_one(chunks, sc, it.passage, holding, spans, max(top_k, TOP_MIN))
        if progress is not None:
            progress(done, len(todo_items))
    return len(todo_items)


def summarize(spec: str, retriever_name: str, items: Sequence[Item], ks: Sequence[int], memo: Memo,
              versions: dict[str, str], n_chunks: int | None = None) -> ChunkerScore:
    """MTCB's recall@k, MRR@k, the ceiling and each pair's findability from memo entries
    (every item must be in ``memo``)."""
    ks = sorted(set(int(k) for k in ks))
    kmax = ks[-1]
    hits = {k: 0 for k in ks}
    rr = {k: 0.0 for k in ks}
    pairs: list[PairFindability] = []
    too_long = inside = 0
    n = n_chunks or 0
    for it in items:
        fits, cut, long_, best, hit, n = memo[(it.question, it.passage)]
        hit = hit if hit is not None and hit <= kmax else None
        for k in ks:
            if hit is not None and hit <= k:
                hits[k] += 1
                rr[k] += 1.0 / hit
        too_long += long_
        inside += fits is not None
        pairs.append(PairFindability(it.pair_id, fits, cut, long_, best, hit, n))
    m = len(items) or 1
    return ChunkerScore(spec, retriever_name, n if n_chunks is None else n_chunks, {k: hits[k] / m for k in ks},
                        {k: rr[k] / m for k in ks}, inside / m, too_long, dict(versions), pairs)


def score(chunks: Chunks, retriever, items: Sequence[Item], ks: Sequence[int],
          occurrences: Callable[[Item], list[tuple[int, int]]], *, retriever_name: str = "bm25",
          versions: dict[str, str] | None = None,
          progress: Callable[[int, int], None] | None = None, memo: Memo | None = None) -> ChunkerScore:
    """MTCB's scores for ``items`` with a retriever fitted on ``chunks.texts`` (see the module
    docstring). ``ks``: the cut-offs (each >= 1). ``memo``: per-pair results already known for
    this chunking and retriever (see ``Memo``), filled in with the rest."""
    memo = {} if memo is None else memo
    fill_memo(chunks, retriever, items, occurrences, memo, top_k=max(int(k) for k in ks), progress=progress)
    return summarize(chunks.spec.text, retriever_name, items, ks, memo, versions or chunks.versions, len(chunks))


def corpus_occurrences(documents: dict[str, str], items: Sequence[Item], index=None
                       ) -> Callable[[Item], list[tuple[int, int]]]:
    """``occurrences(item)`` for ``score``: every exact occurrence of each item's passage in
    every document, as (document position, character offset), found in one corpus pass
    (``CorpusIndex.exact_occurrences_batch``; passages under 31 bytes with ``str.find``).
    ``index``: a ``CorpusIndex`` over the same documents to reuse (default: a new one)."""
    from mtcb_curate.verify.search import CorpusIndex

    index = index if index is not None else CorpusIndex(documents)
    keys = list(documents)
    pos = {k: d for d, k in enumerate(keys)}
    batch = index.exact_occurrences_batch({it.pair_id: it.passage for it in items if it.passage})
    found: dict[int, list[tuple[int, int]]] = {}
    for it in items:
        p = it.passage
        if not p:
            found[it.pair_id] = []
            continue
        if len(p.encode("utf-8", "surrogatepass")) >= 31:
            out = []
            for k, offs in batch.get(it.pair_id, {}).items():
                text = documents[k]
                if text.isascii():
                    out.extend((pos[k], o) for o in offs)
                else:
                    data = text.encode("utf-8", "surrogatepass")
                    out.extend((pos[k], len(data[:o].decode("utf-8", "surrogatepass"))) for o in offs)
        else:
            out = []
            for d, k in enumerate(keys):
                text = documents[k]
                o = text.find(p)
                while o >= 0:
                    out.append((d, o))
                    o = text.find(p, o + 1)
        found[it.pair_id] = out
    return lambda it: found.get(it.pair_id, [])
