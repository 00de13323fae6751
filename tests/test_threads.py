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


def test_a_worker_holding_a_shared_lock_is_held_while_no_one_waits_for_it():
    lock = threads.SharedLock()

    def work():
        with lock:
            threads.pace(lock)

    threads.hold()
    t, out = _in_worker(work)
    time.sleep(0.05)
    assert t.is_alive()  # held, as any pacing worker
    threads.release()
    t.join(1)
    assert 0.04 <= out["seconds"] < threads.HOLD_MAX_S


def _wait_for_the_lock_of_a_held_worker(body) -> float:
    """Hold (a key being handled), start a worker that takes a SharedLock and runs
    ``body(lock)``, then take the lock here as the app's thread would: seconds waited."""
    lock = threads.SharedLock()
    inside = threading.Event()

    def work():
        with lock:
            inside.set()
            body(lock)

    threads.hold()
    t, _ = _in_worker(work)
    assert inside.wait(1)
    time.sleep(0.02)
    assert t.is_alive()  # held at its first pace
    t0 = time.monotonic()
    with lock:  # the key's handling needs what the worker builds
        waited = time.monotonic() - t0
    threads.release()
    t.join(1)
    assert not lock.wanted
    return waited


def test_the_app_waiting_for_a_shared_lock_ends_the_hold_of_the_worker_holding_it():
    waited = _wait_for_the_lock_of_a_held_worker(lambda lock: [threads.pace(lock) for _ in range(20)])
    assert waited < 0.1 < threads.HOLD_MAX_S


def test_a_shared_lock_is_reentrant_and_counts_no_waiter_for_its_owner():
    lock = threads.SharedLock()
    with lock:
        with lock:
            assert not lock.wanted
    assert not lock.wanted


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


@pytest.mark.parametrize("make", [
    lambda: [{i} for i in range(10_000)],
    lambda: {i: [i] for i in range(10_000)},
    lambda: {(i, str(i)) for i in range(10_000)},
])
def test_discard_empties_a_container_a_step_at_a_time(make, monkeypatch):
    items = make()
    paces = []
    monkeypatch.setattr(threads, "pace", lambda lock=None: paces.append(len(items)))
    threads.discard(items)
    assert len(items) == 0
    # a pace before each step of DISCARD_STEP entries, each seeing fewer left
    assert len(paces) == -(-10_000 // threads.DISCARD_STEP)
    assert paces == sorted(paces, reverse=True) and paces[0] == 10_000


def test_discard_refuses_what_it_cannot_empty():
    with pytest.raises(TypeError, match="tuple"):
        threads.discard((1, 2))


def test_discard_under_a_shared_lock_gives_way_to_a_thread_waiting_for_it():
    waited = _wait_for_the_lock_of_a_held_worker(
        lambda lock: threads.discard(list(range(50 * threads.DISCARD_STEP)), lock))
    assert waited < 0.1 < threads.HOLD_MAX_S


def test_paced_every_n_paces_before_the_first_item_and_then_every_n(monkeypatch):
    seen = []
    monkeypatch.setattr(threads, "pace", lambda lock=None: seen.append(len(out)))
    out = []
    for x in threads.paced(range(2500), every=1024):
        out.append(x)
    assert out == list(range(2500))
    assert seen == [0, 1024, 2048]  # paced before items 0, 1024 and 2048
