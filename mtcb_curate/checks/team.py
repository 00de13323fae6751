"""The ``conflicts`` check: curators of a team disagree on a pair two of them decided blind,
and no lead has decided it yet (``store.postgres.PgWorkspace.conflicts``)."""

from __future__ import annotations

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, check, result
from mtcb_curate.plaintext import one_line


@check("conflicts", CheckStatus.FAIL)
def conflicts(ctx: CheckContext) -> CheckResult:
    """Fails: curators disagree on a pair of the overlap and no lead has decided it (passes
    with one curator: nothing to disagree on)."""
    find = getattr(ctx.session.workspace, "conflicts", None) if ctx.has_workspace else None
    if find is None:
        return CheckResult("conflicts", CheckStatus.PASS, "one curator: no overlap to disagree on")
    open_ = find()
    reasons = {pid: one_line("; ".join(f"{name}: {status}" + (f" ({reason})" if reason else "")
                                       for name, (status, reason) in sorted(votes.items())), 200)
               for pid, votes in open_.items()}
    msg = (f"{len(reasons)} pair{'s' if len(reasons) != 1 else ''} on which curators disagree: a lead decides "
           f"them (mtcb-curate team --conflicts, or the app's conflicts view)" if reasons
           else "no open conflict between curators")
    return result("conflicts", reasons, set(reasons), msg)
