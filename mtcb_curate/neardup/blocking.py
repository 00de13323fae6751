"""The near-duplicate search: :func:`find_clusters` links QA pairs by the rules of
:mod:`mtcb_curate.neardup` and groups them into clusters.

Candidate generation ("blocking"): identical questions and passages by grouping equal keys;
similar questions through an index of content-word sets (each set and the set less one or two
words, hashed), scored with rapidfuzz ``cpdist``; with ``exact=True``, in row blocks of
``process.cdist`` compared only with questions whose length can still reach the cutoff,
screened first on a word-level code when a pass is large (:func:`screen_cutoff_for`);
passages without a span through hashed 24-character windows. Clusters: star clustering. The design and the measured costs: ``docs/neardup.md``.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from mtcb_curate.arrays import codes as _codes
from mtcb_curate.arrays import isin as _isin
from mtcb_curate.arrays import unique as _unique
from mtcb_curate.neardup.clusters import _LINK_DTYPE, Cluster, Item, _reason_names
from mtcb_curate.neardup.similarity import (
    _BIT,
    _NEEDLE_CHUNK,
    _PASSAGE_MASK,
    _QUESTION_BITS,
    _QUESTION_MASK,
    _STEP,
    _VERIFY_COST,
    _WINDOW,
    ANSWER_MARGIN,
    BLOCK_CELLS,
    CLIQUE_MAX,
    DEFAULT_THRESHOLD,
    EXACT_MAX_PAIRS,
    MIN_OVERLAP_CHARS,
    PAIRWISE_MAX,
    PREFILTER_MARGIN,
    QUESTION_REASONS,
    REASON_IDENTICAL,
    REASON_IDENTICAL_ACROSS,
    REASON_LLM,
    REASON_OVERLAP,
    REASON_SAME_ANSWER,
    REASON_SAME_PASSAGE,
    REASON_SIMILAR,
    REASONS,
    FUNCTION_WORDS,
    MAX_EXTRA_WORDS,
    MIN_SHARED_WORDS,
    WORD_TYPO_MIN_CHARS,
    WORD_TYPO_RATIO,
    _sorted_words,
    asked,
    asked_key,
    content_compatible,
    question_numbers,
    scored_text,
)

#: Questions with more content words than this are indexed by their whole set and every set
#: of one word fewer, not of two fewer (their keys grow as the square of the count).
_MAX_LEVEL2_WORDS = 40

# -- the search ----------------------------------------------------------------------------


def find_clusters(
    items: Sequence[Item | tuple[int, str, str, str, str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    not_duplicates: Iterable[tuple[int, int]] = (),
    spans: Mapping[int, tuple[int, int]] | None = None,
    reasons: Collection[str] = QUESTION_REASONS,
    progress: Callable[[int, int], None] | None = None,
    workers: int = -1,
    exact: bool | None = None,
    extra_links: Iterable[tuple[int, int]] = (),
) -> list[Cluster]:
    """Near-duplicate clusters among ``items`` (see the module docstring for every rule).

    Args:
        items: ``Item``s or ``(id, doc_key, question, answer, passage)`` tuples; ids unique.
        threshold: question similarity (0-100, token_sort_ratio) from which questions are
            "similar"; the same-answer rule uses ``threshold - ANSWER_MARGIN``.
        not_duplicates: id pairs a curator marked "not duplicates", in either order; they are
            never linked, so a cluster held together only by them disappears. Ids not in
            ``items`` are ignored.
        spans: id -> (start, end) character offsets of the passage in its document (e.g.
            ``passage_spans``). Located passages overlap when their spans do; passages without
            a span are compared as text (identical, or one contained in the other).
        reasons: which rules to apply, a subset of ``REASONS``; by default
            ``QUESTION_REASONS``, the rules that say two pairs ask the same question (shared
            or overlapping passages are ``find_shared_passages``'s, never a cluster's).
        progress: called as ``progress(done, total)`` after each block of questions compared
            for similarity (counted in questions, the within-document and the
            across-document passes together); the last call has ``done == total``.
        workers: threads for rapidfuzz (``-1``: all cores).
        exact: True compares every pair (then applies the content-word rule); None (default)
            or False finds "similar question" pairs through the content-word index (the same
            links); the same-answer rule screens groups of more than ``EXACT_MAX_PAIRS`` pairs
            unless True.
        extra_links: id pairs judged duplicates elsewhere (the LLM's semantic dedup), linked
            with the reason ``REASON_LLM``; "not duplicates" marks still win over them.

    Returns:
        Clusters, largest first, then by lowest id.

    Raises:
        ValueError: a repeated id, a threshold outside (0, 100], or an unknown reason.
    """
    found = _links(items, threshold, reasons, spans, progress, workers, exact, extra_links)
    if found is None:
        return []
    prep, a, b, bits = found
    if not_duplicates:
        a, b, bits = _drop_excluded(a, b, bits, prep.ids, not_duplicates)
    return _clusters(prep, a, b, bits, star=bool(set(reasons) & set(QUESTION_REASONS)) or bool(extra_links))


def find_groups(
    items: Sequence[Item | tuple[int, str, str, str, str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    not_duplicates: Iterable[tuple[int, int]] = (),
    shared_marks: Iterable[tuple[int, int]] = (),
    spans: Mapping[int, tuple[int, int]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = -1,
    exact: bool | None = None,
    extra_links: Iterable[tuple[int, int]] = (),
) -> tuple[list[Cluster], list[Cluster]]:
    """Near-duplicate clusters and shared-passage groups of ``items`` from one search.

    Every rule is applied once; then:

    - the clusters are the connected components of the ``QUESTION_REASONS`` links (what
      ``find_clusters`` gives by default): pairs that ask the same question;
    - the shared-passage groups are the connected components of the links that hold ONLY
      for ``PASSAGE_REASONS`` (same or overlapping passage, different questions): distinct
      questions on shared evidence, or a question asked twice in other words. Pairs linked
      by a question rule are left to the clusters.

    Args:
        items, threshold, spans, progress, workers, exact, extra_links: as ``find_clusters``
            (``spans``: located passages overlap by document offsets; pass
            ``passage_spans`` or the verification's offsets).
        not_duplicates: id pairs marked "not duplicates": linked neither way.
        shared_marks: id pairs marked "distinct questions on shared evidence": never in a
            shared-passage group (they may still be in a cluster).

    Returns:
        ``(clusters, shared)``, each largest first, then by lowest id; the reasons of a
        shared group are passage reasons only.

    Raises:
        ValueError: as ``find_clusters``.
    """
    search = search_links(items, threshold=threshold, spans=spans, progress=progress, workers=workers,
                          exact=exact, extra_links=extra_links)
    return search.groups(not_duplicates=not_duplicates, shared_marks=shared_marks)


class LinkSet:
    """Every link of one search over ``items`` (``search_links``), to be grouped again over a
    subset of the pairs, or with other "not duplicates" / shared-evidence marks, without
    searching again (a decision or a mark changes no text).

    Attributes:
        items: the searched items (``Item``s), in the order given.
        threshold: the question similarity the search used.
        extra_links: the extra (LLM) links it was given, as ``(a, b)`` id tuples.

    Grouping a subset keeps the links found over all items: which words name a document
    ("across documents" in ``docs/neardup.md``) was judged over all of them, and a group of
    more than ``CLIQUE_MAX`` identical questions or passages is linked as a star on its lowest
    id, so without that member its other members are not linked by that rule.
    """

    def __init__(self, items: list[Item], threshold: float, prep: _Prepared | None,
                 a: np.ndarray, b: np.ndarray, bits: np.ndarray):
        self.items, self.threshold = items, threshold
        self.extra_links: tuple[tuple[int, int], ...] = ()
        #: rapidfuzz threads when grouping (the search's ``workers``).
        self.workers = -1
        self._prep, self._a, self._b, self._bits = prep, a, b, bits
        self._last: tuple[tuple, tuple[list[Cluster], list[Cluster]]] | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The links as three integer arrays ``(a, b, bits)``: positions into ``items`` and the
        reason bits, one per link (to keep a search on disk: :meth:`from_arrays`); int64 as the
        search gives them, the narrowest type that holds them after :meth:`for_grouping` or
        :meth:`from_arrays` (``_narrow``)."""
        return self._a, self._b, self._bits

    @classmethod
    def from_arrays(cls, items: Sequence[Item | tuple[int, str, str, str, str]], threshold: float,
                    a: np.ndarray, b: np.ndarray, bits: np.ndarray,
                    extra_links: Iterable[tuple[int, int]] = (), workers: int = -1) -> LinkSet:
        """The ``LinkSet`` of a search over ``items`` at ``threshold`` whose links were kept as
        :meth:`arrays` (the items must be the very ones searched, in the same order)."""
        rows = _as_items(items)
        prep = _Prepared(rows) if len(a) else None
        out = cls(rows, threshold, prep, *_narrow(len(rows), a, b, bits))
        out.extra_links = tuple((int(x), int(y)) for x, y in extra_links)
        out.workers = workers
        return out

    def for_grouping(self) -> LinkSet:
        """The same links with only what grouping reads of the questions (ids, document keys,
        scored questions): what the search prepared besides, and the items' texts (``items``
        is empty), are let go with this ``LinkSet``, and nothing is worked out again
        (``from_arrays`` prepares the questions anew). The links are held in the narrowest
        integer types that hold them (``_narrow``)."""
        n = len(self.items) if self._prep is None else self._prep.n
        out = LinkSet((), self.threshold, None if self._prep is None else self._prep.grouping_part(),
                      *_narrow(n, self._a, self._b, self._bits))
        out.extra_links, out.workers = self.extra_links, self.workers
        return out

    def groups(self, *, keep: Collection[int] | None = None, not_duplicates: Iterable[tuple[int, int]] = (),
               shared_marks: Iterable[tuple[int, int]] = ()) -> tuple[list[Cluster], list[Cluster]]:
        """``(clusters, shared)`` as ``find_groups`` gives them, over the pairs whose ids are in
        ``keep`` (all by default), with these marks. The last grouping is kept: asked again
        with the same pairs and marks (the review screen's badges, then its set checks, while
        nothing is rejected), it is not worked out twice."""
        prep = self._prep
        if prep is None:
            return [], []
        kept = None if keep is None else frozenset(int(i) for i in keep)
        if kept is not None and len(kept) == len(prep.ids) and kept.issuperset(prep.ids.tolist()):
            kept = None  # every pair: the same as no keep
        key = (kept, frozenset(not_duplicates), frozenset(shared_marks))
        if self._last is not None and self._last[0] == key:
            clusters, shared = self._last[1]
            return list(clusters), list(shared)
        clusters, shared = self._group(kept, key[1], key[2])
        self._last = (key, (clusters, shared))
        return list(clusters), list(shared)

    def _group(self, keep: frozenset[int] | None, not_duplicates: frozenset[tuple[int, int]],
               shared_marks: frozenset[tuple[int, int]]) -> tuple[list[Cluster], list[Cluster]]:
        prep = self._prep
        a, b, bits = self._a, self._b, self._bits
        if keep is not None:
            inside = _isin(prep.ids, np.fromiter((int(i) for i in keep), dtype=np.int64))
            ok = inside[a] & inside[b]
            a, b, bits = a[ok], b[ok], bits[ok]
        if not_duplicates:
            a, b, bits = _drop_excluded(a, b, bits, prep.ids, not_duplicates)
        question = (bits & _QUESTION_MASK) != 0
        clusters = _clusters(prep, a[question], b[question], bits[question] & _QUESTION_MASK, star=True,
                             workers=self.workers)
        shared = ~question & ((bits & _PASSAGE_MASK) != 0)
        sa, sb, sbits = a[shared], b[shared], bits[shared] & _PASSAGE_MASK
        if shared_marks:
            sa, sb, sbits = _drop_excluded(sa, sb, sbits, prep.ids, shared_marks)
        return clusters, _clusters(prep, sa, sb, sbits, workers=self.workers)


def search_links(
    items: Sequence[Item | tuple[int, str, str, str, str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    spans: Mapping[int, tuple[int, int]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = -1,
    exact: bool | None = None,
    extra_links: Iterable[tuple[int, int]] = (),
) -> LinkSet:
    """Every rule applied once over ``items`` (arguments as ``find_groups``), kept as a
    ``LinkSet`` to group as many times as needed.

    Raises:
        ValueError: as ``find_clusters``.
    """
    rows = _as_items(items)
    extra = [(int(x), int(y)) for x, y in extra_links]
    found = _links(rows, threshold, REASONS, spans, progress, workers, exact, extra)
    if found is None:
        e = np.zeros(0, dtype=np.int64)
        out = LinkSet(rows, threshold, None, e, e, e)
    else:
        out = LinkSet(rows, threshold, *found)
    out.extra_links = tuple(extra)
    out.workers = workers
    return out


def _narrow(n: int, a: np.ndarray, b: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Links ``(a, b, bits)`` with positions below ``n`` as ``_position_type(n)`` and the reason
    bits as ``_BITS_TYPE``: grouping reads the same values in a third of the bytes."""
    small = _position_type(n)
    return (np.asarray(a).astype(small, copy=False), np.asarray(b).astype(small, copy=False),
            np.asarray(bits).astype(_BITS_TYPE, copy=False))


def find_shared_passages(items: Sequence[Item | tuple[int, str, str, str, str]], **kwargs: Any) -> list[Cluster]:
    """The shared-passage groups of ``find_groups`` (same arguments), without the clusters."""
    return find_groups(items, **kwargs)[1]


def _links(items: Sequence[Item | tuple[int, str, str, str, str]], threshold: float, reasons: Collection[str],
           spans: Mapping[int, tuple[int, int]] | None, progress: Callable[[int, int], None] | None,
           workers: int, exact: bool | None, extra_links: Iterable[tuple[int, int]],
           ) -> tuple[_Prepared, np.ndarray, np.ndarray, np.ndarray] | None:
    """Every link of ``reasons`` among ``items``: (prepared items, positions a < b, reason
    bits), or None with fewer than two items."""
    if not 0 < threshold <= 100:
        raise ValueError(f"threshold must be in (0, 100], not {threshold}")
    unknown = set(reasons) - set(REASONS)
    if unknown:
        raise ValueError(f"unknown reason(s): {', '.join(sorted(unknown))}")
    rows = _as_items(items)
    ids = np.fromiter((it.id for it in rows), dtype=np.int64, count=len(rows))
    if len(set(ids.tolist())) != len(rows):
        raise ValueError("item ids must be unique")
    n = len(rows)
    if n < 2:
        if progress:
            progress(0, 0)
        return None
    want = set(reasons)
    prep = _Prepared(rows)
    edges = _Edges(n)

    similar = REASON_SIMILAR in want
    passes = _Passes(prep, threshold, workers, exact, progress, similar=similar)
    if similar and exact is True:
        passes.within_documents(edges)
        passes.across_documents(edges)
    elif similar:
        passes.similar_indexed(edges)
    if REASON_SAME_ANSWER in want:
        passes.same_answer(edges, max(threshold - ANSWER_MARGIN, 1.0))
    passes.finish()
    if want & {REASON_IDENTICAL, REASON_IDENTICAL_ACROSS}:
        _identical_questions(prep, edges)
    if want & {REASON_SAME_PASSAGE, REASON_OVERLAP}:
        _passages(prep, spans or {}, edges)

    if extra_links:
        pos = {int(i): k for k, i in enumerate(ids.tolist())}
        pairs = [(pos[x], pos[y]) for x, y in extra_links if x in pos and y in pos and x != y]
        if pairs:
            ea, eb = zip(*pairs)
            edges.add(np.array(ea), np.array(eb), _BIT[REASON_LLM])
            want.add(REASON_LLM)
    a, b, bits = edges.merged(want)
    return prep, a, b, bits


def _as_items(items: Sequence[Item | tuple[int, str, str, str, str]]) -> list[Item]:
    """``items`` as a list of ``Item``s (the given ``Item`` objects themselves, not copies)."""
    return [it if type(it) is Item else Item(*it) for it in items]


def screen_cutoff_for(cutoff: float) -> float:
    """The word-level screen's cutoff (0-100) for a character-level ``cutoff``:
    ``cutoff - max(PREFILTER_MARGIN, 115 - cutoff)``; at or below 0 there is no screen."""
    return cutoff - max(PREFILTER_MARGIN, 115.0 - cutoff)


# -- internals -----------------------------------------------------------------------------


def _level2_fits(a: frozenset, b: frozenset) -> bool:
    """Two extra words count only when the longer set has at most ``_MAX_LEVEL2_WORDS``."""
    return abs(len(a) - len(b)) < 2 or max(len(a), len(b)) <= _MAX_LEVEL2_WORDS


def _typo_classes(vocabulary: Sequence[str]) -> dict[str, int]:
    """Word -> class id: words of at least ``WORD_TYPO_MIN_CHARS`` characters, without digits,
    starting with the same character and of Indel similarity >= ``WORD_TYPO_RATIO`` (rapidfuzz
    ``ratio``) share a class (connected components of those pairs); every other word is its own."""
    words = list(vocabulary)
    n = len(words)
    pa, pb = [], []
    by_first: dict[str, list[int]] = defaultdict(list)
    for k, w in enumerate(words):
        if len(w) >= WORD_TYPO_MIN_CHARS and not any(ch.isdigit() for ch in w):
            by_first[w[0]].append(k)
    for group in by_first.values():
        if len(group) < 2:
            continue
        g = np.array(group)
        strings = [words[k] for k in group]
        for s0 in range(0, len(g), 2048):
            block = process.cdist(strings[s0:s0 + 2048], strings, scorer=fuzz.ratio, dtype=np.uint8,
                                  score_cutoff=WORD_TYPO_RATIO, workers=-1 if len(g) > 2000 else 1)
            r, c = np.nonzero(block)
            keep = c > r + s0
            pa.append(g[r[keep] + s0])
            pb.append(g[c[keep]])
    root = np.arange(n)
    if pa:
        a, b = np.concatenate(pa), np.concatenate(pb)
        if len(a):
            root = _components(n, a, b)
    return dict(zip(words, root.tolist()))


class _Prepared:
    """Per-item arrays computed once (positions 0..n-1 in ``items`` order)."""

    def __init__(self, rows: list[Item]):
        self.rows = rows
        self.n = len(rows)
        self.ids = np.array([r.id for r in rows], dtype=np.int64)
        self.doc_keys = [str(r.doc_key) for r in rows]
        self.doc = _codes(self.doc_keys)
        # Each distinct question text is normalized once (a templated set repeats its
        # questions), its rows sharing the results.
        self._qinv, distinct = _distinct([str(r.question) for r in rows])
        scored = [scored_text(q) for q in distinct]
        self.qcode = _codes(_spread(scored, self._qinv))  # "identical question": the normalized text as it is
        self._normq_u = [asked(q) for q in scored]  # what the score and the word rules read
        self.normq = _spread(self._normq_u, self._qinv)
        self.sortq = _spread([_sorted_words(q) for q in self._normq_u], self._qinv)
        self.sortq_array = np.array(self.sortq + [None], dtype=object)[:-1]  # 1-d even if all equal length
        self.length = np.fromiter((len(s) for s in self.sortq), dtype=np.int64, count=self.n)
        self.has_q = self.length > 0
        # "differ in a number" and "ask a different thing" (``asked_key``) gate every question
        # link the same way: one code for both
        self.numbers = _codes(_spread([(question_numbers(q), asked_key(q)) for q in self._normq_u], self._qinv))
        ainv, distinct = _distinct([str(r.answer) for r in rows])
        answers = _spread([scored_text(a) for a in distinct], ainv)
        acode = _codes(answers)
        empty = np.array([not a for a in answers])
        acode[empty] = -1 - np.arange(self.n)[empty]  # an empty answer matches nothing
        self.acode = acode
        self._content: list[frozenset] | None = None
        self._set_hash: np.ndarray | None = None
        self._anchored: np.ndarray | None = None
        self._word_table: tuple[np.ndarray, np.ndarray, list[str]] | None = None
        self._word_codes: list[str] | None = None
        self._word_code_array: np.ndarray | None = None

    def grouping_part(self) -> _Prepared:
        """A ``_Prepared`` holding only what grouping reads (``_clusters``, ``_scores``,
        ``LinkSet.groups``): ``rows``, ``n``, ``ids``, ``doc_keys``, ``sortq``,
        ``sortq_array``, ``has_q``; the search's other tables are not kept."""
        out = object.__new__(_Prepared)
        for name in ("n", "ids", "doc_keys", "sortq", "sortq_array", "has_q"):
            setattr(out, name, getattr(self, name))
        out.rows = []
        return out

    @property
    def anchored(self) -> np.ndarray:
        """True where the question contains a document-specific word (module docstring)."""
        if self._anchored is None:
            owner, word, _ = self.word_table
            doc = self.doc[owner]
            nw = int(word.max()) + 1 if len(word) else 1
            dw, per = _unique(doc * nw + word, counts=True)  # questions per (doc, word)
            df = np.bincount(dw % nw, minlength=nw)  # documents per word
            specific = dw[(per >= 2) & (df[dw % nw] == 1)]
            hit = _isin(doc * nw + word, specific)
            self._anchored = np.bincount(owner[hit], minlength=self.n) > 0
        return self._anchored

    @property
    def word_table(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Each question's distinct words: ``(owner positions, word ids, vocabulary)``."""
        if self._word_table is None:
            vocab: dict[str, int] = {}
            sets = _spread([set(q.split()) for q in self._normq_u], self._qinv)
            sizes = np.fromiter(map(len, sets), dtype=np.int64, count=self.n)
            word = np.fromiter((vocab.setdefault(w, len(vocab)) for ws in sets for w in ws), dtype=np.int64,
                               count=int(sizes.sum()))
            self._word_table = (np.repeat(np.arange(self.n), sizes), word, list(vocab))
        return self._word_table

    @property
    def content(self) -> list[frozenset]:
        """Each question's content words (not ``FUNCTION_WORDS``) as a frozenset of typo-class
        ids (``_typo_classes``)."""
        if self._content is None:
            owner, word, vocab = self.word_table
            stop = np.fromiter((w in FUNCTION_WORDS for w in vocab), dtype=bool, count=len(vocab))
            keep = ~stop[word] if len(word) else np.zeros(0, dtype=bool)
            content_vocab = [w for w, st in zip(vocab, stop.tolist()) if not st]
            cls = _typo_classes(content_vocab)
            cls_of = np.full(len(vocab), -1, dtype=np.int64)
            cls_of[~stop] = [cls[w] for w in content_vocab]
            owner, word = owner[keep], cls_of[word[keep]]
            pair = _unique(owner * (len(vocab) + 1) + word)  # a class once per question
            owner, word = pair // (len(vocab) + 1), pair % (len(vocab) + 1)
            self._flat = (owner, word)
            sizes = np.bincount(owner, minlength=self.n)
            cuts = np.r_[0, np.cumsum(sizes)].tolist()
            wl = word.tolist()
            first = np.unique(self._qinv, return_index=True)[1].tolist()  # each distinct question's first row
            self._content = _spread([frozenset(wl[cuts[k]:cuts[k + 1]]) for k in first], self._qinv)
            rng = np.random.default_rng(0x5EED)
            word_hash = rng.integers(1, 2**62, size=len(vocab) + 1, dtype=np.int64)
            word_hash = word_hash.astype(np.uint64) * np.uint64(2) + np.uint64(1)
            self._class_hash = word_hash
            self._sizes = sizes
            self._set_hash = np.zeros(self.n, dtype=np.uint64)
            with np.errstate(over="ignore"):
                np.add.at(self._set_hash, owner, word_hash[word])
        return self._content

    @property
    def set_hash(self) -> np.ndarray:
        """A 64-bit hash of each question's content-word set: the wrapping sum of one random
        odd 64-bit value per typo class (so a set less some words hashes to the sum less theirs)."""
        self.content
        return self._set_hash

    def compatible(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``content_compatible`` for each pair of positions (a, b)."""
        h = self.set_hash
        same = h[a] == h[b]
        c = self.content
        rest = np.flatnonzero(~same)
        ok = same.copy()
        ok[rest] = [content_compatible(c[x], c[y]) and _level2_fits(c[x], c[y])
                    for x, y in zip(a[rest].tolist(), b[rest].tolist())]
        return ok

    def content_keys(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The index keys of ``members``: ``(owner positions, key hashes)``, each question's
        content set with 0, 1 or 2 (``MAX_EXTRA_WORDS``) words left out, as long as
        ``MIN_SHARED_WORDS`` are left (and at most ``_MAX_LEVEL2_WORDS`` for 2)."""
        h = self.set_hash
        owner, word = self._flat
        starts = np.r_[0, np.cumsum(self._sizes)[:-1]]
        owners, keys = [members], [h[members]]
        sizes = self._sizes[members]
        with np.errstate(over="ignore"):
            for size in _unique(sizes).tolist():
                if size - 1 < MIN_SHARED_WORDS:
                    continue
                grp = members[sizes == size]
                words = word[starts[grp][:, None] + np.arange(size)]
                wh = self._class_hash[words]
                full = h[grp][:, None]
                owners.append(np.repeat(grp, size))
                keys.append((full - wh).reshape(-1))
                if MAX_EXTRA_WORDS >= 2 and size - 2 >= MIN_SHARED_WORDS and size <= _MAX_LEVEL2_WORDS:
                    x, y = np.triu_indices(size, 1)
                    owners.append(np.repeat(grp, len(x)))
                    keys.append((full - wh[:, x] - wh[:, y]).reshape(-1))
        return np.concatenate(owners), np.concatenate(keys)

    @property
    def word_code_array(self) -> np.ndarray:
        """``word_codes`` as a 1-d object array (fast fancy indexing)."""
        if self._word_code_array is None:
            self._word_code_array = np.array(self.word_codes + [None], dtype=object)[:-1]
        return self._word_code_array

    @property
    def word_codes(self) -> list[str]:
        """Each question as sorted one-character codes of its words' first four characters."""
        if self._word_codes is None:
            freq = Counter(w[:4] for q in self.normq for w in q.split())
            rank = {w: k for k, (w, _) in enumerate(freq.most_common())}
            # 1..127 for the 127 most frequent prefixes; the rarer ones share 128..255.
            code = {w: chr(k + 1) if k < 127 else chr(128 + (k - 127) % 128) for w, k in rank.items()}
            self._word_codes = _spread(["".join(sorted(code[w[:4]] for w in q.split())) for q in self._normq_u],
                                       self._qinv)
        return self._word_codes


def _distinct(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """``(inverse, distinct)``: the distinct values in order of first appearance, and for each
    value its position among them (``distinct[inverse[k]] == values[k]``)."""
    inverse = _codes(values)
    distinct: list[str] = [""] * (int(inverse.max()) + 1 if len(inverse) else 0)
    for k, v in zip(inverse.tolist(), values):
        distinct[k] = v
    return inverse, distinct


def _spread(per_distinct: list, inverse: np.ndarray) -> list:
    """One entry per row: ``per_distinct[inverse[k]]`` (the same objects, shared)."""
    return [per_distinct[k] for k in inverse.tolist()]


class _Edges:
    """Links found so far: per added batch one int64 array of ``(a * n + b) << W | bits``
    (positions a < b, reason bits; ``W`` = ``len(REASONS)``): 8 bytes a link, where three
    arrays took 24, and merging them is one sort of one array."""

    def __init__(self, n: int):
        self.n = n
        self.parts: list[np.ndarray] = []

    def add(self, a: np.ndarray, b: np.ndarray, bits: int | np.ndarray) -> None:
        if len(a) == 0:
            return
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        keep = lo != hi
        bits_arr = np.broadcast_to(np.asarray(bits, dtype=np.int64), lo.shape)
        packed = lo[keep] * self.n + hi[keep]
        packed <<= _REASON_WIDTH
        packed |= bits_arr[keep]
        self.parts.append(packed)

    def merged(self, want: set[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unique (a, b) with the OR of their bits, restricted to the wanted reasons (called once:
        the parts are let go); positions as ``_position_type(n)``, bits as ``_BITS_TYPE``."""
        packed = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int64)
        self.parts = []
        if not len(packed):
            e = np.zeros(0, dtype=np.int64)
            return e, e, e
        packed.sort()
        bits = (packed & ((1 << _REASON_WIDTH) - 1)).astype(_BITS_TYPE)
        packed >>= _REASON_WIDTH
        starts = np.flatnonzero(np.r_[True, packed[1:] != packed[:-1]])
        bits = np.bitwise_or.reduceat(bits, starts)
        key = packed[starts]
        del packed, starts
        mask = sum(_BIT[r] for r in want)
        bits &= mask
        keep = bits != 0
        key, bits = key[keep], bits[keep]
        small = _position_type(self.n)
        return (key // self.n).astype(small, copy=False), (key % self.n).astype(small, copy=False), bits


#: Bits of a link's reasons in ``_Edges``' packed links.
_REASON_WIDTH = len(REASONS)
#: The type of reason bits once merged: int8 while ``len(REASONS)`` fit in its 7 value bits.
_BITS_TYPE = np.int8 if len(REASONS) < 8 else np.int64
#: ``_Passes.similar_indexed`` looks up the content-word keys of this many questions at a time.
_KEY_BLOCK = 8192


class _Passes:
    """The blocked ``cdist`` passes over question strings."""

    def __init__(self, prep: _Prepared, threshold: float, workers: int, exact: bool | None,
                 progress: Callable[[int, int], None] | None, *, similar: bool):
        self.prep, self.t, self.workers, self.exact, self.progress = prep, threshold, workers, exact, progress
        q = np.flatnonzero(prep.has_q)
        self.by_doc: dict[int, np.ndarray] = {}
        if similar:
            order = q[np.argsort(prep.doc[q], kind="stable")]
            docs = prep.doc[order]
            cuts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1], True])
            for s, e in zip(cuts[:-1], cuts[1:]):
                if e - s >= 2:
                    self.by_doc[int(docs[s])] = order[s:e]
        self.cross_members = q[~prep.anchored[q]] if similar and len(_unique(prep.doc[q])) > 1 else q[:0]
        within_rows = sum(len(v) for v in self.by_doc.values())
        self.total = within_rows + len(self.cross_members)
        self.done = 0

    def _tick(self, rows: int) -> None:
        self.done += rows
        if self.progress:
            self.progress(min(self.done, self.total), self.total)

    def finish(self) -> None:
        if self.progress:
            self.progress(self.total, self.total)

    def _use_exact(self, pairs: int) -> bool:
        return self.exact if self.exact is not None else pairs <= EXACT_MAX_PAIRS

    def within_documents(self, edges: _Edges) -> None:
        """Every pair within each document at ``threshold``."""
        groups = list(self.by_doc.values())
        exact = self._use_exact(sum(len(g) * (len(g) - 1) // 2 for g in groups))
        p = self.prep
        for g in groups:
            a, b = _pairs_above(p, g, self.t, exact, self.workers, self._tick)
            ok = p.numbers[a] == p.numbers[b]
            a, b = a[ok], b[ok]
            ok = p.compatible(a, b)
            a, b = a[ok], b[ok]
            bits = np.where(p.qcode[a] == p.qcode[b], _BIT[REASON_IDENTICAL] | _BIT[REASON_SIMILAR],
                            _BIT[REASON_SIMILAR])
            edges.add(a, b, bits)

    def same_answer(self, edges: _Edges, cutoff: float) -> None:
        """Pairs of one document with the same answer, at the lower ``cutoff``."""
        p = self.prep
        q = np.flatnonzero(p.has_q)
        key = _codes(list(zip(p.doc[q].tolist(), p.acode[q].tolist())))
        sa, sb, large = _small_group_pairs(key, q, CLIQUE_MAX)
        exact = self._use_exact(sum(len(g) * (len(g) - 1) // 2 for g in large))
        found = []
        if len(sa):
            score = _cpdist(p.sortq_array, sa, sb, dtype=np.uint8, score_cutoff=cutoff, workers=self.workers)
            found.append((sa[score > 0], sb[score > 0]))
        found += [_pairs_above(p, g, cutoff, exact, self.workers, None) for g in large]
        for a, b in found:
            ok = p.numbers[a] == p.numbers[b]
            a, b = a[ok], b[ok]
            bits = np.where(p.qcode[a] == p.qcode[b], _BIT[REASON_IDENTICAL] | _BIT[REASON_SAME_ANSWER],
                            _BIT[REASON_SAME_ANSWER])
            edges.add(a, b, bits)

    def similar_indexed(self, edges: _Edges) -> None:
        """The "similar question" links through the content-word index: each question's
        content set is looked up among every question's sets with up to ``MAX_EXTRA_WORDS``
        words left out (``_Prepared.content_keys``), which finds every pair the rule allows
        (``content_compatible``) without comparing the others; those candidates are scored
        with ``cpdist`` and kept from ``threshold``, within a document or, between questions
        that do not name their document, across documents."""
        p = self.prep
        members = np.concatenate([g for g in self.by_doc.values()] + [self.cross_members])
        members = _unique(members)
        if len(members) < 2:
            self._tick(self.total)
            return
        # each index key looked up among the (fewer) probes: every question's whole set; the
        # keys of a block of members at a time (a question has up to hundreds of keys: all of
        # them at once took tens of bytes a key several times over)
        probe = p.set_hash[members]
        order = np.argsort(probe)
        probe, probe_owner = probe[order], members[order]
        del order
        found = []
        for k in range(0, len(members), _KEY_BLOCK):
            owner, key = p.content_keys(members[k:k + _KEY_BLOCK])
            lo = np.searchsorted(probe, key, side="left")
            counts = np.searchsorted(probe, key, side="right") - lo
            del key
            hit = counts > 0
            owner, lo, counts = owner[hit], lo[hit], counts[hit]
            total = int(counts.sum())
            if total:
                b = np.repeat(owner, counts)
                a = probe_owner[np.repeat(lo, counts) + (np.arange(total) - np.repeat(np.cumsum(counts) - counts,
                                                                                        counts))]
                x, y = np.minimum(a, b), np.maximum(a, b)
                keep = x != y
                found.append(_unique(x[keep] * p.n + y[keep]))
        self._tick(self.total // 2)
        if found:
            pair = _unique(np.concatenate(found))
            del found
            a, b = pair // p.n, pair % p.n
            del pair
            anchored = p.anchored
            same_doc = p.doc[a] == p.doc[b]
            scope = same_doc | (~anchored[a] & ~anchored[b])
            ok = scope & (p.numbers[a] == p.numbers[b]) & p.has_q[a] & p.has_q[b]
            a, b, same_doc = a[ok], b[ok], same_doc[ok]
            # the set hashes matched: confirm the sets (a 64-bit collision is possible in principle)
            ok = p.compatible(a, b)
            a, b, same_doc = a[ok], b[ok], same_doc[ok]
            score = _cpdist(p.sortq_array, a, b, dtype=np.uint8, score_cutoff=self.t, workers=self.workers)
            ok = score > 0 if self.t > 0 else np.ones(len(a), dtype=bool)
            a, b, same_doc = a[ok], b[ok], same_doc[ok]
            identical = p.qcode[a] == p.qcode[b]
            bits = np.where(identical, np.where(same_doc, _BIT[REASON_IDENTICAL], _BIT[REASON_IDENTICAL_ACROSS]),
                            0) | _BIT[REASON_SIMILAR]
            edges.add(a, b, bits)
        self._tick(self.total - self.total // 2)

    def across_documents(self, edges: _Edges) -> None:
        """Unanchored questions against each other across documents, at ``threshold``."""
        g = self.cross_members
        if len(g) < 2:
            return
        p = self.prep
        exact = self._use_exact(len(g) * (len(g) - 1) // 2)
        a, b = _pairs_above(p, g, self.t, exact, self.workers, self._tick)
        ok = (p.doc[a] != p.doc[b]) & (p.numbers[a] == p.numbers[b])
        a, b = a[ok], b[ok]
        ok = p.compatible(a, b)
        a, b = a[ok], b[ok]
        bits = np.where(p.qcode[a] == p.qcode[b], _BIT[REASON_IDENTICAL_ACROSS] | _BIT[REASON_SIMILAR],
                        _BIT[REASON_SIMILAR])
        edges.add(a, b, bits)


def _pairs_above(prep: _Prepared, members: np.ndarray, cutoff: float, exact: bool, workers: int,
                 tick: Callable[[int], None] | None) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of ``members`` (positions) whose question similarity is >= ``cutoff``, as
    positions (a, b).

    Rows are taken in blocks in order of length; each block is compared with the members from
    its first row on, up to the longest length that can still reach the cutoff. With the
    word-level screen, the pairs that pass it are scored exactly with ``cpdist``.
    """
    none = np.zeros(0, dtype=np.int64)
    m = len(members)
    if m < 2:
        if tick:
            tick(m)
        return none, none
    lengths = prep.length[members]
    order = np.argsort(lengths, kind="stable")
    pos = members[order]
    lengths = lengths[order]
    strings = prep.sortq_array[pos]
    screen_cutoff = screen_cutoff_for(cutoff)
    prescreen = not exact and screen_cutoff > 0
    screen = prep.word_code_array[pos] if prescreen else strings
    if not prescreen:
        screen_cutoff = cutoff
    stretch = (200.0 - cutoff) / cutoff
    out_a, out_b = [], []
    i0 = 0
    while i0 < m:
        rows = max(16, BLOCK_CELLS // max(1, m - i0))
        i1 = min(m, i0 + rows)
        hi = max(i1, int(np.searchsorted(lengths, lengths[i1 - 1] * stretch, side="right")))
        w = workers if (i1 - i0) * (hi - i0) >= 50_000 else 1
        block = process.cdist(screen[i0:i1], screen[i0:hi], scorer=fuzz.ratio, dtype=np.uint8,
                              score_cutoff=screen_cutoff, workers=w)
        r, c = _nonzero(block)
        del block
        keep = c > r
        r, c = r[keep] + i0, c[keep] + i0
        if prescreen and len(r) * _VERIFY_COST > (i1 - i0) * (hi - i0):
            # so many pass the screen that scoring the whole block exactly is cheaper
            block = process.cdist(strings[i0:i1], strings[i0:hi], scorer=fuzz.ratio, dtype=np.uint8,
                                  score_cutoff=cutoff, workers=w)
            r, c = _nonzero(block)
            del block
            keep = c > r
            r, c = r[keep] + i0, c[keep] + i0
        elif prescreen and len(r):
            r, c = _verify(strings, r, c, cutoff)
        if len(r):
            out_a.append(pos[r])
            out_b.append(pos[c])
        if tick:
            tick(i1 - i0)
        i0 = i1
    if not out_a:
        return none, none
    return np.concatenate(out_a), np.concatenate(out_b)


def _verify(strings: np.ndarray, r: np.ndarray, c: np.ndarray, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (r, c), sorted by r, whose exact score is >= ``cutoff``: one ``cdist`` call per
    row, so rapidfuzz prepares each row's question once (``cpdist`` would do it per pair)."""
    cuts = np.flatnonzero(np.r_[True, r[1:] != r[:-1], True]).tolist()
    keep = np.zeros(len(r), dtype=bool)
    for s, e in zip(cuts[:-1], cuts[1:]):
        row = r[s]
        keep[s:e] = process.cdist(strings[row:row + 1], strings[c[s:e]], scorer=fuzz.ratio, dtype=np.uint8,
                                  score_cutoff=cutoff)[0] > 0
    return r[keep], c[keep]


def _nonzero(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a mostly-zero uint8 matrix, scanning it 8 bytes at a time."""
    flat = block.reshape(-1)
    whole = flat.size - flat.size % 8
    words = np.flatnonzero(flat[:whole].view(np.uint64))
    idx = (words[:, None] * 8 + np.arange(8)).reshape(-1)
    idx = idx[flat[idx] != 0]
    tail = np.flatnonzero(flat[whole:]) + whole
    if len(tail):
        idx = np.concatenate([idx, tail])
    return np.divmod(idx, block.shape[1])


def _identical_questions(prep: _Prepared, edges: _Edges) -> None:
    """Identical normalized questions: within a document and across documents."""
    q = np.flatnonzero(prep.has_q)
    a, b, large = _small_group_pairs(prep.qcode[q], q, CLIQUE_MAX)
    parts = [(a, b)] + [_group_links(g) for g in large]
    for a, b in parts:
        same = prep.doc[a] == prep.doc[b]
        edges.add(a, b, np.where(same, _BIT[REASON_IDENTICAL], _BIT[REASON_IDENTICAL_ACROSS]))


def _small_group_pairs(keys: np.ndarray, members: np.ndarray, max_size: int
                       ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Every pair (a < b by position) within each group of members sharing a key, for the
    groups of 2 to ``max_size`` members, built without a Python loop over groups; and the larger
    groups, as arrays."""
    none = np.zeros(0, dtype=np.int64)
    if len(keys) < 2:
        return none, none, []
    order = np.argsort(keys, kind="stable")
    k, m = keys[order], members[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    sizes = np.diff(np.r_[starts, len(k)])
    out_a, out_b, large = [none], [none], []
    for size in _unique(sizes).tolist():
        if size < 2:
            continue
        rows = starts[sizes == size]
        if size > max_size:
            large += [np.sort(m[r:r + size]) for r in rows.tolist()]
            continue
        grid = np.sort(m[rows[:, None] + np.arange(size)], axis=1)
        x, y = np.triu_indices(size, 1)
        out_a.append(grid[:, x].reshape(-1))
        out_b.append(grid[:, y].reshape(-1))
    return np.concatenate(out_a), np.concatenate(out_b), large


def _groups(keys: np.ndarray, members: np.ndarray) -> list[np.ndarray]:
    """Members sharing a key, groups of two or more."""
    if len(keys) < 2:
        return []
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    cuts = np.flatnonzero(np.r_[True, k[1:] != k[:-1], True])
    return [members[order[s:e]] for s, e in zip(cuts[:-1], cuts[1:]) if e - s >= 2]


def _group_links(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of a group (a clique) up to ``CLIQUE_MAX`` members, else a star on the first."""
    g = np.sort(group)
    if len(g) <= CLIQUE_MAX:
        a, b = np.triu_indices(len(g), 1)
        return g[a], g[b]
    return np.full(len(g) - 1, g[0]), g[1:]


def _passages(prep: _Prepared, spans: Mapping[int, tuple[int, int]], edges: _Edges) -> None:
    """Same and overlapping supporting passages within each document."""
    rows = prep.rows
    text = [" ".join(str(r.passage).split()).replace("\x00", "") for r in rows]
    nonempty = np.array([bool(t) for t in text])
    # identical text
    q = np.flatnonzero(nonempty)
    key = _codes([(prep.doc_keys[i], text[i]) for i in q.tolist()])
    for group in _groups(key, q):
        a, b = _group_links(group)
        edges.add(a, b, _BIT[REASON_SAME_PASSAGE])
    # located spans
    span = np.full((prep.n, 2), -1, dtype=np.int64)
    for k, r in enumerate(rows):
        s = spans.get(r.id)
        if s is not None and nonempty[k] and 0 <= s[0] < s[1]:
            span[k] = s
    located = span[:, 0] >= 0
    for members in _groups(prep.doc[q], q):
        loc = members[located[members]]
        if len(loc) >= 2:
            _span_overlaps(loc, span, edges)
    # passages without a span: compared as text, a document at a time
    free = ~located
    for members in _groups(prep.doc[q], q):
        _text_containment(prep, text, members, free, edges)


def _span_overlaps(members: np.ndarray, span: np.ndarray, edges: _Edges) -> None:
    start, end = span[members, 0], span[members, 1]
    order = np.lexsort((end, start))
    members, start, end = members[order], start[order], end[order]
    # For each i, the candidates are those after it that start before it ends.
    stop = np.searchsorted(start, end, side="left")
    counts = np.maximum(stop - np.arange(len(members)) - 1, 0)
    total = int(counts.sum())
    if total == 0:
        return
    ia = np.repeat(np.arange(len(members)), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    ib = ia + 1 + offsets
    overlap = np.minimum(end[ia], end[ib]) - start[ib]
    shorter = np.minimum(end[ia] - start[ia], end[ib] - start[ib])
    same = (start[ia] == start[ib]) & (end[ia] == end[ib])
    raised = same | ((overlap >= MIN_OVERLAP_CHARS) & (2 * overlap >= shorter))
    ia, ib, same = ia[raised], ib[raised], same[raised]
    edges.add(members[ia], members[ib], np.where(same, _BIT[REASON_SAME_PASSAGE], _BIT[REASON_OVERLAP]))


def _text_containment(prep: _Prepared, text: list[str], candidates: np.ndarray, free: np.ndarray,
                      edges: _Edges) -> None:
    """Passages contained in another of the same document, for pairs with at least one
    passage without a span (``free``); identical texts are left to the "same passage" rule.

    A passage of at least ``MIN_OVERLAP_CHARS`` characters inside another one has, at one of
    its first ``_STEP`` offsets, a ``_WINDOW``-character window that the other one has at a
    multiple of ``_STEP``; windows are hashed (polynomial over the code points, with numpy)
    and joined, and each candidate pair is checked with ``in``. Linear in the total passage
    length plus the candidates, where a search per passage would be quadratic.
    """
    if len(candidates) < 2 or not free[candidates].any():
        return
    lens = np.fromiter((len(text[i]) for i in candidates.tolist()), dtype=np.int64, count=len(candidates))
    starts = np.r_[0, np.cumsum(lens)[:-1]]
    codes = np.frombuffer("".join(text[i] for i in candidates.tolist()).encode("utf-32-le", "surrogatepass"),
                          dtype=np.uint32)
    doc = prep.doc[candidates].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    everyone = np.arange(len(candidates))
    loose = np.flatnonzero(free[candidates])
    # a passage without a span inside any passage, then any passage inside one without a span
    jobs = [(loose, everyone)] + ([(everyone, loose)] if len(loose) < len(candidates) else [])
    for needles, hay in jobs:
        per = np.maximum((lens[hay] - _WINDOW) // _STEP + 1, 0)
        h_owner = np.repeat(hay, per)
        h_pos = starts[h_owner] + _STEP * (np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per))
        h_key = _window_hash(codes, h_pos) ^ doc[h_owner]
        del h_pos
        order = np.argsort(h_key, kind="stable")
        h_key, h_owner = h_key[order], h_owner[order]
        needles = needles[lens[needles] >= MIN_OVERLAP_CHARS]
        for k in range(0, len(needles), _NEEDLE_CHUNK):
            chunk = needles[k:k + _NEEDLE_CHUNK]
            n_owner = np.repeat(chunk, _STEP)
            n_key = _window_hash(codes, starts[n_owner] + np.tile(np.arange(_STEP), len(chunk))) ^ doc[n_owner]
            lo = np.searchsorted(h_key, n_key, side="left")
            counts = np.searchsorted(h_key, n_key, side="right") - lo
            total = int(counts.sum())
            if total == 0:
                continue
            na = np.repeat(n_owner, counts)
            nb = h_owner[np.repeat(lo, counts) + (np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts))]
            keep = na != nb
            pair = _unique(na[keep] * len(candidates) + nb[keep])
            a, b = candidates[pair // len(candidates)], candidates[pair % len(candidates)]
            found = np.fromiter((text[x] != text[y] and text[x] in text[y] for x, y in zip(a.tolist(), b.tolist())),
                                dtype=bool, count=len(a))
            edges.add(a[found], b[found], _BIT[REASON_OVERLAP])


def _window_hash(codes: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Polynomial hash (mod 2**64) of the ``_WINDOW`` code points from each position."""
    h = np.zeros(len(positions), dtype=np.uint64)
    base = np.uint64(1_000_003)
    at = np.empty(len(positions), dtype=np.int64)
    code = np.empty(len(positions), dtype=codes.dtype)
    with np.errstate(over="ignore"):
        for t in range(_WINDOW):  # in place: no new array per code point
            np.add(positions, t, out=at)
            np.take(codes, at, out=code)
            h *= base
            h += code
    return h


def _drop_excluded(a: np.ndarray, b: np.ndarray, bits: np.ndarray, ids: np.ndarray,
                   not_duplicates: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    where = {int(v): k for k, v in enumerate(ids.tolist())}
    n = len(ids)
    keys = []
    for x, y in not_duplicates:
        px, py = where.get(int(x)), where.get(int(y))
        if px is not None and py is not None and px != py:
            keys.append(min(px, py) * n + max(px, py))
    if not keys:
        return a, b, bits
    keep = ~_isin(a.astype(np.int64) * n + b, np.array(keys, dtype=np.int64))
    return a[keep], b[keep], bits[keep]


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component root of each position: hook larger roots under smaller, then
    shortcut until every pointer is a root (no Python loop over edges)."""
    parent = np.arange(n)
    while True:
        pa, pb = parent[a], parent[b]
        lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
        moving = lo != hi
        if not moving.any():
            return parent
        np.minimum.at(parent, hi[moving], lo[moving])
        while True:
            nxt = parent[parent]
            if np.array_equal(nxt, parent):
                break
            parent = nxt


def _position_type(n: int) -> type:
    """The numpy type of positions below ``n``: ``int32`` where they fit (4 bytes a link end),
    else ``int64``."""
    return np.int32 if n < 2**31 else np.int64


def _stars(n: int, a: np.ndarray, b: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Star clustering: the centre of each position (-1: in no cluster). Positions are taken
    by decreasing number of links (then total score, then position); each one not yet placed
    becomes a centre with every neighbour not yet placed. Every member of a star is linked
    directly to its centre, so no cluster joins questions only through a chain of links.
    After Aslam, Pelekhov and Rus, "The Star Clustering Algorithm for Static and Dynamic
    Information Organization" (JGAA 8(1), 2004), as a partition (a position is in one star);
    then each member joins the star it is most linked to (``_to_best_star``)."""
    small = _position_type(n)
    ends = np.concatenate([a, b]).astype(small, copy=False)
    degree = np.bincount(ends, minlength=n)
    # the scores are float32 values: their float64 sums are exact in any order
    weight = score.astype(np.float64)
    strength = np.bincount(a, weights=weight, minlength=n) + np.bincount(b, weights=weight, minlength=n)
    del weight
    nodes = np.flatnonzero(degree)
    nodes = nodes[np.lexsort((nodes, -strength[nodes], -degree[nodes]))]
    order = np.argsort(ends, kind="stable")
    del ends
    # 4 or 8 bytes a link end (a list of millions of ints took about 60 bytes each)
    other = np.concatenate([b, a]).astype(small, copy=False)[order]
    other = array("i" if small is np.int32 else "q", other.tobytes())
    indptr = np.r_[0, np.cumsum(degree)].tolist()
    del strength, degree, order  # millions of entries each: not kept through the loop
    centre = [-1] * n
    size: dict[int, int] = {}
    orphans = []
    for u in nodes.tolist():
        if centre[u] >= 0:
            continue
        free = [v for v in other[indptr[u]:indptr[u + 1]] if centre[v] < 0]
        if not free:
            orphans.append(u)
            continue
        centre[u] = u
        for v in free:
            centre[v] = u
        size[u] = 1 + len(free)
    # A position whose neighbours all went to other stars joins one of them: a neighbour that
    # is a centre by now takes it; else the neighbour leaves its star (which keeps two members
    # or more) to centre a new one; else that star of two is centred on the neighbour instead.
    for u in orphans:
        if centre[u] >= 0:
            continue
        near = other[indptr[u]:indptr[u + 1]]
        v = next((x for x in near if centre[x] == x), near[0])
        c = centre[v]
        if c == v:
            size[v] += 1
        elif size[c] > 2:
            size[c] -= 1
            centre[v], size[v] = v, 2
        else:
            del size[c]
            centre[c] = centre[v] = v
            size[v] = 3
        centre[u] = v
    centres = np.array(centre, dtype=np.int64)
    del other, indptr, centre, size, orphans, nodes  # not held through the pass below
    return _to_best_star(n, a, b, centres)


def _to_best_star(n: int, a: np.ndarray, b: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """One pass after star clustering: a member (not a centre) moves to the star it has the most
    links into, among the stars whose centre it is linked to (ties: it stays, else the lowest
    centre), when every star keeps its centre and one member. Stars are taken greedily, so a
    position may end up in the star it is less linked to while another centre it is linked to
    holds most of its near-duplicates; the move keeps every member linked to its centre.
    ``centre`` as ``_stars`` gives it; returns a new array."""
    small = _position_type(n)
    # (x, y, s) over both directions of each link, (a, b) then (b, a), where x is a member, y
    # a neighbour and s the neighbour's centre; filtered a direction at a time
    ca, cb = centre[a].astype(small), centre[b].astype(small)
    both = (ca >= 0) & (cb >= 0)
    ab, ba = both & (ca != a), both & (cb != b)
    del both
    x = np.concatenate([a[ab], b[ba]]).astype(small, copy=False)
    y = np.concatenate([b[ab], a[ba]]).astype(small, copy=False)
    s = np.concatenate([cb[ab], ca[ba]])
    del ca, cb, ab, ba
    if not len(x):
        return centre
    n64 = np.int64(n)
    at_centre = y == s
    del y
    linked_centre = _unique(x[at_centre].astype(np.int64) * n64 + s[at_centre])
    del at_centre
    keys = x.astype(np.int64)
    del x
    keys *= n64
    keys += s
    del s
    keys.sort()  # in place: _unique would sort a copy
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    counts = np.diff(np.r_[starts, len(keys)])
    keys = keys[starts]
    del starts
    cand = _isin(keys, linked_centre)
    keys, counts = keys[cand], counts[cand]
    cx, cs = keys // n64, keys % n64
    order = np.lexsort((cs, cs != centre[cx], -counts, cx))
    cx, cs = cx[order], cs[order]
    first = np.r_[True, cx[1:] != cx[:-1]]
    mx, ms = cx[first], cs[first]
    move = ms != centre[mx]
    mx, ms = mx[move], ms[move]
    size = np.bincount(centre[centre >= 0], minlength=n)
    stays = size - np.bincount(centre[mx], minlength=n) >= 2  # arrivals not counted: they may not come
    mx, ms = mx[stays[centre[mx]]], ms[stays[centre[mx]]]
    out = centre.copy()
    out[mx] = ms
    return out


def _clusters(prep: _Prepared, a: np.ndarray, b: np.ndarray, bits: np.ndarray, star: bool = False,
              workers: int = -1) -> list[Cluster]:
    if len(a) == 0:
        return []
    identical = (bits & (_BIT[REASON_IDENTICAL] | _BIT[REASON_IDENTICAL_ACROSS])) != 0
    bits = np.where(identical, bits & ~_QUESTION_BITS, bits)  # "identical" says it all
    score = _scores(prep, a, b, workers)
    if star:
        root = _stars(prep.n, a, b, score).astype(_position_type(prep.n))  # -1 or a position
        ra = root[a]
        inside = (ra >= 0) & (ra == root[b])
        del ra
        a, b, bits, score = a[inside], b[inside], bits[inside], score[inside]
        del inside
        if len(a) == 0:
            return []
    else:
        root = _components(prep.n, a, b).astype(_position_type(prep.n))
    ids = prep.ids
    if len(ids) and int(ids.min()) >= 0:
        ids = ids.astype(_position_type(int(ids.max()) + 1))  # the same values in fewer bytes a link
    lo_id, hi_id = np.minimum(ids[a], ids[b]), np.maximum(ids[a], ids[b])
    # links grouped by component, then ordered by (a, b) id; the table is filled in that order
    # (not filled, then copied in order: 32 bytes a link once, not twice)
    er = root[a]
    order = np.lexsort((hi_id, lo_id, er))
    table = np.empty(len(a), dtype=_LINK_DTYPE)
    table["a"] = lo_id[order]
    table["b"] = hi_id[order]
    del lo_id, hi_id
    table["bits"] = bits[order]
    table["score"] = np.round(score[order].astype(np.float64), 1)
    a, b, er = a[order], b[order], er[order]
    del order, bits, score
    cuts = np.flatnonzero(np.r_[True, er[1:] != er[:-1], True])
    cluster_bits = np.bitwise_or.reduceat(table["bits"], cuts[:-1]).tolist() if len(a) else []
    # members of each component, ordered by id
    nodes = _unique(np.r_[a, b])
    nodes = nodes[np.lexsort((ids[nodes], root[nodes]))]
    node_root = root[nodes]
    ncuts = np.flatnonzero(np.r_[True, node_root[1:] != node_root[:-1], True]).tolist()
    node_ids = ids[nodes].tolist()
    nodes_list = nodes.tolist()
    doc_keys, sortq, has_q = prep.doc_keys, prep.sortq, prep.has_q
    out = []
    for k, (s, e) in enumerate(zip(cuts[:-1].tolist(), cuts[1:].tolist())):
        ms, me = ncuts[k], ncuts[k + 1]
        members = nodes_list[ms:me]
        out.append(Cluster(
            ids=tuple(node_ids[ms:me]),
            reasons=_reason_names(cluster_bits[k]),
            doc_keys=tuple(sorted({doc_keys[m] for m in members})),
            link_table=table[s:e],
            scored=tuple(sortq[m] if has_q[m] else "" for m in members) if me - ms <= PAIRWISE_MAX else None,
        ))
    order = np.lexsort((np.fromiter((c.ids[0] for c in out), np.int64, len(out)),
                        -np.fromiter((c.size for c in out), np.int64, len(out))))
    return [out[k] for k in order.tolist()]


def _scores(prep: _Prepared, a: np.ndarray, b: np.ndarray, workers: int = -1) -> np.ndarray:
    """Question similarity of each linked pair (0 when either question is empty)."""
    s = _cpdist(prep.sortq_array, a, b, dtype=np.float32, workers=workers)
    return np.where(prep.has_q[a] & prep.has_q[b], s, 0.0)


#: ``_cpdist`` scores this many pairs per rapidfuzz call: rapidfuzz converts all its inputs
#: first (2.4 million pairs at once took 220 MB more; in calls of this many, a few MB).
CPDIST_CHUNK = 100_000


def _cpdist(strings: np.ndarray, a: np.ndarray, b: np.ndarray, *, dtype, workers: int,
            score_cutoff: float | None = None) -> np.ndarray:
    """``process.cpdist(strings[a], strings[b], scorer=fuzz.ratio)`` in calls of at most
    :data:`CPDIST_CHUNK` pairs; ``workers`` applies from 10,001 pairs."""
    out = np.empty(len(a), dtype=dtype)
    threads = workers if len(a) > 10_000 else 1
    for k in range(0, len(a), CPDIST_CHUNK):
        out[k:k + CPDIST_CHUNK] = process.cpdist(strings[a[k:k + CPDIST_CHUNK]], strings[b[k:k + CPDIST_CHUNK]],
                                                 scorer=fuzz.ratio, dtype=dtype, score_cutoff=score_cutoff,
                                                 workers=threads)
    return out
