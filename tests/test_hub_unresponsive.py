"""A Hub that accepts connections and never answers, or stops answering, must not hold anyone:
the probe has a total deadline, every request a patience, the review app opens the bundled
sample while the Hub load goes on in the background, and a sample opened because the Hub was
away never stands for the dataset afterwards.

The Hub loads run in subprocesses: huggingface_hub and datasets read ``HF_ENDPOINT`` and
``HF_HUB_OFFLINE`` at import. The subprocess timeouts are bounds on behaviour (before the fix
these runs took minutes), not measurements.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CORPUS, QUESTIONS  # noqa: E402
from hubfake import HubFake  # noqa: E402
from support import call_main, wait_until  # noqa: E402

from mtcb_curate.dataset import hub_requests  # noqa: E402
from mtcb_curate.hub.layout import write_hub_layout  # noqa: E402

LIBRARY_TEXT = ("Retrying in", "[Retry", "thrown while requesting", "HTTP Error")


class SilentServer:
    """A loopback socket that accepts TCP connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(50)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.fixture
def silent():
    server = SilentServer()
    yield server
    server.close()


def _env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf"), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    return env


def _run(code: str, env: dict[str, str], timeout: float = 120) -> dict:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for text in LIBRARY_TEXT:
        assert text not in proc.stdout + proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_hub_that_never_answers_is_unreachable_after_the_probe(silent, tmp_path):
    """It accepts TCP (a TCP probe passed and datasets then retried for minutes)."""
    out = _run("""
        import json, time
        from mtcb_curate.app.sources import Options, choose_and_load
        t = time.monotonic()
        ds, spec = choose_and_load(Options('ficha'), None)
        print(json.dumps({"spec": spec, "reason": ds.source.reason, "seconds": time.monotonic() - t}))
    """, _env(tmp_path, f"http://127.0.0.1:{silent.port}"))
    assert out["spec"] == ["sample:ficha"]
    assert f"127.0.0.1:{silent.port}: no answer in 2 s" in out["reason"]


def test_a_hub_that_stops_answering_is_given_up_after_the_patience(tmp_path):
    """The Hub answers the probe, then never answers a request about the dataset: the load
    gives up after the patience, says so, and does not try the next organisation."""
    with HubFake() as fake:
        fake.fail_next("/api/datasets/", "hang", count=1000)
        fake.fail_next("/datasets/", "hang", count=1000)
        out = _run("""
            import json
            from mtcb_curate.dataset import hub_requests
            hub_requests.LOAD_PATIENCE = 1.0
            from mtcb_curate.app.sources import Options, choose_and_load
            ds, spec = choose_and_load(Options('ficha'), None)
            print(json.dumps({"spec": spec, "reason": ds.source.reason}))
        """, _env(tmp_path, fake.url))
        asked = {path for _, path in fake.requests}
    assert out["spec"] == ["sample:ficha"]
    assert "feyninc/ficha could not be loaded" in out["reason"]
    assert "the Hugging Face Hub gave no answer in 1 s" in out["reason"]
    assert not any("chonkie-ai" in p for p in asked), asked  # the next repo would wait as long


def test_the_app_opens_the_sample_and_the_hub_load_goes_on_then_the_dataset_is_not_pinned(tmp_path):
    """``open_review`` with no time for the Hub: the sample opens in its own workspace and the
    Hub load finishes in the background; the next plain open is the Hub's dataset."""
    folder = tmp_path / "src"
    write_hub_layout(folder, CORPUS, QUESTIONS, body="# on the Hub\n")
    code = """
        import json
        from mtcb_curate.app.sources import Options, open_review, open_session
        session, pending = open_review(Options('ficha'), hub_wait=0.0)
        first = {"kind": session.dataset.source.kind, "reason": session.dataset.source.reason,
                 "workspace": session.workspace.path.name}
        session.workspace.close()
        assert pending is not None and pending.wait(60)
        again = open_session(Options('ficha'))
        print(json.dumps({"first": first, "outcome": pending.outcome, "loaded": pending.loaded,
                          "again": [again.dataset.source.kind, again.dataset.source.location,
                                    again.workspace.path.name, len(again.pairs)]}))
        again.workspace.close()
    """
    with HubFake() as fake:
        fake.add_dataset_from_folder("chonkie-ai/ficha", folder)
        env = fake.env(tmp_path / "hf")
        env.update(XDG_DATA_HOME=str(tmp_path / "data"))
        out = _run(code, env, timeout=120)
    assert out["first"]["kind"] == "sample" and out["first"]["workspace"] == "ficha-sample"
    assert "goes on in the background" in out["first"]["reason"]
    assert out["loaded"] and out["outcome"].startswith("chonkie-ai/ficha has loaded from the Hugging Face Hub")
    assert out["again"] == ["hub", "chonkie-ai/ficha", "ficha", 3]


# -- the patience, in-process -------------------------------------------------------------------


def test_patience_cuts_each_request_to_the_time_left_and_stops_after_it(monkeypatch):
    import httpx2

    clock = [1000.0]
    monkeypatch.setattr(hub_requests, "_now", lambda: clock[0])
    monkeypatch.setattr(hub_requests, "install", lambda: None)
    request = httpx2.Request("GET", "http://hub.invalid/api/datasets/x",
                             extensions={"timeout": {"connect": 10.0, "read": 10.0, "write": None, "pool": 10.0}})
    hub_requests._on_request(request)  # no patience active: untouched
    assert request.extensions["timeout"]["read"] == 10.0
    with hub_requests.patience(5.0):
        clock[0] += 2
        hub_requests._on_request(request)
        assert request.extensions["timeout"] == {"connect": 3.0, "read": 3.0, "write": 3.0, "pool": 3.0}
        clock[0] += 2
        hub_requests._on_response(httpx2.Response(404))  # any answer pushes the deadline
        clock[0] += 4
        fresh = httpx2.Request("GET", "http://hub.invalid/x", extensions={"timeout": {"read": 10.0}})
        hub_requests._on_request(fresh)
        assert fresh.extensions["timeout"]["read"] == 1.0
        clock[0] += 1.5
        with pytest.raises(hub_requests.HubNoAnswer, match="no answer in 5 s"):
            hub_requests._on_request(fresh)
    assert hub_requests._deadline() is None


# -- the sample never stands for the dataset ----------------------------------------------------------


def test_the_fallback_sample_gets_its_own_workspace(tmp_path):
    """Offline (the test environment), plain ``ficha`` opens the sample in ``ficha-sample``,
    never in ``ficha``, which stays free for the real dataset."""
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.store.sqlite import default_workspace_dir

    s = open_session(Options("ficha"))
    assert s.dataset.source.kind == "sample" and s.workspace.path == default_workspace_dir("ficha", "sample")
    s.decide(0, Status.ACCEPTED)
    s.workspace.close()
    assert not default_workspace_dir("ficha").exists()
    s = open_session(Options("ficha"))  # still offline: the sample again, with its decision
    assert s.workspace.path == default_workspace_dir("ficha", "sample") and s.status(0) is Status.ACCEPTED
    s.workspace.close()


def test_an_older_workspace_pinned_to_the_sample_does_not_stand_for_the_hub_dataset(tmp_path):
    """``workspaces/ficha`` bound to the sample (as older versions made it when offline): with the
    Hub back, plain ``ficha`` opens the Hub's dataset in a workspace of its own."""
    folder = tmp_path / "src"
    write_hub_layout(folder, CORPUS, QUESTIONS, body="# on the Hub\n")
    code = """
        import json
        from mtcb_curate.app.sources import Options, open_session
        from mtcb_curate.store.sqlite import default_workspace_dir
        old = open_session(Options('ficha', sample=True, workspace=default_workspace_dir('ficha')))
        old.workspace.close()
        s = open_session(Options('ficha'))
        print(json.dumps([s.dataset.source.kind, s.workspace.path.name]))
        s.workspace.close()
    """
    with HubFake() as fake:
        fake.add_dataset_from_folder("chonkie-ai/ficha", folder)
        env = fake.env(tmp_path / "hf")
        env.update(XDG_DATA_HOME=str(tmp_path / "data"))
        kind, name = _run(code, env, timeout=120)
    assert kind == "hub" and name.startswith("ficha-src-")


# -- the terminal -----------------------------------------------------------------------------------


def test_a_dumb_terminal_is_refused_with_a_pointer_to_the_headless_commands(isolated_env):
    proc = call_main("ficha", "--sample", env={"TERM": "dumb"})
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith("mtcb-curate: error: the review app needs a full-screen terminal (TERM=dumb)")
    assert "verify, check" in line
    assert not (isolated_env / "data").exists()  # nothing read, nothing written


async def test_the_background_hub_load_outcome_reaches_the_top_bar(tmp_path):
    """A real ``HubLoad`` (offline here: it fails at once) handed to the app: its outcome
    replaces the top bar's reason."""
    from mtcb_curate.app.sources import HubLoad, Options, open_session
    from mtcb_curate.tui.app import CurateApp

    opts = Options("ficha", sample=True, workspace=tmp_path / "ws")
    session = open_session(opts)
    load = HubLoad(opts, opts.profile(), ["feyninc/ficha"])
    assert load.wait(120) and not load.loaded
    try:
        app = CurateApp(session, hub_load=load)
        async with app.run_test(size=(200, 30)) as pilot:
            def bar() -> str:
                return str(app.screen.query_one("#source-bar").content)

            await wait_until(pilot, lambda: "load failed" in bar(), "the load's outcome in the top bar")
            assert "the Hugging Face Hub load failed: feyninc/ficha" in bar()
    finally:
        session.workspace.close()


@pytest.mark.slow
def test_a_publish_gives_up_on_a_hub_that_stops_answering(tmp_path):
    """The upload's pre-check never answered: one retry line, then one error line within the
    patience (2 s here, 60 s by default), no library text, the workspace unchanged."""
    from support import write_source

    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.dataset.model import Status

    data = write_source(tmp_path / "data")
    ws = tmp_path / "ws"
    s = open_session(Options("ficha", source=[str(data)], workspace=ws))
    for pid in range(len(s)):
        s.decide(pid, Status.REJECTED if pid == 2 else Status.ACCEPTED)
    s.workspace.close()
    code = ("import sys\nimport mtcb_curate.hub.client as c\nc.HUB_PATIENCE = 2.0\n"
            "from mtcb_curate.cli import main\nsys.exit(main(sys.argv[1:]))")
    with HubFake() as fake:
        fake.fail_next("/api/datasets/me/x/preupload", "hang", count=50, method="POST")
        proc = subprocess.run([sys.executable, "-c", code, "publish", "ficha", "--source", str(data), "--workspace",
                               str(ws), "--repo-id", "me/x", "--license", "cc-by-4.0", "--yes"],
                              env=fake.env(tmp_path / "hf"), capture_output=True, text=True, timeout=120)
        fake.clear_failures()
    assert proc.returncode == 2, proc.stderr
    for text in LIBRARY_TEXT:
        assert text not in proc.stdout + proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("mtcb-curate: error: the Hugging Face Hub gave no answer in 2 s while uploading to me/x")


def test_the_same_retry_of_parallel_requests_is_one_line():
    """``datasets`` fetches a config's files in parallel; a failing Hub fails each the same way:
    one line, not one per file. A later retry (or another cause) is a line of its own."""
    import logging

    from mtcb_curate.dataset import quiet

    clock = [10.0]
    handler = quiet._LibraryRecords(clock=lambda: clock[0])
    seen = []
    handler.listeners.append(seen.append)

    def record(msg: str, thread: int) -> logging.LogRecord:
        r = logging.LogRecord("huggingface_hub.utils._http", logging.WARNING, __file__, 1, msg, None, None)
        r.thread = thread
        return r

    for thread in (1, 2, 3):
        handler.emit(record("HTTP Error 503 thrown while requesting GET http://x/f", thread))
        handler.emit(record("Retrying in 1s [Retry 1/5].", thread))
    assert [(r.cause, r.attempt) for r in seen] == [("answered 503", 1)]
    clock[0] += 2
    handler.emit(record("HTTP Error 503 thrown while requesting GET http://x/f", 1))
    handler.emit(record("Retrying in 2s [Retry 2/5].", 1))
    handler.emit(record("'timed out' thrown while requesting GET http://x/g", 2))
    handler.emit(record("Retrying in 2s [Retry 2/5].", 2))
    assert [(r.cause, r.attempt) for r in seen] == [("answered 503", 1), ("answered 503", 2),
                                                   ("did not answer (timed out)", 2)]


def test_the_app_waits_for_a_hub_that_keeps_answering(tmp_path):
    """A healthy Hub is never cut short: the real dataset opens, not the sample."""
    folder = tmp_path / "src"
    write_hub_layout(folder, CORPUS, QUESTIONS, body="# on the Hub\n")
    code = """
        import json
        from mtcb_curate.app.sources import Options, open_review
        session, pending = open_review(Options('ficha'), hub_wait=2.0)
        print(json.dumps([session.dataset.source.kind, session.dataset.source.location, pending is None]))
        session.workspace.close()
    """
    with HubFake() as fake:
        fake.add_dataset_from_folder("chonkie-ai/ficha", folder)
        env = fake.env(tmp_path / "hf")
        env.update(XDG_DATA_HOME=str(tmp_path / "data"))
        assert _run(code, env, timeout=120) == ["hub", "chonkie-ai/ficha", True]


def test_the_app_opens_the_sample_when_the_hub_stops_answering(tmp_path):
    """The Hub answers the probe, then nothing: after ``hub_wait`` seconds of silence the
    sample opens; the load fails in the background after its patience, and says so."""
    code = """
        import json
        from mtcb_curate.dataset import hub_requests
        hub_requests.LOAD_PATIENCE = 1.0
        from mtcb_curate.app.sources import Options, open_review
        session, pending = open_review(Options('ficha'), hub_wait=0.5)
        first = [session.dataset.source.kind, session.workspace.path.name, pending is not None]
        session.workspace.close()
        assert pending.wait(60)
        print(json.dumps({"first": first, "outcome": pending.outcome, "loaded": pending.loaded}))
    """
    with HubFake() as fake:
        fake.fail_next("/api/datasets/", "hang", count=1000)
        fake.fail_next("/datasets/", "hang", count=1000)
        env = fake.env(tmp_path / "hf")
        env.update(XDG_DATA_HOME=str(tmp_path / "data"))
        out = _run(code, env, timeout=120)
        fake.clear_failures()
    assert out["first"] == ["sample", "ficha-sample", True]
    assert not out["loaded"] and "gave no answer in 1 s" in out["outcome"]
