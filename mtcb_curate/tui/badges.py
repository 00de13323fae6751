"""Small styled badges for the review and dedup screens, built as ``rich.text.Text`` (no markup).

``similar_badge`` is the ``≈N similar`` badge of a pair in a near-duplicate cluster;
``shared_badge`` names the pairs it shares its passage with (a shared-passage group, not a
duplicate); ``status_text`` is a pair's status (and rejection reason) as the dedup screens show it.
"""

from __future__ import annotations

from rich.text import Text

from mtcb_curate.dataset.model import Status
from mtcb_curate import neardup
from mtcb_curate.neardup import Cluster
from mtcb_curate.plaintext import printable

#: Closest members named in the ``≈N similar`` badge.
BADGE_CLOSEST = 3

STATUS_GLYPH = {Status.UNDECIDED: "·", Status.ACCEPTED: "✓", Status.REJECTED: "✗", Status.SKIPPED: "»",
                Status.FLAGGED: "⚑"}
STATUS_STYLE = {Status.UNDECIDED: "bold", Status.ACCEPTED: "bold green", Status.REJECTED: "bold red",
                Status.SKIPPED: "bold dim", Status.FLAGGED: "bold yellow"}


#: Pair ids named in the ``shares its passage with`` badge.
SHARED_SHOWN = 3

_LINK_LABEL = {
    neardup.REASON_IDENTICAL: "identical",
    neardup.REASON_IDENTICAL_ACROSS: "identical",
    neardup.REASON_SAME_ANSWER: "same answer",
    neardup.REASON_LLM: "LLM",
    neardup.REASON_SAME_PASSAGE: "same passage",
    neardup.REASON_OVERLAP: "overlapping passage",
}


def link_label(reasons: tuple[str, ...], score: float) -> str:
    """Why two pairs are linked, in a few words: ``identical``, ``similar 91`` (the question
    similarity, 0-100), ``same answer``, ``LLM``; the first of ``reasons`` (``REASONS`` order)."""
    first = reasons[0] if reasons else neardup.REASON_SIMILAR
    if first == neardup.REASON_SIMILAR:
        return f"similar {score:.0f}"
    return _LINK_LABEL.get(first, first)


def similar_badge(cluster: Cluster | None, pid: int, k: int = BADGE_CLOSEST) -> Text:
    """``≈2 similar (#12 similar 91, #40 same answer)``: how many pairs ``pid`` is linked to
    directly (above the threshold, or by the LLM), and the ``k`` closest with why each is
    linked (``link_label``); ``· cluster of N`` when the cluster holds more through others.

    Returns an empty ``Text`` when there is no cluster or ``pid`` is not one of its members.
    """
    if cluster is None or pid not in cluster.ids:
        return Text()
    linked = cluster.linked(pid)
    badge = Text()
    badge.append(f"≈{len(linked)} similar", style="bold reverse yellow")
    if linked:
        badge.append(" (" + ", ".join(f"#{other} {link_label(reasons, score)}" for other, reasons, score in linked[:k])
                     + (", …" if len(linked) > k else "") + ")", style="yellow")
    if cluster.size - 1 > len(linked):
        badge.append(f" · cluster of {cluster.size}", style="dim yellow")
    return badge


def shared_badge(group: Cluster | None, pid: int, k: int = SHARED_SHOWN) -> Text:
    """``shares its passage with #12, #40``: the other members of ``pid``'s shared-passage
    group (different questions, same or overlapping passage), at most ``k`` named.

    Returns an empty ``Text`` when there is no group or ``pid`` is not one of its members.
    """
    if group is None or pid not in group.ids:
        return Text()
    others = [i for i in group.ids if i != pid]
    named = ", ".join(f"#{i}" for i in others[:k]) + (f" +{len(others) - k}" if len(others) > k else "")
    return Text(f"shares its passage with {named}", style="cyan")


def status_text(status: Status, reason: str | None = None) -> Text:
    """``✗ REJECTED (duplicate of #3)``, styled by status; the reason is shown literally."""
    t = Text()
    t.append(f"{STATUS_GLYPH[status]} {status.value.upper()}", style=STATUS_STYLE[status])
    if reason:
        t.append(f" ({printable(reason, keep_newlines=False)})", style="red")
    return t
