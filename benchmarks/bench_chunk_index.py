"""Benchmark the bulk chunk_index repair, and count squad-mtcb's near-duplicate clusters that
exist only through shared evidence.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_chunk_index.py [--squad DIR] [--repeat N]

Two parts, both on ``../shared/data/squad-mtcb`` (1,299 SQuAD pairs over 8 Wikipedia articles,
``chunk_index`` numbering paragraphs, not MTCB windows):

1. **Bulk repair**: ``verify.chunk_index.propose_chunk_indexes`` for every pair. Timed cold (a
   fresh ``CorpusIndex``: tokenizing the 8 documents is part of it) and warm (the windows
   cached, as in the app after its first window pass), each given the verification's results;
   the verification itself (``verify_dataset``) is timed apart. Printed: the time, the pairs
   whose chunk_index changes, the refusals, and whether every located pair's window holds its
   passage once the fixes are applied.
2. **Near-duplicate clusters**: ``neardup.find_clusters`` on the squad questions, as the app
   calls it (``app/clusters.find``: every reason in ``REASONS``, no located spans, so passages
   are compared as text), with located spans (``neardup.passage_spans``), and without the
   passage rules (``reasons`` minus ``REASON_SAME_PASSAGE`` and ``REASON_OVERLAP``: the
   ``reasons=`` argument is what controls the "same or overlapping passage" rule). Printed: the
   cluster counts, how many of the full run's clusters have no question-based link at all
   (only shared evidence links them), and how many contain no cluster of the question-only
   run (they would not exist without shared evidence).

The machine is shared: timings vary from run to run.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from mtcb_curate.dataset.loading import load
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate import neardup
from mtcb_curate.verify import CorpusIndex, verify_dataset
from mtcb_curate.verify.chunk_index import propose_chunk_indexes

HERE = Path(__file__).resolve().parent
SQUAD = HERE.parents[1] / "shared" / "data" / "squad-mtcb"
PASSAGE_REASONS = {neardup.REASON_SAME_PASSAGE, neardup.REASON_OVERLAP}


def bench_repair(squad: Path, repeat: int) -> None:
    ds = load("squad", get_profile("gacha"), [str(squad)])
    print(f"squad-mtcb: {len(ds.pairs):,} pairs, {len(ds.documents)} documents, "
          f"{sum(len(d.text) for d in ds.documents.values()):,} characters")
    t = time.perf_counter()
    results = verify_dataset(ds, count_tokens=False).results
    print(f"verify_dataset (exact/normalized/fuzzy, no token counts): {time.perf_counter() - t:.3f} s")

    cold, warm = [], []
    for _ in range(repeat):
        index = CorpusIndex.from_dataset(ds)
        t = time.perf_counter()
        fixes = propose_chunk_indexes(index, results)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        propose_chunk_indexes(index, results)
        warm.append(time.perf_counter() - t)
    t = time.perf_counter()
    propose_chunk_indexes(ds)
    whole = time.perf_counter() - t
    print(f"propose_chunk_indexes, {len(results):,} pairs: cold (tokenizing the documents) "
          f"best {min(cold) * 1000:.1f} ms of {repeat}; warm (windows cached) best {min(warm) * 1000:.2f} ms; "
          f"on the Dataset (verification included) {whole:.3f} s")

    changed = [f for f in fixes if f.new is not None and f.new != f.old]
    refused = [f for f in fixes if f.new is None]
    print(f"fixes: {len(fixes):,}; chunk_index changes for {len(changed):,} pairs; refused {len(refused)}; "
          f"new values {sorted({f.new for f in changed})}")
    located = sum(r.start is not None for r in results)
    held_before = sum(r.in_chunk is True for r in results)
    new = {f.pair_id: f.new for f in changed}
    ds.pairs[:] = [replace(p, chunk_index=new.get(p.id, p.chunk_index)) for p in ds.pairs]
    after = verify_dataset(ds, count_tokens=False).results
    held_after = sum(r.in_chunk is True for r in after)
    print(f"located pairs whose chunk_index window holds the passage: {held_before:,} of {located:,} before, "
          f"{held_after:,} of {located:,} after")


def bench_clusters(squad: Path) -> None:
    ds = load("squad", get_profile("gacha"), [str(squad)])
    items = neardup.items_from_dataset(ds)
    spans = neardup.passage_spans(ds, items)
    question_only = [r for r in neardup.REASONS if r not in PASSAGE_REASONS]
    t = time.perf_counter()
    as_app = neardup.find_clusters(items)
    t_app = time.perf_counter() - t
    with_spans = neardup.find_clusters(items, spans=spans)
    t = time.perf_counter()
    no_passage = neardup.find_clusters(items, reasons=question_only)
    t_q = time.perf_counter() - t
    print(f"\nnear-duplicate clusters on {len(items):,} squad questions (threshold {neardup.DEFAULT_THRESHOLD:g}):")
    q_sets = [set(c.ids) for c in no_passage]
    for name, clusters in (("as the app calls it (no spans)", as_app), ("with located spans", with_spans)):
        only_evidence = [c for c in clusters if not set(c.reasons) - PASSAGE_REASONS]
        no_question_cluster = [c for c in clusters if not any(q <= set(c.ids) for q in q_sets)]
        members = sum(c.size for c in clusters)
        print(f"  {name}: {len(clusters)} clusters ({members:,} pairs); linked only by shared evidence "
              f"(same/overlapping passage): {len(only_evidence)}; holding no question-only cluster: "
              f"{len(no_question_cluster)}")
    print(f"  without the passage rules (reasons = REASONS minus '{neardup.REASON_SAME_PASSAGE}', "
          f"'{neardup.REASON_OVERLAP}'): {len(no_passage)} clusters ({sum(c.size for c in no_passage):,} pairs)")
    print(f"  find_clusters time: {t_app:.2f} s with every reason, {t_q:.2f} s question rules only")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad", type=Path, default=SQUAD)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not (args.squad / "questions.jsonl").is_file():
        raise SystemExit(f"{args.squad} has no questions.jsonl")
    bench_repair(args.squad, args.repeat)
    bench_clusters(args.squad)


if __name__ == "__main__":
    main()
