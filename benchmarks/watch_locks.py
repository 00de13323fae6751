"""Where the review screen waits: run the real app with three instruments, then print them.

    python benchmarks/watch_locks.py [--log FILE] [--gap-ms 40] [--slow-ms 30] -- ficha --source DIR ...

Everything after ``--`` is ``mtcb-curate``'s command line; use the app as usual (keys in
tmux, or ``bench_pty.py``'s keys by hand) and quit it. Then this prints, and writes to
``--log`` as it goes:

- **lock gaps**: a thread sleeps 2 ms at a time and logs every wake-up later than
  ``--gap-ms``, with the top four frames each other thread showed at the tick before. A gap is
  time in which no other thread got the interpreter lock (a C call that holds it, such as
  rapidfuzz reading its inputs, ``ndarray.tolist`` of millions of items, or a full garbage
  collection), or in which the machine gave this process no core;
- **slow handlers**: Textual message dispatches (``MessagePump._dispatch_message``: keys,
  worker results, timers) that took longer than ``--slow-ms``, by widget and message;
- **collections**: every ``gc.collect()`` the app runs (the collector policy's full
  collections, ``tui/memory.py``): objects freed and milliseconds.

Times are ``time.monotonic()`` seconds, so they line up with other logs of the same machine.
This found start-up stalls (README, "Background work at 100,000 pairs").
Diagnostic only: it patches Textual's dispatch method in this process and nothing else.
"""

from __future__ import annotations

import argparse
import gc
import sys
import threading
import time
import traceback


def main() -> int:
    argv = sys.argv[1:]
    app_args = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", default="watch_locks.log")
    ap.add_argument("--gap-ms", type=float, default=40.0)
    ap.add_argument("--slow-ms", type=float, default=30.0)
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    log = open(args.log, "w", encoding="utf-8")
    found: list[str] = []

    def note(line: str) -> None:
        found.append(line)
        log.write(line + "\n")
        log.flush()

    def stacks() -> dict[int, str]:
        me = threading.get_ident()
        return {tid: " <- ".join(f"{f.name}:{f.lineno}" for f in reversed(traceback.extract_stack(frame)[-4:]))
                for tid, frame in sys._current_frames().items() if tid != me}

    def watch() -> None:
        before: dict[int, str] = {}
        while True:
            t = time.perf_counter()
            time.sleep(0.002)
            gap = (time.perf_counter() - t) * 1000
            if gap > args.gap_ms:
                note(f"{time.monotonic():.2f} lock gap {gap:.0f} ms; the other threads just before:")
                for tid, where in before.items():
                    note(f"      {tid % 100000:>5}: {where}")
            before = stacks()

    from textual.message_pump import MessagePump

    dispatch = MessagePump._dispatch_message

    async def timed_dispatch(self, message):
        t = time.perf_counter()
        try:
            return await dispatch(self, message)
        finally:
            took = (time.perf_counter() - t) * 1000
            if took > args.slow_ms:
                note(f"{time.monotonic():.2f} handler {took:.0f} ms: {type(self).__name__} {type(message).__name__}")

    MessagePump._dispatch_message = timed_dispatch
    collect = gc.collect

    def timed_collect(*a):
        t = time.perf_counter()
        freed = collect(*a)
        note(f"{time.monotonic():.2f} gc.collect{a}: {freed} objects freed in {(time.perf_counter() - t) * 1000:.0f} ms")
        return freed

    gc.collect = timed_collect
    threading.Thread(target=watch, daemon=True, name="watch_locks").start()
    note(f"{time.monotonic():.2f} started: mtcb-curate {' '.join(app_args)}")
    from mtcb_curate.cli import main as app_main

    try:
        rc = app_main(app_args)
    finally:
        gc.collect = collect
        print("\n".join(found))
        print(f"(also in {args.log})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
