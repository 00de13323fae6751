"""What both workspace backends do alike, written once: the reads, the writes with their history
entries, and ``undo``, over a few hooks each backend fills with its own SQL.

``SharedStore`` implements most of ``store.base.Store``. A backend (``store.sqlite.Workspace``,
``store.postgres.PgWorkspace``) subclasses it and provides:

- ``_rows(sql, params)``: a read; ``_transact(work, ...)``: ``work(tx)`` in one transaction,
  committed before it returns (the PostgreSQL one retries on a new connection and recognises a
  write that had committed); ``_execute(tx, sql, params)`` inside it. Every fault of the storage
  leaves these as a ``WorkspaceError``. The shared SQL uses ``?`` placeholders and the common
  dialect of SQLite and PostgreSQL (``ON CONFLICT ... DO UPDATE``, ``NOT undone``);
  ``FOR_UPDATE`` is the row-lock clause (none in SQLite, whose write transactions lock the file);
- how free text is stored (``_stored``/``_text``: SQLite keeps it as is, PostgreSQL as
  ASCII-escaped JSON, whose ``text`` cannot hold NUL);
- the writes of one kind of state (``_apply_decision``, ``_apply_edits``, ``_apply_note``,
  ``_insert_added``, ``_insert_marks``, ``_apply_resolution``) and of one history entry
  (``_log``): the tables differ (the shared workspace records who wrote each row, and a pair of
  its work split is decided by votes);
- whose history ``undo`` takes back (``_own_history``: every entry in a curator's own SQLite
  workspace, only this curator's on a shared one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from mtcb_curate.dataset.model import HistoryKind, Via
from mtcb_curate.errors import WorkspaceError
from mtcb_curate.store.base import MARK_KINDS, Decision, HistoryEntry, dump_json, load_json
from mtcb_curate.store.team import votes_agree

T = TypeVar("T")

#: The history columns every read of entries selects, in ``HistoryEntry``'s order.
HISTORY_COLUMNS = "seq, at, pair_id, kind, before, after, via, grp"


def entry_of(row: tuple) -> HistoryEntry:
    """A ``HistoryEntry`` from a row of ``HISTORY_COLUMNS``."""
    seq, at, pair_id, kind, before, after, via, grp = row
    return HistoryEntry(seq, at, pair_id, kind, load_json(before), load_json(after), via, grp)


def undone_step(rows: list[tuple]) -> HistoryEntry | None:
    """The entry ``undo`` returns for the rows it took back (latest first): the latest, with
    every one as its ``members``; None for no rows."""
    if not rows:
        return None
    entries = [entry_of(r) for r in rows]
    e = entries[0]
    return HistoryEntry(e.seq, e.at, e.pair_id, e.kind, e.before, e.after, e.via, e.group, tuple(entries))


class SharedStore:
    """The ``Store`` members both backends share (see the module docstring for the hooks).

    Attributes the backend sets: ``label`` (the workspace as messages name it), ``curator``,
    ``read_only``.
    """

    label: str
    curator: str
    read_only: bool
    #: The row-lock clause of a ``SELECT`` that reads what a write will replace.
    FOR_UPDATE = ""
    #: How the message refusing a workspace made for other questions points to another one.
    OTHER_WORKSPACE = "pass --workspace NEW_DIR"
    #: None, or a callable giving a context manager entered around every call to the storage
    #: (each backend's boundary: a read, a transaction): ``ReviewSession.run_within`` sets it
    #: to let its caller go on while a change's store call waits on a server.
    call_guard: Callable[[], AbstractContextManager[object]] | None = None

    # -- hooks ------------------------------------------------------------------------------

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def _writable(self) -> None:
        """Raise ``WorkspaceError`` when nothing can be written (read-only, closed)."""
        raise NotImplementedError

    def _transact(self, work: Callable[[Any], T], *, seqs_result: Callable[[list[int]], T] | None = None,
                  undo: bool = False, idempotent: bool = False) -> T:
        """``work(tx)`` in one transaction. ``seqs_result``: what the call returns when the
        backend finds, after a lost connection, that the write had committed (from its history
        seqs); ``undo``: the write is an undo (found by the entries it marked); ``idempotent``:
        safe to run again."""
        raise NotImplementedError

    def _execute(self, tx: Any, sql: str, params: tuple = ()) -> Any:
        raise NotImplementedError

    def _stored(self, text: str | None) -> str | None:
        return text

    def _text(self, stored: str | None) -> str | None:
        return stored

    def _own_history(self) -> tuple[str, tuple]:
        """A ``WHERE`` condition (ending in ``AND``, or empty) and its parameters: the history
        entries this store's ``undo`` and ``decision_times`` read."""
        return "", ()

    def _log(self, tx: Any, at: float, pair_id: int, kind: str, before: Any, after: Any, via: str | None,
             group: int | None = None) -> int:
        raise NotImplementedError

    def _decision_before(self, tx: Any, pair_id: int) -> dict[str, Any] | None:
        row = self._execute(tx, f"SELECT status, reason FROM decisions WHERE pair_id=?{self.FOR_UPDATE}",
                            (pair_id,)).fetchone()
        return None if row is None else {"status": row[0], "reason": self._text(row[1])}

    def _apply_decision(self, tx: Any, pair_id: int, value: dict[str, Any] | None, at: float) -> None:
        raise NotImplementedError

    def _apply_edits(self, tx: Any, pair_id: int, changes: dict[str, Any], at: float) -> None:
        raise NotImplementedError

    def _apply_note(self, tx: Any, pair_id: int, text: str | None, at: float) -> None:
        raise NotImplementedError

    def _insert_added(self, tx: Any, pair_id: int, value: dict[str, Any], at: float) -> bool:
        """Store an added pair; False (nothing written) when ``pair_id`` is in use."""
        raise NotImplementedError

    def _insert_marks(self, tx: Any, kind: str, pairs: list[tuple[int, int]], at: float) -> list[tuple[int, int]]:
        """Mark id pairs in table ``kind``; the ones not marked before."""
        raise NotImplementedError

    def _resolution_before(self, tx: Any, pair_id: int) -> dict[str, Any] | None:
        """What ``resolve`` records as its entry's ``before`` (and its undo restores)."""
        raise NotImplementedError

    def _apply_resolution(self, tx: Any, pair_id: int, value: dict[str, Any], at: float) -> None:
        raise NotImplementedError

    def _undo_resolution(self, tx: Any, entry: HistoryEntry, at: float) -> None:
        raise NotImplementedError

    # -- binding to a source ----------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A metadata value (``dataset``, ``source``, ``fingerprint`` ...), or None."""
        rows = self._rows("SELECT value FROM meta WHERE key=?", (key,))
        return self._text(rows[0][0]) if rows else None

    def set_meta(self, **values: str) -> None:
        """Store metadata values, in one transaction."""
        def work(tx: Any) -> None:
            for key, value in values.items():
                self._execute(tx, "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value=excluded.value",
                              (key, self._stored(value)))

        self._transact(work, idempotent=True)

    def bind(self, dataset: str, source_spec: list[str], fingerprint: str) -> None:
        """Tie the workspace to a dataset and its questions, or check that it already is.

        Raises:
            WorkspaceError: the workspace was made for another dataset or other questions.
        """
        have = self.get_meta("fingerprint")
        if have is None:
            if not self.read_only:
                self.set_meta(dataset=dataset, source=json.dumps(source_spec), fingerprint=fingerprint,
                              created=str(time.time()))
            return
        if self.get_meta("dataset") != dataset:
            raise WorkspaceError(f"{self.label}: this workspace belongs to dataset '{self.get_meta('dataset')}', "
                                 f"not '{dataset}'")
        if have != fingerprint:
            raise WorkspaceError(
                f"{self.label}: this workspace was made for other questions (source {self.source_spec()}); "
                f"its decisions would land on the wrong pairs. Open that source, or {self.OTHER_WORKSPACE}")
        if json.loads(self.get_meta("source") or "[]") != source_spec and not self.read_only:
            self.set_meta(source=json.dumps(source_spec))

    def source_spec(self) -> list[str] | None:
        """The source the workspace was last opened with, as ``load_source`` takes it."""
        raw = self.get_meta("source")
        return json.loads(raw) if raw else None

    # -- reading ------------------------------------------------------------------------------

    def decisions(self) -> dict[int, Decision]:
        """Every current decision, by pair id (undecided pairs are absent)."""
        return {pid: Decision(s, self._text(r), at) for pid, s, r, at in
                self._rows("SELECT pair_id, status, reason, decided_at FROM decisions")}

    def edits(self) -> dict[int, dict[str, Any]]:
        """Every current edit: pair id -> {field: edited text, or int for ``chunk_index``}."""
        out: dict[int, dict[str, Any]] = {}
        for pid, f, v in self._rows("SELECT pair_id, field, value FROM edits"):
            out.setdefault(pid, {})[f] = json.loads(v)
        return out

    def history(self, *, include_undone: bool = False) -> list[HistoryEntry]:
        """The action history (of every curator), oldest first."""
        where = "" if include_undone else " WHERE NOT undone"
        return [entry_of(r) for r in self._rows(f"SELECT {HISTORY_COLUMNS} FROM history{where} ORDER BY seq")]

    def history_curators(self) -> dict[int, str]:
        """Who made each history entry: seq -> curator name (undone entries included; entries
        written before curators were recorded are absent)."""
        return dict(self._rows("SELECT seq, curator FROM history WHERE curator IS NOT NULL"))

    def added_pairs(self) -> dict[int, dict[str, Any]]:
        """Pairs added in this workspace: pair id -> value, ids ascending."""
        return {pid: json.loads(v) for pid, v in self._rows("SELECT pair_id, value FROM added_pairs ORDER BY pair_id")}

    def not_duplicates(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) marked as not near-duplicates."""
        return {(a, b) for a, b in self._rows("SELECT a, b FROM not_duplicates")}

    def shared_evidence(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) marked "distinct questions on shared evidence"."""
        return {(a, b) for a, b in self._rows("SELECT a, b FROM shared_evidence")}

    def notes(self) -> dict[int, str]:
        """Every current note: pair id -> its text (pairs without one are absent)."""
        return {pid: self._text(t) for pid, t in self._rows("SELECT pair_id, text FROM notes")}

    def decision_times(self) -> list[float]:
        """Unix times (seconds) of the live ``decide`` actions (on a shared workspace, this
        curator's), oldest first: the review rate."""
        mine, params = self._own_history()
        return [r[0] for r in self._rows(
            f"SELECT at FROM history WHERE {mine}NOT undone AND kind='decide' ORDER BY seq", params)]

    def votes(self) -> dict[int, dict[str, tuple[str, str | None]]]:
        """Each curator's own decision on the pairs several curators decided (a work split, or
        merged workspaces): pair id -> {curator: (status, reason)}."""
        out: dict[int, dict[str, tuple[str, str | None]]] = {}
        for pid, name, status, reason in self._rows("SELECT pair_id, curator, status, reason FROM votes"):
            out.setdefault(pid, {})[name] = (status, self._text(reason))
        return out

    def conflicts(self) -> dict[int, dict[str, tuple[str, str | None]]]:
        """Open conflicts: pairs whose curators' votes disagree (``team.votes_agree``) and that
        no lead has decided; pair id -> {curator: (status, reason)}."""
        resolved = {r[0] for r in self._rows("SELECT pair_id FROM resolutions")}
        return {pid: v for pid, v in self.votes().items()
                if pid not in resolved and len(v) > 1 and not votes_agree(list(v.values()))}

    # -- writing (each call commits before returning) -----------------------------------------

    def decide(self, pair_id: int, status: str | None, reason: str | None = None, *, at: float | None = None,
               via: str | None = None) -> int:
        """Record a decision (``status`` None: undecided again); returns the history seq."""
        at = time.time() if at is None else at
        after = None if status is None else {"status": status, "reason": reason}

        def work(tx: Any) -> int:
            before = self._decision_before(tx, pair_id)
            self._apply_decision(tx, pair_id, after, at)
            return self._log(tx, at, pair_id, "decide", before, after, via)

        return self._transact(work, seqs_result=lambda seqs: seqs[0])

    def decide_many(self, decisions: dict[int, tuple[str | None, str | None]], *, via: str | None = None,
                    at: float | None = None, group: bool = False) -> list[int]:
        """Several decisions in ONE transaction (all or none): ``{pair_id: (status, reason)}``.
        Each is its own history entry (undone one by one, latest first); with ``group`` they
        share a history group (as ``edit_many``) and ``undo`` takes them all back at once (a
        bulk action). Returns the history seqs."""
        at = time.time() if at is None else at

        def work(tx: Any) -> list[int]:
            seqs: list[int] = []
            for pair_id, (status, reason) in decisions.items():
                before = self._decision_before(tx, pair_id)
                after = None if status is None else {"status": status, "reason": reason}
                self._apply_decision(tx, pair_id, after, at)
                seqs.append(self._log(tx, at, pair_id, "decide", before, after, via,
                                      seqs[0] if group and seqs else None))
            if group and seqs:
                self._execute(tx, "UPDATE history SET grp=? WHERE seq=?", (seqs[0], seqs[0]))
            return seqs

        return self._transact(work, seqs_result=lambda seqs: seqs) if decisions else self._nothing([])

    def edit(self, pair_id: int, changes: dict[str, str | None], *, at: float | None = None,
             via: str | None = None) -> int:
        """Record edits to a pair's fields (a None value restores the source's text); returns
        the history seq."""
        at = time.time() if at is None else at

        def work(tx: Any) -> int:
            before = self._edits_before(tx, pair_id, changes)
            self._apply_edits(tx, pair_id, changes, at)
            return self._log(tx, at, pair_id, "edit", before, changes, via)

        return self._transact(work, seqs_result=lambda seqs: seqs[0])

    def edit_many(self, changes: dict[int, dict[str, Any]], *, via: str | None = None,
                  at: float | None = None) -> list[int]:
        """Edits to several pairs in ONE transaction (all or none) and ONE undo step, e.g. the
        bulk chunk_index repair: ``{pair_id: {field: value or None}}``. Each pair gets its own
        history entry; they share a ``group`` (the first entry's seq). Returns the history seqs
        (empty when ``changes`` is empty)."""
        at = time.time() if at is None else at

        def work(tx: Any) -> list[int]:
            seqs: list[int] = []
            for pair_id, delta in changes.items():
                before = self._edits_before(tx, pair_id, delta)
                self._apply_edits(tx, pair_id, delta, at)
                seqs.append(self._log(tx, at, pair_id, "edit", before, delta, via, seqs[0] if seqs else None))
            self._execute(tx, "UPDATE history SET grp=? WHERE seq=?", (seqs[0], seqs[0]))
            return seqs

        return self._transact(work, seqs_result=lambda seqs: seqs) if changes else self._nothing([])

    def add_pair(self, pair_id: int, value: dict[str, Any], *, via: str | None = "generate",
                 at: float | None = None) -> int:
        """Store a new pair under ``pair_id`` (question, answer, supporting_passage, doc_key,
        chunk_index, origin: JSON values); undo removes it again. Returns the history seq.

        Raises:
            WorkspaceError: ``pair_id`` is already in use.
        """
        at = time.time() if at is None else at

        def work(tx: Any) -> int:
            if not self._insert_added(tx, pair_id, value, at):
                raise WorkspaceError(f"{self.label}: pair id {pair_id} is already in use")
            return self._log(tx, at, pair_id, "add", None, value, via)

        return self._transact(work, seqs_result=lambda seqs: seqs[0])

    def mark_not_duplicates(self, pairs: Iterable[tuple[int, int]], *, at: float | None = None) -> int | None:
        """Remember that each id pair is NOT a near-duplicate; returns the history seq, or None
        when every pair was already marked. The entry's ``pair_id`` is the smallest id involved."""
        return self._mark("not_duplicates", pairs, at)

    def mark_shared_evidence(self, pairs: Iterable[tuple[int, int]], *, at: float | None = None) -> int | None:
        """Remember that each id pair asks distinct questions on shared evidence (their shared
        or overlapping passage is no longer warned about); the history seq, or None when every
        pair was already marked."""
        return self._mark("shared_evidence", pairs, at)

    def set_note(self, pair_id: int, text: str | None, *, at: float | None = None) -> int | None:
        """Set a pair's free-text note (None or '' removes it); returns the history seq (kind
        ``note``, before/after the texts), or None when the note already was that."""
        at = time.time() if at is None else at
        text = text or None

        def work(tx: Any) -> int | None:
            row = self._execute(tx, f"SELECT text FROM notes WHERE pair_id=?{self.FOR_UPDATE}", (pair_id,)).fetchone()
            before = self._text(row[0]) if row else None
            if before == text:
                return None
            self._apply_note(tx, pair_id, text, at)
            return self._log(tx, at, pair_id, "note", before, text, None)

        return self._transact(work, seqs_result=lambda seqs: seqs[0])

    def resolve(self, pair_id: int, status: str, reason: str | None = None, *, at: float | None = None) -> int:
        """A lead decides a conflict between curators' votes; recorded under this curator
        (history kind ``decide``, via ``resolve``; undoable). Returns the seq."""
        at = time.time() if at is None else at
        after = {"status": status, "reason": reason}

        def work(tx: Any) -> int:
            before = self._resolution_before(tx, pair_id)
            self._apply_resolution(tx, pair_id, after, at)
            return self._log(tx, at, pair_id, HistoryKind.DECIDE, before, after, Via.RESOLVE)

        return self._transact(work, seqs_result=lambda seqs: seqs[0])

    def undo(self) -> HistoryEntry | None:
        """Undo the latest live action (on a shared workspace, this curator's), any number of
        times, across restarts; None when none is left. An action written as one step (a
        ``group``) is undone whole; the returned entry is the latest one, its ``members`` every
        entry undone (latest first)."""
        mine, params = self._own_history()

        def work(tx: Any) -> HistoryEntry | None:
            row = self._execute(tx, f"SELECT {HISTORY_COLUMNS} FROM history WHERE {mine}NOT undone "
                                    f"ORDER BY seq DESC LIMIT 1{self.FOR_UPDATE}", params).fetchone()
            if row is None:
                return None
            rows = [row]
            if row[7] is not None:
                rows = self._execute(tx, f"SELECT {HISTORY_COLUMNS} FROM history WHERE NOT undone AND "
                                         f"(grp=? OR seq=?) ORDER BY seq DESC{self.FOR_UPDATE}",
                                     (row[7], row[7])).fetchall()
            now = time.time()
            for r in rows:
                self._take_back(tx, entry_of(r), now)
            self._mark_undone(tx, [r[0] for r in rows])
            return undone_step(rows)

        return self._transact(work, undo=True)

    # -- shared internals ---------------------------------------------------------------------

    def _take_back(self, tx: Any, entry: HistoryEntry, at: float) -> None:
        """Restore what ``entry`` changed (one entry of an undo)."""
        kind = entry.kind
        if kind == HistoryKind.DECIDE and entry.via == Via.RESOLVE:
            self._undo_resolution(tx, entry, at)
        elif kind == HistoryKind.DECIDE:
            self._apply_decision(tx, entry.pair_id, entry.before, at)
        elif kind == HistoryKind.EDIT:
            self._apply_edits(tx, entry.pair_id, entry.before or {}, at)
        elif kind == HistoryKind.ADD:
            self._execute(tx, "DELETE FROM added_pairs WHERE pair_id=?", (entry.pair_id,))
        elif kind == HistoryKind.NOTE:
            self._apply_note(tx, entry.pair_id, entry.before, at)
        elif kind in MARK_KINDS:
            for a, b in entry.after["pairs"]:
                self._execute(tx, f"DELETE FROM {kind} WHERE a=? AND b=?", (a, b))

    def _mark_undone(self, tx: Any, seqs: list[int]) -> None:
        """Mark the entries an undo took back."""
        for seq in seqs:
            self._execute(tx, "UPDATE history SET undone=? WHERE seq=?", (True, seq))

    def _edits_before(self, tx: Any, pair_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        current = {f: json.loads(v) for f, v in self._execute(
            tx, f"SELECT field, value FROM edits WHERE pair_id=?{self.FOR_UPDATE}", (pair_id,)).fetchall()}
        return {f: current.get(f) for f in changes}

    def _mark(self, kind: str, pairs: Iterable[tuple[int, int]], at: float | None) -> int | None:
        at = time.time() if at is None else at
        wanted = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})

        def work(tx: Any) -> int | None:
            new = self._insert_marks(tx, kind, wanted, at)
            if not new:
                return None
            return self._log(tx, at, new[0][0], kind, None, {"pairs": [list(p) for p in new]}, None)

        return self._transact(work, seqs_result=lambda seqs: seqs[0]) if wanted else self._nothing(None)

    def _nothing(self, result: T) -> T:
        """What a write with nothing to write returns, once ``_writable`` passed (a read-only
        or closed store refuses every write, even an empty one)."""
        self._writable()
        return result


__all__ = ["HISTORY_COLUMNS", "SharedStore", "dump_json", "entry_of", "load_json", "undone_step"]
