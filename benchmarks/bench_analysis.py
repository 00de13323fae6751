"""The analysis worker process alone, stage by stage, on a dataset folder.

    python benchmarks/bench_analysis.py --source benchmarks/out/pairs100k --keep /tmp/a
    python benchmarks/bench_analysis.py --compare /tmp/a /tmp/b

Opens a session on ``--source`` as ``mtcb-curate ficha --source`` does (a new workspace in a
temporary folder), writes the analysis's inputs as the app's ``AnalysisRunner`` does, then runs
``python -m mtcb_curate.worker JOB`` (the real worker process, its ``answerable`` stage in a
fresh process image as in the app) and reports:

- each stage's wall seconds (from the worker's progress lines) and the worker's CPU seconds in
  all (``RUSAGE_CHILDREN``);
- the worker's resident set sampled every 20 ms (``/proc/PID/status`` ``VmRSS``), its peak per
  stage (``(start)``: before the first progress line, reading the inputs and the batched
  exact search of the verification), and the kernel's peak (``ru_maxrss``, which an ``exec``
  keeps).

``--keep DIR`` copies the results (verdicts, links, groups, answerable reasons) to ``DIR`` as
plain files; ``--compare A B`` says whether two kept results are the same, field by field (the
way to check that a change to the analysis's code gives the same verdicts, links, clusters and
reasons). ``--app-root`` runs another checkout's code in the same harness.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def prepare(source: str, work: Path, name: str, doc_key: str | None = None) -> Path:
    """Write the analysis inputs of a new session on ``source`` under ``work``; the job file."""
    from mtcb_curate.app.analysis import AnalysisRunner, snapshot
    from mtcb_curate.app.sources import Options, open_session

    columns = {"doc_key": doc_key} if doc_key else {}
    session = open_session(Options(name, source=[source], workspace=work / "ws", columns=columns))
    try:
        runner = AnalysisRunner(session, lambda event: None, folder=work / "analysis")
        try:
            snap = snapshot(session, 85.0)
            text, groups = runner._keys(snap)
            runner._write_inputs(snap, snap.texts(), text, groups)
            from mtcb_curate.app import analysis_store as store

            corpus = store.corpus_path(work / "analysis", runner._corpus_fp)
            os.link(corpus, work / "corpus.bin")  # the runner deletes its corpus file as it closes
        finally:
            runner.close()
    finally:
        session.workspace.close()
    if not corpus.exists():
        os.replace(work / "corpus.bin", corpus)
    return store.text_dir(work / "analysis", text) / "job.json"


def run_worker(job: Path, app_root: str, spy: str | None = None) -> dict:
    """Run the worker on ``job``; its summary, stage seconds and memory (``spy``: under
    ``py-spy record``, its collapsed stacks written there)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": app_root}
    t0 = time.perf_counter()
    argv = [sys.executable, "-m", "mtcb_curate.worker", str(job)]
    if spy:
        argv = [str(Path(sys.executable).parent / "py-spy"), "record", "--format", "raw", "--rate", "50",
                "--subprocesses", "--output", spy, "--", *argv]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=app_root, env=env)
    stage = ["start"]
    peak: dict[str, float] = {}
    first: dict[str, float] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            rss = _rss_mb(proc.pid)
            if rss is not None:
                peak[stage[0]] = max(peak.get(stage[0], 0.0), rss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    done = None
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "progress" in msg:
            name = msg["progress"][0]
            if name != stage[0]:
                stage[0] = name
                first.setdefault(name, time.perf_counter() - t0)
        elif "ready" in msg:
            first.setdefault("ready", time.perf_counter() - t0)
        elif "done" in msg:
            done = msg["done"]
    proc.wait()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0 or done is None:
        raise SystemExit(f"the worker failed ({proc.returncode}): {err[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    marks = sorted(first.items(), key=lambda kv: kv[1])
    starts = {k: v for k, v in marks}
    order = [k for k, _ in marks]
    wall_by = {k: (starts[order[i + 1]] if i + 1 < len(order) else wall) - starts[k] for i, k in enumerate(order)}
    return {"wall_s": wall, "cpu_s": cpu, "maxrss_mb": after.ru_maxrss / 1024, "stage_wall_s": wall_by,
            "start_wall_s": marks[0][1] if marks else wall,
            "stage_peak_mb": peak, "summary": done}


def keep(job: Path, out: Path) -> None:
    """Copy the results of ``job``'s run to ``out`` as plain files."""
    import numpy as np

    spec = json.loads(job.read_text())
    here = job.parent
    out.mkdir(parents=True, exist_ok=True)
    for name in ("verdicts.npz", "links.npz"):
        with np.load(here / name, allow_pickle=False) as z:
            np.savez(out / name, **{k: z[k] for k in z.files})
    shutil.copy(here / "answerable.json", out / "answerable.json")
    groups = next(p for p in here.iterdir() if p.name.startswith("groups-"))
    shutil.copytree(groups, out / "groups", dirs_exist_ok=True)
    (out / "job.json").write_text(json.dumps({k: spec[k] for k in ("threshold", "name")}))


def compare(a: Path, b: Path) -> int:
    """Print the differences between two kept results; 0 when none."""
    import numpy as np

    bad = 0
    for name in ("verdicts.npz", "links.npz"):
        with np.load(a / name, allow_pickle=False) as za, np.load(b / name, allow_pickle=False) as zb:
            if sorted(za.files) != sorted(zb.files):
                print(f"{name}: fields differ {sorted(za.files)} / {sorted(zb.files)}")
                bad += 1
            for k in sorted(set(za.files) & set(zb.files)):
                x, y = za[k], zb[k]
                if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                    print(f"{name}:{k}: differ ({x.shape} / {y.shape})")
                    bad += 1
                else:
                    print(f"{name}:{k}: same {x.shape}")
    ja, jb = json.loads((a / "answerable.json").read_text()), json.loads((b / "answerable.json").read_text())
    ja.pop("stamp", None), jb.pop("stamp", None)
    print(f"answerable.json: {'same' if ja == jb else 'DIFFER'}")
    bad += ja != jb
    fa = sorted(p.relative_to(a / "groups") for p in (a / "groups").rglob("*") if p.is_file())
    fb = sorted(p.relative_to(b / "groups") for p in (b / "groups").rglob("*") if p.is_file())
    if fa != fb:
        print(f"groups: files differ {fa} / {fb}")
        bad += 1
    for rel in sorted(set(fa) & set(fb)):
        same = (a / "groups" / rel).read_bytes() == (b / "groups" / rel).read_bytes()
        if not same and rel.suffix == ".npz":
            with np.load(a / "groups" / rel, allow_pickle=False) as za, np.load(b / "groups" / rel,
                                                                               allow_pickle=False) as zb:
                same = sorted(za.files) == sorted(zb.files) and all(np.array_equal(za[k], zb[k]) for k in za.files)
        print(f"groups/{rel}: {'same' if same else 'DIFFER'}")
        bad += not same
    print("identical" if not bad else f"{bad} difference(s)")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="dataset folder (as --source of mtcb-curate ficha)")
    ap.add_argument("--name", default="ficha")
    ap.add_argument("--doc-key", help="the document key column (as --doc-key of the commands)")
    ap.add_argument("--keep", help="copy the results here")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    ap.add_argument("--app-root", default=str(ROOT), help="the checkout whose worker runs")
    ap.add_argument("--tmp", help="parent folder for the workspace")
    ap.add_argument("--spy", help="run the worker under py-spy, collapsed stacks to this file")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(Path(args.compare[0]), Path(args.compare[1]))
    if not args.source:
        ap.error("--source or --compare")
    work = Path(tempfile.mkdtemp(dir=args.tmp, prefix="bench-analysis-"))
    try:
        t = time.perf_counter()
        job = prepare(os.path.abspath(args.source), work, args.name, args.doc_key)
        print(f"inputs written in {time.perf_counter() - t:.1f} s; load average {os.getloadavg()[0]:.1f}",
              flush=True)
        got = run_worker(job, os.path.abspath(args.app_root), args.spy)
        print(f"worker: {got['cpu_s']:.1f} s CPU, {got['wall_s']:.1f} s wall, peak RSS {got['maxrss_mb']:.0f} MB "
              f"(ru_maxrss); load average {os.getloadavg()[0]:.1f}")
        # before the first progress line: reading the inputs, the batched exact search
        print(f"  {'(start)':>10}: {got['start_wall_s']:6.1f} s wall, "
              f"peak RSS {got['stage_peak_mb'].get('start', 0):.0f} MB")
        for stage, s in got["stage_wall_s"].items():
            print(f"  {stage:>10}: {s:6.1f} s wall, peak RSS {got['stage_peak_mb'].get(stage, 0):.0f} MB")
        print(f"  summary: {json.dumps(got['summary'])}")
        if args.keep:
            keep(job, Path(args.keep))
            print(f"results kept in {args.keep}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
