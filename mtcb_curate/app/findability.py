"""The app's findability line: each pair's place under the configured chunkers, from the cache.

``Findability`` keeps one session's per-pair preview results (``preview.scoring``'s memo, the
same files ``mtcb-curate preview`` writes in ``<workspace>/preview-cache/``) and answers, per
pair, one ``PairFindability`` per configured chunker: fits in chunk N / cut across chunks N-M /
longer than the chunk size, and the retriever's rank of the best chunk holding the passage out
of all chunks. Nothing is chunked unless asked: ``load`` reads what an earlier preview cached
(and scores the pairs it lacks when the chunks and index are cached); ``compute_all`` chunks
and indexes the corpus once (the app's ``F`` key; progress and cancel); ``score_pair`` scores
one edited pair against the chunks and index kept in memory. Thread-safe (one lock): the app
runs these in thread workers. No Textual here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mtcb_curate.app.preview import Occurrences, load_index
from mtcb_curate.preview import cache as pcache
from mtcb_curate.preview.chunkers import Chunks, chunk_corpus
from mtcb_curate.preview.placement import ABSENT, CUT, FITS, chunks_name, memo_name
from mtcb_curate.preview.scoring import TOP_MIN, Item, Memo, PairFindability, fill_memo
from mtcb_curate.preview.settings import PreviewSettings
from mtcb_curate.store.session import ReviewSession

#: The memo's entry holding the number of chunks (as ``app.preview.score_spec`` writes it).
N_CHUNKS_KEY = ("", "\0n_chunks")


class Cancelled(Exception):
    """``compute_all`` stopped because ``cancelled()`` said so."""


@dataclass(frozen=True)
class PairLines:
    """One pair's findability for the texts it was computed on: ``question`` and ``passage``
    (a result for other texts is stale), ``by_spec``: spec text -> ``PairFindability`` or None
    (that chunker has not chunked this corpus yet)."""

    question: str
    passage: str
    by_spec: dict[str, PairFindability | None]

    def placements(self) -> dict[str, str | None]:
        """spec text -> ``preview.placement`` state (``FITS``, ``CUT``, ``ABSENT`` or None), for
        ``checks.pair.pair_problems(placements=...)``."""
        out: dict[str, str | None] = {}
        for spec, f in self.by_spec.items():
            out[spec] = None if f is None else FITS if f.fits is not None else \
                CUT if (f.cut is not None or f.too_long) else ABSENT
        return out

    def fits_nowhere(self) -> bool:
        """Every configured chunker was evaluated and none holds the passage wholly (the
        queue's mark)."""
        return bool(self.by_spec) and all(f is not None and f.fits is None for f in self.by_spec.values())


class Findability:
    """Per-pair findability of one session under ``settings`` (see the module docstring).

    Args:
        cache_dir: the workspace folder (its ``preview-cache/``); None keeps nothing on disk.
    """

    def __init__(self, session: ReviewSession, settings: PreviewSettings, cache_dir: Path | None):
        self.session, self.settings = session, settings
        self.store = pcache.PreviewCache(cache_dir)
        self._lock = threading.Lock()
        self._documents: dict[str, str] | None = None
        self._fp: str | None = None
        self._memos: dict[str, Memo] = {}
        self._chunks: dict[str, Chunks | None] = {}
        self._index: dict[str, object] = {}
        self._occ: Occurrences | None = None

    # -- inputs -------------------------------------------------------------------------------

    def _corpus(self) -> tuple[dict[str, str], str]:
        if self._documents is None:
            # The index's texts, decoded per document when read: a dict of every text would
            # hold the whole corpus as str (2-4 bytes a character) for as long as the app runs.
            self._documents = self.session.corpus_index.documents  # type: ignore[assignment]
            self._fp = self.session.corpus_fingerprint
            self._occ = Occurrences(self._documents, self.session.corpus_index)
        return self._documents, self._fp  # type: ignore[return-value]

    def _memo(self, spec) -> Memo:
        memo = self._memos.get(spec.text)
        if memo is None:
            got = self.store.get(memo_name(self._fp, spec, self.settings.retriever, self.settings.k))
            memo = self._memos[spec.text] = got if isinstance(got, dict) else {}
        return memo

    def _cached_chunks(self, spec) -> Chunks | None:
        if spec.text not in self._chunks:
            got = self.store.get(chunks_name(self._fp, spec))
            self._chunks[spec.text] = got if isinstance(got, Chunks) else None
        return self._chunks[spec.text]

    def _items(self, ids: Sequence[int]) -> list[Item]:
        out = []
        for pid in ids:
            v = self.session.view(pid)
            out.append(Item(pid, v.question, v.passage, v.pair.doc_key))
        return out

    def _lines(self, items: Sequence[Item]) -> dict[int, PairLines]:
        out = {}
        for it in items:
            by_spec: dict[str, PairFindability | None] = {}
            for spec in self.settings.chunkers:
                got = self._memos.get(spec.text, {}).get((it.question, it.passage))
                by_spec[spec.text] = None if got is None else PairFindability(it.pair_id, *got)
            out[it.pair_id] = PairLines(it.question, it.passage, by_spec)
        return out

    def _score(self, spec, items: Sequence[Item], chunks: Chunks, progress=None) -> None:
        """Score ``items`` missing from ``spec``'s memo (index loaded or fitted and cached) and
        store the memo."""
        memo = self._memo(spec)
        todo = [it for it in items if (it.question, it.passage) not in memo]
        if not todo and N_CHUNKS_KEY in memo:
            return
        index = self._index.get(spec.text)
        if index is None:
            index, _ = load_index(chunks, self.settings.retriever, self.store, self._fp,
                                  (lambda s: progress(s, 0, 0)) if progress else None)
            self._index[spec.text] = index
        self._occ.need(todo)
        fill_memo(chunks, index, todo, self._occ, memo, top_k=max(max(self.settings.k), TOP_MIN),
                  progress=(lambda d, n: progress(f"scoring {n:,} questions ({spec.text})", d, n)) if progress else None)
        memo[N_CHUNKS_KEY] = len(chunks)
        self.store.put(memo_name(self._fp, spec, self.settings.retriever, self.settings.k), memo)

    # -- the three entry points ---------------------------------------------------------------

    def available(self) -> bool:
        """Some configured chunker has its chunks or per-pair results cached for this corpus
        (reads the cache folder; the corpus fingerprint is the session's, computed once)."""
        with self._lock:
            self._corpus()
            return any(self._memo(s) or self._cached_chunks(s) is not None for s in self.settings.chunkers)

    def load(self) -> dict[int, PairLines] | None:
        """Every pair's lines from the cache (pairs the cached results lack are scored when that
        chunker's chunks are cached; nothing is chunked), or None when nothing is cached."""
        with self._lock:
            self._corpus()
            if not any(self._memo(s) or self._cached_chunks(s) is not None for s in self.settings.chunkers):
                return None
            items = self._items(range(len(self.session)))
            for spec in self.settings.chunkers:
                chunks = self._cached_chunks(spec)
                if chunks is not None:
                    self._score(spec, items, chunks)
            return self._lines(items)

    def compute_all(self, progress: Callable[[str, int, int], None] | None = None,
                    cancelled: Callable[[], bool] = lambda: False) -> dict[int, PairLines]:
        """Chunk (cached chunks reused), index and score every pair under every configured
        chunker. ``progress(what, done, total)``; ``cancelled()`` is asked after each document
        and each scored question.

        Raises:
            Cancelled: ``cancelled()`` returned True (what was cached so far stays cached).
            InputError: the retriever needs the missing ``dense`` extra.
        """
        def step(what: str, done: int, total: int) -> None:
            if cancelled():
                raise Cancelled()
            if progress is not None:
                progress(what, done, total)

        with self._lock:
            documents, fp = self._corpus()
            items = self._items(range(len(self.session)))
            for spec in self.settings.chunkers:
                chunks = self._cached_chunks(spec)
                if chunks is None:
                    chunks = chunk_corpus(spec, documents,
                                          progress=lambda d, n, s=spec: step(f"chunking with {s.text}", d, n))
                    self.store.put(chunks_name(fp, spec), chunks)
                    self._chunks[spec.text] = chunks
                step(f"indexing {len(chunks):,} chunks ({self.settings.retriever})", 0, 0)
                self._score(spec, items, chunks, step)
            return self._lines(items)

    def score_pairs(self, ids: Sequence[int]) -> dict[int, PairLines]:
        """The lines of the pairs ``ids`` for their current texts, scored together against the
        chunks and index cached (after a bulk change); empty when no chunker has anything
        cached."""
        with self._lock:
            self._corpus()
            items = self._items(list(ids))
            any_cached = False
            for spec in self.settings.chunkers:
                chunks = self._cached_chunks(spec)
                if chunks is not None:
                    any_cached = True
                    self._score(spec, items, chunks)
                elif self._memo(spec):
                    any_cached = True
            return self._lines(items) if any_cached else {}

    def score_pair(self, pid: int) -> PairLines | None:
        """Pair ``pid``'s lines for its current texts (only it is scored, against the chunks
        and index cached); None when no chunker has anything cached (:meth:`score_pairs`)."""
        return self.score_pairs([pid]).get(pid)


# -- one document's chunks: boundaries in the source, "fit in one chunk" ------------------------


class DocumentChunks:
    """The chunks of one document at a time under the configured chunkers, as chonkie cuts
    them (a document is chunked on its own exactly as within the corpus): the spans the source
    viewer draws and ``plan_fit`` fits a passage in. Taken from ``findability``'s corpus chunks
    when a run (``F``) or the preview cache has them, else chunked here (about 20 ms for a
    700,000-character filing with ``recursive:2048``, more with token chunkers: call it in a
    worker). The last :data:`KEEP` documents are kept. Thread-safe.
    """

    KEEP = 8

    def __init__(self, settings: PreviewSettings, findability: Findability | None = None) -> None:
        self.settings = settings
        self.findability = findability
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, int], list[tuple[str, list[tuple[int, int]]]]] = {}
        self._indexes: dict[tuple[str, int], object] = {}

    def index(self, doc_key: str, text: str):
        """The document's ``verify.elsewhere.DocumentIndex`` (its numbers and lowered text,
        about 0.1 s for a 1 MB filing: call it in a worker), built once and kept with the last
        :data:`KEEP` documents' chunks."""
        from mtcb_curate.verify.elsewhere import DocumentIndex

        key = (doc_key, id(text))
        with self._lock:
            got = self._indexes.get(key)
        if got is None:
            got = DocumentIndex(text)
            with self._lock:
                self._indexes[key] = got
                while len(self._indexes) > self.KEEP:
                    self._indexes.pop(next(iter(self._indexes)))
        return got

    def cached(self, doc_key: str, text: str) -> list[tuple[str, list[tuple[int, int]]]] | None:
        """The document's chunk spans when already worked out, else None (nothing is chunked)."""
        with self._lock:
            return self._kept.get((doc_key, id(text)))

    def spans(self, doc_key: str, text: str) -> list[tuple[str, list[tuple[int, int]]]]:
        """Per configured chunker: its name and the document's chunks as ``(start, end)``
        character offsets, in order (index = chunk number, 0-based as ``chunk_index`` counts)."""
        key = (doc_key, id(text))
        with self._lock:
            got = self._kept.get(key)
        if got is not None:
            return got
        out = []
        for spec in self.settings.chunkers:
            out.append((spec.text, self._chunk(spec, doc_key, text)))
        with self._lock:
            self._kept[key] = out
            while len(self._kept) > self.KEEP:
                self._kept.pop(next(iter(self._kept)))
        return out

    def _chunk(self, spec, doc_key: str, text: str) -> list[tuple[int, int]]:
        corpus = None
        if self.findability is not None:
            with self.findability._lock:
                corpus = self.findability._chunks.get(spec.text)
        if corpus is not None and doc_key in corpus.doc_keys:
            d = corpus.doc_keys.index(doc_key)
            lo, hi = corpus.first[d], corpus.first[d + 1]
            return list(zip(corpus.starts[lo:hi], corpus.ends[lo:hi]))
        chunks = chunk_corpus(spec, {doc_key: text})
        return list(zip(chunks.starts, chunks.ends))


def propose_fit(session: ReviewSession, pid: int, chunks: DocumentChunks, *, verdicts=None,
                config: Path | None = None):
    """"Fit in one chunk" for pair ``pid``: the largest part of its passage inside one chunk of
    every configured chunker that still holds what the answer needs (``verify.shrink.plan_fit``),
    or why none does. A passage located but not verbatim is fitted from its located span (the
    proposal is verbatim). Nothing is written. Chunks the document when needed (see
    :class:`DocumentChunks`: call it in a worker).

    Returns:
        A ``verify.shrink.ShrinkOutcome`` (its proposal is a part of the located passage).

    Raises:
        app.review.NotApplicable: no document, or the passage is not located in it.
            CurateError: the config file is not valid TOML.
    """
    from mtcb_curate.app.gate import resolve_limits
    from mtcb_curate.app.review import NotApplicable
    from mtcb_curate.app.verdicts import Verdicts
    from mtcb_curate.verify.shrink import plan_fit

    view = session.view(pid)
    doc = session.dataset.document_for(session.pairs[pid])
    if doc is None:
        raise NotApplicable("This pair's document is not in the corpus.")
    r = (verdicts if verdicts is not None else Verdicts(session)).complete(pid)
    if r.start is None or r.end is None or r.end <= r.start:
        raise NotApplicable("The passage is not located in its document: fix it first (s, m or e).")
    limits = resolve_limits(session, config)
    spans = chunks.spans(doc.key, doc.text)
    # read as the shrink reads it (``app.review.propose_shrink``: two reference chunks either side)
    out = plan_fit(doc.text, r.start, r.end, view.answer, view.question, spans, min_chars=limits.min_chars,
                   reach=2 * chunks.settings.reference_size)
    if out.proposal is not None or "already lies inside one chunk" in out.reason or not spans:
        return out
    return elsewhere_or(out, session, pid, doc, r.start, r.end, chunks, limits, f"no part of the passage inside one "
                        f"chunk holds what the answer needs ({_clause(out.reason)})")


def _clause(reason: str) -> str:
    """A reason as a clause inside another line: its first sentence, without its end stop."""
    return reason.split(". ")[0].rstrip(".")


def elsewhere_or(near, session: ReviewSession, pid: int, doc, start: int, end: int, chunks: DocumentChunks, limits,
                 why: str):
    """The span elsewhere in the document that holds what pair ``pid``'s answer needs inside one
    chunk of every configured chunker (``verify.elsewhere.plan_elsewhere``), or ``near`` (the
    outcome near the passage) when there is none, its reason saying the document was searched
    too. ``why``: why the passage and the text around it did not do (a clause)."""
    from dataclasses import replace

    from mtcb_curate.verify.elsewhere import plan_elsewhere

    view = session.view(pid)
    far = plan_elsewhere(doc.text, start, end, view.answer, view.question, chunks.spans(doc.key, doc.text),
                         derivations=near.derivations, why=why, index=chunks.index(doc.key, doc.text),
                         max_chars=limits.max_chars, min_chars=limits.min_chars)
    if far.proposal is not None:
        return far
    if near.proposal is None:
        return replace(near, reason=f"{near.reason}; elsewhere in the document: {far.reason}")
    return near
