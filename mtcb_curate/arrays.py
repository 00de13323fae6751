"""numpy operations for worker threads that let go of the GIL while they run.

Sorting, ``searchsorted``, fancy indexing and most ufuncs let other threads run; some numpy
functions hold the GIL for their whole call instead (with numpy 2: ``np.isin``, and
``np.unique``'s hash-based path for integers), so a worker calling them on hundreds of
thousands of values keeps the review screen's thread waiting for tens of ms. These give the
same results through sorting, which lets go of it (and was faster on these int64 keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mtcb_curate.threads import paced


def unique(values: np.ndarray, counts: bool = False):
    """``np.unique(values)`` (sorted distinct values) by sorting; with ``counts``, also how many
    times each occurs (as ``np.unique(..., return_counts=True)``)."""
    v = np.sort(values)
    first = np.r_[True, v[1:] != v[:-1]] if len(v) else np.zeros(0, dtype=bool)
    if not counts:
        return v[first]
    starts = np.flatnonzero(first)
    return v[starts], np.diff(np.r_[starts, len(v)])


def codes(values: Sequence[Any]) -> np.ndarray:
    """An int64 code per value, equal for equal values (0, 1, ... in order of first
    appearance): shape ``(len(values),)``. Paces (``threads.paced``) in a worker."""
    table: dict[Any, int] = {}
    return np.fromiter((table.setdefault(v, len(table)) for v in paced(values, every=1024)), dtype=np.int64,
                       count=len(values))


def isin(values: np.ndarray, test: np.ndarray) -> np.ndarray:
    """``np.isin(values, test)``: a boolean array shaped like ``values``."""
    s = np.sort(test)
    if not len(s):
        return np.zeros(np.shape(values), dtype=bool)
    at = np.searchsorted(s, values)
    return s[np.minimum(at, len(s) - 1)] == values
