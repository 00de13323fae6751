"""Verbatim verification of every supporting passage: one verdict per QA pair.

MTCB's evaluator counts a question as found only when a retrieved chunk contains its supporting
passage as a plain, case-sensitive substring (``passage in chunk.text``); an empty passage
matches every chunk, and a passage that also occurs in another document makes that document's
chunks count too (the evaluator of chonkie-inc/mtcb v0.1.0). So each pair gets:

``exact``
    The passage occurs verbatim in its own document; ``offsets`` lists every occurrence.
``normalized``
    Not verbatim, but its ``ascii`` normalization (:mod:`mtcb_curate.verify.normalize`: whitespace
    runs incl. NBSP, hyphenation at line breaks, NFKC letters, quotes and dashes, dropped
    non-ASCII) occurs in the document's; ``start``/``end`` are ORIGINAL document offsets of the
    minimal span whose normalization equals the passage's, and ``level`` says how much
    normalization was needed (``whitespace`` < ``typography`` < ``ascii``).
``fuzzy``
    The best alignment found around anchor n-grams (:mod:`mtcb_curate.verify.fuzzy`) scores at least
    :data:`~mtcb_curate.verify.fuzzy.FUZZY_MIN_SCORE` (0-100).
``missing``
    None of these (or the pair's document key matches no document). ``score`` is the best
    fuzzy score below the threshold, if any alignment was tried.
``empty``
    The passage is empty or whitespace only: a free hit for every question in MTCB.

And, for every pair: exact occurrences in its own document and in *other* documents (by
document key), the passage's length in characters and ``cl100k_base`` tokens, whether it has
edge whitespace, and whether the located span lies inside its ``chunk_index`` generation window
(8,192 tokens, 512 overlap; :mod:`mtcb_curate.dataset.tokens`) when ``chunk_index`` is set.

Occurrence counts include overlapping occurrences (``"aa"`` occurs twice in ``"aaa"``). The
search itself is :mod:`mtcb_curate.verify.search`; repairs are :mod:`mtcb_curate.verify.repair`;
the text and JSON report forms :mod:`mtcb_curate.verify.report`. Costs of each step:
``docs/verification.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np

from mtcb_curate.arrays import codes
from mtcb_curate.dataset import tokens as tok
from mtcb_curate.dataset.model import Dataset, QAPair
from mtcb_curate.dataset.token_cache import cached_count
from mtcb_curate.verify.fuzzy import FUZZY_MIN_SCORE, locate_fuzzy
from mtcb_curate.verify.normalize import LEVELS, encode, normalize_passage
from mtcb_curate.verify.search import _BATCH_MIN_BYTES, MAX_OFFSETS, CorpusIndex, _offsets, find_normalized


class Verdict(StrEnum):
    """The verdict of one pair. A ``str``: ``Verdict.EXACT == "exact"``, and JSON, reports and
    the workspace see the plain value."""

    EXACT = "exact"
    NORMALIZED = "normalized"
    FUZZY = "fuzzy"
    MISSING = "missing"
    EMPTY = "empty"


#: The verdict values, in report order.
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)


@dataclass(frozen=True, slots=True)
class PairResult:
    """The verification of one QA pair's supporting passage.

    Attributes:
        id: the pair id.
        doc_key: the pair's document key.
        verdict: a :class:`Verdict`.
        score: 100.0 for ``exact`` and ``normalized``; the fuzzy score (0-100) for ``fuzzy``;
            for ``missing`` the best fuzzy score below the threshold, or None when no alignment
            was tried; None for ``empty``.
        start, end: character offsets into the document ``text`` of the located span (the first
            exact occurrence, the normalized span, or the fuzzy span); None otherwise.
        level: for ``normalized``, the least normalization level at which passage and span
            agree (``whitespace``, ``typography`` or ``ascii``); None otherwise.
        offsets: start offsets of the exact occurrences in the own document (at most
            :data:`MAX_OFFSETS`).
        occurrences_in_doc: number of exact occurrences in the own document.
        elsewhere: ``(document key, occurrences)`` for every OTHER document holding the passage
            verbatim, in corpus order.
        normalized_occurrences: number of normalized spans found (``normalized`` only).
        chars: passage length in characters.
        tokens: passage length in ``cl100k_base`` tokens, or None when not counted.
        edge_whitespace: the passage starts or ends with whitespace.
        chunk_index: the pair's chunk_index (None when unset).
        in_chunk: when chunk_index is set and the passage is located: whether the span lies
            inside that generation window (for ``exact``: any occurrence does); None otherwise.
        has_document: the pair's document key matches a document.
        fuzzy_checked: the fuzzy step ran (False when called with ``fuzzy=False`` and the
            passage was neither exact nor normalized: then ``missing`` is provisional).
        passage: the passage that was verified (the edited one when there is an edit).
    """

    id: int
    doc_key: str
    verdict: Verdict
    score: float | None
    start: int | None
    end: int | None
    level: str | None = None
    offsets: tuple[int, ...] = ()
    occurrences_in_doc: int = 0
    elsewhere: tuple[tuple[str, int], ...] = ()
    normalized_occurrences: int = 0
    chars: int = 0
    tokens: int | None = None
    edge_whitespace: bool = False
    chunk_index: int | None = None
    in_chunk: bool | None = None
    has_document: bool = True
    fuzzy_checked: bool = True
    passage: str = field(default="", repr=False)

    @property
    def in_other_document(self) -> bool:
        """The passage is not located in its own document but is verbatim in another one: the
        pair's link is what is wrong (one cause, one flag: ``links`` fails, ``verbatim`` and
        ``unique_passage`` say nothing)."""
        return self.start is None and bool(self.elsewhere)

    @property
    def occurrences_elsewhere(self) -> int:
        """Exact occurrences in other documents, summed."""
        return sum(n for _, n in self.elsewhere)

    @property
    def located(self) -> bool:
        """True when a span was located (exact, normalized or fuzzy)."""
        return self.start is not None


def agreement_level(passage: str, span: str) -> str | None:
    """The least normalization level (``whitespace``, ``typography``, ``ascii``) at which the
    passage and a document span normalize (and strip) to the same text; None when none does."""
    for level in LEVELS:
        if normalize_passage(passage, level) == normalize_passage(span, level):
            return level
    return None


def _level_of_normalized(passage: str, span: str) -> str:
    """:func:`agreement_level` for a span known to agree at the ``ascii`` level."""
    for level in LEVELS[:-1]:
        if normalize_passage(passage, level) == normalize_passage(span, level):
            return level
    return LEVELS[-1]


def _in_chunk(index: CorpusIndex, key: str, chunk_index: int | None,
              spans: Iterable[tuple[int, int]], build: bool = True) -> bool | None:
    if chunk_index is None:
        return None
    spans = list(spans)
    if not spans:
        return None
    if not build and index.cached_windows(key) is None:
        return None
    try:
        ws = index.windows(key)
    except KeyError:
        return None
    if not 0 <= chunk_index < len(ws):
        return False
    w = ws[chunk_index]
    return any(w.start <= s and e <= w.end for s, e in spans)


def verify_pair(
    index: CorpusIndex,
    pair: QAPair,
    passage: str | None = None,
    *,
    fuzzy: bool = True,
    elsewhere: bool = True,
    count_tokens: bool = True,
    exact_hits: Mapping[str, list[int]] | None = None,
    chunk: bool = True,
) -> PairResult:
    """Verify one pair (e.g. again, right after the curator edited its passage).

    Args:
        index: the corpus index (reuse one per dataset: it caches skeletons and windows).
        pair: the QA pair (its ``doc_key`` and ``chunk_index`` are used).
        passage: the passage to verify instead of ``pair.passage`` (a workspace edit).
        fuzzy: run the fuzzy step when the passage is neither exact nor normalized. With
            False such a pair is ``missing`` with ``fuzzy_checked=False``; call
            :func:`complete_fuzzy` later (it can run in a worker thread).
        elsewhere: look for the passage in the other documents (``in`` per document, about
            20 ms for 48 MB, up to about 40 ms on a busy machine); with False ``elsewhere`` is
            ``()`` (fill it later with :func:`complete_elsewhere`).
        count_tokens: count the passage's tokens (the first call in a process loads the
            tokenizer, about 0.3 s).
        exact_hits: precomputed exact occurrences ``{doc key: byte offsets}`` from
            :meth:`CorpusIndex.exact_occurrences_batch` (used by :func:`verify_dataset`);
            when given, ``elsewhere`` is taken from it.
        chunk: compute ``in_chunk``, tokenizing the document the first time (about 0.1 s per
            MB). With False it is computed only when the document's windows are already
            cached (else None: fill it later with :func:`complete_chunk`).

    Returns:
        The :class:`PairResult`. Never raises on any passage text (empty, 100 KB, lone
        surrogates, control characters).
    """
    p = pair.passage if passage is None else passage
    key = pair.doc_key
    text = index.text(key)
    base: dict[str, Any] = dict(
        id=pair.id, doc_key=key, chars=len(p), edge_whitespace=bool(p) and p != p.strip(),
        chunk_index=pair.chunk_index, has_document=text is not None, passage=p,
        tokens=cached_count(index.token_cache, p) if count_tokens else None,
    )
    if not p.strip():
        return PairResult(verdict=Verdict.EMPTY, score=None, start=None, end=None, **base)

    if exact_hits is not None:
        others = tuple((k, len(v)) for k, v in exact_hits.items() if k != key)
    elif elsewhere:
        others = index.elsewhere(p, key)
    else:
        others = ()
    base["elsewhere"] = others

    if text is None:
        return PairResult(verdict=Verdict.MISSING, score=None, start=None, end=None, **base)

    # exact
    if exact_hits is not None and key in exact_hits:
        skidx = index.skeleton(key)
        byte_offs = exact_hits[key]
        offs = [skidx.char_offset(b) for b in byte_offs[:MAX_OFFSETS]]
        count = len(byte_offs)
    elif exact_hits is not None and len(encode(p)) >= _BATCH_MIN_BYTES:
        offs, count = [], 0  # the batch pass found it nowhere in this document
    else:
        offs, count = _offsets(text, p)
    if count:
        spans = [(s, s + len(p)) for s in offs]
        return PairResult(
            verdict=Verdict.EXACT, score=100.0, start=offs[0], end=offs[0] + len(p), offsets=tuple(offs),
            occurrences_in_doc=count, in_chunk=_in_chunk(index, key, pair.chunk_index, spans, chunk), **base,
        )

    # normalized
    skidx = index.skeleton(key)
    pn = normalize_passage(p)
    spans = find_normalized(skidx, p, pn)
    if spans:
        s, e = spans[0]
        return PairResult(
            verdict=Verdict.NORMALIZED, score=100.0, start=s, end=e, level=_level_of_normalized(p, text[s:e]),
            normalized_occurrences=len(spans), in_chunk=_in_chunk(index, key, pair.chunk_index, spans[:1], chunk),
            **base,
        )

    result = PairResult(verdict=Verdict.MISSING, score=None, start=None, end=None, fuzzy_checked=False, **base)
    return complete_fuzzy(index, result, pn) if fuzzy else result


def complete_fuzzy(index: CorpusIndex, result: PairResult, passage_norm: str | None = None) -> PairResult:
    """Run the fuzzy step on a result that :func:`verify_pair` left provisional
    (``fuzzy_checked=False``); any other result is returned unchanged. ``passage_norm``:
    ``normalize_passage(result.passage)`` when the caller has it already.

    Cost: median about 9 ms, at most about 25 ms per passage in a 1 MB filing
    (``benchmarks/bench_verify.py``), plus the document's index the first time (~5-15 ms).
    Safe to call from a worker thread.
    """
    if result.fuzzy_checked or result.verdict != Verdict.MISSING or not result.has_document:
        return result
    skidx = index.skeleton(result.doc_key)
    m = locate_fuzzy(skidx, result.passage, passage_norm)
    if m.matched:
        return replace(
            result, verdict=Verdict.FUZZY, score=m.score, start=m.start, end=m.end, fuzzy_checked=True,
            in_chunk=_in_chunk(index, result.doc_key, result.chunk_index, [(m.start, m.end)]),
        )
    return replace(result, score=m.score if m.start is not None else None, fuzzy_checked=True)


def complete_chunk(index: CorpusIndex, result: PairResult) -> PairResult:
    """Fill ``in_chunk`` for a located result made with ``verify_pair(..., chunk=False)``
    (tokenizes the document the first time: about 0.1 s per MB; fine in a worker thread)."""
    if result.chunk_index is None or result.start is None or result.in_chunk is not None:
        return result
    spans = ([(s, s + len(result.passage)) for s in result.offsets] if result.verdict == Verdict.EXACT and result.offsets
             else [(result.start, result.end)])
    return replace(result, in_chunk=_in_chunk(index, result.doc_key, result.chunk_index, spans))


def complete_elsewhere(index: CorpusIndex, result: PairResult) -> PairResult:
    """Fill ``elsewhere`` for a result made with ``verify_pair(..., elsewhere=False)`` (the
    cross-document scan, about 20 ms for 48 MB, e.g. in a worker thread). An ``empty``
    result is returned unchanged."""
    if result.verdict == Verdict.EMPTY:
        return result
    return replace(result, elsewhere=index.elsewhere(result.passage, result.doc_key))


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Verification of a whole dataset.

    Attributes:
        dataset: the dataset name.
        results: one :class:`PairResult` per pair, in pair order.
        summary: counts: ``pairs``, one key per verdict, ``occurring_elsewhere`` (pairs whose
            located passage also occurs in another document), ``wrong_document`` (pairs whose
            passage is not in their own document but verbatim in another: the link is wrong,
            ``PairResult.in_other_document``), ``outside_chunk`` (located but not inside
            their chunk_index window), ``edge_whitespace``, ``no_document``, and
            ``fuzzy_threshold`` (the score a ``fuzzy`` verdict needs).
    """

    dataset: str
    results: list[PairResult]
    summary: dict[str, Any]

    @property
    def all_exact(self) -> bool:
        """Every pair is ``exact`` (the headless command exits 0 only then)."""
        return all(r.verdict == Verdict.EXACT for r in self.results)


def summarize(results: list[PairResult]) -> dict[str, Any]:
    """The summary counts of :class:`VerifyReport` for a list of results."""
    summary: dict[str, Any] = {"pairs": len(results)}
    counts: Counter[str] = Counter()
    for r in results:  # one pass for every count
        counts[r.verdict] += 1
        counts["occurring_elsewhere"] += bool(r.elsewhere) and not r.in_other_document
        counts["wrong_document"] += r.in_other_document
        counts["outside_chunk"] += r.in_chunk is False
        counts["edge_whitespace"] += bool(r.edge_whitespace)
        counts["no_document"] += not r.has_document
    for key in (*VERDICTS, "occurring_elsewhere", "wrong_document", "outside_chunk", "edge_whitespace",
                "no_document"):
        summary[key] = counts[key]
    summary["fuzzy_threshold"] = FUZZY_MIN_SCORE
    return summary


def verify_dataset(
    dataset: Dataset,
    passages: Mapping[int, str] | None = None,
    *,
    fuzzy: bool = True,
    count_tokens: bool = True,
    progress: Callable[[int, int], None] | None = None,
    index: CorpusIndex | None = None,
    pairs: Iterable[QAPair] | None = None,
) -> VerifyReport:
    """Verify every pair of ``dataset``.

    Args:
        dataset: the loaded dataset.
        passages: pair id -> edited passage, overriding ``pair.passage`` (workspace edits).
        fuzzy: run the fuzzy step for passages neither exact nor normalized (else they are
            ``missing`` with ``fuzzy_checked=False``).
        count_tokens: count every passage's tokens (batched; loads the tokenizer, ~0.3 s once).
        progress: called as ``progress(done, total)`` (pairs) while verifying.
        index: a :class:`CorpusIndex` to reuse (built from the dataset otherwise).
        pairs: the pairs to verify (default ``dataset.pairs``; a session also has added ones).

    Returns:
        A :class:`VerifyReport` with one result per pair, in order.
    """
    index = index or CorpusIndex.from_dataset(dataset)
    pair_list = list(dataset.pairs if pairs is None else pairs)
    passages = passages or {}
    texts = {p.id: passages.get(p.id, p.passage) for p in pair_list}
    total = len(pair_list)
    batch = index.exact_occurrences_batch({pid: t for pid, t in texts.items() if t.strip()})
    ntok: dict[int, int] = {}
    if count_tokens and pair_list:
        ids = [p.id for p in pair_list]
        encoded = tok.encoding().encode_ordinary_batch([texts[i] for i in ids])
        ntok = {i: len(e) for i, e in zip(ids, encoded)}
    results: list[PairResult | None] = [None] * total
    step = max(1, total // 100)
    # One document after another: the index decodes a document's text and builds its skeleton
    # once for all its pairs (it keeps only the last few of either).
    order = np.argsort(codes([p.doc_key for p in pair_list]), kind="stable").tolist()
    for n, i in enumerate(order):
        pair = pair_list[i]
        t = texts[pair.id]
        hits = batch.get(pair.id, {}) if len(encode(t)) >= _BATCH_MIN_BYTES else None
        r = verify_pair(index, pair, t, fuzzy=fuzzy, count_tokens=False, exact_hits=hits)
        if count_tokens:
            r = replace(r, tokens=ntok.get(pair.id))
        results[i] = r
        if progress is not None and ((n + 1) % step == 0 or n + 1 == total):
            progress(n + 1, total)
    done: list[PairResult] = results  # type: ignore[assignment] - every slot is filled
    return VerifyReport(dataset.name, done, summarize(done))
