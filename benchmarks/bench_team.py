"""Benchmark the shared PostgreSQL workspace against SQLite, in the same run.

Run from the project root (the project installed in the current Python; PostgreSQL's
``initdb``/``pg_ctl`` on PATH or in /usr/lib/postgresql/*/bin, run as root or a user who may
start it)::

    python benchmarks/bench_team.py                    # a throw-away local server, defaults
    python benchmarks/bench_team.py --url postgresql://me@db/bench --pairs 20000 --decisions 2000

The throw-away server keeps PostgreSQL's default durability (fsync on, synchronous_commit on);
SQLite runs in WAL mode with synchronous=NORMAL, the app's default. What is measured (wall
clock, ``time.perf_counter``):

- ``decide``: one ``Store.decide`` call, a committed transaction (read the previous decision,
  write the decision and its history entry; on PostgreSQL one statement, one round trip),
  ``--decisions`` times on random pairs; median and p99 in milliseconds, and its ratio to the
  one-row commit anchor;
- ``session decide``: the same through ``ReviewSession.decide`` (what a key press runs);
- ``split decide`` (throw-away server only): ``decide`` on a pair of a work split, claimed
  first with ``claim_next`` (not timed), ``--decisions`` / 4 times;
- ``open``: ``app.sources.open_session`` on a ``--pairs``-pair source (JSON Lines in a temporary
  folder) whose workspace holds a decision and a history entry for every pair; median of 3.
  The source's loading is the same for both backends; the open of the source alone is printed
  too, so the workspace's share can be read off;
- ``commit``: the anchor of a durable commit on that server: one one-row upsert in its own
  transaction (PostgreSQL waits for the WAL flush, an fsync, before it answers a COMMIT), and
  one ``SELECT 1`` round trip;
- the same ``decide`` with ``synchronous_commit=off`` for the session (libpq
  ``options=-csynchronous_commit%3Doff`` in the URL): the COMMIT returns before the fsync; a
  crash of the server (not of a client) can then lose the last fraction of a second of
  decisions, never corrupt the database.

Targets (README): decide <= 5 ms median on a local PostgreSQL; open of a 20,000-pair shared
workspace <= 3 s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_source(folder: Path, n: int) -> Path:
    """A ficha-shaped source of ``n`` pairs over 50 documents."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = []
    for d in range(50):
        docs.append({"ticker": f"T{d:03d}", "text": " ".join(f"Company {d} fact {i} is stated here." for i in
                                                             range(n // 50 + 1))})
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(doc) + "\n")
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            d = i % 50
            f.write(json.dumps({"question": f"What is fact {i // 50} of company {d}?", "answer": f"fact {i // 50}",
                                "supporting_passage": f"Company {d} fact {i // 50} is stated here.",
                                "ticker": f"T{d:03d}", "chunk_index": None}) + "\n")
    return folder


def ms(values: list[float]) -> str:
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    return f"median {statistics.median(values) * 1000:6.2f} ms  p99 {p99 * 1000:6.2f} ms"


def run(target, source: Path, n_pairs: int, n_decisions: int, label: str) -> dict:
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.store.opening import open_workspace

    opts = Options("ficha", source=[str(source)], workspace=target, curator="bench")
    s = open_session(opts)  # binds the workspace to the source
    s.workspace.close()
    with open_workspace(target, curator="bench") as ws:
        ws.decide_many({pid: ("accepted", None) for pid in range(n_pairs)})  # a decision for every pair
        rng = random.Random(1)
        times = []
        for _ in range(n_decisions):
            pid = rng.randrange(n_pairs)
            t0 = time.perf_counter()
            ws.decide(pid, "rejected", "trivial")
            times.append(time.perf_counter() - t0)
    opens = []
    for _ in range(3):
        t0 = time.perf_counter()
        s = open_session(opts)
        opens.append(time.perf_counter() - t0)
        if len(opens) < 3:
            s.workspace.close()
    rng = random.Random(2)
    session_times = []
    for _ in range(n_decisions // 4):
        pid = rng.randrange(n_pairs)
        t0 = time.perf_counter()
        s.decide(pid, Status.ACCEPTED)
        session_times.append(time.perf_counter() - t0)
    s.workspace.close()
    print(f"{label:10s} decide          {ms(times)}")
    print(f"{label:10s} session decide  {ms(session_times)}")
    print(f"{label:10s} open {n_pairs} pairs  median {statistics.median(opens):.2f} s  "
          f"({', '.join(f'{o:.2f}' for o in opens)})")
    return {"decide_ms": statistics.median(times) * 1000, "open_s": statistics.median(opens)}


def _async_url(url: str, server) -> str:
    """A second, empty workspace on the same server whose sessions commit without waiting for
    the WAL flush."""
    if server is not None:
        base = server.url("bench_async")
        return base.replace("options=-csearch_path%3Dbench_async",
                            "options=-csearch_path%3Dbench_async%20-csynchronous_commit%3Doff")
    return url + ("&" if "?" in url else "?") + "options=-csynchronous_commit%3Doff"


def split_run(url: str, n: int) -> None:
    """``decide`` on pairs of a work split (each claimed first with ``claim_next``; only the
    decide is timed), in an empty workspace of its own."""
    from mtcb_curate.store.postgres import PgWorkspace

    with PgWorkspace.open(url, curator="bench") as ws:
        ws.plan_work(range(n), 0.0)
        times = []
        for _ in range(n):
            pid = ws.claim_next()
            t0 = time.perf_counter()
            ws.decide(pid, "accepted")
            times.append(time.perf_counter() - t0)
    print(f"postgres   split decide    {ms(times)}")


def anchors(url: str, n: int) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_anchor (k int PRIMARY KEY, v int)")
        commits, trips = [], []
        for i in range(n // 4):
            t0 = time.perf_counter()
            with conn.transaction():
                conn.execute("INSERT INTO bench_anchor VALUES (1, %s) ON CONFLICT (k) DO UPDATE SET v=EXCLUDED.v", (i,))
            commits.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            trips.append(time.perf_counter() - t0)
        conn.execute("DROP TABLE bench_anchor")
    print(f"anchor     one-row commit  {ms(commits)}")
    print(f"anchor     SELECT 1        {ms(trips)}")
    return statistics.median(commits) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="an existing PostgreSQL database to use (its tables are created; use an empty one)")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--decisions", type=int, default=2000)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    server = None
    url = args.url
    if url is None:
        from pgserver import PgServer, find_bin_dir

        bin_dir = find_bin_dir()
        if bin_dir is None:
            print("no PostgreSQL binaries (initdb, pg_ctl): pass --url", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        server = PgServer(bin_dir, durable=True)
        print(f"local PostgreSQL started in {time.perf_counter() - t0:.1f} s (fsync on, synchronous_commit on)")
        url = server.url("bench")
    try:
        with tempfile.TemporaryDirectory(prefix="mtcb-bench-team-") as tmp:
            source = make_source(Path(tmp) / "src", args.pairs)
            from mtcb_curate.app.sources import Options
            from mtcb_curate.dataset import loading

            opts = Options("ficha", source=[str(source)])
            t0 = time.perf_counter()
            loading.load("ficha", opts.profile(), [str(source)], "bench")
            print(f"source alone: {args.pairs} pairs loaded in {time.perf_counter() - t0:.2f} s")
            commit_ms = anchors(url, args.decisions)
            sq = run(Path(tmp) / "ws", source, args.pairs, args.decisions, "sqlite")
            pg = run(url, source, args.pairs, args.decisions, "postgres")
            if server is not None:
                split_run(server.url("bench_split"), args.decisions // 4)
            pg_async = run(_async_url(url, server), source, args.pairs, args.decisions, "pg async")
            print(f"ratio postgres/sqlite: decide {pg['decide_ms'] / sq['decide_ms']:.1f}x "
                  f"(synchronous_commit=off: {pg_async['decide_ms'] / sq['decide_ms']:.1f}x), "
                  f"open {pg['open_s'] / sq['open_s']:.2f}x")
            print(f"ratio postgres decide / one-row commit: {pg['decide_ms'] / commit_ms:.2f}x")
    finally:
        if server is not None:
            server.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
