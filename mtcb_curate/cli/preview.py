"""``mtcb-curate preview NAME``: MTCB's own scores on the pairs, per chunker, before publishing.

Chunks every document with each chunker (chonkie), puts all chunks of all documents in one
index (BM25 by default), retrieves the top k per question and counts MTCB's hits
(``passage in chunk.text``). Prints recall@k, MRR@k, the ceiling (share of passages some chunk
holds) and the passages longer than the chunk size, with the library versions; then the
evidence density of the pairs and whether they separate the chunkers (per two chunkers: the
recall@k difference with a paired bootstrap interval, McNemar's exact test, the pairs needed;
the pairs every chunker and no chunker finds; ``preview.separation``). Scores the
accepted pairs of the workspace; every pair with ``--all`` or without a workspace. Chunks and
indexes are cached in the workspace folder. Exit 0, or 2 on bad input (one line).
"""

from __future__ import annotations

import argparse

from mtcb_curate.cli.common import command_session, emit, note, report_problems, write_json, write_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chunker", action="append", metavar="SPEC",
                   help="chonkie chunker: recursive:N (characters), token:N or sentence:N (cl100k tokens); "
                        "repeat for several (default: [preview] chunkers, else recursive:2048)")
    p.add_argument("--retriever", help="bm25 (default) or dense (wordllama static embeddings, offline)")
    p.add_argument("--k", metavar="K,K,...", help="cut-offs, e.g. 1,3,5,10 (default: [preview] k)")
    p.add_argument("--all", action="store_true", help="score every pair, not only the accepted ones")
    p.add_argument("--json", metavar="FILE", help="write the scores and per-pair findability as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    p.add_argument("--config", help="config file with a [preview] table")
    p.add_argument("--seed", type=int, metavar="N", help="the paired bootstrap's seed (default: [preview] seed, 0)")
    p.add_argument("--resamples", type=int, metavar="N",
                   help="bootstrap resamples (default: [preview] resamples, 2000)")
    p.add_argument("--detect", type=float, metavar="POINTS",
                   help="the recall@k difference, in points, 'pairs needed' is for (default: [preview] detect, 3)")
    p.add_argument("--no-statistics", action="store_true",
                   help="the scores only: no evidence density, no chunker separation")


def run(args: argparse.Namespace) -> int:
    """Run the preview; see the module docstring for the exit codes."""
    from pathlib import Path

    from mtcb_curate.app.preview import run_preview
    from mtcb_curate.preview.chunkers import parse_spec
    from mtcb_curate.preview.settings import PreviewSettings, parse_ks
    from mtcb_curate.preview.retrievers import RETRIEVERS
    from mtcb_curate.errors import InputError

    settings = PreviewSettings.resolve(Path(args.config) if args.config else None)
    specs = tuple(parse_spec(s) for s in args.chunker) if args.chunker else settings.chunkers
    ks = parse_ks(args.k) if args.k else settings.k
    retriever = args.retriever or settings.retriever
    if retriever not in RETRIEVERS:
        raise InputError("--retriever", f"unknown retriever {retriever!r}: use bm25 or dense")
    from dataclasses import replace

    sep = settings.separation
    sep = replace(sep, **{k: v for k, v in (("seed", args.seed), ("resamples", args.resamples),
                                              ("detect", args.detect)) if v is not None}).check("preview:")
    with command_session(args) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        all_pairs = args.all or not has_ws
        report = run_preview(session, specs, retriever=retriever, ks=ks, all_pairs=all_pairs,
                             cache_dir=session.workspace.path if has_ws else None,
                             progress=lambda m: note(m), statistics=not args.no_statistics, separation=sep)
        if not has_ws and not args.all:
            note("no workspace: every pair is scored")
        try:  # files first: a closed pipe never costs them
            if args.json:
                write_json(Path(args.json), report.to_json())
            if args.markdown:
                write_text(Path(args.markdown), report.to_markdown())
        except OSError as exc:
            note(f"error: {exc.filename}: cannot write ({exc.strerror})")
            return 2
        emit(report.table())
        if report.cached:
            note(f"from the cache: {', '.join(report.cached)}")
        note(f"done in {report.seconds:.2f} s")
        return 0
