"""Benchmark the review app on synthetic ficha-scale data: start-up, key latency, commit cost.

Headless (``App.run_test``): frames are composited but never encoded or written. The key
latency and start-up figures in the README come from ``bench_pty.py``, which runs the real app
in a pseudo-terminal against a trivial Textual app; this script remains for the split of a
key's cost (handler, commit, render) and the workspace commit figures.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_review.py            # full run (a few minutes on 2 cores)
    python benchmarks/bench_review.py --quick    # fewer repeats
    python benchmarks/bench_review.py --data /tmp/synth-ficha --data-20k /tmp/synth-20k
    python benchmarks/bench_review.py --only latency --no-pilot --gc freeze   # GC experiment

``--only startup,latency,commit`` picks parts; ``--no-pilot`` skips the slow pilot timing;
``--gc`` tries a garbage-collector policy in the latency children (see ``--help``).

Datasets (``benchmarks/make_synthetic.py``) are generated into ``benchmarks/out/ficha`` (88
documents, 1,331 pairs) and ``benchmarks/out/pairs20k`` (same corpus, 20,000 pairs) unless
they are there already. Workspaces go to a temporary folder (``--tmp`` chooses its parent).

What is measured (all times wall clock):

1. **Start-up**, each run in a fresh ``python`` process (interpreter start-up and imports
   count), opened as ``mtcb-curate ficha --source DATA --workspace WS`` would open it (keymap,
   ``open_session``, ``CurateApp``) but under ``App.run_test(size=(160, 45))``. The clock runs
   from just before ``Popen`` in this process until the child's ``READY`` line is read, the
   child printing it after the first ``await pilot.pause()`` once the ``ReviewScreen`` is
   mounted, the queue has rows, the QA panel shows the first undecided pair and the source
   viewer holds its document. The child also reports (on the same system-wide monotonic
   clock) when that state was first reached and drawn, without the pilot's idle wait: Textual's
   ``pilot.pause()`` sleeps in 20 ms steps until the process has been idle for one step (at
   most 1 s), and the app's passage scan thread keeps it busy.
2. **Decision latency** (``a`` = accept), in one process per scenario, on a fresh workspace:
   - ``pilot``: ``await pilot.press("a"); await pilot.pause()`` timed. Textual's pilot sleeps
     at least 3 x 20 ms per press+pause (``wait_for_idle``), so this figure has a ~60 ms floor
     whatever the app does; it is reported because it is the literal test-harness figure.
   - ``key->frame``: the key event is sent to the app the way the pilot sends it, and the clock
     stops when the screen has decided and advanced, every widget has processed its pending
     messages, and the screen has been composited (``Screen._on_timer_update``, which renders
     the changed lines). No artificial sleeps; the passage-locating worker thread that a
     not-verbatim pair starts runs meanwhile, as it would for a user. Between presses (not
     timed) the process is left to go idle. The split (handler, workspace commit, render) is
     reported alongside.
   - ``handler``: ``screen.action_accept()`` called directly, on another fresh workspace.
   Scenarios: ficha-scale (all pairs view) and 20,000 pairs with the ``undecided`` view
   (``v`` pressed once first), where each decision rebuilds the filtered id list.
   Measurement starts once the start-up passage scan has finished.
3. **Workspace commit**: ``Workspace.decide`` 1000 times with ``synchronous=NORMAL`` (default)
   and ``durable=True`` (``FULL``, one fsync per decision), on the ``--tmp`` file system.
"""

from __future__ import annotations

import time

T_START = time.perf_counter()  # first statement: the child's start on the system-wide monotonic clock

import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "out")
SIZE = (160, 45)
TARGETS = {"startup_a": 2.0, "startup_b": 1.0, "startup_c": 3.0, "median_ms": 16.0, "p99_ms": 50.0}
FICHA = dict(docs=88, pairs=1331, mean_chars=550_000, seed=0)
PAIRS20K = dict(docs=88, pairs=20_000, mean_chars=550_000, seed=0)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TEXTUAL_ANIMATIONS"] = "none"
    # Every `a` must decide at once: accepting a pair that fails a check asks for confirmation by
    # default ([review] confirm_failing_accept), which is a second interaction, not this latency.
    config = os.path.join(tempfile.gettempdir(), "mtcb-curate-bench.toml")
    with open(config, "w", encoding="utf-8") as fh:
        fh.write("[review]\nconfirm_failing_accept = false\n")
    env["MTCB_CURATE_CONFIG"] = config
    env.pop("TEXTUAL", None)  # no devtools
    return env


# ---------------------------------------------------------------------------------------------
# Child: start-up


def _ready_state(app, session, pid, doc):
    """True when the review screen shows pair ``pid`` beside document ``doc`` with queue rows."""
    from mtcb_curate.tui.screens.review import ReviewScreen
    from mtcb_curate.tui.widgets.qa_panel import QAPanel
    from mtcb_curate.tui.widgets.source_viewer import SourceViewer

    try:
        scr = app.screen
        if not isinstance(scr, ReviewScreen) or not scr.is_mounted:
            return False
        q = scr.queue
        if not q.ids or q.current != pid or scr._shown_pair != pid:
            return False
        if doc is not None:
            viewer = scr.query_one(SourceViewer)
            if scr._shown_doc != doc.key or viewer.document_length != len(doc.text):
                return False
        panel = scr.query_one(QAPanel)
        return f"#{pid}" in panel.section_text("head") and panel.virtual_size.height > 0
    except Exception:
        return False


def child_startup(data: str, ws: str) -> int:
    t_imports0 = time.perf_counter()
    import asyncio
    from pathlib import Path

    from mtcb_curate.config import load_keymap
    from mtcb_curate.app.sources import Options, open_session

    from mtcb_curate.cli import preload_tui

    t_imports1 = time.perf_counter()
    keymap = load_keymap(None)
    tui_import = preload_tui()  # as `mtcb-curate review` does
    session = open_session(Options(name="ficha", source=[data], workspace=Path(ws)))
    t_opened = time.perf_counter()
    tui_import.join()
    from mtcb_curate.tui.app import CurateApp

    t_tui = time.perf_counter()
    pid = session.first_undecided()
    doc = session.dataset.document_for(session.dataset.pairs[pid]) if pid is not None else None
    app = CurateApp(session, keymap=keymap)
    marks: dict[str, float] = {}

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            marks["run_test_yield"] = time.perf_counter()
            deadline = time.perf_counter() + 30
            while not _ready_state(app, session, pid, doc):
                if time.perf_counter() > deadline:
                    raise RuntimeError("the review screen never became ready")
                await asyncio.sleep(0)
            await pilot._wait_for_screen()
            app.screen._on_timer_update()  # composite the screen now, as the pilot does
            marks["drawn"] = time.perf_counter()
            # Interactive = the first key is answered: press j and wait for the next pair's frame
            # (whatever the app does in the background at that moment competes, as for a person).
            from textual import events

            scr = app.screen
            before = scr._shown_pair
            key = events.Key("j", "j")
            key.set_sender(app)
            app._driver.send_message(key)
            pauses = 0
            while scr._shown_pair == before and len(session) > 1:
                await asyncio.sleep(0)
                pauses += 1
            await pilot._wait_for_screen()
            scr._on_timer_update()
            marks["after_pause"] = time.perf_counter()
            import json

            print("READY " + json.dumps({
                "start": T_START, "imports0": t_imports0, "imports1": t_imports1, "opened": t_opened,
                "tui": t_tui, **marks, "pauses": pauses, "pairs": len(session),
                "decided": session.decided, "first_undecided": pid}), flush=True)
            os._exit(0)  # skip tear-down: the parent has its figure

    asyncio.run(run())
    return 1


# ---------------------------------------------------------------------------------------------
# Child: decision latency


async def _quiesce(app, idle_s: float = 0.004) -> None:
    """Wait (untimed) until no worker runs and the process has been idle for a moment."""
    import asyncio

    from textual.worker import WorkerState

    while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
        await asyncio.sleep(0.002)
    while True:  # cancelled thread workers may still be running in the executor
        c = time.process_time()
        await asyncio.sleep(idle_s)
        if time.process_time() - c < idle_s / 4:
            return


def child_latency(data: str, ws: str, mode: str, n: int, view: str, gc_policy: str = "default") -> int:
    import asyncio
    import gc
    import json
    from pathlib import Path

    from textual import events

    from mtcb_curate.dataset.model import Status
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.tui.app import CurateApp

    session = open_session(Options(name="ficha", source=[data], workspace=Path(ws)))
    if gc_policy != "default":  # experiment: what a GC policy in the app would give (see --gc)
        gc.collect()
        gc.freeze()
        if gc_policy == "idle-full":
            gc.set_threshold(700, 10, 1_000_000_000)
    app = CurateApp(session)
    out: dict[str, object] = {"mode": mode, "view": view, "pairs": len(session), "gc": gc_policy}
    gc_pauses: list[tuple[int, float]] = []
    gc_t0 = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            gc_t0[0] = time.perf_counter()
        else:
            gc_pauses.append((info["generation"], time.perf_counter() - gc_t0[0]))

    gc.callbacks.append(on_gc)

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            t = time.perf_counter()
            await _quiesce(app)  # the start-up passage scan
            out["scan_wait_s"] = time.perf_counter() - t
            scr = app.screen
            if view == "undecided":
                await pilot.press("v")
                await pilot.pause()
                assert scr.controller.status_filter is Status.UNDECIDED, scr.controller.status_filter
            await _quiesce(app)
            gc.collect()
            totals: list[float] = []
            gc_in: list[float] = []
            gc_full: list[float] = []
            handler: list[float] = []
            commit: list[float] = []
            render: list[float] = []
            kinds: list[str] = []

            if mode == "handler":
                for _ in range(n):
                    before = scr.queue.current
                    gc_pauses.clear()
                    t0 = time.perf_counter()
                    scr.action_accept()
                    totals.append(time.perf_counter() - t0)
                    gc_in.append(sum(d for _, d in gc_pauses))
                    gc_full.append(max((d for g, d in gc_pauses if g == 2), default=0.0))
                    assert scr._shown_pair != before
                    await pilot._wait_for_screen()
                    scr._on_timer_update()
                    await _quiesce(app)
                    if gc_policy == "idle-full":
                        gc.collect()
            elif mode == "pilot":
                for _ in range(n):
                    before = scr.queue.current
                    gc_pauses.clear()
                    t0 = time.perf_counter()
                    await pilot.press("a")
                    await pilot.pause()
                    totals.append(time.perf_counter() - t0)
                    gc_in.append(sum(d for _, d in gc_pauses))
                    gc_full.append(max((d for g, d in gc_pauses if g == 2), default=0.0))
                    if gc_policy == "idle-full":
                        gc.collect()
                    assert scr._shown_pair != before
            else:  # key->frame, with the split
                advanced = asyncio.Event()
                real_accept, real_apply = scr.action_accept, scr._apply
                real_decide = session.decide

                def timed_accept() -> None:
                    t = time.perf_counter()
                    real_accept()
                    handler.append(time.perf_counter() - t)

                def timed_decide(*a, **k):
                    t = time.perf_counter()
                    try:
                        return real_decide(*a, **k)
                    finally:
                        commit.append(time.perf_counter() - t)

                def apply(out) -> None:
                    real_apply(out)
                    if out.deferred:  # a decision moved on
                        advanced.set()

                real_locate = scr._complete_verdict
                located: list[int] = []

                def locate_closest(*a, **k):
                    located.append(1)
                    return real_locate(*a, **k)

                scr._complete_verdict = locate_closest

                scr.action_accept = timed_accept
                scr._apply = apply
                session.decide = timed_decide
                driver = app._driver
                for _ in range(n):
                    before = scr.queue.current
                    doc_before = scr._shown_doc
                    advanced.clear()
                    located.clear()
                    key = events.Key("a", "a")
                    key.set_sender(app)
                    gc_pauses.clear()
                    t0 = time.perf_counter()
                    driver.send_message(key)
                    await asyncio.wait_for(advanced.wait(), 10)
                    await pilot._wait_for_screen()
                    t1 = time.perf_counter()
                    scr._on_timer_update()
                    t2 = time.perf_counter()
                    totals.append(t2 - t0)
                    render.append(t2 - t1)
                    gc_in.append(sum(d for _, d in gc_pauses))
                    gc_full.append(max((d for g, d in gc_pauses if g == 2), default=0.0))
                    assert scr._shown_pair != before
                    kinds.append("doc" if scr._shown_doc != doc_before else "locate" if located else "plain")
                    await _quiesce(app)
                    if gc_policy == "idle-full":
                        gc.collect()  # the app would do this once the curator pauses
            out.update(kinds=kinds, totals=totals, handler=handler, commit=commit, render=render, gc_in=gc_in,
                       gc_full=[x for x in gc_full if x], decided=session.decided)
            print("RESULT " + json.dumps(out), flush=True)
            os._exit(0)

    asyncio.run(run())
    return 1


# ---------------------------------------------------------------------------------------------
# Parent


def _dataset(path: str | None, default_name: str, params: dict) -> str:
    import json
    from pathlib import Path

    folder = Path(path) if path else Path(DEFAULT_OUT) / default_name
    meta = folder / "synthetic.json"
    if meta.is_file() and (folder / "README.md").is_file():
        have = json.loads(meta.read_text(encoding="utf-8")).get("params", {})
        if have != params:
            print(f"note: {folder} was made with {have}, not {params}; using it as it is", file=sys.stderr)
        return str(folder.resolve())
    if path and folder.exists() and (folder / "README.md").is_file():
        return str(folder.resolve())
    sys.path.insert(0, HERE)
    from make_synthetic import make_dataset

    print(f"generating {folder} ({params['pairs']:,} pairs) ...", file=sys.stderr, flush=True)
    make_dataset(folder, **params)
    return str(folder.resolve())


def _make_workspace(data: str, ws, decisions: int) -> None:
    """A workspace bound to ``data`` with the first ``decisions`` pairs decided, 20 s apart."""
    from pathlib import Path

    from mtcb_curate.app.sources import Options, open_session

    session = open_session(Options(name="ficha", source=[data], workspace=Path(ws)))
    try:
        w = session.workspace
        now = time.time()
        for i in range(decisions):
            r = i % 20
            status, reason = (("rejected", "passage not verbatim") if r == 0 else
                              ("skipped", None) if r == 1 else ("flagged", None) if r == 2 else ("accepted", None))
            w.decide(i, status, reason, at=now - 20.0 * (decisions - i))
    finally:
        session.workspace.close()


def _stats(xs: list[float]) -> dict[str, float]:
    import math
    import statistics

    s = sorted(xs)
    p99 = s[max(0, math.ceil(0.99 * len(s)) - 1)] if s else float("nan")
    return {"n": len(s), "median": statistics.median(s) if s else float("nan"), "p99": p99,
            "max": s[-1] if s else float("nan"), "mean": statistics.fmean(s) if s else float("nan")}


def bench_startup(cases, repeats: int, tmp: str) -> list[dict]:
    import json
    import shutil
    import subprocess
    import tempfile

    rows = []
    for label, data, decisions, target in cases:
        template = None
        if decisions:
            template = tempfile.mkdtemp(prefix="ws-template-", dir=tmp)
            t = time.perf_counter()
            _make_workspace(data, template, decisions)
            print(f"  [{label}] workspace with {decisions:,} decisions made in {time.perf_counter() - t:.1f} s",
                  file=sys.stderr, flush=True)
        runs = []
        for i in range(repeats):
            ws = os.path.join(tempfile.mkdtemp(prefix="ws-run-", dir=tmp), "ws")
            if template:
                shutil.copytree(template, ws)
            # Hygiene: the bench's own writes (the workspace just made or copied) are flushed
            # before the clock starts, so their writeback is not charged to the app.
            os.sync()
            time.sleep(0.5)
            t0 = time.perf_counter()
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child-startup", data, ws],
                                 stdout=subprocess.PIPE, env=_child_env(), text=True)
            info = None
            for line in p.stdout:
                if line.startswith("READY "):
                    t1 = time.perf_counter()
                    info = json.loads(line[6:])
                    break
            p.wait()
            if info is None:
                raise SystemExit(f"[{label}] the child failed (exit {p.returncode})")
            r = {"total": t1 - t0, "python": info["start"] - t0, "imports": info["imports1"] - info["start"],
                 "open": info["opened"] - info["imports1"], "tui_import": info["tui"] - info["opened"],
                 "to_drawn": info["drawn"] - info["tui"], "drawn": info["drawn"] - t0,
                 "pause": info["after_pause"] - info["drawn"], "pauses": info["pauses"],
                 "decided": info["decided"], "pairs": info["pairs"]}
            runs.append(r)
            print(f"  [{label}] run {i + 1}: ready {r['total']:.3f} s (drawn at {r['drawn']:.3f} s)",
                  file=sys.stderr, flush=True)
        rows.append({"label": label, "target": target, "runs": runs})
    return rows


def bench_latency(scenarios, n: int, tmp: str, gc_policy: str = "default") -> list[dict]:
    import json
    import subprocess
    import tempfile

    rows = []
    for label, data, view, modes in scenarios:
        for mode in modes:
            ws = os.path.join(tempfile.mkdtemp(prefix="ws-lat-", dir=tmp), "ws")
            t = time.perf_counter()
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child-latency", data, ws, mode,
                                str(n), view, gc_policy], stdout=subprocess.PIPE, env=_child_env(), text=True)
            res = None
            for line in p.stdout.splitlines():
                if line.startswith("RESULT "):
                    res = json.loads(line[7:])
            if res is None:
                raise SystemExit(f"[{label} {mode}] the child failed (exit {p.returncode})")
            print(f"  [{label} {mode}] {n} presses in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
            rows.append({"label": label, "mode": mode, **res})
    return rows


def bench_commit(n: int, tmp: str) -> list[dict]:
    import tempfile
    from pathlib import Path

    from mtcb_curate.store.sqlite import Workspace

    rows = []
    for durable in (False, True):
        ws = Workspace.open(Path(tempfile.mkdtemp(prefix="ws-commit-", dir=tmp)), durable=durable)
        try:
            ws.bind("ficha", ["bench"], "0" * 64)
            times = []
            for i in range(n):
                t0 = time.perf_counter()
                ws.decide(i, "accepted" if i % 10 else "rejected", None if i % 10 else "bench")
                times.append(time.perf_counter() - t0)
        finally:
            ws.close()
        rows.append({"label": "FULL (durable=True)" if durable else "NORMAL (default)", "times": times})
    return rows


def _fs_of(path: str) -> str:
    """The file system type holding ``path`` (from /proc/mounts), or '?'."""
    try:
        path = os.path.realpath(path)
        best, kind = "", "?"
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                mnt = parts[1]
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, kind = mnt, parts[2]
        return kind
    except OSError:
        return "?"


def _ok(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"



def report(startup, latency, commit, args) -> None:
    import platform

    ms = 1000.0
    print()
    print(f"mtcb-curate review benchmarks · Python {platform.python_version()} · {os.cpu_count()} CPUs · "
          f"terminal {SIZE[0]}x{SIZE[1]} (headless) · workspaces on {_fs_of(args.tmp or '/tmp')}")
    print(f"data: {args.ficha}  |  {args.pairs20k}")
    if startup:
        print()
        print("1. Time to the first interactive screen (fresh process; seconds from Popen)")
        hdr = (f"{'case':<44} {'runs':>4} {'median':>7} {'max':>7} {'target':>7} {'':>6}   "
               f"{'drawn*':>7} | {'python':>6} {'import':>6} {'load':>6} {'tui':>6} {'mount':>6} {'1st key':>7}")
        print(hdr)
        print("-" * len(hdr))
        import statistics

        for row in startup:
            runs = row["runs"]
            tot = [r["total"] for r in runs]
            med = statistics.median(tot)
            part = {k: statistics.median(r[k] for r in runs) for k in
                    ("drawn", "python", "imports", "open", "tui_import", "to_drawn", "pause")}
            print(f"{row['label']:<44} {len(runs):>4} {med:>7.3f} {max(tot):>7.3f} {row['target']:>7.1f} "
                  f"{_ok(max(tot), row['target']):>6}   {part['drawn']:>7.3f} | "
                  f"{part['python']:>6.3f} {part['imports']:>6.3f} {part['open']:>6.3f} {part['tui_import']:>6.3f} "
                  f"{part['to_drawn']:>6.3f} {part['pause']:>7.3f}")
        print("  Judged: Popen until the first key (j) is answered on screen; ok/MISSED judges the max of the runs.")
        print("  drawn* = the first screen composited.  Split (medians, s): python = interpreter start-up; import =")
        print("  mtcb_curate.app.sources + config; load = open_session (read parquet, build dataset, fingerprint,")
        print("  workspace); tui = import the Textual app (overlapped with load); mount = CurateApp/run_test until")
        print("  drawn; 1st key = from drawn until the key's frame.")
    if latency:
        print()
        print(f"2. Decision-to-next-pair latency, key 'a' (ms; garbage collector: {args.gc})")
        hdr = (f"{'scenario':<34} {'method':<11} {'n':>4} {'median':>7} {'p99':>7} {'max':>7} {'target':>9} {'':>6}   "
               f"{'handler':>14} {'commit':>14} {'render':>14} {'gc in press':>14} {'full gc':>14}")
        print(hdr)
        print("-" * len(hdr))
        for row in latency:
            s = _stats(row["totals"])
            if row["mode"] == "pilot":
                verdict = "n/a"
            else:
                good = s["median"] * ms <= TARGETS["median_ms"] and s["p99"] * ms <= TARGETS["p99_ms"]
                verdict = "ok" if good else "MISSED"

            def mp(xs):
                if not xs:
                    return ""
                t = _stats(xs)
                return f"{t['median'] * ms:5.1f}/{t['p99'] * ms:6.1f}"

            full = f"{len(row['gc_full'])}x, max {max(row['gc_full']) * ms:.0f}" if row["gc_full"] else "none"
            print(f"{row['label']:<34} {row['mode']:<11} {s['n']:>4} {s['median'] * ms:>7.1f} {s['p99'] * ms:>7.1f} "
                  f"{s['max'] * ms:>7.1f} {'16 / 50':>9} {verdict:>6}   {mp(row['handler']):>14} {mp(row['commit']):>14} "
                  f"{mp(row['render']):>14} {mp(row['gc_in']):>14} {full:>14}")
        print("  key->frame by kind of press (n, median, p99 ms): plain = same document, passage verbatim;")
        print("  locate = the full check of the next passage starts in a worker (fuzzy search, other documents); doc = next pair's document differs")
        for row in latency:
            if not row.get("kinds"):
                continue
            parts = []
            for kind in ("plain", "locate", "doc"):
                xs = [t for t, k in zip(row["totals"], row["kinds"]) if k == kind]
                if xs:
                    st = _stats(xs)
                    parts.append(f"{kind} {st['n']}: {st['median'] * ms:.1f} / {st['p99'] * ms:.1f}")
            print(f"    {row['label']:<32} " + "   ".join(parts))
        print("  target: median <= 16 ms and p99 <= 50 ms.  split columns: median/p99 ms of the key->frame presses:")
        print("  handler = action_accept (commit + advance + show next pair); commit = ReviewSession.decide;")
        print("  render = the final layout/composite of the screen (a timer-driven pass may already have run between")
        print("  handler and render); gc in press = time in Python's cyclic garbage")
        print("  collector during the press; full gc = how many presses a full (gen 2) collection hit, and its longest.")
        print("  pilot = press()+pause(), which sleeps >= 60 ms")
        print("  per press inside Textual's pilot (wait_for_idle), so it is shown but not judged.")
    if commit:
        print()
        print(f"3. Workspace.decide commit cost (ms, {_fs_of(args.tmp or '/tmp')} file system)")
        hdr = f"{'synchronous':<22} {'n':>5} {'median':>7} {'p99':>7} {'max':>7} {'mean':>7}"
        print(hdr)
        print("-" * len(hdr))
        for row in commit:
            s = _stats(row["times"])
            print(f"{row['label']:<22} {s['n']:>5} {s['median'] * ms:>7.3f} {s['p99'] * ms:>7.3f} {s['max'] * ms:>7.3f} "
                  f"{s['mean'] * ms:>7.3f}")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import shutil
    import tempfile

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child-startup"]:
        return child_startup(argv[1], argv[2])
    if argv[:1] == ["--child-latency"]:
        return child_latency(argv[1], argv[2], argv[3], int(argv[4]), argv[5], argv[6])

    ap = argparse.ArgumentParser(description="Benchmark mtcb-curate's review app (start-up, key latency, commits).")
    ap.add_argument("--quick", action="store_true", help="fewer repeats and presses")
    ap.add_argument("--data", metavar="DIR", help="ficha-scale dataset folder (default: benchmarks/out/ficha, "
                                                  "generated if absent)")
    ap.add_argument("--data-20k", metavar="DIR", help="20,000-pair dataset folder (default: benchmarks/out/pairs20k)")
    ap.add_argument("--tmp", metavar="DIR", help="parent folder for the temporary workspaces (default: system temp)")
    ap.add_argument("--only", default="startup,latency,commit",
                    help="comma-separated parts to run: startup, latency, commit (default: all)")
    ap.add_argument("--no-pilot", action="store_true",
                    help="skip timing press()+pause() through Textual's pilot (slow: >= 60 ms per press)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary workspaces")
    ap.add_argument("--gc", choices=("default", "freeze", "idle-full"), default="default",
                    help="experiment, latency part only: 'freeze' = gc.collect()+gc.freeze() after loading; "
                         "'idle-full' = that, no automatic full (gen 2) collection, and a full collection "
                         "between presses (as an app would do when the curator pauses). Default: Python's")
    args = ap.parse_args(argv)
    os.environ.update({k: v for k, v in _child_env().items() if k in ("HF_HUB_OFFLINE", "TEXTUAL_ANIMATIONS",
                                                                       "MTCB_CURATE_CONFIG")})
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    repeats = 2 if args.quick else 5
    presses = 100 if args.quick else 500
    commits = 200 if args.quick else 1000

    args.ficha = _dataset(args.data, "ficha", FICHA)
    args.pairs20k = _dataset(args.data_20k, "pairs20k", PAIRS20K) if ({"startup", "latency"} & parts) else "-"
    tmp = tempfile.mkdtemp(prefix="mtcb-bench-", dir=args.tmp)
    try:
        startup = latency = commit = None
        if "startup" in parts:
            print("start-up ...", file=sys.stderr, flush=True)
            startup = bench_startup([
                ("(a) ficha-scale 1,331 pairs, no workspace", args.ficha, 0, TARGETS["startup_a"]),
                ("(b) ficha-scale, resumed (600 decided)", args.ficha, 600, TARGETS["startup_b"]),
                ("(c) 20,000 pairs, resumed (10,000 decided)", args.pairs20k, 10_000, TARGETS["startup_c"]),
            ], repeats, tmp)
        if "latency" in parts:
            print("latency ...", file=sys.stderr, flush=True)
            modes = ["key->frame", "handler"] + ([] if args.no_pilot else ["pilot"])
            latency = bench_latency([
                ("ficha-scale, view: all", args.ficha, "all", modes),
                ("20,000 pairs, view: undecided", args.pairs20k, "undecided", modes),
            ], presses, tmp, args.gc)
        if "commit" in parts:
            print("commit ...", file=sys.stderr, flush=True)
            commit = bench_commit(commits, tmp)
        report(startup, latency, commit, args)
    finally:
        if args.keep:
            print(f"workspaces kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
