"""Measure the review app as a person sees it: in a pseudo-terminal, frame by frame.

Run from the project root (the project and ``pyte`` installed: ``pip install -e '.[bench]'``)::

    python benchmarks/bench_pty.py                       # latency at ficha scale and 20,000 pairs
    python benchmarks/bench_pty.py --rounds 3 --presses 200
    python benchmarks/bench_pty.py --only memory,startup
    python benchmarks/bench_pty.py --only background     # 100,000 pairs: CPU and key stalls
    python benchmarks/bench_pty.py --workspace postgres  # latency with the workspace on a local PostgreSQL
    python benchmarks/bench_pty.py --workspace postgres --pg-delay-ms 2  # ... reached across a network

Method. Each program runs as a child of this process with a pseudo-terminal (``os.openpty``) as
its stdin, stdout and stderr, ``TERM=xterm-256color``, the size set with ``TIOCSWINSZ`` (changed
during a run with ``TIOCSWINSZ`` + ``SIGWINCH``). Textual asks the terminal whether it supports
synchronized output (DECRQM ``ESC[?2026$p``); this process answers ``ESC[?2026;2$y`` (supported,
currently reset), so Textual brackets every frame with ``ESC[?2026h`` ... ``ESC[?2026l``. Every
read from the pty is timestamped (``time.perf_counter``) as it arrives; after a run the bytes
are replayed through ``pyte`` (a VT100 emulator), frame by frame, and each frame end is stamped
with the arrival time of the read that held its ``ESC[?2026l``. The screen after each frame
tells which pair the QA panel's head line (``#ID  STATUS``) shows.

A key's latency is the time from writing the key to the pty until the end of the first frame
whose head line shows the pair that key leads to (accept, ``a``, moves to the next pair: the
id after ``k`` presses is the start id + ``k`` on a fresh workspace). Frames per key: every
frame that ends between a key and the next one (paced mode); "empty" frames are those after
which the emulated screen is unchanged.

The anchor is a trivial full-screen Textual app (one ``Static`` filling the screen, replaced by
a new full screen of text with the counter on its first line on every ``a``), measured the same
way in the same run. Rounds interleave app and anchor, and every ratio is per round. The
review screen draws its frames from its own clock (``tui/workarounds/frames.py``: at most one frame per
1/60 s counted from the previous frame, where Textual's timer keeps a grid of ticks);
``--anchor-clock frame`` gives the anchor that clock too, to tell the clock's share of a ratio.

Modes: ``paced`` (keys ``--pace-ms`` apart, 150 ms by default) and ``burst`` (keys
``--burst-ms`` apart, 20 ms by default: a held key). Keys are sent only once the child has been
quiet (under 5 % of a core for 1 s), so the start-up work (passage scan, findability) is over,
except in ``background``, which presses ``j`` every 100 ms from the first frame at 100,000
pairs and reports every key slower than 50 ms while the background work runs, and the CPU time
the app used from its first frame until it was quiet; then the anchor, pressed the same way for
as long (what the terminal and the host give any key in that hour).

``memory`` reports the resident set (``VmRSS``) of the app once quiet against the anchor's, and
the corpus text size (characters of the ``text`` column, as UTF-8 bytes): per round a first
open with an empty user cache, then the same workspace opened again. ``startup`` times,
in fresh processes, the resumed app from spawn to its first frame showing a pair, against a
fresh Python that runs ``datasets.load_dataset`` on the same folder's two configs (warm cache:
one untimed load first), interleaved.
"""

from __future__ import annotations

import argparse
import fcntl
import math
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(HERE, "out")
#: Where the programs run (``--app-root``): ``python -m mtcb_curate`` imports the package of
#: this folder first, so another checkout there measures another commit in the same harness.
APP_ROOT = ROOT
SIZES = [(80, 24), (120, 30), (160, 48)]
END = b"\x1b[?2026l"
QUERY_2026 = b"\x1b[?2026$p"
HEAD_RE = re.compile(r"#(\d+)  (UNDECIDED|ACCEPTED|REJECTED|SKIPPED|FLAGGED|ANCHOR)")
TARGET_RATIO = 1.5
STALL_MS = 50.0
#: Shortest paging in the background run (seconds of j every 100 ms).
PAGING_S = 60.0

ANCHOR_SRC = r'''
import os
import sys
from textual.app import App
from textual.widgets import Static
from rich.text import Text

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()

class Anchor(App):
    CSS = "Static { width: 1fr; height: 1fr; }"
    def compose(self):
        self.n = 0
        yield Static(self.page(), id="s")
    def page(self):
        w, h = self.size
        first = f"#{self.n}  ANCHOR"
        rows = [first] + [" ".join(WORDS[(self.n + r + i) % len(WORDS)] for i in range(w // 6))[:w]
                          for r in range(1, max(1, h))]
        return Text("\n".join(rows))
    def on_key(self, event):
        if event.key == "a":
            self.n += 1
            self.query_one("#s", Static).update(self.page())

if os.environ.get("BENCH_ANCHOR_CLOCK") == "frame":  # --anchor-clock frame: the app's frame clock
    from textual.screen import Screen
    from mtcb_curate.tui.workarounds.frames import PromptFrames

    class FrameClockScreen(PromptFrames, Screen):
        pass

    Anchor.get_default_screen = lambda self: FrameClockScreen(id="_default")

Anchor().run()
'''


def _env(config: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TERM="xterm-256color", HF_HUB_OFFLINE="1", TEXTUAL_ANIMATIONS="none", COLORTERM="truecolor")
    env.pop("TEXTUAL", None)
    env.pop("TMUX", None)
    if config:
        env["MTCB_CURATE_CONFIG"] = config
    return env


def _config(tmp: str) -> str:
    # Every `a` decides at once: accepting a failing pair asks first by default.
    path = os.path.join(tmp, "bench-config.toml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[review]\nconfirm_failing_accept = false\n")
    return path


class PtyChild:
    """A program on a pseudo-terminal; reads are timestamped and replayed through pyte."""

    def __init__(self, argv: list[str], size: tuple[int, int], env: dict[str, str]):
        import pyte

        self.cols, self.rows = size
        self.master, slave = os.openpty()
        self._winsize(slave)
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, cwd=APP_ROOT)
        os.close(slave)
        self.chunks: list[tuple[float, bytes]] = []  # everything read, not yet replayed
        self.screen = pyte.Screen(self.cols, self.rows)
        self.stream = pyte.ByteStream(self.screen)
        self._buf = b""
        self._scan = b""
        self.frames: list[tuple[float, int | None, bool]] = []  # (end time, head id, screen changed)
        self._last_display: list[str] | None = None

    def _winsize(self, fd: int) -> None:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.cols, 0, 0))

    def resize(self, size: tuple[int, int]) -> None:
        self.process()
        self.cols, self.rows = size
        self._winsize(self.master)
        self.screen.resize(self.rows, self.cols)
        os.kill(self.proc.pid, signal.SIGWINCH)

    def pump(self, timeout: float) -> None:
        """Read whatever arrives within ``timeout`` seconds; answer the synchronized-output query."""
        end = time.perf_counter() + timeout
        while True:
            left = end - time.perf_counter()
            r, _, _ = select.select([self.master], [], [], max(0.0, left))
            if r:
                try:
                    data = os.read(self.master, 1 << 16)
                except OSError:
                    return
                t = time.perf_counter()
                if not data:
                    return
                self.chunks.append((t, data))
                scan = self._scan + data
                if QUERY_2026 in scan:
                    os.write(self.master, b"\x1b[?2026;2$y")
                    scan = scan.replace(QUERY_2026, b"")
                self._scan = scan[-16:]
            if left <= 0:
                return

    def pump_until_quiet(self, quiet_s: float, timeout: float) -> None:
        """Read until nothing has arrived for ``quiet_s`` seconds (or ``timeout`` passed)."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            before = len(self.chunks)
            self.pump(quiet_s)
            if len(self.chunks) == before:
                return

    def send(self, key: bytes) -> float:
        t = time.perf_counter()
        os.write(self.master, key)
        return t

    def process(self) -> None:
        """Replay the reads so far through pyte, frame by frame."""
        for t, data in self.chunks:
            buf = self._buf + data
            while True:
                i = buf.find(END)
                if i < 0:
                    break
                self.stream.feed(buf[: i + len(END)])
                buf = buf[i + len(END):]
                display = self.screen.display
                changed = display != self._last_display
                self._last_display = display
                self.frames.append((t, self.head_id(display), changed))
            keep = len(END) - 1
            if len(buf) > keep:
                self.stream.feed(buf[:-keep])
                buf = buf[-keep:]
            self._buf = buf
        self.chunks = []

    @staticmethod
    def head_id(display: list[str]) -> int | None:
        for line in display:
            m = HEAD_RE.search(line)
            if m:
                return int(m.group(1))
        return None

    def current_head(self) -> int | None:
        self.process()
        return self.head_id(self.screen.display)

    def tree(self) -> list[int]:
        """The app's process and every process below it (its analysis worker), alive now."""
        return process_tree(self.proc.pid)

    def cpu_seconds(self) -> float:
        """CPU seconds of the app's process with every child it has waited for (a finished
        analysis worker), plus those of its live descendants."""
        total = 0.0
        for k, pid in enumerate(self.tree()):
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = int(fields[11]) + int(fields[12])
            if k == 0:
                ticks += int(fields[13]) + int(fields[14])  # cutime, cstime: its reaped children
            total += ticks / os.sysconf("SC_CLK_TCK")
        return total

    def rss_mb(self) -> float:
        """The resident sets of the app's process and its live descendants, summed (MB)."""
        return sum(status_mb(pid, "VmRSS") for pid in self.tree())

    def start_sampling(self, every_s: float = 0.02) -> None:
        """Sample :meth:`rss_mb` in a thread every ``every_s`` seconds; ``peak_rss_mb`` keeps the
        highest sum seen and ``peak_pss_mb`` the highest proportional set (shared pages split
        between the processes that map them: the memory the processes take together)."""
        self.peak_rss_mb = 0.0
        self.peak_pss_mb = 0.0
        self.peak_processes = 0
        #: pid -> [its command line (short), its own peak RSS (MB), the tree's sum at that peak]
        self.peak_by_process: dict[int, list] = {}
        #: pid -> its RSS (MB) when the sum was at its peak
        self.at_peak: dict[int, float] = {}
        self._sampling = True

        def sample() -> None:
            n = 0
            while self._sampling and self.proc.poll() is None:
                pids = self.tree()
                each = {p: status_mb(p, "VmRSS") for p in pids}
                if sum(each.values()) > self.peak_rss_mb:
                    self.peak_rss_mb = sum(each.values())
                    self.at_peak = dict(each)
                for p, mb in each.items():
                    row = self.peak_by_process.get(p)
                    if row is None:
                        row = self.peak_by_process[p] = [_command(p), 0.0]
                    row[1] = max(row[1], mb)
                self.peak_processes = max(self.peak_processes, len(pids))
                if n % 5 == 0 or len(pids) > 1:
                    self.peak_pss_mb = max(self.peak_pss_mb, sum(pss_mb(p) for p in pids))
                n += 1
                time.sleep(every_s)

        self._sampler = threading.Thread(target=sample, daemon=True)
        self._sampler.start()

    def stop_sampling(self) -> None:
        self._sampling = False
        if getattr(self, "_sampler", None) is not None:
            self._sampler.join()

    def wait_head(self, timeout: float = 120.0) -> float:
        """Wait for a frame showing a head line; return its time."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            self.pump(0.02)
            self.process()
            for t, hid, _ in self.frames:
                if hid is not None:
                    return t
            if self.proc.poll() is not None:
                break
        tail = b"".join(c for _, c in self.chunks)[-2000:]
        raise RuntimeError(f"no head line within {timeout} s: {self.screen.display[:5]} {tail!r}")

    def wait_quiet(self, timeout: float = 300.0, window: float = 1.0, share: float = 0.05) -> float:
        """Wait until the child uses under ``share`` of a core for ``window`` seconds."""
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < timeout:
            c0 = self.cpu_seconds()
            self.pump(window)
            if self.cpu_seconds() - c0 < share * window:
                break
        self.process()
        return time.perf_counter() - t0

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def _command(pid: int) -> str:
    """``pid``'s command line, its last three words (for the per-process peaks)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
    except OSError:
        return "?"
    return " ".join(w.decode(errors="replace")[-40:] for w in words if w)[-120:]


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants alive now (``/proc/PID/task/TID/children``), root first."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    todo.extend(int(x) for x in fh.read().split())
        except OSError:
            continue
    return out


def status_mb(pid: int, field: str) -> float:
    """A ``/proc/PID/status`` size field in MB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def pss_mb(pid: int) -> float:
    """The proportional set size of a process in MB (``/proc/PID/smaps_rollup``; 0 when gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def press_series(child: PtyChild, key: bytes, n: int, gap_s: float) -> dict:
    """Press ``key`` ``n`` times ``gap_s`` apart; latency of each to the frame with the next pair."""
    child.process()
    child.frames.clear()
    start = child.current_head()
    if start is None:
        raise RuntimeError("no head line on screen before the presses")
    times = []
    cpu0 = child.cpu_seconds()
    next_t = time.perf_counter()
    for _ in range(n):
        now = time.perf_counter()
        if next_t > now:
            child.pump(next_t - now)
        times.append(child.send(key))
        next_t = times[-1] + gap_s
    # Read until the app has written nothing for 0.5 s (at most 30 s), and only then replay
    # the bytes through pyte: replaying while frames still arrive stopped the reading, the
    # pseudo-terminal's buffer filled, the app's writer thread waited in write(), and the
    # last keys of a burst were timed 1-2.5 s late (the replay's time, not the app's).
    child.pump_until_quiet(max(0.5, gap_s), timeout=30)
    cpu = child.cpu_seconds() - cpu0
    child.process()
    frames = child.frames
    lat, per_key, empty, missing = [], [], [], 0
    for k, tk in enumerate(times, 1):
        hit = next((t for t, hid, _ in frames if t >= tk and hid is not None and hid >= start + k), None)
        if hit is None:
            missing += 1
        else:
            lat.append((hit - tk) * 1000)
        t_next = times[k] if k < len(times) else tk + gap_s
        window = [f for f in frames if tk <= f[0] < t_next]
        per_key.append(len(window))
        empty.append(sum(1 for f in window if not f[2]))
    return {"lat": lat, "frames_per_key": statistics.fmean(per_key) if per_key else float("nan"),
            "empty_per_key": statistics.fmean(empty) if empty else float("nan"),
            "missing": missing, "cpu_ms_per_key": cpu * 1000 / n, "end_head": child.head_id(child.screen.display), "start_head": start}


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)] if s else float("nan")


def _summ(r: dict) -> dict:
    xs = r["lat"]
    return {"median": statistics.median(xs) if xs else float("nan"), "p99": _pct(xs, 0.99),
            "max": max(xs) if xs else float("nan"), "n": len(xs), "fpk": r["frames_per_key"],
            "empty": r["empty_per_key"], "missing": r["missing"], "cpu": r["cpu_ms_per_key"]}


def _dataset(name: str, pairs: int) -> str:
    folder = os.path.join(DEFAULT_OUT, name)
    if not os.path.isfile(os.path.join(folder, "README.md")):
        sys.path.insert(0, HERE)
        from make_synthetic import make_dataset
        from pathlib import Path

        print(f"generating {folder} ({pairs:,} pairs) ...", file=sys.stderr, flush=True)
        make_dataset(Path(folder), docs=88, pairs=pairs, mean_chars=550_000, seed=0)
    return folder


def app_argv(data: str, ws: str) -> list[str]:
    return [sys.executable, "-m", "mtcb_curate", "ficha", "--source", data, "--workspace", ws]


def anchor_argv() -> list[str]:
    return [sys.executable, "-c", ANCHOR_SRC]


def run_latency(label: str, argv: list[str], env: dict, sizes, presses: int, pace_s: float, burst_s: float,
                pre_keys: bytes = b"", quiet_timeout: float = 300.0) -> dict:
    out = {}
    child = PtyChild(argv, sizes[0], env)
    try:
        child.wait_head()
        if pre_keys:
            child.send(pre_keys)
        out["quiet_s"] = child.wait_quiet(timeout=quiet_timeout)
        out["rss_mb"] = child.rss_mb()
        for size in sizes:
            if (child.cols, child.rows) != size:
                child.resize(size)
                child.pump(0.5)
                child.wait_quiet()
            for mode, gap in (("paced", pace_s), ("burst", burst_s)):
                r = press_series(child, b"a", presses, gap)
                child.wait_quiet(window=0.5)
                out[f"{size[0]}x{size[1]} {mode}"] = _summ(r)
    finally:
        child.close()
    return out


def _workspaces(args, tmp: str):
    """A function giving each app run a new workspace: a folder under ``tmp`` (SQLite), or a
    new schema on a local PostgreSQL server started here (``--workspace postgres``; tests'
    ``pgserver``: fsync and synchronous_commit on), and the server to stop (or None)."""
    if args.workspace == "sqlite":
        return (lambda name: os.path.join(tempfile.mkdtemp(prefix="ws-", dir=tmp), "ws")), None
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from pgserver import PgServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries (initdb, pg_ctl) for --workspace postgres")
    server = PgServer(bin_dir, durable=True)
    if not args.pg_delay_ms:
        return (lambda name: server.url(name)), server
    proxy = DelayProxy(server.port, args.pg_delay_ms / 1000)
    print(f"PostgreSQL through a relay adding {args.pg_delay_ms:g} ms each way "
          f"(a round trip {2 * args.pg_delay_ms:g} ms longer)", file=sys.stderr, flush=True)
    return (lambda name: server.url(name).replace(f":{server.port}/", f":{proxy.port}/")), server


class DelayProxy:
    """A TCP relay on 127.0.0.1 that holds every chunk ``delay_s`` seconds each way before
    passing it on: a database server across a network (``--pg-delay-ms``). Threads, one pair
    per direction of each connection; they end with the connection."""

    def __init__(self, target_port: int, delay_s: float):
        import socket

        self.target_port, self.delay_s = target_port, delay_s
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket

        while True:
            client, _ = self._listener.accept()
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pipe(client, upstream)
            self._pipe(upstream, client)

    def _pipe(self, src, dst) -> None:
        import queue
        import socket

        held: queue.Queue = queue.Queue()

        def read() -> None:
            while True:
                try:
                    data = src.recv(65536)
                except OSError:
                    data = b""
                held.put((time.monotonic() + self.delay_s, data))
                if not data:
                    return

        def write() -> None:
            while True:
                due, data = held.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    if not data:
                        dst.shutdown(socket.SHUT_WR)
                        return
                    dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()


def bench_latency(args, tmp: str) -> None:
    new_workspace, server = _workspaces(args, tmp)
    try:
        _bench_latency(args, tmp, new_workspace)
    finally:
        if server is not None:
            server.cleanup()


def _bench_latency(args, tmp: str, new_workspace) -> None:
    config = _config(tmp)
    env = _env(config)
    if args.anchor_clock == "frame":
        env["BENCH_ANCHOR_CLOCK"] = "frame"
    scales = [("ficha", _dataset("ficha", 1331), b""), ("20k", _dataset("pairs20k", 20_000), b"")]
    if args.scales:
        scales = [s for s in scales if s[0] in args.scales.split(",")]
    if args.source:
        scales = [(os.path.basename(os.path.normpath(args.source)), args.source, b"")]
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    rows = []
    for rnd in range(args.rounds):
        for scale, data, pre in scales:
            ws = new_workspace(f"bench_{rnd + 1}_{scale}")
            t = time.perf_counter()
            app = run_latency("app", app_argv(data, ws), env, sizes, args.presses,
                              args.pace_ms / 1000, args.burst_ms / 1000, pre)
            anchor = run_latency("anchor", anchor_argv(), env, sizes, args.presses, args.pace_ms / 1000,
                                 args.burst_ms / 1000)
            print(f"round {rnd + 1} {scale}: {time.perf_counter() - t:.0f} s; load {os.getloadavg()[0]:.1f}; "
                  f"app quiet after {app['quiet_s']:.0f} s", file=sys.stderr, flush=True)
            for key in app:
                if isinstance(app[key], dict):
                    a, b = app[key], anchor[key]
                    print(f"  {key}: app {a['median']:.1f}/{a['p99']:.1f} ms ({a['fpk']:.2f} frames/key), anchor "
                          f"{b['median']:.1f}/{b['p99']:.1f} ms, ratio {a['median'] / b['median']:.2f}/"
                          f"{a['p99'] / b['p99']:.2f}; CPU {a['cpu']:.1f} vs {b['cpu']:.1f} ms/key",
                          file=sys.stderr, flush=True)
            rows.append((rnd + 1, scale, app, anchor))
    print(f"\nkey `a` -> first frame showing the next pair (ms); {args.workspace} workspace; {args.presses} presses per mode; "
          f"paced {args.pace_ms:.0f} ms, burst {args.burst_ms:.0f} ms; load average now "
          f"{os.getloadavg()[0]:.1f} (2 cores, shared)")
    print(f"{'round':>5} {'scale':>6} {'size/mode':>14} | {'app med':>7} {'p99':>6} {'fr/key':>6} {'empty':>5} | "
          f"{'anchor med':>10} {'p99':>6} {'fr/key':>6} | {'ratio med':>9} {'p99':>6} | {'CPU ms/key app':>14} {'anchor':>6}")
    ratios: dict[tuple, list] = {}
    for rnd, scale, app, anchor in rows:
        for key in app:
            if not isinstance(app[key], dict):
                continue
            a, b = app[key], anchor[key]
            rm, rp = a["median"] / b["median"], a["p99"] / b["p99"]
            ratios.setdefault((scale, key), []).append((rm, rp))
            miss = f" ({a['missing']} missed)" if a["missing"] else ""
            print(f"{rnd:>5} {scale:>6} {key:>14} | {a['median']:7.1f} {a['p99']:6.1f} {a['fpk']:6.2f} "
                  f"{a['empty']:5.2f} | {b['median']:10.1f} {b['p99']:6.1f} {b['fpk']:6.2f} | {rm:9.2f} {rp:6.2f} | {a['cpu']:14.1f} {b['cpu']:6.1f}{miss}")
    print("\nratio app/anchor, median over rounds (target <= %.1f at median and p99):" % TARGET_RATIO)
    for (scale, key), rs in ratios.items():
        rm = statistics.median(r[0] for r in rs)
        rp = statistics.median(r[1] for r in rs)
        ok = "ok" if rm <= TARGET_RATIO and rp <= TARGET_RATIO else "MISSED"
        print(f"  {scale:>6} {key:>14}: median {rm:.2f}x, p99 {rp:.2f}x  {ok}")
    for rnd, scale, app, anchor in rows:
        print(f"  RSS once quiet, round {rnd} {scale}: app {app['rss_mb']:.0f} MB, anchor {anchor['rss_mb']:.0f} MB")


def corpus_bytes(data: str) -> int:
    import pyarrow.parquet as pq

    total = 0
    folder = os.path.join(data, "corpus")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".parquet"):
            col = pq.read_table(os.path.join(folder, name), columns=["text"]).column("text")
            total += sum(len(s.encode("utf-8")) for s in col.to_pylist())
    return total


def questions_bytes(data: str) -> int:
    """UTF-8 bytes of every question, answer and supporting passage of the folder's questions."""
    import pyarrow.parquet as pq

    total = 0
    folder = os.path.join(data, "questions")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".parquet"):
            table = pq.read_table(os.path.join(folder, name), columns=["question", "answer", "supporting_passage"])
            total += sum(len(str(s).encode("utf-8")) for col in table.columns for s in col.to_pylist())
    return total


def bench_memory(args, tmp: str) -> None:
    data = _dataset("ficha", 1331)
    text = corpus_bytes(data) / 2**20
    size = (120, 30)
    rows = []
    for rnd in range(args.rounds):
        # Each round has its own user cache: the first open finds the token cache empty (it
        # tokenizes the corpus, fills the cache and lets the tokenizer go), the second is the
        # same workspace opened again, as a curator resumes.
        env = _env(_config(tmp))
        env["XDG_CACHE_HOME"] = tempfile.mkdtemp(dir=tmp, prefix="cache-")
        ws = os.path.join(tempfile.mkdtemp(dir=tmp), "ws")
        for label, argv in (("first open", app_argv(data, ws)), ("reopened", app_argv(data, ws)),
                            ("anchor", anchor_argv())):
            child = PtyChild(argv, size, env)
            child.start_sampling()
            try:
                child.wait_head()
                first = child.rss_mb()
                child.wait_quiet()
                quiet = child.rss_mb()
                child.stop_sampling()
                rows.append((rnd + 1, label, first, quiet, child.peak_rss_mb, child.peak_pss_mb, child.peak_processes))
            finally:
                child.stop_sampling()
                child.close()
    print(f"\nmemory (MB; every process of the app: the app and its analysis worker) at ficha scale; corpus text "
          f"{text:.1f} MB (UTF-8); target: peak of all processes together <= 4x the text ({4 * text:.0f} MB)")
    for rnd, label, first, quiet, peak, pss, procs in rows:
        print(f"  round {rnd} {label:>10}: first frame {first:6.0f}, quiet {quiet:6.0f}; peak RSS summed {peak:6.0f} "
              f"({peak / text:.2f}x the text), peak PSS {pss:6.0f} ({pss / text:.2f}x); processes at most {procs}")


def _with_chunk_index(data: str, tmp: str) -> str:
    """A copy of the dataset folder ``data`` whose pairs all have chunk_index 0 (the corpus
    linked, not copied): the review screen then needs every document's windows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tempfile.mkdtemp(dir=tmp, prefix="chunked-")
    for name in os.listdir(data):
        if name != "questions":
            os.symlink(os.path.abspath(os.path.join(data, name)), os.path.join(out, name))
    os.makedirs(os.path.join(out, "questions"))
    for name in os.listdir(os.path.join(data, "questions")):
        table = pq.read_table(os.path.join(data, "questions", name))
        i = table.schema.get_field_index("chunk_index")
        table = table.set_column(i, table.schema.field(i), pa.array([0] * table.num_rows, pa.int64()))
        pq.write_table(table, os.path.join(out, "questions", name))
    return out


def bench_background(args, tmp: str) -> None:
    env = _env(_config(tmp))
    data = _dataset("ficha", 1331) if args.background_scale == "ficha" else _dataset("pairs100k", 100_000)
    if args.chunk_index:
        data = _with_chunk_index(data, tmp)
    size = (120, 30)

    def run_env() -> dict:
        # --cold-cache: each run with its own empty user cache (the token cache among it)
        return {**env, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=tmp, prefix="cache-")} if args.cold_cache else env

    print(f"\nbackground: {'an empty user cache per run' if args.cold_cache else 'the user cache as it is'}"
          f"{', every pair with a chunk_index' if args.chunk_index else ''}", flush=True)
    # Run 1, no keys: the app's CPU from its first frame until it is quiet (its start-up work).
    ws = os.path.join(tempfile.mkdtemp(dir=tmp), "ws")
    child = PtyChild(app_argv(data, ws), size, run_env())
    child.start_sampling()
    try:
        child.wait_head(300)
        cpu0 = child.cpu_seconds()
        wall = child.wait_quiet(timeout=args.background_s)
        cpu = child.cpu_seconds() - cpu0
        quiet = wall < args.background_s
        child.stop_sampling()
    finally:
        child.stop_sampling()
        child.close()
    text = (corpus_bytes(data) + questions_bytes(data)) / 2**20
    print(f"\nbackground work at {args.background_scale} ({size[0]}x{size[1]}), no keys: {cpu:.1f} s of CPU (every "
          f"process) from the first frame {'until quiet' if quiet else 'and still busy'} after {wall:.0f} s wall "
          f"(target <= 30 s CPU); peak RSS summed {child.peak_rss_mb:.0f} MB ({child.peak_rss_mb / text:.1f}x the "
          f"{text:.1f} MB of text: corpus and questions), peak PSS {child.peak_pss_mb:.0f} MB "
          f"({child.peak_pss_mb / text:.1f}x); processes at most {child.peak_processes}", flush=True)
    for pid, (command, mb) in child.peak_by_process.items():
        print(f"  process {pid} ({command}): its own peak RSS {mb:.0f} MB, {child.at_peak.get(pid, 0):.0f} MB at "
              f"the sum's peak", flush=True)
    if args.first_only:
        return
    # The same workspace opened again: its analysis is read from the workspace, no pass runs.
    child = PtyChild(app_argv(data, ws), size, run_env())
    try:
        child.wait_head(300)
        cpu0 = child.cpu_seconds()
        wall = child.wait_quiet(timeout=args.background_s)
        cpu = child.cpu_seconds() - cpu0
    finally:
        child.close()
    print(f"  reopened: {cpu:.1f} s of CPU from the first frame until quiet after {wall:.0f} s wall", flush=True)
    # Run 2: j every 100 ms from the first frame, for as long as run 1 was busy (at most 120 s)
    # and at least PAGING_S: a minute of paging passes the collector policy's forced full
    # collection (tui/memory.py), which keys held without a pause meet after about 30 s.
    paging_s = max(min(wall, 120.0), PAGING_S)
    child = PtyChild(app_argv(data, os.path.join(tempfile.mkdtemp(dir=tmp), "ws")), size, run_env())
    try:
        child.wait_head(300)
        lat = _page(child, b"j", paging_s)
    finally:
        child.close()
    print(f"  j every 100 ms for {paging_s:.0f} s from the first frame: {_stalls(lat)}; target: none)", flush=True)
    # Run 3, the anchor (a trivial Textual app, no background work), the same keys for as long:
    # what this terminal and host give a key at all in the same hour.
    child = PtyChild(anchor_argv(), size, env)
    try:
        child.wait_head(60)
        lat = _page(child, b"a", paging_s)
    finally:
        child.close()
    print(f"  the anchor, a key every 100 ms for {paging_s:.0f} s: {_stalls(lat)})", flush=True)


def _page(child: PtyChild, key: bytes, seconds: float) -> list[float]:
    """Press ``key`` every 100 ms for ``seconds`` from now; each key's latency (ms; inf: no
    frame showed it) to the first frame whose head line shows the next pair."""
    start = child.current_head()
    child.frames.clear()
    times = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        times.append(child.send(key))
        child.pump(0.1)
    child.pump(2.0)
    child.process()
    lat = []
    for k, tk in enumerate(times, 1):
        hit = next((t for t, hid, _ in child.frames if t >= tk and hid is not None and hid >= start + k), None)
        lat.append((hit - tk) * 1000 if hit is not None else float("inf"))
    return lat


def _stalls(lat: list[float]) -> str:
    """'N keys, median, p99; M over STALL_MS (largest: [...]' for key latencies in ms."""
    stalls = sorted(x for x in lat if x > STALL_MS)
    shown = [x for x in lat if x != float("inf")]
    return (f"{len(lat)} keys, median {statistics.median(shown):.1f} ms, p99 {_pct(lat, 0.99):.1f} ms; "
            f"{len(stalls)} over {STALL_MS:.0f} ms (largest: {[round(x) if x != float('inf') else 'never' for x in stalls[-8:]]}")


LOAD_SRC = r'''
import os, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
import datasets
for c in ("corpus", "questions"):
    datasets.load_dataset(sys.argv[1], c, split="train")
'''


def bench_startup(args, tmp: str) -> None:
    env = _env(_config(tmp))
    data = _dataset("ficha", 1331)
    ws = os.path.join(tempfile.mkdtemp(dir=tmp), "ws")
    size = (120, 30)
    # Warm up: the workspace exists (resumed) and datasets' cache holds both configs.
    child = PtyChild(app_argv(data, ws), size, env)
    child.wait_head()
    child.close()
    subprocess.run([sys.executable, "-c", LOAD_SRC, data], env=env, check=True, capture_output=True)
    rows = []
    for rnd in range(args.rounds * 2 + 1):
        child = PtyChild(app_argv(data, ws), size, env)
        try:
            app_s = child.wait_head() - child.t_spawn
        finally:
            child.close()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", LOAD_SRC, data], env=env, check=True, capture_output=True)
        load_s = time.perf_counter() - t
        rows.append((app_s, load_s))
        print(f"  startup round {rnd + 1}: app to first pair frame {app_s:.2f} s, load_dataset x2 {load_s:.2f} s, "
              f"ratio {app_s / load_s:.2f}", flush=True)
    med_ratio = statistics.median(a / b for a, b in rows)
    print(f"\nstart-up resumed at ficha scale: app {statistics.median(a for a, _ in rows):.2f} s median, "
          f"load_dataset {statistics.median(b for _, b in rows):.2f} s; ratio per round median {med_ratio:.2f} "
          f"(target <= 1.1: {'ok' if med_ratio <= 1.1 else 'MISSED'})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The review app in a pseudo-terminal, against a trivial Textual app.")
    ap.add_argument("--only", default="latency", help="comma list of latency, memory, background, startup")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--presses", type=int, default=100)
    ap.add_argument("--pace-ms", type=float, default=150)
    ap.add_argument("--burst-ms", type=float, default=20)
    ap.add_argument("--anchor-clock", choices=("textual", "frame"), default="textual",
                    help="latency: the anchor draws from Textual's screen timer (default) or from the "
                    "review screen's FrameClock (mtcb_curate.tui.workarounds.frames), as the app does")
    ap.add_argument("--pg-delay-ms", type=float, default=0.0,
                    help="--workspace postgres: reach the server through a relay adding this many ms each way")
    ap.add_argument("--sizes", default=",".join(f"{c}x{r}" for c, r in SIZES))
    ap.add_argument("--scales", default="", help="comma list of ficha, 20k (default both)")
    ap.add_argument("--source", default="", help="latency: this dataset folder instead of the synthetic scales "
                    "(for example ../shared/data; --presses below its number of pairs)")
    ap.add_argument("--tmp", help="parent folder for the workspaces")
    ap.add_argument("--workspace", choices=("sqlite", "postgres"), default="sqlite",
                    help="latency: where the app's workspace lives (postgres: a local server started here)")
    ap.add_argument("--background-scale", choices=("100k", "ficha"), default="100k")
    ap.add_argument("--cold-cache", action="store_true",
                    help="background: each run with an empty user cache (the token cache: a corpus never opened)")
    ap.add_argument("--chunk-index", action="store_true",
                    help="background: every pair with a chunk_index (the screen needs every document's windows)")
    ap.add_argument("--first-only", action="store_true",
                    help="background: the first open only (no reopen, no keys, no anchor)")
    ap.add_argument("--background-s", type=float, default=400.0, help="longest wait for the 100k app to be quiet")
    ap.add_argument("--app-root", default=ROOT,
                    help="run the app from this checkout (for example a git worktree of another commit: an A/B)")
    args = ap.parse_args(argv)
    global APP_ROOT
    APP_ROOT = os.path.abspath(args.app_root)
    tmp = tempfile.mkdtemp(prefix="bench-pty-", dir=args.tmp)
    for part in args.only.split(","):
        {"latency": bench_latency, "memory": bench_memory, "background": bench_background,
         "startup": bench_startup}[part](args, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
