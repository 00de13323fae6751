"""Throughput of pooled LLM calls (``llm.pool``) against a loopback server with a fixed delay.

The server (``ThreadingHTTPServer`` on 127.0.0.1) answers every chat completion after
``--delay`` seconds and serves requests in parallel. Three figures, in the same run:
- the server's own parallel capacity: ``--calls`` requests sent by a direct client (raw
  ``http.client`` in ``--concurrency`` threads), in requests per second;
- ``llm.pool.run_ordered`` over ``ChatClient.complete`` with concurrency ``--concurrency``
  (target: at least 0.8x the capacity, issue 18);
- the same with concurrency 1 (target: unchanged, about 1 / delay requests per second).

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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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


if __name__ == "__main__":
    main()
