"""Benchmark the quality checklist (``mtcb_curate.checks.run_checklist``) and print its figures.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_checklist.py               # 3 runs (about 10 s on 2 cores)
    python benchmarks/bench_checklist.py --runs 5
    python benchmarks/bench_checklist.py --data DIR    # another synthetic folder

Target: the whole checklist on the ficha-scale synthetic set in <= 1.2 s on the 2-core
machine, ``loads`` included.

The ficha-scale set (88 documents, about 48 MB of text, 1,331 pairs;
``benchmarks/make_synthetic.py``) is generated into ``benchmarks/out/ficha`` unless it is there
already, as ``bench_review.py`` does. It is opened as ``mtcb-curate check ficha --source DIR``
opens it: ``command_session`` without a workspace, so every pair counts as accepted and
``reviewed`` is skipped.

Each round is two fresh Python processes (so the tokenizer load, ``datasets``' import and the
first ``load_dataset`` count, as they do for ``mtcb-curate check``) sharing a new, empty user
cache folder (``XDG_CACHE_HOME``), as ``mtcb-curate check`` runs the checklist (``cache=True``:
``checks.cache``):

- **first**: ``run_checklist`` timed once in the first process, the cache empty (a corpus and
  passages never checked on this machine);
- **again**: the same call in the second process, the cache filled by the first (the data
  unchanged since the last check): the figure judged against the target;
- **warm**: a second call in that second process, for reference.

In the first process, ``loads`` alone is then timed without the cache, interleaved: as it is
(the corpus written as a sample) and with the whole corpus written and loaded (the anchor: what the check once
did), three calls each.

Per check: the check's own time (``CheckResult.seconds``); "setup" is the rest of the call
(``CorpusIndex``, the pair views). Medians over the rounds; the target is judged on the median
and on the slowest round. Opening the session (reading the parquet files) is shown apart: it is
not part of the checklist.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = HERE / "out"
FICHA = dict(docs=88, pairs=1331, mean_chars=550_000, seed=0)
TARGET_S = 1.2


def dataset_dir(path: str | None) -> Path:
    """The ficha-scale folder, generated when absent (as ``bench_review.py`` does)."""
    folder = Path(path) if path else DEFAULT_OUT / "ficha"
    meta = folder / "synthetic.json"
    if (folder / "README.md").is_file() and (folder / "questions").exists():
        if meta.is_file():
            have = json.loads(meta.read_text(encoding="utf-8")).get("params", {})
            if not path and have != FICHA:
                print(f"note: {folder} was made with {have}, not {FICHA}; using it as it is", file=sys.stderr)
        return folder.resolve()
    sys.path.insert(0, str(HERE))
    from make_synthetic import make_dataset

    print(f"generating {folder} ({FICHA['pairs']:,} pairs) ...", file=sys.stderr, flush=True)
    make_dataset(folder, **FICHA)
    return folder.resolve()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("HF_DATASETS_OFFLINE", "1")
    env.setdefault("MTCB_CURATE_CONFIG", os.devnull)  # no user config: default limits
    return env


def child(data: str, phase: str) -> int:
    """One process of a round (``phase``: ``first`` or ``again``); prints ``RESULT {json}``."""
    t0 = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from mtcb_curate.checks import run_checklist
    from mtcb_curate.app.sources import Options, command_session

    t_import = time.perf_counter() - t0
    out: dict = {"import": t_import}
    t = time.perf_counter()
    with command_session(Options("ficha", source=[data])) as (session, has_ws):
        out["open"] = time.perf_counter() - t
        out["pairs"] = len(session)
        out["documents"] = len(session.dataset.documents)
        out["chars"] = sum(len(d.text) for d in session.dataset.documents.values())
        for label in (("first",) if phase == "first" else ("again", "warm")):
            t = time.perf_counter()
            report = run_checklist(session, has_workspace=has_ws, loads=True, cache=True)
            total = time.perf_counter() - t
            out[label] = {"total": total, "checks": {c.id: c.seconds for c in report.checks},
                          "status": {c.id: c.status for c in report.checks},
                          "pairs": {c.id: len(c.pairs) for c in report.checks},
                          "loads_msg": report.get("loads").message}
        if phase == "first":
            # loads against its anchor, the whole corpus written and loaded (as before issue
            # 16), interleaved in this process, warm, without the cache
            from mtcb_curate.checks import loads as loads_check
            from mtcb_curate.checks.base import CheckContext
            from mtcb_curate.checks.gate import CHECKS_BY_ID, run_check

            ctx = CheckContext.build(session, has_workspace=has_ws, loads=True)
            sample = loads_check.CORPUS_SAMPLE_ROWS
            times: dict[str, list[float]] = {"sample": [], "whole": []}
            for _ in range(3):
                for label, rows in (("sample", sample), ("whole", 10**9)):
                    loads_check.CORPUS_SAMPLE_ROWS = rows
                    t = time.perf_counter()
                    r = run_check(CHECKS_BY_ID["loads"], ctx)
                    times[label].append(time.perf_counter() - t)
                    out.setdefault("loads_msg", {})[label] = r.message
            loads_check.CORPUS_SAMPLE_ROWS = sample
            out["loads_rounds"] = times
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def run_child(data: Path, phase: str, cache: str) -> dict:
    env = _env()
    env["XDG_CACHE_HOME"] = cache
    proc = subprocess.run([sys.executable, __file__, "--child", str(data), phase], stdout=subprocess.PIPE,
                          env=env, text=True, cwd=str(ROOT))
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(f"the benchmark child failed (exit {proc.returncode})")


def report(runs: list[dict], data: Path) -> None:
    from mtcb_curate.checks import CHECK_IDS

    med = statistics.median
    one = runs[0]
    print()
    print(f"mtcb-curate checklist benchmark · Python {platform.python_version()} · {os.cpu_count()} CPUs · "
          f"{len(runs)} rounds of two fresh processes sharing a new user cache folder")
    print(f"data: {data}  ({one['documents']} documents, {one['chars'] / 1e6:.1f} M characters, "
          f"{one['pairs']:,} pairs; no workspace: every pair accepted)")
    print()
    hdr = (f"{'check':<16} {'status':<6} {'pairs':>6} {'first median':>13} {'again median':>13} "
           f"{'again max':>10} {'warm median':>12}")
    print(hdr)
    print("-" * len(hdr))

    def col(label: str, cid: str | None) -> list[float]:
        if cid is None:  # setup: the call's time outside the checks
            return [r[label]["total"] - sum(r[label]["checks"].values()) for r in runs]
        return [r[label]["checks"][cid] for r in runs]

    for cid in [*CHECK_IDS, None]:
        first, again, warm = col("first", cid), col("again", cid), col("warm", cid)
        name = cid or "(setup)"
        status = one["again"]["status"][cid] if cid else ""
        pairs = one["again"]["pairs"][cid] if cid else ""
        print(f"{name:<16} {status:<6} {pairs:>6} {med(first):>11.3f} s {med(again):>11.3f} s "
              f"{max(again):>8.3f} s {med(warm):>10.3f} s")
    print("-" * len(hdr))
    first_t = [r["first"]["total"] for r in runs]
    again_t = [r["again"]["total"] for r in runs]
    warm_t = [r["warm"]["total"] for r in runs]
    verdict = "ok" if med(again_t) <= TARGET_S and max(again_t) <= TARGET_S else "MISSED"
    print(f"{'TOTAL':<16} {'':<6} {'':>6} {med(first_t):>11.3f} s {med(again_t):>11.3f} s {max(again_t):>8.3f} s "
          f"{med(warm_t):>10.3f} s")
    print(f"target <= {TARGET_S:g} s, again (median and max): {verdict}; first (cache empty): "
          f"{med(first_t):.3f} s median, {max(first_t):.3f} s max")
    print()
    print(f"not in the totals: importing mtcb_curate {med([r['import'] for r in runs]):.3f} s, opening the "
          f"session (parquet -> dataset) {med([r['open'] for r in runs]):.3f} s (medians)")
    print("first = run_checklist in a fresh process with an empty cache (tokenizer load, datasets import and")
    print("first load_dataset included); again = in the next fresh process, the cache filled by the first;")
    print("warm = a second call in that process. setup = CorpusIndex and pair views.")
    sample = [t for r in runs for t in r["loads_rounds"]["sample"]]
    whole = [t for r in runs for t in r["loads_rounds"]["whole"]]
    print()
    print(f"loads without the cache, warm, interleaved ({len(sample)} calls each): corpus written as a sample "
          f"{med(sample):.3f} s median, whole corpus written (the anchor) {med(whole):.3f} s "
          f"median: {med(sample) / med(whole):.2f}x")
    print(f"  message, first: {one['first']['loads_msg']}")
    print(f"  message, again: {one['again']['loads_msg']}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2])
    ap = argparse.ArgumentParser(description="Time the quality checklist on the ficha-scale synthetic set.")
    ap.add_argument("--data", metavar="DIR", help="ficha-scale dataset folder (default: benchmarks/out/ficha, "
                                                  "generated if absent)")
    ap.add_argument("--runs", type=int, default=3, help="rounds (default 3; the median is shown)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    data = dataset_dir(args.data)
    runs = []
    for i in range(max(1, args.runs)):
        t = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="bench-checklist-cache-") as cache:
            first = run_child(data, "first", cache)
            again = run_child(data, "again", cache)
        runs.append({**again, "first": first["first"], "loads_rounds": first["loads_rounds"]})
        print(f"  round {i + 1}/{args.runs}: first {first['first']['total']:.2f} s, again "
              f"{again['again']['total']:.2f} s, warm {again['warm']['total']:.2f} s "
              f"({time.perf_counter() - t:.1f} s with start-up)", file=sys.stderr, flush=True)
    report(runs, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
