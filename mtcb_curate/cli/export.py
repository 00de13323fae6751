"""``mtcb-curate export NAME --out FILE.jsonl``: decisions, current texts, verdict, checks and judge
scores, one line per pair; ``--format beir --out DIR``: the BEIR layout (corpus, queries, qrels)."""

from __future__ import annotations

import argparse

from mtcb_curate.cli.common import command_session, note, report_problems


def run(args: argparse.Namespace) -> int:
    """Write the export; 0 on success, 2 on bad input or an unwritable file. The workspace of
    the source (``--workspace``, or the one the app would open) when it exists, read-only;
    else the source alone (every pair undecided)."""
    with command_session(args) as (session, _has_ws):
        return _write(args, session)


def _write(args: argparse.Namespace, session) -> int:
    from mtcb_curate.app.export import export_beir, export_jsonl, quality_columns
    from mtcb_curate.llm.cache import CACHE_NAME

    if report_problems(session.dataset.problems, args.strict):
        return 2
    try:
        if getattr(args, "format", "jsonl") == "beir":
            docs, n = export_beir(session, args.out, include_undecided=args.include_undecided)
            which = "accepted and undecided" if args.include_undecided else "accepted"
            note(f"wrote {docs:,} documents and {n:,} queries (BEIR; {which} pairs) to {args.out}")
            return 0
        extra = quality_columns(session, config=getattr(args, "config", None),
                                llm_cache=session.workspace.path / CACHE_NAME)
        n = export_jsonl(session, args.out, extra)
    except OSError as exc:
        note(f"error: {exc.filename or args.out}: cannot write ({exc.strerror})")
        return 2
    note(f"wrote {n:,} pairs to {args.out}")
    return 0
