"""A review session: a ``Dataset`` with a ``Workspace`` laid over it.

This is the curation logic the app calls on every key: decide, edit, undo, counts, the next
undecided pair, search, and the review rate. It keeps an in-memory mirror of the workspace's
state, updated only after the workspace has committed, so what the screen shows is always
what is on disk.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, deque
from collections.abc import Callable
from contextlib import nullcontext
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from mtcb_curate.dataset.model import (
    CHUNK_INDEX_FIELD,
    EDITABLE_FIELDS,
    PASSAGE_FIELD,
    Dataset,
    DocumentBytes,
    HistoryKind,
    QAPair,
    Status,
    Via,
    corpus_fingerprint,
)
from mtcb_curate.errors import WorkspaceError
from mtcb_curate.store.base import Decision, Store
from mtcb_curate.store.changes import PendingChange

#: A pause longer than this (seconds) between two decisions counts as a break, not review time,
#: in ``rate_per_hour`` (5 minutes: longer than reading any one pair beside a 10-K page).
IDLE_CAP_SECONDS = 300.0
#: ``rate_per_hour`` says nothing before this much active review time (seconds): two quick
#: decisions are not a pace (they showed 31,000 pairs/h).
MIN_RATE_SECONDS = 60.0
#: ``rate_per_hour`` looks back over this much active review time (seconds).
RATE_WINDOW_SECONDS = 3600.0
#: ``decide`` runs its caller's ``meanwhile`` work during the commit only where recent commits
#: took at least this long (seconds; the median, the lower of the middle two for an even count,
#: of the last ``COMMIT_WINDOW`` timed decision commits, so that one slow commit on a quick
#: server does not switch it on): a shorter wait does not pay for handing the commit to another
#: thread (figures: README, "A server across a network").
OVERLAP_MIN_COMMIT_S = 0.002
COMMIT_WINDOW = 8
#: Only commits on the caller's thread are timed: an overlapped one waits for the interpreter
#: lock while the caller works, so it looks slow on a quick server and would keep the overlap
#: on. After this many overlapped decisions in a row, one runs on the caller's thread, timed,
#: so that the median follows the server.
OVERLAP_PROBE_EVERY = 8


@dataclass(frozen=True, slots=True)
class PairView:
    """A pair as the curator currently sees it: the source texts with edits applied.

    Attributes:
        pair: the pair as loaded, with its current ``chunk_index`` (a repaired one applied).
        question, answer, passage: current texts (edited or original).
        edited: names of the fields that differ from the source (``supporting_passage``,
            ``chunk_index`` ...).
        status: the current status; reason: the rejection reason, if any.
    """

    pair: QAPair
    question: str
    answer: str
    passage: str
    edited: frozenset[str]
    status: Status
    reason: str | None


class ReviewSession:
    """Decisions and edits over a dataset, persisted in a workspace.

    Args:
        dataset: the loaded dataset (never modified).
        workspace: an open store bound to it (``store.base.Store``: the SQLite ``Workspace``, see
            ``Workspace.bind``).
    """

    def __init__(self, dataset: Dataset, workspace: Store):
        self.dataset = dataset
        self.workspace = workspace
        self._decisions: dict[int, Decision] = workspace.decisions()
        self._edits: dict[int, dict[str, Any]] = workspace.edits()
        self._times: list[float] = workspace.decision_times()
        #: Every pair as loaded: the source's rows, then those added in the workspace (ids continue).
        self._loaded: list[QAPair] = list(dataset.pairs)
        for pid, value in workspace.added_pairs().items():
            if pid == len(self._loaded):
                self._loaded.append(_added_pair(pid, value))
        #: Every pair with its CURRENT chunk_index (an edited one applied; the texts stay as
        #: loaded: ``view`` applies those), so whatever reads ``pairs[i].chunk_index``
        #: (verification's ``in_chunk``, the checks, publishing, export) sees the repair.
        self.pairs: list[QAPair] = list(self._loaded)
        for pid in self._edits:
            if 0 <= pid < len(self.pairs):
                self._sync_pair(pid)
        self._not_duplicates: set[tuple[int, int]] = workspace.not_duplicates()
        self._shared_evidence: set[tuple[int, int]] = workspace.shared_evidence()
        #: pair id -> the curator's note (pairs without one are absent).
        self._notes: dict[int, str] = workspace.notes()
        self._corpus_index = None
        self._corpus_fingerprint: str | None = None
        #: ``chunk_index_meaning`` as last read (it is read for every pair's problems).
        self._meaning: str | None = None
        self._writer_pool: ThreadPoolExecutor | None = None
        #: Seconds the last decision commits timed on the caller's thread took (``_timed_decide``).
        self._commit_times: deque[float] = deque(maxlen=COMMIT_WINDOW)
        #: Decisions overlapped since the last one timed on the caller's thread.
        self._overlapped = 0
        #: The change made through ``run_within`` (done or still waiting on the store), or None.
        self._change: PendingChange | None = None
        n = len(self.pairs)
        # Decisions for ids the source no longer has are kept on disk but not shown.
        self._decisions = {k: v for k, v in self._decisions.items() if 0 <= k < n}
        self._counts = Counter(Status(d.status) for d in self._decisions.values())

    # -- reading ---------------------------------------------------------------------------

    @property
    def corpus_index(self):
        """The dataset's ``verify.CorpusIndex``, one per session: the app's verdicts, the
        checklist and the commands share its skeleton indexes and token windows (a window
        pass tokenizes the corpus, about 5 s at ficha scale, so it must not run twice; the
        windows are kept in the user cache, ``dataset.token_cache``, for the next session)."""
        if self._corpus_index is None:
            from mtcb_curate.dataset.token_cache import TokenCache
            from mtcb_curate.verify.search import CorpusIndex

            self._corpus_index = CorpusIndex.from_dataset(self.dataset, TokenCache())
        return self._corpus_index

    @property
    def corpus_fingerprint(self) -> str:
        """sha256 hex of the corpus (``dataset.model.corpus_fingerprint``), computed once per
        session: the cache key of the preview, the findability screen and the checklist."""
        if self._corpus_fingerprint is None:
            self._corpus_fingerprint = corpus_fingerprint(DocumentBytes(self.dataset.documents))
        return self._corpus_fingerprint

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def read_only(self) -> bool:
        """True when the workspace cannot be written."""
        return self.workspace.read_only

    def status(self, pair_id: int) -> Status:
        """The pair's current status."""
        d = self._decisions.get(pair_id)
        return Status.UNDECIDED if d is None else Status(d.status)

    def decisions(self) -> dict[int, tuple[str, str | None]]:
        """Pair id -> (status value, reason) of every decided pair, at once (undecided pairs are
        absent): what ``status`` and ``view(...).reason`` give, without a call per pair."""
        return {pid: (d.status, d.reason) for pid, d in self._decisions.items()}

    def view(self, pair_id: int) -> PairView:
        """The pair with edits applied (see ``PairView``)."""
        pair = self.pairs[pair_id]
        ed = self._edits.get(pair_id, {})
        d = self._decisions.get(pair_id)
        return PairView(
            pair,
            ed.get("question", pair.question),
            ed.get("answer", pair.answer),
            ed.get(PASSAGE_FIELD, pair.passage),
            frozenset(ed),
            Status.UNDECIDED if d is None else Status(d.status),
            None if d is None else d.reason,
        )

    @property
    def chunk_index_meaning(self) -> str:
        """What the dataset's chunk_index means, from the workspace (``mtcb``: MTCB's generation
        window, the default; ``ignore``: something else, not checked). An unreadable stored
        value counts as the default. Read once, then again after ``reload_decisions`` (on a
        shared workspace another curator may set it)."""
        from mtcb_curate.verify.chunk_index import MEANING_KEY, chunk_index_meaning

        if self._meaning is None:
            try:
                self._meaning = chunk_index_meaning(self.workspace.get_meta(MEANING_KEY))
            except ValueError:
                self._meaning = chunk_index_meaning(None)
        return self._meaning

    def set_chunk_index_meaning(self, meaning: str) -> bool:
        """Store what chunk_index means (``mtcb`` or ``ignore``) in the workspace; False when it
        already was that. Committed first; not in the undo history (set it back instead).

        Raises:
            ValueError: another value. WorkspaceError: read-only or unwritable.
        """
        from mtcb_curate.verify.chunk_index import MEANING_KEY, chunk_index_meaning

        value = chunk_index_meaning(meaning)
        if value == self.chunk_index_meaning and self.workspace.get_meta(MEANING_KEY) is not None:
            return False
        self.workspace.set_meta(**{MEANING_KEY: value})
        self._meaning = value
        return True

    def edited_texts(self, field: str = PASSAGE_FIELD) -> dict[int, str]:
        """Pair id -> the edited ``field`` text, for the pairs where that field is edited."""
        return {pid: ed[field] for pid, ed in self._edits.items() if field in ed}

    def counts(self) -> dict[Status, int]:
        """Number of pairs per status (all statuses present, undecided included)."""
        out = {s: self._counts.get(s, 0) for s in Status}
        out[Status.UNDECIDED] = len(self) - sum(v for s, v in out.items() if s != Status.UNDECIDED)
        return out

    @property
    def decided(self) -> int:
        """Pairs with any decision (accepted, rejected, skipped or flagged)."""
        return len(self._decisions)

    @property
    def settled(self) -> int:
        """Pairs accepted or rejected: what the checklist's ``reviewed`` counts as decided
        (skipped and flagged pairs are not; the status bar's "decided")."""
        return self._counts.get(Status.ACCEPTED, 0) + self._counts.get(Status.REJECTED, 0)

    def ids(self, status: Status | None = None) -> list[int]:
        """Pair ids in queue order, all or only those with ``status``."""
        if status is None:
            return list(range(len(self)))
        if status is Status.UNDECIDED:
            return [i for i in range(len(self)) if i not in self._decisions]
        value = status.value
        return [i for i in range(len(self)) if (d := self._decisions.get(i)) is not None and d.status == value]

    def next_undecided(self, after: int = -1) -> int | None:
        """The first undecided pair after ``after`` (wrapping around), or None when all are decided."""
        n = len(self)
        for step in range(1, n + 1):
            i = (after + step) % n
            if i not in self._decisions:
                return i
        return None

    def first_undecided(self) -> int | None:
        """Where a resumed session starts: the first undecided pair, or None."""
        return self.next_undecided(-1)

    def note(self, pair_id: int) -> str | None:
        """The pair's note, or None when it has none."""
        return self._notes.get(pair_id)

    def notes(self) -> dict[int, str]:
        """Every note: pair id -> text."""
        return dict(self._notes)

    def search(self, query: str, after: int = -1) -> int | None:
        """The next pair after ``after`` (wrapping) whose id, question, answer, passage,
        document key or note contains ``query`` (case-insensitive); None when none does. An id
        may be written ``12`` or ``#12``."""
        q = query.strip().casefold()
        if not q:
            return None
        pair_id = q[1:].strip() if q.startswith("#") else q
        n = len(self)
        for step in range(1, n + 1):
            i = (after + step) % n
            v = self.view(i)
            if (pair_id == str(i) or q in v.question.casefold() or q in v.answer.casefold()
                    or q in v.passage.casefold() or q in v.pair.doc_key.casefold()
                    or q in self._notes.get(i, "").casefold()):
                return i
        return None

    def rate_per_hour(self, now: float | None = None) -> float | None:
        """Decisions per hour over the last hour of active review; None before two decisions or
        ``MIN_RATE_SECONDS`` of active time.

        Gaps between consecutive decisions are capped at ``IDLE_CAP_SECONDS`` so a lunch break
        does not sink the rate; the time since the last decision counts too (also capped).
        """
        return pace_per_hour(self._times, now)

    # -- writing (each call commits before returning) -----------------------------------------

    def decide(self, pair_id: int, status: Status, reason: str | None = None, *,
               meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> None:
        """Set a pair's status (``UNDECIDED`` clears it). Committed to the workspace first: the
        session's state changes only once the commit returned.

        ``meanwhile``: work for the caller's thread while the commit waits on a server
        (``workspace.commit_waits``: the commit then runs on the session's writer thread), such
        as preparing the next pair's view; it must not read or write the workspace nor expect
        this decision in the session. It is called once, before this returns, with
        ``committed``, a function that turns True once the commit returned: the work should
        stop there (it is meant to fill the wait, not to lengthen it). Only where a commit
        waits on a server and recent ones took ``OVERLAP_MIN_COMMIT_S`` or longer, except one
        decision in ``OVERLAP_PROBE_EVERY + 1``, which is committed on the caller's thread and
        timed; elsewhere (SQLite, a quick local server) it is not called.

        Raises:
            IndexError: no such pair. WorkspaceError: the write failed (nothing changed here);
            whatever ``meanwhile`` raised, once the commit is over.
        """
        self._check(pair_id)
        at = time.time()
        value = None if status is Status.UNDECIDED else status.value
        reason = reason if status is Status.REJECTED else None
        if not self.workspace.commit_waits or self._in_change():
            self.workspace.decide(pair_id, value, reason, at=at)  # ``run_within`` times a change's store calls
        elif (meanwhile is not None and self._overlapped < OVERLAP_PROBE_EVERY
              and self._recent_commit_s() >= OVERLAP_MIN_COMMIT_S):
            self._overlapped += 1
            commit = self._writer().submit(self.workspace.decide, pair_id, value, reason, at=at)
            try:
                meanwhile(commit.done)
            finally:
                commit.result()
        else:
            self._overlapped = 0
            self._timed_decide(pair_id, value, reason, at)
        self._set_decision(pair_id, None if value is None else Decision(value, reason, at))
        self._times.append(at)

    def run_within(self, change: Callable[[], Any], *, patience_s: float,
                   meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> PendingChange:
        """Make ``change`` (a call of the application layer that reads and writes this session:
        a decision, an edit, a repair, a note, an undo, a bulk action, a resolution ...) so that
        the calling thread waits at most ``patience_s`` seconds for each call it makes to a
        store that waits on a server (``workspace.commit_waits``; ``store.changes``). The
        change runs on a thread of its own, the two never running session code at once; the
        session's memory changes only on the caller's turn, once the store committed.

        ``meanwhile``: work for the calling thread during the change's first store call, as
        ``decide`` takes it (only where recent store calls took ``OVERLAP_MIN_COMMIT_S`` or
        longer). On a store that does not wait (SQLite) the change runs here, at once.

        Returns:
            The ``PendingChange``: ``done()`` (``result()`` gives what ``change`` returned or
            raises what it raised), or still waiting on a store call: the caller goes on and,
            once ``on_ready`` calls back, hands it its turn with ``resume`` (on this thread).

        Raises:
            WorkspaceError: an earlier change still waits on the store (nothing was done: one
            change at a time).
        """
        if self._change is not None and not self._change.done():
            raise WorkspaceError("an earlier change still waits for the server: this one was not made")
        if getattr(self.workspace, "call_guard", False) is None:
            self.workspace.call_guard = self._store_call
        pending = PendingChange(change, inline=not self.workspace.commit_waits)
        self._change = pending
        overlap = meanwhile if self._recent_commit_s() >= OVERLAP_MIN_COMMIT_S else None
        if pending.start(patience_s, overlap) and not pending.failed:
            self._commit_times.extend(pending.store_seconds[-1:])
        return pending

    def _store_call(self):
        """``workspace.call_guard``: the running change's ``store_call`` (``run_within``)."""
        change = self._change
        return nullcontext() if change is None or change.done() else change.store_call()

    def _in_change(self) -> bool:
        """Whether this thread runs a change of ``run_within`` (off the caller's thread)."""
        change = self._change
        return change is not None and not change.done() and change.runs_here()

    def _timed_decide(self, pair_id: int, value: str | None, reason: str | None, at: float) -> None:
        """``workspace.decide``, its duration (seconds) kept among the recent ones ``decide``
        reads."""
        t = time.perf_counter()
        self.workspace.decide(pair_id, value, reason, at=at)
        self._commit_times.append(time.perf_counter() - t)

    def _recent_commit_s(self) -> float:
        """The median (the lower middle one) of the recent timed commits, seconds; 0 before any."""
        return statistics.median_low(self._commit_times) if self._commit_times else 0.0

    def _writer(self) -> ThreadPoolExecutor:
        """The one thread a decision's commit runs on while ``decide``'s caller does its
        ``meanwhile`` work (made on first use; idle otherwise)."""
        if self._writer_pool is None:
            self._writer_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mtcb-commit")
        return self._writer_pool

    def decide_many(self, decisions: dict[int, tuple[Status, str | None]], *, via: str | None = None) -> list[int]:
        """Set the status of several pairs in ONE transaction and ONE undo step (a bulk action:
        ``undo`` takes them all back): ``{pair_id: (status, reason)}`` (the reason kept for a
        rejection only; ``UNDECIDED`` clears). Pairs already at that status and reason are left
        out and not recorded. Returns the ids that changed, ascending.

        Raises:
            IndexError: no such pair (nothing written). WorkspaceError: read-only or unwritable.
        """
        todo: dict[int, tuple[str | None, str | None]] = {}
        for pid, (status, reason) in decisions.items():
            self._check(pid)
            reason = reason if status is Status.REJECTED else None
            value = None if status is Status.UNDECIDED else status.value
            d = self._decisions.get(pid)
            if (None if d is None else (d.status, d.reason)) == (None if value is None else (value, reason)):
                continue
            todo[pid] = (value, reason)
        if not todo:
            return []
        at = time.time()
        self.workspace.decide_many(todo, via=via, at=at, group=True)
        for pid, (value, reason) in todo.items():
            self._set_decision(pid, None if value is None else Decision(value, reason, at))
            self._times.append(at)
        return sorted(todo)

    def edit_many(self, changes: dict[int, dict[str, str]], *, via: str | None = None) -> list[int]:
        """Edit text fields of several pairs in ONE transaction and ONE undo step (a bulk snap,
        trim or shrink): ``{pair_id: {field: text}}`` as ``edit`` takes them (a value equal to
        the source text removes the edit). Returns the ids that changed, ascending (pairs
        already at those texts are left out and not recorded).

        Raises:
            ValueError: an unknown field. IndexError: no such pair (nothing written).
            WorkspaceError: read-only or unwritable.
        """
        delta: dict[int, dict[str, str | None]] = {}
        for pid, fields in changes.items():
            self._check(pid)
            bad = set(fields) - set(EDITABLE_FIELDS)
            if bad:
                raise ValueError(f"cannot edit {', '.join(sorted(bad))}: editable fields are {', '.join(EDITABLE_FIELDS)}")
            pair, current = self.pairs[pid], self.view(pid)
            original = {"question": pair.question, "answer": pair.answer, PASSAGE_FIELD: pair.passage}
            now = {"question": current.question, "answer": current.answer, PASSAGE_FIELD: current.passage}
            d = {f: (None if v == original[f] else v) for f, v in fields.items() if v != now[f]}
            if d:
                delta[pid] = d
        if not delta:
            return []
        self.workspace.edit_many(delta, via=via)
        for pid, d in delta.items():
            self._apply_edit_delta(pid, d)
        return sorted(delta)

    def edit(self, pair_id: int, changes: dict[str, str], *, via: str | None = None) -> bool:
        """Edit fields of a pair (``question``, ``answer``, ``supporting_passage``).

        A value equal to the source text removes the edit. Returns False (and records nothing)
        when nothing changes. ``via`` names what made the edit when not typed by hand (``snap``,
        ``trim``, ``select``, ``regenerate``), kept in the history for the curation summary.

        Raises:
            ValueError: an unknown field.
        """
        self._check(pair_id)
        bad = set(changes) - set(EDITABLE_FIELDS)
        if bad:
            raise ValueError(f"cannot edit {', '.join(sorted(bad))}: editable fields are {', '.join(EDITABLE_FIELDS)}")
        pair, current = self.pairs[pair_id], self.view(pair_id)
        original = {"question": pair.question, "answer": pair.answer, PASSAGE_FIELD: pair.passage}
        now = {"question": current.question, "answer": current.answer, PASSAGE_FIELD: current.passage}
        delta: dict[str, str | None] = {}
        for f, v in changes.items():
            if v != now[f]:
                delta[f] = None if v == original[f] else v
        if not delta:
            return False
        self.workspace.edit(pair_id, delta, via=via)
        self._apply_edit_delta(pair_id, delta)
        return True

    def set_chunk_index(self, pair_id: int, chunk_index: int, *, via: str | None = Via.CHUNK_INDEX) -> bool:
        """Set a pair's chunk_index (an edit of field ``chunk_index``: undoable, in the history
        with ``via``). A value equal to the loaded one removes the edit. False (nothing
        recorded) when it already is that.

        Raises:
            ValueError: not a whole number >= 0. IndexError: no such pair.
        """
        return bool(self.set_chunk_indexes({pair_id: chunk_index}, via=via))

    def set_chunk_indexes(self, values: dict[int, int], *, via: str | None = Via.CHUNK_INDEX) -> list[int]:
        """Set the chunk_index of several pairs in ONE transaction and ONE undo step (``undo``
        takes them all back). Returns the ids that changed, ascending (pairs already at their
        value are left out and not recorded).

        Raises:
            ValueError: a value that is not a whole number >= 0. IndexError: no such pair.
        """
        delta: dict[int, dict[str, int | None]] = {}
        for pid, value in values.items():
            self._check(pid)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"chunk_index must be a whole number >= 0, not {value!r}")
            if value != self.pairs[pid].chunk_index:
                delta[pid] = {CHUNK_INDEX_FIELD: None if value == self._loaded[pid].chunk_index else value}
        if not delta:
            return []
        if len(delta) == 1:
            (pid, d), = delta.items()
            self.workspace.edit(pid, d, via=via)
        else:
            self.workspace.edit_many(delta, via=via)
        for pid, d in delta.items():
            self._apply_edit_delta(pid, d)
        return sorted(delta)

    def set_note(self, pair_id: int, text: str) -> bool:
        """Set the pair's free-text note (blank text removes it; surrounding whitespace is
        dropped). Committed first, in the history (kind ``note``), undone by ``undo``. False
        (nothing recorded) when the note already is that.

        Raises:
            IndexError: no such pair. WorkspaceError: read-only or unwritable.
        """
        self._check(pair_id)
        text = (text or "").strip() or None
        if self.workspace.set_note(pair_id, text) is None:
            return False
        if text is None:
            self._notes.pop(pair_id, None)
        else:
            self._notes[pair_id] = text
        return True

    def undo(self) -> int | None:
        """Undo the latest action (decision or edit; a step of several pairs, such as the bulk
        chunk_index repair, whole); returns its pair id (the lowest of a step), or None if
        nothing is left."""
        entry = self.workspace.undo()
        if entry is None:
            return None
        for e in entry.members or (entry,):
            self._undo_one(e)
        if entry.kind == HistoryKind.ADD:
            return max(0, entry.pair_id - 1) if self.pairs else None
        return min(e.pair_id for e in entry.members or (entry,))

    def _undo_one(self, entry) -> None:
        """Mirror one undone history entry in memory."""
        if entry.kind == HistoryKind.ADD:
            if self.pairs and self.pairs[-1].id == entry.pair_id:
                self.pairs.pop()
                self._loaded.pop()
        elif entry.kind == HistoryKind.NOT_DUPLICATES:
            self._not_duplicates -= {tuple(p) for p in entry.after["pairs"]}
        elif entry.kind == HistoryKind.SHARED_EVIDENCE:
            self._shared_evidence -= {tuple(p) for p in entry.after["pairs"]}
        elif entry.kind == HistoryKind.NOTE:
            if entry.before:
                self._notes[entry.pair_id] = entry.before
            else:
                self._notes.pop(entry.pair_id, None)
        elif entry.kind == HistoryKind.DECIDE:
            b = entry.before
            self._set_decision(entry.pair_id, None if b is None else Decision(b["status"], b.get("reason"), time.time()))
            if self._times:
                self._times.pop()
        else:
            self._apply_edit_delta(entry.pair_id, entry.before or {})

    def add_pair(self, doc_key: str, question: str, answer: str, passage: str,
                 chunk_index: int | None = None, *, origin: str = "generate",
                 details: dict | None = None) -> int:
        """Add a new pair (e.g. an LLM candidate the curator kept); returns its id, the next
        free one after the source's rows. It starts undecided. Committed first; undo removes it.

        ``details`` (JSON-serializable: model, prompt hash ...) is stored with it.
        """
        pid = len(self.pairs)
        value = {"question": question, "answer": answer, PASSAGE_FIELD: passage,
                 "doc_key": doc_key, "chunk_index": chunk_index, "origin": origin, "details": details or {}}
        self.workspace.add_pair(pid, value, via=origin)
        self._loaded.append(_added_pair(pid, value))
        self.pairs.append(self._loaded[-1])
        return pid

    def not_duplicates(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) marked "not duplicates" (never raised as near-duplicates again)."""
        return set(self._not_duplicates)

    def mark_not_duplicates(self, ids: list[int]) -> bool:
        """Mark every pair of ``ids`` as not duplicates of each other; False if all already were."""
        for pid in ids:
            self._check(pid)
        pairs = {(min(a, b), max(a, b)) for a in ids for b in ids if a != b}
        if self.workspace.mark_not_duplicates(pairs) is None:
            return False
        self._not_duplicates |= pairs
        return True

    def mark_not_duplicate_groups(self, groups: list[list[int]]) -> bool:
        """Mark, within each group of ids, every pair as not duplicates of each other (a bulk
        "not duplicates" over several clusters; pairs across groups are not marked), as ONE
        history entry: one ``undo`` takes them all back. False if all already were."""
        pairs = set()
        for ids in groups:
            for pid in ids:
                self._check(pid)
            pairs |= {(min(a, b), max(a, b)) for a in ids for b in ids if a != b}
        if not pairs or self.workspace.mark_not_duplicates(pairs) is None:
            return False
        self._not_duplicates |= pairs
        return True

    def mark_not_duplicate_pairs(self, pairs: list[tuple[int, int]]) -> bool:
        """Mark each id pair as not duplicates (only these pairs: a cluster split marks the
        members moved out against the members kept, not the kept ones against each other), as
        ONE history entry: one ``undo`` takes them all back. False if all already were.

        Raises:
            IndexError: no such pair. WorkspaceError: read-only or unwritable.
        """
        marks = set()
        for a, b in pairs:
            self._check(a)
            self._check(b)
            if a != b:
                marks.add((min(a, b), max(a, b)))
        if not marks or self.workspace.mark_not_duplicates(marks) is None:
            return False
        self._not_duplicates |= marks
        return True

    def shared_evidence(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) marked "distinct questions on shared evidence" (their shared or
        overlapping passage is not warned about again)."""
        return set(self._shared_evidence)

    def mark_shared_evidence(self, ids: list[int]) -> bool:
        """Mark every pair of ``ids`` as distinct questions on shared evidence; False if all
        already were. Undone by ``undo``."""
        for pid in ids:
            self._check(pid)
        pairs = {(min(a, b), max(a, b)) for a in ids for b in ids if a != b}
        if self.workspace.mark_shared_evidence(pairs) is None:
            return False
        self._shared_evidence |= pairs
        return True

    def mark_shared_evidence_groups(self, groups: list[list[int]]) -> bool:
        """Mark, within each group of ids, every pair as distinct questions on shared evidence
        (a bulk over several shared-passage groups; pairs across groups are not marked), as ONE
        history entry: one ``undo`` takes them all back. False if all already were.

        Raises:
            IndexError: no such pair. WorkspaceError: read-only or unwritable.
        """
        pairs = set()
        for ids in groups:
            for pid in ids:
                self._check(pid)
            pairs |= {(min(a, b), max(a, b)) for a in ids for b in ids if a != b}
        if not pairs or self.workspace.mark_shared_evidence(pairs) is None:
            return False
        self._shared_evidence |= pairs
        return True

    def keep_one(self, keep: int, ids: list[int]) -> list[int]:
        """Settle a near-duplicate cluster: ``keep`` is accepted and every other pair of ``ids``
        is rejected with reason ``duplicate of #KEEP``, in one transaction and ONE undo step
        (``undo`` takes them all back; history ``via`` ``keep_one``). A ``keep`` already
        accepted is not recorded again. Returns the rejected ids."""
        for pid in [keep, *ids]:
            self._check(pid)
        others = [pid for pid in ids if pid != keep]
        reason = f"duplicate of #{keep}"
        todo: dict[int, tuple[str | None, str | None]] = {pid: (Status.REJECTED.value, reason) for pid in others}
        if self.status(keep) is not Status.ACCEPTED:
            todo = {keep: (Status.ACCEPTED.value, None), **todo}
        if not todo:
            return []
        at = time.time()
        self.workspace.decide_many(todo, via=Via.KEEP_ONE, at=at, group=True)
        for pid, (value, why) in todo.items():
            self._set_decision(pid, Decision(value, why, at))
            self._times.append(at)
        return others

    def regenerated_ids(self) -> set[int]:
        """Pairs whose current texts include an LLM regeneration (a live ``regenerate`` edit
        that has not been edited back to the source)."""
        return {e.pair_id for e in self.workspace.history() if e.kind == HistoryKind.EDIT and e.via == Via.REGENERATE
                and e.pair_id in self._edits}

    def curation_summary(self) -> dict[str, object]:
        """Counts for a dataset card: reviewed (decided), accepted, rejected (total and by
        reason, ``duplicate of #N`` counted as ``duplicate``, none as ``no reason``), skipped, flagged, undecided,
        edited (pairs with any current edit), regenerated (pairs whose current texts came from
        an LLM regeneration), added (pairs added by generation)."""
        counts = self.counts()
        by_reason: Counter[str] = Counter()
        for d in self._decisions.values():
            if d.status == Status.REJECTED.value:
                reason = d.reason or "no reason"
                by_reason["duplicate" if reason.startswith("duplicate of #") else reason] += 1
        regenerated = self.regenerated_ids()
        return {
            "pairs": len(self),
            "reviewed": self.decided,
            "accepted": counts[Status.ACCEPTED],
            "rejected": counts[Status.REJECTED],
            "rejected_by_reason": dict(sorted(by_reason.items())),
            "skipped": counts[Status.SKIPPED],
            "flagged": counts[Status.FLAGGED],
            "undecided": counts[Status.UNDECIDED],
            "edited": len(self._edits),
            "regenerated": len(regenerated),
            "added": len(self.pairs) - len(self.dataset.pairs),
        }

    # -- internals -------------------------------------------------------------------------

    def _check(self, pair_id: int) -> None:
        if not 0 <= pair_id < len(self):
            raise IndexError(f"no pair {pair_id}: ids run from 0 to {len(self) - 1}")

    def _apply_edit_delta(self, pair_id: int, delta: dict[str, Any]) -> None:
        """Mirror an edit (``{field: value, or None for the loaded value}``) in memory."""
        ed = self._edits.setdefault(pair_id, {})
        for f, v in delta.items():
            if v is None:
                ed.pop(f, None)
            else:
                ed[f] = v
        if not ed:
            del self._edits[pair_id]
        if CHUNK_INDEX_FIELD in delta:
            self._sync_pair(pair_id)

    def _sync_pair(self, pair_id: int) -> None:
        """``pairs[pair_id]``: the loaded pair, with its edited chunk_index when there is one."""
        loaded = self._loaded[pair_id]
        ed = self._edits.get(pair_id, {})
        if CHUNK_INDEX_FIELD in ed and ed[CHUNK_INDEX_FIELD] != loaded.chunk_index:
            self.pairs[pair_id] = replace(loaded, chunk_index=int(ed[CHUNK_INDEX_FIELD]))
        else:
            self.pairs[pair_id] = loaded

    def reload_decisions(self) -> set[int]:
        """Read the decisions from the workspace again (on a shared one, other curators and a
        lead decide too, and may set ``chunk_index_meaning``); returns the ids whose decision
        changed."""
        self._meaning = None
        fresh = self.workspace.decisions()
        changed = {pid for pid in set(fresh) | set(self._decisions)
                   if (fresh.get(pid) and (fresh[pid].status, fresh[pid].reason))
                   != (self._decisions.get(pid) and (self._decisions[pid].status, self._decisions[pid].reason))}
        for pid in changed:
            self._set_decision(pid, fresh.get(pid))
        return changed

    def _set_decision(self, pair_id: int, d: Decision | None) -> None:
        old = self._decisions.pop(pair_id, None)
        if old is not None:
            self._counts[Status(old.status)] -= 1
        if d is not None:
            self._decisions[pair_id] = d
            self._counts[Status(d.status)] += 1


def pace_per_hour(times: list[float], now: float | None = None) -> float | None:
    """Decisions per hour over the last hour of active review, from decision times (Unix
    seconds, oldest first); None before two decisions or ``MIN_RATE_SECONDS`` of active time.
    Gaps are capped at ``IDLE_CAP_SECONDS``, the time since the last decision counts too."""
    if len(times) < 2:
        return None
    now = time.time() if now is None else now
    active = min(max(0.0, now - times[-1]), IDLE_CAP_SECONDS)
    count = 0
    for a, b in zip(reversed(times[:-1]), reversed(times)):
        count += 1
        active += min(max(0.0, b - a), IDLE_CAP_SECONDS)
        if active >= RATE_WINDOW_SECONDS:
            break
    return count / active * 3600.0 if active >= MIN_RATE_SECONDS else None


def _added_pair(pid: int, value: dict) -> QAPair:
    """A pair stored by ``Workspace.add_pair`` as a ``QAPair`` (origin from the stored value)."""
    return QAPair(
        id=pid,
        question=value.get("question", ""),
        answer=value.get("answer", ""),
        passage=value.get(PASSAGE_FIELD, ""),
        doc_key=value.get("doc_key", ""),
        chunk_index=value.get("chunk_index"),
        meta={},
        origin=value.get("origin") or "generate",
    )
