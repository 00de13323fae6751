"""``mtcb-curate publish NAME``: both configs to the Hub in one verified commit, behind the gate.

Runs the checklist first; a failing checklist refuses the publish unless ``--force --reason``.
``--dry-run DIR`` writes exactly the files that would be committed and publishes nothing.
Exit 0 on success, 1 when the gate refuses, 2 on bad input or a failed publish (the workspace
is never changed, so a publish can simply be run again).

While the Hub is talked to, huggingface_hub's and datasets' own logging, warnings and progress
bars are kept off the terminal; each request the client retries gives one line on stderr, in
our words ("the Hub answered 503 while uploading to me/x: trying again in 1 s (retry 1 of 5)").
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from mtcb_curate.cli.check import checklist, format_report
from mtcb_curate.cli.common import command_session, confirm, emit, note, report_problems


def run(args: argparse.Namespace) -> int:
    """Publish (or dry-run); see the module docstring for the exit codes."""
    from mtcb_curate.app import publishing
    from mtcb_curate.hub import LicenseRequired

    if args.force and not (args.reason or "").strip():
        note("error: --force needs --reason \"why\" (it goes into the dataset card)")
        return 2
    with command_session(args) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if not has_ws:
            note("warning: no workspace: every pair counts as accepted (review in the app to curate)")
        report = checklist(session, has_ws, config=getattr(args, "config", None), cache=False)
        emit(format_report(report, forced=args.force))
        if not report.passed and not args.force and args.dry_run is None:
            note("publish refused: the checklist fails (fix it, or --force --reason \"why\")")
            return 1
        prepared = publishing.plan(session, report, has_workspace=has_ws, repo_id=args.repo_id,
                                   revision=args.revision, only_linked=args.only_linked, license=args.license,
                                   offline_ok=args.dry_run is not None, on_retry=note)
        if prepared.hub_error is not None:
            note(f"the Hub cannot be read ({prepared.hub_error}); the dry run's card is not merged with the Hub's")
        plan = prepared.plan
        if args.license:
            plan = plan.with_license(args.license)
        elif plan.license is None:
            plan = _ask_license(plan)
        prepared = replace(prepared, plan=plan)
        emit()
        emit("\n".join(plan.describe()))
        if args.dry_run is not None:
            try:
                written = publishing.write_dry_run(prepared, args.dry_run, force=args.force, reason=args.reason)
            except LicenseRequired:
                note("error: the licence of this dataset is unknown: pass --license ID (e.g. cc-by-4.0)")
                return 2
            emit(f"\ndry run: wrote {len(written)} files to {args.dry_run} (nothing published)")
            return 0 if report.passed or args.force else 1
        if plan.license is None:
            note("error: the licence of this dataset is unknown: pass --license ID (e.g. cc-by-4.0)")
            return 2
        if not confirm(f"Publish to {plan.repo_id}@{plan.revision}?", args.yes):
            note("not published: confirm on a terminal, or pass --yes")
            return 2
        result = publishing.perform(prepared, force=args.force, reason=args.reason, private=args.private,
                                    create_pr=args.create_pr, revision=args.revision, on_retry=note)
        emit(f"published and verified: {result.question_rows:,} questions, {result.corpus_rows:,} documents")
        emit(result.pr_url or result.commit_url)
        return 0


def _ask_license(plan):
    """Ask for the licence on a terminal when the source and the Hub have none; the plan as it
    was without a terminal or an answer (the publish then stops with a clear line)."""
    import sys

    if not sys.stdin.isatty():
        return plan
    try:
        answer = input("The licence of this dataset is unknown. Hub licence id (e.g. cc-by-4.0): ").strip()
    except EOFError:
        return plan
    if not answer:
        return plan
    try:
        return plan.with_license(answer)
    except ValueError as exc:
        note(f"error: {exc}")
        return plan
