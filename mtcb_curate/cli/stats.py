"""``mtcb-curate stats NAME``: the set's statistics as text tables (coverage of documents and
windows, passage lengths, question forms and types, verdicts, statuses, rejections, edits,
review pace, LLM usage, balance against the ``[stats]`` targets).

``--json FILE`` writes every figure (``stats.compute.Stats.to_json``), ``--markdown FILE`` the
same as Markdown (its first section is the one the dataset card carries). ``--checklist``
also runs the checklist (without ``loads``) and counts its results. Exit 0, or 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys

from mtcb_curate.app.sources import command_session
from mtcb_curate.cli.common import note, options, report_problems, write_json


def run(args: argparse.Namespace) -> int:
    """Compute and print the statistics; see the module docstring."""
    from mtcb_curate.app.stats import session_stats
    from mtcb_curate.stats.render import markdown_report, text_report

    with command_session(options(args)) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if not has_ws:
            note("no workspace: statistics of the source alone (no decisions, edits or LLM usage)")
        report = None
        if args.checklist:
            from mtcb_curate.app.gate import run_gate

            report = run_gate(session, has_workspace=has_ws, config=args.config, loads=False)
        stats = session_stats(session, has_workspace=has_ws, config=args.config, report=report)
        sys.stdout.write(text_report(stats))
        try:
            if args.json:
                write_json(args.json, stats.to_json())
            if args.markdown:
                from mtcb_curate.files import atomic_write_bytes

                atomic_write_bytes(args.markdown, markdown_report(stats).encode("utf-8", "replace"))
        except OSError as exc:
            note(f"error: cannot write ({exc.strerror}): {exc.filename}")
            return 2
        sys.stdout.flush()
        return 0
