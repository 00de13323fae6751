"""A team on one shared workspace: planning the work split, the team report (each curator's
counts and pace, agreement on the overlap), conflicts and a lead's decisions on them. Both the
``team`` command and the app's team screen call these."""

from __future__ import annotations

import time
from typing import Any

from mtcb_curate.errors import WorkspaceError
from mtcb_curate.dataset.model import Status
from mtcb_curate.store.session import ReviewSession, pace_per_hour


def is_team(session: ReviewSession) -> bool:
    """True when several curators' decisions meet in the session's workspace: a shared
    PostgreSQL one, or a SQLite one holding merged votes (``app.merge``)."""
    ws = session.workspace
    return hasattr(ws, "plan_work") or (hasattr(ws, "votes") and bool(ws.votes()))


def _team_store(session: ReviewSession) -> Any:
    if not is_team(session):
        raise WorkspaceError(f"{session.workspace.path}: a team needs a shared workspace: pass --workspace "
                             f"postgresql://... (or set MTCB_CURATE_DATABASE_URL), or fold SQLite workspaces "
                             f"together with mtcb-curate merge")
    return session.workspace


def plan(session: ReviewSession, overlap: float | None = None) -> dict[str, int]:
    """List every pair of the session (added ones too) in the work split, ``overlap`` of them
    (default ``[team] overlap``) for two curators; pairs listed before keep their share.
    Returns ``{"pairs", "overlap"}``.

    Raises:
        WorkspaceError: the workspace is not shared, or cannot be written.
    """
    from mtcb_curate.store.curators import configured_overlap

    ws = session.workspace
    if not hasattr(ws, "plan_work"):
        raise WorkspaceError(f"{ws.path}: a work split needs a shared workspace: pass --workspace postgresql://... "
                             f"(or set MTCB_CURATE_DATABASE_URL)")
    share = configured_overlap() if overlap is None else overlap
    return ws.plan_work(range(len(session)), share, seed=session.workspace.get_meta("fingerprint") or "")


def next_pair(session: ReviewSession, after: int = -1) -> int | None:
    """The next pair for this curator: on a shared workspace with a work split, the next pair
    handed to them (``claim_next``: held for them under a lease, none of it anybody else's);
    otherwise the next undecided pair after ``after``. None when nothing is left.

    Raises:
        WorkspaceError: the shared workspace cannot be reached.
    """
    if is_team(session):
        ws = _team_store(session)
        if ws.get_meta("team_overlap") is not None:
            return ws.claim_next()
    return session.next_undecided(after)


def report(session: ReviewSession, now: float | None = None) -> dict[str, Any]:
    """The team report, JSON-ready::

        {"curators": [{"name", "decided", "per_hour"}],          # per_hour: None before a pace
         "overlap": {"pairs", "decided_by_two", "agreed", "open_conflicts"},
         "agreement": {"alpha", "kappas": [{"a", "b", "pairs", "kappa"}]},
         "per_reason": {reason: {"pairs", "agreed", "alpha", "kappas"}}}

    Raises:
        WorkspaceError: the workspace is not shared.
    """
    from mtcb_curate.stats.agreement import agreement, per_reason

    ws = _team_store(session)
    now = time.time() if now is None else now
    overlap = ws.overlap_pairs()
    votes = {pid: v for pid, v in ws.votes().items() if pid in overlap}
    activity = ws.team_activity()
    overall = agreement(votes)
    return {
        "curators": [{"name": name, "decided": len(times), "per_hour": pace_per_hour(times, now)}
                     for name, times in sorted(activity.items())],
        "overlap": {"pairs": len(overlap), "decided_by_two": overall.pairs, "agreed": overall.agreed,
                    "open_conflicts": len(ws.conflicts())},
        "agreement": {"alpha": overall.alpha, "kappas": [k.__dict__ for k in overall.kappas]},
        "per_reason": {r: a.to_dict() for r, a in per_reason(votes).items()},
    }


def conflicts(session: ReviewSession) -> dict[int, dict[str, tuple[str, str | None]]]:
    """Open conflicts: pair id -> {curator: (status, reason)} ({} outside a team)."""
    return _team_store(session).conflicts() if is_team(session) else {}


def resolve(session: ReviewSession, pair_id: int, status: str, reason: str | None = None) -> int:
    """A lead decides a pair of the overlap; the history seq.

    Raises:
        WorkspaceError: the workspace is not shared, or the pair is not one of the overlap.
    """
    ws = _team_store(session)
    if pair_id not in ws.overlap_pairs():
        raise WorkspaceError(f"{getattr(ws, 'label', ws.path)}: pair {pair_id} is not one of the overlap; decide it "
                             f"as any other pair")
    return ws.resolve(pair_id, status, reason if status == Status.REJECTED else None)
