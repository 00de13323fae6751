"""Shared test helpers: a session on a source, the review app under ``run_test``, the CLI in-process.

Three set-ups the tests repeat, written once:

- :func:`opened` / :func:`write_source`: a :class:`ReviewSession` on a folder of JSON Lines (the
  tiny dataset of ``conftest`` by default) or on the bundled sample, with its workspace in a
  given folder;
- :func:`review_app`: ``CurateApp`` on a session under ``App.run_test(size=...)``, settled (the
  first frame drawn, the passage scan and any other worker finished), yielding ``(app, pilot)``
  and closing the session's workspace afterwards;
- :func:`call_main`: ``mtcb_curate.cli.main(argv)`` called in this process, returning
  ``(exit code, stdout, stderr)`` as a :class:`CliResult`; :func:`run_cli` runs the same
  command as a real process (``python -m mtcb_curate``), for exit codes and tracebacks as a
  user sees them.

``conftest.py`` exposes these as fixtures (``ws``, ``review_at_once``, ``cli``).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import asynccontextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import AsyncIterator, NamedTuple

from conftest import CORPUS, QUESTIONS, write_jsonl

from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.store.session import ReviewSession

#: Terminal size (columns, rows) of the review app in Pilot tests.
SIZE = (160, 45)

#: The installed console script (``[project.scripts]``), next to this interpreter.
SCRIPT = Path(sys.executable).parent / "mtcb-curate"


# -- a session on a source ----------------------------------------------------------------


def write_source(folder: Path, corpus: list[dict] | None = None, questions: list[dict] | None = None) -> Path:
    """Write ``corpus.jsonl`` and ``questions.jsonl`` (default: conftest's tiny rows) into
    ``folder`` (created) and return it, ready for ``--source``."""
    write_jsonl(folder / "corpus.jsonl", CORPUS if corpus is None else corpus)
    write_jsonl(folder / "questions.jsonl", QUESTIONS if questions is None else questions)
    return folder


def opened(source: Path | None, ws: Path | None, name: str = "ficha", **kw) -> ReviewSession:
    """``open_session`` on ``source`` (a folder, or None with ``sample=True`` or to resume) with
    the workspace in ``ws`` (None: the default one, under the test's XDG_DATA_HOME).

    ``kw`` are further :class:`Options` fields (``read_only``, ``sample``, ``strict``, ...).
    The caller closes ``session.workspace``.
    """
    return open_session(Options(name, source=None if source is None else [str(source)], workspace=ws, **kw))


# -- the review app under run_test --------------------------------------------------------


#: Longest wait for the review screen's analysis in ``settle`` (seconds): a guard against a hang
#: (the analysis of a test's few pairs takes about a second), not a speed target.
ANALYSIS_WAIT_S = 120.0


def _analysis_busy(app) -> bool:
    return any(getattr(screen, "analysis_busy", False) for screen in app.screen_stack)


async def settle(app, pilot, analysis: bool = True) -> None:
    """Let timers due now start their workers, wait for every worker and (``analysis``) for the
    review screen's analysis in its worker process, and let the app process what they posted."""
    import time

    from textual.worker import WorkerCancelled

    await pilot.pause()
    end = time.monotonic() + ANALYSIS_WAIT_S
    while True:
        for _ in range(20):  # an exclusive worker replaced by a newer one is cancelled: wait again
            try:
                await app.workers.wait_for_complete()
                break
            except WorkerCancelled:
                await pilot.pause()  # superseded by a newer worker of its exclusive group: wait for that one
        await pilot.pause()
        if not analysis or not _analysis_busy(app):
            break
        if time.monotonic() > end:
            raise TimeoutError(f"the review screen's analysis did not finish in {ANALYSIS_WAIT_S:.0f} s")
        while _analysis_busy(app) and time.monotonic() < end:
            await pilot.pause(0.02)
        await pilot.pause()


@asynccontextmanager
async def review_app(session: ReviewSession, size: tuple[int, int] = SIZE, close: bool = True,
                     settle_analysis: bool = True, **app_options) -> AsyncIterator[tuple]:
    """``CurateApp(session, **app_options)`` under ``run_test(size=size)``, settled (with its
    analysis unless ``settle_analysis`` is False); yields ``(app, pilot)``. The session's
    workspace is closed on the way out (also on failure) unless ``close`` is False."""
    from mtcb_curate.tui.app import CurateApp

    app = CurateApp(session, **app_options)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot, analysis=settle_analysis)
            yield app, pilot
    finally:
        if close:
            session.workspace.close()


def text_of(app, selector: str) -> str:
    """Plain text of a Static or a Bar, or of a QA panel section given as ``#qa-NAME``."""
    from textual.widgets import Static

    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    if selector.startswith("#qa-"):
        return app.screen.query_one(QAPanel).section_text(selector.removeprefix("#qa-"))
    from mtcb_curate.tui.widgets.bar import Bar

    return str(app.screen.query_one(selector, (Static, Bar)).content)


def text_of_head(app) -> str:
    """The QA panel's head line as painted (``#ID  STATUS ...``)."""
    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    panel = app.screen.query_one(QAPanel)
    return "".join(seg.text for seg in panel.render_line(0)).strip()


def while_running(fn, marks: list):
    """``fn`` wrapped to keep ``fn`` in ``marks`` while it runs (a test asks "is this call
    inside that one?" with ``if marks``)."""
    def running(*args, **kwargs):
        marks.append(fn)
        try:
            return fn(*args, **kwargs)
        finally:
            marks.pop()
    return running


#: The longest :func:`wait_until` lets the app run before failing (seconds): a guard against a
#: hang on a loaded machine, not a speed target (the states it waits for take well under a second).
WAIT_S = 120.0


async def wait_until(pilot, condition, what: str = "", step: float = 0.02, timeout: float = WAIT_S) -> None:
    """Let the app run (``pilot.pause(step)`` at a time) until ``condition()`` is true.

    Raises:
        AssertionError: naming ``what`` (or the condition) when it is still false after
            ``timeout`` seconds.
    """
    import time

    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"still not {what or getattr(condition, '__name__', 'true')} after {timeout:.0f} s")
        await pilot.pause(step)


def current(app) -> int | None:
    """The pair id under the review queue's cursor."""
    from mtcb_curate.tui.widgets.pair_list import PairList

    return app.screen.query_one(PairList).current


def review_at_once(monkeypatch) -> None:
    """Ask for the review screen's analysis and locate with the first frame (no delay), so
    :func:`settle` sees their results."""
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


# -- the command line ---------------------------------------------------------------------


class CliResult(NamedTuple):
    """What one command printed and returned; the names match ``subprocess.CompletedProcess``."""

    returncode: int
    stdout: str
    stderr: str


def call_main(*args: object, env: dict[str, str] | None = None, stdin: str = "") -> CliResult:
    """``mtcb_curate.cli.main([str(a) for a in args])`` in this process.

    Args:
        args: the command line after ``mtcb-curate`` (paths are turned into strings).
        env: variables set in ``os.environ`` for the call only (restored afterwards).
        stdin: what ``input()`` reads (empty: end of file at once).

    Returns:
        The exit code (argparse's ``SystemExit`` included: 2 for usage errors), and everything
        written to ``sys.stdout`` and ``sys.stderr`` during the call.
    """
    from mtcb_curate.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env or {}}
    old_stdin = sys.stdin
    os.environ.update(env or {})
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin = old_stdin
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return CliResult(code, out.getvalue(), err.getvalue())


def run_cli(*args: object, env: dict[str, str] | None = None, timeout: float = 120,
            script: bool = False) -> subprocess.CompletedProcess:
    """The same command as a real process: ``python -m mtcb_curate`` (or, with ``script``, the
    installed ``mtcb-curate`` console script). ``env`` is the whole environment (default: this
    process's, which the ``isolated_env`` fixture has pointed at temp folders)."""
    exe = [str(SCRIPT)] if script else [sys.executable, "-m", "mtcb_curate"]
    return subprocess.run([*exe, *map(str, args)], env=dict(os.environ) if env is None else env,
                          capture_output=True, text=True, timeout=timeout)


def assert_one_error_line(proc, *fragments: str) -> str:
    """Exit code 2, no traceback, and exactly one stderr line ``mtcb-curate: error: ...``
    containing every fragment (besides the ``mtcb-curate: source: ...`` line a command says
    once the data has loaded); returns that line. ``proc`` is a :class:`CliResult` or a
    ``CompletedProcess``."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("mtcb-curate: source: ")]
    assert len(lines) == 1, proc.stderr
    [line] = lines
    assert line.startswith("mtcb-curate: error: ")
    for f in fragments:
        assert f in line, (f, line)
    return line
