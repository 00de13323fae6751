"""Decide, edit and repair a pair, each returning what changed.

The review screen's keys call these; the screen only shows the ``Change`` (or the
``NotApplicable`` line when a repair does not apply). Every change is committed to the
workspace before it returns (``ReviewSession``) and undone with ``session.undo()``.

Repairs replace the supporting passage (the original stays in the history):

- ``snap``: the source text the verdict located (normalized or fuzzy match);
- ``trim``: whitespace and punctuation stripped from both ends;
- ``select``: a span of the source the curator picked.
- ``shrink``: a shorter run of the passage itself (:func:`propose_shrink`, the lexical proposal,
  or :func:`propose_llm_shrink`, the LLM's minimal exact quote), applied by :func:`apply_shrink`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mtcb_curate.app.verdicts import Verdicts
from mtcb_curate.dataset.model import Status, Via
from mtcb_curate.errors import CurateError
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.verify.repair import select_span as _select_span
from mtcb_curate.verify.repair import snap as _snap
from mtcb_curate.verify.repair import trim_passage
from mtcb_curate.verify.shrink import ShrinkOutcome, plan_shrink

if TYPE_CHECKING:
    from mtcb_curate.llm.client import ChatClient
    from mtcb_curate.llm.shrink import ShrinkResult

PASSAGE = "supporting_passage"


class NotApplicable(CurateError):
    """The repair does not apply to this pair (nothing to snap or trim, no document); the
    message says why, one line. Nothing was written."""


@dataclass(frozen=True)
class Change:
    """What a decision, an edit or a repair changed.

    Attributes:
        pair_id: the pair.
        fields: the fields whose value changed (``status``, ``question``, ``answer``,
            ``supporting_passage``), in that order; empty when nothing changed (nothing was
            recorded).
        status: the pair's status after the change.
        verdict: the passage's verdict after the change (``exact``, ``normalized``, ``fuzzy``,
            ``missing`` ...) when the passage changed and verdicts were given, else None.
        via: what made the change (``snap``, ``trim``, ``select``, ``shrink``, ``regenerate``), None by hand.
    """

    pair_id: int
    fields: tuple[str, ...]
    status: Status
    verdict: str | None = None
    via: str | None = None

    @property
    def changed(self) -> bool:
        """True when anything changed."""
        return bool(self.fields)


def decide(session: ReviewSession, pair_id: int, status: Status, reason: str | None = None) -> Change:
    """Set the pair's status (``UNDECIDED`` clears it; ``reason`` for a rejection).

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
        IndexError: no such pair.
    """
    before = session.status(pair_id)
    before_reason = session.view(pair_id).reason
    session.decide(pair_id, status, reason)
    after = session.view(pair_id)
    changed = ("status",) if (after.status, after.reason) != (before, before_reason) else ()
    return Change(pair_id, changed, after.status)


def edit(session: ReviewSession, pair_id: int, changes: Mapping[str, str], *, via: str | None = None,
         verdicts: Verdicts | None = None) -> Change:
    """Edit fields of the pair (``ReviewSession.edit``); the verdict is checked again when the
    passage changed and ``verdicts`` is given.

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
        ValueError: an unknown field. IndexError: no such pair.
    """
    before = session.view(pair_id)
    session.edit(pair_id, dict(changes), via=via)
    after = session.view(pair_id)
    fields = tuple(f for f in ("question", "answer", PASSAGE)
                   if getattr(before, _ATTR[f]) != getattr(after, _ATTR[f]))
    verdict = None
    if PASSAGE in fields and verdicts is not None:
        verdict = str(verdicts.quick(pair_id).verdict)
    return Change(pair_id, fields, after.status, verdict, via)


_ATTR = {"question": "question", "answer": "answer", PASSAGE: "passage"}


def repair(session: ReviewSession, verdicts: Verdicts, pair_id: int, passage: str, via: str) -> Change:
    """Save ``passage`` as the pair's supporting passage (``via`` a repair's name) and verify it
    again. ``changed`` is False when the passage already was that text.

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
    """
    return edit(session, pair_id, {PASSAGE: passage}, via=via, verdicts=verdicts)


def snap(session: ReviewSession, verdicts: Verdicts, pair_id: int) -> Change:
    """Replace the passage with the source text its verdict located (the full verdict, fuzzy
    step included: tens of ms).

    Raises:
        NotApplicable: no document, already verbatim, or nothing located.
        WorkspaceError: as :func:`repair`.
    """
    doc = session.dataset.document_for(session.pairs[pair_id])
    if doc is None:
        raise NotApplicable("This pair's document is not in the corpus.")
    r = verdicts.complete(pair_id)
    if r.verdict == "exact":
        raise NotApplicable("Already verbatim: nothing to snap.")
    new = _snap(doc.text, r)
    if new is None:
        raise NotApplicable("Nothing was located to snap to.")
    return repair(session, verdicts, pair_id, new, "snap")


def trim(session: ReviewSession, verdicts: Verdicts, pair_id: int) -> Change:
    """Strip whitespace and punctuation from both ends of the passage.

    Raises:
        NotApplicable: nothing to trim.
        WorkspaceError: as :func:`repair`.
    """
    passage = session.view(pair_id).passage
    trimmed = trim_passage(passage)
    if trimmed == passage:
        raise NotApplicable("Nothing to trim.")
    return repair(session, verdicts, pair_id, trimmed, "trim")


def select(session: ReviewSession, verdicts: Verdicts, pair_id: int, start: int, end: int) -> Change:
    """Make the span ``[start, end)`` (characters) of the pair's document its passage.

    Raises:
        NotApplicable: no document, or an empty or out-of-range span.
        WorkspaceError: as :func:`repair`.
    """
    doc = session.dataset.document_for(session.pairs[pair_id])
    if doc is None:
        raise NotApplicable("This pair's document is not in the corpus.")
    try:
        passage = _select_span(doc.text, start, end)
    except ValueError as exc:
        raise NotApplicable(str(exc)) from None
    return repair(session, verdicts, pair_id, passage, "select")


def propose_shrink(session: ReviewSession, pair_id: int, *, config: Path | None = None) -> ShrinkOutcome:
    """The lexical shrink proposal for the pair's current passage (``verify.shrink.plan_shrink``:
    the shortest run of whole sentences, lines or table rows still holding the answer's figures
    and content words), aimed at the checklist's limits (``app.gate.resolve_limits``; ``config``
    as there). Nothing is written. Well under 100 ms for a 3,500-character table passage.

    Returns:
        The outcome: ``proposal`` (text and offsets in the current passage) or None with the
        one-line reason.

    Raises:
        CurateError: the config file is not valid TOML. IndexError: no such pair.
    """
    from mtcb_curate.app.gate import resolve_limits

    view = session.view(pair_id)
    limits = resolve_limits(session, config)
    return plan_shrink(view.passage, view.answer, view.question, max_chars=limits.max_chars,
                       min_chars=limits.min_chars)


def propose_llm_shrink(session: ReviewSession, pair_id: int, client: ChatClient, *, config: Path | None = None,
                       cancel: threading.Event | None = None, on_retry: Callable[..., None] | None = None,
                       sample: int = 0) -> ShrinkResult:
    """The LLM's minimal exact quote of the pair's current passage (``llm.shrink.shrink_with_llm``,
    retried with feedback, accepted only verbatim), with ``max_chars`` from the checklist's
    limits. Blocking (seconds): call it in a worker. Nothing is written.

    Raises:
        LLMUnavailable, LLMError: from the client. CurateError: the config file is not valid TOML.
    """
    from mtcb_curate.app.gate import resolve_limits
    from mtcb_curate.llm.shrink import shrink_with_llm

    view = session.view(pair_id)
    limits = resolve_limits(session, config)
    return shrink_with_llm(client, view.passage, view.question, view.answer, max_chars=limits.max_chars,
                           sample=sample, cancel=cancel, on_retry=on_retry)


def apply_shrink(session: ReviewSession, pair_id: int, text: str, *, verdicts: Verdicts | None = None) -> Change:
    """Make ``text``, a shorter part of the pair's current passage, its passage: an undoable
    edit recorded ``via="shrink"``, verified again (``verdicts``: the screen's cache; None
    builds one).

    Raises:
        NotApplicable: ``text`` is empty, not a verbatim substring of the current passage, or
            the passage itself (nothing written).
        WorkspaceError: as :func:`repair`.
    """
    current = session.view(pair_id).passage
    if not text.strip():
        raise NotApplicable("The shrunk passage is empty.")
    if text not in current:
        raise NotApplicable("The shrunk passage is not a verbatim part of the current passage: not applied.")
    if text == current:
        raise NotApplicable("The passage is already that text.")
    return repair(session, verdicts if verdicts is not None else Verdicts(session), pair_id, text, Via.SHRINK)
