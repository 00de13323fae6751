"""Start-up of the review app when the Hugging Face Hub hangs, as a person sees it.

Run from the project root (``pyte`` installed: ``pip install -e '.[bench]'``)::

    python benchmarks/bench_hung_hub.py              # 3 rounds at 80x24
    python benchmarks/bench_hung_hub.py --rounds 5 --size 120x30

Method. ``mtcb-curate ficha`` (no workspace, fresh user folders, nothing in the Hub cache) runs
in a pseudo-terminal (``bench_pty.PtyChild``: reads timestamped as they arrive, replayed
through ``pyte`` frame by frame) with ``HF_ENDPOINT`` pointing at a loopback server, and the
time from spawn to the end of the first frame showing a pair (its head line ``#0  UNDECIDED``)
is taken. Servers:

- ``silent``: accepts TCP connections and never answers (before the fix: a blank screen for
  about 400 s, then huggingface_hub's retry lines on screen);
- ``stalls``: answers the reachability probe (``HEAD /``) and never answers anything else (the
  Hub load then goes on in the background after the app's 3 s);
- ``offline`` (the anchor): ``HF_HUB_OFFLINE=1``, the sample at once, in the same run;
- ``silent-cached``: ``silent``, with ``chonkie-ai/ficha`` (the bundled sample's rows) in the
  local Hub cache, loaded once beforehand from the loopback Hub fake of the tests
  (``tests/hubfake.py``): the app opens the cached copy.

Every frame's screen is searched for library text (``Retry``, ``thrown while requesting``,
``Traceback``, ``Warning``). The target: the first frame within 5 s with a hung Hub, and no
library text on screen, ever. ``stalls`` also waits until the top bar reports the background
load's end (within 40 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pty import PtyChild  # noqa: E402

LIBRARY_TEXT = ("Retry", "thrown while requesting", "Traceback", "Warning")
TARGET_S = 5.0


class Silent:
    """Accepts TCP connections, never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(100)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for c in self.held:
            c.close()


class Stalls:
    """Answers ``HEAD /`` (the probe); holds every other request without an answer."""

    def __init__(self) -> None:
        stop = self.stop = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/":
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                stop.wait()

            def do_GET(self) -> None:  # noqa: N802
                stop.wait()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def _env(home: str, endpoint: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TMUX",
                                                            "TEXTUAL", "MTCB_CURATE_DATABASE_URL")}
    env.update(TERM="xterm-256color", COLORTERM="truecolor", TEXTUAL_ANIMATIONS="none",
               XDG_DATA_HOME=os.path.join(home, "data"), XDG_CONFIG_HOME=os.path.join(home, "config"),
               XDG_CACHE_HOME=os.path.join(home, "cache"), HF_HOME=os.path.join(home, "hf"),
               NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    if endpoint is None:
        env["HF_HUB_OFFLINE"] = "1"
    else:
        env["HF_ENDPOINT"] = endpoint
    return env


def _fill_cache(home: str) -> None:
    """Load ``chonkie-ai/ficha`` once through the loopback Hub fake, into ``home``'s Hub cache."""
    import subprocess

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from hubfake import HubFake

    from mtcb_curate import resources

    with HubFake() as fake:
        fake.add_dataset_from_folder("chonkie-ai/ficha", resources.sample_dir("ficha"))
        env = _env(home, fake.url)
        env.update(fake.env(os.path.join(home, "hf")))
        code = ("from mtcb_curate.app.sources import Options, choose_and_load\n"
                "ds, spec = choose_and_load(Options('ficha'), None)\nassert spec == ['chonkie-ai/ficha'], spec\n")
        subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=300)


def _screen_text(child: PtyChild) -> str:
    child.process()
    return "\n".join(child.screen.display)


def one_run(mode: str, size: tuple[int, int], wait_outcome: bool) -> dict:
    server = {"silent": Silent, "silent-cached": Silent, "stalls": Stalls}.get(mode)
    home = tempfile.mkdtemp(prefix="mtcb-hung-")
    if mode == "silent-cached":
        _fill_cache(home)
    srv = server() if server else None
    seen_library = set()
    try:
        child = PtyChild([sys.executable, "-m", "mtcb_curate", "ficha"], size,
                         _env(home, srv.url if srv else None))
        try:
            first = child.wait_head(timeout=600) - child.t_spawn
            child.pump(0.3)
            top = _screen_text(child).splitlines()[0].strip()  # the top bar, once painted
            outcome = None
            if wait_outcome:
                deadline = time.perf_counter() + 40
                while time.perf_counter() < deadline:
                    child.pump(0.2)
                    text = _screen_text(child)
                    seen_library |= {t for t in LIBRARY_TEXT if t in text}
                    if "load failed" in text or "has loaded" in text:
                        outcome = time.perf_counter() - child.t_spawn
                        break
            child.pump(0.5)
            text = _screen_text(child)
            seen_library |= {t for t in LIBRARY_TEXT if t in text}
        finally:
            child.close()
    finally:
        if srv:
            srv.close()
        shutil.rmtree(home, ignore_errors=True)
    return {"first_frame_s": first, "top_bar": top, "library_text": sorted(seen_library), "outcome_s": outcome}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The review app's first frame with a hung Hub, in a pty.")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", default="80x24", help="COLSxROWS (default 80x24)")
    args = ap.parse_args(argv)
    cols, rows = (int(x) for x in args.size.split("x"))
    results: dict[str, list[dict]] = {"offline": [], "silent": [], "silent-cached": [], "stalls": []}
    for rnd in range(args.rounds):
        for mode in results:  # interleaved, so load drifts hit every mode alike
            r = one_run(mode, (cols, rows), wait_outcome=(mode == "stalls"))
            results[mode].append(r)
            print(f"round {rnd + 1} {mode:<8} first frame {r['first_frame_s']:.2f} s"
                  + (f", outcome in the top bar at {r['outcome_s']:.1f} s" if r["outcome_s"] else "")
                  + (f", LIBRARY TEXT {r['library_text']}" if r["library_text"] else "")
                  + f"   | {r['top_bar'][:70]}", flush=True)
    anchor = statistics.median(r["first_frame_s"] for r in results["offline"])
    ok = True
    for mode in ("silent", "silent-cached", "stalls"):
        med = statistics.median(r["first_frame_s"] for r in results[mode])
        worst = max(r["first_frame_s"] for r in results[mode])
        chatter = sorted({t for r in results[mode] for t in r["library_text"]})
        met = worst <= TARGET_S and not chatter
        ok &= met
        print(f"{mode}: first frame median {med:.2f} s, worst {worst:.2f} s (offline anchor {anchor:.2f} s, "
              f"ratio {med / anchor:.2f}); library text on screen: {chatter or 'none'} "
              f"(target <= {TARGET_S:g} s, none: {'met' if met else 'MISSED'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
