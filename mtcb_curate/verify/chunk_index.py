"""chunk_index repair: the MTCB generation window that holds a pair's located passage.

MTCB's ficha pipeline cut each document into windows of 8,192 ``cl100k_base`` tokens with 512
tokens of overlap (stride 7,680; ``dataset.tokens``): ``chunk_index`` i covers tokens
``[7680 i, 7680 i + 8192)``, and a generated pair was kept only when its passage was a substring
of the window it came from. Sources built otherwise (SQuAD-style data numbering paragraphs) have
a ``chunk_index`` that is not that window, and the ``links`` check fails them all.

- :func:`window_of_span`: the window holding a character span (the first one when the span lies
  in the overlap of two), or None when no single window holds it;
- :func:`propose_chunk_indexes`: one :class:`ChunkIndexFix` per located pair whose window is not
  its ``chunk_index`` (or that has none), refusals included;
- the ``chunk_index_meaning`` setting (:data:`MEANING_KEY`): ``mtcb`` (the default: check it
  against the windows) or ``ignore`` (the dataset's chunk_index means something else), and
  :func:`chunk_index_problem`, the message the ``links`` check gives under that setting.

Windows are compared in character offsets (``tokens.Window.start``/``end``), exactly as the
verification's ``in_chunk`` does, so a repaired pair's ``in_chunk`` is True.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mtcb_curate.dataset import tokens as tok
from mtcb_curate.dataset.model import Dataset
from mtcb_curate.verify import CorpusIndex, PairResult, Verdict, verify_dataset

#: Workspace meta key naming what a dataset's ``chunk_index`` means (see :func:`chunk_index_meaning`).
MEANING_KEY = "chunk_index_meaning"
#: chunk_index is MTCB's generation window: ``links`` checks that its window holds the passage.
MEANING_MTCB = "mtcb"
#: chunk_index means something else (a paragraph number ...): ``links`` does not check it.
MEANING_IGNORE = "ignore"
MEANINGS: tuple[str, ...] = (MEANING_MTCB, MEANING_IGNORE)
DEFAULT_MEANING = MEANING_MTCB


# -- the window of a span ------------------------------------------------------------------


def _window_list(source: str | Sequence[tok.Window] | CorpusIndex, key: str | None) -> Sequence[tok.Window]:
    if isinstance(source, str):
        return tok.windows(source)
    if isinstance(source, CorpusIndex):
        if key is None:
            raise TypeError("window_of_span on a CorpusIndex needs key=")
        return source.windows(key)
    return source


def window_of_span(source: str | Sequence[tok.Window] | CorpusIndex, start: int, end: int, *,
                   key: str | None = None) -> int | None:
    """The MTCB window (chunk_index) that holds the whole character span ``[start, end)``.

    Args:
        source: the document text (tokenized here: about 0.1 s per MB), its windows
            (``tokens.windows(text)`` or ``CorpusIndex.windows(key)``, reused), or a
            :class:`CorpusIndex` together with ``key`` (its cached windows).
        start, end: character offsets into the document text, ``0 <= start <= end``.
        key: the document key, only with a :class:`CorpusIndex`.

    Returns:
        The index of the FIRST window ``w`` with ``w.start <= start and end <= w.end``, or None
        when no single window holds the span (a span longer than the 512-token overlap that
        straddles a window boundary, or one past the end of the text).

    Rule for the overlap: a span inside the 512 tokens two windows share is held by both, and
    MTCB's generator (one call per window, in window order, a pair kept when its passage is a
    substring of the window it was generated from) could have produced it from either. The
    FIRST window holding the span is chosen: the earliest window the pair could have been
    generated from. That makes the repair a function of the span alone. A pair whose current
    chunk_index is the other window of the overlap is already right, and
    :func:`propose_chunk_indexes` leaves it as it is.

    Raises:
        ValueError: ``start < 0`` or ``start > end``.
        KeyError: ``key`` names no document of the index.
    """
    if start < 0 or start > end:
        raise ValueError(f"not a span: [{start}, {end})")
    ws = _window_list(source, key)
    # Window starts and ends are both non-decreasing: the windows holding the span are those
    # from the first whose end reaches ``end`` while their start is still <= ``start``.
    i = bisect_left(ws, end, key=lambda w: w.end)
    if i < len(ws) and ws[i].start <= start:
        return ws[i].index
    return None


# -- proposals -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkIndexFix:
    """A proposed chunk_index repair for one pair.

    Attributes:
        pair_id: the pair id.
        old: its current chunk_index (None when unset).
        new: the window that holds its located passage, or None when the repair is refused (no
            single window holds the passage: shorten it first).
        reason: one line for the curator, e.g. ``chunk_index 7 is out of range (1 window);
            the passage is in window 0``.
        start, end: the located span the window was computed for (character offsets).
    """

    pair_id: int
    old: int | None
    new: int | None
    reason: str
    start: int = 0
    end: int = 0

    @property
    def refused(self) -> bool:
        """True when no window can be proposed (``new`` is None)."""
        return self.new is None


def _spans(result: PairResult) -> list[tuple[int, int]]:
    """The located spans of a result, in document order (every exact occurrence kept)."""
    if result.start is None or result.end is None:
        return []
    if result.verdict == Verdict.EXACT and result.offsets:
        n = len(result.passage)
        return [(s, s + n) for s in result.offsets]
    return [(result.start, result.end)]


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def propose_fix(windows: Sequence[tok.Window], result: PairResult) -> ChunkIndexFix | None:
    """The chunk_index repair for one verified pair, or None when there is nothing to do.

    Args:
        windows: the windows of the pair's document (``CorpusIndex.windows(result.doc_key)``).
        result: the pair's verification (``verify_pair``/``verify_dataset``; its
            ``chunk_index`` is the pair's current one).

    Returns:
        None when the passage is not located (``missing``, ``empty``, no document) or when the
        current chunk_index's window already holds one of its located spans; else a fix: the
        first window holding the first span that a single window holds, or a refusal
        (``new=None``) when no span is held by a single window.
    """
    spans = _spans(result)
    if not spans:
        return None
    old = result.chunk_index
    if old is not None and 0 <= old < len(windows):
        w = windows[old]
        if any(w.start <= s and e <= w.end for s, e in spans):
            return None
    if old is None:
        why = "no chunk_index"
    elif not 0 <= old < len(windows):
        why = f"chunk_index {old} is out of range ({_plural(len(windows), 'window')})"
    else:
        why = f"chunk_index {old}'s window does not hold the passage"
    for s, e in spans:
        new = window_of_span(windows, s, e)
        if new is not None:
            w = windows[new]
            where = f"tokens {w.start_token:,}-{w.end_token:,}"
            return ChunkIndexFix(result.id, old, new, f"{why}; the passage is in window {new} ({where})", s, e)
    s, e = spans[0]
    return ChunkIndexFix(
        result.id, old, None,
        f"{why}; no single window holds the passage (characters {s:,}-{e:,} cross a window "
        f"boundary beyond the {tok.OVERLAP_TOKENS}-token overlap): shorten the passage first", s, e)


def propose_chunk_indexes(source: Any, results: Iterable[PairResult] | None = None) -> list[ChunkIndexFix]:
    """Every chunk_index repair of a dataset or a review session, in pair order.

    Args:
        source: a :class:`Dataset`, a review session (anything with ``corpus_index``,
            ``dataset``, ``pairs`` and ``edited_texts()``, whose cached token windows are
            reused), or a :class:`CorpusIndex` (then ``results`` is required).
        results: the pairs' verifications (e.g. ``VerifyReport.results`` or the app's complete
            verdicts); by default every pair is verified here (exact, normalized and fuzzy,
            edited passages of a session applied).

    Returns:
        One :class:`ChunkIndexFix` per located pair (exact, normalized or fuzzy) whose located
        passage is in a window other than its chunk_index or that has no chunk_index, refusals
        (``new is None``) included; pairs already right and pairs not located are left out.
        What the fixes are applied to is up to the caller (none is applied here).

    Cost: tokenizing each document once (about 0.1 s per MB, shared with the verification's
    window cache), plus the verification when ``results`` is None.

    Raises:
        TypeError: ``source`` is a bare CorpusIndex and ``results`` is None.
    """
    if isinstance(source, CorpusIndex):
        if results is None:
            raise TypeError("propose_chunk_indexes on a CorpusIndex needs results")
        index = source
    elif isinstance(source, Dataset):
        index = CorpusIndex.from_dataset(source)
        if results is None:
            results = verify_dataset(source, count_tokens=False, index=index).results
    else:
        index = source.corpus_index
        if results is None:
            results = verify_dataset(source.dataset, source.edited_texts(), count_tokens=False,
                                     index=index, pairs=list(source.pairs)).results
    fixes = []
    for r in results:
        if r.start is None or not index.has(r.doc_key):
            continue
        fix = propose_fix(index.windows(r.doc_key), r)
        if fix is not None:
            fixes.append(fix)
    fixes.sort(key=lambda f: f.pair_id)
    return fixes


# -- what chunk_index means ----------------------------------------------------------------


def chunk_index_meaning(value: str | None) -> str:
    """The ``chunk_index_meaning`` setting from its stored value (workspace meta
    :data:`MEANING_KEY`): None or ``""`` (never set) is :data:`DEFAULT_MEANING` (``mtcb``);
    surrounding whitespace and case are ignored.

    Raises:
        ValueError: a value other than ``mtcb`` or ``ignore``.
    """
    if value is None or not value.strip():
        return DEFAULT_MEANING
    v = value.strip().lower()
    if v not in MEANINGS:
        raise ValueError(f"chunk_index_meaning must be one of {', '.join(MEANINGS)}, not {value!r}")
    return v


def checks_chunk_index(meaning: str | None) -> bool:
    """True when the ``links`` check compares chunk_index with MTCB's windows under this
    setting (the stored value, parsed by :func:`chunk_index_meaning`)."""
    return chunk_index_meaning(meaning) == MEANING_MTCB


def chunk_index_problem(meaning: str | None, chunk_index: int | None, n_windows: int,
                        in_chunk: bool | None, fix: ChunkIndexFix | None = None) -> str | None:
    """What the ``links`` check says about a pair's chunk_index, with how to fix it; None when
    there is nothing to say.

    Args:
        meaning: the stored ``chunk_index_meaning`` value (None: never set, ``mtcb``).
        chunk_index: the pair's chunk_index (None: unset, nothing is checked).
        n_windows: how many windows the pair's document has (``len(CorpusIndex.windows(key))``).
        in_chunk: the verification's ``in_chunk`` (None: not located or not computed).
        fix: the pair's proposal (:func:`propose_fix`), named in the message when given.

    Returns:
        None under ``ignore``, without a chunk_index, or when its window holds the passage;
        else ``chunk_index 7 is out of range (the document has 1 window)`` or ``chunk 3's
        window does not contain the passage``, followed by the repair (``set it to 0``, or why
        none exists) and the alternative of the ``ignore`` setting.

    Raises:
        ValueError: an unknown ``meaning``.
    """
    if not checks_chunk_index(meaning) or chunk_index is None:
        return None
    if not 0 <= chunk_index < n_windows:
        msg = f"chunk_index {chunk_index} is out of range (the document has {_plural(n_windows, 'window')})"
    elif in_chunk is False:
        msg = f"chunk {chunk_index}'s window does not contain the passage"
    else:
        return None
    if fix is not None and fix.new is not None:
        how = f"repair chunk_index: set it to {fix.new}, the window holding the passage"
    elif fix is not None:
        how = "no single window holds the passage: shorten it, then repair chunk_index"
    else:
        how = "repair chunk_index to the window holding the passage"
    return (f"{msg}; {how} (or set {MEANING_KEY} = {MEANING_IGNORE} if this dataset's "
            f"chunk_index means something else)")
