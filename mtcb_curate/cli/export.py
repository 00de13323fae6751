"""``mtcb-curate export NAME --out FILE.jsonl``: decisions, current texts, verdict, checks and judge
scores, one line per pair; ``--format beir --out DIR``: the BEIR layout (corpus, queries, qrels)."""

from __future__ import annotations

import argparse

from mtcb_curate.cli.common import command_session, note, open_session, options, report_problems
from mtcb_curate.store.opening import workspace_exists


def run(args: argparse.Namespace) -> int:
    """Write the export; 0 on success, 2 on bad input or an unwritable file. The source's
    workspace when it has one (read-only), else the source alone (every pair undecided)."""
    opts = options(args, read_only=True)
    if not workspace_exists(opts.workspace_dir()):  # no workspace of this source: the source alone
        with command_session(args) as (session, _has_ws):
            return _write(args, session)
    session = open_session(opts)
    try:
        return _write(args, session)
    finally:
        session.workspace.close()


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
