"""``mtcb-curate verify NAME``: where every supporting passage stands in its document.

Prints the counts per verdict (exact, normalized, fuzzy, missing, empty); ``--json`` writes
one row per pair. With a workspace, edited passages are verified. Exit 0 when every pair is
exact, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse

from mtcb_curate.cli.common import command_session, emit, note, report_problems, write_json


def run(args: argparse.Namespace) -> int:
    """Verify; see the module docstring for the exit codes."""
    from mtcb_curate.verify import format_summary, report_json, verify_dataset

    with command_session(args) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        report = verify_dataset(session.dataset, session.edited_texts(), pairs=session.pairs,
                                index=session.corpus_index)
        if args.json:  # before any output: a closed pipe never costs the file
            try:
                write_json(args.json, report_json(report))
            except OSError as exc:
                note(f"error: {args.json}: cannot write ({exc.strerror})")
                return 2
        emit(format_summary(report))
        if has_ws and session.edited_texts():
            note(f"{len(session.edited_texts())} edited passage(s) from the workspace were verified")
        return 0 if report.all_exact else 1
