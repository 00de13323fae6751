"""The shared workspace: a PostgreSQL database holding a team's decisions, edits and history.

Selected with ``--workspace postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE`` or the
``MTCB_CURATE_DATABASE_URL`` environment variable (any libpq connection URI; a password is
better kept in ``PGPASSWORD`` or ``~/.pgpass`` than in the URL). One database (or one schema,
with libpq's ``?options=-csearch_path%3DNAME``) holds one workspace. Several curators write to it
at once; every change records its ``curator``.

It implements ``store.base.Store`` like ``store.sqlite.Workspace``, on the same shared code
(``store.history.SharedStore``: the history, the writes and ``undo`` written once), and keeps the
same rules:

- every write is one transaction committed before the call returns, and lands in the history
  so that ``undo`` takes it back. ``undo`` takes back the latest live action of THIS curator
  (a group written by ``edit_many`` / ``decide_many(group=True)`` as one step);
- every driver fault becomes a one-line ``WorkspaceError`` naming the database with its
  password removed (``redact``), never a psycopg exception;
- a dropped connection or a server restart during a write is retried on a new connection
  (for up to ``RECONNECT_SECONDS``): each write carries a client-made action id, stored with
  its history entries, so a write whose COMMIT reached the server before the connection broke
  is recognised and not applied twice. ``reconnects`` counts the reconnections and
  ``on_reconnect`` (when set) is called with a one-line message, for the screen.

A decision is one commit: outside a work split one round trip, a single statement
(``_decide_sql``: data-modifying CTEs) that is its own transaction; on a pair of the split three
(that statement finds the pair in the split and writes nothing, then a pipeline: BEGIN with the
reads, then the writes with COMMIT). With the server's default durability the commit waits for the WAL flush (an fsync),
which is most of a decision's time. ``[team] synchronous_commit = "off"`` in the config file
(``SET synchronous_commit = off`` on this workspace's connections only) returns before that
flush: a crash of the database server (not a clean restart, not a curator's machine) can then
lose the last fraction of a second of acknowledged changes; it never corrupts the database.

Free text (edits, notes, meta values, reasons, history values) is stored as ASCII-escaped JSON
in ``text`` columns, so lone surrogates and NUL characters from a dataset round-trip unchanged
(PostgreSQL's ``text`` cannot hold NUL; its ``jsonb`` refuses lone surrogates).

Work split (``plan_work``, ``claim_next``): the pairs to review are listed once in ``work``;
a share of them (``overlap``) needs two curators. ``claim_next`` hands a curator the next pair
that has fewer live claims than it needs copies, taken with ``SELECT ... FOR UPDATE SKIP
LOCKED`` (two curators asking at once never get the same single pair), with a lease: a claim
not decided within its lease goes to the next curator who asks. A decision on a pair of the
split records the curator's own vote (``votes``) and marks the claim done; it is refused when
the pair is held (or was decided) by as many other curators as it needs. On a pair of the
overlap each curator sees only their own vote (blind); when both voted the same the pair is
decided, when they disagree it is a conflict (``conflicts``) until a lead decides it
(``resolve``). Outside a split (no ``plan_work``), decisions are shared as on SQLite.

The side folder ``path`` (the LLM reply cache, exports) is local to each machine:
``<user data dir>/team/<12 hex digits of the sha256 of the redacted URL>``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from mtcb_curate.errors import WorkspaceError, WorkspaceReadOnly
from mtcb_curate.store.base import Decision, HistoryEntry, dump_json as _dump, load_json as _load
from mtcb_curate.store.history import HISTORY_COLUMNS, SharedStore, undone_step
from mtcb_curate.store.team import votes_agree

SCHEMA_VERSION = 1
#: How long (seconds) a write keeps trying to reconnect after the connection broke.
RECONNECT_SECONDS = 30.0
#: The environment variable naming the shared workspace when ``--workspace`` is not given.
DATABASE_URL_ENV = "MTCB_CURATE_DATABASE_URL"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    pair_id BIGINT PRIMARY KEY,
    status TEXT NOT NULL,
    reason TEXT,              -- JSON string
    decided_at DOUBLE PRECISION NOT NULL,
    curator TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS edits (
    pair_id BIGINT NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL,      -- JSON value
    edited_at DOUBLE PRECISION NOT NULL,
    curator TEXT NOT NULL,
    PRIMARY KEY (pair_id, field)
);
CREATE TABLE IF NOT EXISTS history (
    seq BIGSERIAL PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    pair_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    before TEXT,
    after TEXT,
    via TEXT,
    grp BIGINT,
    undone BOOLEAN NOT NULL DEFAULT FALSE,
    curator TEXT NOT NULL,
    action TEXT NOT NULL,     -- the client-made id of the write (retries are recognised by it)
    undone_by TEXT            -- the action id of the undo that took this entry back
);
CREATE INDEX IF NOT EXISTS history_live ON history (curator, undone, seq);
CREATE INDEX IF NOT EXISTS history_action ON history (action);
CREATE INDEX IF NOT EXISTS history_undone_by ON history (undone_by);
CREATE TABLE IF NOT EXISTS added_pairs (
    pair_id BIGINT PRIMARY KEY,
    value TEXT NOT NULL,      -- JSON
    added_at DOUBLE PRECISION NOT NULL,
    curator TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS not_duplicates (
    a BIGINT NOT NULL, b BIGINT NOT NULL, marked_at DOUBLE PRECISION NOT NULL, curator TEXT NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE TABLE IF NOT EXISTS shared_evidence (
    a BIGINT NOT NULL, b BIGINT NOT NULL, marked_at DOUBLE PRECISION NOT NULL, curator TEXT NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE TABLE IF NOT EXISTS notes (
    pair_id BIGINT PRIMARY KEY,
    text TEXT NOT NULL,       -- JSON string, never empty
    noted_at DOUBLE PRECISION NOT NULL,
    curator TEXT NOT NULL
);
-- The work split (see "Work split" in the module docstring).
CREATE TABLE IF NOT EXISTS work (
    pair_id BIGINT PRIMARY KEY,
    copies SMALLINT NOT NULL  -- 1, or 2 for a pair of the overlap (decided blind by two curators)
);
CREATE TABLE IF NOT EXISTS claims (
    pair_id BIGINT NOT NULL,
    curator TEXT NOT NULL,
    claimed_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    done BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (pair_id, curator)
);
CREATE TABLE IF NOT EXISTS votes (  -- each curator's own decision on a pair of the work split
    pair_id BIGINT NOT NULL,
    curator TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,              -- JSON string
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (pair_id, curator)
);
CREATE TABLE IF NOT EXISTS resolutions (  -- a lead's decision on a conflict of the overlap
    pair_id BIGINT PRIMARY KEY,
    status TEXT NOT NULL,
    reason TEXT,              -- JSON string
    at DOUBLE PRECISION NOT NULL,
    curator TEXT NOT NULL
);
"""

def _decide_sql(write: str) -> str:
    """One decision outside the work split as ONE statement (data-modifying CTEs): lock and read
    the previous decision, ``write`` it, log the history entry (with the action id); its result
    is the history seq, or NULL (nothing written) when the pair is in the work split."""
    return (
        "WITH w AS (SELECT 1 FROM work WHERE pair_id=%(pid)s), "
        "prev AS (SELECT status, reason FROM decisions WHERE pair_id=%(pid)s AND NOT EXISTS (SELECT 1 FROM w) "
        "FOR UPDATE), "
        f"up AS ({write}), "
        "h AS (INSERT INTO history (at, pair_id, kind, before, after, via, grp, curator, action) "
        "SELECT %(at)s, %(pid)s, 'decide', "
        """(SELECT '{"status": ' || to_json(status)::text || ', "reason": ' || coalesce(reason, 'null') || '}' """
        "FROM prev), %(after)s, %(via)s, NULL, %(me)s, %(action)s "
        "WHERE NOT EXISTS (SELECT 1 FROM w) AND (SELECT count(*) FROM up) >= 0 RETURNING seq) "
        "SELECT (SELECT seq FROM h)")


#: ``_decide_sql`` for a decision (index False) and for "undecided again" (index True).
_DECIDE_SQL = (
    _decide_sql("INSERT INTO decisions SELECT %(pid)s, %(status)s, %(reason)s, %(at)s, %(me)s "
                "WHERE NOT EXISTS (SELECT 1 FROM w) AND (SELECT count(*) FROM prev) >= 0 "
                "ON CONFLICT (pair_id) DO UPDATE SET status=EXCLUDED.status, reason=EXCLUDED.reason, "
                "decided_at=EXCLUDED.decided_at, curator=EXCLUDED.curator RETURNING 1"),
    _decide_sql("DELETE FROM decisions WHERE pair_id=%(pid)s AND NOT EXISTS (SELECT 1 FROM w) "
                "AND (SELECT count(*) FROM prev) >= 0 RETURNING 1"),
)

_TABLES = ("meta", "decisions", "edits", "history", "added_pairs", "not_duplicates", "shared_evidence", "notes",
           "work", "claims", "votes", "resolutions")
#: How long (seconds) a claim is held when none is given: a killed curator's pairs go back to
#: the others after this.
DEFAULT_LEASE_SECONDS = 600.0


def is_database_url(target: object) -> bool:
    """True when ``target`` (a ``--workspace`` value) names a PostgreSQL database
    (``postgresql://`` or ``postgres://``) rather than a folder."""
    return isinstance(target, str) and re.match(r"(?i)postgres(ql)?://", target) is not None


def redact(url: str) -> str:
    """``url`` without its password, for messages: ``postgresql://ann@db:5432/team``.
    A ``password=`` parameter in the query is removed too."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            netloc = userinfo.split(":", 1)[0] + "@" + host
        query = "&".join(q for q in parts.query.split("&") if q and not q.lower().startswith("password="))
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "the PostgreSQL workspace"


def side_folder(url: str) -> Path:
    """The local folder of a shared workspace's side files (see the module docstring)."""
    from platformdirs import user_data_dir

    digest = hashlib.sha256(redact(url).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return Path(user_data_dir("mtcb-curate", appauthor=False)) / "team" / digest


_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


def _boundary(method: _F) -> _F:
    """Every public method raises ``WorkspaceError``, never a psycopg exception (and never the
    URL's password); a closed workspace says so. Each runs inside ``call_guard()`` when one is
    set (``ReviewSession.run_within``)."""

    def call(self: "PgWorkspace", *args: Any, **kwargs: Any) -> Any:
        import psycopg

        if self._closed:
            raise WorkspaceError(f"{self.label}: the workspace is closed")
        try:
            return method(self, *args, **kwargs)
        except psycopg.Error as exc:
            raise self._error(exc) from None

    @functools.wraps(method)
    def wrapper(self: "PgWorkspace", *args: Any, **kwargs: Any) -> Any:
        guard = self.call_guard
        if guard is None:
            return call(self, *args, **kwargs)
        with guard():
            return call(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _Tx:
    """A write's transaction on the shared workspace: its cursor and the write's action id."""

    __slots__ = ("cur", "action")

    def __init__(self, cur: Any, action: str) -> None:
        self.cur = cur
        self.action = action


class PgWorkspace(SharedStore):
    """An open shared workspace. Use ``PgWorkspace.open``; close with ``close()`` or ``with``.

    Attributes:
        path: the local side folder (see the module docstring).
        read_only: True when opened read-only; every write raises ``WorkspaceError``.
        curator: the name every change is recorded under.
        label: the database URL without its password (for messages).
        reconnects: how many times a broken connection was replaced.
        on_reconnect: called with a one-line message after a reconnection (or None), on the
            thread that wrote (``ReviewSession.decide`` commits a decision on its own thread).
        on_reconnecting: called the same way when a lost connection starts being replaced
            (the write waits meanwhile, up to ``RECONNECT_SECONDS``).
        commit_waits: True: a commit waits on the server (see ``store.base.Store``).
        clock: the wall clock of claims, leases and decision times (seconds since the epoch;
            ``time.time``); a test sets a fake one to let a lease run out without waiting.
    """

    commit_waits = True
    FOR_UPDATE = " FOR UPDATE"
    OTHER_WORKSPACE = "pass --workspace with another database"

    def __init__(self, url: str, conn: Any, *, read_only: bool, curator: str):
        self._url = url
        self._conn = conn
        self._closed = False
        self.label = redact(url)
        self.path = side_folder(url)
        self.read_only = read_only
        self.curator = curator
        self.reconnects = 0
        self.synchronous_commit = "on"
        self.on_reconnect: Callable[[str], None] | None = None
        self.on_reconnecting: Callable[[str], None] | None = None
        self._reconnect_lock = threading.Lock()
        self.clock: Callable[[], float] = time.time

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str, *, read_only: bool = False, curator: str | None = None,
             synchronous_commit: str | None = None) -> "PgWorkspace":
        """Connect to the database ``url`` and create the tables when needed.

        Args:
            url: a libpq connection URI (``postgresql://...``).
            read_only: nothing can be written (the tables must exist).
            curator: the name changes are recorded under (default ``default_curator()``).
            synchronous_commit: ``"on"`` (PostgreSQL's default: a write returns once the
                server flushed it to disk) or ``"off"`` (it returns before that flush, ~3x
                faster on a disk with a slow fsync; a crash of the database server, not a clean
                restart, can lose the last fraction of a second of acknowledged changes, never
                corrupt the database). Default: ``configured_synchronous_commit()``. Set for
                this workspace's connection (and its reconnections) only.

        Raises:
            WorkspaceError: the server cannot be reached, refuses the login, or the database
                was made by a newer mtcb-curate; the message never holds the password.
            CurateError: the configured ``synchronous_commit`` is neither "on" nor "off".
        """
        import psycopg

        from mtcb_curate.store.curators import default_curator

        curator = curator or default_curator()
        synchronous_commit = synchronous_commit or configured_synchronous_commit()
        if synchronous_commit not in ("on", "off"):
            raise WorkspaceError(f"synchronous_commit must be 'on' or 'off', not {synchronous_commit!r}")
        label = redact(url)
        try:
            conn = _connect(url, synchronous_commit)
        except psycopg.Error as exc:
            raise WorkspaceError(f"{label}: cannot connect to the shared workspace ({_one_line(exc, url)})") from None
        ws = cls(url, conn, read_only=read_only, curator=curator)
        ws.synchronous_commit = synchronous_commit
        try:
            ws._prepare()
        except psycopg.Error as exc:
            ws.close()
            raise ws._error(exc) from None
        except WorkspaceError:
            ws.close()
            raise
        return ws

    def _prepare(self) -> None:
        have = {r[0] for r in self._conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
        if self.read_only:
            if "meta" not in have:
                raise WorkspaceError(f"{self.label}: no workspace here to open read-only")
        elif not set(_TABLES) <= have:
            with self._conn.transaction():
                # One creator at a time when several curators open a new database together.
                self._conn.execute("SELECT pg_advisory_xact_lock(77301917)")
                self._conn.execute(_SCHEMA)
        row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and int(json.loads(row[0])) > SCHEMA_VERSION:
            raise WorkspaceError(f"{self.label}: made by a newer mtcb-curate (schema {json.loads(row[0])}); "
                                 f"upgrade to open it")
        if row is None and not self.read_only:
            self._conn.execute("INSERT INTO meta VALUES ('schema_version', %s) ON CONFLICT DO NOTHING",
                               (json.dumps(str(SCHEMA_VERSION)),))
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # the side folder only holds caches; commands that need it say so

    @staticmethod
    def exists(url: str) -> bool:
        """True when the database ``url`` holds a workspace bound to a dataset.

        Raises:
            WorkspaceError: the server cannot be reached or refuses the login (the message
                never holds the password).
        """
        import psycopg

        try:
            with _connect(url) as conn:
                have = conn.execute("SELECT to_regclass('meta')").fetchone()[0]
                if have is None:
                    return False
                return conn.execute("SELECT 1 FROM meta WHERE key='fingerprint'").fetchone() is not None
        except psycopg.Error as exc:
            raise WorkspaceError(f"{redact(url)}: cannot connect to the shared workspace "
                                 f"({_one_line(exc, url)})") from None

    def close(self) -> None:
        """Close the connection. Safe to call twice."""
        if not self._closed:
            self._closed = True
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - a broken connection closes anyway
                pass

    def __enter__(self) -> "PgWorkspace":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the shared reads and writes run on (``store.history.SharedStore``) --------------

    def _stored(self, text: str | None) -> str | None:
        return _dump(text)

    def _text(self, stored: str | None) -> str | None:
        return _load(stored)

    def _own_history(self) -> tuple[str, tuple]:
        return "curator=? AND ", (self.curator,)

    @_boundary
    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self._read(sql.replace("?", "%s"), params)

    @_boundary
    def _transact(self, work: Callable[[Any], _T], *, seqs_result: Callable[[list[int]], _T] | None = None,
                  undo: bool = False, idempotent: bool = False) -> _T:
        return self._write(lambda cur, action: work(_Tx(cur, action)), done=seqs_result,
                           done_undo=self._undone_by if undo else None, idempotent=idempotent)

    def _execute(self, tx: _Tx, sql: str, params: tuple = ()) -> Any:
        return tx.cur.execute(sql.replace("?", "%s"), params)

    def _undone_by(self, action: str) -> HistoryEntry | None:
        """The step an undo with id ``action`` took back, when it committed before the connection
        broke (None: it did not)."""
        return undone_step(self._read(f"SELECT {HISTORY_COLUMNS} FROM history WHERE undone_by=%s ORDER BY seq DESC",
                                      (action,)))

    def _mark_undone(self, tx: _Tx, seqs: list[int]) -> None:
        tx.cur.execute("UPDATE history SET undone=TRUE, undone_by=%s WHERE seq = ANY(%s)", (tx.action, seqs))

    # -- reading ---------------------------------------------------------------------------

    @_boundary
    def decisions(self) -> dict[int, Decision]:
        """Every current decision, by pair id (undecided pairs are absent); on a pair of the
        overlap not decided yet, this curator's own vote (blind to the other's)."""
        out = super().decisions()
        for pid, s, r, at in self._read(
                "SELECT v.pair_id, v.status, v.reason, v.at FROM votes v JOIN work w USING (pair_id) "
                "WHERE w.copies > 1 AND v.curator=%s", (self.curator,)):
            out.setdefault(pid, Decision(s, _load(r), at))
        return out

    # -- writing ---------------------------------------------------------------------------

    @_boundary
    def decide(self, pair_id: int, status: str | None, reason: str | None = None, *, at: float | None = None,
               via: str | None = None) -> int:
        """Record a decision (None: undecided again); returns the history seq. Committed before
        returning: outside the work split one statement (its own transaction, one round trip, one
        commit); on a pair of the split a pipeline (``_decide_in_split``)."""
        at = self.clock() if at is None else at
        after = None if status is None else {"status": status, "reason": reason}
        params = {"pid": pair_id, "status": status, "reason": _dump(reason), "at": at, "me": self.curator,
                  "after": _dump(after), "via": via}
        seq = self._write(lambda cur, action: cur.execute(
            _DECIDE_SQL[status is None], {**params, "action": action}).fetchone()[0], done=lambda seqs: seqs[0],
            one_statement=True)
        if seq is not None:
            return int(seq)
        seq = self._write(lambda conn, action: self._decide_in_split(conn, action, pair_id, after, at, via),
                          done=lambda seqs: seqs[0], one_statement=True)
        if seq is not None:
            return int(seq)
        return super().decide(pair_id, status, reason, at=at, via=via)  # not reached while work rows stay

    # -- the team: work split, claims, conflicts ---------------------------------------------

    @_boundary
    def plan_work(self, pair_ids: Iterable[int], overlap: float, *, seed: str = "") -> dict[str, int]:
        """List the pairs to review, once: ``round(overlap * n)`` of them (chosen by the sha256
        of ``seed`` and the id, so the choice is reproducible) need two curators. Calling it
        again adds only new ids (e.g. added pairs). Returns ``{"pairs", "overlap"}``, the counts.

        Raises:
            WorkspaceError: ``overlap`` is not within [0, 1].
        """
        if not 0.0 <= overlap <= 1.0:
            raise WorkspaceError(f"{self.label}: the overlap share must be between 0 and 1, not {overlap}")
        ids = sorted(set(pair_ids))
        ranked = sorted(ids, key=lambda p: hashlib.sha256(f"{seed}:{p}".encode()).digest())
        double = set(ranked[:round(overlap * len(ids))])

        def work(cur: Any, action: str) -> None:
            cur.executemany("INSERT INTO work VALUES (%s, %s) ON CONFLICT DO NOTHING",
                            [(p, 2 if p in double else 1) for p in ids])
            cur.execute("INSERT INTO meta VALUES ('team_overlap', %s) ON CONFLICT (key) DO NOTHING",
                        (json.dumps(str(overlap)),))

        self._write(work, idempotent=True)
        (n, o), = self._read("SELECT count(*), count(*) FILTER (WHERE copies > 1) FROM work")
        return {"pairs": int(n), "overlap": int(o)}

    @_boundary
    def claim_next(self, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> int | None:
        """The next pair for this curator: their own live undecided claim first, else a pair
        with fewer live claims than it needs copies that they have not claimed, lowest id
        first; the claim holds for ``lease_seconds``. None when nothing is left for them."""
        self._writable()
        now = self.clock()
        own = self._read("SELECT pair_id FROM claims WHERE curator=%s AND NOT done AND expires_at>%s "
                         "ORDER BY pair_id LIMIT 1", (self.curator, now))
        if own:
            return int(own[0][0])

        def work(cur: Any, action: str) -> int | None:
            while True:
                row = cur.execute(
                    "SELECT w.pair_id, w.copies FROM work w WHERE "
                    "NOT EXISTS (SELECT 1 FROM claims c WHERE c.pair_id=w.pair_id AND c.curator=%(me)s AND c.done) "
                    "AND (SELECT count(*) FROM claims c WHERE c.pair_id=w.pair_id AND c.curator<>%(me)s "
                    "     AND (c.done OR c.expires_at>%(now)s)) < w.copies "
                    "ORDER BY w.pair_id LIMIT 1 FOR UPDATE OF w SKIP LOCKED", {"me": self.curator, "now": now}
                ).fetchone()
                if row is None:
                    return None
                pair_id, copies = int(row[0]), int(row[1])
                # Re-counted under the row lock (a claim committed since the query began counts).
                live = cur.execute("SELECT count(*) FROM claims WHERE pair_id=%s AND curator<>%s "
                                   "AND (done OR expires_at>%s)", (pair_id, self.curator, now)).fetchone()[0]
                if live >= copies:
                    continue  # the next statement sees it held; the loop moves on
                cur.execute("DELETE FROM claims WHERE pair_id=%s AND NOT done AND expires_at<=%s", (pair_id, now))
                cur.execute("INSERT INTO claims VALUES (%s, %s, %s, %s, FALSE) ON CONFLICT (pair_id, curator) "
                            "DO UPDATE SET claimed_at=EXCLUDED.claimed_at, expires_at=EXCLUDED.expires_at",
                            (pair_id, self.curator, now, now + lease_seconds))
                return pair_id

        return self._write(work, idempotent=True)

    @_boundary
    def overlap_pairs(self) -> set[int]:
        """The pair ids of the split that two curators decide."""
        return {r[0] for r in self._read("SELECT pair_id FROM work WHERE copies > 1")}

    def _resolution_before(self, tx: _Tx, pair_id: int) -> dict[str, Any] | None:
        row = tx.cur.execute("SELECT status, reason FROM resolutions WHERE pair_id=%s FOR UPDATE",
                             (pair_id,)).fetchone()
        return None if row is None else {"status": row[0], "reason": _load(row[1])}

    def _undo_resolution(self, tx: _Tx, entry: HistoryEntry, at: float) -> None:
        self._apply_resolution(tx, entry.pair_id, entry.before, at)

    def _apply_resolution(self, tx: _Tx, pair_id: int, value: dict[str, Any] | None, at: float) -> None:
        cur = tx.cur
        if value is None:
            cur.execute("DELETE FROM resolutions WHERE pair_id=%s", (pair_id,))
        else:
            cur.execute("INSERT INTO resolutions VALUES (%s, %s, %s, %s, %s) ON CONFLICT (pair_id) DO UPDATE SET "
                        "status=EXCLUDED.status, reason=EXCLUDED.reason, at=EXCLUDED.at, curator=EXCLUDED.curator",
                        (pair_id, value["status"], _dump(value.get("reason")), at, self.curator))
        copies = self._copies(cur, pair_id)
        self._settle(cur, pair_id, copies or 1, at)

    @_boundary
    def team_activity(self) -> dict[str, list[float]]:
        """Each curator's live decision times (Unix seconds, oldest first), lead resolutions
        excluded: the counts and pace of the team screen."""
        out: dict[str, list[float]] = {}
        for name, at in self._read("SELECT curator, at FROM history WHERE kind='decide' AND NOT undone "
                                   "AND via IS DISTINCT FROM 'resolve' ORDER BY seq"):
            out.setdefault(name, []).append(at)
        return out

    # -- internals -------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise WorkspaceError(f"{self.label}: the workspace is open read-only")

    def _error(self, exc: Exception) -> WorkspaceError:
        import psycopg

        detail = _one_line(exc, self._url)
        if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction | psycopg.errors.InsufficientPrivilege):
            return WorkspaceReadOnly(f"{self.label}: the shared workspace cannot be written ({detail}): this "
                                     f"change was not saved, every earlier one is")
        if isinstance(exc, psycopg.OperationalError):
            return WorkspaceError(f"{self.label}: the database server cannot be reached ({detail}): this change "
                                  f"was not saved, every earlier one is")
        return WorkspaceError(f"{self.label}: the shared workspace cannot be used ({detail})")

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run a query, reconnecting once when the connection broke (reads are safe to repeat)."""
        import psycopg

        conn = self._conn
        try:
            return conn.execute(sql, params).fetchall()
        except psycopg.OperationalError:
            if not conn.broken and not conn.closed:
                raise
            self._reconnect(conn)
            return self._conn.execute(sql, params).fetchall()

    def _write(self, work: Callable[[Any, str], Any], *, done: Callable[[list[int]], Any] | None = None,
               done_undo: Callable[[str], Any] | None = None, idempotent: bool = False,
               one_statement: bool = False) -> Any:
        """Run ``work(cursor, action_id)`` in one transaction; on a broken connection reconnect
        and, unless the action's history entries show it committed, run it again.
        ``one_statement``: ``work(connection, action_id)`` makes its own transaction: a single
        statement (no BEGIN/COMMIT round trips) or a pipeline."""
        import psycopg

        self._writable()
        action = uuid.uuid4().hex
        while True:
            conn = self._conn
            try:
                if one_statement:
                    return work(conn, action)
                with conn.transaction():
                    with conn.cursor() as cur:
                        return work(cur, action)
            except psycopg.OperationalError:
                if not conn.broken and not conn.closed:
                    raise
            self._reconnect(conn)
            if idempotent:
                continue
            if done_undo is not None:
                result = done_undo(action)
                if result is not None:
                    return result
                continue
            seqs = [r[0] for r in self._read("SELECT seq FROM history WHERE action=%s ORDER BY seq", (action,))]
            if seqs and done is not None:
                return done(seqs)

    def _reconnect(self, broken: Any) -> None:
        """Replace the ``broken`` connection, trying for ``RECONNECT_SECONDS``. One thread at a
        time (the app's reads and the session's writer thread share the connection): a thread
        that finds ``broken`` already replaced uses the new connection instead of replacing it
        again, which would close it under the other thread's statement.

        Raises:
            psycopg.OperationalError: the server did not come back in time.
        """
        with self._reconnect_lock:
            if self._conn is not broken:
                return
            self._replace_connection()

    def _replace_connection(self) -> None:
        import psycopg

        try:
            self._conn.close()
        except Exception:  # noqa: BLE001
            pass
        if self.on_reconnecting is not None:
            self.on_reconnecting(f"the connection to {self.label} was lost: reconnecting (for up to "
                                 f"{RECONNECT_SECONDS:.0f} s)…")
        deadline = time.monotonic() + RECONNECT_SECONDS
        delay = 0.1
        while True:
            try:
                self._conn = _connect(self._url, self.synchronous_commit)
                break
            except psycopg.OperationalError:
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        self.reconnects += 1
        if self.on_reconnect is not None:
            self.on_reconnect(f"reconnected to {self.label} (connection lost; nothing was lost)")

    def _log(self, tx: _Tx, at: float, pair_id: int, kind: str, before: Any, after: Any,
             via: str | None, group: int | None = None) -> int:
        cur = tx.cur
        cur.execute("INSERT INTO history (at, pair_id, kind, before, after, via, grp, curator, action) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING seq",
                    (at, pair_id, kind, _dump(before), _dump(after), via, group, self.curator, tx.action))
        return int(cur.fetchone()[0])

    def _insert_added(self, tx: _Tx, pair_id: int, value: dict[str, Any], at: float) -> bool:
        tx.cur.execute("INSERT INTO added_pairs VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                       (pair_id, _dump(value), at, self.curator))
        return tx.cur.rowcount > 0

    def _insert_marks(self, tx: _Tx, kind: str, pairs: list[tuple[int, int]], at: float) -> list[tuple[int, int]]:
        new = []
        for a, b in pairs:
            tx.cur.execute(f"INSERT INTO {kind} VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                           (a, b, at, self.curator))
            if tx.cur.rowcount:
                new.append((a, b))
        return new

    def _decide_in_split(self, conn: Any, action: str, pair_id: int, after: dict[str, Any] | None, at: float,
                         via: str | None) -> int | None:
        """``decide`` on a pair of the work split (the rules of ``_vote``) in a pipeline: BEGIN and
        the reads in one round trip, the writes, the history entry and COMMIT in another; one
        commit. The seq, or None when the pair is not in the split."""
        from psycopg.pq import TransactionStatus

        me = self.curator
        try:
            with conn.pipeline():
                now = self.clock()
                conn.execute("BEGIN")  # not conn.transaction(): in a pipeline that waits for BEGIN's answer
                q_copies = conn.execute("SELECT copies FROM work WHERE pair_id=%s FOR UPDATE", (pair_id,))
                q_votes = conn.execute("SELECT status, reason, curator, at FROM votes WHERE pair_id=%s", (pair_id,))
                q_others = conn.execute("SELECT curator FROM claims WHERE pair_id=%s AND curator<>%s "
                                        "AND (done OR expires_at>%s)", (pair_id, me, now))
                q_mine = conn.execute("SELECT 1 FROM claims WHERE pair_id=%s AND curator=%s", (pair_id, me))
                q_res = conn.execute("SELECT status, reason, curator FROM resolutions WHERE pair_id=%s", (pair_id,))
                row = q_copies.fetchone()  # sends BEGIN and the reads at once; the work row's lock first
                if row is None:
                    return None
                copies = int(row[0])
                votes = q_votes.fetchall()
                mine_vote = next(((v[0], v[1]) for v in votes if v[2] == me), None)
                before = None if mine_vote is None else {"status": mine_vote[0], "reason": _load(mine_vote[1])}
                others = [r[0] for r in q_others.fetchall()]
                mine, res = q_mine.fetchone(), q_res.fetchone()
                if after is not None and mine is None and len(others) >= copies:
                    raise WorkspaceError(f"{self.label}: pair {pair_id} is in the hands of "
                                         f"{', '.join(sorted(others))}; take the next pair handed to you")
                votes = [v for v in votes if v[2] != me]
                if after is None:
                    conn.execute("DELETE FROM votes WHERE pair_id=%s AND curator=%s", (pair_id, me))
                    conn.execute("UPDATE claims SET done=FALSE, expires_at=%s WHERE pair_id=%s AND curator=%s",
                                 (now + DEFAULT_LEASE_SECONDS, pair_id, me))
                else:
                    reason = _dump(after.get("reason"))
                    conn.execute("INSERT INTO votes VALUES (%s, %s, %s, %s, %s) ON CONFLICT (pair_id, curator) "
                                 "DO UPDATE SET status=EXCLUDED.status, reason=EXCLUDED.reason, at=EXCLUDED.at",
                                 (pair_id, me, after["status"], reason, at))
                    conn.execute("INSERT INTO claims VALUES (%s, %s, %s, %s, TRUE) ON CONFLICT (pair_id, curator) "
                                 "DO UPDATE SET done=TRUE", (pair_id, me, at, at))
                    votes.append((after["status"], reason, me, at))
                votes.sort(key=lambda v: (v[3], v[2]))  # as _settle's ORDER BY at, curator
                chosen = res if res is not None else (
                    votes[0][:3] if len(votes) >= copies and votes_agree([(v[0], _load(v[1])) for v in votes])
                    else None)
                _set_decision(conn, pair_id, None if chosen is None else (chosen[0], chosen[1], at, chosen[2]))
                q_seq = conn.execute(
                    "INSERT INTO history (at, pair_id, kind, before, after, via, grp, curator, action) "
                    "VALUES (%s, %s, 'decide', %s, %s, %s, NULL, %s, %s) RETURNING seq",
                    (at, pair_id, _dump(before), _dump(after), via, me, action))
                conn.execute("COMMIT")  # sent with the writes when the pipeline ends
        finally:
            if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
                conn.execute("ROLLBACK")  # refused or failed: nothing of it stays
        return int(q_seq.fetchone()[0])  # read once the pipeline sent the COMMIT and got its answer

    def _decision_before(self, tx: _Tx, pair_id: int) -> dict[str, Any] | None:
        cur = tx.cur
        copies = self._copies(cur, pair_id)
        if copies is not None:  # a pair of the split: this curator's own vote
            row = cur.execute("SELECT status, reason FROM votes WHERE pair_id=%s AND curator=%s",
                              (pair_id, self.curator)).fetchone()
            return None if row is None else {"status": row[0], "reason": _load(row[1])}
        row = cur.execute("SELECT status, reason FROM decisions WHERE pair_id=%s FOR UPDATE", (pair_id,)).fetchone()
        return None if row is None else {"status": row[0], "reason": _load(row[1])}

    def _copies(self, cur: Any, pair_id: int) -> int | None:
        """How many curators pair ``pair_id`` needs (locking its work row), or None outside a split."""
        row = cur.execute("SELECT copies FROM work WHERE pair_id=%s FOR UPDATE", (pair_id,)).fetchone()
        return None if row is None else int(row[0])

    def _vote(self, cur: Any, pair_id: int, copies: int, value: dict[str, Any] | None, at: float) -> None:
        """Record this curator's vote on a pair of the split (None: take it back), keep the claims
        in step, and settle the pair's shared decision."""
        others = cur.execute("SELECT curator FROM claims WHERE pair_id=%s AND curator<>%s AND (done OR expires_at>%s)",
                             (pair_id, self.curator, self.clock())).fetchall()
        mine = cur.execute("SELECT 1 FROM claims WHERE pair_id=%s AND curator=%s",
                           (pair_id, self.curator)).fetchone()
        if value is not None and mine is None and len(others) >= copies:
            names = ", ".join(sorted(o[0] for o in others))
            raise WorkspaceError(f"{self.label}: pair {pair_id} is in the hands of {names}; "
                                 f"take the next pair handed to you")
        if value is None:
            cur.execute("DELETE FROM votes WHERE pair_id=%s AND curator=%s", (pair_id, self.curator))
            cur.execute("UPDATE claims SET done=FALSE, expires_at=%s WHERE pair_id=%s AND curator=%s",
                        (self.clock() + DEFAULT_LEASE_SECONDS, pair_id, self.curator))
        else:
            cur.execute("INSERT INTO votes VALUES (%s, %s, %s, %s, %s) ON CONFLICT (pair_id, curator) DO UPDATE "
                        "SET status=EXCLUDED.status, reason=EXCLUDED.reason, at=EXCLUDED.at",
                        (pair_id, self.curator, value["status"], _dump(value.get("reason")), at))
            cur.execute("INSERT INTO claims VALUES (%s, %s, %s, %s, TRUE) ON CONFLICT (pair_id, curator) "
                        "DO UPDATE SET done=TRUE", (pair_id, self.curator, at, at))
        self._settle(cur, pair_id, copies, at)

    def _settle(self, cur: Any, pair_id: int, copies: int, at: float) -> None:
        """The shared decision of a pair of the split: a lead's resolution, else the votes when
        there are as many as it needs and they agree (``votes_agree``), else none."""
        res = cur.execute("SELECT status, reason, curator FROM resolutions WHERE pair_id=%s", (pair_id,)).fetchone()
        votes = cur.execute("SELECT status, reason, curator FROM votes WHERE pair_id=%s ORDER BY at, curator",
                            (pair_id,)).fetchall()
        chosen = res if res is not None else (
            votes[0] if len(votes) >= copies and votes_agree([(v[0], _load(v[1])) for v in votes]) else None)
        _set_decision(cur, pair_id, None if chosen is None else (chosen[0], chosen[1], at, chosen[2]))

    def _apply_decision(self, tx: _Tx, pair_id: int, value: dict[str, Any] | None, at: float) -> None:
        cur = tx.cur
        copies = self._copies(cur, pair_id)
        if copies is not None:
            self._vote(cur, pair_id, copies, value, at)
            return
        _set_decision(cur, pair_id, None if value is None
                      else (value["status"], _dump(value.get("reason")), at, self.curator))

    def _apply_edits(self, tx: _Tx, pair_id: int, changes: dict[str, Any], at: float) -> None:
        cur = tx.cur
        for f, v in changes.items():
            if v is None:
                cur.execute("DELETE FROM edits WHERE pair_id=%s AND field=%s", (pair_id, f))
            else:
                cur.execute("INSERT INTO edits VALUES (%s, %s, %s, %s, %s) ON CONFLICT (pair_id, field) DO UPDATE "
                            "SET value=EXCLUDED.value, edited_at=EXCLUDED.edited_at, curator=EXCLUDED.curator",
                            (pair_id, f, json.dumps(v), at, self.curator))

    def _apply_note(self, tx: _Tx, pair_id: int, text: str | None, at: float) -> None:
        cur = tx.cur
        if text:
            cur.execute("INSERT INTO notes VALUES (%s, %s, %s, %s) ON CONFLICT (pair_id) DO UPDATE SET "
                        "text=EXCLUDED.text, noted_at=EXCLUDED.noted_at, curator=EXCLUDED.curator",
                        (pair_id, json.dumps(text), at, self.curator))
        else:
            cur.execute("DELETE FROM notes WHERE pair_id=%s", (pair_id,))


def configured_synchronous_commit() -> str:
    """The ``[team] synchronous_commit`` of the config file (``"on"`` or ``"off"``), else
    ``"on"`` (see ``PgWorkspace.open``).

    Raises:
        CurateError: the value is neither "on" nor "off".
    """
    from mtcb_curate.config import default_config_path, read_table
    from mtcb_curate.errors import CurateError

    value = read_table("team").get("synchronous_commit", "on")
    if value not in ("on", "off"):
        raise CurateError(f'{default_config_path()}: [team] synchronous_commit must be "on" or "off", not {value!r}')
    return value


def _connect(url: str, synchronous_commit: str = "on") -> Any:
    import psycopg

    conn = psycopg.connect(url, autocommit=True, connect_timeout=5, application_name="mtcb-curate")
    if synchronous_commit == "off":  # this session only; the server's setting is left alone
        conn.execute("SET synchronous_commit = off")
    return conn


def _one_line(exc: Exception, url: str) -> str:
    """The driver's message on one line, with any password of ``url`` removed."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        text = text.replace(password, "***")
    return text


def _set_decision(cur: Any, pair_id: int, row: tuple[str, str | None, float, str] | None) -> None:
    """Write pair ``pair_id``'s shared decision: ``(status, reason JSON, decided_at in epoch
    seconds, curator)``, or none (the row deleted), on a connection or cursor in a transaction."""
    if row is None:
        cur.execute("DELETE FROM decisions WHERE pair_id=%s", (pair_id,))
        return
    cur.execute("INSERT INTO decisions VALUES (%s, %s, %s, %s, %s) ON CONFLICT (pair_id) DO UPDATE SET "
                "status=EXCLUDED.status, reason=EXCLUDED.reason, decided_at=EXCLUDED.decided_at, "
                "curator=EXCLUDED.curator", (pair_id, *row))
