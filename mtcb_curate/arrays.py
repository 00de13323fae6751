"""numpy helpers of the verification and the near-duplicate search.

``unique`` and ``isin`` give the results of ``np.unique`` and ``np.isin`` through sorting,
which was faster on these int64 keys than numpy 2's hash-based paths (``np.unique`` took 4.7 s
for 3.2 million keys; sorting them well under a second).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


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
    appearance): shape ``(len(values),)``."""
    table: dict[Any, int] = {}
    return np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int64,
                       count=len(values))


def isin(values: np.ndarray, test: np.ndarray) -> np.ndarray:
    """``np.isin(values, test)``: a boolean array shaped like ``values``."""
    s = np.sort(test)
    if not len(s):
        return np.zeros(np.shape(values), dtype=bool)
    at = np.searchsorted(s, values)
    return s[np.minimum(at, len(s) - 1)] == values
