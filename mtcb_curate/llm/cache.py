"""Every LLM request and response, kept in the workspace so a re-run never pays twice.

A small SQLite file of its own, ``<workspace>/llm.sqlite`` (:data:`CACHE_NAME`), in WAL mode,
apart from ``workspace.sqlite`` so that LLM traffic never contends with decisions. One row per
distinct request, keyed by :func:`request_key`: the sha256 of the model, the messages, the
parameters and a tag, as canonical JSON. Stored per row: the request JSON (model, messages,
params, tag: never headers, so never the key), the response JSON (the chat completion as the
server returned it), the model, the server (without any ``user:password@``), token usage, when
it was stored, and how often and when it was last reused.

Only replies their caller used are stored (``client.ChatClient.keep``): a refused, unparseable,
empty or truncated reply is never replayed, and errors are never stored. What every reply from
the server cost is recorded apart, in the ``paid`` table (one row per reply: key, model, token
usage, when), used or not, so the statistics count every call paid for (:meth:`usage`).

Thread-safe: one connection shared under a lock, as LLM calls run in worker threads.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_NAME = "llm.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    server TEXT NOT NULL,
    request TEXT NOT NULL,     -- JSON: {"model", "messages", "params", "tag"}
    response TEXT NOT NULL,    -- JSON: the chat completion as returned
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created_at REAL NOT NULL,
    used_at REAL,
    hits INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS paid (
    key TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created_at REAL NOT NULL
);
"""


def request_key(model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any], tag: str = "") -> str:
    """The cache key of a request: sha256 (64 hex characters) of canonical JSON of
    ``{"model", "messages", "params", "tag"}`` (sorted keys, no whitespace, UTF-8).

    ``tag`` is not sent to the server; it tells apart requests that are deliberately repeated
    (a second candidate for the same window).
    """
    blob = json.dumps({"model": model, "messages": list(messages), "params": dict(params), "tag": tag},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedResponse:
    """One stored exchange.

    Attributes:
        key: the request key; model: the model name; server: the base URL it went to.
        request, response: the decoded JSON stored for each.
        prompt_tokens, completion_tokens: token usage as the server reported it (None if not).
        created_at: when it was stored (Unix seconds).
    """

    key: str
    model: str
    server: str
    request: dict[str, Any]
    response: dict[str, Any]
    prompt_tokens: int | None
    completion_tokens: int | None
    created_at: float


class ResponseCache:
    """The SQLite store of LLM exchanges at ``path`` (created with its folder if absent).

    Raises:
        sqlite3.Error: the file cannot be opened or is not a database.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)

    @classmethod
    def in_workspace(cls, folder: Path | str) -> "ResponseCache":
        """The cache of a workspace folder: ``<folder>/llm.sqlite``."""
        return cls(Path(folder) / CACHE_NAME)

    def get(self, key: str) -> CachedResponse | None:
        """The stored exchange for ``key`` (and count the reuse), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT key, model, server, request, response, prompt_tokens, completion_tokens, created_at "
                "FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            self._db.execute("UPDATE responses SET hits = hits + 1, used_at = ? WHERE key = ?", (time.time(), key))
        return CachedResponse(row[0], row[1], row[2], json.loads(row[3]), json.loads(row[4]), row[5], row[6], row[7])

    def __contains__(self, key: object) -> bool:
        """True when ``key`` is stored (does not count as a reuse)."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def put(self, key: str, *, model: str, server: str, request: Mapping[str, Any], response: Mapping[str, Any],
            prompt_tokens: int | None = None, completion_tokens: int | None = None) -> None:
        """Store one exchange, committed before returning (a later ``put`` of the same key
        replaces it). ``server`` must already be free of credentials (``config.safe_url``)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, server, request, response, prompt_tokens, "
                "completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, model, server, json.dumps(request, ensure_ascii=False), json.dumps(response, ensure_ascii=False),
                 prompt_tokens, completion_tokens, time.time()))

    def record_paid(self, key: str, *, model: str, prompt_tokens: int | None, completion_tokens: int | None) -> None:
        """Record one reply that came from the server (used or not): its tokens were paid for."""
        with self._lock:
            self._db.execute("INSERT INTO paid (key, model, prompt_tokens, completion_tokens, created_at) "
                             "VALUES (?, ?, ?, ?, ?)", (key, model, prompt_tokens, completion_tokens, time.time()))

    def calls(self) -> int:
        """Replies paid for: the ``paid`` rows, plus stored exchanges made before that table
        (without a ``paid`` row of their key)."""
        with self._lock:
            a = self._db.execute("SELECT COUNT(*) FROM paid").fetchone()[0]
            b = self._db.execute("SELECT COUNT(*) FROM responses WHERE key NOT IN (SELECT key FROM paid)").fetchone()[0]
        return int(a) + int(b)

    def __len__(self) -> int:
        """Number of stored exchanges."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def usage(self) -> tuple[int, int]:
        """Total (prompt_tokens, completion_tokens) paid for: every ``paid`` row, plus stored
        exchanges made before that table (without a ``paid`` row of their key)."""
        with self._lock:
            a, b = self._db.execute(
                "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM paid").fetchone()
            c, d = self._db.execute(
                "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM responses "
                "WHERE key NOT IN (SELECT key FROM paid)").fetchone()
        return int(a) + int(c), int(b) + int(d)

    def close(self) -> None:
        """Close the connection (further calls raise ``sqlite3.ProgrammingError``)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> "ResponseCache":
        """Use as a context manager: closed on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the connection."""
        self.close()
