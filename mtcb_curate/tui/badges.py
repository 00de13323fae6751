"""Small styled badges for the review and dedup screens, built as ``rich.text.Text`` (no markup).

``similar_badge`` is the ``≈N similar`` badge of a pair in a near-duplicate cluster;
``status_text`` is a pair's status (and rejection reason) as the dedup screens show it.
"""

from __future__ import annotations

from rich.text import Text

from mtcb_curate.dataset.model import Status
from mtcb_curate.neardup import Cluster
from mtcb_curate.plaintext import printable

#: Closest members named in the ``≈N similar`` badge.
BADGE_CLOSEST = 3

STATUS_GLYPH = {Status.UNDECIDED: "·", Status.ACCEPTED: "✓", Status.REJECTED: "✗", Status.SKIPPED: "»",
                Status.FLAGGED: "⚑"}
STATUS_STYLE = {Status.UNDECIDED: "bold", Status.ACCEPTED: "bold green", Status.REJECTED: "bold red",
                Status.SKIPPED: "bold dim", Status.FLAGGED: "bold yellow"}


def similar_badge(cluster: Cluster | None, pid: int, k: int = BADGE_CLOSEST) -> Text:
    """``≈2 similar (#12 91.3, #40 88.0)``: how many other members ``pid``'s cluster has, and
    its ``k`` closest matches with their question similarity (``Cluster.closest``).

    Returns an empty ``Text`` when there is no cluster or ``pid`` is not one of its members.
    """
    if cluster is None or pid not in cluster.ids:
        return Text()
    badge = Text()
    badge.append(f"≈{cluster.size - 1} similar", style="bold reverse yellow")
    closest = cluster.closest(pid, k)
    if closest:
        badge.append(" (" + ", ".join(f"#{other} {score:.1f}" for other, score in closest)
                     + (", …" if cluster.size - 1 > len(closest) else "") + ")", style="yellow")
    return badge


def status_text(status: Status, reason: str | None = None) -> Text:
    """``✗ REJECTED (duplicate of #3)``, styled by status; the reason is shown literally."""
    t = Text()
    t.append(f"{STATUS_GLYPH[status]} {status.value.upper()}", style=STATUS_STYLE[status])
    if reason:
        t.append(f" ({printable(reason, keep_newlines=False)})", style="red")
    return t
