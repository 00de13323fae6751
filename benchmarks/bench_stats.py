"""Statistics timing: ``stats --json`` (in-process) and the statistics screen's open time (Pilot,
``T`` pressed until the numbers are shown), on synthetic ficha-like data
(``make_synthetic.py``) at ficha scale (1,331 pairs) and at 100,000 pairs.

    python benchmarks/bench_stats.py [--pairs 1331 100000] [--out DIR]

Targets (issue 17): <= 1 s at ficha scale, <= 5 s at 100,000 pairs. The first run over a corpus
tokenizes it for the window coverage (about 0.1 s per MB) and caches the windows on disk; the
figures are printed cold (empty window cache) and warm.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_synthetic import make_dataset  # noqa: E402


def _cli(src: Path, ws: Path, out: Path) -> float:
    from mtcb_curate.cli import main

    t0 = time.perf_counter()
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["stats", "ficha", "--workspace", str(ws), "--json", str(out)])
    assert code == 0, code
    return time.perf_counter() - t0


async def _screen(src: Path, ws: Path) -> float:
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.stats import StatsScreen

    session = open_session(Options("ficha", workspace=ws))
    app = CurateApp(session)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            t0 = time.perf_counter()
            await pilot.press("T")
            while not (isinstance(app.screen, StatsScreen) and app.screen.stats is not None):
                await asyncio.sleep(0.005)
            await pilot.pause()
            return time.perf_counter() - t0
    finally:
        session.workspace.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, nargs="+", default=[1331, 100_000])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="bench-stats-"))
    for n in args.pairs:
        src = root / f"syn-{n}"
        if not (src / "README.md").exists():
            make_dataset(src, docs=88, pairs=n, mean_chars=550_000, seed=0)
        ws = root / f"ws-{n}"
        from mtcb_curate.app.sources import Options, open_session

        open_session(Options("ficha", source=[str(src)], workspace=ws)).workspace.close()
        cold = _cli(src, ws, root / f"stats-{n}.json")
        warm = _cli(src, ws, root / f"stats-{n}.json")
        screen = asyncio.run(_screen(src, ws))
        print(f"{n:>7,} pairs: stats --json cold {cold:.2f} s, warm {warm:.2f} s; screen open (T to numbers) "
              f"{screen:.2f} s", flush=True)


if __name__ == "__main__":
    main()
