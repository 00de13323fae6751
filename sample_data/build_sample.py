"""Build the bundled sample dataset ``sample_data/ficha/`` from the developer copy of real data.

The source is the ``shared/data`` folder (see its README.md): 14 real 10-K filings from
FinanceBench (text extracted with PyMuPDF) and their 33 FinanceBench questions, with
line-aligned provenance files.

Selection: the 6 filings with the most questions (ties broken by corpus order), and ALL of
their questions, in the original ``questions.jsonl`` order. Every row is copied unchanged
(the supporting passages are deliberately left as FinanceBench published them, so most are
not verbatim in the filing text). Corpus rows keep the corpus order.

Output, in the Hugging Face Hub layout::

    OUT/README.md                               # dataset card: configs + license front matter
    OUT/corpus/train-00000-of-00001.parquet     # ticker, company, filing_type, filing_date, text
    OUT/questions/train-00000-of-00001.parquet  # question, answer, supporting_passage, ticker,
                                                # company, chunk_index (int64, all null here)
    OUT/provenance.jsonl                        # provenance/financebench_questions.jsonl lines
                                                # of the kept questions, same order

The build is deterministic: rerunning gives byte-identical files (for a given pyarrow version).

Usage::

    python sample_data/build_sample.py [--shared PATH] [--out DIR]

``--shared`` defaults to the ``shared`` folder beside the repository root; both the
``shared`` folder itself and its ``data`` subfolder are accepted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as a script: sys.path[0] is sample_data/
    sys.path.insert(0, str(REPO_ROOT))

from mtcb_curate.hub.layout import write_hub_layout  # noqa: E402

DEFAULT_SHARED = REPO_ROOT.parent / "shared"
DEFAULT_OUT = REPO_ROOT / "sample_data" / "ficha"
N_FILINGS = 6
#: Front-matter keys after ``configs`` (FinanceBench is published under CC BY-NC 4.0).
METADATA = {"license": "cc-by-nc-4.0"}

CORPUS_SCHEMA = pa.schema(
    [
        ("ticker", pa.string()),
        ("company", pa.string()),
        ("filing_type", pa.string()),
        ("filing_date", pa.string()),
        ("text", pa.string()),
    ]
)
QUESTIONS_SCHEMA = pa.schema(
    [
        ("question", pa.string()),
        ("answer", pa.string()),
        ("supporting_passage", pa.string()),
        ("ticker", pa.string()),
        ("company", pa.string()),
        pa.field("chunk_index", pa.int64(), nullable=True),
    ]
)


def resolve_data_dir(shared: Path) -> Path:
    """Accept either ``shared/`` or ``shared/data/``; return the folder holding corpus.jsonl."""
    for cand in (shared, shared / "data"):
        if (cand / "corpus.jsonl").is_file() and (cand / "questions.jsonl").is_file():
            return cand
    raise SystemExit(f"no corpus.jsonl/questions.jsonl under {shared} or {shared / 'data'}")


def read_jsonl(path: Path) -> tuple[list[dict], list[str]]:
    """Return the parsed rows and the raw lines (without trailing newline) of a JSONL file."""
    rows, lines = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            rows.append(json.loads(line))
            lines.append(line)
    return rows, lines


def select(corpus: list[dict], questions: list[dict], n: int = N_FILINGS) -> list[str]:
    """Tickers of the ``n`` filings with the most questions, ties broken by corpus order."""
    counts = Counter(q["ticker"] for q in questions)
    order = {doc["ticker"]: i for i, doc in enumerate(corpus)}
    ranked = sorted(order, key=lambda t: (-counts.get(t, 0), order[t]))
    return ranked[:n]


def card(docs: list[dict], questions: list[dict], verbatim: int) -> str:
    """The dataset card's Markdown body (``write_hub_layout`` adds the front matter)."""
    n_chars = sum(len(d["text"]) for d in docs)
    names = "\n".join(
        f"- {d['company']} ({d['ticker']}), 10-K, filing_date {d['filing_date']}" for d in docs
    )
    return f"""
# ficha sample (MTCB layout)

A small, real sample for `mtcb-curate`: {len(docs)} annual reports (Form 10-K, {n_chars:,}
characters of PyMuPDF-extracted text) and all {len(questions)} of their FinanceBench
question/answer pairs, in the MTCB "ficha" layout (configs `corpus` and `questions`).

{names}

Supporting passages are FinanceBench's first evidence text, unchanged: only {verbatim} of
{len(questions)} occur verbatim in the filing text (whitespace and non-ASCII characters
differ). `chunk_index` is null. A pair's id is its 0-based row in `questions`.
`provenance.jsonl` is line-aligned with those rows (FinanceBench id, evidence page numbers).

Licence: CC BY-NC 4.0 (non-commercial), as FinanceBench is published. Attribution:
FinanceBench by Patronus AI (patronus-ai/financebench, commit cc39aeb4afdf). The filings
themselves are public SEC filings. See `../README.md` for details.
"""


def build(shared: Path, out: Path) -> dict:
    data = resolve_data_dir(shared)
    corpus, _ = read_jsonl(data / "corpus.jsonl")
    questions, _ = read_jsonl(data / "questions.jsonl")
    _, prov_lines = read_jsonl(data / "provenance" / "financebench_questions.jsonl")
    if len(prov_lines) != len(questions):
        raise SystemExit("provenance/financebench_questions.jsonl is not line-aligned with questions.jsonl")

    keep = set(select(corpus, questions))
    docs = [d for d in corpus if d["ticker"] in keep]
    kept = [(q, p) for q, p in zip(questions, prov_lines) if q["ticker"] in keep]
    qs = [q for q, _ in kept]

    text_by_ticker = {d["ticker"]: d["text"] for d in docs}
    verbatim = sum(q["supporting_passage"] in text_by_ticker[q["ticker"]] for q in qs)
    write_hub_layout(out, docs, qs, metadata=METADATA, body=card(docs, qs, verbatim),
                     corpus_schema=CORPUS_SCHEMA, questions_schema=QUESTIONS_SCHEMA)
    (out / "provenance.jsonl").write_text("".join(p + "\n" for _, p in kept), encoding="utf-8")
    per_doc = Counter(q["ticker"] for q in qs)
    return {
        "filings": [
            {
                "ticker": d["ticker"],
                "company": d["company"],
                "filing_date": d["filing_date"],
                "chars": len(d["text"]),
                "questions": per_doc[d["ticker"]],
            }
            for d in docs
        ],
        "questions": len(qs),
        "verbatim_passages": verbatim,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared folder (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    args = ap.parse_args(argv)
    stats = build(args.shared, args.out)
    json.dump(stats, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
