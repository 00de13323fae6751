"""Exact and normalized passage search over a corpus: :class:`CorpusIndex` (per-document caches
and the batched exact pass) and :func:`find_normalized`.

Occurrence counts include overlapping occurrences (``"aa"`` occurs twice in ``"aaa"``).
:meth:`CorpusIndex.exact_occurrences_batch` finds every exact occurrence of many passages in
every document in one pass over the corpus bytes with numpy (8-byte-aligned 24-byte keys).
Figures: ``docs/verification.md`` and ``benchmarks/bench_verify.py``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from mtcb_curate.arrays import unique
from mtcb_curate.dataset import tokens as tok
from mtcb_curate.dataset.model import Dataset, DocumentBytes, document_text
from mtcb_curate.dataset.token_cache import TokenCache, cached_windows
from mtcb_curate.verify.fuzzy import word_bounds
from mtcb_curate.verify.normalize import (
    SkeletonIndex,
    encode,
    normalize,
    normalize_passage,
    skeleton_of_normalized,
)

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
#: The packed bitmap has at least 16 bits per passage key, at most 2^27 bits (16 MB; 8 MB for
#: the 3.2 million keys of 100,000 passages).
_BITMAP_MAX_BITS = 27
#: Skeleton indexes a :class:`CorpusIndex` keeps (least recently used dropped first): about
#: 0.8 bytes a character each, rebuilt in 3-5 ms per MB when needed again.
SKELETONS_KEPT = 4
#: Document keys computed per numpy step in the batched pass (8 MB of text).
_SLICE_WORDS = 1 << 20
#: ``exact_occurrences_batch`` looks the passages' keys up this many passages at a time.
_QUERY_ROWS = 16_384


class CorpusIndex:
    """Per-document caches for verification: skeleton indexes, generation windows.

    Args:
        documents: document key -> document text, or its UTF-8 bytes (``encode``; a
            ``Document.data``, kept without a copy), in corpus order; or a
            ``dataset.model.DocumentBytes`` view, read a document at a time on access.

    The index keeps each document's UTF-8 bytes (a ``DocumentBytes`` view: it reads them on
    access, holding none); ``documents[key]`` and ``text(key)`` decode
    them on access (the last few decoded texts are cached). Built lazily: a document's
    :class:`SkeletonIndex` (about 3-5 ms per MB; it adds the skeleton, about 0.8 bytes per
    character) when one of its passages needs it, the last :data:`SKELETONS_KEPT` kept; its
    MTCB windows (tiktoken, about 0.1 s per MB), kept, when one of its pairs has a
    chunk_index; with ``token_cache`` (a ``dataset.token_cache.TokenCache``) windows are read
    from and written to disk, so a corpus opened again needs no tokenizer. Thread-safe for reading in the sense that a race only
    builds a cache entry twice.
    """

    def __init__(self, documents: Mapping[str, str | bytes], token_cache: TokenCache | None = None):
        self.token_cache = token_cache
        # A ``DocumentBytes`` view reads each document's bytes on access (from the dataset's
        # corpus file): the index then holds none of the corpus itself.
        self._bytes: Mapping[str, bytes] = documents if isinstance(documents, DocumentBytes) else {
            k: v if isinstance(v, bytes) else encode(v) for k, v in documents.items()}
        self.documents: Mapping[str, str] = _Texts(self._bytes)
        self._skel: OrderedDict[str, SkeletonIndex] = OrderedDict()
        self._chars: dict[str, int] = {}
        self._windows: dict[str, list[tok.Window]] = {}

    @classmethod
    def from_dataset(cls, dataset: Dataset, token_cache: TokenCache | None = None) -> "CorpusIndex":
        """The index over ``dataset.documents`` (their UTF-8 bytes, shared, not copied)."""
        return cls(DocumentBytes(dataset.documents), token_cache)

    def text(self, key: str) -> str | None:
        """The document text for ``key``, or None."""
        return self.documents.get(key)

    def has(self, key: str) -> bool:
        """Whether a document has the key ``key`` (nothing decoded)."""
        return key in self._bytes

    def chars(self, key: str) -> int | None:
        """The document's length in characters, or None when no document has ``key`` (counted
        in its UTF-8 bytes once, nothing decoded)."""
        n = self._chars.get(key)
        if n is None:
            data = self._bytes.get(key)
            if data is None:
                return None
            n = len(data) if data.isascii() else len(data) - int(
                np.count_nonzero((np.frombuffer(data, dtype=np.uint8) & 0xC0) == 0x80))
            self._chars[key] = n
        return n

    def skeleton(self, key: str) -> SkeletonIndex:
        """The document's skeleton index (built on first use; the last :data:`SKELETONS_KEPT`
        used are kept).

        Raises:
            KeyError: no document has that key.
        """
        sk = self._skel.get(key)
        if sk is None:
            sk = SkeletonIndex(data=self._bytes[key])
            self._skel[key] = sk
            while len(self._skel) > SKELETONS_KEPT:
                try:
                    self._skel.popitem(last=False)
                except KeyError:  # another thread emptied it
                    break
        else:
            try:
                self._skel.move_to_end(key)
            except KeyError:  # another thread dropped it meanwhile: it is still ours
                pass
        return sk

    def windows(self, key: str) -> list[tok.Window]:
        """The document's MTCB generation windows (``tokens.windows``; built on first use, or
        read from the token cache).

        Raises:
            KeyError: no document has that key.
        """
        w = self._windows.get(key)
        if w is None:
            w = cached_windows(self.token_cache, self._bytes[key])
            self._windows[key] = w
        return w

    def windows_stored(self, key: str) -> bool:
        """Whether the document's windows are in memory or in the token cache (nothing read,
        nothing tokenized); False for an unknown key."""
        if key in self._windows:
            return True
        data = self._bytes.get(key)
        return data is not None and self.token_cache is not None and self.token_cache.has_windows(data)

    def cached_windows(self, key: str) -> list[tok.Window] | None:
        """The document's windows if already computed, else None (never tokenizes)."""
        return self._windows.get(key)

    def elsewhere(self, passage: str, own_key: str) -> tuple[tuple[str, int], ...]:
        """Every other document holding ``passage`` verbatim, with its occurrence count.

        One search per document, then a count where found. An empty passage gives ``()``.
        Every document is searched in its UTF-8 bytes (the same occurrences: UTF-8 is
        self-synchronizing): ``bytes.find`` took 0.17 ms per 550 KB document where
        ``str.find`` on the same text, stored two bytes a character when it holds a curly
        quote, took 1.1 ms (about 100 ms a passage over 48 MB).
        """
        if not passage:
            return ()
        out = []
        needle = encode(passage)
        for key, hay in self._bytes.items():
            if key == own_key:
                continue
            if hay.find(needle) >= 0:
                out.append((key, _count(hay, needle)))
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
        Membership is tested through a packed bitmap of 2^22 bits or more (16 per key), then
        exactly. Cost: a few numpy passes over the corpus (about 0.1-0.2 s for 48 MB) plus the hits.
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
        # All passages in one buffer; window w of a passage of n bytes starts at
        # j = ((n - 31) * (2 w + 1)) // (2 W), gathered without a Python loop per window.
        lengths = np.fromiter((len(pb) for _, pb in items), dtype=np.int64, count=m)
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        joined = np.frombuffer(b"".join(pb for _, pb in items), dtype=np.uint8)
        starts = ((lengths - 31)[:, None] * (2 * np.arange(_WINDOWS) + 1)) // (2 * _WINDOWS)  # (m, W)
        # (m, W, 31) bytes gathered through a window view (an index array would take 8 bytes a byte)
        wins = np.lib.stride_tricks.sliding_window_view(joined, 31)[offsets[:, None] + starts]
        del joined, offsets
        qkeys = np.empty((m, _WINDOWS, 8), dtype=np.uint64)
        for r in range(8):
            words = np.ascontiguousarray(wins[:, :, r:r + 24]).view("<u8")  # (m, W, 3)
            qkeys[:, :, r] = _mix(words[..., 0], words[..., 1], words[..., 2])
        del wins, words
        flat = qkeys.ravel()
        uniq = unique(flat)  # sort-based: numpy's hash-based np.unique took 4.7 s for 3.2M keys
        # A packed bitmap of at least 16 bits per key (about 6 % false candidates; a fixed
        # 2^22 bits let through more than half of all corpus positions at 100,000 passages).
        bits = max(_BITMAP_BITS, min(_BITMAP_MAX_BITS, int(uniq.size * 16).bit_length()))
        bitmap = np.zeros(1 << (bits - 3), dtype=np.uint8)
        b = _bucket(uniq, bits)
        np.bitwise_or.at(bitmap, b >> 3, (np.uint8(1) << (b & 7).astype(np.uint8)))

        keys_list = list(self.documents)
        hit_doc: list[np.ndarray] = []
        hit_pos: list[np.ndarray] = []
        hit_key: list[np.ndarray] = []
        for d, key in enumerate(keys_list):
            data = self._data(key)  # one document at a time: a corpus read from a file is not held
            n8 = len(data) // 8
            if n8 < 3:
                continue
            v = np.frombuffer(data, dtype="<u8", count=n8)
            # In slices of _SLICE_WORDS keys: the temporaries stay a few MB for a 50 MB document.
            for first in range(0, n8 - 2, _SLICE_WORDS):
                w = v[first:first + _SLICE_WORDS + 2]
                dk = _mix(w[:-2], w[1:-1], w[2:])
                bk = _bucket(dk, bits)
                cand = np.flatnonzero((bitmap[bk >> 3] >> (bk & 7).astype(np.uint8)) & 1)
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
        del uniq, bitmap, hit_key, hit_doc, hit_pos, flat
        # The passages' keys looked up a block of rows at a time: the lookup's arrays (eight of
        # 8 bytes a key) for every passage at once were the largest of the verification.
        found: dict[int, dict[int, set[int]]] = {}
        for r0 in range(0, m, _QUERY_ROWS):
            self._confirm_block(items, r0, qkeys[r0:r0 + _QUERY_ROWS], starts[r0:r0 + _QUERY_ROWS], hk, hd, hp,
                                keys_list, found)
        del qkeys
        out: dict[int, dict[str, list[int]]] = {}
        for row in sorted(found):
            per_doc = found[row]
            out[items[row][0]] = {keys_list[d]: sorted(per_doc[d]) for d in sorted(per_doc)}
        return out

    def _confirm_block(self, items: list[tuple[int, bytes]], r0: int, qkeys: np.ndarray, starts: np.ndarray,
                       hk: np.ndarray, hd: np.ndarray, hp: np.ndarray, keys_list: list[str],
                       found: dict[int, dict[int, set[int]]]) -> None:
        """The confirmed occurrences of the passages ``items[r0:r0 + len(qkeys)]`` (their keys
        ``(rows, W, 8)`` and window starts ``(rows, W)``) among the corpus hits ``hk`` (sorted
        keys), ``hd`` (document numbers), ``hp`` (byte positions): added to ``found`` as
        ``row -> {document number: {byte offset}}``."""
        m = len(qkeys)
        flat = qkeys.ravel()
        # Looked up in sorted order (numpy's binary search narrows from the previous key: 4x
        # faster than 3.2 million keys in passage order), then put back in passage order.
        order_q = np.argsort(flat, kind="stable")
        lo = np.empty(flat.size, dtype=np.int64)
        hi = np.empty(flat.size, dtype=np.int64)
        sorted_q = flat[order_q]
        del flat
        lo[order_q] = np.searchsorted(hk, sorted_q, "left")
        hi[order_q] = np.searchsorted(hk, sorted_q, "right")
        del order_q, sorted_q
        lo = lo.reshape(m, _WINDOWS, 8)
        hi = hi.reshape(m, _WINDOWS, 8)
        counts = (hi - lo).sum(axis=2)  # (m, W)
        choice = counts.argmin(axis=1)
        rows = np.arange(m)
        lo_c = lo[rows, choice]  # (m, 8): hit ranges of the chosen window's 8 keys
        hi_c = hi[rows, choice]
        del lo, hi, counts
        j_c = starts[rows, choice]
        n_c = hi_c - lo_c
        total = int(n_c.sum())
        if total == 0:
            return
        # Flatten every (passage, shift r, hit) into arrays: hit index, passage row, start.
        flat_n = n_c.ravel()
        row_of = np.repeat(np.repeat(rows, 8), flat_n)
        shift_of = np.repeat(np.tile(np.arange(8), m), flat_n)
        first = np.repeat(lo_c.ravel(), flat_n)
        within = np.arange(total) - np.repeat(np.cumsum(flat_n) - flat_n, flat_n)
        h = first + within
        s_arr = hp[h] - j_c[row_of] - shift_of
        ok = s_arr >= 0
        docs_ok = hd[h][ok]
        by_doc = np.argsort(docs_ok, kind="stable")  # each document read once to confirm its hits
        data, at = b"", -1
        for row, doc, s in zip(row_of[ok][by_doc].tolist(), docs_ok[by_doc].tolist(), s_arr[ok][by_doc].tolist()):
            if doc != at:
                data, at = self._data(keys_list[doc]), doc
            if data.startswith(items[r0 + row][1], s):
                found.setdefault(r0 + row, {}).setdefault(doc, set()).add(s)

    def _data(self, key: str) -> bytes:
        return self._bytes[key]


class _Texts(Mapping):
    """Document key -> text, decoded from the kept UTF-8 bytes on access
    (``dataset.model.document_text``: the last few decoded are cached)."""

    def __init__(self, data: Mapping[str, bytes]):
        self._data = data

    def __getitem__(self, key: str) -> str:
        return document_text(self._data[key])

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data


def _mix(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (a * _K1) ^ (b * _K2) ^ c


def _bucket(k: np.ndarray, bits: int = _BITMAP_BITS) -> np.ndarray:
    with np.errstate(over="ignore"):
        return ((k * _MIX) >> np.uint64(64 - bits)).view(np.int64)


def _count(text, passage) -> int:
    """Occurrences of ``passage`` in ``text`` (both ``str`` or both ``bytes``), overlapping ones included."""
    n = 0
    i = text.find(passage)
    while i >= 0:
        n += 1
        i = text.find(passage, i + 1)
    return n


def _offsets(text: str, passage: str) -> tuple[list[int], int]:
    """(first MAX_OFFSETS offsets, total count) of ``passage`` in ``text``, overlapping."""
    offs: list[int] = []
    n = 0
    i = text.find(passage)
    while i >= 0:
        if n < MAX_OFFSETS:
            offs.append(i)
        n += 1
        i = text.find(passage, i + 1)
    return offs, n


def find_normalized(skidx: SkeletonIndex, passage: str, passage_norm: str | None = None,
                    limit: int = MAX_OFFSETS) -> list[tuple[int, int]]:
    """Every original span ``[s, e)`` of the document whose ``ascii`` normalization equals the
    passage's (:func:`~mtcb_curate.verify.normalize.normalize_passage`), in document order.

    Complete and exact: a normalized occurrence has its skeleton in the document skeleton, so
    only the regions around skeleton occurrences are normalized (:meth:`SkeletonIndex.region`
    guarantees they contain any such span with the same normalization as in the whole text),
    and each span is checked by normalizing it on its own. A passage whose normalization is
    empty or has no letter or digit gives ``[]``. A span that would start or end inside a word
    of the document (the passage cut mid-word) is widened to the whole word
    (``fuzzy.word_bounds``): its normalization then holds those extra letters.

    Cost: one ``bytes.find`` over the skeleton when absent; else about 0.1-0.3 ms per region.
    """
    pn = normalize_passage(passage) if passage_norm is None else passage_norm
    if not pn:
        return []
    sk = skeleton_of_normalized(pn)
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
                # never mid-word: a passage cut inside a word is located with the whole word
                spans.append(word_bounds(text, s, e))
                if len(spans) >= limit:
                    return spans
    return spans
