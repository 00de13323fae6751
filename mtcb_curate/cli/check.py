"""``mtcb-curate check NAME``: the quality checklist, the gate before publishing.

Exit 0 when no check fails, 1 when one fails, 2 on bad input. Without a workspace every pair
is treated as accepted and ``reviewed`` is skipped with a warning.
"""

from __future__ import annotations

import argparse
import sys

from mtcb_curate.cli.common import note, options, report_problems, write_json
from mtcb_curate.sources import command_session

_MARK = {"pass": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def format_report(report) -> str:
    """The checklist as a plain table: mark, id, pairs, message."""
    lines = [f"{'':4}  {'check':<15}{'pairs':>7}  message"]
    for c in report.checks:
        lines.append(f"{_MARK[c.status]}  {c.id:<15}{len(c.pairs):>7}  {c.message}")
    lines.append("")
    lines.append("checklist PASSED (warnings do not block publishing)" if report.passed
                 else "checklist FAILED: publishing is refused until every failing check passes")
    return "\n".join(lines)


def limits_for(args: argparse.Namespace, session):
    """Passage length limits: the profile's, then the config file's ``[checklist]`` table."""
    from mtcb_curate.checklist import Limits
    from mtcb_curate.config import read_table

    return Limits.for_profile(session.dataset.profile.extra, read_table("checklist", getattr(args, "config", None)))


def run(args: argparse.Namespace) -> int:
    """Run the checklist; see the module docstring for the exit codes."""
    from mtcb_curate.checklist import run_checklist

    with command_session(options(args)) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if not has_ws:
            note("warning: no workspace: every pair is treated as accepted and 'reviewed' is skipped")
        report = run_checklist(session, has_workspace=has_ws, limits=limits_for(args, session))
        print(format_report(report))
        try:
            if args.json:
                write_json(args.json, report.to_json())
            if args.markdown:
                from mtcb_curate.files import atomic_write_bytes

                atomic_write_bytes(args.markdown, report.to_markdown().encode("utf-8", "replace"))
        except OSError as exc:
            note(f"error: cannot write ({exc.strerror}): {exc.filename}")
            return 2
        sys.stdout.flush()
        return 0 if report.passed else 1
