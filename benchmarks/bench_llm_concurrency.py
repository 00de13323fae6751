"""Throughput of pooled LLM calls (``llm.pool``) against a loopback server with a fixed delay.

The server (``ThreadingHTTPServer`` on 127.0.0.1) answers every chat completion after
``--delay`` seconds and serves requests in parallel. Three figures, in the same run:
- the server's own parallel capacity: ``--calls`` requests sent by a direct client (raw
  ``http.client`` in ``--concurrency`` threads), in requests per second;
- ``llm.pool.run_ordered`` over ``ChatClient.complete`` with concurrency ``--concurrency``
  (target: at least 0.8x the capacity);
- the same with concurrency 1 (target: unchanged, about 1 / delay requests per second);
- ``llm.generate.generate_more`` (the real prompts, parsing, checks and commit order) asking for
  one pair from each of ``--calls`` windows of a synthetic document, at ``--concurrency`` and at 1
  (the server quotes a line of the window, so every call gives a pair on its first attempt),
  against the same server run in a child process (its own interpreter, as a real server is),
  with its anchor: the direct parallel client sending the same request bodies (8,192-token
  windows) to it. The run's one-off cutting of the document into windows is timed on its own.

Usage: ``python benchmarks/bench_llm_concurrency.py [--delay 0.2] [--calls 64] [--concurrency 16]``
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(delay: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            time.sleep(delay)
            text = body.get("messages", [{}])[-1].get("content", "")
            if "<<<DOCUMENT WINDOW\n" in text:  # a generation prompt: quote a whole line of the window
                window = text.split("<<<DOCUMENT WINDOW\n", 1)[1].split("\nDOCUMENT WINDOW>>>", 1)[0]
                line = next(ln for ln in window.splitlines() if ln.startswith("Line "))
                text = json.dumps({"question": f"What does the filing say in {line.split(':')[0]}?",
                                   "answer": "It gives a figure.", "supporting_passage": line})
            out = json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                           "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 256  # the default 5 resets connections when many arrive at once

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def direct(port: int, calls: int, concurrency: int) -> float:
    """Requests per second of a raw parallel client."""
    def one(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"direct {i}"}]})
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
        conn.close()

    t = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(calls)))
    return calls / (time.perf_counter() - t)


def pooled(port: int, calls: int, concurrency: int, label: str) -> float:
    """Requests per second of ``run_ordered`` over ``ChatClient.complete`` (no cache)."""
    from mtcb_curate.llm.client import ChatClient, ChatRequest
    from mtcb_curate.llm.config import resolve_config
    from mtcb_curate.llm.pool import run_ordered

    cfg = resolve_config(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", model="m", env={},
                         timeout_s=30.0, max_retries=0)
    client = ChatClient(cfg)
    reqs = [ChatRequest.of([{"role": "user", "content": f"{label} {i}"}]) for i in range(calls)]
    t = time.perf_counter()
    out = run_ordered(client.complete, reqs, concurrency=concurrency)
    elapsed = time.perf_counter() - t
    assert out.error is None and [r.text for r in out.results] == [f"{label} {i}" for i in range(calls)]
    client.close()
    return calls / elapsed


def generation(port: int, calls: int, concurrency: int) -> tuple[float, float]:
    """Pairs per second of ``generate_more`` over ``calls`` windows (no cache): end to end, and
    over its calls only (from the first request sent to the end, so without the run's one-off
    cutting of the document into windows, which tokenizes it)."""
    from mtcb_curate.dataset.model import Document
    from mtcb_curate.llm.client import ChatClient
    from mtcb_curate.llm.config import resolve_config
    from mtcb_curate.llm.generate import generate_more

    lines = 420 * calls  # about 420 of these lines fill one 8,192-token window
    doc = Document("SYN", "".join(f"Line {i}: Zeta Corp reported segment figure {i} of {i * 7} dollars.\n"
                                  for i in range(lines)), 0)
    first: list[float] = []

    class Timed(ChatClient):
        def complete(self, request, **kw):
            if not first:
                first.append(time.perf_counter())
            return super().complete(request, **kw)

    cfg = resolve_config(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", model="m", env={},
                         timeout_s=60.0, max_retries=0)
    client = Timed(cfg)
    t = time.perf_counter()
    res = generate_more(client, doc, [], calls, concurrency=concurrency)
    end = time.perf_counter()
    assert len(res.candidates) == calls and res.paid_calls == calls, res.failures[:3]
    client.close()
    return calls / (end - t), calls / (end - first[0])


def serve_in_child(delay: float):
    """``serve(delay)`` in a child process; returns (process, port)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()

    def run(conn) -> None:
        server = serve(delay)
        conn.send(server.server_address[1])
        threading.Event().wait()

    proc = ctx.Process(target=run, args=(child,), daemon=True)
    proc.start()
    return proc, parent.recv()


def direct_bodies(port: int, bodies: list[bytes], concurrency: int) -> float:
    """Requests per second of a raw parallel client sending ``bodies``."""
    def one(body: bytes) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
        conn.close()

    t = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, bodies))
    return len(bodies) / (time.perf_counter() - t)


def generation_bodies(calls: int) -> list[bytes]:
    """The first-attempt request bodies of ``generation(..., calls, ...)``."""
    from mtcb_curate.dataset.model import Document
    from mtcb_curate.llm.generate import plan_generate_more

    doc = Document("SYN", "".join(f"Line {i}: Zeta Corp reported segment figure {i} of {i * 7} dollars.\n"
                                  for i in range(420 * calls)), 0)
    return [json.dumps({"model": "m", "messages": list(r.messages), **r.params}).encode()
            for r in plan_generate_more(doc, [], calls)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--calls", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    server = serve(args.delay)
    port = server.server_address[1]
    cap = direct(port, args.calls, args.concurrency)
    par = pooled(port, args.calls, args.concurrency, "pool")
    serial_calls = max(4, args.calls // 8)
    one = pooled(port, serial_calls, 1, "one")
    print(f"server delay {args.delay:g} s, {args.calls} calls")
    print(f"direct parallel client ({args.concurrency} threads): {cap:.1f} req/s")
    print(f"pool, concurrency {args.concurrency}: {par:.1f} req/s = {par / cap:.2f}x the server's capacity "
          f"(target >= 0.80x)")
    print(f"pool, concurrency 1 ({serial_calls} calls): {one:.2f} req/s (one at a time: at most "
          f"{1 / args.delay:.2f} req/s)")
    server.shutdown()
    child, child_port = serve_in_child(args.delay)
    gen_cap = direct_bodies(child_port, generation_bodies(args.calls), args.concurrency)
    gen, gen_calls = generation(child_port, args.calls, args.concurrency)
    gen_one, _ = generation(child_port, serial_calls, 1)
    print(f"server in a child process, generation prompts (8,192-token windows): direct parallel client "
          f"{gen_cap:.1f} req/s")
    print(f"generate_more over {args.calls} windows, concurrency {args.concurrency}: {gen:.1f} pairs/s end to end "
          f"= {gen / gen_cap:.2f}x that capacity; from the first request on (without the one-off tokenizing of the "
          f"document): "
          f"{gen_calls:.1f} pairs/s = {gen_calls / gen_cap:.2f}x; concurrency 1 ({serial_calls} windows): "
          f"{gen_one:.2f} pairs/s")
    child.terminate()


if __name__ == "__main__":
    main()
