"""The workspace: a SQLite file (WAL) holding a curator's decisions, edits and undo history.

One workspace per dataset, under ``platformdirs.user_data_dir("mtcb-curate")/workspaces/NAME``
or a ``--workspace DIR``. Files in the folder:

- ``workspace.sqlite`` (+ ``-wal``/``-shm`` while open): the state;
- ``lock``: held with ``flock`` by the process that writes, so a second instance is refused
  (or opens read-only); the kernel releases it when that process dies, even on ``kill -9``.

Durability: every change is one transaction committed before the call returns. In WAL mode
with ``synchronous=NORMAL`` a committed transaction survives the process being killed at any
moment (the WAL frames are in the operating system's buffers); only a power cut or kernel crash
can lose the last transactions, which ``synchronous=FULL`` (``durable=True``) also covers at the
cost of one fsync per decision. SQLite documents both: https://sqlite.org/pragma.html#pragma_synchronous.

The source data is never written: the workspace records decisions and edits by pair id (the
pair's 0-based row in the ``questions`` config) and a fingerprint of the questions so that a
workspace is never laid over different data by mistake.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtcb_curate.errors import WorkspaceError, WorkspaceLocked

SCHEMA_VERSION = 2
DB_NAME = "workspace.sqlite"
LOCK_NAME = "lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    pair_id INTEGER PRIMARY KEY,
    status TEXT NOT NULL,
    reason TEXT,
    decided_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS edits (
    pair_id INTEGER NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL,  -- JSON string (escaped, so any Python str round-trips)
    edited_at REAL NOT NULL,
    PRIMARY KEY (pair_id, field)
);
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    pair_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    before TEXT,
    after TEXT,
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS history_live ON history (undone, seq);
CREATE TABLE IF NOT EXISTS added_pairs (
    pair_id INTEGER PRIMARY KEY,
    value TEXT NOT NULL,  -- JSON: question, answer, supporting_passage, doc_key, chunk_index, origin
    added_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS not_duplicates (
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,  -- a < b
    marked_at REAL NOT NULL,
    PRIMARY KEY (a, b)
);
"""

#: Columns added to tables of schema 1, applied when an older workspace is opened.
_MIGRATIONS = (
    ("history", "via", "ALTER TABLE history ADD COLUMN via TEXT"),
)


def default_workspace_dir(dataset: str) -> Path:
    """The default workspace folder of a dataset, under the user data directory."""
    from platformdirs import user_data_dir

    safe = dataset.replace("/", "__")
    return Path(user_data_dir("mtcb-curate", appauthor=False)) / "workspaces" / safe


def questions_fingerprint(rows: Iterable[tuple[str, str, str, str]]) -> str:
    """sha256 over (question, answer, passage, document key) of every pair, in row order.

    Two loads of the same questions (from a file, a folder or the Hub) give the same value.
    """
    h = hashlib.sha256()
    for row in rows:
        for v in row:
            h.update(v.encode("utf-8", "surrogatepass"))
            h.update(b"\x1f")
        h.update(b"\x1e")
    return h.hexdigest()


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
    - ``add``: before None, after the added pair's value (see ``Workspace.add_pair``);
    - ``not_duplicates``: before None, after {"pairs": [[a, b], ...]} newly marked.

    ``via`` says what made the change when it was not the curator typing: ``snap``, ``trim``,
    ``select``, ``regenerate``, ``generate``, ``keep_one`` ... (None: by hand).
    """

    seq: int
    at: float
    pair_id: int
    kind: str
    before: Any
    after: Any
    via: str | None = None


class Workspace:
    """An open workspace. Use ``Workspace.open``; close with ``close()`` or a ``with`` block.

    Attributes:
        path: the workspace folder.
        read_only: True when opened without the lock; every write raises ``WorkspaceError``.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, lock_fd: int | None, read_only: bool):
        self.path = path
        self._conn = conn
        self._lock_fd = lock_fd
        self.read_only = read_only

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, read_only: bool = False, durable: bool = False) -> "Workspace":
        """Open (creating when needed) the workspace in folder ``path``.

        Args:
            path: the folder.
            read_only: open without taking the lock; nothing can be written.
            durable: ``synchronous=FULL`` (fsync per decision) instead of ``NORMAL``.

        Raises:
            WorkspaceLocked: another process holds the workspace.
            WorkspaceError: the folder cannot be created or the file is not a workspace.
        """
        path = Path(path)
        db = path / DB_NAME
        if read_only:
            if not db.exists():
                raise WorkspaceError(f"{path}: no workspace here to open read-only")
            try:
                conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("SELECT count(*) FROM decisions").fetchone()
                # An older workspace opened read-only cannot be migrated: give it empty
                # stand-ins for what it lacks (in this connection only).
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                for table, columns in (("added_pairs", "pair_id INTEGER, value TEXT, added_at REAL"),
                                       ("not_duplicates", "a INTEGER, b INTEGER, marked_at REAL")):
                    if table not in tables:
                        conn.execute(f"CREATE TEMP TABLE {table} ({columns})")
                if "via" not in {r[1] for r in conn.execute("PRAGMA table_info(history)")}:
                    conn.execute("CREATE TEMP VIEW history AS SELECT *, NULL AS via FROM main.history")
            except sqlite3.Error as exc:
                raise WorkspaceError(f"{db}: not a readable workspace ({exc})") from None
            return cls(path, conn, None, True)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"{path}: cannot create the workspace folder ({exc.strerror})") from None
        lock_fd = _take_lock(path / LOCK_NAME)
        try:
            conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            conn.execute("PRAGMA busy_timeout=2000")
            conn.executescript(_SCHEMA)
            for table, column, sql in _MIGRATIONS:
                if column not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
                    conn.execute(sql)
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if version is not None and int(version[0]) > SCHEMA_VERSION:
                raise WorkspaceError(f"{db}: made by a newer mtcb-curate (schema {version[0]}); upgrade to open it")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            os.close(lock_fd)
            raise WorkspaceError(f"{db}: not a usable workspace ({exc})") from None
        except WorkspaceError:
            os.close(lock_fd)
            raise
        return cls(path, conn, lock_fd, False)

    @staticmethod
    def exists(path: Path) -> bool:
        """True when ``path`` holds a workspace file."""
        return (Path(path) / DB_NAME).is_file()

    def close(self) -> None:
        """Close the database and release the lock. Safe to call twice."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None  # type: ignore[assignment]
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- metadata --------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A metadata value (``dataset``, ``source``, ``fingerprint`` ...), or None."""
        row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, **values: str) -> None:
        """Store metadata values, in one transaction."""
        self._writable()
        with self._tx():
            self._conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

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
            raise WorkspaceError(f"{self.path}: this workspace belongs to dataset '{self.get_meta('dataset')}', "
                                 f"not '{dataset}'")
        if have != fingerprint:
            raise WorkspaceError(
                f"{self.path}: this workspace was made for other questions (source {self.source_spec()}); "
                f"its decisions would land on the wrong pairs. Open that source, or pass --workspace NEW_DIR")
        if json.loads(self.get_meta("source") or "[]") != source_spec and not self.read_only:
            self.set_meta(source=json.dumps(source_spec))

    def source_spec(self) -> list[str] | None:
        """The source the workspace was last opened with, as ``load_source`` takes it."""
        raw = self.get_meta("source")
        return json.loads(raw) if raw else None

    # -- reading ---------------------------------------------------------------------------

    def decisions(self) -> dict[int, Decision]:
        """Every current decision, by pair id (undecided pairs are absent)."""
        return {pid: Decision(s, r, at) for pid, s, r, at in
                self._conn.execute("SELECT pair_id, status, reason, decided_at FROM decisions")}

    def edits(self) -> dict[int, dict[str, str]]:
        """Every current edit: pair id -> {field: edited text}."""
        out: dict[int, dict[str, str]] = {}
        for pid, f, v in self._conn.execute("SELECT pair_id, field, value FROM edits"):
            out.setdefault(pid, {})[f] = json.loads(v)
        return out

    def history(self, *, include_undone: bool = False) -> list[HistoryEntry]:
        """The action history, oldest first."""
        sql = "SELECT seq, at, pair_id, kind, before, after, via FROM history"
        if not include_undone:
            sql += " WHERE undone=0"
        return [HistoryEntry(s, at, p, k, _load(b), _load(a), v)
                for s, at, p, k, b, a, v in self._conn.execute(sql + " ORDER BY seq")]

    def added_pairs(self) -> dict[int, dict[str, Any]]:
        """Pairs added in this workspace (LLM generation): pair id -> value, ids ascending."""
        return {pid: json.loads(v) for pid, v in
                self._conn.execute("SELECT pair_id, value FROM added_pairs ORDER BY pair_id")}

    def not_duplicates(self) -> set[tuple[int, int]]:
        """Id pairs (a < b) the curator marked as not duplicates."""
        return {(a, b) for a, b in self._conn.execute("SELECT a, b FROM not_duplicates")}

    def decision_times(self) -> list[float]:
        """Unix times (seconds) of the live ``decide`` actions, oldest first."""
        return [r[0] for r in self._conn.execute(
            "SELECT at FROM history WHERE undone=0 AND kind='decide' ORDER BY seq")]

    # -- writing ---------------------------------------------------------------------------

    def decide(self, pair_id: int, status: str | None, reason: str | None = None, *, at: float | None = None,
               via: str | None = None) -> int:
        """Record a decision (``status`` None makes the pair undecided again); returns the history seq.

        Committed before returning.
        """
        self._writable()
        at = time.time() if at is None else at
        with self._tx():
            before = self._decision_json(pair_id)
            after = None if status is None else {"status": status, "reason": reason}
            self._apply_decision(pair_id, after, at)
            return self._log(at, pair_id, "decide", before, after, via)

    def decide_many(self, decisions: dict[int, tuple[str | None, str | None]], *, via: str | None = None,
                    at: float | None = None) -> list[int]:
        """Several decisions in ONE transaction (all or none), e.g. "keep one" in a near-duplicate
        cluster: ``{pair_id: (status, reason)}``. Each is its own history entry (undone one by
        one, latest first). Returns the history seqs."""
        self._writable()
        at = time.time() if at is None else at
        seqs = []
        with self._tx():
            for pair_id, (status, reason) in decisions.items():
                before = self._decision_json(pair_id)
                after = None if status is None else {"status": status, "reason": reason}
                self._apply_decision(pair_id, after, at)
                seqs.append(self._log(at, pair_id, "decide", before, after, via))
        return seqs

    def edit(self, pair_id: int, changes: dict[str, str | None], *, at: float | None = None,
             via: str | None = None) -> int:
        """Record edits to a pair's fields (a None value restores the source text); returns the seq.

        Committed before returning.
        """
        self._writable()
        at = time.time() if at is None else at
        with self._tx():
            current = {f: json.loads(v) for f, v in self._conn.execute(
                "SELECT field, value FROM edits WHERE pair_id=?", (pair_id,))}
            before = {f: current.get(f) for f in changes}
            self._apply_edits(pair_id, changes, at)
            return self._log(at, pair_id, "edit", before, changes, via)

    def add_pair(self, pair_id: int, value: dict[str, Any], *, via: str | None = "generate",
                 at: float | None = None) -> int:
        """Store a new pair (from LLM generation) under ``pair_id``; returns the history seq.

        ``value`` holds question, answer, supporting_passage, doc_key, chunk_index and origin
        (JSON-serializable). Undo removes it again.

        Raises:
            WorkspaceError: ``pair_id`` is already used.
        """
        self._writable()
        at = time.time() if at is None else at
        with self._tx():
            try:
                self._conn.execute("INSERT INTO added_pairs VALUES (?, ?, ?)", (pair_id, _dump(value), at))
            except sqlite3.IntegrityError:
                raise WorkspaceError(f"{self.path}: pair id {pair_id} is already in use") from None
            return self._log(at, pair_id, "add", None, value, via)

    def mark_not_duplicates(self, pairs: Iterable[tuple[int, int]], *, at: float | None = None) -> int | None:
        """Remember that each id pair is NOT a near-duplicate; returns the history seq, or None
        when every pair was already marked. The entry's ``pair_id`` is the smallest id involved."""
        self._writable()
        at = time.time() if at is None else at
        new = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b} - self.not_duplicates())
        if not new:
            return None
        with self._tx():
            self._conn.executemany("INSERT INTO not_duplicates VALUES (?, ?, ?)", [(a, b, at) for a, b in new])
            return self._log(at, new[0][0], "not_duplicates", None, {"pairs": [list(p) for p in new]}, None)

    def undo(self) -> HistoryEntry | None:
        """Undo the latest live action (any number of times, across restarts); None when none is left."""
        self._writable()
        with self._tx():
            row = self._conn.execute(
                "SELECT seq, at, pair_id, kind, before, after, via FROM history WHERE undone=0 "
                "ORDER BY seq DESC LIMIT 1").fetchone()
            if row is None:
                return None
            entry = HistoryEntry(row[0], row[1], row[2], row[3], _load(row[4]), _load(row[5]), row[6])
            now = time.time()
            if entry.kind == "decide":
                self._apply_decision(entry.pair_id, entry.before, now)
            elif entry.kind == "edit":
                self._apply_edits(entry.pair_id, entry.before or {}, now)
            elif entry.kind == "add":
                self._conn.execute("DELETE FROM added_pairs WHERE pair_id=?", (entry.pair_id,))
            elif entry.kind == "not_duplicates":
                self._conn.executemany("DELETE FROM not_duplicates WHERE a=? AND b=?",
                                       [tuple(p) for p in entry.after["pairs"]])
            self._conn.execute("UPDATE history SET undone=1 WHERE seq=?", (entry.seq,))
            return entry

    # -- internals -------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise WorkspaceError(f"{self.path}: the workspace is open read-only")
        if self._conn is None:
            raise WorkspaceError(f"{self.path}: the workspace is closed")

    def _tx(self) -> "_Transaction":
        return _Transaction(self._conn)

    def _log(self, at: float, pair_id: int, kind: str, before: Any, after: Any, via: str | None) -> int:
        cur = self._conn.execute(
            "INSERT INTO history (at, pair_id, kind, before, after, via) VALUES (?, ?, ?, ?, ?, ?)",
            (at, pair_id, kind, _dump(before), _dump(after), via))
        return int(cur.lastrowid)

    def _decision_json(self, pair_id: int) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT status, reason FROM decisions WHERE pair_id=?", (pair_id,)).fetchone()
        return None if row is None else {"status": row[0], "reason": row[1]}

    def _apply_decision(self, pair_id: int, value: dict[str, Any] | None, at: float) -> None:
        if value is None:
            self._conn.execute("DELETE FROM decisions WHERE pair_id=?", (pair_id,))
        else:
            self._conn.execute("INSERT OR REPLACE INTO decisions VALUES (?, ?, ?, ?)",
                               (pair_id, value["status"], value.get("reason"), at))

    def _apply_edits(self, pair_id: int, changes: dict[str, str | None], at: float) -> None:
        for f, v in changes.items():
            if v is None:
                self._conn.execute("DELETE FROM edits WHERE pair_id=? AND field=?", (pair_id, f))
            else:
                self._conn.execute("INSERT OR REPLACE INTO edits VALUES (?, ?, ?, ?)",
                                   (pair_id, f, json.dumps(v), at))


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _take_lock(lock_path: Path) -> int:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; the single-writer check is skipped
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 64).decode("ascii", "replace").strip()
        os.close(fd)
        who = f" (pid {holder})" if holder else ""
        raise WorkspaceLocked(f"{lock_path.parent}: the workspace is open in another mtcb-curate{who}; "
                              f"close that one, or pass --read-only to look without writing") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def _dump(v: Any) -> str | None:
    # ASCII-escaped JSON: lone surrogates in a dataset's text survive the round trip.
    return None if v is None else json.dumps(v)


def _load(s: str | None) -> Any:
    return None if s is None else json.loads(s)
