"""Verdicts of a review session's pairs, kept current as the curator edits passages.

Two sources, the more complete first:

- the session's analysis (``app.analysis``, run in a worker process): every pair's complete
  verification (exact, normalized or fuzzy, occurrences elsewhere, chunk window, tokens) for the
  texts it was run on, handed over with :meth:`Verdicts.absorb`;
- pair by pair, for a pair whose passage changed since: ``quick(pid)``, exact and normalized
  search only (well under 5 ms on a 1 MB filing once its skeleton index exists; building it
  costs 3-5 ms per MB the first time), never tokenizing; ``quick_inline(pid)`` is what the app
  calls on a key: the cached verdict, or ``quick`` when the pair's document has at most
  :data:`INLINE_MAX_CHARS` characters, else None (a 50 MB filing took 40-60 ms per search:
  that waits for a worker thread); and ``complete(pid)``, which adds the fuzzy search, the
  other documents, the chunk window and the token count (tens of ms: a worker thread's).

Results are kept per pair and passage text, so an edit, an undo or a repair simply makes the
next call verify again; a result for another passage or ``chunk_index`` is never returned.
``scan()`` verifies every pair (exact and normalized; ``verify_dataset`` with ``fuzzy=False``)
in the caller's thread, for the headless commands.
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
        self._quick: dict[int, PairResult] = {}
        self._complete: dict[int, PairResult] = {}
        #: The latest analysis (``app.analysis.Analysis``) whose verdicts were absorbed.
        self._analysis = None

    @property
    def index(self):
        """The session's ``verify.CorpusIndex`` (made when first asked for)."""
        return self.session.corpus_index

    def _passage(self, pid: int) -> str:
        return self.session.view(pid).passage

    def absorb(self, analysis) -> None:
        """Take an analysis's verdicts (``app.analysis.Analysis``): each applies to its pair
        while the pair's passage and ``chunk_index`` are those it was run on."""
        self._analysis = analysis

    def _analysed(self, pid: int, passage: str, chunk_index: int | None) -> bool:
        """Whether the latest analysis verified pair ``pid`` with this passage and chunk_index."""
        a = self._analysis
        return (a is not None and pid < len(a.passages) and a.chunk_index[pid] == chunk_index
                and a.passages[pid] == passage)

    def _from_analysis(self, pid: int, passage: str, chunk_index: int | None) -> PairResult | None:
        """The latest analysis's result for ``pid`` if it applies (made once, then kept)."""
        if not self._analysed(pid, passage, chunk_index):
            return None
        r = self._analysis.verdicts.result(pid, passage)
        self._complete[pid] = r
        return r

    def verdict(self, pid: int) -> Verdict | None:
        """The cached verdict of the pair's current passage (None: not verified), without
        making a ``PairResult`` from the analysis (a view filter asks for every pair)."""
        passage = self._passage(pid)
        chunk_index = self.session.pairs[pid].chunk_index
        r = self._complete.get(pid)
        if r is not None and r.passage == passage and r.chunk_index == chunk_index:
            return r.verdict
        if self._analysed(pid, passage, chunk_index):
            return self._analysis.verdicts.verdict(pid)
        r = self._quick.get(pid)
        return r.verdict if r is not None and r.passage == passage and r.chunk_index == chunk_index else None

    def cached(self, pid: int) -> PairResult | None:
        """The most complete cached result for the pair's CURRENT passage and chunk_index, or None."""
        passage = self._passage(pid)
        chunk_index = self.session.pairs[pid].chunk_index
        r = self._complete.get(pid)
        if r is not None and r.passage == passage and r.chunk_index == chunk_index:
            return r
        r = self._from_analysis(pid, passage, chunk_index)
        if r is not None:
            return r
        r = self._quick.get(pid)
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
            r = self._complete.get(pid)
            if r is None or r.passage != passage or r.chunk_index != pair.chunk_index:
                r = self._from_analysis(pid, passage, pair.chunk_index)
            if r is None:
                r = self._quick.get(pid)
                if r is not None and (r.passage != passage or r.chunk_index != pair.chunk_index):
                    r = None
            if r is not None:
                out[pid] = r
        return out

    def is_complete(self, pid: int) -> bool:
        """True when the complete verification of the current passage is known (``complete``
        ran, or the analysis verified this passage)."""
        passage, chunk_index = self._passage(pid), self.session.pairs[pid].chunk_index
        r = self._complete.get(pid)
        return (r is not None and r.passage == passage and r.chunk_index == chunk_index) or \
            self._analysed(pid, passage, chunk_index)

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
            return self.cached(pid)
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
