"""The real app in a real terminal (tmux): review, quit, reopen, carry on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

EXE = Path(sys.executable).parent / "mtcb-curate"


class Tmux:
    """A private tmux server (its own socket) running one command in a 160x45 pane."""

    def __init__(self, tmp: Path, name: str):
        self.socket = str(tmp / f"tmux-{name}")
        self.name = name

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], check=True, capture_output=True,
                              text=True).stdout

    def start(self, command: str) -> None:
        self.run("new-session", "-d", "-s", self.name, "-x", "160", "-y", "45", command)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def wait_for(self, *texts: str, timeout: float = 120.0) -> str:
        """The screen once every text is on it; AssertionError after ``timeout`` seconds (a guard
        against a hang: the app starts in seconds, slower on a loaded machine)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            try:
                screen = self.screen()
            except subprocess.CalledProcessError:
                screen = "(session ended)"
            if all(t in screen for t in texts):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{texts!r} never all appeared; screen:\n{screen}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-S", self.socket, "has-session", "-t", self.name],
                              capture_output=True).returncode == 0

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def tmux(tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    if not EXE.exists():
        pytest.skip(f"{EXE} is not installed")
    t = Tmux(tmp_path, "review")
    yield t
    t.kill()


def _command(ws: Path, home: Path, *options: str) -> str:
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(home / "hf"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CONFIG_HOME": str(home / "config"), "TERM": "xterm-256color", "COLORTERM": "truecolor",
           "PATH": os.environ.get("PATH", "")}
    prefix = " ".join(f"{k}='{v}'" for k, v in env.items())
    return f"env -i {prefix} {EXE} ficha --workspace {ws} {' '.join(options)}"


def test_review_quit_reopen_in_tmux(tmux, tmp_path, isolated_env):
    ws = tmp_path / "ws"
    tmux.start(_command(ws, isolated_env, "--sample"))
    tmux.wait_for("decided 0/23", "asked for with --sample", "a accept")
    tmux.keys("a")
    tmux.wait_for("decided 1/23")
    tmux.keys("x")
    tmux.wait_for("Reject pair #1")
    tmux.keys("1")
    tmux.wait_for("decided 2/23", "✗ 1 rejected", "#2 ")
    tmux.keys("f")
    tmux.wait_for("⚑ 1 flagged")
    tmux.keys("q")
    deadline = time.monotonic() + 120
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tmux.alive()

    tmux.start(_command(ws, isolated_env))
    # Resumes from the workspace, at the first undecided pair.
    tmux.wait_for("decided 2/23", "⚑ 1 flagged", "resumed from the workspace", "#3 ")  # flagged is not decided
    tmux.keys("u")
    tmux.wait_for("decided 2/23", "⚑ 0 flagged")
    tmux.keys("q")
