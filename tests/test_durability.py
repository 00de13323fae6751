"""Nothing acknowledged is lost: SIGKILL a running session mid-way, then reopen the workspace."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mtcb_curate.app.sources import Options, open_session

pytestmark = pytest.mark.slow  # each test runs the real app in a process and kills it

# The child runs the real app (headless, through Pilot) and prints "ACK id status reason" only
# after the key press was handled and the screen shows the pair as decided.
DRIVER = textwrap.dedent("""
    import asyncio, random, sys
    from pathlib import Path
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.widgets.pair_list import PairList

    KEYS = [("a",), ("x", "1"), ("x", "enter"), ("f",), ("space",)]

    async def main(src, ws, seed):
        rng = random.Random(seed)
        session = open_session(Options("ficha", source=[src], workspace=Path(ws)))
        app = CurateApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            queue = app.screen.query_one(PairList)
            print("READY", flush=True)
            while True:
                pid = queue.current
                keys = rng.choice(KEYS)
                await pilot.press(*keys)
                view = session.view(pid)
                row = app.screen.rows.css_class(pid)
                assert row == view.status.value != "undecided"
                print("ACK", pid, view.status.value, (view.reason or "-").replace(" ", "_"), flush=True)
                if queue.cursor + 1 >= len(queue.ids):
                    await pilot.press("u")  # keep going: undo at the end, re-decide
                    print("UNDO", pid, flush=True)

    asyncio.run(main(*sys.argv[1:4]))
""")


def _make_source(tmp_path: Path, n: int = 400) -> Path:
    d = tmp_path / "src"
    d.mkdir()
    text = "\n".join(f"Sentence number {i} of the filing." for i in range(n))
    (d / "corpus.jsonl").write_text(json.dumps({"ticker": "K", "text": text}) + "\n")
    (d / "questions.jsonl").write_text("".join(
        json.dumps({"question": f"What is sentence {i}?", "answer": str(i),
                    "supporting_passage": f"Sentence number {i} of the filing.", "ticker": "K"}) + "\n"
        for i in range(n)))
    return d


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_loses_no_acknowledged_decision(tmp_path, seed):
    src = _make_source(tmp_path)
    ws = tmp_path / "ws"
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(driver), str(src), str(ws), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    acked: dict[int, tuple[str, str | None]] = {}
    target = random.Random(seed).randint(15, 60)
    deadline = time.monotonic() + 60
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.split()
            if parts and parts[0] == "ACK":
                acked[int(parts[1])] = (parts[2], None if parts[3] == "-" else parts[3].replace("_", " "))
            elif parts and parts[0] == "UNDO":
                acked.pop(int(parts[1]), None)
            if len(acked) >= target or time.monotonic() > deadline:
                time.sleep(random.Random(seed).random() * 0.05)  # land anywhere in the next decision
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert len(acked) >= target, proc.stderr.read() if proc.stderr else ""
    session = open_session(Options("ficha", source=[str(src)], workspace=ws))
    try:
        for pid, (status, reason) in acked.items():
            view = session.view(pid)
            assert view.status.value == status, pid
            if status == "rejected" and reason is not None:
                assert view.reason is not None
        # Resume point: the first undecided pair comes after every acknowledged one.
        first = session.first_undecided()
        assert first is not None and first not in acked
    finally:
        session.workspace.close()
