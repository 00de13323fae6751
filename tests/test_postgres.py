"""The shared PostgreSQL workspace beyond the store contract (which test_workspace.py and
test_session.py run on both backends): selecting it, curators, secrets, and the SQLite
curator migration. Against a real server (conftest.pg_server)."""

from __future__ import annotations

import sqlite3

import pytest

from mtcb_curate.errors import WorkspaceError
from mtcb_curate.store.opening import open_workspace
from mtcb_curate.store.postgres import PgWorkspace, is_database_url, redact


def test_the_postgres_workspace_is_a_store_with_the_same_signatures():
    import inspect

    from mtcb_curate.store.base import STORE_MEMBERS, Store
    from mtcb_curate.store.sqlite import Workspace

    for name in STORE_MEMBERS:
        if callable(getattr(Store, name, None)):
            assert (list(inspect.signature(getattr(PgWorkspace, name)).parameters)
                    == list(inspect.signature(getattr(Workspace, name)).parameters)), name


def test_urls_are_told_from_folders_and_redacted():
    assert is_database_url("postgresql://a@h/db") and is_database_url("POSTGRES://h/db")
    assert not is_database_url("postgresql-folder") and not is_database_url(None)
    assert redact("postgresql://ann:s3cret@db.example:5433/team?sslmode=require&password=x") == \
        "postgresql://ann@db.example:5433/team?sslmode=require"


def test_a_password_is_never_in_a_message(pg_server, tmp_path):
    from conftest import fake_secret

    secret = fake_secret("pgpass")
    # a port where nothing listens
    url = f"postgresql://ann:{secret}@127.0.0.1:1/team?connect_timeout=2"
    with pytest.raises(WorkspaceError) as info:
        PgWorkspace.open(url)
    assert secret not in str(info.value) and "postgresql://ann@127.0.0.1:1/team" in str(info.value)


def test_a_password_is_not_printed_by_the_command_line(cli, tiny):
    from conftest import fake_secret

    secret = fake_secret("pgpass")
    code, out, err = cli("verify", "ficha", "--workspace",
                          f"postgresql://ann:{secret}@127.0.0.1:1/team?connect_timeout=2", "--source", str(tiny))
    assert code == 2 and secret not in out + err and "127.0.0.1:1/team" in err
    assert "cannot connect to the shared workspace" in err


def test_the_command_line_reviews_into_a_database_given_by_flag_or_environment(pg_server, cli, tiny, monkeypatch):
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.dataset.model import Status

    url = pg_server.url()
    s = open_session(Options("ficha", source=[str(tiny)], workspace=url, curator="ann"))
    try:
        s.decide(0, Status.REJECTED, "trivial")
        assert s.workspace.curator == "ann" and isinstance(s.workspace, PgWorkspace)
    finally:
        s.workspace.close()
    monkeypatch.setenv("MTCB_CURATE_DATABASE_URL", url)
    # no --workspace and no --source: the database's own source is resumed
    s = open_session(Options("ficha"))
    try:
        assert s.status(0) is Status.REJECTED and "resumed" in s.dataset.source.reason
        assert "postgresql://" in s.dataset.source.reason
    finally:
        s.workspace.close()
    code, out, err = cli("stats", "ficha")
    assert code == 0, err


def test_every_change_records_its_curator_and_undo_takes_back_ones_own(store_target):
    ann = open_workspace(store_target, curator="ann")
    try:
        ann.decide(0, "accepted")
        ann.edit(1, {"question": "Q?"})
        ann.set_note(2, "look again")
        seqs = ann.decide_many({3: ("rejected", "trivial"), 4: ("rejected", "trivial")}, group=True)
    finally:
        ann.close()
    bob = open_workspace(store_target, curator="bob")
    try:
        if is_database_url(store_target):
            bob.decide(5, "flagged")
            assert bob.undo().pair_id == 5  # bob's own latest, not ann's
            assert set(bob.decisions()) == {0, 3, 4}
        who = bob.history_curators()
        assert [who[e.seq] for e in bob.history()] == ["ann"] * 5
        assert seqs[1] in who
    finally:
        bob.close()


def test_undo_of_a_curator_leaves_anothers_changes(pg_server):
    url = pg_server.url()
    with open_workspace(url, curator="ann") as ann, open_workspace(url, curator="bob") as bob:
        ann.decide(0, "accepted")
        bob.decide(1, "rejected", "trivial")
        ann.edit(2, {"answer": "A"})
        assert bob.undo().pair_id == 1
        assert bob.undo() is None
        assert set(ann.decisions()) == {0} and ann.edits() == {2: {"answer": "A"}}
        assert ann.decision_times() and not bob.decision_times()


def test_an_old_sqlite_workspace_opens_and_records_curators_from_then_on(tmp_path):
    from mtcb_curate.store.sqlite import _SCHEMA, Workspace

    c = sqlite3.connect(tmp_path / "workspace.sqlite")
    c.executescript(_SCHEMA)
    c.execute("ALTER TABLE history ADD COLUMN via TEXT")
    c.execute("ALTER TABLE history ADD COLUMN grp INTEGER")
    c.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    c.execute("INSERT INTO history (at, pair_id, kind, before, after) "
              "VALUES (1, 0, 'decide', NULL, '{\"status\": \"accepted\", \"reason\": null}')")
    c.commit()
    c.close()
    with Workspace.open(tmp_path, read_only=True) as ws:  # read-only: nothing migrated, still readable
        assert len(ws.history()) == 1 and ws.history_curators() == {}
    with Workspace.open(tmp_path, curator="cleo") as ws:
        ws.decide(1, "flagged")
        assert ws.history_curators() == {2: "cleo"}


def test_the_curator_defaults_to_the_config_then_the_login_name(tmp_path, monkeypatch):
    import getpass

    from mtcb_curate.errors import CurateError
    from mtcb_curate.store.curators import check_curator, default_curator

    monkeypatch.setattr(getpass, "getuser", lambda: "loginname")
    assert default_curator() == "loginname"
    cfg = tmp_path / "config.toml"
    cfg.write_text('[team]\ncurator = "Ann [bold]B[/]"\n', encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(cfg))
    assert default_curator() == "Ann [bold]B[/]"
    with Workspace_open(tmp_path / "ws") as ws:
        assert ws.curator == "Ann [bold]B[/]"
    for bad in ("", "   ", "a\nb", "x" * 65):
        with pytest.raises(CurateError):
            check_curator(bad)


def Workspace_open(path):
    from mtcb_curate.store.sqlite import Workspace

    return Workspace.open(path)


def test_curator_flag_is_checked_and_used(cli, tiny, tmp_path):
    code, out, err = cli("verify", "ficha", "--curator", "a\x07b", "--source", str(tiny))
    assert code == 2 and "curator" in err


def test_a_decision_commits_on_its_own_thread_while_the_caller_prepares_the_next_view(pg_server, tmp_path,
                                                                                      monkeypatch):
    """``meanwhile`` runs while the commit waits on the server (here: on a row lock another
    connection holds), and the session shows the decision only once it is committed."""
    import threading
    import time

    import psycopg
    from support import opened, write_source

    from mtcb_curate.dataset.model import Status
    from mtcb_curate.store import session as session_module

    monkeypatch.setattr(session_module, "OVERLAP_MIN_COMMIT_S", 0.0)  # every commit is worth filling

    url = pg_server.url()
    s = opened(write_source(tmp_path / "src"), url, curator="ann")
    try:
        s.decide(0, Status.ACCEPTED)
        backend = s.workspace._conn.info.backend_pid
        with psycopg.connect(url) as holder:
            holder.execute("SELECT 1 FROM decisions WHERE pair_id=0 FOR UPDATE")  # in a transaction
            release = threading.Timer(20.0, holder.rollback)  # a sequential commit would wait here, not hang
            release.start()
            seen = []

            def meanwhile(committed) -> None:
                seen.append(threading.current_thread() is threading.main_thread())
                with psycopg.connect(url, autocommit=True) as admin:
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:
                        row = admin.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid=%s",
                                            (backend,)).fetchone()
                        if row and row[0] == "Lock":
                            break
                        time.sleep(0.01)
                    seen.append(row[0] if row else None)
                seen.append(s.status(0))  # not yet: the commit has not returned
                seen.append(committed())
                holder.rollback()  # the commit goes on
                deadline = time.monotonic() + 10
                while not committed() and time.monotonic() < deadline:
                    time.sleep(0.005)
                seen.append(committed())

            s.decide(0, Status.REJECTED, "trivial", meanwhile=meanwhile)
            release.cancel()
        assert seen == [True, "Lock", Status.ACCEPTED, False, True]
        assert s.status(0) is Status.REJECTED
        again = opened(None, url, curator="bob")
        try:
            assert again.status(0) is Status.REJECTED and again.view(0).reason == "trivial"
        finally:
            again.workspace.close()
    finally:
        s.workspace.close()


def _held_decide(url, session, pair_id, status, hold_s, reason=None, meanwhile=None) -> None:
    """``session.decide`` while another connection holds the pair's decision row for ``hold_s``
    seconds (the row exists: the pair was decided before)."""
    import threading

    import psycopg

    with psycopg.connect(url) as holder:
        holder.execute("SELECT 1 FROM decisions WHERE pair_id=%s FOR UPDATE", (pair_id,))
        threading.Timer(hold_s, holder.rollback).start()
        session.decide(pair_id, status, reason, meanwhile=meanwhile)


def test_overlapped_commits_are_not_timed_and_a_timed_one_every_few_ends_the_overlap(pg_server, tmp_path,
                                                                                     monkeypatch):
    """An overlapped commit is not timed (it waits for the interpreter lock while the caller
    works, and would keep the overlap on against a quick server): here the first overlapped
    one is held 0.5 s by a row lock and changes nothing. Every ``OVERLAP_PROBE_EVERY``
    overlapped decisions, one runs on the caller's thread, timed; the quick ones bring the
    median down until decisions are no longer overlapped."""
    from support import opened, write_source

    from mtcb_curate.dataset.model import Status
    from mtcb_curate.store import session as session_module

    monkeypatch.setattr(session_module, "OVERLAP_MIN_COMMIT_S", 0.05)
    monkeypatch.setattr(session_module, "OVERLAP_PROBE_EVERY", 2)
    monkeypatch.setattr(session_module, "COMMIT_WINDOW", 3)
    url = pg_server.url()
    s = opened(write_source(tmp_path / "src"), url, curator="ann")
    try:
        s.decide(0, Status.ACCEPTED)  # quick: the window is [quick]
        for status in (Status.REJECTED, Status.ACCEPTED):  # two slow ones: [quick, slow, slow]
            _held_decide(url, s, 0, status, 0.15, reason="trivial")
        overlapped = []
        _held_decide(url, s, 0, Status.REJECTED, 0.5, reason="trivial",
                     meanwhile=lambda committed: overlapped.append(0))
        for i in range(1, 10):
            s.decide(i % 2, Status.ACCEPTED, meanwhile=lambda committed, i=i: overlapped.append(i))
        # Overlapped, overlapped, then timed: [slow, slow, quick] keeps the overlap on; after the
        # next two overlapped ones, timed again: [slow, quick, quick] ends it.
        assert overlapped == [0, 1, 3, 4]
        assert s.status(0) is Status.ACCEPTED and s.status(1) is Status.ACCEPTED
    finally:
        s.workspace.close()


def test_a_refused_decision_changes_nothing_though_meanwhile_ran(pg_server, tmp_path, monkeypatch):
    """A pair another curator holds in the work split is refused on the writer thread: the
    error reaches the caller and the session is unchanged; on SQLite ``meanwhile`` is not called."""
    from support import opened, write_source

    from mtcb_curate.app import team
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.store import session as session_module

    monkeypatch.setattr(session_module, "OVERLAP_MIN_COMMIT_S", 0.0)

    src = write_source(tmp_path / "src")
    url = pg_server.url()
    ann = opened(src, url, curator="ann")
    bob = opened(src, url, curator="bob")
    try:
        team.plan(ann, 0.0)
        held = bob.workspace.claim_next()
        calls = []
        with pytest.raises(WorkspaceError, match="bob"):
            ann.decide(held, Status.ACCEPTED, meanwhile=lambda committed: calls.append(held))
        assert calls == [held] and ann.status(held) is Status.UNDECIDED and ann.decided == 0
    finally:
        ann.workspace.close()
        bob.workspace.close()
    local = opened(src, tmp_path / "ws")
    try:
        local.decide(1, Status.ACCEPTED, meanwhile=lambda committed: calls.append("sqlite"))
        assert calls == [held] and local.status(1) is Status.ACCEPTED
    finally:
        local.workspace.close()


def test_only_commits_that_lately_took_long_are_filled_with_the_callers_work(pg_server, tmp_path, monkeypatch):
    """Quick commits run on the caller's thread and ``meanwhile`` is not called (a hand-off to
    the writer thread would cost more than the wait); one slow commit (held by a row lock)
    does not change that; once most of the recent ones took long (the median of the last
    ``COMMIT_WINDOW``), the next decision is overlapped."""
    from support import opened, write_source

    from mtcb_curate.dataset.model import Status
    from mtcb_curate.store import session as session_module

    monkeypatch.setattr(session_module, "OVERLAP_MIN_COMMIT_S", 0.05)
    monkeypatch.setattr(session_module, "COMMIT_WINDOW", 5)
    url = pg_server.url()
    s = opened(write_source(tmp_path / "src"), url, curator="ann")
    try:
        calls = []
        for _ in range(2):
            s.decide(0, Status.ACCEPTED, meanwhile=lambda committed: calls.append("quick"))
        _held_decide(url, s, 0, Status.REJECTED, 0.15, reason="trivial",
                     meanwhile=lambda committed: calls.append("held"))
        s.decide(1, Status.ACCEPTED, meanwhile=lambda committed: calls.append("one slow"))
        assert calls == [] and s.status(0) is Status.REJECTED  # [quick, quick, slow, quick]
        for status in (Status.ACCEPTED, Status.REJECTED):  # [quick, quick, slow, quick, slow], then
            _held_decide(url, s, 0, status, 0.15, reason="trivial",  # [quick, slow, quick, slow, slow]
                         meanwhile=lambda committed: calls.append("held"))
        assert calls == []
        s.decide(1, Status.REJECTED, "trivial", meanwhile=lambda committed: calls.append("after"))
        assert calls == ["after"] and s.status(1) is Status.REJECTED
    finally:
        s.workspace.close()
