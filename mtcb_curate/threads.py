"""Work in a thread beside the review screen's: :func:`let_others_run`."""

from __future__ import annotations

import time

#: Seconds a worker sleeps in :func:`let_others_run`.
PAUSE_S = 0.001


def let_others_run() -> None:
    """Sleep ``PAUSE_S`` seconds, which lets a thread waiting for the GIL take it.

    A loop whose calls let go of the GIL often takes it straight back each time. Such calls
    include file reads, ``hashlib`` over 2,047 bytes, and numpy on large arrays. CPython asks
    the holder to hand the GIL over only after a waiter has waited a whole switch interval
    without being woken, and each release wakes it. So the app's thread can wait tens of ms
    behind such a loop (the "convoy effect"). Call this between batches of such work, a few ms
    of it each; it costs ``PAUSE_S`` of wall time, no CPU.
    """
    time.sleep(PAUSE_S)
