"""``mtcb_curate.arrays`` gives numpy's results (through operations that let go of the GIL)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mtcb_curate import arrays


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 50, 300)
    test = rng.integers(0, 60, 40)
    assert np.array_equal(arrays.unique(values), np.unique(values))
    got, n = arrays.unique(values, counts=True)
    want, wn = np.unique(values, return_counts=True)
    assert np.array_equal(got, want) and np.array_equal(n, wn)
    assert np.array_equal(arrays.isin(values, test), np.isin(values, test))


def test_empty_inputs():
    empty = np.zeros(0, dtype=np.int64)
    assert arrays.unique(empty).size == 0
    assert arrays.isin(np.arange(3), empty).tolist() == [False, False, False]


def _longest_wait_of_another_thread(fn) -> float:
    """The longest a pure-Python loop in another thread went without running while ``fn`` ran
    (seconds)."""
    longest, stop = [0.0], [False]

    def loop():
        last = time.perf_counter()
        while not stop[0]:
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    t = threading.Thread(target=loop)
    t.start()
    time.sleep(0.01)
    fn()
    stop[0] = True
    t.join()
    return longest[0]


def test_unique_lets_another_thread_run_where_numpy_holds_the_gil():
    values = np.random.default_rng(0).integers(0, 10**9, 300_000)
    ours = min(_longest_wait_of_another_thread(lambda: arrays.unique(values)) for _ in range(3))
    theirs = min(_longest_wait_of_another_thread(lambda: np.unique(values)) for _ in range(3))
    assert ours < theirs


def test_codes_give_equal_values_equal_codes_in_order_of_first_appearance():
    values = ["b", "a", "b", ("x", 1), "a", ("x", 1)]
    got = arrays.codes(values)
    assert got.dtype == np.int64 and got.tolist() == [0, 1, 0, 2, 1, 2]
    assert arrays.codes([]).tolist() == []
