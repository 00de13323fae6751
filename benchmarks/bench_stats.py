"""Statistics timing: ``mtcb-curate stats NAME --json FILE`` (a fresh process each time, as a
user runs it) cold and cached, and the statistics screen's open time (Pilot: ``T`` pressed
until the numbers are shown), on one or more datasets.

    python benchmarks/bench_stats.py --data benchmarks/out/ficha benchmarks/out/pairs100k
    python benchmarks/bench_stats.py --pairs 1331 100000 [--out DIR]   # synthetic, generated

Each dataset gets a fresh workspace (under ``--out`` or a temporary folder). Figures printed:

- ``stats --json`` cold: the first run in that workspace: every pair verified (exact and
  normalized, no fuzzy step), every passage tokenized, every document tokenized for its
  8,192-token windows (on up to 4 threads); the per-pair figures and the windows are then
  cached on disk (``stats-windows/`` in the workspace);
- ``stats --json`` cached: the second run (the figures and windows read back);
- screen open: the review app on that workspace, its start-up workers (passage scan, clusters,
  set-wide checks) finished, then ``T`` to the numbers shown (the screen reuses the scan's
  verdicts and the disk caches);
- screen open cold: the same on a second fresh workspace (no disk cache): the numbers are
  shown first, then the windows filled in once the screen's worker has tokenized the corpus.

Targets (issue 17): ``stats --json`` <= 1 s at ficha scale and <= 5 s at 100,000 pairs; the
screen <= 1 s at ficha scale and <= 5 s at 100,000 pairs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_synthetic import make_dataset  # noqa: E402


def _cli(src: Path, ws: Path, out: Path) -> float:
    """Wall time of ``mtcb-curate stats ficha --workspace WS --json OUT`` in a new process."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "mtcb_curate", "stats", "ficha", "--workspace", str(ws),
                        "--json", str(out)], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"stats failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return seconds


async def _screen(ws: Path) -> tuple[float, float]:
    """(start-up workers' seconds, ``T`` to the numbers shown, ``T`` to the windows filled in) in
    the review app on ``ws``."""
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.stats import StatsScreen

    session = open_session(Options("ficha", workspace=ws))
    app = CurateApp(session)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            t0 = time.perf_counter()
            # The review screen starts its passage scan after the first refresh: wait until it
            # has verdicts, then until every start-up worker (scan, clusters, checks) is done.
            review = app.screen
            while not all(review.verdicts.cached(i) is not None for i in (0, len(session) - 1)):
                await pilot.pause(0.02)
            await app.workers.wait_for_complete()
            scan = time.perf_counter() - t0
            t0 = time.perf_counter()
            await pilot.press("T")
            while not (isinstance(app.screen, StatsScreen) and app.screen.stats is not None):
                await asyncio.sleep(0.005)
            await pilot.pause()
            first = time.perf_counter() - t0
            while any(d["windows"] is None for d in app.screen.stats.coverage["per_document"]):
                await asyncio.sleep(0.005)
            await pilot.pause()
            return scan, first, time.perf_counter() - t0
    finally:
        session.workspace.close()


def _workspace(src: Path, ws: Path) -> None:
    from mtcb_curate.app.sources import Options, open_session

    open_session(Options("ficha", source=[str(src)], workspace=ws)).workspace.close()


def bench(src: Path, root: Path) -> None:
    """Print the figures for the dataset at ``src`` (workspaces under ``root``)."""
    import json

    tag = src.name
    ws, ws2 = root / f"ws-{tag}", root / f"ws-{tag}-screen"
    _workspace(src, ws)
    cold = _cli(src, ws, root / f"stats-{tag}.json")
    cached = _cli(src, ws, root / f"stats-{tag}.json")
    data = json.loads((root / f"stats-{tag}.json").read_text())
    pairs, docs = data["scope"]["pairs"], data["coverage"]["documents"]
    print(f"{tag}: {pairs:,} pairs, {docs:,} documents (load average {os.getloadavg()[0]:.2f})", flush=True)
    print(f"  stats --json (new process)  cold {cold:6.2f} s   cached {cached:6.2f} s", flush=True)
    scan, screen, _ = asyncio.run(_screen(ws))
    print(f"  screen, T to numbers        cached {screen:6.2f} s (start-up workers {scan:.2f} s before it)", flush=True)
    _workspace(src, ws2)
    scan2, first, full = asyncio.run(_screen(ws2))
    print(f"  screen, T to numbers        cold {first:6.2f} s, windows filled in at {full:.2f} s "
          f"(start-up workers {scan2:.2f} s before it)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=None,
                    help="dataset folders (Hub layout or corpus.jsonl + questions.jsonl)")
    ap.add_argument("--pairs", type=int, nargs="+", default=[1331, 100_000],
                    help="without --data: synthetic ficha-like sets of these many pairs")
    ap.add_argument("--out", type=Path, default=None, help="folder for workspaces and generated data")
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="bench-stats-"))
    root.mkdir(parents=True, exist_ok=True)
    sources = args.data
    if not sources:
        sources = []
        for n in args.pairs:
            src = root / f"syn-{n}"
            if not (src / "README.md").exists():
                make_dataset(src, docs=88, pairs=n, mean_chars=550_000, seed=0)
            sources.append(src)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    for src in sources:
        bench(src.resolve(), root)


if __name__ == "__main__":
    main()
