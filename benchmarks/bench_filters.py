"""Benchmark filters and bulk actions on 20,000 synthetic pairs (``benchmarks/out/pairs20k``,
made by ``benchmarks/make_synthetic.py``).

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_filters.py            # prints median / max per filter, then bulk
    python benchmarks/bench_filters.py --repeat 5 --data /tmp/synth-20k

What is measured (wall clock, in this process, the dataset and a fresh workspace loaded first):

1. ``app.filters.apply`` over every pair, for each filter below (each run ``--repeat`` times):
   status, document key, plain text (lower case: case-insensitive), regex over the three
   texts, a combination, and the filter bar's ``parse`` + apply, after ``filters.warm`` (the
   review screen's start-up worker builds those caches, and the app's collector freezes the
   long-lived objects then, ``gc.freeze``). Target: <= 50 ms.
2. A bulk accept over 1,000 pairs (``app.bulk.run``: one grouped ``decide_many`` transaction)
   plus the screen update (the queue's ids rebuilt by the filter), then one ``session.undo()``
   restoring all 1,000. Target: <= 1 s (the Pilot-level figure, with the screen redraw, is in
   ``tests/test_tui_filters.py``'s checks only as behaviour, not time).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from pathlib import Path

from mtcb_curate.app import bulk, filters
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.dataset.model import Status

HERE = Path(__file__).resolve().parent


def timed(fn, repeat: int) -> tuple[float, float, float, object]:
    """(first run, median, max) in ms and the last result: the first run of a text query
    fills the caches (lower-cased texts, the query's matches); the next ones read them, as a
    view applied again after each decision does."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return times[0], statistics.median(times), max(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "out" / "pairs20k")
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    if not (args.data / "questions").is_dir():
        raise SystemExit(f"{args.data}: no dataset; run benchmarks/make_synthetic.py first")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        s = open_session(Options("ficha", source=[str(args.data)], workspace=Path(tmp) / "ws"))
        print(f"loaded {len(s):,} pairs in {time.perf_counter() - t:.2f} s")
        t = time.perf_counter()
        filters.warm(s)  # what the review screen does as the filter bar opens, before a first query
        gc.freeze()  # and the app's collector then (tui/memory.py refreeze): no full collection walks them
        print(f"warm-up (lower-cased texts, Arrow columns, \\d \\w \\s ranges; off the key path): "
              f"{time.perf_counter() - t:.2f} s")
        for pid in range(0, len(s), 7):
            s.decide(pid, Status.ACCEPTED) if pid % 2 else None
        key = s.pairs[len(s) // 2].doc_key
        word = s.pairs[123].question.split()[-1].strip("?").lower()
        cases = {
            "status undecided": filters.Filter(statuses=frozenset({Status.UNDECIDED})),
            "document key": filters.Filter(doc_key=key),
            f"plain text {word!r}": filters.Filter(text=word),
            "regex \\d{4} (3 texts)": filters.Filter(text=r"\d{4}", regex=True),
            "status + doc + text": filters.Filter(statuses=frozenset({Status.UNDECIDED}), doc_key=key, text=word),
        }
        print(f"{'filter over ' + format(len(s), ',') + ' pairs':<40} {'first':>9} {'median':>9} {'max':>9} "
              f"{'shown':>7}")
        for name, f in cases.items():
            first, med, mx, out = timed(lambda f=f: filters.apply(s, f), args.repeat)
            print(f"{name:<40} {first:8.1f}ms {med:8.1f}ms {mx:8.1f}ms {len(out):>7,}")
        line = f"status:undecided {word}"
        first, med, mx, out = timed(lambda: filters.apply(s, filters.parse(line)), args.repeat)
        print(f"{'parse + apply ' + repr(line):<40} {first:8.1f}ms {med:8.1f}ms {mx:8.1f}ms {len(out):>7,}")
        # A new query each time (the bar's typing): lower-cased texts cached, matches not.
        words = [p.question.split()[1].lower() + str(k) for k, p in enumerate(s.pairs[: args.repeat])]
        it = iter(words)
        first, med, mx, out = timed(lambda: filters.apply(s, filters.Filter(text=next(it))), args.repeat)
        print(f"{'a new plain query each run':<40} {first:8.1f}ms {med:8.1f}ms {mx:8.1f}ms {len(out):>7,}")
        # A new regular expression each time, against its anchor measured in the same run:
        # Python's re called directly (the compiled smart-case pattern searched in every text).
        texts = [getattr(p, a) for a in ("question", "answer", "passage") for p in s.pairs]
        for label, make in (("word", lambda k: rf"\b\w+ing(?:{k})?\b"), ("literal", lambda k: rf"net income(?:{k})?"),
                            ("literal + class", lambda k: rf"fy20\d\d(?:{k})?"), ("digits", lambda k: rf"\d{{4}}(?:{k})?")):
            ours, direct = [], []
            for k in range(args.repeat):
                rx = make(k)
                t = time.perf_counter()
                out = filters.apply(s, filters.Filter(text=rx, regex=True))
                ours.append((time.perf_counter() - t) * 1000)
                pat = filters.Filter(text=make(k + 1000), regex=True).pattern()
                t = time.perf_counter()
                sum(1 for x in texts if pat.search(x))
                direct.append((time.perf_counter() - t) * 1000)
            mo, md = statistics.median(ours), statistics.median(direct)
            print(f"{'a new regex (' + label + ')':<40} {ours[0]:8.1f}ms {mo:8.1f}ms {max(ours):8.1f}ms "
                  f"{len(out):>7,}   direct re {md:.1f} ms: {mo / md:.2f}x")

        ids = filters.apply(s, filters.Filter(statuses=frozenset({Status.UNDECIDED})))[:1000]
        view = filters.Filter(statuses=frozenset({Status.UNDECIDED}))
        t = time.perf_counter()
        n = bulk.run(s, bulk.ACCEPT, ids).count
        shown = filters.apply(s, view)  # the screen's update: the view's ids again
        took = time.perf_counter() - t
        print(f"bulk accept over {n:,} pairs (commit + view update): {took * 1000:.0f} ms; "
              f"view now {len(shown):,}")
        t = time.perf_counter()
        s.undo()
        took = time.perf_counter() - t
        back = sum(1 for pid in ids if s.status(pid) is Status.UNDECIDED)
        print(f"one undo: {took * 1000:.0f} ms; {back:,} of {len(ids):,} undecided again")
        s.workspace.close()


if __name__ == "__main__":
    main()
