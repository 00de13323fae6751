"""What the chunker-separation statistics add to ``mtcb-curate preview`` (evidence density,
per-pair discrimination, paired bootstrap intervals, McNemar tests, pairs needed).

    python benchmarks/bench_separation.py [--data DIR ...] [--rounds 3] [--resamples 2000]

The anchor is the same command in the same run with the statistics switched off
(``--no-statistics``: the preview as it was before they existed; that path runs the same code).
Each measurement is a fresh ``mtcb-curate preview`` process (so scipy's import is counted), on
a workspace whose chunks, indexes and per-pair results are already cached (a warm-up run first):
what is left is the scoring summary and, with the statistics, their cost. Rounds alternate the
two commands; medians are reported. Chunkers: recursive:2048, recursive:512, token:512,
sentence:512 (BM25). Target: at most 2 s added at squad-mtcb scale with 2,000 resamples.

Default data: ../shared/data/squad-mtcb (1,299 pairs) and ../shared/data (33 pairs).
Also checks that two runs with the same seed write the same figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SPECS = ("recursive:2048", "recursive:512", "token:512", "sentence:512")


def cli(*args: str, env: dict, cpu: list | None = None) -> float:
    """Wall seconds one ``mtcb-curate`` process takes (it must exit 0); its CPU seconds (user +
    system) are appended to ``cpu``: on 2 cores shared with other jobs the wall time swings
    with their load, the CPU time much less (it is what a quiet machine's wall time would be)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mtcb_curate", *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def make_workspace(data: Path, ws: Path) -> None:
    from mtcb_curate.app.sources import Options, open_session

    session = open_session(Options(data.name, source=[str(data)], workspace=ws))
    session.workspace.close()


def bench(data: Path, rounds: int, resamples: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-separation-") as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache"), "XDG_DATA_HOME": str(tmp / "data"),
               "XDG_CONFIG_HOME": str(tmp / "config"), "HF_HUB_OFFLINE": "1"}
        ws = tmp / "ws"
        make_workspace(data, ws)
        base = [data.name, "--source", str(data), "--workspace", str(ws), "--all"]
        for s in SPECS:
            base += ["--chunker", s]
        cold = cli("preview", *base, "--no-statistics", env=env)  # chunks, indexes, per-pair results cached
        off, on, cpu_off, cpu_on = [], [], [], []
        for _ in range(rounds):
            off.append(cli("preview", *base, "--no-statistics", env=env, cpu=cpu_off))
            on.append(cli("preview", *base, "--resamples", str(resamples), env=env, cpu=cpu_on))
        a, b = statistics.median(off), statistics.median(on)
        ca, cb = statistics.median(cpu_off), statistics.median(cpu_on)
        outs = []
        for i in range(2):
            out = tmp / f"run{i}.json"
            cli("preview", *base, "--resamples", str(resamples), "--json", str(out), env=env)
            outs.append(json.loads(out.read_text()))
        sep = outs[0]["separation"]
        own = sep["seconds"]
        for o in outs:
            o.pop("seconds")
            o["separation"].pop("seconds")
        same = outs[0] == outs[1]
        inside = all(c["ci"][0] <= c["difference"] <= c["ci"][1] for c in sep["comparisons"])
        print(f"{data}: {sep['pairs']:,} pairs, {len(SPECS)} chunkers, {len(sep['comparisons'])} comparisons "
              f"({resamples:,} resamples, {sep['bootstrap']['method']})")
        print(f"  first (cold) preview without statistics: {cold:.2f} s")
        print(f"  preview, cached, without statistics (anchor): median {a:.2f} s  {[round(x, 2) for x in off]}")
        print(f"  preview, cached, with statistics:             median {b:.2f} s  {[round(x, 2) for x in on]}")
        print(f"  added: {b - a:+.2f} s ({b / a:.2f}x the anchor); the statistics' own time in the report: "
              f"{own:.2f} s; target: at most 2 s added -> {'met' if b - a <= 2 else 'NOT met'}")
        print(f"  CPU time (user + system), medians: without {ca:.2f} s, with {cb:.2f} s: added {cb - ca:+.2f} s "
              f"-> {'met' if cb - ca <= 2 else 'NOT met'} on CPU time")
        print(f"  load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")
        print(f"  same seed, same figures: {same}; every interval holds its estimate: {inside}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", action="append", type=Path)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--resamples", type=int, default=2000)
    args = p.parse_args()
    shared = ROOT.parent / "shared" / "data"
    for data in args.data or [shared / "squad-mtcb", shared]:
        bench(data, args.rounds, args.resamples)


if __name__ == "__main__":
    main()
