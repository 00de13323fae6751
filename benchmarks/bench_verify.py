"""Benchmark verbatim verification (``mtcb_curate.verify``) and print its figures.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_verify.py                # all figures (about 1-2 minutes on 2 cores)
    python benchmarks/bench_verify.py --quick        # fewer repeats, smaller naive baseline
    python benchmarks/bench_verify.py --calibrate    # also the fuzzy-threshold calibration
    python benchmarks/bench_verify.py --data DIR     # another synthetic folder

The ficha-scale synthetic set (88 documents, about 48 MB of text, 1,331 pairs) is generated
into ``benchmarks/out/ficha`` by ``benchmarks/make_synthetic.py`` unless it is there already,
exactly as ``bench_review.py`` does. All times are wall clock (``time.perf_counter``) in this
process, after the dataset is loaded; the machine is shared, so repeat runs vary.

Figures:

1. **Exact + normalized, whole set** (target <= 1 s): ``verify_dataset(fuzzy=False,
   count_tokens=False)`` with a fresh ``CorpusIndex`` each repeat: exact occurrences of every
   passage in every document (own and others), and the normalized search for the rest.
   Median, min and max over the repeats, and one run split into its parts.
2. **Separate figures**: the fuzzy step over the whole set's non-normalized pairs; token counts
   of every passage (tokenizer load + one batched encode); tokenizing every document for the
   ``in_chunk`` windows (only needed for pairs with a chunk_index; the synthetic set has none).
3. **Fuzzy per passage in a ~1 MB document** (target <= 50 ms): the largest synthetic documents,
   passages of 100-3,500 characters cut from them with about one word in ten replaced, and
   invented passages that are not there. Median, p95 and max per passage (document index
   already built), and the index build per document.
4. **Re-verifying one pair** (``verify_pair(fuzzy=False)``, as the app does on an edit), with and
   without the cross-document scan.
5. **Naive baseline**: normalization of each document with a per-character Python map, then
   ``in`` on the normalized text, and ``in`` over every other document for each passage; fuzzy
   as rapidfuzz ``partial_ratio_alignment`` sliding over the whole normalized document. Ratios
   are naive time / ours on the same work.
6. ``--calibrate``: the fuzzy score distributions on ``../shared/data`` (SQuAD articles and
   FinanceBench filings) used to choose ``FUZZY_MIN_SCORE``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = HERE / "out"
FICHA = dict(docs=88, pairs=1331, mean_chars=550_000, seed=0)
SHARED = ROOT.parent / "shared" / "data"
TARGET_WHOLE_S = 1.0
TARGET_FUZZY_MS = 50.0


def dataset_dir(path: str | None) -> Path:
    folder = Path(path) if path else DEFAULT_OUT / "ficha"
    if (folder / "README.md").is_file() and (folder / "questions").exists():
        return folder
    sys.path.insert(0, str(HERE))
    from make_synthetic import make_dataset

    print(f"generating {folder} ({FICHA['pairs']:,} pairs) ...", file=sys.stderr, flush=True)
    make_dataset(folder, **FICHA)
    return folder


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def ms(s: float) -> str:
    return f"{s * 1000:.1f} ms"


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t, out


# -- naive baseline ----------------------------------------------------------------------------

def naive_normalize(text: str) -> tuple[str, list[int]]:
    """The ascii normalization built character by character with a per-character map (the
    approach the real code avoids). Same output as ``normalize_text(text, 'ascii')`` apart from
    hyphenation, which it skips."""
    from mtcb_curate.verify.normalize import fold_char

    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        f = fold_char(ch, "ascii")
        if f == " ":
            space = True
            continue
        if f == "":
            continue
        if space and out:
            out.append(" ")
            where.append(i)
        space = False
        for c in f:
            out.append(c)
            where.append(i)
    return "".join(out), where


def naive_verify(docs: dict[str, str], pairs) -> float:
    from mtcb_curate.verify.normalize import normalize_passage

    t = time.perf_counter()
    cache: dict[str, tuple[str, list[int]]] = {}
    for p in pairs:
        text = docs.get(p.doc_key, "")
        for k, other in docs.items():  # elsewhere: scan every other document
            if k != p.doc_key:
                _ = p.passage in other
        if p.passage in text:
            continue
        if p.doc_key not in cache:
            cache[p.doc_key] = naive_normalize(text)
        norm, where = cache[p.doc_key]
        i = norm.find(normalize_passage(p.passage))
        if i >= 0:
            _ = where[i]
    return time.perf_counter() - t


# -- parts -------------------------------------------------------------------------------------

def bench_whole(ds, repeats: int) -> dict:
    from mtcb_curate.verify import CorpusIndex, verify_dataset

    times = []
    report = None
    for _ in range(repeats):
        t, report = timed(verify_dataset, ds, fuzzy=False, count_tokens=False)
        times.append(t)
    # one run split in parts
    idx = CorpusIndex.from_dataset(ds)
    t_skel, _ = timed(lambda: [idx.skeleton(k) for k in idx.documents])
    passages = {p.id: p.passage for p in ds.pairs if p.passage.strip()}
    t_batch, _ = timed(idx.exact_occurrences_batch, passages)
    t_rest, _ = timed(verify_dataset, ds, fuzzy=False, count_tokens=False, index=idx)
    return dict(times=times, summary=report.summary, skel=t_skel, batch=t_batch, rest_with_batch=t_rest)


def bench_separate(ds, quick: bool) -> dict:
    from mtcb_curate.dataset import tokens
    from mtcb_curate.verify import CorpusIndex, complete_fuzzy, verify_dataset

    idx = CorpusIndex.from_dataset(ds)
    t_nf, rep = timed(verify_dataset, ds, fuzzy=False, count_tokens=False, index=idx)
    pending = [r for r in rep.results if not r.fuzzy_checked]
    t_fz, done = timed(lambda: [complete_fuzzy(idx, r) for r in pending])
    t_load, _ = timed(tokens.encoding)
    t_tok, _ = timed(lambda: tokens.encoding().encode_ordinary_batch([p.passage for p in ds.pairs]))
    docs = list(ds.documents.values())
    if quick:
        docs = docs[:8]
    chars = sum(len(d.text) for d in docs)
    t_win, _ = timed(lambda: [tokens.windows(d.text) for d in docs])
    total_chars = sum(len(d.text) for d in ds.documents.values())
    return dict(fuzzy_pairs=len(pending), fuzzy_total=t_fz, fuzzy_found=sum(r.verdict == "fuzzy" for r in done),
                tok_load=t_load, tok_batch=t_tok, win=t_win, win_chars=chars, total_chars=total_chars)


def altered(rng: random.Random, text: str, length: int) -> str:
    s = rng.randrange(0, len(text) - length)
    words = text[s:s + length].split(" ")
    for i in range(len(words)):
        if rng.random() < 0.1:
            words[i] = rng.choice(["zorbit", "quallen", "retained", "fiscal", "approximately"])
    return " ".join(words)


def bench_fuzzy(ds, quick: bool) -> dict:
    from rapidfuzz import fuzz

    from mtcb_curate.verify.fuzzy import locate_fuzzy
    from mtcb_curate.verify.normalize import SkeletonIndex, normalize_passage, normalize_text

    rng = random.Random(5)
    docs = sorted(ds.documents.values(), key=lambda d: -len(d.text))[: 2 if quick else 4]
    build, per, foreign, scores = [], [], [], []
    naive, ours_same = [], []
    for d in docs:
        t, sk = timed(SkeletonIndex, d.text)
        build.append(t)
        for length in [100, 300, 1000, 3500] * (3 if quick else 8):
            p = altered(rng, d.text, length)
            t, m = timed(locate_fuzzy, sk, p)
            per.append(t)
            scores.append(m.score)
        for _ in range(5 if quick else 15):
            p = " ".join(rng.choice(["alpha", "beta", "gamma", "quantum", "ledger", "of", "the"]) for _ in range(50))
            t, _ = timed(locate_fuzzy, sk, p)
            foreign.append(t)
        norm_doc = normalize_text(d.text)
        for length in [300, 1000, 3500][: 2 if quick else 3]:
            p = altered(rng, d.text, length)
            pn = normalize_passage(p)
            t, _ = timed(fuzz.partial_ratio_alignment, pn, norm_doc)
            naive.append(t)
            t, _ = timed(locate_fuzzy, sk, p)
            ours_same.append(t)
    return dict(sizes=[len(d.text) for d in docs], build=build, per=per, foreign=foreign,
                min_score=min(scores), naive=naive, ours_same=ours_same)


def bench_pair(ds) -> dict:
    from mtcb_curate.verify import CorpusIndex, verify_pair

    idx = CorpusIndex.from_dataset(ds)
    for k in idx.documents:
        idx.skeleton(k)
    rng = random.Random(9)
    pairs = rng.sample(ds.pairs, 150)
    verify_pair(idx, pairs[0])  # tokenizer loaded
    with_scan, without = [], []
    for p in pairs:
        edited = p.passage.replace(" ", "\u00a0", 1)
        t, _ = timed(verify_pair, idx, p, edited, fuzzy=False)
        with_scan.append(t)
        t, _ = timed(verify_pair, idx, p, edited, fuzzy=False, elsewhere=False)
        without.append(t)
    return dict(with_scan=with_scan, without=without)


def bench_naive(ds, quick: bool, ours_whole: float) -> dict:
    from mtcb_curate.dataset.model import Dataset
    from mtcb_curate.verify import verify_dataset

    keys = list(ds.documents)[: 6 if quick else 16]
    sub_docs = {k: ds.documents[k] for k in keys}
    sub_pairs = [p for p in ds.pairs if p.doc_key in sub_docs]
    sub = Dataset(ds.name, ds.profile, sub_docs, sub_pairs, ds.source)
    t_naive = naive_verify({k: d.text for k, d in sub_docs.items()}, sub_pairs)
    t_ours = min(timed(verify_dataset, sub, fuzzy=False, count_tokens=False)[0] for _ in range(3))
    return dict(docs=len(sub_docs), pairs=len(sub_pairs), chars=sum(len(d.text) for d in sub_docs.values()),
                naive=t_naive, ours=t_ours)


# -- calibration -------------------------------------------------------------------------------

def calibrate() -> None:
    from mtcb_curate.verify.fuzzy import FUZZY_MIN_SCORE, locate_fuzzy
    from mtcb_curate.dataset.loading import load
    from mtcb_curate.verify.normalize import SkeletonIndex
    from mtcb_curate.dataset.profiles import get_profile

    if not (SHARED / "corpus.jsonl").is_file():
        print("calibration: ../shared/data is not present; skipped")
        return
    rng = random.Random(0)
    sq = load("squad", get_profile("gacha"), [str(SHARED / "squad-mtcb")])
    fb = load("ficha", get_profile("ficha"), [str(SHARED)])
    sqi = {k: SkeletonIndex(d.text) for k, d in sq.documents.items()}
    fbi = {k: SkeletonIndex(d.text) for k, d in fb.documents.items()}
    vocab = sorted({w for p in sq.pairs for w in p.passage.split()})
    fvocab = sorted({w for p in fb.pairs for w in p.passage.split()})

    def words(p, every, voc):
        w = p.split(" ")
        return " ".join(rng.choice(voc) if rng.random() < 1 / every else x for x in w)

    def drop(p):
        w = p.split(" ")
        if len(w) < 12:
            return p
        i = rng.randrange(2, len(w) - 6)
        return " ".join(w[:i] + w[i + rng.randint(2, 4):])

    def respace(p):
        out = []
        for ch in p:
            x = rng.random()
            if ch == " " and x < 0.3:
                continue
            out.append(ch)
            if ch != " " and x > 0.95:
                out.append(" ")
            if ch == " " and x > 0.85:
                out.append("\n  ")
        return "".join(out)

    def show(name, scores, above):
        scores = sorted(scores)
        cells = []
        for t in (60, 65, 70, 75, 80):
            share = sum(1 for s in scores if (s >= t if above else s < t)) / len(scores)
            cells.append(f"{t}:{100 * share:5.1f}%")
        print(f"  {name:<58} n={len(scores):<5} min {scores[0]:5.1f} max {scores[-1]:5.1f}  " + " ".join(cells))

    allp = [p for p in sq.pairs if len(p.passage) >= 60]
    keys = list(sq.documents)
    print(f"calibration (FUZZY_MIN_SCORE = {FUZZY_MIN_SCORE:g}); share of scores BELOW t for altered passages,")
    print("AT OR ABOVE t for passages placed on the wrong document:")
    for name, f in [("SQuAD, 1 word in 10 replaced", lambda p: words(p, 10, vocab)),
                    ("SQuAD, 1 word in 20 replaced", lambda p: words(p, 20, vocab)),
                    ("SQuAD, 2-4 inner words dropped", drop),
                    ("SQuAD, re-spaced (spaces dropped, added, newlines)", respace)]:
        show(name, [locate_fuzzy(sqi[p.doc_key], f(p.passage)).score for p in allp], False)
    show("FinanceBench, 1 word in 10 replaced (x10)",
         [locate_fuzzy(fbi[p.doc_key], words(p.passage, 10, fvocab)).score for p in fb.pairs for _ in range(10)],
         False)
    show("SQuAD passage on another article",
         [locate_fuzzy(sqi[rng.choice([k for k in keys if k != p.doc_key])], p.passage).score for p in allp], True)
    cover = [p.id for p in fb.pairs if "telephone number" in p.passage]
    show(f"FinanceBench passage on the 13 other filings (minus cover page {cover})",
         [locate_fuzzy(fbi[k], p.passage).score for p in fb.pairs if p.id not in cover
          for k in fb.documents if k != p.doc_key], True)
    show("FinanceBench cover-page passage on the other filings (boilerplate)",
         [locate_fuzzy(fbi[k], p.passage).score for p in fb.pairs if p.id in cover
          for k in fb.documents if k != p.doc_key], True)


# -- main --------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="synthetic dataset folder (default benchmarks/out/ficha)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and samples")
    parser.add_argument("--repeat", type=int, default=None, help="repeats of the whole-set figure")
    parser.add_argument("--calibrate", action="store_true", help="also print the threshold calibration")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from mtcb_curate.dataset.loading import load
    from mtcb_curate.dataset.profiles import get_profile

    folder = dataset_dir(args.data)
    t_load, ds = timed(load, "ficha", get_profile("ficha"), [str(folder)])
    chars = sum(len(d.text) for d in ds.documents.values())
    print(f"dataset: {folder} - {len(ds.documents)} documents, {chars / 1e6:.1f} M characters, "
          f"{len(ds.pairs):,} pairs (loaded in {t_load:.2f} s, not counted)")
    print(f"machine: {os.cpu_count()} cores, shared; load average {os.getloadavg()[0]:.2f}")
    repeats = args.repeat or (3 if args.quick else 7)

    whole = bench_whole(ds, repeats)
    t = whole["times"]
    s = whole["summary"]
    print()
    print(f"1. exact + normalized, whole set (target <= {TARGET_WHOLE_S:g} s), {repeats} runs:")
    print(f"   median {statistics.median(t):.3f} s, min {min(t):.3f} s, max {max(t):.3f} s "
          f"-> {'ok' if statistics.median(t) <= TARGET_WHOLE_S else 'MISSED'}")
    print(f"   verdicts: exact {s['exact']}, normalized {s['normalized']}, not yet located "
          f"{s['missing']} (fuzzy step separate), empty {s['empty']}")
    print(f"   parts of one run: skeleton indexes {whole['skel']:.3f} s, batched exact pass over the "
          f"corpus {whole['batch']:.3f} s, everything with both reused {whole['rest_with_batch']:.3f} s")

    sep = bench_separate(ds, args.quick)
    print()
    print("2. separate figures:")
    print(f"   fuzzy step for the {sep['fuzzy_pairs']} pairs neither exact nor normalized: "
          f"{sep['fuzzy_total']:.3f} s ({ms(sep['fuzzy_total'] / max(1, sep['fuzzy_pairs']))} per pair, "
          f"{sep['fuzzy_found']} found)")
    print(f"   token counts of all passages: tokenizer load {sep['tok_load']:.3f} s (once per process), "
          f"batched encode {sep['tok_batch']:.3f} s")
    scale = sep["total_chars"] / sep["win_chars"]
    print(f"   in_chunk windows: tokenizing {sep['win_chars'] / 1e6:.1f} M characters took {sep['win']:.2f} s "
          f"({sep['win'] / sep['win_chars'] * 1e6:.2f} s per M characters; the whole corpus "
          f"~{sep['win'] * scale:.1f} s, paid only for documents with a chunk_index pair)")

    fz = bench_fuzzy(ds, args.quick)
    per = fz["per"]
    print()
    print(f"3. fuzzy search per passage in ~1 MB documents ({', '.join(f'{n / 1e6:.2f}' for n in fz['sizes'])} "
          f"M characters), target <= {TARGET_FUZZY_MS:g} ms:")
    print(f"   altered passages (100-3,500 characters, 1 word in 10 replaced), {len(per)}: median "
          f"{ms(statistics.median(per))}, p95 {ms(pct(per, 0.95))}, max {ms(max(per))} -> "
          f"{'ok' if max(per) * 1000 <= TARGET_FUZZY_MS else 'MISSED'} (lowest score {fz['min_score']:.1f})")
    print(f"   passages not in the document, {len(fz['foreign'])}: median {ms(statistics.median(fz['foreign']))}, "
          f"max {ms(max(fz['foreign']))}")
    print(f"   document index build (once per document): median {ms(statistics.median(fz['build']))}, "
          f"max {ms(max(fz['build']))}")

    pr = bench_pair(ds)
    print()
    print("4. re-verifying one edited pair (verify_pair, fuzzy=False, index warm):")
    print(f"   with the cross-document scan: median {ms(statistics.median(pr['with_scan']))}, "
          f"p95 {ms(pct(pr['with_scan'], 0.95))}; without: median {ms(statistics.median(pr['without']))}, "
          f"p95 {ms(pct(pr['without'], 0.95))}")

    nv = bench_naive(ds, args.quick, statistics.median(t))
    print()
    print(f"5. naive baseline on {nv['docs']} documents ({nv['chars'] / 1e6:.1f} M characters, {nv['pairs']} pairs):")
    print(f"   exact + normalized: naive {nv['naive']:.2f} s vs ours {nv['ours']:.3f} s "
          f"-> {nv['naive'] / nv['ours']:.0f}x")
    print(f"   fuzzy, same passages: partial_ratio_alignment over the whole normalized document median "
          f"{ms(statistics.median(fz['naive']))} vs ours {ms(statistics.median(fz['ours_same']))} "
          f"-> {statistics.median(fz['naive']) / statistics.median(fz['ours_same']):.0f}x")

    if args.calibrate:
        print()
        calibrate()

    if args.json:
        Path(args.json).write_text(json.dumps(dict(whole=whole, separate=sep, fuzzy=fz, pair=pr, naive=nv),
                                              default=str, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
