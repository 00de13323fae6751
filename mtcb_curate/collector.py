"""Pausing Python's cyclic garbage collector around bulk work, and handing the C heap's free
pages back to the system (glibc; the review app and the analysis worker both do).

Loading 100,000 pairs or computing their statistics makes hundreds of thousands of objects
that all stay alive; the collector runs full collections meanwhile, each walking every object
already made, and frees nothing (three full collections took 0.4 s of a 1.3 s load).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic garbage collection inside the block; the collector's former state is
    restored on the way out (also on an error). Reference counting still frees what has no
    cycle. The collector is process-wide: another thread's block ending first turns it back on
    early, which costs time, never correctness."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_libc: Any = None  # the C library (ctypes.CDLL), False where there is no glibc, None: not looked up


#: glibc's ``M_ARENA_MAX`` (``mallopt``'s parameter number, from ``malloc.h``).
_M_ARENA_MAX = -8
#: The C heap's arenas the app allows (glibc's default: 8 per core).
HEAP_ARENAS = 2


def _glibc():
    global _libc
    if _libc is None:
        import ctypes

        try:
            # by its soname: ``ctypes.util.find_library`` would run ``ldconfig`` in a child
            # process, a fork of the app's (or the analysis worker's)
            lib = ctypes.CDLL("libc.so.6")
            _libc = lib if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt") else False
        except OSError:
            _libc = False
    return _libc or None


def limit_heap_arenas(arenas: int = HEAP_ARENAS) -> bool:
    """Let the C heap make at most ``arenas`` arenas (glibc ``mallopt(M_ARENA_MAX)``, the same
    setting as the ``MALLOC_ARENA_MAX`` variable, which a user's value keeps). Call it before
    threads start: by default each thread that allocates under contention gets its own arena,
    whose freed pages stay scattered (with the app's workers, 15-20 MB at ficha scale that
    ``malloc_trim`` cannot give back). Python's own small objects come from its allocator,
    under the GIL, so fewer arenas cost the workers little. False where there is no glibc or
    the variable is set: nothing is done."""
    import os

    lib = _glibc()
    if lib is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(lib.mallopt(_M_ARENA_MAX, arenas))


#: glibc's ``M_MMAP_THRESHOLD`` (``mallopt``'s parameter number, from ``malloc.h``).
_M_MMAP_THRESHOLD = -3
#: Blocks of at least this many bytes get their own memory mapping in the analysis worker (a
#: lower bound maps, and faults in afresh, the many smaller temporaries of its loops too).
MAP_BLOCKS_FROM = 4 << 20


def map_large_blocks(size: int = MAP_BLOCKS_FROM) -> bool:
    """Give every C heap block of at least ``size`` bytes its own memory mapping, returned to
    the system as soon as it is freed (glibc ``mallopt(M_MMAP_THRESHOLD)``, the setting of the
    ``MALLOC_MMAP_THRESHOLD_`` variable, which a user's value keeps). By default glibc raises
    that threshold each time it frees a mapped block (up to 32 MB), after which numpy's
    arrays of up to that size come from the heap, where a freed one stays resident until a
    later array fits its place: a process that makes and frees many large arrays in turn (the
    analysis worker) then holds more than it uses. False where there is no glibc or the
    variable is set: nothing is done."""
    import os

    lib = _glibc()
    if lib is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    return bool(lib.mallopt(_M_MMAP_THRESHOLD, size))


def trim_heap() -> bool:
    """Return the C heap's free memory to the system: ``malloc_trim(0)`` of glibc, which
    releases the free pages of every arena (a few ms). False where there is no glibc (macOS,
    musl): nothing is done."""
    lib = _glibc()
    if lib is None:
        return False
    lib.malloc_trim(0)
    return True
