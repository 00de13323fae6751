"""The workspace's storage faults: a deleted lock file, a read-only file system, a full disk.

Each fault surfaces as one line naming the workspace (``WorkspaceError``, exit 2 on the
command line), never a traceback; readers still open a workspace they cannot write to.

Tests run as root on the project's machines, where ``chmod`` does not stop writes: the
read-only fixture then mounts a small tmpfs and remounts it read-only (skipped where mounting
is not allowed); as another user it uses ``chmod``. The monkeypatched tests cover the same
code paths everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret  # noqa: E402

from mtcb_curate.cli import main  # noqa: E402
from mtcb_curate.errors import WorkspaceError, WorkspaceFull, WorkspaceLocked, WorkspaceReadOnly  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.app.sources import Options, open_session  # noqa: E402
from mtcb_curate.store.sqlite import DB_NAME, LOCK_NAME, Workspace  # noqa: E402


def run_cli(*args: object, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtcb_curate", *map(str, args)], env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("mtcb-curate: error: ")]
    assert len(lines) == 1, stderr
    return lines[0]


def curated_workspace(tiny: Path, ws_dir: Path) -> Path:
    """A closed workspace over ``tiny`` with pair 0 accepted and pair 1 rejected."""
    s = open_session(Options("ficha", source=[str(tiny)], workspace=ws_dir))
    s.decide(0, Status.ACCEPTED)
    s.decide(1, Status.REJECTED, "trivial")
    s.workspace.close()
    return ws_dir


# ---------------------------------------------------------------------------------------------
# 3. deleting the lock file does not let a second writer in

_SECOND_WRITER = textwrap.dedent("""
    import sys
    from mtcb_curate.errors import WorkspaceLocked
    from mtcb_curate.store.sqlite import Workspace
    try:
        Workspace.open(sys.argv[1]).close()
    except WorkspaceLocked as exc:
        print("refused:", exc)
    else:
        print("opened")
""")


def test_deleting_the_lock_file_does_not_let_a_second_writer_in(tmp_path):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir) as ws:
        ws.decide(0, "accepted")
        (ws_dir / LOCK_NAME).unlink()
        proc = subprocess.run([sys.executable, "-c", _SECOND_WRITER, str(ws_dir)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("refused:"), proc.stdout
        assert "open in another mtcb-curate" in proc.stdout and str(ws_dir) in proc.stdout
        assert f"pid {os.getpid()}" in proc.stdout  # still named although the lock file is gone
        ws.decide(1, "rejected")  # the first writer is untouched
    Workspace.open(ws_dir).close()  # free again once closed, lock file or not


def test_deleted_lock_file_second_review_is_one_line(tiny, tmp_path):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir):
        (ws_dir / LOCK_NAME).unlink()
        proc = run_cli("ficha", "--source", tiny, "--workspace", ws_dir)
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    assert "open in another mtcb-curate" in line and "--read-only" in line


def test_a_refused_writer_leaves_the_holders_lock_file_alone(tmp_path):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir):
        before = (ws_dir / LOCK_NAME).read_text()
        proc = subprocess.run([sys.executable, "-c", _SECOND_WRITER, str(ws_dir)], capture_output=True,
                              text=True, timeout=120)
        assert proc.stdout.startswith("refused:"), proc.stdout
        assert (ws_dir / LOCK_NAME).read_text() == before == str(os.getpid())


# ---------------------------------------------------------------------------------------------
# 6. a workspace on a read-only file system


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def read_only_storage(src: Path, tmp_path: Path):
    """A copy of the workspace folder ``src`` on storage this process cannot write to (see the
    module docstring); yields the copy's path."""
    if os.geteuid() != 0:
        ws = tmp_path / "ro" / "ws"
        shutil.copytree(src, ws)
        for f in ws.iterdir():
            f.chmod(0o444)
        ws.chmod(0o555)
        try:
            yield ws
        finally:
            ws.chmod(0o755)
        return
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if not _can_mount() or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                                          capture_output=True).returncode != 0:
        pytest.skip("running as root without permission to mount a tmpfs")
    try:
        shutil.copytree(src, mnt / "ws")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        yield mnt / "ws"
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def read_only_copy(tiny, tmp_path):
    """A curated workspace on read-only storage."""
    with read_only_storage(curated_workspace(tiny, tmp_path / "ws-src"), tmp_path) as ws:
        yield ws


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["verify", "ficha"], ["check", "ficha"], ["export", "ficha", "--out", "{out}"], ["dedup", "ficha"]])
def test_readers_open_a_workspace_on_read_only_storage(read_only_copy, tiny, tmp_path, command):
    out = tmp_path / "out.jsonl"
    args = [a.replace("{out}", str(out)) for a in command]
    proc = run_cli(*args, "--source", tiny, "--workspace", read_only_copy)
    assert "Traceback" not in proc.stderr
    assert "error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    if command[0] == "export":
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [r["status"] for r in rows] == ["accepted", "rejected", "undecided"]
    assert not (read_only_copy / (DB_NAME + "-shm")).exists()


def test_read_only_session_on_read_only_storage_sees_the_decisions(read_only_copy, tiny):
    s = open_session(Options("ficha", source=[str(tiny)], workspace=read_only_copy, read_only=True))
    try:
        assert s.read_only
        assert s.status(0) is Status.ACCEPTED and s.status(1) is Status.REJECTED
    finally:
        s.workspace.close()


@pytest.mark.parametrize("command", [["ficha"], ["review", "ficha"]])
def test_writers_on_read_only_storage_say_one_line(read_only_copy, tiny, command):
    proc = run_cli(*command, "--source", tiny, "--workspace", read_only_copy)
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    assert str(read_only_copy) in line and "read-only" in line


def test_generate_on_read_only_storage_says_one_line(read_only_copy, tiny):
    env = dict(os.environ, OPENAI_API_KEY=fake_secret("k"), OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    for args in (["generate", "ficha", "--doc", "AAA", "--model", "m"], ["dedup", "ficha", "--llm", "--model", "m"]):
        proc = run_cli(*args, "--source", tiny, "--workspace", read_only_copy, env=env)
        assert proc.returncode == 2, args
        line = one_error_line(proc.stderr)
        assert str(read_only_copy) in line and "read-only" in line


@pytest.mark.slow
def test_llm_judge_on_read_only_storage_runs_without_the_reply_cache(read_only_copy, tiny, fake_llm):
    fake_llm.default = {"supported": True, "reason": "stated"}
    env = dict(os.environ, OPENAI_API_KEY=fake_secret("k"), OPENAI_BASE_URL=fake_llm.base_url)
    proc = run_cli("check", "ficha", "--source", tiny, "--workspace", read_only_copy, "--llm-judge",
                   "--model", "fake-model", "--yes", env=env)
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1)
    assert not (read_only_copy / "llm.sqlite").exists()


def _refuse_writes_under(monkeypatch, folder: Path, err: int = errno.EROFS) -> None:
    """os.open fails with ``err`` for any file created or written under ``folder``, as on a
    read-only mount (what root cannot get from chmod)."""
    real_open = os.open

    def fake_open(path, flags, *a, **kw):
        if str(path).startswith(str(folder)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(err, os.strerror(err), str(path))
        return real_open(path, flags, *a, **kw)

    monkeypatch.setattr(os, "open", fake_open)


@pytest.mark.parametrize("err", [errno.EROFS, errno.EACCES, errno.EPERM])
def test_writer_open_refused_by_the_os_is_a_workspace_error(tiny, tmp_path, monkeypatch, capsys, err):
    ws_dir = curated_workspace(tiny, tmp_path / "ws")
    _refuse_writes_under(monkeypatch, ws_dir, err)
    with pytest.raises(WorkspaceReadOnly) as info:
        Workspace.open(ws_dir)
    assert str(ws_dir) in str(info.value) and "\n" not in str(info.value)
    code = main(["verify", "ficha", "--source", str(tiny), "--workspace", str(ws_dir)])
    assert code == 1  # a reader: it runs (pair 2 is not exact)
    assert "error" not in capsys.readouterr().err
    code = main(["generate", "ficha", "--source", str(tiny), "--workspace", str(ws_dir), "--doc", "AAA",
                 "--model", "m"])
    assert code == 2
    assert one_error_line(capsys.readouterr().err)


def test_readonly_database_on_write_is_a_workspace_error(tmp_path, monkeypatch):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir) as ws:
        ws.decide(0, "accepted")
    real_connect = sqlite3.connect

    def connect(*a, **kw):  # the database file cannot be written although the lock could be taken
        if isinstance(a[0], str) and "mode=ro" in a[0]:
            return real_connect(*a, **kw)
        return real_connect(f"file:{ws_dir / DB_NAME}?mode=ro", uri=True, **{k: v for k, v in kw.items()})

    monkeypatch.setattr(sqlite3, "connect", connect)
    with pytest.raises(WorkspaceReadOnly) as info:
        Workspace.open(ws_dir)
    assert str(ws_dir) in str(info.value)


def test_reader_falls_back_when_sqlite_cannot_make_its_wal_file(tmp_path):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir) as ws:
        ws.decide(0, "accepted")
    # A folder in the way of the -wal file: SQLite cannot create it, as on read-only storage
    # (where mode=ro alone fails with "unable to open database file").
    (ws_dir / (DB_NAME + "-wal")).mkdir()
    with Workspace.open(ws_dir, read_only=True) as ws:
        assert ws.decisions()[0].status == "accepted"


def test_reader_on_read_only_storage_with_a_leftover_wal_sees_its_decisions(tmp_path):
    """A writer killed before its checkpoint leaves the latest decisions in the -wal; a reader
    on read-only storage must still see them (immutable=1 alone would not)."""
    ws_dir = tmp_path / "ws"
    code = textwrap.dedent(f"""
        import os
        from mtcb_curate.store.sqlite import Workspace
        ws = Workspace.open({str(ws_dir)!r})
        ws._conn.execute("PRAGMA wal_autocheckpoint=0")
        ws.decide(0, "accepted")
        ws.decide(2, "rejected", "trivial")
        os._exit(0)  # no close, no checkpoint
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    (ws_dir / (DB_NAME + "-shm")).unlink()
    with read_only_storage(ws_dir, tmp_path) as ro:
        wal = ro / (DB_NAME + "-wal")
        assert wal.stat().st_size > 0
        with Workspace.open(ro, read_only=True) as ws:
            assert {k: d.status for k, d in ws.decisions().items()} == {0: "accepted", 2: "rejected"}
        assert sorted(p.name for p in ro.iterdir()) == sorted([DB_NAME, DB_NAME + "-wal", LOCK_NAME])


# ---------------------------------------------------------------------------------------------
# 9. generate with no candidate, with a workspace


def test_generate_with_no_candidate_says_so(tiny, tmp_path, fake_llm):
    ws_dir = curated_workspace(tiny, tmp_path / "ws")
    fake_llm.default = {"question": "q?", "answer": "a", "supporting_passage": "Nowhere in this document."}
    env = dict(os.environ, OPENAI_API_KEY=fake_secret("k"), OPENAI_BASE_URL=fake_llm.base_url)
    proc = run_cli("generate", "ficha", "--source", tiny, "--workspace", ws_dir, "--doc", "AAA", "--n", "1",
                   "--model", "fake-model", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no workspace" not in proc.stdout and "--workspace" not in proc.stdout
    assert "0 of 1 pairs generated for AAA" in proc.stdout
    assert "nothing added to the workspace" in proc.stdout


# ---------------------------------------------------------------------------------------------
# 10. a full disk


def test_disk_full_during_a_session_is_one_error_and_loses_nothing(tmp_path):
    ws_dir = tmp_path / "ws"
    ws = Workspace.open(ws_dir)
    try:
        ws.decide(0, "accepted")
        ws.edit(0, {"question": "kept"})
        pages = ws._conn.execute("PRAGMA page_count").fetchone()[0]
        ws._conn.execute(f"PRAGMA max_page_count={pages}")  # SQLITE_FULL, as on a full disk
        with pytest.raises(WorkspaceFull) as info:
            for i in range(1, 200):
                ws.edit(i, {"passage": "x" * 2000})
        msg = str(info.value)
        assert str(ws_dir) in msg and "full" in msg and "\n" not in msg
        assert "not saved" in msg
        ws._conn.execute("PRAGMA max_page_count=1073741823")  # space again: the session goes on
        ws.decide(5, "rejected")
    finally:
        ws.close()
    with Workspace.open(ws_dir) as ws:
        assert ws.decisions()[0].status == "accepted" and ws.decisions()[5].status == "rejected"
        assert ws.edits()[0] == {"question": "kept"}


def test_disk_full_during_review_leaves_the_session_as_it_was(tiny, tmp_path):
    s = open_session(Options("ficha", source=[str(tiny)], workspace=tmp_path / "ws"))
    try:
        s.decide(0, Status.ACCEPTED)
        conn = s.workspace._conn
        conn.execute(f"PRAGMA max_page_count={conn.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(WorkspaceFull):
            for _ in range(100):
                s.edit(1, {"supporting_passage": "y" * 4000 + str(_)})
        assert s.status(0) is Status.ACCEPTED
        with pytest.raises(WorkspaceFull):
            s.decide(2, Status.REJECTED, "r" * 20000)  # needs new pages: there are none
        assert s.status(2) is Status.UNDECIDED  # not shown as decided when it was not saved
    finally:
        s.workspace.close()


def test_no_room_for_a_new_workspace_folder(tmp_path, monkeypatch):
    def mkdir(self, *a, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with pytest.raises(WorkspaceFull) as info:
        Workspace.open(tmp_path / "new")
    assert "cannot create the workspace folder" in str(info.value)


def test_disk_full_on_reopen_says_so(tmp_path, monkeypatch):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir) as ws:
        ws.decide(0, "accepted")
    real_connect = sqlite3.connect

    class Full:
        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *a):
            if sql.startswith("PRAGMA journal_mode"):  # what SQLite reports when the -shm cannot grow
                raise sqlite3.OperationalError("disk I/O error")
            return self.conn.execute(sql, *a)

        def __getattr__(self, name):
            return getattr(self.conn, name)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **kw: Full(real_connect(*a, **kw)))
    monkeypatch.setattr(os, "statvfs", lambda p: os.statvfs_result((4096, 4096, 100, 0, 0, 10, 0, 0, 0, 255)))
    with pytest.raises(WorkspaceFull) as info:
        Workspace.open(ws_dir)
    msg = str(info.value)
    assert str(ws_dir) in msg and "full" in msg and "nothing was lost" in msg
    assert "not a usable workspace" not in msg


@pytest.fixture
def full_tmpfs(tmp_path):
    """A 1 MB tmpfs (root only, else skipped)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not _can_mount() or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                                          capture_output=True).returncode != 0:
        pytest.skip("needs root and permission to mount a tmpfs")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.slow
def test_really_full_disk_on_reopen(tiny, tmp_path, full_tmpfs):
    ws_dir = full_tmpfs / "ws"
    shutil.copytree(curated_workspace(tiny, tmp_path / "ws-src"), ws_dir)
    with open(full_tmpfs / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    proc = run_cli("ficha", "--source", tiny, "--workspace", ws_dir)
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    assert str(ws_dir) in line and "full" in line and "nothing was lost" in line
    proc = run_cli("export", "ficha", "--source", tiny, "--workspace", ws_dir, "--out", tmp_path / "o.jsonl")
    assert proc.returncode == 0, proc.stderr  # reading still works
    (full_tmpfs / "filler").unlink()
    with Workspace.open(ws_dir) as ws:  # and once there is space again, nothing was lost
        assert {k: d.status for k, d in ws.decisions().items()} == {0: "accepted", 1: "rejected"}


def test_workspace_errors_are_one_error_type():
    assert issubclass(WorkspaceFull, WorkspaceError) and issubclass(WorkspaceReadOnly, WorkspaceError)
    assert issubclass(WorkspaceLocked, WorkspaceError)


# -- a new workspace refused for a full disk leaves nothing behind


def test_a_new_workspace_refused_for_a_full_disk_leaves_nothing(tmp_path, monkeypatch):
    """Before the fix an empty ``workspace.sqlite`` and ``lock`` stayed, which later read as
    "not a readable workspace (no such table: decisions)"."""
    real_connect = sqlite3.connect

    class Full:
        def __init__(self, conn):
            self.conn = conn

        def executescript(self, sql):
            raise sqlite3.OperationalError("database or disk is full")

        def __getattr__(self, name):
            return getattr(self.conn, name)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **kw: Full(real_connect(*a, **kw)))
    ws_dir = tmp_path / "a" / "ws"
    with pytest.raises(WorkspaceFull) as info:
        Workspace.open(ws_dir)
    assert str(info.value) == (f"{ws_dir}: cannot create the workspace: the disk is full; nothing was left "
                               f"behind. Free some space and try again")
    assert not (tmp_path / "a").exists()
    given = tmp_path / "given"  # a folder the curator named: kept, empty
    given.mkdir()
    with pytest.raises(WorkspaceFull):
        Workspace.open(given)
    assert list(given.iterdir()) == []
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    with Workspace.open(ws_dir) as ws:  # with space again: a new workspace, no "no such table"
        ws.decide(0, "accepted")


def test_a_new_workspace_on_a_really_full_disk_leaves_nothing(tiny, full_tmpfs):
    with open(full_tmpfs / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    ws_dir = full_tmpfs / "ws"
    proc = run_cli("repair", "ficha", "--source", tiny, "--chunk-index", "--workspace", ws_dir)
    assert proc.returncode == 2
    assert "cannot create the workspace: the disk is full; nothing was left behind" in one_error_line(proc.stderr)
    assert sorted(p.name for p in full_tmpfs.iterdir()) == ["filler"]
