"""``mtcb-curate check NAME``: the quality checklist, the gate before publishing.

Exit 0 when no check fails, 1 when one fails, 2 on bad input. Without a workspace every pair
is treated as accepted and ``reviewed`` is skipped with a warning. ``--as-accepted`` on a
workspace checks every pair not rejected as if accepted (undecided, skipped and flagged ones
included; ``reviewed`` skipped): what the gate would say once the curator accepts the rest.
"""

from __future__ import annotations

import argparse

from mtcb_curate.cli.common import Progress, command_session, emit, note, report_problems, write_json, write_text

_MARK = {"pass": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def format_report(report, *, forced: bool = False) -> str:
    """The checklist as a plain table: mark, id, pairs, message; under a check with pairs, their
    ids (the first ``verify.report.IDS_SHOWN``, then ``+N more``). ``forced``: publishing goes
    ahead anyway (``publish --force``), so a failing checklist is not said to refuse it."""
    from mtcb_curate.verify.report import id_list

    lines = [f"{'':4}  {'check':<15}{'pairs':>7}  message"]
    for c in report.checks:
        lines.append(f"{_MARK[c.status]}  {c.id:<15}{len(c.pairs):>7}  {c.message}")
        if c.pairs:
            lines.append(f"{'':6}{'':15}{'':7}  pairs {id_list(c.pairs)}")
    lines.append("")
    if report.passed:
        lines.append("checklist PASSED (warnings do not block publishing)")
    elif forced:
        lines.append("checklist FAILED: publishing anyway (--force; the reason goes into the card)")
    else:
        lines.append("checklist FAILED: publishing is refused until every failing check passes")
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
            emit(f"judge #{j.pair_id}: {one_line(j.line(), limit=1000)}")
        return {j.pair_id: (j.supported, j.reason) for j in verdicts}

    return judge


def run(args: argparse.Namespace) -> int:
    """Run the checklist; see the module docstring for the exit codes."""
    with command_session(args) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        as_accepted = bool(getattr(args, "as_accepted", False))
        if not has_ws:
            note("warning: no workspace: every pair is treated as accepted and 'reviewed' is skipped")
        elif as_accepted:
            note("as accepted: every pair not rejected is checked as if accepted; 'reviewed' is skipped "
                 "(not the publishing gate)")
        judge = llm_judge(args, session, has_ws) if getattr(args, "llm_judge", False) else None
        report = checklist(session, has_ws, config=getattr(args, "config", None), judge=judge,
                           cache=not getattr(args, "no_cache", False), include_undecided=as_accepted and has_ws)
        try:  # files first: a closed pipe never costs them
            if args.json:
                write_json(args.json, report.to_json())
            if args.markdown:
                write_text(args.markdown, report.to_markdown())
        except OSError as exc:
            note(f"error: {exc.filename}: cannot write ({exc.strerror})")
            return 2
        emit(format_report(report))
        return 0 if report.passed else 1


def checklist(session, has_ws: bool, **kw):
    """``app.gate.run_gate`` with the progress display (one step per check); ``kw`` go to it."""
    from mtcb_curate.app.gate import run_gate, step

    with Progress("checklist", total=step("")[1]) as bar:
        def progress(check_id: str) -> None:
            bar.update(completed=step(check_id)[0], description=f"checklist: {check_id}")

        report = run_gate(session, has_workspace=has_ws, progress=progress, **kw)
        bar.update(completed=step("")[1], description="checklist")
    return report
