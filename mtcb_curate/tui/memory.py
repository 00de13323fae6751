"""Keep Python's garbage collector out of keypress handling.

Measured on the ficha-scale synthetic set (``benchmarks/bench_review.py``): with the default
collector, a full (generation 2) collection hit one key press in 8 to 10 and took 50-90 ms,
because it walks every object the loaded dataset made. That alone broke the 50 ms p99 target.

Rendering makes cyclic garbage too: every Textual ``Strip`` holds seven small caches, and a
strip that caches itself (a crop or a length adjustment that changes nothing) can only be
freed by the cyclic collector. Paging through pairs leaves about 50,000 such objects a second
in generation 2; collected every 2 s they cost 100-170 ms per collection, collected every
0.25 s about 9 ms (measured over 500 key presses).

The policy, started once the first screen is drawn (automatic full collections are off from
the moment the app mounts, ``defer_full()``: one walking the whole loaded heap, not yet
frozen, used to come about a second after the first frame and stall a key):

1. ``gc.freeze()``: everything alive after loading (the dataset, the workspace, Textual's
   start-up objects) moves to the permanent generation that collections never walk;
2. automatic full collections are switched off (generation 2 threshold 10**9); automatic
   young collections (generations 0 and 1) still run, and the timer runs its own (item 4);
3. a full collection runs when the curator pauses (no key for ``IDLE_SECONDS``), checked every
   ``CHECK_SECONDS``, if any young collection happened since the last one; and, while keys keep
   coming without a pause, once ``FORCE_AFTER`` generation-1 collections went by without one,
   so that a key held for long cannot grow the heap without bound. A held key makes most of
   that garbage (Textual's ``Strip.divide`` keeps ``[self]`` in the strip's own cache, a
   cycle, for every strip a frame paints whole); ``FORCE_AFTER`` is set so that a burst of
   keys a couple of seconds long finishes and collects at the pause (figures for other
   settings: README, "Held keys", ``benchmarks/bench_pty.py``);
4. a young collection runs every ``CHECK_SECONDS`` from the same timer, between keys (not
   within ``KEY_QUIET_SECONDS`` of one, unless ``YOUNG_SKIPS`` ticks in a row were), taking
   generation 1 along every ``YOUNG_OLDER_EVERY``. CPython starts a young collection when its
   allocations outnumber its deallocations by 700, deallocations of objects of any age
   counting. While keys replace old objects (the last pair's rows) with new ones, generation
   0 then grows unchecked for seconds: at 100,000 pairs to 14,000 objects, a young collection
   of 10-20 ms every second or two, on whichever thread allocated next (often the app's, in
   the middle of a key). From the timer each walks a quarter of a second's survivors.

Most of what collections find is Textual's: the compositor cuts every painted row with
``Strip.divide``, which, for a row it keeps whole, stores ``[self]`` in the strip's own cache,
a cycle that only the collector frees; every row that changed since the last key ends so,
some fifteen objects each (the strip, its seven caches and their dicts, its segments).
Collected only by full collections, they made each one walk 100,000-280,000 objects after
30-60 s of paging (200-800 ms at ficha scale). ``tui.workarounds.strips.keep_strips_acyclic()``
makes a whole division return a new ``[self]`` without storing it (what the cache saved is one
list); rows then die when their widget drops them and full collections walk little. Textual's
``StylesCache.get_inner_outer`` kept every closed widget's painted lines alive besides (an
``lru_cache`` keyed on the instance): each dialog shown added some 3,000 objects that every
later full collection walked; ``tui.workarounds.styles.release_styles_caches()`` frees them.

``trim_heap()`` hands the C heap's free pages back to the system (glibc ``malloc_trim``): the
loading's temporaries are freed but glibc keeps their pages until asked; the app calls it once
the first screen is drawn.

``refreeze()`` moves what is alive into the permanent generation again; the review screen
calls it once it has taken the session's analysis (verdicts, clusters) from the worker process.

``restore()`` puts the collector back as it was (the app calls it on exit).
"""

from __future__ import annotations

import gc
import time

# The C heap's settings, shared with the analysis worker (a utility: the worker is not a front end).
from mtcb_curate.collector import limit_heap_arenas, trim_heap  # noqa: F401 - cli.review calls limit_heap_arenas here

IDLE_SECONDS = 1.0
CHECK_SECONDS = 0.25
FORCE_AFTER = 30
#: A tick less than this after a key (seconds) leaves its young collection to the next tick...
KEY_QUIET_SECONDS = 0.05
#: ... unless it left it this many times in a row (keys held without a pause).
YOUNG_SKIPS = 3
#: A tick's young collection takes generation 1 too once this many generation-0 collections
#: went by since its last one (``gc.get_count()[1]``; the interpreter's own default is 10).
YOUNG_OLDER_EVERY = 10
_NEVER = 1_000_000_000


class CollectorPolicy:
    """The policy above; ``touch()`` on every key, ``tick()`` from a timer."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None
        self._started = False
        self._last_input = time.monotonic()
        self.full_collections = 0
        self.young_collections = 0
        self._young_skipped = 0

    @property
    def active(self) -> bool:
        """Whether ``start`` has run and ``restore`` has not."""
        return self._started

    def defer_full(self) -> None:
        """Switch off automatic full collections now, before ``start`` (young ones go on): the
        app calls it as it mounts, so that none walks the whole loaded heap, not yet frozen,
        while the first screen is built and answers its first keys."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            first, second, _ = self._saved
            gc.set_threshold(first, second, _NEVER)

    def start(self) -> None:
        """Freeze what is alive now and switch off automatic full collections."""
        if self._started:
            return
        self.defer_full()
        self._started = True
        gc.freeze()
        trim_heap()  # what loading freed (the text column as str, pyarrow's buffers)

    def refreeze(self) -> None:
        """Freeze again after a burst of long-lived objects (the analysis's verdicts and
        clusters): without this the next full collection walks all of them."""
        if self._started:
            gc.freeze()

    def touch(self) -> None:
        """Record user input (a key press): the next idle collection waits for a pause."""
        self._last_input = time.monotonic()

    def tick(self) -> bool:
        """Run a full collection if the user has paused or too many have been skipped.

        Returns True when it collected.
        """
        if not self._started:
            return False
        pending = gc.get_count()[2]  # generation-1 collections since the last full one
        self._young()
        idle = time.monotonic() - self._last_input >= IDLE_SECONDS
        if not (pending and idle) and pending < FORCE_AFTER:
            return False
        gc.collect()
        self.full_collections += 1
        return True

    def _young(self) -> None:
        """A young collection from the timer, between keys (see the module docstring)."""
        if time.monotonic() - self._last_input < KEY_QUIET_SECONDS and self._young_skipped < YOUNG_SKIPS:
            self._young_skipped += 1  # a key may be on its way to the screen: next tick
            return
        self._young_skipped = 0
        gc.collect(1 if gc.get_count()[1] >= YOUNG_OLDER_EVERY else 0)
        self.young_collections += 1

    def restore(self) -> None:
        """Thresholds back to what they were; frozen objects back into generation 2."""
        if self._saved is None:
            return
        gc.set_threshold(*self._saved)
        if self._started:
            gc.unfreeze()
        self._saved = None
        self._started = False
