"""Where the start-up passes keep the app's thread waiting for the GIL (a diagnostic).

    python benchmarks/bench_gil.py                 # 100,000 pairs (generated once, as bench_pty)
    python benchmarks/bench_gil.py --scale ficha --threshold 5

Runs the review screen's start-up passes one after another in a worker thread, each inside
``threads.working()`` as the screen runs them (passage scan, filters' warm-up, near-duplicate
search and its groups, set checks, token pass), while the main thread does what the app's
thread does between keys: it sleeps 1 ms, then runs a little Python. Each time its wake-up
comes later than ``--threshold`` ms, it records how late and where the worker stands at that
moment (the line that has just let go of the GIL: a C call, or the freeing of a large
container, that held it). The anchor is the same loop with no worker, measured first.

It prints, per pass, its wall and CPU seconds, the wake-ups later than the threshold and the
longest; then the longest waits with the worker's place. Then the stretches in which a pass ran
longer than ``--stretch`` ms between two ``threads.pace`` calls (a key held by the app waits
for the rest of such a stretch), and the lines where the main thread's samples found the
worker in them, with the main thread's mean delay there: near 0 where the worker had let go
of the GIL (most numpy calls), about the switch interval where it ran Python without a pace.
The interpreter's switch interval is the app's (``tui.app.SWITCH_INTERVAL_S``). No key is
held here: a pass's pure-Python steps keep the main thread waiting up to a pace or a switch
interval, and what stands out above that is a step the hold cannot stop. Absolute times depend on the machine; compare the
waits to the anchor and to each other, and run it more than once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def _wake_up() -> tuple[float, float]:
    """Sleep 1 ms, then run a little Python (as a key's handling between its waits); returns
    (when it began, ms late)."""
    t0 = time.perf_counter()
    time.sleep(0.001)
    late = (time.perf_counter() - t0) * 1000 - 1.0
    x = 0
    for i in range(2000):
        x += i
    return t0, late


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", choices=("100k", "ficha"), default="100k")
    ap.add_argument("--threshold", type=float, default=10.0, help="ms late to record a wake-up")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--stretch", type=float, default=5.0,
                    help="ms a worker runs between two paces to list that stretch")
    args = ap.parse_args(argv)

    from bench_pty import _dataset

    from mtcb_curate import neardup, threads
    from mtcb_curate.app import clusters
    from mtcb_curate.app import filters as app_filters
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.app.verdicts import Verdicts
    from mtcb_curate.checks import Limits
    from mtcb_curate.checks.pair import set_check_results
    from mtcb_curate.tui.app import SWITCH_INTERVAL_S
    from mtcb_curate.tui.memory import CollectorPolicy
    from mtcb_curate.tui.screens.review_passes import WARM_LINKS

    data = _dataset("ficha", 1331) if args.scale == "ficha" else _dataset("pairs100k", 100_000)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    ws = Path(tempfile.mkdtemp(prefix="bench-gil-")) / "ws"
    session = open_session(Options(name="ficha", source=[data], workspace=ws))
    CollectorPolicy().start()  # as the app, once its first screen is drawn
    verdicts = Verdicts(session)
    limits = Limits.resolve(session.dataset.profile, {})
    end = time.perf_counter() + 2.0
    anchor = []
    while time.perf_counter() < end:
        anchor.append(_wake_up()[1])
    print(f"{len(session):,} pairs; anchor (no worker): wake-ups late by {statistics.median(anchor):.2f} ms "
          f"median, {max(anchor):.1f} ms at most over 2 s", flush=True)

    spans: list[tuple[float, float, str, float]] = []
    paces: list[tuple[float, float]] = []  # (entered, returned) of each pace in the worker
    pace = threads.pace

    def timed_pace(lock=None):
        t0 = time.perf_counter()
        pace(lock)
        paces.append((t0, time.perf_counter()))

    # Every module that took ``pace`` by name, and ``threads`` itself (``paced``, ``discard``).
    users = [m for name, m in list(sys.modules.items())
             if name.startswith("mtcb_curate") and getattr(m, "pace", None) is pace]
    for m in users:
        m.pace = timed_pace

    def search():
        found = clusters.search(session, threshold=neardup.DEFAULT_THRESHOLD, located=verdicts.verbatim_spans(),
                                workers=1)
        groups, shared = clusters.groups(session, found)
        for cluster in groups:
            if cluster.link_count >= WARM_LINKS:
                cluster.member_rows()
        neardup.cluster_index(shared)
        neardup.cluster_index(groups)
        return found

    def passes():
        def step(name, fn):
            t0, c0 = time.perf_counter(), time.thread_time()
            with threads.working():
                result = fn()
            spans.append((t0, time.perf_counter(), name, time.thread_time() - c0))
            return result

        step("scan", verdicts.scan)
        step("filters", lambda: app_filters.warm(session))
        found = step("clusters", search)
        step("set checks", lambda: set_check_results(session, threshold=neardup.DEFAULT_THRESHOLD, limits=limits,
                                                     search=found))
        step("tokens", lambda: verdicts.fill_token_cache())

    worker = threading.Thread(target=passes, name="start-up passes")
    places: dict[float, str] = {}
    wakeups = []
    worker.start()
    samples: list[tuple[float, str, float]] = []  # (when, the worker's innermost project line, ms late)
    while worker.is_alive():
        t0, late = _wake_up()
        frame = sys._current_frames().get(worker.ident)
        if late > args.threshold:  # where the worker stands now: it has just let go of the GIL
            stack = traceback.extract_stack(frame)[-3:] if frame is not None else []
            places[t0] = " < ".join(f"{os.path.basename(f.filename)}:{f.name}:{f.lineno}" for f in reversed(stack))
        samples.append((time.perf_counter(), _own_line(frame), late))
        wakeups.append((t0, late))
    worker.join()
    for m in users:
        m.pace = pace

    def pass_of(t: float) -> str:
        return next((name for a, b, name, _ in spans if a <= t <= b), "between")

    print(f"\n{'pass':>10}  {'wall s':>6}  {'CPU s':>6}  {'late > ' + str(args.threshold) + ' ms':>14}  longest ms")
    for a, b, name, cpu in spans:
        mine = [late for t, late in wakeups if a <= t <= b]
        over = sum(late > args.threshold for late in mine)
        print(f"{name:>10}  {b - a:6.1f}  {cpu:6.1f}  {over:14d}  {max(mine, default=0):10.1f}")
    print("\nlongest waits (ms late, pass, where the worker stood as it let go of the GIL):")
    for t, late in sorted(((t, late) for t, late in wakeups if t in places), key=lambda x: -x[1])[:args.top]:
        print(f"  {late:6.1f}  {pass_of(t):>10}  {places[t]}")
    _report_stretches(paces, spans, samples, args.stretch, args.top)
    return 0


def _own_line(frame) -> str:
    """The innermost line of the project's code in ``frame``'s stack (or of any code)."""
    top = frame
    while frame is not None:
        if "mtcb_curate" in frame.f_code.co_filename:
            return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}:{frame.f_lineno}"
        frame = frame.f_back
    return f"{os.path.basename(top.f_code.co_filename)}:{top.f_code.co_name}" if top is not None else "-"


def _report_stretches(paces, spans, samples, stretch_ms: float, top: int) -> None:
    """Stretches in which a pass ran longer than ``stretch_ms`` between two paces (a key held
    then waits for the rest of it), per pass, and the lines the samples found in them."""
    import bisect
    from collections import Counter

    times = [t for t, _, _ in samples]
    print(f"\nstretches between two paces longer than {stretch_ms:g} ms (a held key waits out the rest):")
    print(f"{'pass':>10}  {'paces':>8}  {'> ' + format(stretch_ms, 'g') + ' ms':>8}  {'longest ms':>10}  {'total s':>7}")
    where: Counter[str] = Counter()
    late_at: Counter[str] = Counter()
    for a, b, name, _ in spans:
        mine = [p for p in paces if a <= p[0] <= b]
        edges = [a] + [x for p in mine for x in p] + [b]
        runs = [(edges[i], edges[i + 1]) for i in range(0, len(edges) - 1, 2)]
        long = [(s, e) for s, e in runs if (e - s) * 1000 > stretch_ms]
        for s, e in long:
            for _, line, late in samples[bisect.bisect_left(times, s):bisect.bisect_right(times, e)]:
                where[f"{name:>10}  {line}"] += 1
                late_at[f"{name:>10}  {line}"] += late
        print(f"{name:>10}  {len(mine):8d}  {len(long):8d}  {max(((e - s) * 1000 for s, e in runs), default=0):10.1f}  "
              f"{sum(e - s for s, e in long):7.2f}")
    print("\nwhere those stretches ran (samples, about 1 a ms; the main thread's mean wake-up delay there: "
          "near 0 when the worker let go of the GIL, as in most numpy calls):")
    for line, n in sorted(where.items(), key=lambda kv: -late_at[kv[0]])[:top]:
        print(f"  {n:6d}  {late_at[line] / n:5.2f} ms  {line}")


if __name__ == "__main__":
    raise SystemExit(main())
