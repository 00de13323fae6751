"""A generic row diff: how a config's rows change against the Hub's current version.

Pure: rows are compared as multisets of mappings; no Arrow, no network.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class RowDiff:
    """How one config's rows change against the Hub's current version.

    Attributes:
        added, removed, edited, unchanged: row counts. A row is ``edited`` when it matches an
            old row by key but differs in some column (see ``diff_rows``).
        edited_columns: column name -> edited rows where that column changed.
        known: False when the current version could not be read (then everything counts as added).
    """

    added: int
    removed: int
    edited: int
    unchanged: int
    edited_columns: dict[str, int] = field(default_factory=dict)
    known: bool = True


@dataclass(frozen=True, slots=True)
class PublishDiff:
    """What a publish changes: per config, and whether the card text changes.

    ``first_publish`` is True when the repository (or both configs) did not exist yet.
    """

    corpus: RowDiff
    questions: RowDiff
    card_changed: bool
    first_publish: bool


def _canon(row: Mapping[str, Any]) -> str:
    text = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def diff_rows(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]],
              keys: Sequence[Callable[[Mapping[str, Any]], Hashable | None]]) -> RowDiff:
    """Compare rows as multisets: identical rows are ``unchanged``; then, key by key in order,
    a new row whose key matches a still-unmatched old row is ``edited``; the rest are
    ``added`` / ``removed``. A key function returning None never matches.

    For questions the keys are (document key, question) then (document key, supporting
    passage), so editing the question or the passage still counts as one edit; for the corpus
    the document key. ``old`` None means the current version is unknown (all added, not known).
    """
    if old is None:
        return RowDiff(len(new), 0, 0, 0, {}, known=False)
    pool: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(old):
        pool[_canon(r)].append(i)
    used: set[int] = set()
    rest: list[Mapping[str, Any]] = []
    unchanged = 0
    for r in new:
        bucket = pool.get(_canon(r))
        if bucket:
            used.add(bucket.pop())
            unchanged += 1
        else:
            rest.append(r)
    edited = 0
    cols: Counter[str] = Counter()
    for keyf in keys:
        index: dict[Hashable, list[int]] = defaultdict(list)
        for i, r in enumerate(old):
            if i not in used:
                k = keyf(r)
                if k is not None:
                    index[k].append(i)
        still: list[Mapping[str, Any]] = []
        for r in rest:
            k = keyf(r)
            bucket = index.get(k) if k is not None else None
            if bucket:
                i = bucket.pop(0)
                used.add(i)
                edited += 1
                o = old[i]
                for c in sorted(set(o) | set(r)):
                    if o.get(c) != r.get(c):
                        cols[c] += 1
            else:
                still.append(r)
        rest = still
    return RowDiff(len(rest), len(old) - len(used), edited, unchanged, dict(sorted(cols.items())))


def row_key(*columns: str) -> Callable[[Mapping[str, Any]], Hashable | None]:
    """A key function for ``diff_rows``: the tuple of ``columns`` as strings, or None when one
    of them is missing or null (such a row never matches by key)."""

    def f(row: Mapping[str, Any]) -> Hashable | None:
        values = tuple(row.get(c) for c in columns)
        if any(v is None for v in values):
            return None
        return tuple(str(v) for v in values)

    return f

