"""Shared fixtures: an isolated environment (no Hub, temp user dirs) and tiny datasets."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (CI included), so a result never depends on
# the day's random seed; `pytest --hypothesis-seed=N` or HYPOTHESIS_PROFILE=explore still
# explore new ones when looking for edge cases. No deadline: a shared, loaded machine can stall any
# example for hundreds of milliseconds, and a deadline then fails a correct test.
settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

from mtcb_curate import resources  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llmfake import FakeChat  # noqa: E402
from pgserver import PgServer, find_bin_dir  # noqa: E402
from pytest_httpserver import HTTPServer  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


#: The config file of a test not marked ``answerable_stage``: the review app's analysis works no
#: pair's ``answerable`` reason out ahead (its worker never loads the paraphrase model, about a
#: third of an app test's time); the app works out the reason of a pair it shows, by the same
#: rule. A test that sets ``MTCB_CURATE_CONFIG`` itself gets its own file's settings.
TEST_CONFIG = "[review]\nanswerable_ahead = 0\n"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch, request):
    """No network to the Hub, and user data/config dirs in a temp folder (never the user's).

    ``MTCB_CURATE_CONFIG`` names a file holding :data:`TEST_CONFIG`; under the
    ``answerable_stage`` mark (a test that reads how the analysis delivers the ``answerable``
    reasons) it names an absent file: every default applies, as for a user without one."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(home / "hf"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    config = home / "config" / "none.toml"
    if request.node.get_closest_marker("answerable_stage") is None:
        config = home / "tests.toml"
        config.write_text(TEST_CONFIG, encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.delenv("MTCB_CURATE_DATABASE_URL", raising=False)
    yield home


@pytest.fixture
def sample_dir() -> Path:
    """The bundled ficha sample (Hub layout)."""
    d = resources.sample_dir("ficha")
    assert d is not None
    return d


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip where it is absent (a user's machine)."""
    if not (SHARED / "corpus.jsonl").is_file():
        pytest.skip("../shared/data is not present")
    return SHARED


def fake_secret(label: str) -> str:
    """A distinctive stand-in for an API key or Hub token, made at run time (no key-shaped
    literal is committed): tests assert it never appears in output, messages or files."""
    import secrets

    return f"fake-{label}-{secrets.token_hex(8)}"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """Write rows as JSON Lines (UTF-8) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


CORPUS = [
    {"ticker": "AAA", "company": "Alpha", "text": "Alpha makes anvils.\nRevenue was $10 million in 2022.\n"},
    {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells.\nIts \u2019best\u2019 year was 2021.\n"},
]
QUESTIONS = [
    {"question": "What does Alpha make?", "answer": "Anvils", "supporting_passage": "Alpha makes anvils.",
     "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "What was Alpha's revenue in 2022?", "answer": "$10 million",
     "supporting_passage": "Revenue was $10 million in 2022.", "ticker": "AAA", "company": "Alpha",
     "chunk_index": 0},
    {"question": "What does Beta sell?", "answer": "Bells", "supporting_passage": "Beta sells  bells.",
     "ticker": "BBB", "company": "Beta", "chunk_index": None},
]


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A 2-document, 3-pair ficha-shaped folder (corpus.jsonl + questions.jsonl side by side).

    Pairs 0 and 1 are verbatim; pair 2 is not (a doubled space).
    """
    d = tmp_path / "tiny"
    write_jsonl(d / "corpus.jsonl", CORPUS)
    write_jsonl(d / "questions.jsonl", QUESTIONS)
    return d


# -- the fake LLM server (see llmfake.py) -------------------------------------------------


@pytest.fixture(scope="session")
def llm_http_server():
    """One threaded loopback server for the test run (stopping one takes 0.5 s)."""
    server = HTTPServer(threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def fake_llm(llm_http_server):
    """A fresh fake chat endpoint per test, on the module's server."""
    llm_http_server.clear()
    yield FakeChat(llm_http_server)
    llm_http_server.clear()


# -- the workspace backends: SQLite, and a real PostgreSQL server (see pgserver.py) ----------


def pg_server_or_skip() -> PgServer:
    """A new server, or skip (with the reason) where PostgreSQL or psycopg is not installed."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin)")
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and no 'postgres' user to run the PostgreSQL server as")
    return PgServer(bin_dir)


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the test run (started in about 2 s, stopped at the end)."""
    server = pg_server_or_skip()
    yield server
    server.cleanup()


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request, tmp_path):
    """Where a new, empty workspace goes: a folder, or a fresh schema on the test server."""
    if request.param == "sqlite":
        return tmp_path / "ws"
    return request.getfixturevalue("pg_server").url()


@pytest.fixture
def open_store(store_target):
    """``open_store(read_only=False, curator=None)``: open the test's workspace on either backend
    (``open_store.target`` is its folder or URL)."""
    from mtcb_curate.store.opening import open_workspace

    def opener(**kwargs):
        return open_workspace(store_target, **kwargs)

    opener.target = store_target
    return opener


# -- shared set-ups (see support.py) ------------------------------------------------------


@pytest.fixture
def ws(tmp_path) -> Path:
    """A workspace folder for the test (not created: opening a session creates it)."""
    return tmp_path / "ws"


@pytest.fixture
def review_at_once(monkeypatch) -> None:
    """The review screen scans and locates passages with the first frame (no delay), so
    ``support.settle`` sees the results. Use with ``pytestmark = pytest.mark.usefixtures(...)``."""
    from support import review_at_once as now

    now(monkeypatch)


@pytest.fixture
def cli():
    """``support.call_main``: ``main(argv)`` in-process -> ``(returncode, stdout, stderr)``."""
    from support import call_main

    return call_main


# -- running in parallel (pytest-xdist: ``-n auto --dist worksteal`` in pyproject's addopts) -----


def pytest_xdist_auto_num_workers(config) -> int:
    """Workers for ``-n auto``: two per CPU this process may use, from 2 to 8. The suite mostly
    waits (subprocesses, servers, the app's timers), so 4 workers on 2 cores finish sooner
    than 2 (docs/performance.md, "Test suite"). ``-n 0`` runs in this process;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS=N`` sets another number."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, min(8, 2 * cpus))


def pytest_collection_modifyitems(config, items) -> None:
    """Under pytest-xdist, the tests marked ``slow`` run first, spread evenly over the workers.

    ``--dist worksteal`` hands each of the N workers an equal run of the collected tests in order,
    then moves tests from the end of a busy worker's run to an idle one; a slow test left at the
    end of a run would keep one worker busy after the others finish. So each run begins with
    its share of the slow tests (dealt in turn), followed by the others in collection order.
    Every worker computes the same order (xdist requires it)."""
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    slow = [item for item in items if item.get_closest_marker("slow")]
    if n < 2 or not slow:
        return
    rest = [item for item in items if not item.get_closest_marker("slow")]
    ordered: list = []
    for i in range(n):
        size = (len(items) - len(ordered)) // (n - i)  # the run worksteal sends worker i first
        mine = slow[i::n]
        take = max(0, size - len(mine))
        ordered += mine + rest[:take]
        del rest[:take]
    items[:] = ordered + rest
