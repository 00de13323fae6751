"""Work in a thread beside the review screen's: workers give way to the curator's keys.

The review screen's start-up passes (passage scan, near-duplicate search, set checks, token
pass, filters) run in worker threads of the app's process and share the GIL with the thread
that handles keys. CPython hands the GIL to a waiting thread only after a switch interval, so a
busy worker roughly halves the app's thread's speed, and one whose calls let go of the GIL
often can keep it waiting longer (the "convoy effect": each release wakes the waiter and
restarts its wait). So:

* while a worker runs its pass inside :func:`working`, the app calls :func:`hold` as a key
  arrives and :func:`release` once its frame is drawn (with no such worker, a key costs
  nothing more);
* a worker calls :func:`pace` between small steps of its loops (or iterates with
  :func:`paced`): while a key is held it sleeps, and otherwise it sleeps ``YIELD_S`` once every
  ``YIELD_EVERY_S`` of its own run, which lets a thread waiting for the GIL take it.

Both sides are cheap when nothing is held: :func:`pace` reads one global and the clock.
A worker that never calls them runs as before.

State both a worker and the app's thread build (caches a pass warms up and a key may need
first) is guarded by a :class:`SharedLock`: a worker holding it is held at keys like any other,
except while another thread waits for that lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

#: Longest single sleep of a held worker (seconds): it looks again this often.
PAUSE_S = 0.001
#: Longest a key holds the workers (seconds): after it they go on even if the key's frame
#: was never drawn (the app closing, a key that changes nothing and draws no frame).
HOLD_MAX_S = 0.25
#: A worker running without a pause for this long (seconds) sleeps ``YIELD_S`` in :func:`pace`.
YIELD_EVERY_S = 0.002
#: How long that sleep is (seconds): long enough for a thread woken by the GIL's release to
#: take it (the kernel wakes a sleeping thread in tens of microseconds).
YIELD_S = 0.0002

_MAIN = threading.main_thread().ident
_get_ident = threading.get_ident
_working = 0  # pacing workers inside working()
_working_lock = threading.Lock()
_holds = 0  # keys held and not yet released (changed under _holds_lock; workers only read it)
_holds_lock = threading.Lock()
_until = 0.0  # time.monotonic() after which a hold no longer holds
_ran_since = 0.0  # time.monotonic() of the last pause (any worker: they take turns anyway)


@contextmanager
def working() -> Iterator[None]:
    """Around a pacing worker's pass (any thread): while one runs, :func:`workers_pacing` is
    true and the app holds the workers at each key."""
    global _working
    with _working_lock:
        _working += 1
    try:
        yield
    finally:
        with _working_lock:
            _working -= 1


def workers_pacing() -> bool:
    """Whether a worker is inside :func:`working` now."""
    return _working > 0


def hold(seconds: float = HOLD_MAX_S) -> None:
    """Hold the workers that :func:`pace`: from now until as many :func:`release` calls as
    ``hold`` calls, or ``seconds`` from the latest ``hold`` at most. Call it as a key arrives
    (the terminal's input thread or the app's)."""
    global _holds, _until
    with _holds_lock:
        now = time.monotonic()
        if now >= _until:
            _holds = 0  # a hold that ran out and was never released
        _until = now + seconds
        _holds += 1


def release() -> None:
    """Undo one :func:`hold` (more calls than holds do nothing). Call it on the app's thread
    once the key's frame is drawn."""
    global _holds
    with _holds_lock:
        _holds = max(0, _holds - 1)


def held() -> bool:
    """Whether a key holds the workers now."""
    return _holds > 0 and time.monotonic() < _until


class SharedLock:
    """A re-entrant lock (``with lock:``) that pacing workers and the app's thread both take.

    A worker that holds it passes it to :func:`pace` (``lock=``): while another thread waits
    for the lock, that worker is not held at keys (it takes the short sleep only), since the
    waiting thread may be the app's, handling the very key that holds the worker. Otherwise
    it is held as usual.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._count = threading.Lock()
        self._waiting = 0

    def __enter__(self) -> SharedLock:
        if not self._lock.acquire(blocking=False):
            with self._count:
                self._waiting += 1
            try:
                self._lock.acquire()
            finally:
                with self._count:
                    self._waiting -= 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    @property
    def wanted(self) -> bool:
        """Whether a thread is waiting to take the lock now."""
        return self._waiting > 0


def pace(lock: SharedLock | None = None) -> None:
    """Call in a worker between steps of a few milliseconds at most: sleeps while a key is
    held (at most until its deadline), and otherwise ``YIELD_S`` seconds if this thread or
    another pacing worker has run ``YIELD_EVERY_S`` since the last pause. Does nothing on the
    main thread (the app's: it must never wait for its own keys).

    ``lock``: a :class:`SharedLock` the worker holds; while another thread waits for it, no
    wait for a key (only the short sleep), and a wait already begun ends.
    """
    global _ran_since
    if _holds and not (lock is not None and lock.wanted):
        if _get_ident() != _MAIN:
            _wait(lock)
        return
    now = time.monotonic()
    if now - _ran_since >= YIELD_EVERY_S and _get_ident() != _MAIN:
        time.sleep(YIELD_S)
        _ran_since = time.monotonic()


def paced(items: Iterable[T], lock: SharedLock | None = None, every: int = 1) -> Iterator[T]:
    """``items``, with :func:`pace` (``lock``) before the first and then every ``every`` of
    them: for a worker's loops over many items (``every=1`` when each takes a microsecond or
    more; more for cheaper ones, where a pace per item would cost more than the item)."""
    for n, item in enumerate(items):
        if not n % every:
            pace(lock)
        yield item


#: Entries :func:`discard` frees between two paces.
DISCARD_STEP = 2048


def discard(items: list | dict | set, lock: SharedLock | None = None) -> None:
    """Empty ``items`` (a large list, dict or set that a worker made and needs no more, and
    that nothing else refers to) :data:`DISCARD_STEP` entries at a time, with :func:`pace`
    (``lock``) between: freeing a container whose entries die with it holds the GIL for all of
    them at once (100,000 small sets: about 50 ms), keeping the app's keys waiting. The caller
    then drops the empty container.

    Raises:
        TypeError: ``items`` is none of the three.
    """
    if isinstance(items, list):
        while items:
            pace(lock)
            del items[-DISCARD_STEP:]
    elif isinstance(items, (dict, set)):
        pop = items.popitem if isinstance(items, dict) else items.pop
        while items:
            pace(lock)
            for _ in range(min(DISCARD_STEP, len(items))):
                pop()
    else:
        raise TypeError(f"discard: a list, dict or set, not {type(items).__name__}")


def _wait(lock: SharedLock | None) -> None:
    global _ran_since
    while _holds and not (lock is not None and lock.wanted):
        left = _until - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(left, PAUSE_S))
    _ran_since = time.monotonic()

