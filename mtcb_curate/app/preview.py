"""The findability preview workflow: MTCB's scores on the current pairs, per chunker.

``run_preview`` takes the session's current passages and questions (edits applied), chunks the
corpus with each chunker (cached in the workspace), fits the retriever on all chunks of all
documents (cached), and scores with MTCB's rule (``preview.scoring``). ``mtcb-curate preview``
and, later, the app call it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import InputError
from mtcb_curate.preview import cache as pcache
from mtcb_curate.preview.chunkers import ChunkerSpec, Chunks, chunk_corpus, library_versions
from mtcb_curate.preview.retrievers import LEXICAL_NOTE, make_retriever, retriever_version
from mtcb_curate.preview.placement import chunks_name, index_name, memo_name
from mtcb_curate.preview.scoring import (ChunkerScore, Item, Memo, corpus_occurrences, fill_memo,
                                        summarize)
from mtcb_curate.store.session import ReviewSession


@dataclass
class PreviewReport:
    """Every chunker's ``ChunkerScore`` over the same pairs, with what was run."""

    dataset: str
    retriever: str
    ks: tuple[int, ...]
    pairs: int
    which: str  # "accepted" or "all"
    scores: list[ChunkerScore] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    cached: list[str] = field(default_factory=list)

    @property
    def note(self) -> str:
        return LEXICAL_NOTE if self.retriever == "bm25" else \
            "wordllama is a small static-embedding model, far weaker than the models MTCB is run with"

    def versions_line(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.versions.items())

    def table(self) -> str:
        """The plain-text table the command prints."""
        head = (f"{'chunker':<16}{'chunks':>8}  " + "".join(f"{'R@' + str(k):>7}" for k in self.ks)
                + "".join(f"{'MRR@' + str(k):>8}" for k in self.ks) + f"{'ceiling':>9}{'too long':>10}")
        lines = [f"{self.dataset}: {self.pairs:,} {self.which} pairs, retriever {self.retriever}", head]
        for s in self.scores:
            lines.append(f"{s.spec:<16}{s.n_chunks:>8,}  " + "".join(f"{s.recall[k]:>7.1%}" for k in self.ks)
                         + "".join(f"{s.mrr[k]:>8.3f}" for k in self.ks) + f"{s.ceiling:>9.1%}{s.too_long:>10,}")
        lines.append(f"versions: {self.versions_line()}")
        lines.append(f"note: {self.note}")
        return "\n".join(lines)

    def to_markdown(self) -> str:
        head = ("| chunker | retriever | chunks | " + " | ".join(f"recall@{k}" for k in self.ks) + " | "
                + " | ".join(f"MRR@{k}" for k in self.ks) + " | ceiling | longer than chunk |")
        sep = "|" + "---|" * (5 + 2 * len(self.ks))
        rows = [f"| {s.spec} | {s.retriever} | {s.n_chunks:,} | " + " | ".join(f"{s.recall[k]:.1%}" for k in self.ks)
                + " | " + " | ".join(f"{s.mrr[k]:.3f}" for k in self.ks) + f" | {s.ceiling:.1%} | {s.too_long:,} |"
                for s in self.scores]
        return "\n".join([f"{self.pairs:,} {self.which} pairs of {self.dataset}.", "", head, sep, *rows, "",
                          f"Versions: {self.versions_line()}. {self.note}.", ""])

    def to_json(self) -> dict:
        return {"dataset": self.dataset, "retriever": self.retriever, "k": list(self.ks), "pairs": self.pairs,
                "which": self.which, "versions": self.versions, "note": self.note, "seconds": self.seconds,
                "chunkers": [s.to_dict() for s in self.scores]}


def preview_items(session: ReviewSession, *, all_pairs: bool) -> list[Item]:
    """The pairs to score: accepted ones, or every pair (``all_pairs``), with current texts."""
    ids = session.ids() if all_pairs else session.ids(Status.ACCEPTED)
    out = []
    for pid in ids:
        v = session.view(pid)
        out.append(Item(pid, v.question, v.passage, v.pair.doc_key))
    return out


def load_chunks(spec: ChunkerSpec, documents: dict[str, str], store: pcache.PreviewCache, fingerprint: str,
                progress: Callable[[str], None] | None = None) -> tuple[Chunks, bool]:
    """Chunks for ``spec`` from the cache, else chunked and stored; (chunks, from_cache)."""
    name = chunks_name(fingerprint, spec)
    got = store.get(name)
    if isinstance(got, Chunks):
        return got, True
    if progress:
        progress(f"chunking with {spec.text}")
    chunks = chunk_corpus(spec, documents)
    store.put(name, chunks)
    return chunks, False


def load_index(chunks: Chunks, retriever: str, store: pcache.PreviewCache, fingerprint: str,
               progress: Callable[[str], None] | None = None):
    """The retriever fitted on ``chunks`` from the cache, else fitted and stored; (index, from_cache)."""
    name = index_name(fingerprint, chunks.spec, chunks.versions, retriever)
    got = store.get(name)
    if got is not None:
        return got, True
    r = make_retriever(retriever)
    if progress:
        progress(f"indexing {len(chunks):,} chunks ({retriever})")
    r.fit(chunks.texts)
    store.put(name, r)
    return r, False


def run_preview(session: ReviewSession, specs: Sequence[ChunkerSpec], *, retriever: str = "bm25",
                ks: Sequence[int] = (1, 3, 5, 10), all_pairs: bool = False, cache_dir: Path | None = None,
                progress: Callable[[str], None] | None = None) -> PreviewReport:
    """MTCB's scores on the session's pairs for each chunker (see the module docstring).

    Args:
        all_pairs: every pair instead of the accepted ones.
        cache_dir: the workspace folder (None: no cache).

    Raises:
        InputError: the corpus is empty (no document has text), no pair to score, or
            ``retriever`` is unknown or needs the missing ``dense`` extra.
    """
    t0 = time.perf_counter()
    documents = {k: d.text for k, d in session.dataset.documents.items()}
    if not any(documents.values()):
        raise InputError("corpus", "the corpus is empty: no document has text to chunk")
    items = preview_items(session, all_pairs=all_pairs)
    if not items:
        raise InputError("questions", "no accepted pair to score (review some, or pass --all)"
                         if not all_pairs else "no pair to score")
    make_retriever(retriever) if retriever != "bm25" else None  # a missing extra fails before any work
    store = pcache.PreviewCache(cache_dir)
    fp = session.corpus_fingerprint
    report = PreviewReport(session.dataset.name, retriever, tuple(sorted(set(ks))), len(items),
                           "all" if all_pairs else "accepted",
                           versions={**library_versions(), ("bm25s" if retriever == "bm25" else "wordllama"):
                                     retriever_version(retriever)})
    occ = Occurrences(documents, session.corpus_index)
    for spec in specs:
        report.scores.append(score_spec(spec, documents, items, report.ks, retriever, store, fp, occ,
                                        report.versions, report.cached, progress))
    report.seconds = time.perf_counter() - t0
    return report


class Occurrences:
    """``occurrences(item)`` for ``preview.scoring``, found for the items asked about only, once
    per (pair id, passage) (one corpus pass per ``need`` call)."""

    def __init__(self, documents: dict[str, str], index=None):
        self.documents, self.index = documents, index
        self.found: dict[tuple[int, str], list[tuple[int, int]]] = {}

    def need(self, items: Sequence[Item]) -> None:
        todo = [it for it in items if (it.pair_id, it.passage) not in self.found]
        if todo:
            occ = corpus_occurrences(self.documents, todo, self.index)
            for it in todo:
                self.found[(it.pair_id, it.passage)] = occ(it)

    def __call__(self, it: Item) -> list[tuple[int, int]]:
        return self.found.get((it.pair_id, it.passage), [])


def score_spec(spec: ChunkerSpec, documents: dict[str, str], items: Sequence[Item], ks: Sequence[int],
               retriever: str, store: pcache.PreviewCache, fp: str, occ: "Occurrences",
               versions: dict[str, str], cached: list[str] | None = None,
               progress: Callable[[str], None] | None = None) -> ChunkerScore:
    """One chunker's scores: the per-pair results cached for (corpus, spec, versions,
    retriever, question, passage) are reused; only the others load the chunks and the index
    and are scored (as one batch). Appends ``spec.text`` to ``cached`` when nothing was chunked,
    fitted or scored."""
    name = memo_name(fp, spec, retriever, ks)
    got = store.get(name)
    memo: Memo = got if isinstance(got, dict) else {}
    todo = [it for it in items if (it.question, it.passage) not in memo]
    n_chunks = memo.get(("", "\0n_chunks"))
    if not todo and n_chunks is not None:
        if cached is not None:
            cached.append(spec.text)
        return summarize(spec.text, retriever, items, ks, memo, versions, n_chunks)
    chunks, c1 = load_chunks(spec, documents, store, fp, progress)
    index, c2 = load_index(chunks, retriever, store, fp, progress)
    if c1 and c2 and not todo and cached is not None:
        cached.append(spec.text)
    occ.need(todo)
    if progress and todo:
        progress(f"scoring {len(todo):,} questions ({spec.text})")
    fill_memo(chunks, index, todo, occ, memo, top_k=max(ks))
    memo[("", "\0n_chunks")] = len(chunks)
    store.put(name, memo)
    return summarize(spec.text, retriever, items, ks, memo, versions, len(chunks))
