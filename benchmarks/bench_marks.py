"""Queue marks of a new workspace against the verdicts its QA panel shows: how long after the
first frame the session's analysis is taken, and how many queue marks then differ from what the
panel shows for the same pair.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_marks.py --source ../shared/data
    python benchmarks/bench_marks.py --source ../shared/data/squad-mtcb --name squad --doc-key title

Method. Fresh ``XDG_DATA_HOME``, ``XDG_CONFIG_HOME`` and ``XDG_CACHE_HOME`` under a temporary
folder (no workspace, no token cache, no analysis of an earlier run), then the session is opened
the way ``mtcb-curate NAME --source DIR`` opens it (``app.sources.open_review`` on
``Options(NAME, source=[DIR])``: a NEW workspace in its default place) and the real
``CurateApp`` runs under ``App.run_test(size=(120, 30))`` with the review screen's own delays
(nothing is made to start early). Three instants are recorded, on ``time.perf_counter``:

- the first frame: the first frame showing a pair is drawn (the review screen's
  ``_after_frame``, which Textual calls after the refresh that drew the first pair);
- the analysis taken: ``ReviewController.absorb_analysis`` returns (the worker process's
  results are the queue's marks from then on);
- the snapshot: ``--within`` seconds (default 5) after the first frame, or once the analysis
  is taken and the app is idle if that comes later; every queue row's marks are read as the
  queue draws them (``QueueRows.text``, which ``PairList.render_line`` paints): the verdict
  column (``≈ ~ ≠ ∅``, blank for exact) and the check column (``▲``: it would fail a check).

Then every pair is visited in queue order (``j``), each time waiting until the panel's full
check has landed (no "checking…" in its verdict or facts), and the panel's verdict badge
(EXACT, NORMALIZED, FUZZY, MISSING, EMPTY) and problems (a ``✗`` line: a check it would fail)
are read from the panel. A mark differs when the verdict column is not ``VERDICT_MARK`` of the
panel's badge, or when ``▲`` is shown and the panel lists no failing check (or the reverse, on
a pair not rejected). Visiting is not a key the measurement counts; it only reads the panel.

Target (docs/performance.md): a new workspace on the filings: within 5 s of the first frame, no
queue mark differs from the verdict the panel would show.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parents[1] / "shared" / "data"
SIZE = (120, 30)
#: Seconds after the first frame by which no mark may differ (the target).
WITHIN_S = 5.0
#: The panel's verdict badge -> its queue mark (``review_rows.VERDICT_MARK`` by name).
BADGES = ("EXACT", "NORMALIZED", "FUZZY", "MISSING", "EMPTY")


async def _idle(app, pilot) -> None:
    """Let timers due now start their workers, wait for the app's workers, let it process what
    they posted (not the analysis process: that is what is measured)."""
    from textual.worker import WorkerCancelled

    await pilot.pause()
    for _ in range(20):
        try:
            await app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            await pilot.pause()
    await pilot.pause()


def _marks(screen) -> dict[int, tuple[str, str]]:
    """pid -> (verdict column, check column) of its queue row as drawn."""
    rows = screen.rows
    return {pid: tuple(rows.text(pid, 200)[1:3]) for pid in screen.controller.queue.ids}


async def _panel_of(app, pilot, pid: int, timeout: float = 60.0) -> tuple[str, bool, bool]:
    """The panel's verdict badge for pair ``pid`` (on screen), whether it lists a failing check,
    and whether its full check had landed within ``timeout`` seconds."""
    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    panel = app.screen.query_one(QAPanel)
    end = time.perf_counter() + timeout
    while True:
        await _idle(app, pilot)
        verdict, facts = panel.section_text("verdict"), panel.section_text("facts")
        done = not verdict.startswith("checking") and "checking" not in facts and "looking for" not in verdict
        if done or time.perf_counter() > end:
            break
        await pilot.pause(0.05)
    badge = verdict.split()[0] if verdict.split() else ""
    fails = any(line.lstrip().startswith("✗") for line in panel.section_text("problems").splitlines())
    return badge, fails, done


async def measure(name: str, source: Path, doc_key: str | None, within: float, visit: bool) -> dict:
    """Open a new workspace on ``source`` and measure (module docstring). Returns the figures."""
    from mtcb_curate.app.controller import ReviewController
    from mtcb_curate.app.sources import Options, open_review
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.review import ReviewScreen
    from mtcb_curate.tui.screens.review_rows import FAIL_MARK, VERDICT_MARK

    stamps: dict[str, float] = {}
    after_frame, absorb = ReviewScreen._after_frame, ReviewController.absorb_analysis

    def first_frame(self, shown):
        stamps.setdefault("first_frame", time.perf_counter())
        return after_frame(self, shown)

    def absorbed(self, analysis):
        out = absorb(self, analysis)
        stamps.setdefault("taken", time.perf_counter())
        return out

    ReviewScreen._after_frame, ReviewController.absorb_analysis = first_frame, absorbed
    columns = {"doc_key": doc_key} if doc_key else {}
    t_open = time.perf_counter()
    session, _ = open_review(Options(name, source=[str(source)], columns=columns))
    out: dict = {"pairs": len(session), "open_s": time.perf_counter() - t_open}
    try:
        app = CurateApp(session)
        async with app.run_test(size=SIZE) as pilot:
            while "first_frame" not in stamps:
                await pilot.pause(0.01)
            t0 = stamps["first_frame"]
            while time.perf_counter() - t0 < within or "taken" not in stamps:
                await pilot.pause(0.02)
                if time.perf_counter() - t0 > 600:
                    break
            await _idle(app, pilot)
            screen = app.screen
            out["taken_s"] = stamps["taken"] - t0 if "taken" in stamps else None
            out["snapshot_s"] = time.perf_counter() - t0
            marks = _marks(screen)
            out["marks"] = {m: sum(1 for v, _ in marks.values() if v == m) for m in set(v for v, _ in marks.values())}
            out["fail_marks"] = sum(1 for _, f in marks.values() if f == FAIL_MARK)
            if not visit:
                return out
            differ: list[dict] = []
            not_landed = []
            t_visit = time.perf_counter()
            ids = list(screen.controller.queue.ids)
            for i, pid in enumerate(ids):
                if i:
                    await pilot.press("j")
                assert screen.controller.queue.current == pid, (pid, screen.controller.queue.current)
                badge, fails, done = await _panel_of(app, pilot, pid)
                if not done:
                    not_landed.append(pid)
                want_v = VERDICT_MARK.get(badge.lower(), "?")
                want_f = FAIL_MARK if fails and session.status(pid) is not Status.REJECTED else " "
                v, f = marks[pid]
                # the check column also shows ⊄ (findability, after F) on a pair that fails nothing
                if v != want_v or (f == FAIL_MARK) != (want_f == FAIL_MARK):
                    differ.append({"pair": pid, "queue": v + f, "panel": badge + (" fails" if fails else "")})
            out["visit_s"] = time.perf_counter() - t_visit
            out["differ"] = differ
            out["not_landed"] = not_landed
    finally:
        ReviewScreen._after_frame, ReviewController.absorb_analysis = after_frame, absorb
        session.workspace.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="a dataset folder (corpus and questions)")
    ap.add_argument("--name", default="ficha", help="the dataset profile, as on the command line (default ficha)")
    ap.add_argument("--doc-key", default=None, help="the questions' document key column (--doc-key of the CLI)")
    ap.add_argument("--within", type=float, default=WITHIN_S, help="seconds after the first frame (default 5)")
    ap.add_argument("--no-visit", action="store_true", help="only the timing and the marks, no visit of each pair")
    ap.add_argument("--json", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-marks-") as tmp:
        for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[var] = str(Path(tmp) / var.lower())
        os.environ.pop("MTCB_CURATE_DATABASE_URL", None)
        load = os.getloadavg()
        out = asyncio.run(measure(args.name, args.source.resolve(), args.doc_key, args.within, not args.no_visit))
    print(f"Python {platform.python_version()}; terminal {SIZE[0]}x{SIZE[1]} (Pilot); load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the start")
    print(f"{args.source}: {out['pairs']:,} pairs, a new workspace (opened in {out['open_s']:.1f} s)")
    taken = out["taken_s"]
    print(f"   analysis taken {taken:.2f} s after the first frame" if taken is not None else
          "   analysis NOT taken")
    print(f"   marks read {out['snapshot_s']:.2f} s after the first frame: "
          + ", ".join(f"{repr(k)} {v}" for k, v in sorted(out["marks"].items())) + f"; ▲ {out['fail_marks']}")
    ok = taken is not None and taken <= args.within
    if "differ" in out:
        n = len(out["differ"])
        print(f"   every pair visited ({out['visit_s']:.1f} s): {n} queue mark(s) differ from the panel"
              + (f"; the panel's full check had not landed on {len(out['not_landed'])}" if out["not_landed"] else ""))
        for d in out["differ"][:20]:
            print(f"     #{d['pair']}: queue {d['queue']!r}, panel {d['panel']}")
        ok = ok and n == 0 and not out["not_landed"]
    print(f"   target (within {args.within:g} s, no mark differs): {'met' if ok else 'NOT met'}")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
