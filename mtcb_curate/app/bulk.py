"""Bulk actions over a list of pair ids (the review screen's current view), each ONE undo step.

Two phases, so the screen can say how many pairs an action touches and ask once before
anything is written:

- :func:`plan` works out, for every id, what the action would change and leaves out the pairs
  it would not (already accepted, nothing to snap or trim, no shrink proposal, chunk_index
  already right, cluster already marked). Nothing is written. Decisions cost microseconds a
  pair; ``snap`` runs each passage's full verdict (fuzzy step: tens of ms a pair that is not
  verbatim), ``shrink`` a lexical proposal (under 100 ms a pair), ``chunk_index`` verifies and
  tokenizes once: run those in a worker.
- :func:`apply` writes the plan as one transaction and one history group (``decide_many``,
  ``edit_many``, ``set_chunk_indexes`` or one ``not_duplicates`` entry): one
  ``session.undo()`` takes the whole action back.

:func:`run` does both. Actions: :data:`ACCEPT`, :data:`REJECT` (with a reason), :data:`SKIP`,
:data:`FLAG`, :data:`SNAP`, :data:`TRIM`, :data:`SHRINK` (``app.review.propose_shrink``),
:data:`FIT` (``app.findability.propose_fit``: the part of a passage inside one chunk; both search
the whole document when the evidence near a passage does not lie inside one chunk),
:data:`CHUNK_INDEX` (``app.review.plan_chunk_index_repairs``) and :data:`NOT_DUPLICATES`
(every given cluster that holds a shown pair).

Bulk never discards what can be saved: only :data:`REJECT` rejects (:func:`rejects` counts it
for the menu). A repair applies only where its proposal keeps the answer's evidence (the shrink
and the fit propose nothing else), and the pairs that needed it but could not be fixed are
listed with the reason (:attr:`Plan.skipped`): a shrink for every passage over the checklist's
``max_passage_chars`` without a proposal, a fit for every passage not inside one chunk without
one. They stay as they are, for the curator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtcb_curate.app.verdicts import Verdicts
from mtcb_curate.dataset.model import PASSAGE_FIELD, Status, Via
from mtcb_curate.errors import CurateError
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.verify.verdict import Verdict

ACCEPT, REJECT, SKIP, FLAG = "accept", "reject", "skip", "flag"
SNAP, TRIM, SHRINK, CHUNK_INDEX, NOT_DUPLICATES = "snap", "trim", "shrink", "chunk_index", "not_duplicates"
FIT = "fit"

#: Every bulk action: id -> (label for the menu, whether planning is slow enough for a worker).
ACTIONS: dict[str, tuple[str, bool]] = {
    ACCEPT: ("accept", False),
    REJECT: ("reject with a reason", False),
    SKIP: ("skip", False),
    FLAG: ("flag", False),
    SNAP: ("snap passages to the source", True),
    TRIM: ("trim passage edges", False),
    SHRINK: ("shrink passages (lexical)", True),
    FIT: ("fit passages in one chunk", True),
    CHUNK_INDEX: ("repair chunk_index", True),
    NOT_DUPLICATES: ("not duplicates: every shown cluster", False),
}

_STATUS = {ACCEPT: Status.ACCEPTED, REJECT: Status.REJECTED, SKIP: Status.SKIPPED, FLAG: Status.FLAGGED}

#: The history ``via`` of a bulk decision.
VIA_BULK = "bulk"


class BulkError(CurateError):
    """A bulk action that cannot run (an unknown action, a rejection without a reason); one line."""


@dataclass
class Plan:
    """What a bulk action would change; nothing written yet.

    Attributes:
        action: the action id (``ACTIONS``).
        ids: the ids it was planned over (the view).
        touched: the pair ids it changes, ascending (its count is what the screen shows).
        changes: per action: ``{pid: (status, reason)}`` for decisions, ``{pid: {field: text}}``
            for snap/trim/shrink, the ``ChunkIndexFix`` list for chunk_index, the id groups for
            not_duplicates.
        skipped: pair id -> why it could not be fixed (one line), for the pairs a repair should
            fix but cannot (no document, nothing located, no shrink of a passage over the
            limit, no part of a passage inside one chunk that holds the answer's evidence).
    """

    action: str
    ids: list[int]
    touched: list[int] = field(default_factory=list)
    changes: Any = None
    skipped: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """What a bulk action changed: ``touched`` pairs (ascending), ONE undo step."""

    action: str
    touched: list[int]

    @property
    def count(self) -> int:
        return len(self.touched)


def rejects(session: ReviewSession, action: str, ids: Iterable[int]) -> int:
    """How many of ``ids`` ``action`` would reject (the menu says so for every action): the
    pairs not already rejected for :data:`REJECT`, 0 for every other action."""
    if action != REJECT:
        return 0
    return sum(1 for pid in set(ids) if session.status(pid) is not Status.REJECTED)


def plan(session: ReviewSession, action: str, ids: Iterable[int], *, reason: str | None = None,
         verdicts: Verdicts | None = None, clusters: Iterable[Iterable[int]] = (), config: Path | None = None,
         cancelled: Callable[[], bool] = lambda: False, chunks=None) -> Plan:
    """What ``action`` would change over ``ids`` (see the module docstring); nothing is written.

    Args:
        reason: the rejection reason (``REJECT`` only; '' or None: no reason).
        verdicts: the screen's verdict cache (``SNAP``; default: a new one).
        clusters: near-duplicate clusters as id lists (``NOT_DUPLICATES``): those holding a pair
            of ``ids`` are marked (each as a whole).
        config: the config file for the shrink's limits and the chunkers (``SHRINK``, ``FIT``).
        chunks: the ``app.findability.DocumentChunks`` to fit in (``FIT``) and to search the
            whole document with when the evidence near a passage does not lie inside one chunk
            (``SHRINK``, ``FIT``; default: made from ``config``'s ``[preview]`` settings).
        cancelled: polled between pairs by the slow actions; True stops early (the plan so far).

    Raises:
        BulkError: an unknown action. IndexError: an id that is no pair.
    """
    if action not in ACTIONS:
        raise BulkError(f"unknown bulk action {action!r}: one of {', '.join(ACTIONS)}")
    ids = sorted(set(ids))
    for pid in ids:
        if not 0 <= pid < len(session):
            raise IndexError(f"no pair {pid}: ids run from 0 to {len(session) - 1}")
    p = Plan(action, ids)
    if action in _STATUS:
        status = _STATUS[action]
        why = (reason or None) if status is Status.REJECTED else None
        todo = {}
        for pid in ids:
            v = session.view(pid)
            if v.status is not status or (status is Status.REJECTED and v.reason != why):
                todo[pid] = (status, why)
        p.changes = todo
    elif action in (SNAP, TRIM, SHRINK, FIT):
        p.changes = _plan_passages(session, action, ids, p.skipped, verdicts, config, cancelled, chunks)
    elif action == CHUNK_INDEX:
        from mtcb_curate.app.review import plan_chunk_index_repairs

        fixes = plan_chunk_index_repairs(session, ids)
        for f in fixes:
            if f.refused:
                p.skipped[f.pair_id] = f.reason
        p.changes = [f for f in fixes if not f.refused]
        p.touched = sorted(f.pair_id for f in p.changes)
        return p
    else:  # NOT_DUPLICATES
        shown = set(ids)
        marked = session.not_duplicates()
        groups = []
        for c in clusters:
            members = sorted(set(c))
            if len(members) < 2 or not shown.intersection(members):
                continue
            new = {(a, b) for a in members for b in members if a < b} - marked
            if new:
                groups.append(members)
        p.changes = groups
        p.touched = sorted({pid for g in groups for pid in g})
        return p
    p.touched = sorted(p.changes)
    return p


def _plan_passages(session: ReviewSession, action: str, ids: list[int], skipped: dict[int, str],
                   verdicts: Verdicts | None, config: Path | None, cancelled: Callable[[], bool], chunks=None) -> dict:
    from mtcb_curate.app.review import propose_shrink
    from mtcb_curate.verify.repair import snap as snap_text
    from mtcb_curate.verify.repair import trim_passage

    if action in (SNAP, SHRINK, FIT) and verdicts is None:
        verdicts = Verdicts(session)
    limit = None
    if action == SHRINK:
        from mtcb_curate.app.gate import resolve_limits

        limit = resolve_limits(session, config).max_chars
    if action in (FIT, SHRINK) and chunks is None:
        from mtcb_curate.app.findability import DocumentChunks
        from mtcb_curate.preview.settings import PreviewSettings

        chunks = DocumentChunks(PreviewSettings.resolve(config))
    out: dict[int, dict[str, str]] = {}
    for pid in ids:
        if cancelled():
            break
        passage = session.view(pid).passage
        new = None
        if action == TRIM:
            new = trim_passage(passage)
        elif action == SNAP:
            doc = session.dataset.document_for(session.pairs[pid])
            if doc is None:
                skipped[pid] = "no document in the corpus"
                continue
            r = verdicts.complete(pid)
            if r.verdict == Verdict.EXACT:
                continue
            new = snap_text(doc.text, r)
            if new is None:
                skipped[pid] = "nothing located to snap to"
                continue
        elif action == SHRINK:
            outcome = propose_shrink(session, pid, config=config, verdicts=verdicts, chunks=chunks)
            if outcome.proposal is None:
                if len(passage) > limit:
                    skipped[pid] = f"over {limit:,} characters and no shorter passage: {outcome.reason}"
                continue
            new = outcome.proposal.text
        else:  # FIT
            new = _fit(session, pid, chunks, verdicts, config, skipped)
        if new is not None and new != passage and new.strip():
            out[pid] = {PASSAGE_FIELD: new}
    return out


def _fit(session: ReviewSession, pid: int, chunks, verdicts: Verdicts, config: Path | None,
         skipped: dict[int, str]) -> str | None:
    """The fit of pair ``pid``'s passage in one chunk, or None (with the reason in ``skipped``
    when its passage is not inside one chunk and cannot be fitted)."""
    from mtcb_curate.app.findability import propose_fit
    from mtcb_curate.app.review import NotApplicable

    try:
        outcome = propose_fit(session, pid, chunks, verdicts=verdicts, config=config)
    except NotApplicable as exc:
        skipped[pid] = str(exc).rstrip(".")
        return None
    if outcome.proposal is None:
        if "already lies inside one chunk" not in outcome.reason:
            skipped[pid] = outcome.reason
        return None
    return outcome.proposal.text


_VIA = {SNAP: Via.SNAP, TRIM: Via.TRIM, SHRINK: Via.SHRINK, FIT: Via.SHRINK}


def apply(session: ReviewSession, p: Plan) -> Result:
    """Write ``p`` as ONE undo step (one transaction; nothing when it touches no pair).

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
    """
    if not p.touched:
        return Result(p.action, [])
    if p.action in _STATUS:
        touched = session.decide_many(p.changes, via=VIA_BULK)
    elif p.action in _VIA:
        touched = session.edit_many(p.changes, via=_VIA[p.action])
    elif p.action == CHUNK_INDEX:
        from mtcb_curate.app.review import repair_all_chunk_indexes

        touched = [c.pair_id for c in repair_all_chunk_indexes(session, fixes=p.changes)]
    else:
        touched = p.touched if session.mark_not_duplicate_groups(p.changes) else []
    return Result(p.action, sorted(touched))


def run(session: ReviewSession, action: str, ids: Iterable[int], **kw) -> Result:
    """:func:`plan` then :func:`apply` (``kw`` as :func:`plan` takes them)."""
    return apply(session, plan(session, action, ids, **kw))
