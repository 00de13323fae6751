"""Faults of the shared workspace against a real server of its own: the server stopped and
restarted mid-session, and a connection lost after the COMMIT reached the server."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from mtcb_curate.store.postgres import PgWorkspace


@pytest.fixture(scope="module")
def own_server():
    """A server this module may stop and start (the shared one serves other tests)."""
    from conftest import pg_server_or_skip

    server = pg_server_or_skip()
    yield server
    server.cleanup()


def test_a_server_restart_mid_session_loses_and_doubles_nothing(own_server):
    url = own_server.url()
    messages: list[str] = []
    ws = PgWorkspace.open(url, curator="ann")
    ws.on_reconnect = messages.append
    acknowledged = {}
    try:
        for pid in range(20):
            ws.decide(pid, "accepted" if pid % 2 else "rejected", None if pid % 2 else "trivial")
            acknowledged[pid] = "accepted" if pid % 2 else "rejected"
        own_server.stop("fast")  # every connection is dropped
        restarter = threading.Thread(target=lambda: (time.sleep(1.5), own_server.start()))
        restarter.start()
        for pid in range(20, 40):  # the first of these waits for the server to come back
            ws.decide(pid, "flagged")
            acknowledged[pid] = "flagged"
        restarter.join()
        ws.edit(3, {"question": "Still here?"})
        assert ws.reconnects == 1 and messages and "reconnected" in messages[0]
        assert "postgresql://postgres@127.0.0.1" in messages[0]
    finally:
        ws.close()
    with PgWorkspace.open(url, curator="ann") as again:
        assert {p: d.status for p, d in again.decisions().items()} == acknowledged
        assert len(again.history()) == 41  # each decision once, the edit once


def test_a_lost_acknowledgement_is_not_applied_twice(own_server, monkeypatch):
    """The COMMIT reaches the server, then the connection breaks before the answer: the retry
    finds the write's action id in the history and returns its seq instead of deciding again."""
    import psycopg

    url = own_server.url()
    with PgWorkspace.open(url, curator="ann") as ws:
        ws.decide(0, "accepted")
        broken = []
        real_execute = ws._conn.execute

        def execute_then_drop(query, *args, **kwargs):
            cur = real_execute(query, *args, **kwargs)  # a decision is one statement, its own commit
            if not broken and "INSERT INTO history" in str(query):  # committed; the answer is "lost"
                broken.append(True)
                ws._conn.close()
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return cur

        @contextlib.contextmanager
        def commit_then_drop(*args, **kwargs):
            with real(*args, **kwargs) as tx:
                yield tx
            if not broken:  # committed; now the answer is "lost"
                broken.append(True)
                ws._conn.close()
                raise psycopg.OperationalError("server closed the connection unexpectedly")

        monkeypatch.setattr(ws._conn, "execute", execute_then_drop)
        seq = ws.decide(0, "rejected", "trivial")
        assert broken and ws.reconnects == 1
        history = ws.history()
        assert [e.seq for e in history if e.pair_id == 0] == [history[0].seq, seq]
        assert len(history) == 2 and ws.decisions()[0].status == "rejected"
        # the undo (a transaction) retried the same way is not applied twice either
        real = ws._conn.transaction
        broken.clear()
        monkeypatch.setattr(ws._conn, "transaction", commit_then_drop)
        entry = ws.undo()
        assert entry.seq == seq and ws.decisions()[0].status == "accepted"
        assert len(ws.history()) == 1


def test_a_lost_acknowledgement_in_the_work_split_is_not_applied_twice(own_server, monkeypatch):
    """A decision on a pair of the work split (a pipeline: the reads, then the writes with the
    COMMIT) whose answer is lost after the COMMIT: recognised by its action id, not voted twice."""
    import psycopg

    with PgWorkspace.open(own_server.url(), curator="ann") as ws:
        ws.plan_work(range(4), 0.0)
        pid = ws.claim_next()
        real = ws._conn.pipeline
        broken = []

        @contextlib.contextmanager
        def commit_then_drop(*args, **kwargs):
            with real(*args, **kwargs) as p:
                yield p
            if not broken:
                broken.append(True)
                ws._conn.close()
                raise psycopg.OperationalError("server closed the connection unexpectedly")

        monkeypatch.setattr(ws._conn, "pipeline", commit_then_drop)
        seq = ws.decide(pid, "rejected", "trivial")
        assert broken and ws.reconnects == 1
        assert [e.seq for e in ws.history()] == [seq]
        assert ws.votes() == {pid: {"ann": ("rejected", "trivial")}} and ws.decisions()[pid].status == "rejected"
        assert ws.claim_next() != pid


def test_a_server_that_stays_down_is_one_workspace_error(own_server, monkeypatch):
    from mtcb_curate.errors import WorkspaceError
    from mtcb_curate.store import postgres

    monkeypatch.setattr(postgres, "RECONNECT_SECONDS", 1.0)
    url = own_server.url()
    ws = PgWorkspace.open(url, curator="ann")
    try:
        own_server.stop("fast")
        with pytest.raises(WorkspaceError) as info:
            ws.decide(0, "accepted")
        assert "cannot be reached" in str(info.value) and "\n" not in str(info.value)
    finally:
        own_server.start()
        ws.close()
    with PgWorkspace.open(url) as again:
        assert again.decisions() == {}


def test_two_threads_finding_the_connection_broken_reconnect_once(own_server):
    """The app's reads and the session's writer thread share the connection: when both find it
    broken, one replaces it and the other uses the new one (replacing it again closed it under
    the first thread's statement); the screen is told once."""
    url = own_server.url()
    messages: list[str] = []
    with PgWorkspace.open(url, curator="ann") as ws:
        ws.on_reconnect = messages.append
        ws.decide(0, "accepted")
        old = ws._conn
        old.close()  # as a dropped connection leaves it: both threads hold this one
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def both() -> None:
            try:
                start.wait()
                ws._reconnect(old)
                assert ws._conn.execute("SELECT 1").fetchone() == (1,)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=both) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert ws.reconnects == 1 and len(messages) == 1 and ws._conn is not old
        ws.decide(1, "rejected", "trivial")  # reads and writes go on on the new connection
        assert {p: d.status for p, d in ws.decisions().items()} == {0: "accepted", 1: "rejected"}
