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
_holds = 0  # keys held and not yet released (changed on the app's thread only; workers read it)
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
    ``hold`` calls, or ``seconds`` from the latest ``hold`` at most. Call it on the app's thread
    as a key arrives."""
    global _holds, _until
    now = time.monotonic()
    if now >= _until:
        _holds = 0  # a hold that ran out and was never released
    _until = now + seconds
    _holds += 1


def release() -> None:
    """Undo one :func:`hold` (more calls than holds do nothing). Call it on the app's thread
    once the key's frame is drawn."""
    global _holds
    _holds = max(0, _holds - 1)


def held() -> bool:
    """Whether a key holds the workers now."""
    return _holds > 0 and time.monotonic() < _until


def pace(hold: bool = True) -> None:
    """Call in a worker between steps of a few milliseconds at most: sleeps while a key is
    held (``hold``; at most until its deadline), and otherwise ``YIELD_S`` seconds if this
    thread or another pacing worker has run ``YIELD_EVERY_S`` since the last pause. Does
    nothing on the main thread (the app's: it must never wait for its own keys).

    ``hold=False``: only the short sleep, never the wait for a key. For steps run while holding
    a lock the app's thread may take (waiting for a key there would keep that key waiting).
    """
    global _ran_since
    if _holds and hold:
        if _get_ident() != _MAIN:
            _wait()
        return
    now = time.monotonic()
    if now - _ran_since >= YIELD_EVERY_S and _get_ident() != _MAIN:
        time.sleep(YIELD_S)
        _ran_since = time.monotonic()


def paced(items: Iterable[T], hold: bool = True) -> Iterator[T]:
    """``items``, with :func:`pace` (``hold``) before each: for a worker's loops over many items
    (each a microsecond or more; pace a cheaper loop in slices)."""
    for item in items:
        pace(hold)
        yield item


def _wait() -> None:
    global _ran_since
    while _holds:
        left = _until - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(left, PAUSE_S))
    _ran_since = time.monotonic()

