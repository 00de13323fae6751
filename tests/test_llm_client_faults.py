"""LLM client faults: a slow-drip reply bounded by the timeout, a cancel that closes the connection,
a server that serves one request at a time or cuts streams, the measured speed, and the commands'
--no-cache and --json, against loopback servers."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from test_llm_client import make_config, user

from mtcb_curate.llm.cache import ResponseCache
from mtcb_curate.llm.client import ChatClient, ServerSpeed
from mtcb_curate.llm.errors import LLMCancelled, LLMGaveUp

BODY = json.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"ok\": 1}"},
                                "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}).encode()


class RawServer:
    """A one-connection-at-a-time HTTP server on 127.0.0.1 run by ``handle(conn)`` per
    connection, recording when each client closed its connection (``closed``)."""

    def __init__(self, handle):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.handle = handle
        self.closed = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _loop(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        conn.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(next((ln.split(b":")[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")), b"0"))
            while len(rest) < length:
                rest += conn.recv(65536)
            self.handle(conn, self)
        except OSError:
            self.closed.set()
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def wait_for_close(conn, server, limit_s: float) -> None:
    """Send nothing; note when the client closes its end (recv returns b'' or fails)."""
    conn.settimeout(limit_s)
    try:
        if conn.recv(1) == b"":
            server.closed.set()
    except OSError:
        pass


#: Longest a test waits for the server to see something (seconds): a guard against a hang on a
#: loaded machine, not a speed bound.
WAIT_S = 120


def dripping(now: list[float], jump_s: float, drips: list[str]):
    """A handler: a valid 200 reply, one byte every 0.1 s (about 30 s in all), each byte well
    within any read timeout; after its first bytes the client's clock (``now``) moves on by
    ``jump_s``. ``drips`` gets "cut" for a reply the client closed early, "whole" for one it
    read to the end."""
    def drip(conn, server) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(BODY)).encode() + b"\r\n\r\n")
        try:
            for i, b in enumerate(BODY):
                conn.sendall(bytes([b]))
                if i == 3:
                    now[0] += jump_s
                time.sleep(0.1)
        except OSError:
            drips.append("cut")
            raise
        drips.append("whole")

    return drip


@pytest.fixture
def raw():
    servers = []

    def make(handle):
        servers.append(RawServer(handle))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


class Cfg:
    def __init__(self, base_url):
        self.base_url = base_url


def config_for(server, **kw):
    return make_config(Cfg(server.base_url), **kw)


def test_a_slow_drip_reply_is_bounded_by_the_timeout_for_the_whole_request(raw):
    """Bytes keep coming (no read ever waits long), but the whole request's 60 s pass on the
    client's clock: each of the two attempts is cut, none read to its end."""
    now, drips = [1000.0], []
    server = raw(dripping(now, 61.0, drips))
    client = ChatClient(config_for(server, timeout_s=60, max_retries=1, backoff_base_s=0.01, backoff_jitter=0),
                        clock=lambda: now[0])
    with pytest.raises(LLMGaveUp, match="timed out after 60 s"):
        client.complete(user("hi"))
    end = time.monotonic() + WAIT_S  # a hang guard: the server notices the close at its next byte
    while len(drips) < 2 and time.monotonic() < end:
        time.sleep(0.05)
    assert drips == ["cut", "cut"]


def test_the_deadline_follows_the_injected_clock(raw):
    now = [1000.0]

    def late(conn, s) -> None:  # the request is in flight: 61 s pass on the client's clock
        now[0] = 1061.0
        wait_for_close(conn, s, WAIT_S)

    server = raw(late)
    client = ChatClient(config_for(server, timeout_s=60, max_retries=0), clock=lambda: now[0])
    with pytest.raises(LLMGaveUp, match="timed out after 60 s"):
        client.complete(user("hi"))
    assert server.closed.wait(WAIT_S)  # the watcher shut the connection: the server saw the close


def test_cancel_closes_the_connection_of_the_request_in_flight(raw):
    cancel = threading.Event()

    def cancelled_in_flight(conn, s) -> None:  # the request arrived: the curator cancels
        cancel.set()
        wait_for_close(conn, s, WAIT_S)

    server = raw(cancelled_in_flight)
    client = ChatClient(config_for(server, timeout_s=600, max_retries=0))
    with pytest.raises(LLMCancelled):
        client.complete(user("hi"), cancel=cancel)
    # The server sends nothing and waits for the client's close; the client keeps no timeout
    # that would close it (600 s): the close it sees is the cancel's.
    assert server.closed.wait(WAIT_S)


def test_the_status_line_says_what_the_server_is_doing(raw):
    server = raw(lambda conn, s: wait_for_close(conn, s, 30))
    client = ChatClient(config_for(server, timeout_s=600, max_retries=0))
    cancel = threading.Event()
    seen = []

    def look():
        end = time.monotonic() + 120  # a guard against a hang: the line comes once the request is sent
        while time.monotonic() < end:
            line = client.status_line()
            if line:
                seen.append(line)
                break
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=look).start()
    with pytest.raises(LLMCancelled):
        client.complete(user("hi"), cancel=cancel)
    assert seen and seen[0].startswith("sent, no reply yet (the server queues it, reads the prompt or writes")
    assert client.status_line() == ""


def sse_cut(conn, server) -> None:
    """A streamed reply cut short: two chunks, no finish_reason, the connection closed."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    for piece in ("{\"o", "k\""):
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        conn.sendall(f"data: {json.dumps(chunk)}\n\n".encode())


def test_a_stream_cut_short_is_retried_and_never_cached(raw, tmp_path):
    server = raw(sse_cut)
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(config_for(server, stream=True, max_retries=1, backoff_base_s=0.01, backoff_jitter=0),
                            cache)
        notices = []
        with pytest.raises(LLMGaveUp, match="cut the streamed reply short"):
            client.complete(user("hi"), on_retry=notices.append)
        assert len(notices) == 1 and len(cache) == 0


def test_a_server_that_cuts_a_stream_while_another_request_queues_is_run_one_at_a_time(fake_llm, tmp_path):
    """Like llama-cpp-python's server: a stream is cut short when a second request arrives."""
    from werkzeug import Response

    lock = threading.Lock()
    busy = [0]
    most = []
    overlapped = threading.Event()

    def step(body):
        with lock:
            busy[0] += 1
            now = busy[0]
            if now > 1:
                overlapped.set()
        overlapped.wait(30)  # the first two requests overlap on a loaded machine too: the second is cut
        time.sleep(0.2)
        with lock:
            most.append(busy[0])
            busy[0] -= 1
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": "{\"n\": 1}"},
                              "finish_reason": None if now > 1 else "stop"}]}
        return Response(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n", content_type="text/event-stream")

    fake_llm.default = step
    with ResponseCache(tmp_path / "ws" / "llm.sqlite") as cache:
        # A model name of its own: the one-at-a-time memory is per server and model, for this process too.
        client = ChatClient(make_config(fake_llm, model="one-slot", stream=True, max_retries=3,
                                        backoff_base_s=0.01), cache)
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(client.complete(user(f"q{i}")).text))
                   for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_S)  # a hang guard: the three requests end by themselves
        assert sorted(results) == ['{"n": 1}'] * 3 and client.serial
        # Remembered for this server and model: a new client starts one at a time.
        formats = json.loads((tmp_path / "ws" / "llm-formats.json").read_text(encoding="utf-8"))
        assert any(k.endswith(" slots") for k in formats)
        assert ChatClient(make_config(fake_llm, model="one-slot", stream=True),
                          ResponseCache(tmp_path / "ws" / "llm.sqlite")).serial
        assert not ChatClient(make_config(fake_llm, model="another-model", stream=True)).serial


def test_measured_speed_is_remembered_per_server_and_model_and_gives_the_estimate(fake_llm, tmp_path):
    from mtcb_curate.llm.estimate import estimate_run

    fake_llm.default = "{}"
    with ResponseCache(tmp_path / "ws" / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm, model="speedy"), cache)
        assert "duration unknown" in estimate_run([user("a"), user("b")], client.config, output_tokens=10,
                                                  client=client).summary()
        client.complete(user("hi"))
    stored = json.loads((tmp_path / "ws" / "llm-speed.json").read_text(encoding="utf-8"))
    assert [k for k in stored if k.endswith(" speedy")]
    with ResponseCache(tmp_path / "ws" / "llm.sqlite") as cache:
        again = ChatClient(make_config(fake_llm, model="speedy"), cache)
        est = estimate_run([user("a"), user("b")], again.config, output_tokens=10, client=again)
    assert est.seconds is not None and "at this server's measured speed" in est.summary()


def test_server_speed_separates_prompt_and_reply_rates_when_streamed():
    speed = ServerSpeed()
    speed.add(1000, 100, 30.0, 20.0)  # 50 prompt tokens/s, 10 reply tokens/s
    assert speed.seconds(2000, 50) == pytest.approx(45.0)
    plain = ServerSpeed()
    plain.add(900, 100, 10.0, None)  # 100 tokens/s in all
    assert plain.seconds(400, 100) == pytest.approx(5.0) and "100 tokens/s" in plain.describe()


def test_the_own_connection_goes_through_the_proxy_the_environment_names(monkeypatch):
    from mtcb_curate.llm.client import _env_proxy

    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert _env_proxy("https://api.example.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert _env_proxy("https://api.example.com/v1") == "http://proxy.example:3128"
    assert _env_proxy("http://127.0.0.1:8080/v1") is None


def test_the_real_model_benchmark_skips_cleanly_without_a_model_or_server(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "e2e_local_llm.py"
    env = {k: v for k, v in os.environ.items() if k not in ("MTCB_E2E_MODEL", "MTCB_E2E_SERVER_PYTHON")}
    data = tmp_path / "data"
    data.mkdir()
    for argv in ([], ["--base-url", "http://127.0.0.1:9/v1"]):
        proc = subprocess.run([sys.executable, str(script), "--data", str(data), *argv], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and proc.stdout.startswith("skipped: "), proc.stdout + proc.stderr


def test_the_real_model_benchmark_tells_a_too_long_quote_from_a_too_short_one():
    import importlib.util
    from pathlib import Path

    from mtcb_curate.checks import Limits
    from mtcb_curate.llm.generate import check_candidate

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "e2e_local_llm.py"
    spec = importlib.util.spec_from_file_location("e2e_local_llm", script)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    window = " ".join(f"Revenue in segment {i} was ${i},000 million in 2022." for i in range(40))
    limits = Limits()
    reasons = {}
    for name, passage in (("long", window[:limits.max_chars + 300]), ("short", window[:limits.min_chars - 5])):
        _, problems, _ = check_candidate({"question": "What was revenue in segment 1 in 2022?",
                                          "answer": "$1,000 million.", "supporting_passage": passage},
                                         window, [], None, limits)
        reasons[name] = [bench.reason_of(p) for p in problems]
    assert "too long" in reasons["long"] and "too short" not in reasons["long"]
    assert "too short" in reasons["short"] and "too long" not in reasons["short"]
