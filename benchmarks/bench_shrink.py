"""Benchmark the lexical shrink (``mtcb_curate.verify.shrink``) on the shared FinanceBench pairs.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_shrink.py                 # ../shared/data, 20 repeats per pair
    python benchmarks/bench_shrink.py --data DIR --repeats 50 [--verbose]

Target: each lexical proposal in <= 100 ms.

Each pair's passage is first located in its document as verification locates it (``verify_pair``:
the exact span, or the normalized / fuzzy span a snap would take), since a shrink runs on a
verbatim passage. Then ``plan_shrink(span, answer, question)`` is timed ``--repeats`` times per pair
(``time.perf_counter``; the per-pair figure is the median of its repeats); the median and the
maximum over the pairs are judged against the target.

Printed too: how many of the pairs end <= 600 characters (``--max-chars``) holding every figure
of the answer: either the proposal does, or the passage was already that and holds them. The
other pairs are counted by why (refused: a computed answer whose figure is not in the passage,
or an answer without figures or words to keep; proposed but still over the bound; proposed
without a figure only the table header held).
"""

from __future__ import annotations

import argparse
import platform
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from mtcb_curate.dataset.loading import load
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.verify import CorpusIndex, verify_pair
from mtcb_curate.verify.shrink import answer_figures, plan_shrink, text_figures

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TARGET_MS = 100.0
_YEAR = re.compile(r"(?:19|20)\d\d")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--max-chars", type=int, default=600)
    ap.add_argument("--verbose", action="store_true", help="one line per pair")
    args = ap.parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        print(f"no corpus.jsonl in {args.data}", file=sys.stderr)
        return 2
    ds = load("ficha", get_profile("ficha"), [str(args.data)])
    index = CorpusIndex.from_dataset(ds)
    times: list[float] = []
    ok = ok_no_years = 0
    why: Counter[str] = Counter()
    lengths: list[int] = []
    for pair in ds.pairs:
        r = verify_pair(index, pair, count_tokens=False)
        if r.start is None:
            why["passage not located"] += 1
            continue
        span = ds.document_for(pair).text[r.start:r.end]
        per: list[float] = []
        for _ in range(max(1, args.repeats)):
            t0 = time.perf_counter()
            out = plan_shrink(span, pair.answer, pair.question, max_chars=args.max_chars)
            per.append(time.perf_counter() - t0)
        times.append(statistics.median(per))
        p = out.proposal
        text = p.text if p is not None else span.strip()
        figures = set(answer_figures(pair.answer))
        held = text_figures(text)
        holds = figures <= held
        fits = len(text) <= args.max_chars
        if fits and {f for f in figures if not _YEAR.fullmatch(f)} <= held:
            ok_no_years += 1
        if fits and holds:
            ok += 1
            verdict = "ok: proposal" if p is not None else "ok: already within the bound"
        elif p is None and out.reason.startswith("the answer's figure"):
            verdict = "refused: a figure of the answer is not in the passage (computed answer)"
        elif p is None:
            verdict = "refused: " + out.reason.split(":")[0] + ("" if fits else " (passage over the bound)")
        elif not fits:
            verdict = "proposed, still over the bound"
        else:
            verdict = "proposed without a year only the table header held"
        if p is not None:
            lengths.append(len(p.text))
        why[verdict] += 1
        if args.verbose:
            print(f"#{pair.id:>3} {len(span):>5} -> {len(text):>5} chars  {1000 * times[-1]:6.2f} ms  "
                  f"{out.reason[:160]}")
    med, mx = 1000 * statistics.median(times), 1000 * max(times)
    print(f"lexical shrink on {len(ds.pairs)} FinanceBench pairs ({args.data}), {args.repeats} repeats each, "
          f"Python {platform.python_version()}")
    print(f"  time per pair: median {med:.2f} ms, max {mx:.2f} ms (target <= {TARGET_MS:.0f} ms: "
          f"{'met' if mx <= TARGET_MS else 'NOT met'})")
    print(f"  proposals: {len(lengths)}; their lengths: median {statistics.median(lengths) if lengths else 0:.0f}, "
          f"max {max(lengths, default=0)} characters")
    print(f"  end <= {args.max_chars} characters holding every figure of the answer: {ok} of {len(ds.pairs)}")
    print(f"  end <= {args.max_chars} characters holding every figure but the years only a table header held: "
          f"{ok_no_years} of {len(ds.pairs)}")
    for k, n in why.most_common():
        print(f"    {n:>3}  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
