"""A real PostgreSQL server for the tests: initdb + pg_ctl in a temporary folder, on a free port.

The binaries are looked up on PATH, then in Debian's /usr/lib/postgresql/*/bin (the
``postgresql`` package puts them there; .ci/run installs it when they are missing). As root,
the server runs as the ``postgres`` user (PostgreSQL refuses to run as root), which owns the
data folder.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(d, "initdb"), os.X_OK) and os.access(os.path.join(d, "pg_ctl"), os.X_OK):
            return Path(d)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """One throw-away server. ``url(schema)`` gives a connection URI whose tables land in a
    fresh schema; ``stop()`` / ``start()`` restart it (the fault tests)."""

    def __init__(self, bin_dir: Path, *, durable: bool = False):
        self.bin_dir = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="mtcb-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(f"{self.bin_dir / 'initdb'} -D {self.data} -A trust -U postgres --no-sync -E UTF8")
        # fsync off: a test server need not survive a power cut; the fault tests stop it with
        # pg_ctl. ``durable`` (the benchmark) keeps PostgreSQL's defaults.
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as f:
            f.write("\nmax_connections = 100\n")
            if not durable:
                f.write("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        for attempt in range(3):  # a free port taken meanwhile (tests run in parallel): another one
            try:
                self.start()
                break
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise
                self.port = _free_port()

    def _run(self, cmd: str) -> None:
        argv = ["su", "postgres", "-s", "/bin/sh", "-c", cmd] if self.as_postgres else ["sh", "-c", cmd]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)

    def start(self) -> None:
        opts = shlex.quote(f"-p {self.port} -k {self.dir} -h 127.0.0.1")
        self._run(f"{self.bin_dir / 'pg_ctl'} -D {self.data} -o {opts} -l {self.dir / 'log'} -w -t 60 start")

    def stop(self, mode: str = "fast") -> None:
        self._run(f"{self.bin_dir / 'pg_ctl'} -D {self.data} -m {mode} -w -t 60 stop")

    def cleanup(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def base_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, schema: str | None = None) -> str:
        """A URI to a new, empty schema (its own workspace)."""
        import psycopg

        schema = schema or "ws_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.base_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        return f"{self.base_url}?options=-csearch_path%3D{schema}"
