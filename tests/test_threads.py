"""Workers give way to the curator's keys (``mtcb_curate.threads``)."""

from __future__ import annotations

import threading
import time

import pytest

from mtcb_curate import threads


@pytest.fixture(autouse=True)
def _no_hold_left():
    yield
    while threads.held():
        threads.release()


def _in_worker(fn):
    """Run ``fn`` in a thread; returns (thread, result dict with "seconds")."""
    out = {}

    def run():
        t0 = time.monotonic()
        fn()
        out["seconds"] = time.monotonic() - t0

    t = threading.Thread(target=run)
    t.start()
    return t, out


def test_a_held_key_keeps_a_pacing_worker_waiting_until_it_is_released():
    threads.hold()
    t, out = _in_worker(threads.pace)
    time.sleep(0.05)
    assert t.is_alive()  # still waiting
    threads.release()
    t.join(1)
    assert not t.is_alive()
    assert 0.04 <= out["seconds"] < threads.HOLD_MAX_S


def test_a_hold_never_released_ends_at_its_deadline():
    threads.hold(seconds=0.05)
    t, out = _in_worker(threads.pace)
    t.join(1)
    assert 0.04 <= out["seconds"] < 0.5
    # a new key after the lapsed one holds again, and one release frees it
    threads.hold()
    threads.release()
    assert not threads.held()


def test_two_keys_hold_until_both_are_released():
    threads.hold()
    threads.hold()
    threads.release()
    assert threads.held()
    threads.release()
    assert not threads.held()
    threads.release()  # more releases than holds do nothing
    assert not threads.held()


def test_the_main_thread_never_waits_for_a_hold():
    threads.hold()
    t0 = time.monotonic()
    for _ in range(1000):
        threads.pace()
    assert time.monotonic() - t0 < 0.05


def test_pace_without_hold_does_not_wait_for_a_key():
    threads.hold()
    t, out = _in_worker(lambda: [threads.pace(hold=False) for _ in range(10)])
    t.join(1)
    assert out["seconds"] < 0.05


def test_paced_yields_every_item_in_order():
    items = []
    t, _ = _in_worker(lambda: items.extend(threads.paced(iter(range(1000)))))
    t.join(1)
    assert items == list(range(1000))


def test_a_busy_worker_sleeps_briefly_every_few_milliseconds(monkeypatch):
    sleeps = []
    real = time.sleep
    monkeypatch.setattr(threads.time, "sleep", lambda s: (sleeps.append(s), real(s)))

    def busy():
        end = time.monotonic() + 0.03
        while time.monotonic() < end:
            threads.pace()

    t, _ = _in_worker(busy)
    t.join(1)
    # 30 ms of work with a pause every YIELD_EVERY_S (2 ms): several short sleeps
    assert len(sleeps) >= 5
    assert set(sleeps) == {threads.YIELD_S}


def test_workers_pace_only_inside_working_and_it_counts_each_worker():
    assert not threads.workers_pacing()
    with threads.working():
        with threads.working():
            assert threads.workers_pacing()
        assert threads.workers_pacing()
    assert not threads.workers_pacing()
    with pytest.raises(RuntimeError):
        with threads.working():
            raise RuntimeError("a failed pass")
    assert not threads.workers_pacing()
