"""``mtcb-curate team NAME``: a team's shared workspace: each curator's counts and pace, and
agreement on the overlap (Cohen's kappa per pair of curators, Krippendorff's alpha over all,
overall and per rejection reason).

``--plan`` lists the pairs in the work split (``--overlap`` or ``[team] overlap`` of them
decided blind by two curators); ``--conflicts`` lists the pairs on which curators disagree;
``--resolve ID STATUS [--reason R]`` is a lead's decision on one; ``--json FILE`` writes the
report. Exit 0; 1 with ``--conflicts`` while a conflict is open; 2 on bad input.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from mtcb_curate.cli.common import emit, note, open_session, options, write_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``team`` command's own options."""
    p.add_argument("--plan", action="store_true", help="list the pairs in the work split (once; new pairs later)")
    p.add_argument("--overlap", type=float, metavar="SHARE",
                   help="with --plan: share of pairs two curators decide blind (default [team] overlap, 0.1)")
    p.add_argument("--conflicts", action="store_true", help="list the pairs on which curators disagree")
    p.add_argument("--resolve", nargs=2, metavar=("ID", "STATUS"),
                   help="a lead decides a pair of the overlap: accepted, rejected, skipped or flagged")
    p.add_argument("--reason", help="with --resolve rejected: the rejection reason")
    p.add_argument("--json", metavar="FILE", help="write the report as JSON ('-': standard output)")


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def run(args: argparse.Namespace) -> int:
    """Print the team report; see the module docstring."""
    from mtcb_curate.app import team
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.errors import CurateError

    write = bool(args.plan or args.resolve)
    session = open_session(replace(options(args), read_only=not write))
    try:
        if args.plan:
            counts = team.plan(session, args.overlap)
            note(f"work split: {counts['pairs']} pairs, {counts['overlap']} of them for two curators")
        if args.resolve:
            pid_text, status = args.resolve
            if not pid_text.isdigit() or status not in {s.value for s in Status if s is not Status.UNDECIDED}:
                raise CurateError("--resolve ID STATUS: ID a pair id, STATUS accepted, rejected, skipped or flagged")
            team.resolve(session, int(pid_text), status, args.reason)
            note(f"pair {pid_text}: {status} (decided by {session.workspace.curator})")
        rep = team.report(session)
        out: list[str] = ["curator".ljust(24) + "decided".rjust(9) + "per hour".rjust(10)]
        for c in rep["curators"]:
            pace = "-" if c["per_hour"] is None else f"{c['per_hour']:.0f}"
            out.append(c["name"][:24].ljust(24) + f"{c['decided']:9d}" + pace.rjust(10))
        o = rep["overlap"]
        out.append(f"overlap: {o['pairs']} pairs, {o['decided_by_two']} decided by two, {o['agreed']} agreed, "
                   f"{o['open_conflicts']} open conflicts")
        out.append(f"Krippendorff's alpha (all curators): {_fmt(rep['agreement']['alpha'])}")
        for k in rep["agreement"]["kappas"]:
            out.append(f"Cohen's kappa {k['a']} / {k['b']} ({k['pairs']} pairs): {_fmt(k['kappa'])}")
        for reason, a in rep["per_reason"].items():
            out.append(f"rejected as {reason}: alpha {_fmt(a['alpha'])}, {a['agreed']}/{a['pairs']} agreed")
        open_conflicts = team.conflicts(session)
        if args.conflicts:
            for pid, votes in sorted(open_conflicts.items()):
                out.append(f"conflict #{pid}: " + "; ".join(
                    f"{name} {status}" + (f" ({reason})" if reason else "")
                    for name, (status, reason) in sorted(votes.items())))
        if args.json:
            if args.json == "-":
                import json

                out.append(json.dumps(rep, indent=1))
            else:
                try:  # before any output: a closed pipe never costs the file
                    write_json(args.json, rep)
                except OSError as exc:
                    note(f"error: {args.json}: cannot write ({exc.strerror})")
                    return 2
        emit("\n".join(out))
        return 1 if args.conflicts and open_conflicts else 0
    finally:
        session.workspace.close()
