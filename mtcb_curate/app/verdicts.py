"""Verdicts of a review session's pairs, kept current as the curator edits passages.

The app asks for a pair's verdict on every key, so this splits ``verify.verify_pair`` in two:

- ``quick(pid)``: exact and normalized search only (well under 5 ms on a 1 MB filing once its
  skeleton index exists; building it costs 3-5 ms per MB the first time), never tokenizing;
  ``quick_inline(pid)`` is what the app calls on a key: the cached verdict, or ``quick`` when
  the pair's document has at most :data:`INLINE_MAX_CHARS` characters, else None (a 50 MB
  filing took 40-60 ms per search and seconds for its first skeleton: that waits for a worker);
- ``complete(pid)``: adds the fuzzy search, the other documents, the chunk window and the token
  count (tens of ms; meant for a worker thread).

``scan()`` verifies every pair (exact and normalized; ``verify_dataset`` with ``fuzzy=False``)
for the queue's marks and the counts. Results are cached per pair and passage text, so an
edit, an undo or a repair simply makes the next call verify again.
"""

from __future__ import annotations

from collections.abc import Callable

from mtcb_curate.store.session import ReviewSession
from mtcb_curate.verify import (
    PairResult,
    Verdict,
    complete_chunk,
    complete_elsewhere,
    complete_fuzzy,
    verify_dataset,
    verify_pair,
)
from mtcb_curate.dataset.token_cache import cached_count

#: Documents up to this many characters are verified on the caller's thread by
#: ``quick_inline`` (at most about 5 ms of search, 20 ms for a first skeleton index); the
#: pairs of larger ones are verified by ``complete`` in a worker.
INLINE_MAX_CHARS = 4_000_000


class Verdicts:
    """Verdict cache over ``session`` (see the module docstring). Safe to use from one worker
    thread besides the app's thread: a race can only verify a pair twice."""

    def __init__(self, session: ReviewSession):
        self.session = session
        self.index = session.corpus_index
        self._quick: dict[int, PairResult] = {}
        self._complete: dict[int, PairResult] = {}

    def _passage(self, pid: int) -> str:
        return self.session.view(pid).passage

    def cached(self, pid: int) -> PairResult | None:
        """The most complete cached result for the pair's CURRENT passage and chunk_index, or None."""
        passage = self._passage(pid)
        chunk_index = self.session.pairs[pid].chunk_index
        for store in (self._complete, self._quick):
            r = store.get(pid)
            if r is not None and r.passage == passage and r.chunk_index == chunk_index:
                return r
        return None

    def cached_many(self, ids) -> dict[int, PairResult]:
        """``cached(pid)`` for each of ``ids`` that has a result (one pass over the edited
        passages, no ``PairView`` per pair: the statistics of 100,000 pairs ask for all)."""
        from mtcb_curate.dataset.model import PASSAGE_FIELD

        edited = self.session.edited_texts(PASSAGE_FIELD)
        pairs = self.session.pairs
        out: dict[int, PairResult] = {}
        for pid in ids:
            pair = pairs[pid]
            passage = edited.get(pid, pair.passage)
            for store in (self._complete, self._quick):
                r = store.get(pid)
                if r is not None and r.passage == passage and r.chunk_index == pair.chunk_index:
                    out[pid] = r
                    break
        return out

    def is_complete(self, pid: int) -> bool:
        """True when ``complete(pid)`` has run for the current passage."""
        r = self._complete.get(pid)
        return (r is not None and r.passage == self._passage(pid)
                and r.chunk_index == self.session.pairs[pid].chunk_index)

    def quick(self, pid: int) -> PairResult:
        """Exact/normalized verdict of the current passage (cached; no fuzzy, no tokenizing,
        no other documents). A passage neither exact nor normalized is ``missing`` with
        ``fuzzy_checked=False`` until ``complete``."""
        r = self.cached(pid)
        if r is not None:
            return r
        pair = self.session.pairs[pid]
        r = verify_pair(self.index, pair, self._passage(pid), fuzzy=False, elsewhere=False,
                        count_tokens=False, chunk=False)
        self._quick[pid] = r
        return r

    def quick_inline(self, pid: int) -> PairResult | None:
        """``quick(pid)`` when it is cached or cheap (the pair's document has at most
        :data:`INLINE_MAX_CHARS` characters, or there is none); else None: call ``complete``
        in a worker. Meant for the app's thread, on every key."""
        r = self.cached(pid)
        if r is not None:
            return r
        chars = self.index.chars(self.session.pairs[pid].doc_key)
        if chars is not None and chars > INLINE_MAX_CHARS:
            return None
        return self.quick(pid)

    def complete(self, pid: int) -> PairResult:
        """The full verdict: ``quick`` plus fuzzy search, occurrences in other documents, the
        chunk window and the token count. Tens of ms: call it from a worker thread."""
        if self.is_complete(pid):
            return self._complete[pid]
        r = self.quick(pid)
        r = complete_fuzzy(self.index, r)
        r = complete_elsewhere(self.index, r)
        r = complete_chunk(self.index, r)
        if r.tokens is None:
            from dataclasses import replace

            r = replace(r, tokens=cached_count(self.index.token_cache, r.passage))
        if r.passage == self._passage(pid):
            self._complete[pid] = r
        return r

    def scan(self, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Quick verdicts for every pair (one ``verify_dataset`` pass, about 0.6 s at ficha
        scale); returns the counts per verdict (``missing`` still includes pairs the fuzzy
        step may yet place)."""
        report = verify_dataset(self.session.dataset, self.session.edited_texts(), fuzzy=False,
                                count_tokens=False, index=self.index, pairs=list(self.session.pairs),
                                progress=progress)
        for r in report.results:
            self._quick.setdefault(r.id, r)
            if self._quick[r.id].passage != r.passage:
                self._quick[r.id] = r
        return {k: v for k, v in report.summary.items() if isinstance(v, int)}

    def fill_token_cache(self, cancelled: Callable[[], bool] = lambda: False) -> int:
        """Put into the corpus index's token cache (``dataset.token_cache``) what a later
        session's ``complete`` would tokenize: the windows of every document a pair points to
        and the token count of every current passage, where missing. Meant for a worker, once
        per session: on a corpus opened before it only reads (88 window files and a counts file
        at ficha scale, tens of ms); the first time it tokenizes the corpus on this thread
        (about 0.1 s per MB: tiktoken releases the GIL while it encodes). Returns the number of
        documents and passages tokenized (0: the tokenizer was not needed); stops early when
        ``cancelled()`` turns true."""
        from mtcb_curate.dataset import tokens

        index, cache = self.index, self.index.token_cache
        if cache is None:
            return 0
        done = 0
        keys = dict.fromkeys(p.doc_key for p in self.session.pairs if p.chunk_index is not None)
        for key in keys:
            if cancelled():
                return done
            if index.has(key) and index.cached_windows(key) is None:
                done += not index.windows_stored(key)
                index.windows(key)  # read from the cache, else tokenized and stored
        from mtcb_curate.dataset.model import PASSAGE_FIELD

        edited = self.session.edited_texts(PASSAGE_FIELD)  # as cached_many: no PairView per pair
        passages = dict.fromkeys(edited.get(pid, pair.passage)
                                 for pid, pair in enumerate(self.session.pairs))
        missing: list[str] = []
        for text in passages:
            if cache.count(text) is None:
                missing.append(text)
        step = 1000
        for i in range(0, len(missing), step):
            if cancelled():
                return done
            encode = tokens.encoding().encode_ordinary
            cache.put_counts({t: len(encode(t)) for t in missing[i:i + step]})
            done += len(missing[i:i + step])
        return done

    def verbatim_spans(self) -> dict[int, tuple[int, int] | None]:
        """Pair id -> the first occurrence ``(start, end)`` of its current passage in its
        document, or None where the passage is not there verbatim; pairs without a cached
        verdict, and empty passages, are left out (for ``app.clusters.search``'s ``located``)."""
        out: dict[int, tuple[int, int] | None] = {}
        for pid, r in self.cached_many(range(len(self.session))).items():
            if r.verdict == Verdict.EXACT:
                out[pid] = (r.start, r.start + len(r.passage))
            elif r.verdict != Verdict.EMPTY:
                out[pid] = None
        return out

    def not_exact(self) -> set[int]:
        """Ids whose cached verdict for their current passage is not ``exact``."""
        out = set()
        for pid in range(len(self.session)):
            r = self.cached(pid)
            if r is not None and r.verdict != "exact":
                out.add(pid)
        return out
