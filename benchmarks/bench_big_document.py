"""Benchmark moving between pairs of ONE 50 MB document.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_big_document.py                 # build /tmp/mtcb-big, measure
    python benchmarks/bench_big_document.py --presses 200 --mb 50 --out /tmp/mtcb-big
    python benchmarks/bench_big_document.py --profile       # cProfile of the key handling

The source (built once into ``--out`` unless it is there with the same parameters):
``corpus.jsonl`` with one document, ticker ``BIG``, made of the filings of
``/work/shared/data/corpus.jsonl`` (else the bundled ``sample_data/ficha`` corpus) repeated
until the text reaches ``--mb`` million characters; in copy k every digit d becomes
(d + k) mod 10, so a passage with a figure in it is unique. ``questions.jsonl`` holds
``--pairs`` pairs whose passages (200-400 characters, starting at a line start) are spread
evenly through the document: most verbatim, every fifth with a whitespace run doubled
(``normalized``), every tenth with a word dropped and another altered (``fuzzy``), and half of
them with a ``chunk_index`` (its window is tokenized in a worker when needed).

What is measured, in one child process (``mtcb-curate ficha --source OUT`` opened the same
way, under ``App.run_test(size=(160, 45))``; all times wall clock):

- ``open``: loading the source and the first drawn screen;
- ``key->frame``: ``j`` (next pair; ``k`` once the end is reached, and back) sent the way the
  pilot sends it; the clock stops when the screen shows the other pair and has been
  composited (as in ``bench_review.py``). Two paces: ``quiesced`` (between presses, untimed,
  every worker is left to finish and the process to go idle) and ``paced`` (a press every
  0.25 s whatever runs: the full passage check of the previous pair may be running);
- ``handler``: the screen's ``action_next`` alone;
- RSS (current and peak, from ``/proc/self/status``) after loading, after the first screen and
  after the presses.

Targets (README): key to frame <= 16 ms median, <= 50 ms p99.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = (160, 45)
TARGET_MEDIAN_MS = 16.0
TARGET_P99_MS = 50.0
SHARED_CORPUS = Path("/work/shared/data/corpus.jsonl")
_SHIFT = [str.maketrans("0123456789", "".join(str((d + k) % 10) for d in range(10))) for k in range(10)]


# ---------------------------------------------------------------------------------------------
# Building the source


def _filings() -> list[str]:
    """The texts of the shared FinanceBench filings, else of the bundled sample."""
    if SHARED_CORPUS.is_file():
        with SHARED_CORPUS.open(encoding="utf-8") as f:
            return [json.loads(line)["text"] for line in f if line.strip()]
    import pyarrow.parquet as pq

    texts: list[str] = []
    for f in sorted((ROOT / "sample_data" / "ficha" / "corpus").glob("*.parquet")):
        texts += [t for t in pq.read_table(f, columns=["text"]).column("text").to_pylist() if t]
    return texts


def build_text(mb: float) -> str:
    """One document of at least ``mb`` million characters (see the module docstring)."""
    base = "\n\n".join(_filings())
    target = int(mb * 1_000_000)
    parts: list[str] = []
    size = 0
    k = 0
    while size < target:
        part = base.translate(_SHIFT[k % 10])
        if size + len(part) > target:  # cut the last copy at a line end
            part = part[:max(0, part.find("\n", target - size) )] or part
        parts.append(part)
        size += len(part) + 2
        k += 1
    return "\n\n".join(parts)


def _fuzz(passage: str, rng: random.Random) -> str:
    words = passage.split(" ")
    if len(words) < 8:
        return passage + " (paraphrased)"
    i = rng.randrange(2, len(words) - 2)
    del words[i]
    j = rng.randrange(2, len(words) - 2)
    words[j] = words[j][::-1] + "x"
    return " ".join(words)


def build_source(out: Path, mb: float = 50.0, pairs: int = 50, seed: int = 0) -> dict:
    """Write ``out/corpus.jsonl`` and ``out/questions.jsonl`` (see the module docstring) unless
    they are there for the same parameters. Returns the parameters and the kinds of pairs."""
    params = {"mb": mb, "pairs": pairs, "seed": seed}
    meta = out / "big.json"
    if meta.is_file() and json.loads(meta.read_text())["params"] == params:
        return json.loads(meta.read_text())
    text = build_text(mb)
    rng = random.Random(seed)
    rows = []
    kinds = {"exact": 0, "normalized": 0, "fuzzy": 0}
    step = len(text) // pairs
    for i in range(pairs):
        at = text.find("\n", i * step + rng.randrange(0, max(1, step // 2))) + 1
        # a passage of 200-400 characters with at least 30 letters, starting at a line start
        while True:
            end = at + rng.randint(200, 400)
            passage = text[at:end]
            if sum(c.isalpha() for c in passage) > 30 and passage.strip() == passage:
                break
            at = text.find("\n", at + 1) + 1
        kind = "fuzzy" if i % 10 == 9 else "normalized" if i % 5 == 4 else "exact"
        if kind == "normalized":
            sp = passage.find(" ")
            passage = passage[:sp] + "  " + passage[sp + 1:] if sp > 0 else passage.replace("\n", " \n", 1)
        elif kind == "fuzzy":
            passage = _fuzz(passage, rng)
        kinds[kind] += 1
        chunk_index = (at // 4 // 7680) if i % 2 == 0 else None  # ~4 characters per token
        rows.append({"question": f"What does part {i} of the big filing state?", "answer": f"Answer {i}.",
                     "supporting_passage": passage, "ticker": "BIG", "company": "Big Filing Inc.",
                     "chunk_index": chunk_index})
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        f.write(json.dumps({"ticker": "BIG", "company": "Big Filing Inc.", "filing_type": "10K",
                            "filing_date": "2024-01-01", "text": text}) + "\n")
    with (out / "questions.jsonl").open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    info = {"params": params, "chars": len(text), "kinds": kinds}
    meta.write_text(json.dumps(info))
    return info


# ---------------------------------------------------------------------------------------------
# Child


def _rss_mb() -> dict[str, float]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return {"rss": out.get("VmRSS", 0.0), "peak": out.get("VmHWM", 0.0)}


async def _quiesce(app, idle_s: float = 0.004) -> None:
    """Wait (untimed) until no worker runs and the process has been idle for a moment."""
    import asyncio

    from textual.worker import WorkerState

    while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
        await asyncio.sleep(0.002)
    while True:
        c = time.process_time()
        await asyncio.sleep(idle_s)
        if time.process_time() - c < idle_s / 4:
            return


def child(data: str, ws: str, presses: int, profile: str | None) -> int:
    import asyncio

    from textual import events

    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.tui.app import CurateApp

    t0 = time.perf_counter()
    session = open_session(Options(name="ficha", source=[data], workspace=Path(ws)))
    t_open = time.perf_counter() - t0
    out: dict[str, object] = {"open_s": t_open, "mem_loaded": _rss_mb(), "pairs": len(session)}
    app = CurateApp(session)

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            out["first_screen_s"] = time.perf_counter() - t0
            out["mem_first_screen"] = _rss_mb()
            await _quiesce(app)
            out["mem_quiet"] = _rss_mb()
            scr = app.screen
            driver = app._driver
            direction = ["j"]

            async def press(pace: str) -> float:
                before = scr._shown_pair
                ids = scr.queue.ids
                if scr.queue.cursor + 1 >= len(ids):
                    direction[0] = "k"
                elif scr.queue.cursor == 0:
                    direction[0] = "j"
                key = events.Key(direction[0], direction[0])
                key.set_sender(app)
                t = time.perf_counter()
                driver.send_message(key)
                while scr._shown_pair == before:
                    await asyncio.sleep(0)
                await pilot._wait_for_screen()
                scr._on_timer_update()
                return time.perf_counter() - t

            prof = None
            if profile:
                import cProfile

                prof = cProfile.Profile()
                prof.enable()
            results: dict[str, list[float]] = {"quiesced": [], "paced": []}
            for _ in range(presses):
                results["quiesced"].append(await press("quiesced"))
                await _quiesce(app)
            for _ in range(presses):
                t = time.perf_counter()
                results["paced"].append(await press("paced"))
                await asyncio.sleep(max(0.0, 0.25 - (time.perf_counter() - t)))
            await _quiesce(app)
            handler = []
            for _ in range(min(presses, 50)):
                if scr.queue.cursor + 1 >= len(scr.queue.ids):
                    scr.queue.move_to(scr.queue.ids[0])
                t = time.perf_counter()
                scr.action_next()
                handler.append(time.perf_counter() - t)
                await pilot._wait_for_screen()
                scr._on_timer_update()
                await _quiesce(app)
            if prof is not None:
                prof.disable()
                prof.dump_stats(profile)
            out.update(results, handler=handler, mem_end=_rss_mb())
            print("RESULT " + json.dumps(out), flush=True)
            os._exit(0)

    asyncio.run(run())
    return 1


# ---------------------------------------------------------------------------------------------
# Parent


def _stats(xs: list[float]) -> str:
    import math
    import statistics

    s = sorted(x * 1000 for x in xs)
    if not s:
        return "no data"
    p99 = s[max(0, math.ceil(0.99 * len(s)) - 1)]
    return f"{statistics.median(s):7.1f} ms median {p99:7.1f} ms p99 {s[-1]:7.1f} ms max (n={len(s)})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/mtcb-big", help="folder of the built source")
    ap.add_argument("--mb", type=float, default=50.0, help="document size, million characters")
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--presses", type=int, default=100, help="key presses per pace")
    ap.add_argument("--profile", nargs="?", const="/tmp/mtcb-big.prof", default=None,
                    help="write a cProfile of the presses there and print its top entries")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], args.child[1], args.presses, args.profile)

    sys.path.insert(0, str(ROOT))
    t = time.perf_counter()
    info = build_source(Path(args.out), args.mb, args.pairs)
    print(f"source: {args.out}, one document of {info['chars']:,} characters, pairs {info['kinds']} "
          f"({time.perf_counter() - t:.1f} s)", flush=True)
    import tempfile

    ws = os.path.join(tempfile.mkdtemp(prefix="mtcb-big-ws-"), "ws")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TEXTUAL_ANIMATIONS="none",
               MTCB_CURATE_CONFIG=os.path.join(os.sep, "nonexistent", "mtcb-curate-bench.toml"))
    env.pop("TEXTUAL", None)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", args.out, ws, "--presses", str(args.presses)]
    if args.profile:
        cmd += ["--profile", args.profile]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, env=env, text=True)
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        print(p.stdout)
        raise SystemExit(f"the child failed (exit {p.returncode})")
    r = json.loads(line[7:])
    print(f"open (load the source): {r['open_s']:.2f} s; first screen drawn: {r['first_screen_s']:.2f} s")
    for pace in ("quiesced", "paced"):
        print(f"key->frame, {pace:<8}: {_stats(r[pace])}")
    print(f"handler (action_next): {_stats(r['handler'])}")
    for k in ("mem_loaded", "mem_first_screen", "mem_quiet", "mem_end"):
        print(f"RSS {k[4:]:<13}: {r[k]['rss']:6.0f} MB (peak so far {r[k]['peak']:.0f} MB)")
    import math
    import statistics

    q = sorted(r["quiesced"] + r["paced"])
    med = statistics.median(q) * 1000
    p99 = q[max(0, math.ceil(0.99 * len(q)) - 1)] * 1000
    ok = med <= TARGET_MEDIAN_MS and p99 <= TARGET_P99_MS
    print(f"target key->frame <= {TARGET_MEDIAN_MS:g} ms median, <= {TARGET_P99_MS:g} ms p99: "
          f"{med:.1f} / {p99:.1f} ms -> {'ok' if ok else 'MISSED'}")
    if args.profile:
        import pstats

        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
