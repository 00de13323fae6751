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
- screen open: the review app on that workspace, its start-up passage scan finished (and its
  other start-up workers, clusters and set-wide checks, or ``--settle`` seconds passed), then
  ``T`` to the first numbers shown (the screen reuses the scan's verdicts and the disk caches),
  and to every figure;
- screen open cold: the same on a second fresh workspace (no disk cache): the first numbers
  (nothing verified, counted or tokenized by the screen), then the verdicts and passage tokens,
  then the windows once the screen's worker has tokenized the corpus.

Anchors measured in the same run (the machine is shared; ratios travel, seconds do not):

- ``pandas.read_parquet`` of the dataset's two parquet files, in a new process (what any tool
  pays to start and load this data): the cached runs are printed as a ratio of it;
- tiktoken ``encode_ordinary`` of the whole corpus on one thread, in this process (what any
  exact 8,192-token windowing must pay): the cold runs are printed as a ratio of it.

Each ``stats`` run gets a fresh user cache directory (``XDG_CACHE_HOME``: the window cache is
shared by workspaces) for cold, the same one for cached; CPU seconds of the child process are
printed next to wall seconds (on a loaded machine wall time mostly measures the queue).

Targets: the screen <= 1 s at ficha scale and <= 5 s at 100,000 pairs (computed in a
worker); ``stats --json`` <= 5 s at 100,000 pairs.
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


def _child(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU user+system) seconds of ``argv`` in a new process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{argv[2:4]} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli(src: Path, ws: Path, out: Path, cache: Path) -> tuple[float, float]:
    """(wall, CPU) of ``mtcb-curate stats ficha --workspace WS --json OUT`` in a new process
    with ``XDG_CACHE_HOME=cache``."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", XDG_CACHE_HOME=str(cache))
    return _child([sys.executable, "-m", "mtcb_curate", "stats", "ficha", "--workspace", str(ws),
                   "--json", str(out)], env)


def _anchor_pandas(src: Path) -> tuple[float, float]:
    """(wall, CPU) of a new process importing pandas and reading the dataset's parquet files."""
    files = sorted(str(p) for p in src.rglob("*.parquet"))
    code = "import sys, pandas as pd\nfor f in sys.argv[1:]: pd.read_parquet(f)"
    return _child([sys.executable, "-c", code, *files], dict(os.environ))


def _anchor_tiktoken(src: Path) -> tuple[float, float]:
    """(wall, CPU) of tiktoken ``encode_ordinary`` over every corpus text, one thread."""
    import pandas as pd

    from mtcb_curate.dataset.tokens import encoding

    texts = pd.read_parquet(next(src.glob("corpus/*.parquet")))["text"].tolist()
    enc = encoding()
    w0, c0 = time.perf_counter(), time.process_time()
    for t in texts:
        enc.encode_ordinary(t)
    return time.perf_counter() - w0, time.process_time() - c0


async def _screen(ws: Path, settle: float) -> dict[str, float | bool]:
    """The review app on ``ws`` at 120x30: once its passage scan is done, and its other start-up
    workers (near-duplicate clusters, set-wide checks) too or ``settle`` seconds have passed,
    ``T`` is pressed. Seconds from ``T`` until the screen shows its first numbers (``first``),
    the verdicts and tokens (``counted``: nothing pending but maybe the windows) and everything
    (``full``: the windows too); ``scan`` the seconds the start-up scan took before ``T`` and
    ``settled`` whether the other start-up workers were done by then."""
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.stats import StatsScreen, _windows_pending

    session = open_session(Options("ficha", workspace=ws))
    app = CurateApp(session)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            t0 = time.perf_counter()
            review = app.screen
            while not all(review.controller.verdicts.cached(i) is not None for i in (0, len(session) - 1)):
                await pilot.pause(0.02)
            scan = time.perf_counter() - t0
            try:
                await asyncio.wait_for(app.workers.wait_for_complete(), settle)
                settled = True
            except asyncio.TimeoutError:
                settled = False
            out: dict[str, float | bool] = {"scan": scan, "settled": settled}

            def shown(done) -> bool:
                # the screen's handler sets ``stats`` and then mounts the sections built from it
                screen = app.screen
                return (isinstance(screen, StatsScreen) and screen.stats is not None and done(screen.stats)
                        and bool(screen.query_one("#stats-body").children))

            t0 = time.perf_counter()
            # Pilot's press waits until the app is idle, which the later passes delay: poll
            # beside it instead.
            press = asyncio.create_task(pilot.press("T"))
            for name, done in (("first", lambda st: True), ("counted", lambda st: not any(st.pending.values())),
                               ("full", lambda st: not _windows_pending(st))):
                while not shown(done):
                    await asyncio.sleep(0.005)
                out[name] = time.perf_counter() - t0
            await press
            return out
    finally:
        session.workspace.close()


def _workspace(src: Path, ws: Path) -> None:
    from mtcb_curate.app.sources import Options, open_session

    open_session(Options("ficha", source=[str(src)], workspace=ws)).workspace.close()


def bench(src: Path, root: Path, settle: float = 60.0) -> None:
    """Print the figures for the dataset at ``src`` (workspaces under ``root``)."""
    import json

    import shutil

    tag = src.name
    ws, ws2 = root / f"ws-{tag}", root / f"ws-{tag}-screen"
    cache, cache2 = root / f"cache-{tag}", root / f"cache-{tag}-screen"
    for path in (ws, ws2, cache, cache2):
        shutil.rmtree(path, ignore_errors=True)
    _workspace(src, ws)
    pw, pc = _anchor_pandas(src)
    tw, tc = _anchor_tiktoken(src)
    print(f"{tag}: anchors: pandas reads the parquet (new process) {pw:.2f} s wall, {pc:.2f} s CPU; "
          f"tiktoken encodes the corpus {tw:.2f} s wall, {tc:.2f} s CPU (load average {os.getloadavg()[0]:.2f})",
          flush=True)
    cw, cc = _cli(src, ws, root / f"stats-{tag}.json", cache)
    kw, kc = _cli(src, ws, root / f"stats-{tag}.json", cache)
    data = json.loads((root / f"stats-{tag}.json").read_text())
    pairs, docs = data["scope"]["pairs"], data["coverage"]["documents"]
    print(f"{tag}: {pairs:,} pairs, {docs:,} documents (load average {os.getloadavg()[0]:.2f})", flush=True)
    print(f"  stats --json cold    {cw:6.2f} s wall, {cc:6.2f} s CPU = {cc / tc:.2f}x tiktoken's CPU", flush=True)
    print(f"  stats --json cached  {kw:6.2f} s wall, {kc:6.2f} s CPU = {kc / pc:.2f}x pandas' CPU", flush=True)
    os.environ["XDG_CACHE_HOME"] = str(cache)
    r = asyncio.run(_screen(ws, settle))
    print(f"  screen, T to numbers, caches filled: {r['first']:6.2f} s = {r['first'] / pw:.2f}x pandas' wall, all "
          f"figures at {r['full']:.2f} s (start-up scan {r['scan']:.2f} s before T; other start-up workers "
          f"{'done' if r['settled'] else f'still running after {settle:.0f} s'})", flush=True)
    _workspace(src, ws2)
    os.environ["XDG_CACHE_HOME"] = str(cache2)
    r = asyncio.run(_screen(ws2, settle))
    print(f"  screen, T to numbers, new workspace and cache: {r['first']:6.2f} s = {r['first'] / pw:.2f}x pandas' wall; "
          f"verdicts and tokens at {r['counted']:.2f} s, windows at {r['full']:.2f} s = {r['full'] / tw:.2f}x "
          f"tiktoken's wall (start-up scan {r['scan']:.2f} s before T; other start-up workers "
          f"{'done' if r['settled'] else f'still running after {settle:.0f} s'})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=None,
                    help="dataset folders (Hub layout or corpus.jsonl + questions.jsonl)")
    ap.add_argument("--pairs", type=int, nargs="+", default=[1331, 100_000],
                    help="without --data: synthetic ficha-like sets of these many pairs")
    ap.add_argument("--out", type=Path, default=None, help="folder for workspaces and generated data")
    ap.add_argument("--settle", type=float, default=60.0,
                    help="seconds to wait for the app's other start-up workers before T (default 60)")
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
        bench(src.resolve(), root, args.settle)


if __name__ == "__main__":
    main()
