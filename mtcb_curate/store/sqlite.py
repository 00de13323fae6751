"""The workspace: a SQLite file (WAL) holding a curator's decisions, edits and undo history.

One workspace per dataset, under ``platformdirs.user_data_dir("mtcb-curate")/workspaces/NAME``
or a ``--workspace DIR``. Files in the folder:

- ``workspace.sqlite`` (+ ``-wal``/``-shm`` while open): the state;
- ``lock``: the writing process's id, for the message that refuses a second instance.

One writer at a time: the process that writes holds an ``flock`` on the workspace folder itself
(and on ``lock``, which older versions took), so a second instance is refused (or opens
read-only) even when someone deletes the ``lock`` file; the kernel releases it when that process
dies, even on ``kill -9``.

Storage faults are ``WorkspaceError``s of one line naming the folder, never a traceback (every
public method turns ``sqlite3.Error`` and ``OSError`` into one; a closed workspace says so):
``WorkspaceReadOnly`` when a writer cannot write there (a read-only file system, no
permission), ``WorkspaceFull`` when the disk is full (on opening, or a change during a session:
that change is not saved, every earlier one is). Readers open a workspace on read-only storage
anyway, without a lock file: SQLite's ``mode=ro``, else ``immutable=1`` (it cannot make its
``-shm`` file there), else, when a killed writer left changes in the ``-wal`` that
``immutable`` would not see, a private copy of the two files in a temporary folder.

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

import errno
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
import functools
from collections.abc import Callable, Iterable
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from mtcb_curate.errors import WorkspaceError, WorkspaceFull, WorkspaceLocked, WorkspaceReadOnly
from mtcb_curate.store.base import HistoryEntry, dump_json
from mtcb_curate.store.history import SharedStore
from mtcb_curate.store.team import votes_agree

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
CREATE TABLE IF NOT EXISTS shared_evidence (  -- "distinct questions on shared evidence"
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,  -- a < b
    marked_at REAL NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE TABLE IF NOT EXISTS notes (  -- the curator's free-text note on a pair
    pair_id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,  -- never empty: an empty note is no row
    noted_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS votes (  -- merged workspaces: each curator's own decision on a pair
    pair_id INTEGER NOT NULL,
    curator TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (pair_id, curator)
);
CREATE TABLE IF NOT EXISTS resolutions (  -- a lead's decision on a conflict between votes
    pair_id INTEGER PRIMARY KEY,
    status TEXT NOT NULL,
    reason TEXT,
    at REAL NOT NULL,
    curator TEXT
);
"""

#: Columns added to tables of schema 1, applied when an older workspace is opened.
_MIGRATIONS = (
    ("history", "via", "ALTER TABLE history ADD COLUMN via TEXT"),
    ("history", "grp", "ALTER TABLE history ADD COLUMN grp INTEGER"),
    ("history", "curator", "ALTER TABLE history ADD COLUMN curator TEXT"),  # who made the change
)


def default_workspace_dir(dataset: str, source_key: str | None = None) -> Path:
    """The default workspace folder of a dataset, under the user data directory:
    ``workspaces/NAME``, or with ``source_key`` (``sample``, ``src-1a2b3c4d``: see
    ``app.sources``) ``workspaces/NAME-KEY``, the workspace of that one source."""
    from platformdirs import user_data_dir

    safe = dataset.replace("/", "__")
    return Path(user_data_dir("mtcb-curate", appauthor=False)) / "workspaces" / (
        safe if source_key is None else f"{safe}-{source_key}")


def dataset_workspaces(dataset: str) -> list[Path]:
    """The default workspace folders of a dataset that hold a workspace (``NAME`` and every
    ``NAME-sample`` / ``NAME-src-HASH``), the one a writer opened last first (the mtime of
    its ``lock`` file, which every writer rewrites on opening; else of the database)."""
    base = default_workspace_dir(dataset)
    found = []
    try:
        entries = list(base.parent.iterdir()) if base.parent.is_dir() else []
    except OSError:
        entries = []
    for d in entries:
        if d.name != base.name and not (d.name == f"{base.name}-sample" or d.name.startswith(f"{base.name}-src-")):
            continue
        db = d / DB_NAME
        if not db.is_file():
            continue
        stamps = []
        for f in (d / LOCK_NAME, db):
            try:
                stamps.append(f.stat().st_mtime)
            except OSError:
                pass
        found.append((max(stamps, default=0.0), d.name == base.name, d))
    return [d for _, _, d in sorted(found, key=lambda t: (t[0], t[1]), reverse=True)]


def questions_fingerprint(rows: Iterable[tuple[str, str, str, str]]) -> str:
    """sha256 over (question, answer, passage, document key) of every pair, in row order.

    Two loads of the same questions (from a file, a folder or the Hub) give the same value.
    """
    h = hashlib.sha256()
    # The bytes are each field's UTF-8 then 0x1F, and 0x1E after each row; encoded and hashed
    # a few thousand rows at a time (one update per field cost 0.7 s at 100,000 pairs).
    it = iter(rows)
    while chunk := list(islice(it, 4096)):
        h.update("".join(f"{q}\x1f{a}\x1f{p}\x1f{k}\x1f\x1e" for q, a, p, k in chunk).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


def _storage_boundary(method: _F) -> _F:
    """The workspace boundary: a ``Workspace`` method raises ``WorkspaceError`` (a
    ``CurateError``), never ``sqlite3.Error`` or ``OSError``, so the front ends catch one type.
    A closed workspace says so. Each runs inside ``call_guard()`` when one is set
    (``ReviewSession.run_within``)."""

    def call(self: "Workspace", *args: Any, **kwargs: Any) -> Any:
        if self._conn is None:
            raise WorkspaceError(f"{self.path}: the workspace is closed")
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            raise (_storage_error(self.path, exc, opening=False)
                   or WorkspaceError(f"{self.path}: the workspace cannot be used ({exc})")) from None

    @functools.wraps(method)
    def wrapper(self: "Workspace", *args: Any, **kwargs: Any) -> Any:
        guard = self.call_guard
        if guard is None:
            return call(self, *args, **kwargs)
        with guard():
            return call(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class Workspace(SharedStore):
    """An open workspace. Use ``Workspace.open``; close with ``close()`` or a ``with`` block.

    Attributes:
        path: the workspace folder.
        read_only: True when opened without the lock; every write raises ``WorkspaceError``.
        commit_waits: False: a commit is a local write (see ``store.base.Store``).
    """

    commit_waits = False

    def __init__(self, path: Path, conn: sqlite3.Connection, lock_fds: tuple[int, ...], read_only: bool,
                 snapshot_dir: Path | None = None, curator: str | None = None):
        self.path = path
        self.curator = curator
        self._conn = conn
        self._lock_fds = lock_fds
        self._snapshot_dir = snapshot_dir
        self.read_only = read_only

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, read_only: bool = False, durable: bool = False,
             curator: str | None = None) -> "Workspace":
        """Open (creating when needed) the workspace in folder ``path``.

        Args:
            path: the folder.
            read_only: open without taking the lock; nothing can be written. Works on read-only
                storage too (see the module docstring).
            durable: ``synchronous=FULL`` (fsync per decision) instead of ``NORMAL``.
            curator: the name every change is recorded under in the history (default
                ``curators.default_curator()``: the config's ``[team] curator`` or the login name).

        Raises:
            WorkspaceLocked: another process holds the workspace.
            WorkspaceReadOnly: a writer on read-only storage, or without permission to write.
            WorkspaceFull: a writer on a full disk (nothing is lost).
            WorkspaceError: the folder cannot be created or the file is not a workspace.
        """
        from mtcb_curate.store.curators import default_curator

        path = Path(path)
        curator = curator or default_curator()
        db = path / DB_NAME
        if read_only:
            if not db.exists():
                raise WorkspaceError(f"{path}: no workspace here to open read-only")
            conn, snapshot = _open_reader(path, db)
            return cls(path, conn, (), True, snapshot, curator)
        new = not db.exists()
        made = _missing_folders(path)
        lock_was_there = (path / LOCK_NAME).exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _undo_new_workspace(path, made, lock_was_there)
            kind = {"full": WorkspaceFull, "read-only": WorkspaceReadOnly}.get((_fault(path, exc) or ("",))[0],
                                                                               WorkspaceError)
            raise kind(f"{path}: cannot create the workspace folder ({exc.strerror})") from None
        try:
            lock_fds = _take_lock(path)
        except WorkspaceError as exc:
            if new and not isinstance(exc, WorkspaceLocked):
                _undo_new_workspace(path, made, lock_was_there)
                raise type(exc)(_not_created(path, exc)) from None
            raise
        conn = None
        try:
            conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            conn.execute("PRAGMA busy_timeout=2000")
            have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if not {"meta", "decisions", "edits", "history", "history_live", "added_pairs",
                    "not_duplicates", "shared_evidence", "notes", "votes", "resolutions"} <= have:
                conn.executescript(_SCHEMA)
            for table, column, sql in _MIGRATIONS:
                if column not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
                    conn.execute(sql)
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if version is not None and int(version[0]) > SCHEMA_VERSION:
                raise WorkspaceError(f"{db}: made by a newer mtcb-curate (schema {version[0]}); upgrade to open it")
            if version is None or version[0] != str(SCHEMA_VERSION):  # no write when nothing changes
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            # A file SQLite cannot write says so now, not at the first decision. Rolled back: a
            # WAL transaction writes nothing to the disk before its commit.
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            finally:
                conn.execute("ROLLBACK")
        except sqlite3.DatabaseError as exc:
            _close_quietly(conn)
            _release(lock_fds)
            error = (_storage_error(path, exc, opening=True)
                     or WorkspaceError(f"{db}: not a usable workspace ({exc})"))
            if new:  # a workspace refused at birth leaves nothing that later reads as a broken one
                _undo_new_workspace(path, made, lock_was_there)
                raise type(error)(_not_created(path, error)) from None
            raise error from None
        except BaseException:
            _close_quietly(conn)
            _release(lock_fds)
            if new:
                _undo_new_workspace(path, made, lock_was_there)
            raise
        return cls(path, conn, lock_fds, False, curator=curator)

    @staticmethod
    def exists(path: Path) -> bool:
        """True when ``path`` holds a workspace file."""
        return (Path(path) / DB_NAME).is_file()

    def close(self) -> None:
        """Close the database and release the lock. Safe to call twice."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None  # type: ignore[assignment]
        _release(self._lock_fds)
        self._lock_fds = ()
        if self._snapshot_dir is not None:
            shutil.rmtree(self._snapshot_dir, ignore_errors=True)
            self._snapshot_dir = None

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the shared reads and writes run on (``store.history.SharedStore``) --------------

    @property
    def label(self) -> str:
        """The workspace as messages name it: its folder."""
        return str(self.path)

    @_storage_boundary
    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self._conn.execute(sql, params).fetchall()

    @_storage_boundary
    def _transact(self, work: Callable[[Any], _T], *, seqs_result: Callable[[list[int]], _T] | None = None,
                  undo: bool = False, idempotent: bool = False) -> _T:
        self._writable()
        with self._tx():
            return work(self._conn)

    def _execute(self, tx: sqlite3.Connection, sql: str, params: tuple = ()) -> sqlite3.Cursor:
        return tx.execute(sql, params)

    def _log(self, tx: sqlite3.Connection, at: float, pair_id: int, kind: str, before: Any, after: Any,
             via: str | None, group: int | None = None) -> int:
        cur = tx.execute(
            "INSERT INTO history (at, pair_id, kind, before, after, via, grp, curator) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (at, pair_id, kind, dump_json(before), dump_json(after), via, group, self.curator))
        return int(cur.lastrowid)

    def _apply_decision(self, tx: sqlite3.Connection, pair_id: int, value: dict[str, Any] | None, at: float) -> None:
        if value is None:
            tx.execute("DELETE FROM decisions WHERE pair_id=?", (pair_id,))
        else:
            tx.execute("INSERT OR REPLACE INTO decisions VALUES (?, ?, ?, ?)",
                       (pair_id, value["status"], value.get("reason"), at))

    def _apply_note(self, tx: sqlite3.Connection, pair_id: int, text: str | None, at: float) -> None:
        if text:
            tx.execute("INSERT OR REPLACE INTO notes VALUES (?, ?, ?)", (pair_id, text, at))
        else:
            tx.execute("DELETE FROM notes WHERE pair_id=?", (pair_id,))

    def _apply_edits(self, tx: sqlite3.Connection, pair_id: int, changes: dict[str, Any], at: float) -> None:
        for f, v in changes.items():
            if v is None:
                tx.execute("DELETE FROM edits WHERE pair_id=? AND field=?", (pair_id, f))
            else:
                tx.execute("INSERT OR REPLACE INTO edits VALUES (?, ?, ?, ?)", (pair_id, f, json.dumps(v), at))

    def _insert_added(self, tx: sqlite3.Connection, pair_id: int, value: dict[str, Any], at: float) -> bool:
        try:
            tx.execute("INSERT INTO added_pairs VALUES (?, ?, ?)", (pair_id, dump_json(value), at))
        except sqlite3.IntegrityError:
            return False
        return True

    def _insert_marks(self, tx: sqlite3.Connection, kind: str, pairs: list[tuple[int, int]],
                      at: float) -> list[tuple[int, int]]:
        have = {(a, b) for a, b in tx.execute(f"SELECT a, b FROM {kind}")}
        new = [p for p in pairs if p not in have]
        tx.executemany(f"INSERT INTO {kind} VALUES (?, ?, ?)", [(a, b, at) for a, b in new])
        return new

    def _resolution_before(self, tx: sqlite3.Connection, pair_id: int) -> dict[str, Any] | None:
        return self._decision_before(tx, pair_id)  # a merged workspace's pair: its decision

    def _apply_resolution(self, tx: sqlite3.Connection, pair_id: int, value: dict[str, Any], at: float) -> None:
        tx.execute("INSERT OR REPLACE INTO resolutions VALUES (?, ?, ?, ?, ?)",
                   (pair_id, value["status"], value.get("reason"), at, self.curator))
        self._apply_decision(tx, pair_id, value, at)

    def _undo_resolution(self, tx: sqlite3.Connection, entry: HistoryEntry, at: float) -> None:
        tx.execute("DELETE FROM resolutions WHERE pair_id=?", (entry.pair_id,))
        self._apply_decision(tx, entry.pair_id, entry.before, at)

    # -- merged workspaces: votes, conflicts (see ``app.merge``) ------------------------------

    @_storage_boundary
    def overlap_pairs(self) -> set[int]:
        """Pairs with votes of two curators or more (decided in several merged workspaces)."""
        return {r[0] for r in self._conn.execute("SELECT pair_id FROM votes GROUP BY pair_id HAVING count(*) > 1")}

    @_storage_boundary
    def team_activity(self) -> dict[str, list[float]]:
        """Each curator's decision times from the votes (Unix seconds, oldest first)."""
        out: dict[str, list[float]] = {}
        for name, at in self._conn.execute("SELECT curator, at FROM votes ORDER BY at"):
            out.setdefault(name, []).append(at)
        return out

    def add_votes(self, votes: dict[int, dict[str, tuple[str, str | None, float]]], *, at: float | None = None) -> list[int]:
        """Record curators' decisions from merged workspaces in ONE transaction and one undo
        step: every vote is kept; a pair decided by one curator, or by several who agree
        (``team.votes_agree``), gets that decision (history kind ``decide``, via ``merge``,
        under the curator who made it); disagreeing votes leave the pair undecided, a conflict.
        Returns the history seqs."""
        at = time.time() if at is None else at
        saved = self.curator

        def work(tx: sqlite3.Connection) -> list[int]:
            seqs: list[int] = []
            try:
                for pid, by in sorted(votes.items()):
                    tx.executemany("INSERT OR REPLACE INTO votes VALUES (?, ?, ?, ?, ?)",
                                   [(pid, name, s, r, t) for name, (s, r, t) in by.items()])
                    if not votes_agree([(s, r) for s, r, _t in by.values()]):
                        continue
                    name, (status, reason, t) = min(by.items(), key=lambda kv: kv[1][2])
                    before = self._decision_before(tx, pid)
                    after = {"status": status, "reason": reason}
                    self._apply_decision(tx, pid, after, t)
                    self.curator = name
                    seqs.append(self._log(tx, at, pid, "decide", before, after, "merge", seqs[0] if seqs else None))
                if seqs:
                    tx.execute("UPDATE history SET grp=? WHERE seq=?", (seqs[0], seqs[0]))
            finally:
                self.curator = saved
            return seqs

        return self._transact(work)

    # -- internals -------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise WorkspaceError(f"{self.path}: the workspace is open read-only")
        if self._conn is None:
            raise WorkspaceError(f"{self.path}: the workspace is closed")

    def _tx(self) -> "_Transaction":
        return _Transaction(self._conn, self.path)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception (a failed COMMIT too).

    A storage fault (full disk, read-only storage, I/O error) is raised as a one-line
    ``WorkspaceError`` naming the folder: the change was not saved, every earlier one is.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path

    def __enter__(self) -> None:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _write_error(self.path, exc) from None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return
            except sqlite3.Error as commit_exc:
                exc = commit_exc
        if self.conn.in_transaction:  # SQLite may already have rolled back (e.g. SQLITE_FULL)
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        if isinstance(exc, sqlite3.Error) and not isinstance(exc, (sqlite3.ProgrammingError,
                                                                   sqlite3.InterfaceError)):
            raise _write_error(self.path, exc) from None


#: SQLite's primary result codes (https://sqlite.org/rescode.html) that can mean a storage fault.
_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 3, 8, 10, 13, 14
_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
#: Less free space than this (bytes) makes an I/O error a full disk.
_LOW_SPACE = 1 << 20


def _fault(path: Path, exc: BaseException) -> tuple[str, str] | None:
    """("full" | "read-only", what the system said) when ``exc`` is a storage fault, else None."""
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        if exc.errno in _FULL_ERRNOS:
            return "full", detail
        if exc.errno in _READ_ONLY_ERRNOS:
            return "read-only", detail
        return None
    if not isinstance(exc, sqlite3.Error):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary == _SQLITE_FULL or "disk is full" in text:
        return "full", text
    if primary in (_SQLITE_READONLY, _SQLITE_PERM) or "readonly database" in text:
        return "read-only", text
    if primary in (_SQLITE_IOERR, _SQLITE_CANTOPEN) or (
            primary is None and ("disk I/O error" in text or "unable to open" in text)):
        # SQLite says "disk I/O error" when it cannot grow its -shm file on a full disk, and
        # "unable to open database file" when it cannot create its -wal on read-only storage.
        try:
            st = os.statvfs(path)
        except (OSError, AttributeError):
            return None
        if st.f_bavail * st.f_frsize < _LOW_SPACE:
            return "full", text
        if st.f_flag & getattr(os, "ST_RDONLY", 1) or not os.access(path, os.W_OK):
            return "read-only", text
    return None


def _missing_folders(path: Path) -> list[Path]:
    """The folders ``path.mkdir(parents=True)`` would make, outermost first."""
    out: list[Path] = []
    p = Path(path)
    while not p.exists() and p.parent != p:
        out.insert(0, p)
        p = p.parent
    return out


def _undo_new_workspace(path: Path, made: list[Path], lock_was_there: bool) -> None:
    """Remove what opening a NEW workspace in ``path`` made before it failed: the database (and
    its ``-wal``/``-shm``), the lock file unless it was there before, and the folders made for
    it (only when empty). Never raises."""
    names = [DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"] + ([] if lock_was_there else [LOCK_NAME])
    for name in names:
        try:
            (path / name).unlink(missing_ok=True)
        except OSError:
            pass
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            break


def _not_created(path: Path, error: WorkspaceError) -> str:
    """The message for a new workspace refused at its creation: what was wrong, and that
    nothing was left behind."""
    if isinstance(error, WorkspaceFull):
        return (f"{path}: cannot create the workspace: the disk is full; nothing was left behind. "
                f"Free some space and try again")
    text = str(error)
    return f"{text.rstrip('.')}; the new workspace was not created and nothing was left behind"


def _storage_error(path: Path, exc: BaseException, *, opening: bool) -> WorkspaceError | None:
    """The one-line error for a storage fault while opening (``opening``) or writing, or None
    when ``exc`` is not one."""
    fault = _fault(path, exc)
    if fault is None:
        return None
    kind, detail = fault
    if kind == "full":
        if opening:
            return WorkspaceFull(f"{path}: the disk holding the workspace is full ({detail}); nothing was lost: "
                                 f"every decision made before is committed. Free some space and open it again")
        return WorkspaceFull(f"{path}: the disk holding the workspace is full ({detail}): this change was not "
                             f"saved, every earlier one is. Free some space and try again")
    if opening:
        return WorkspaceReadOnly(f"{path}: this command writes to the workspace and cannot write there ({detail}); "
                                 f"commands that only read it still work (--read-only, verify, check, export), "
                                 f"or copy the folder somewhere writable")
    return WorkspaceReadOnly(f"{path}: the workspace can no longer be written ({detail}): this change was not "
                             f"saved, every earlier one is")


def _write_error(path: Path, exc: sqlite3.Error) -> WorkspaceError:
    return (_storage_error(path, exc, opening=False)
            or WorkspaceError(f"{path}: this change was not saved ({exc}); every earlier one is"))


def _uri(db: Path, query: str) -> str:
    return "file:" + urllib.parse.quote(db.resolve().as_posix()) + "?" + query


def _open_reader(path: Path, db: Path) -> tuple[sqlite3.Connection, Path | None]:
    """A read-only connection to ``db`` and the temporary folder of its copy (None: no copy).

    ``mode=ro`` first; SQLite refuses it when it cannot make its ``-wal``/``-shm`` files
    (read-only storage, a full disk). Then ``immutable=1``, which reads the database file alone:
    right when the ``-wal`` is absent or empty. Otherwise the committed changes still in the
    ``-wal`` are read from a private copy of both files.

    Raises:
        WorkspaceError: not a readable workspace.
    """
    conn = None
    try:
        conn = _connect_reader(_uri(db, "mode=ro"))
        return conn, None
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        first = exc
    wal = db.with_name(db.name + "-wal")
    try:
        wal_bytes = wal.stat().st_size if wal.is_file() else 0
    except OSError:
        wal_bytes = 0
    code = getattr(first, "sqlite_errorcode", None)
    if _fault(path, first) is None and not (isinstance(code, int) and code & 0xFF in (_SQLITE_CANTOPEN,
                                                                                       _SQLITE_IOERR)):
        raise WorkspaceError(f"{db}: not a readable workspace ({first})") from None
    snapshot = None
    try:
        if wal_bytes == 0:
            uri = _uri(db, "immutable=1")
        else:
            snapshot = Path(tempfile.mkdtemp(prefix="mtcb-curate-ro-"))
            shutil.copyfile(db, snapshot / DB_NAME)
            shutil.copyfile(wal, snapshot / wal.name)
            uri = _uri(snapshot / DB_NAME, "mode=ro")
        return _connect_reader(uri), snapshot
    except (sqlite3.Error, OSError) as exc:
        if snapshot is not None:
            shutil.rmtree(snapshot, ignore_errors=True)
        raise WorkspaceError(f"{db}: not a readable workspace ({first}; then {exc})") from None


def _connect_reader(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM decisions").fetchone()
        # An older workspace opened read-only cannot be migrated: give it empty
        # stand-ins for what it lacks (in this connection only).
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table, columns in (("added_pairs", "pair_id INTEGER, value TEXT, added_at REAL"),
                               ("not_duplicates", "a INTEGER, b INTEGER, marked_at REAL"),
                               ("shared_evidence", "a INTEGER, b INTEGER, marked_at REAL"),
                               ("notes", "pair_id INTEGER, text TEXT, noted_at REAL"),
                               ("votes", "pair_id INTEGER, curator TEXT, status TEXT, reason TEXT, at REAL"),
                               ("resolutions", "pair_id INTEGER, status TEXT, reason TEXT, at REAL, curator TEXT")):
            if table not in tables:
                conn.execute(f"CREATE TEMP TABLE {table} ({columns})")
        have = {r[1] for r in conn.execute("PRAGMA table_info(history)")}
        missing = [c for c in ("via", "grp", "curator") if c not in have]
        if missing:
            extra = ", ".join(f"NULL AS {c}" for c in missing)
            conn.execute(f"CREATE TEMP VIEW history AS SELECT *, {extra} FROM main.history")
    except BaseException:
        conn.close()
        raise
    return conn


def _take_lock(path: Path) -> tuple[int, ...]:
    """Take the single-writer lock of the workspace folder ``path``; returns the descriptors to
    close to release it: the folder's (flocked; deleting a file cannot undo that) and the lock
    file's (flocked too, for older versions, and holding our pid for the refusal message).

    Raises:
        WorkspaceLocked: another process holds it.
        WorkspaceReadOnly, WorkspaceFull: the lock file cannot be made.
    """
    lock_path = path / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; the single-writer check is skipped
        fcntl = None
    fds: list[int] = []
    try:
        if fcntl is not None:
            dir_fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            fds.append(dir_fd)
            try:
                fcntl.flock(dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise _locked(path, _holder_pid(path)) from None
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise (_storage_error(path, exc, opening=True)
                   or WorkspaceError(f"{lock_path}: cannot open the lock file ({exc.strerror})")) from None
        fds.append(fd)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # an older mtcb-curate, which locks only this file
                raise _locked(path, _read_pid(fd)) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except OSError:  # a full disk: the pid is only for messages; SQLite reports the fault
            pass
    except BaseException:
        _release(tuple(fds))
        raise
    return tuple(fds)


def _locked(path: Path, holder: str | None) -> WorkspaceLocked:
    who = f" (pid {holder})" if holder else ""
    return WorkspaceLocked(f"{path}: the workspace is open in another mtcb-curate{who}; "
                           f"close that one, or pass --read-only to look without writing")


def _read_pid(fd: int) -> str | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 64).decode("ascii", "replace").strip()
    except OSError:
        return None
    return text if text.isdigit() else None


def _holder_pid(path: Path) -> str | None:
    """The pid of the process holding the folder's lock: from the lock file, else (Linux, when
    the file was deleted) from ``/proc/locks``; None when unknown."""
    try:
        fd = os.open(path / LOCK_NAME, os.O_RDONLY)
    except OSError:
        pass
    else:
        try:
            pid = _read_pid(fd)
        finally:
            os.close(fd)
        if pid:
            return pid
    try:
        st = os.stat(path)
        want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            for line in f:
                # "1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF"; the device numbers in hex
                parts = line.split()
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[0] != "->":
                    major, minor, ino = parts[5].split(":")
                    if (int(major, 16), int(minor, 16), int(ino)) == want:
                        return parts[4]
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _close_quietly(conn: sqlite3.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except sqlite3.Error:
            pass


def _release(fds: tuple[int, ...]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
