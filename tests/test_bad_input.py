"""Every headless command on bad input, under Python's development mode: no traceback, no
warning, exit code 2 and one error line (``benchmarks/bad_input.py``, 70 cases in one
process), plus a few commands as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_every_command_on_bad_input_in_development_mode():
    proc = subprocess.run([sys.executable, "-X", "dev", str(ROOT / "benchmarks" / "bad_input.py"), "--json"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    out = json.loads(proc.stdout)
    failed = [(r["case"], r["problems"]) for r in out["results"] if r["problems"]]
    assert failed == [] and out["late_warnings"] == [] and out["unraisable"] == [], (failed, proc.stderr[-2000:])
    assert proc.returncode == 0
    assert len(out["results"]) >= 70
    commands = {r["argv"][0] for r in out["results"]}
    assert {"verify", "dedup", "check", "generate", "publish", "export", "repair", "preview", "stats", "team",
            "merge"} <= commands


@pytest.mark.parametrize("argv", [
    ["verify", "ficha", "--source", "{tmp}/missing"],
    ["repair", "ficha", "--sample", "--chunk-index", "--json", "{tmp}/no/such/folder.json"],
    ["export", "ficha", "--sample", "--format", "beir", "--out", "{tmp}/beir"],
])
def test_bad_input_as_a_real_process_in_development_mode(argv, tmp_path):
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-X", "dev", "-m", "mtcb_curate", *(a.format(tmp=tmp_path) for a in argv)],
                          capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.startswith("mtcb-curate: error: ")]) == 1, proc.stderr
    assert not (tmp_path / "beir").exists()
