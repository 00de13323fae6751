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
from mtcb_curate.store.session import PendingDecision, ReviewSession
from mtcb_curate.verify.repair import select_span as _select_span
from mtcb_curate.verify.repair import snap as _snap
from mtcb_curate.verify.repair import trim_passage
from mtcb_curate.verify.shrink import ShrinkOutcome, ShrinkProposal, plan_shrink
from mtcb_curate.verify.verdict import Verdict

if TYPE_CHECKING:
    from mtcb_curate.llm.client import ChatClient
    from mtcb_curate.llm.shrink import ShrinkResult

PASSAGE = "supporting_passage"


class NotApplicable(CurateError):
    """The repair does not apply to this pair (nothing to snap or trim, no document); the
    message says why, one line. Nothing was written."""


class NothingToDo(NotApplicable):
    """The repair has nothing to change (the passage already is what it would make): not a
    problem, only said. Nothing was written."""


class NothingLocated(NotApplicable):
    """``snap`` found nothing in the document to snap to (select a span instead). Nothing was
    written."""


@dataclass(frozen=True)
class Change:
    """What a decision, an edit or a repair changed.

    Attributes:
        pair_id: the pair.
        fields: the fields whose value changed (``status``, ``question``, ``answer``,
            ``supporting_passage``, ``chunk_index``), in that order; empty when nothing changed (nothing was
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
    #: One line saying what changed when the fields alone do not (``chunk_index 3 -> 0 ...``).
    note: str = ""

    @property
    def changed(self) -> bool:
        """True when anything changed."""
        return bool(self.fields)


def decide(session: ReviewSession, pair_id: int, status: Status, reason: str | None = None, *,
           meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> Change:
    """Set the pair's status (``UNDECIDED`` clears it; ``reason`` for a rejection).
    ``meanwhile``: work for the caller's thread while the commit waits on a server
    (``ReviewSession.decide``; the review screen wraps the next pair there).

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
        IndexError: no such pair.
    """
    before = session.view(pair_id)
    session.decide(pair_id, status, reason, meanwhile=meanwhile)
    after = session.view(pair_id)
    changed = ("status",) if (after.status, after.reason) != (before.status, before.reason) else ()
    return Change(pair_id, changed, after.status)


def decide_within(session: ReviewSession, pair_id: int, status: Status, reason: str | None = None, *,
                  patience_s: float, meanwhile: Callable[[Callable[[], bool]], object] | None = None
                  ) -> Change | PendingDecision:
    """``decide`` for a caller that must not wait long (``ReviewSession.decide_within``): the
    ``Change``, or a ``PendingDecision`` when a commit waiting on a server took longer than
    ``patience_s`` seconds (``PendingDecision.finish`` puts it in the session once it is done).

    Raises:
        WorkspaceError: the write failed within ``patience_s`` (nothing changed).
        IndexError: no such pair.
    """
    before = session.view(pair_id)
    pending = session.decide_within(pair_id, status, reason, patience_s=patience_s, meanwhile=meanwhile)
    if pending is not None:
        return pending
    after = session.view(pair_id)
    changed = ("status",) if (after.status, after.reason) != (before.status, before.reason) else ()
    return Change(pair_id, changed, after.status)


def undo(session: ReviewSession) -> int | None:
    """Undo the latest decision, edit, note, added pair or resolution (``ReviewSession.undo``;
    a bulk action or a batch repair is one step). Returns the pair it concerned, or None when
    there was nothing to undo.

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
    """
    return session.undo()


def set_note(session: ReviewSession, pair_id: int, text: str) -> bool:
    """Write, change or remove (blank ``text``) the pair's free-text note, undoable. False when
    the note already was that (nothing recorded).

    Raises:
        WorkspaceError: read-only or unwritable. IndexError: no such pair.
    """
    return session.set_note(pair_id, text)


def add_pair(session: ReviewSession, doc_key: str, question: str, answer: str, passage: str,
             chunk_index: int | None, *, origin: str = Via.GENERATE.value, details: Mapping | None = None) -> int:
    """Add a new pair to the workspace (undecided, undoable; ids continue after the source's),
    e.g. an LLM candidate kept by the curator (``origin``: what made it, also the history's
    ``via``); returns its id.

    Raises:
        WorkspaceError: read-only or unwritable.
    """
    return session.add_pair(doc_key, question, answer, passage, chunk_index, origin=str(origin),
                            details=None if details is None else dict(details))


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
    if r.verdict == Verdict.EXACT:
        raise NothingToDo("Already verbatim: nothing to snap.")
    new = _snap(doc.text, r)
    if new is None:
        raise NothingLocated("Nothing was located to snap to.")
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
        raise NothingToDo("Nothing to trim.")
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


def propose_shrink(session: ReviewSession, pair_id: int, *, config: Path | None = None,
                   verdicts: Verdicts | None = None, limits=None, reference_size: int | None = None) -> ShrinkOutcome:
    """The lexical shrink proposal for the pair's current passage, aimed at the checklist's
    limits (``app.gate.resolve_limits``; ``config`` as there). When the passage is verbatim in
    its document: ``verify.shrink.plan_evidence`` over the document around it (up to two
    reference chunks, ``[preview] reference_size``, either side: the rows a computed answer
    comes from, the table row just above), a run inside the passage preferred; else
    ``verify.shrink.plan_shrink`` inside the passage. Nothing is written. Tens of ms.

    Args:
        verdicts: the screen's verdict cache (its located span; default: verified here).
        limits, reference_size: the checklist's limits and ``[preview] reference_size``
            (characters) already resolved (default: read from ``config``).

    Returns:
        The outcome: ``proposal`` (text, offsets in the current passage and in the document,
        the computed figures' derivations) or None with the one-line reason.

    Raises:
        CurateError: the config file is not valid TOML. IndexError: no such pair.
    """
    from mtcb_curate.app.gate import resolve_limits
    from mtcb_curate.preview.settings import PreviewSettings
    from mtcb_curate.verify.shrink import plan_evidence

    view = session.view(pair_id)
    limits = limits if limits is not None else resolve_limits(session, config)
    doc = session.dataset.document_for(session.pairs[pair_id])
    if doc is not None and view.passage.strip():
        verdicts = verdicts if verdicts is not None else Verdicts(session)
        r = verdicts.quick(pair_id)
        if r.verdict != Verdict.EXACT:
            r = verdicts.complete(pair_id)
        if r.start is not None and r.end is not None and r.end > r.start:
            reach = 2 * (reference_size or PreviewSettings.resolve(config).reference_size)
            out = plan_evidence(doc.text, r.start, r.end, view.answer, view.question, reach=reach,
                                max_chars=limits.max_chars, min_chars=limits.min_chars)
            if out.proposal is None and r.verdict != Verdict.EXACT and "already minimal" in out.reason:
                # not verbatim, and nothing shorter: the located source text itself (a snap)
                text = doc.text[r.start:r.end]
                core = text.strip()
                a = r.start + text.index(core) if core else r.start
                why = (f"the passage as the document has it ({r.verdict} match before), {len(core):,} characters; "
                       + out.reason)
                return ShrinkOutcome(ShrinkProposal(core, 0, len(core), "sentence", (), why, None, (), out.computed,
                                                    a, a + len(core), 0), why, out.computed)
            return out
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
    """Make ``text`` the pair's passage: a shorter part of its current passage, or a span of its
    document a shrink proposal reached out for (``ShrinkProposal.outside``); an undoable edit
    recorded ``via="shrink"``, verified again (``verdicts``: the screen's cache; None builds one).

    Raises:
        NotApplicable: ``text`` is empty, neither a verbatim part of the current passage nor of
            its document, or the passage itself (nothing written).
        WorkspaceError: as :func:`repair`.
    """
    current = session.view(pair_id).passage
    if not text.strip():
        raise NotApplicable("The shrunk passage is empty.")
    if text not in current:
        doc = session.dataset.document_for(session.pairs[pair_id])
        if doc is None or text not in doc.text:
            raise NotApplicable("The shrunk passage is not a verbatim part of the current passage or its document: "
                                "not applied.")
    if text == current:
        raise NotApplicable("The passage is already that text.")
    return repair(session, verdicts if verdicts is not None else Verdicts(session), pair_id, text, Via.SHRINK)


# -- chunk_index repair ------------------------------------------------------------------------


def _chunk_result(session: ReviewSession, pair_id: int, verdicts: Verdicts | None):
    """The pair's current verification with ``in_chunk`` (fuzzy step included)."""
    if verdicts is not None:
        return verdicts.complete(pair_id)
    from mtcb_curate.verify import verify_pair

    return verify_pair(session.corpus_index, session.pairs[pair_id], session.view(pair_id).passage,
                       elsewhere=False, count_tokens=False)


def chunk_index_fix(session: ReviewSession, pair_id: int, *, verdicts: Verdicts | None = None):
    """The chunk_index repair the pair's current passage calls for (``verify.chunk_index.
    propose_fix``), or None when its chunk_index already holds the passage or the passage is
    not located. Nothing is written. Tens of ms (the document's windows are cached).

    Raises:
        IndexError: no such pair.
    """
    from mtcb_curate.verify.chunk_index import propose_fix

    r = _chunk_result(session, pair_id, verdicts)
    if r.start is None or not session.corpus_index.has(r.doc_key):
        return None
    return propose_fix(session.corpus_index.windows(r.doc_key), r)


def repair_chunk_index(session: ReviewSession, pair_id: int, *, verdicts: Verdicts | None = None) -> Change:
    """Set the pair's chunk_index to the MTCB window (8,192 tokens, 512 overlap) that holds its
    whole located passage: an undoable edit recorded ``via="chunk_index"``.

    Returns:
        The change; ``note`` says ``chunk_index 3 -> 0: ...`` (the old value, the new one, why).

    Raises:
        NotApplicable: no document, the passage is not located, the chunk_index already holds
            it, or no single window holds it (shorten it first); nothing written.
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
        IndexError: no such pair.
    """
    pair = session.pairs[pair_id]
    if session.dataset.document_for(pair) is None:
        raise NotApplicable("This pair's document is not in the corpus.")
    r = _chunk_result(session, pair_id, verdicts)
    if r.start is None:
        raise NotApplicable("The passage is not located in its document: fix the passage first (s, m or e).")
    fix = chunk_index_fix(session, pair_id, verdicts=verdicts)
    if fix is None:
        raise NotApplicable(f"chunk_index {pair.chunk_index}'s window already holds the passage: nothing to repair.")
    if fix.refused:
        raise NotApplicable(fix.reason[:1].upper() + fix.reason[1:] + ".")
    session.set_chunk_index(pair_id, fix.new, via=Via.CHUNK_INDEX)
    old = "none" if fix.old is None else str(fix.old)
    return Change(pair_id, ("chunk_index",), session.status(pair_id), None, Via.CHUNK_INDEX,
                  f"chunk_index {old} -> {fix.new}: {fix.reason}")


def plan_chunk_index_repairs(session: ReviewSession, ids=None, *, include_unset: bool = True) -> list:
    """Every chunk_index repair the session's current passages call for
    (``verify.chunk_index.propose_chunk_indexes``: one ``ChunkIndexFix`` per located pair whose
    chunk_index does not hold its passage, refusals included), limited to ``ids`` when given.
    Pairs without a chunk_index (null or empty) are a repairable gap (``links`` warns) and are
    filled with the window holding their passage; ``include_unset=False`` leaves them out.
    Nothing is written. Cost: verifying every pair and tokenizing each
    document once (under a second for squad-mtcb's 1,299 pairs, loading included).
    """
    from mtcb_curate.verify.chunk_index import propose_chunk_indexes

    fixes = propose_chunk_indexes(session)
    if not include_unset:
        fixes = [f for f in fixes if f.old is not None]
    if ids is not None:
        wanted = set(ids)
        fixes = [f for f in fixes if f.pair_id in wanted]
    return fixes


def repair_all_chunk_indexes(session: ReviewSession, ids=None, *, fixes=None) -> list[Change]:
    """Apply every chunk_index repair (:func:`plan_chunk_index_repairs`, or the given
    ``fixes``) as ONE undoable step: one ``session.undo()`` restores them all. Refused fixes
    (no single window holds the passage) are left out.

    Returns:
        One change per pair whose chunk_index changed, in id order (empty: nothing to do,
        nothing written).

    Raises:
        WorkspaceError: the workspace is read-only or cannot be written (nothing changed).
    """
    if fixes is None:
        fixes = plan_chunk_index_repairs(session, ids)
    todo = {f.pair_id: f for f in fixes if not f.refused}
    changed = session.set_chunk_indexes({pid: f.new for pid, f in todo.items()}, via=Via.CHUNK_INDEX)
    out = []
    for pid in changed:
        f = todo[pid]
        old = "none" if f.old is None else str(f.old)
        out.append(Change(pid, ("chunk_index",), session.status(pid), None, Via.CHUNK_INDEX,
                          f"chunk_index {old} -> {f.new}: {f.reason}"))
    return out


def set_chunk_index_meaning(session: ReviewSession, meaning: str) -> bool:
    """Record in the workspace what the dataset's chunk_index means: ``mtcb`` (MTCB's
    generation window, checked by ``links``) or ``ignore`` (something else: ``links`` does not
    check it). Returns False when it already was that.

    Raises:
        NotApplicable: another value (nothing written).
        WorkspaceError: the workspace is read-only or cannot be written.
    """
    try:
        return session.set_chunk_index_meaning(meaning)
    except ValueError as exc:
        raise NotApplicable(str(exc)) from None
