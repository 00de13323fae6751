"""Findability preview at ficha scale: cold and cached times, and the overhead
against calling chonkie + bm25s directly on the same data in the same run.

    python benchmarks/bench_preview.py [--data DIR]

Data: benchmarks/make_synthetic.py's ficha-scale preset (88 documents, about 48 MB, 1,331
pairs), generated into benchmarks/out/ficha-scale when absent. One chunker (recursive:2048) and
BM25. Targets: cold <= 10 s, cached <= 1 s, overhead <= 1.5x. Then, on ../shared/data, the
preview before and after snapping every passage to the span ``verify`` locates (in a
throw-away workspace).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mtcb_curate.app.preview import run_preview  # noqa: E402
from mtcb_curate.app.sources import Options, open_session  # noqa: E402
from mtcb_curate.preview.chunkers import parse_spec  # noqa: E402


def direct(session, k: int = 10) -> float:
    """chonkie + bm25s called directly: chunk, index, retrieve top k, MTCB's hit test."""
    import bm25s
    from chonkie import RecursiveChunker

    t0 = time.perf_counter()
    ch = RecursiveChunker(chunk_size=2048)
    texts = [c.text for d in session.dataset.documents.values() if d.text for c in ch.chunk(d.text)]
    r = bm25s.BM25()
    r.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    views = [session.view(i) for i in session.ids()]
    q = bm25s.tokenize([v.question for v in views], stopwords="en", show_progress=False)
    res, _ = r.retrieve(q, k=k, show_progress=False)
    hits = sum(any(v.passage in texts[j] for j in row) for v, row in zip(views, res))
    dt = time.perf_counter() - t0
    print(f"direct chonkie + bm25s: {len(texts):,} chunks, hits@{k} {hits}, {dt:.2f} s")
    return dt


def ficha_scale(data: Path) -> None:
    if not (data / "corpus").is_dir():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_synthetic.py"), str(data)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("ficha", source=[str(data)], workspace=Path(tmp) / "ws"))
        try:
            docs = session.dataset.documents
            mb = sum(len(d.text) for d in docs.values()) / 1e6
            print(f"ficha scale: {len(docs)} documents, {mb:.1f} M characters, {len(session)} pairs")
            specs = [parse_spec("recursive:2048")]
            base = direct(session)
            t = time.perf_counter()
            cold = run_preview(session, specs, all_pairs=True, cache_dir=Path(tmp) / "ws")
            t_cold = time.perf_counter() - t
            t = time.perf_counter()
            warm = run_preview(session, specs, all_pairs=True, cache_dir=Path(tmp) / "ws")
            t_warm = time.perf_counter() - t
            print(cold.table())
            print(f"cold {t_cold:.2f} s (target <= 10), cached {t_warm:.2f} s (target <= 1; from cache: "
                  f"{warm.cached}), overhead cold / direct {t_cold / base:.2f}x (target <= 1.5)")
        finally:
            session.workspace.close()


def shared(data: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("ficha", source=[str(data)], workspace=Path(tmp) / "ws"))
        try:
            specs = [parse_spec(s) for s in ("recursive:2048", "recursive:512", "token:512", "sentence:512")]
            before = run_preview(session, specs, all_pairs=True, cache_dir=Path(tmp) / "ws")
            print("BEFORE snapping\n" + before.table())
            print(before.to_markdown())
            snapped = snap_all(session)
            after = run_preview(session, specs, all_pairs=True, cache_dir=Path(tmp) / "ws")
            print(f"AFTER snapping {snapped} passages to their located spans\n" + after.table())
            print(after.to_markdown())
        finally:
            session.workspace.close()


def snap_all(session) -> int:
    """Replace every locatable passage by the document span verification locates
    (``verify_pair``: exact, normalized or fuzzy), as snapping each pair in the app would."""
    from mtcb_curate.verify.verdict import verify_pair

    n = 0
    for pid in session.ids():
        v = session.view(pid)
        doc = session.dataset.document_for(v.pair)
        if doc is None:
            continue
        r = verify_pair(session.corpus_index, v.pair, v.passage, elsewhere=False, count_tokens=False, chunk=False)
        if r.start is None or r.end is None:
            continue
        span = doc.text[r.start:r.end]
        if span and span != v.passage:
            session.edit(pid, {"supporting_passage": span})
            n += 1
    return n


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "out" / "ficha")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    a = ap.parse_args()
    ficha_scale(a.data)
    if (a.shared / "corpus.jsonl").is_file():
        shared(a.shared)
