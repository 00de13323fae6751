"""What a review session needs from a store: the ``Store`` protocol.

``ReviewSession`` and the application layer use a workspace only through these members, so a
second backend implements this and nothing else changes. ``store.sqlite.Workspace`` is the
SQLite one (one curator), ``store.postgres.PgWorkspace`` the shared PostgreSQL one (a team);
``store.opening.open_workspace`` picks one by its target. Both build on
``store.history.SharedStore``, which writes the reads, the writes and ``undo`` once over each
backend's SQL. The value types (``Decision``, ``HistoryEntry``) are here; the team's rules on
votes in ``store.team``.

Contract for every backend:

- each write is one transaction, committed before the call returns, and recorded in the
  history so that ``undo`` takes it back (latest first, across restarts; a group written by
  ``edit_many`` or ``decide_many(group=True)`` as one step);
- every fault of the storage is raised as ``WorkspaceError`` (``WorkspaceFull``,
  ``WorkspaceReadOnly`` ...), never the driver's own exceptions; a write on a read-only or
  closed store raises it too, and changes nothing;
- pair ids are the 0-based rows of the source's ``questions``, then the added pairs' ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Decision:
    """A pair's current decision. ``at`` is a Unix time in seconds."""

    status: str
    reason: str | None
    at: float


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One undoable action; before/after are JSON values.

    ``kind``:
    - ``decide``: {"status", "reason"} or None (undecided);
    - ``edit``: {field: value or None} where None means "the source's original text";
    - ``add``: before None, after the added pair's value (see ``Store.add_pair``);
    - ``shared_evidence``: as ``not_duplicates``, for pairs marked "distinct questions on
      shared evidence";
    - ``not_duplicates``: before None, after {"pairs": [[a, b], ...]} newly marked;
    - ``note``: the pair's note text before and after (None: no note).

    ``via`` says what made the change when it was not the curator typing: ``snap``, ``trim``,
    ``select``, ``regenerate``, ``generate``, ``keep_one``, ``chunk_index``, ``merge``,
    ``resolve`` ... (None: by hand).

    ``group``: the seq of the first entry of a group written as one step (``edit_many``,
    ``decide_many(group=True)``), None alone; ``undo`` takes a whole group back at once.
    ``members``: set on the entry ``undo`` returns, every entry it undid (latest first, this
    one included).
    """

    seq: int
    at: float
    pair_id: int
    kind: str
    before: Any
    after: Any
    via: str | None = None
    group: int | None = None
    members: tuple["HistoryEntry", ...] = ()


#: The history kinds that mark id pairs (``mark_not_duplicates``, ``mark_shared_evidence``);
#: each is also the name of its table.
MARK_KINDS = ("not_duplicates", "shared_evidence")


def dump_json(value: Any) -> str | None:
    """``value`` as ASCII-escaped JSON (lone surrogates and NUL in a dataset's text survive the
    round trip), or None for None."""
    return None if value is None else json.dumps(value)


def load_json(text: str | None) -> Any:
    """The inverse of ``dump_json``."""
    return None if text is None else json.loads(text)


@runtime_checkable
class Store(Protocol):
    """The state of one curator's review of one dataset (see the module docstring).

    Attributes:
        path: a local folder for the store's side files: the LLM reply cache
            (``llm.cache``) lives there, and messages name it.
        read_only: True when nothing can be written (every write raises ``WorkspaceError``).
        curator: the name every change is recorded under (``history_curators``).
        commit_waits: True when a commit waits on a server (a network round trip and the
            server's WAL flush: PostgreSQL), so that ``ReviewSession.decide`` may run the
            caller's ``meanwhile`` work while it does (where commits take long enough) and
            ``ReviewSession.run_within`` runs a change off its caller's thread; False for a
            local file (SQLite).
        call_guard: None, or a callable giving a context manager the store enters around
            every call to its storage (``ReviewSession.run_within`` sets it).
    """

    path: Path
    read_only: bool
    curator: str
    commit_waits: bool
    call_guard: Callable[[], AbstractContextManager[object]] | None

    # -- binding to a source ----------------------------------------------------------------

    def bind(self, dataset: str, source_spec: list[str], fingerprint: str) -> None:
        """Tie the store to a dataset and its questions, or check that it already is
        (``WorkspaceError`` when it was made for another dataset or other questions)."""

    def source_spec(self) -> list[str] | None:
        """The source the store was last opened with, or None."""

    def get_meta(self, key: str) -> str | None:
        """A metadata value (``dataset``, ``source``, stored LLM clusters ...), or None."""

    def set_meta(self, **values: str) -> None:
        """Store metadata values, in one transaction."""

    def close(self) -> None:
        """Release the store (safe to call twice); later calls raise ``WorkspaceError``."""

    # -- reading ------------------------------------------------------------------------------

    def decisions(self) -> dict[int, Decision]:
        """Every current decision by pair id (undecided pairs are absent)."""

    def edits(self) -> dict[int, dict[str, Any]]:
        """Every current edit: pair id -> {field: edited text, or int for ``chunk_index``}."""

    def history(self, *, include_undone: bool = False) -> list[HistoryEntry]:
        """The action history, oldest first."""

    def history_curators(self) -> dict[int, str]:
        """Who made each history entry: seq -> curator name (entries from before curators were
        recorded are absent)."""

    def decision_times(self) -> list[float]:
        """Unix times (seconds) of the live decisions, oldest first (the review rate)."""

    def added_pairs(self) -> dict[int, dict[str, Any]]:
        """Pairs added in the store: pair id -> value, ids ascending."""

    def not_duplicates(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) marked as not near-duplicates."""

    def shared_evidence(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) marked "distinct questions on shared evidence"."""

    def notes(self) -> dict[int, str]:
        """Every current note: pair id -> its free text (pairs without one are absent)."""

    # -- writing (each call commits before returning) -----------------------------------------

    def decide(self, pair_id: int, status: str | None, reason: str | None = None, *, at: float | None = None,
               via: str | None = None) -> int:
        """Record a decision (None: undecided again); returns the history seq."""

    def decide_many(self, decisions: dict[int, tuple[str | None, str | None]], *, via: str | None = None,
                    at: float | None = None, group: bool = False) -> list[int]:
        """Several decisions in one transaction, each its own history entry; with ``group`` one
        undo step (a history group, as ``edit_many``: ``undo`` takes them all back at once);
        the seqs."""

    def edit(self, pair_id: int, changes: dict[str, str | None], *, at: float | None = None,
             via: str | None = None) -> int:
        """Record field edits (None restores the source's text); returns the history seq."""

    def edit_many(self, changes: dict[int, dict[str, Any]], *, via: str | None = None,
                  at: float | None = None) -> list[int]:
        """Edits to several pairs in one transaction and ONE undo step (a history group: ``undo``
        takes them all back at once); the seqs."""

    def add_pair(self, pair_id: int, value: dict[str, Any], *, via: str | None = "generate",
                 at: float | None = None) -> int:
        """Store a new pair under ``pair_id`` (``WorkspaceError`` when it is in use); the seq."""

    def mark_not_duplicates(self, pairs: Iterable[tuple[int, int]], *, at: float | None = None) -> int | None:
        """Remember id pairs as not duplicates; the seq, or None when all already were."""

    def mark_shared_evidence(self, pairs: Iterable[tuple[int, int]], *, at: float | None = None) -> int | None:
        """Remember id pairs as distinct questions on shared evidence; the seq, or None when
        all already were."""

    def set_note(self, pair_id: int, text: str | None, *, at: float | None = None) -> int | None:
        """Set a pair's note (None or '' removes it), undoable (history kind ``note``); the
        seq, or None when it already was that."""

    def undo(self) -> HistoryEntry | None:
        """Undo the latest live action; None when none is left."""


#: The member names of ``Store`` (for a backend's conformance test).
STORE_MEMBERS = ("path", "read_only", "curator", "commit_waits", "call_guard", "history_curators", "bind", "source_spec",
                 "get_meta", "set_meta", "close", "decisions",
                 "edits", "history", "decision_times", "added_pairs", "not_duplicates", "shared_evidence",
                 "decide", "decide_many", "edit", "edit_many", "add_pair", "mark_not_duplicates",
                 "mark_shared_evidence", "notes", "set_note", "undo")
