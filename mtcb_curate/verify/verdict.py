"""Verbatim verification of every supporting passage: one verdict per QA pair.

MTCB's evaluator counts a question as found only when a retrieved chunk contains its supporting
passage as a plain, case-sensitive substring (``passage in chunk.text``); an empty passage
matches every chunk, and a passage that also occurs in another document makes that document's
chunks count too (chonkie-inc/mtcb v0.1.0, ``../shared/notes/mtcb.md``). So each pair gets:

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

Occurrence counts include overlapping occurrences (``"aa"`` occurs twice in ``"aaa"``).

Speed. :func:`verify_dataset` finds every exact occurrence of every passage in every document
in one pass over the corpus bytes with numpy (8-byte-aligned 24-byte keys, see
:class:`CorpusIndex`), and locates normalized passages through the documents' alphanumeric
skeletons, normalizing only small regions; figures are in ``benchmarks/bench_verify.py`` and the
README. :func:`verify_pair` re-verifies one pair after an edit: with ``fuzzy=False`` and
``elsewhere=False`` it takes under a millisecond once the document's index exists;
:func:`complete_fuzzy` (up to about 25 ms in a 1 MB filing) and :func:`complete_elsewhere`
(the cross-document scan, about 20 ms for 48 MB) can then run in a worker thread.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from mtcb_curate.dataset import tokens as tok
from mtcb_curate.verify.fuzzy import FUZZY_MIN_SCORE, locate_fuzzy
from mtcb_curate.dataset.model import Dataset, QAPair
from mtcb_curate.verify.normalize import LEVELS, SkeletonIndex, encode, find, normalize, normalize_passage, skeleton

VERDICTS: tuple[str, ...] = ("exact", "normalized", "fuzzy", "missing", "empty")

#: At most this many exact-occurrence offsets are kept per pair (all are counted).
MAX_OFFSETS = 1000

#: Passages of at least this many UTF-8 bytes are found by the batched corpus pass
#: (3 aligned 8-byte words + 7 bytes of slack); shorter ones by ``str.find`` per document.
_BATCH_MIN_BYTES = 31
#: Candidate 31-byte windows per passage in the batched pass; the one whose keys are rarest in
#: the corpus is verified.
_WINDOWS = 4
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_BITMAP_BITS = 22
#: Document keys computed per numpy step in the batched pass (8 MB of text).
_SLICE_WORDS = 1 << 20


@dataclass(frozen=True, slots=True)
class PairResult:
    """The verification of one QA pair's supporting passage.

    Attributes:
        id: the pair id.
        doc_key: the pair's document key.
        verdict: one of :data:`VERDICTS`.
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
    verdict: str
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
    def occurrences_elsewhere(self) -> int:
        """Exact occurrences in other documents, summed."""
        return sum(n for _, n in self.elsewhere)

    @property
    def located(self) -> bool:
        """True when a span was located (exact, normalized or fuzzy)."""
        return self.start is not None


class CorpusIndex:
    """Per-document caches for verification: skeleton indexes, generation windows.

    Args:
        documents: document key -> document text, in corpus order.

    Everything is built lazily and kept: a document's :class:`SkeletonIndex` (about 3-5 ms per
    MB; it keeps the UTF-8 bytes and the skeleton, about 1.8 bytes per character) when one of its passages needs it, its MTCB windows (tiktoken, about 0.1 s per MB) when
    one of its pairs has a chunk_index. Thread-safe for reading in the sense that a race only
    builds a cache entry twice.
    """

    def __init__(self, documents: Mapping[str, str]):
        self.documents: dict[str, str] = dict(documents)
        self._skel: dict[str, SkeletonIndex] = {}
        self._windows: dict[str, list[tok.Window]] = {}

    @classmethod
    def from_dataset(cls, dataset: Dataset) -> "CorpusIndex":
        """The index over ``dataset.documents``."""
        return cls({k: d.text for k, d in dataset.documents.items()})

    def text(self, key: str) -> str | None:
        """The document text for ``key``, or None."""
        return self.documents.get(key)

    def skeleton(self, key: str) -> SkeletonIndex:
        """The document's skeleton index (built on first use).

        Raises:
            KeyError: no document has that key.
        """
        sk = self._skel.get(key)
        if sk is None:
            sk = SkeletonIndex(self.documents[key])
            self._skel[key] = sk
        return sk

    def windows(self, key: str) -> list[tok.Window]:
        """The document's MTCB generation windows (``tokens.windows``; built on first use).

        Raises:
            KeyError: no document has that key.
        """
        w = self._windows.get(key)
        if w is None:
            w = tok.windows(self.documents[key])
            self._windows[key] = w
        return w

    def cached_windows(self, key: str) -> list[tok.Window] | None:
        """The document's windows if already computed, else None (never tokenizes)."""
        return self._windows.get(key)

    def elsewhere(self, passage: str, own_key: str) -> tuple[tuple[str, int], ...]:
        """Every other document holding ``passage`` verbatim, with its occurrence count.

        One ``in`` test per document (C speed: about 20 ms for 48 MB), then a count where
        found. An empty passage gives ``()``.
        """
        if not passage:
            return ()
        out = []
        for key, text in self.documents.items():
            if key != own_key and find(text, passage) >= 0:
                out.append((key, _count(text, passage)))
        return tuple(out)

    def exact_occurrences_batch(self, passages: Mapping[int, str]) -> dict[int, dict[str, list[int]]]:
        """Every exact occurrence of many passages in every document, in one corpus pass.

        Args:
            passages: pair id -> passage. Passages shorter than 31 UTF-8 bytes are skipped
                (search them with ``str.find``).

        Returns:
            pair id -> {document key: sorted BYTE offsets into ``encode(text)``} for the
            passages found anywhere (an id is absent when its passage occurs nowhere).

        How: every document's bytes are read as 8-byte little-endian words; each position
        ``8 i`` gets a 64-bit key mixing words ``i, i+1, i+2`` (24 bytes). Any occurrence of a
        passage contains one of its 8 windows ``pb[j + r : j + r + 24]`` (r = 0..7) at an
        aligned position, so looking its 8 keys up among the document keys finds every
        occurrence exactly once; each hit is confirmed with ``bytes.startswith``. Of 4 candidate
        offsets ``j`` per passage, the one whose keys are rarest in the corpus is used (stock
        phrases such as "Years Ended December 31" would otherwise give thousands of hits).
        Membership is tested through a 2^22-entry bitmap, then exactly. Cost: a few numpy passes
        over the corpus (about 0.1-0.2 s for 48 MB) plus the hits.
        """
        items = []
        for pid, p in passages.items():
            pb = encode(p)
            if len(pb) >= _BATCH_MIN_BYTES:
                items.append((pid, pb))
        if not items:
            return {}
        m = len(items)
        # Window starts j (4 per passage), and the 8 shifted 24-byte keys of each.
        starts = np.empty((m, _WINDOWS), dtype=np.int64)
        wins = np.empty((m, _WINDOWS, 31), dtype=np.uint8)
        for row, (_, pb) in enumerate(items):
            span = len(pb) - 31
            for w in range(_WINDOWS):
                j = (span * (2 * w + 1)) // (2 * _WINDOWS)
                starts[row, w] = j
                wins[row, w] = np.frombuffer(pb, dtype=np.uint8, count=31, offset=j)
        qkeys = np.empty((m, _WINDOWS, 8), dtype=np.uint64)
        for r in range(8):
            words = np.ascontiguousarray(wins[:, :, r:r + 24]).view("<u8")  # (m, W, 3)
            qkeys[:, :, r] = _mix(words[..., 0], words[..., 1], words[..., 2])
        flat = qkeys.ravel()
        uniq = np.unique(flat)
        bitmap = np.zeros(1 << _BITMAP_BITS, dtype=bool)
        bitmap[_bucket(uniq)] = True

        keys_list = list(self.documents)
        datas: list[bytes] = []
        hit_doc: list[np.ndarray] = []
        hit_pos: list[np.ndarray] = []
        hit_key: list[np.ndarray] = []
        for d, key in enumerate(keys_list):
            data = self._data(key)
            datas.append(data)
            n8 = len(data) // 8
            if n8 < 3:
                continue
            v = np.frombuffer(data, dtype="<u8", count=n8)
            # In slices of _SLICE_WORDS keys: the temporaries stay a few MB for a 50 MB document.
            for first in range(0, n8 - 2, _SLICE_WORDS):
                w = v[first:first + _SLICE_WORDS + 2]
                dk = _mix(w[:-2], w[1:-1], w[2:])
                cand = np.flatnonzero(bitmap[_bucket(dk)])
                if cand.size == 0:
                    continue
                ck = dk[cand]
                idx = np.searchsorted(uniq, ck)
                idx[idx == uniq.size] = 0
                ok = uniq[idx] == ck
                if not ok.any():
                    continue
                hit_doc.append(np.full(int(ok.sum()), d, dtype=np.int64))
                hit_pos.append((cand[ok] + first) * 8)
                hit_key.append(ck[ok])
        if not hit_key:
            return {}
        hk = np.concatenate(hit_key)
        order = np.argsort(hk, kind="stable")
        hk = hk[order]
        hd = np.concatenate(hit_doc)[order]
        hp = np.concatenate(hit_pos)[order]
        lo = np.searchsorted(hk, flat, "left").reshape(m, _WINDOWS, 8)
        hi = np.searchsorted(hk, flat, "right").reshape(m, _WINDOWS, 8)
        counts = (hi - lo).sum(axis=2)  # (m, W)
        choice = counts.argmin(axis=1)
        rows = np.arange(m)
        lo_c = lo[rows, choice]  # (m, 8): hit ranges of the chosen window's 8 keys
        hi_c = hi[rows, choice]
        j_c = starts[rows, choice]
        n_c = hi_c - lo_c
        total = int(n_c.sum())
        out: dict[int, dict[str, list[int]]] = {}
        if total == 0:
            return out
        # Flatten every (passage, shift r, hit) into arrays: hit index, passage row, start.
        flat_n = n_c.ravel()
        row_of = np.repeat(np.repeat(rows, 8), flat_n)
        shift_of = np.repeat(np.tile(np.arange(8), m), flat_n)
        first = np.repeat(lo_c.ravel(), flat_n)
        within = np.arange(total) - np.repeat(np.cumsum(flat_n) - flat_n, flat_n)
        h = first + within
        s_arr = hp[h] - j_c[row_of] - shift_of
        ok = s_arr >= 0
        found: dict[int, dict[int, set[int]]] = {}
        for row, doc, s in zip(row_of[ok].tolist(), hd[h][ok].tolist(), s_arr[ok].tolist()):
            pb = items[row][1]
            if datas[doc].startswith(pb, s):
                found.setdefault(row, {}).setdefault(doc, set()).add(s)
        for row, per_doc in found.items():
            out[items[row][0]] = {keys_list[d]: sorted(per_doc[d]) for d in sorted(per_doc)}
        return out

    def _data(self, key: str) -> bytes:
        sk = self._skel.get(key)
        if sk is not None:
            return sk.data
        return self.skeleton(key).data


def _mix(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (a * _K1) ^ (b * _K2) ^ c


def _bucket(k: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return ((k * _MIX) >> np.uint64(64 - _BITMAP_BITS)).view(np.int64)


def _count(text: str, passage: str) -> int:
    """Occurrences of ``passage`` in ``text``, overlapping ones included."""
    n = 0
    i = find(text, passage)
    while i >= 0:
        n += 1
        i = find(text, passage, i + 1)
    return n


def _offsets(text: str, passage: str) -> tuple[list[int], int]:
    """(first MAX_OFFSETS offsets, total count) of ``passage`` in ``text``, overlapping."""
    offs: list[int] = []
    n = 0
    i = find(text, passage)
    while i >= 0:
        if n < MAX_OFFSETS:
            offs.append(i)
        n += 1
        i = find(text, passage, i + 1)
    return offs, n


def find_normalized(skidx: SkeletonIndex, passage: str, passage_norm: str | None = None,
                    limit: int = MAX_OFFSETS) -> list[tuple[int, int]]:
    """Every original span ``[s, e)`` of the document whose ``ascii`` normalization equals the
    passage's (:func:`~mtcb_curate.verify.normalize.normalize_passage`), in document order.

    Complete and exact: a normalized occurrence has its skeleton in the document skeleton, so
    only the regions around skeleton occurrences are normalized (:meth:`SkeletonIndex.region`
    guarantees they contain any such span with the same normalization as in the whole text),
    and each span is checked by normalizing it on its own. A passage whose normalization is
    empty or has no letter or digit gives ``[]``.

    Cost: one ``bytes.find`` over the skeleton when absent; else about 0.1-0.3 ms per region.
    """
    pn = normalize_passage(passage) if passage_norm is None else passage_norm
    if not pn:
        return []
    sk = skeleton(pn)
    if not sk:
        return []
    hits = skidx.find_all(sk, limit=1_000_000)
    if not hits:
        return []
    regions: list[list[int]] = []
    for x in hits:
        a, b = skidx.region(x, x + len(sk))
        if regions and a <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], b)
        else:
            regions.append([a, b])
    text = skidx.text
    spans: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    for a, b in regions:
        norm = normalize(text, "ascii", a, b)
        for k in norm.find_all(pn, limit=limit):
            s, _, changed_first = norm.char_origin(k)
            _, e, changed_last = norm.char_origin(k + len(pn) - 1)
            if (s, e) in seen:
                continue
            # Ends on unchanged characters: the span normalizes to pn by construction (the map
            # property tested in tests/test_normalize.py); otherwise check it.
            if not (changed_first or changed_last) or normalize_passage(text[s:e]) == pn:
                seen.add((s, e))
                spans.append((s, e))
                if len(spans) >= limit:
                    return spans
    return spans


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
        tokens=tok.count_tokens(p) if count_tokens else None,
    )
    if not p.strip():
        return PairResult(verdict="empty", score=None, start=None, end=None, **base)

    if exact_hits is not None:
        others = tuple((k, len(v)) for k, v in exact_hits.items() if k != key)
    elif elsewhere:
        others = index.elsewhere(p, key)
    else:
        others = ()
    base["elsewhere"] = others

    if text is None:
        return PairResult(verdict="missing", score=None, start=None, end=None, **base)

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
            verdict="exact", score=100.0, start=offs[0], end=offs[0] + len(p), offsets=tuple(offs),
            occurrences_in_doc=count, in_chunk=_in_chunk(index, key, pair.chunk_index, spans, chunk), **base,
        )

    # normalized
    skidx = index.skeleton(key)
    pn = normalize_passage(p)
    spans = find_normalized(skidx, p, pn)
    if spans:
        s, e = spans[0]
        return PairResult(
            verdict="normalized", score=100.0, start=s, end=e, level=_level_of_normalized(p, text[s:e]),
            normalized_occurrences=len(spans), in_chunk=_in_chunk(index, key, pair.chunk_index, spans[:1], chunk),
            **base,
        )

    result = PairResult(verdict="missing", score=None, start=None, end=None, fuzzy_checked=False, **base)
    return complete_fuzzy(index, result) if fuzzy else result


def complete_fuzzy(index: CorpusIndex, result: PairResult) -> PairResult:
    """Run the fuzzy step on a result that :func:`verify_pair` left provisional
    (``fuzzy_checked=False``); any other result is returned unchanged.

    Cost: median about 9 ms, at most about 25 ms per passage in a 1 MB filing
    (``benchmarks/bench_verify.py``), plus the document's index the first time (~5-15 ms).
    Safe to call from a worker thread.
    """
    if result.fuzzy_checked or result.verdict != "missing" or not result.has_document:
        return result
    skidx = index.skeleton(result.doc_key)
    m = locate_fuzzy(skidx, result.passage)
    if m.matched:
        return replace(
            result, verdict="fuzzy", score=m.score, start=m.start, end=m.end, fuzzy_checked=True,
            in_chunk=_in_chunk(index, result.doc_key, result.chunk_index, [(m.start, m.end)]),
        )
    return replace(result, score=m.score if m.start is not None else None, fuzzy_checked=True)


def complete_chunk(index: CorpusIndex, result: PairResult) -> PairResult:
    """Fill ``in_chunk`` for a located result made with ``verify_pair(..., chunk=False)``
    (tokenizes the document the first time: about 0.1 s per MB; fine in a worker thread)."""
    if result.chunk_index is None or result.start is None or result.in_chunk is not None:
        return result
    spans = ([(s, s + len(result.passage)) for s in result.offsets] if result.verdict == "exact" and result.offsets
             else [(result.start, result.end)])
    return replace(result, in_chunk=_in_chunk(index, result.doc_key, result.chunk_index, spans))


def complete_elsewhere(index: CorpusIndex, result: PairResult) -> PairResult:
    """Fill ``elsewhere`` for a result made with ``verify_pair(..., elsewhere=False)`` (the
    cross-document scan, about 20 ms for 48 MB, e.g. in a worker thread). An ``empty``
    result is returned unchanged."""
    if result.verdict == "empty":
        return result
    return replace(result, elsewhere=index.elsewhere(result.passage, result.doc_key))


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Verification of a whole dataset.

    Attributes:
        dataset: the dataset name.
        results: one :class:`PairResult` per pair, in pair order.
        summary: counts: ``pairs``, one key per verdict, ``occurring_elsewhere`` (pairs whose
            passage also occurs in another document), ``outside_chunk`` (located but not inside
            their chunk_index window), ``edge_whitespace``, ``no_document``, and
            ``fuzzy_threshold`` (the score a ``fuzzy`` verdict needs).
    """

    dataset: str
    results: list[PairResult]
    summary: dict[str, Any]

    @property
    def all_exact(self) -> bool:
        """Every pair is ``exact`` (the headless command exits 0 only then)."""
        return all(r.verdict == "exact" for r in self.results)


def summarize(results: list[PairResult]) -> dict[str, Any]:
    """The summary counts of :class:`VerifyReport` for a list of results."""
    summary: dict[str, Any] = {"pairs": len(results)}
    for v in VERDICTS:
        summary[v] = sum(1 for r in results if r.verdict == v)
    summary["occurring_elsewhere"] = sum(1 for r in results if r.elsewhere)
    summary["outside_chunk"] = sum(1 for r in results if r.in_chunk is False)
    summary["edge_whitespace"] = sum(1 for r in results if r.edge_whitespace)
    summary["no_document"] = sum(1 for r in results if not r.has_document)
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
    results: list[PairResult] = []
    step = max(1, total // 100)
    for n, pair in enumerate(pair_list):
        t = texts[pair.id]
        hits = batch.get(pair.id, {}) if len(encode(t)) >= _BATCH_MIN_BYTES else None
        r = verify_pair(index, pair, t, fuzzy=fuzzy, count_tokens=False, exact_hits=hits)
        if count_tokens:
            r = replace(r, tokens=ntok.get(pair.id))
        results.append(r)
        if progress is not None and ((n + 1) % step == 0 or n + 1 == total):
            progress(n + 1, total)
    return VerifyReport(dataset.name, results, summarize(results))


_JSON_FIELDS = ("id", "verdict", "score", "doc_key", "start", "end", "occurrences_in_doc",
                "occurrences_elsewhere", "chars", "tokens", "in_chunk")


def report_json(report: VerifyReport) -> dict[str, Any]:
    """The report as JSON-ready data, exactly::

        {"summary": {...}, "pairs": [{"id", "verdict", "score", "doc_key", "start", "end",
          "occurrences_in_doc", "occurrences_elsewhere", "chars", "tokens", "in_chunk"}]}

    ``start``/``end`` are character offsets into the document ``text``, null when the passage
    was not located; ``score`` may be null (``empty``, or ``missing`` with nothing aligned).
    """
    rows = []
    for r in report.results:
        rows.append({
            "id": r.id,
            "verdict": r.verdict,
            "score": None if r.score is None else round(float(r.score), 2),
            "doc_key": r.doc_key,
            "start": r.start,
            "end": r.end,
            "occurrences_in_doc": r.occurrences_in_doc,
            "occurrences_elsewhere": r.occurrences_elsewhere,
            "chars": r.chars,
            "tokens": r.tokens,
            "in_chunk": r.in_chunk,
        })
    return {"summary": dict(report.summary), "pairs": rows}


def format_summary(report: VerifyReport) -> str:
    """Plain-text table of counts per verdict (and the extra counts), for the terminal.

    Example::

        verdict       pairs       %
        exact           799    60.0
        ...
        total          1331   100.0
    """
    s = report.summary
    total = s["pairs"]
    lines = [f"{'verdict':<12}{'pairs':>8}{'%':>8}"]
    for v in VERDICTS:
        pct = 100.0 * s[v] / total if total else 0.0
        lines.append(f"{v:<12}{s[v]:>8}{pct:>8.1f}")
    lines.append(f"{'total':<12}{total:>8}{100.0 if total else 0.0:>8.1f}")
    lines.append("")
    lines.append(f"also in another document: {s['occurring_elsewhere']}")
    lines.append(f"outside their chunk_index window: {s['outside_chunk']}")
    lines.append(f"edge whitespace: {s['edge_whitespace']}")
    if s["no_document"]:
        lines.append(f"document key matches no document: {s['no_document']}")
    lines.append(f"fuzzy verdict needs a score of at least {s['fuzzy_threshold']:g} (0-100)")
    return "\n".join(lines)


# -- repairs ---------------------------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}


def snap(text: str, result: PairResult) -> str | None:
    """The repair "snap": the located source span ``text[start:end]`` that should replace the
    passage, or None when nothing was located. ``text`` is the pair's document text."""
    if result.start is None or result.end is None:
        return None
    return text[result.start:result.end]


def _edge_junk(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def trim_passage(passage: str) -> str:
    """The repair "trim": strip whitespace and punctuation from both ends of a passage.

    A bracket is kept when its partner is inside the passage (``(in millions)`` stays whole).
    A substring of a document stays a substring (only ends are removed).
    """
    a, b = 0, len(passage)
    while a < b:
        ch = passage[a]
        if ch in _OPENERS and _OPENERS[ch] in passage[a + 1:b]:
            break
        if not _edge_junk(ch):
            break
        a += 1
    while b > a:
        ch = passage[b - 1]
        if ch in _CLOSERS and _CLOSERS[ch] in passage[a:b - 1]:
            break
        if not _edge_junk(ch):
            break
        b -= 1
    return passage[a:b]


def select_span(text: str, start: int, end: int) -> str:
    """The repair "select": the source span ``text[start:end]`` the curator selected.

    Raises:
        ValueError: an empty or out-of-range selection.
    """
    if not 0 <= start < end <= len(text):
        raise ValueError(f"bad selection [{start}, {end}) in a text of {len(text)} characters")
    return text[start:end]
