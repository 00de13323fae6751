"""A team's rules on curators' decisions: when two votes on a pair agree.

Used by both workspace backends (a PostgreSQL work split, SQLite workspaces merged with
``app.merge``) and by the agreement statistics (``stats.agreement``).
"""

from __future__ import annotations

from mtcb_curate.dataset.model import Status

__all__ = ["reason_category", "votes_agree"]


def votes_agree(votes: list[tuple[str, str | None]]) -> bool:
    """True when curators' decisions ``(status, reason)`` on a pair agree: the same status and,
    for rejections, the same reason category (``reason_category``: ``duplicate of #3`` and
    ``duplicate of #7`` agree). An empty list or one vote agrees."""
    return len({(s, reason_category(r) if s == Status.REJECTED else None) for s, r in votes}) <= 1


def reason_category(reason: str | None) -> str | None:
    """A rejection reason without its detail: ``duplicate of #12`` -> ``duplicate``,
    ``other: why`` -> ``other``; None for None or an empty category."""
    if reason is None:
        return None
    return reason.split(":", 1)[0].split(" of #", 1)[0].strip() or None
