"""``mtcb-curate check NAME``: the quality checklist, the gate before publishing.

Exit 0 when no check fails, 1 when one fails, 2 on bad input. Without a workspace every pair
is treated as accepted and ``reviewed`` is skipped with a warning. ``--as-accepted`` on a
workspace checks every pair not rejected as if accepted (undecided, skipped and flagged ones
included; ``reviewed`` skipped): what the gate would say once the curator accepts the rest.
"""

from __future__ import annotations

import argparse
import sys

from mtcb_curate.cli.common import note, options, report_problems, write_json
from mtcb_curate.app.sources import command_session

_MARK = {"pass": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def format_report(report) -> str:
    """The checklist as a plain table: mark, id, pairs, message; under a check with pairs, their
    ids (the first ``verify.report.IDS_SHOWN``, then ``+N more``)."""
    from mtcb_curate.verify.report import id_list

    lines = [f"{'':4}  {'check':<15}{'pairs':>7}  message"]
    for c in report.checks:
        lines.append(f"{_MARK[c.status]}  {c.id:<15}{len(c.pairs):>7}  {c.message}")
        if c.pairs:
            lines.append(f"{'':6}{'':15}{'':7}  pairs {id_list(c.pairs)}")
    lines.append("")
    lines.append("checklist PASSED (warnings do not block publishing)" if report.passed
                 else "checklist FAILED: publishing is refused until every failing check passes")
    return "\n".join(lines)


def llm_judge(args: argparse.Namespace, session, has_ws: bool):
    """The ``answerable`` judge for ``--llm-judge``: asks before more than 10 uncached calls.

    Raises:
        LLMUnavailable, LLMError: no usable server (exit 2 with one line).
        CurateError: more than 10 calls without ``--yes`` and no terminal to ask.
    """
    import threading

    from mtcb_curate.cli.common import confirm
    from mtcb_curate.cli.generate import llm_client
    from mtcb_curate.errors import CurateError
    from mtcb_curate.llm.estimate import estimate_run
    from mtcb_curate.llm.errors import one_line
    from mtcb_curate.llm.judge import KEEP_THRESHOLD, judge_pairs, judge_requests
    from mtcb_curate.llm.pool import read_concurrency

    client = llm_client(args, session.workspace.path if has_ws else None)

    def judge(items):
        estimate = estimate_run(judge_requests(items), client.config, output_tokens=40, client=client)
        note(f"LLM judge for 'answerable': {estimate.summary()}")
        if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
            raise CurateError("LLM judge not run: more than 10 calls; pass --yes to run them without asking")
        verdicts = judge_pairs(client, items, cancel=threading.Event(), on_retry=lambda n: note(str(n)),
                               concurrency=read_concurrency(getattr(args, "config", None)),
                               keep_threshold=getattr(args, "judge_keep", None) or KEEP_THRESHOLD)
        for j in verdicts:  # proposals beside each pair, never decisions
            print(f"judge #{j.pair_id}: {one_line(j.line(), limit=1000)}")
        return {j.pair_id: (j.supported, j.reason) for j in verdicts}

    return judge


def run(args: argparse.Namespace) -> int:
    """Run the checklist; see the module docstring for the exit codes."""
    from mtcb_curate.app.gate import run_gate

    with command_session(options(args)) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        as_accepted = bool(getattr(args, "as_accepted", False))
        if not has_ws:
            note("warning: no workspace: every pair is treated as accepted and 'reviewed' is skipped")
        elif as_accepted:
            note("as accepted: every pair not rejected is checked as if accepted; 'reviewed' is skipped "
                 "(not the publishing gate)")
        judge = llm_judge(args, session, has_ws) if getattr(args, "llm_judge", False) else None
        report = run_gate(session, has_workspace=has_ws, config=getattr(args, "config", None), judge=judge,
                          cache=not getattr(args, "no_cache", False), include_undecided=as_accepted and has_ws)
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
