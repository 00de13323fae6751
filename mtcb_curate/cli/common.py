"""What every command shares: data options, opening the data and saying which, warnings, the
one progress display, output that survives a closed pipe, and checking output paths first.

Standard output carries a command's result; standard error its progress and outcome lines
(``mtcb-curate: ...``). While a :class:`Progress` is shown, those lines go above it, so lines
from several threads never glue together.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mtcb_curate.errors import CurateError
from mtcb_curate.files import atomic_write_bytes
from mtcb_curate.app.sources import Options

MAX_WARNINGS = 20


def data_options(p: argparse.ArgumentParser) -> None:
    """Add the dataset, source, workspace and column options every command takes."""
    p.add_argument("dataset", help="dataset name (ficha, gacha, ...) or a Hub repo id")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--source", nargs="+", metavar="SRC",
                     help="a folder in Hub layout, a Hub repo id, or two files: CORPUS QUESTIONS")
    src.add_argument("--sample", action="store_true", help="open the bundled sample of this dataset")
    p.add_argument("--workspace", type=workspace_target, metavar="DIR|URL",
                   help="workspace folder (default: one per dataset in the user data directory), or a "
                        "postgresql:// URL: a team's shared workspace (default: $MTCB_CURATE_DATABASE_URL)")
    p.add_argument("--curator", type=curator_name, metavar="NAME",
                   help="who the changes are recorded under (default: [team] curator in the config file, "
                        "else the login name)")
    p.add_argument("--strict", action="store_true", help="treat row-level input problems as errors (exit 2)")
    cols = p.add_argument_group("columns (defaults from the dataset profile, else detected)")
    cols.add_argument("--doc-key", help="question column holding the document key")
    cols.add_argument("--corpus-key", help="corpus column it matches (default: same name)")
    cols.add_argument("--passage-column", help="question column holding the supporting passage")
    cols.add_argument("--text-column", help="corpus column holding the document text")
    cols.add_argument("--question-column", help="question column holding the question")
    cols.add_argument("--answer-column", help="question column holding the answer")


def workspace_target(value: str) -> Path | str:
    """A ``--workspace`` value: a ``postgresql://`` URL stays text, anything else is a folder."""
    from mtcb_curate.store.postgres import is_database_url

    return value if is_database_url(value) else Path(value)


def curator_name(value: str) -> str:
    """A ``--curator`` value, checked (``argparse`` reports a bad one as a usage error)."""
    from mtcb_curate.errors import CurateError
    from mtcb_curate.store.curators import check_curator

    try:
        return check_curator(value)
    except CurateError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def llm_options(p: argparse.ArgumentParser) -> None:
    """Add the LLM server options (``--model``, ``--base-url``, ``--config``, ``--yes``)."""
    g = p.add_argument_group("LLM (any OpenAI-compatible server; key from OPENAI_API_KEY)")
    g.add_argument("--model", help="model name (default: [llm] model in the config file, or OPENAI_MODEL)")
    g.add_argument("--base-url", help="server URL, e.g. http://localhost:8000/v1 (default: OPENAI_BASE_URL)")
    g.add_argument("--yes", action="store_true", help="run more than 10 LLM calls without asking")


def options(args: argparse.Namespace, read_only: bool = False) -> Options:
    """The ``sources.Options`` the parsed arguments describe."""
    return Options(
        name=args.dataset, source=args.source, sample=args.sample, workspace=args.workspace,
        read_only=read_only, strict=args.strict, curator=getattr(args, "curator", None),
        columns=dict(doc_key=args.doc_key, corpus_key=args.corpus_key, passage_column=args.passage_column,
                     text_column=args.text_column, question_column=args.question_column,
                     answer_column=args.answer_column))


def report_problems(problems: list, strict: bool) -> bool:
    """Print row-level problems as warnings; True when --strict makes them fatal."""
    for p in problems[:MAX_WARNINGS]:
        print(f"mtcb-curate: {'error' if strict else 'warning'}: {p}", file=sys.stderr)
    if len(problems) > MAX_WARNINGS:
        print(f"mtcb-curate: ... and {len(problems) - MAX_WARNINGS} more", file=sys.stderr)
    return strict and bool(problems)


def note(message: str) -> None:
    """One line of progress or outcome on stderr (stdout carries the command's result); above
    the progress display while one is shown. Safe from any thread."""
    line = f"mtcb-curate: {message}"
    with _output_lock:
        active = _active[-1] if _active else None
    if active is not None:
        active.log(line)
        return
    with _output_lock:
        try:
            print(line, file=sys.stderr, flush=True)
        except (BrokenPipeError, ValueError):  # stderr closed too: nothing more can be said
            pass


def emit(text: str = "", end: str = "\n") -> None:
    """Write part of the command's result to standard output and flush it.

    When the reader has gone (``mtcb-curate verify x | head -1``), the rest of the output is
    dropped quietly and the command carries on to its own exit code: standard output is
    pointed at ``os.devnull``, the Python documentation's recipe for SIGPIPE
    (https://docs.python.org/3/library/signal.html#note-on-sigpipe). Write files before
    calling this, so a closed pipe never costs a file.
    """
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_gone()


def stdout_gone() -> None:
    """Point standard output at ``os.devnull`` after a ``BrokenPipeError`` (the reader has
    gone), so neither later output nor Python's flush at exit raises again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


# -- the one progress display -------------------------------------------------------------------

_output_lock = threading.RLock()
_active: list["Progress"] = []


def _fancy_terminal(stream: Any) -> bool:
    """True when ``stream`` is a terminal that can redraw a bar in place (not ``TERM=dumb``)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return bool(tty) and os.environ.get("TERM", "") not in ("dumb", "unknown")


class Progress:
    """The progress display of a long headless command, on standard error; safe from any thread.

    On a terminal: one ``rich.progress`` bar (description, bar, done/total, elapsed, time left),
    redrawn by rich's own refresh thread; :meth:`log` and :func:`note` lines appear above it.
    Elsewhere (a pipe, a CI log, ``TERM=dumb``): plain lines ``mtcb-curate: DESCRIPTION:
    N/TOTAL``, at most one every ``every_s`` seconds, and, when any was printed, a last one with
    the time taken (a run shorter than ``every_s`` prints nothing).

    Use as a context manager::

        with Progress("verifying passages", total=len(pairs)) as bar:
            for pair in pairs:
                ...
                bar.advance()

    Args:
        description: what is being done, in a few words.
        total: how many steps, or None while unknown (see :meth:`update`).
        stream: where to draw (default ``sys.stderr`` when entered).
        every_s: seconds between plain lines (not on a terminal).
        clock: monotonic seconds (injected by tests).
    """

    def __init__(self, description: str, total: int | None = None, *, stream: Any = None,
                 every_s: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.description = description
        self.total = total
        self.completed = 0
        self._stream = stream
        self._every_s = every_s
        self._clock = clock
        self._lock = threading.RLock()
        self._rich: Any = None
        self._task: Any = None
        self._last_line: float | None = None
        self._started = 0.0

    # -- context ---------------------------------------------------------------------------

    def __enter__(self) -> "Progress":
        stream = self._stream if self._stream is not None else sys.stderr
        self._stream = stream
        self._started = self._clock()
        if _fancy_terminal(stream):
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._rich = RichProgress(TextColumn("{task.description}", markup=False), BarColumn(),
                                      MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                      console=Console(file=stream, highlight=False), transient=False)
            self._task = self._rich.add_task(self.description, total=self.total)
            self._rich.start()
        with _output_lock:
            _active.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _output_lock:
            if self in _active:
                _active.remove(self)
        if self._rich is not None:
            self._rich.stop()
        else:
            self._plain_line(force=True)

    # -- updates ---------------------------------------------------------------------------

    def advance(self, n: int = 1) -> None:
        """``n`` more steps done."""
        with self._lock:
            self.completed += n
        self._changed()

    def update(self, *, completed: int | None = None, total: int | None = None,
               description: str | None = None) -> None:
        """Set how many steps are done, how many there are, or what is being done."""
        with self._lock:
            if completed is not None:
                self.completed = completed
            if total is not None:
                self.total = total
            if description is not None:
                self.description = description
        self._changed()

    def log(self, line: str) -> None:
        """One line above the bar (as plain text: never read as markup)."""
        with _output_lock:
            try:
                if self._rich is not None:
                    from rich.text import Text

                    self._rich.console.print(Text(line), soft_wrap=True)
                else:
                    print(line, file=self._stream, flush=True)
            except (BrokenPipeError, ValueError):
                pass

    def _changed(self) -> None:
        if self._rich is not None:
            with self._lock:
                self._rich.update(self._task, completed=self.completed, total=self.total,
                                  description=self.description)
            return
        self._plain_line()

    def _plain_line(self, force: bool = False) -> None:
        now = self._clock()
        with self._lock:
            if force and self._last_line is None:
                return  # a short run says nothing: its result says it all
            if not force and self._last_line is not None and now - self._last_line < self._every_s:
                return
            if not force and self._last_line is None and now - self._started < self._every_s:
                return
            if not force and self.total is not None and self.completed >= self.total:
                return  # the last line says it, with the time taken
            self._last_line = now
            of = f"/{self.total:,}" if self.total is not None else ""
            line = f"mtcb-curate: {self.description}: {self.completed:,}{of}"
            if force:
                line += f" ({now - self._started:.1f} s)"
        self.log(line)


# -- output paths -------------------------------------------------------------------------------


def check_writable(path: Path, *, folder: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written.

    A file: its folder must exist and take a new file, and the path must not be a folder. A
    folder (``folder=True``; made when missing, with its parents): the nearest existing folder
    on the way must take a new file, and the path must not be a file. Tried for real (a
    temporary file made and removed), so a read-only file system or missing permissions show
    up now, not after the work.

    Raises:
        CurateError: the path cannot be written; the message names it and says why.
    """
    path = Path(path)
    if folder:
        if path.exists() and not path.is_dir():
            raise CurateError(f"{path}: cannot write: it is a file, not a folder")
        probe = path
        while not probe.exists():
            if probe.parent == probe:
                break
            probe = probe.parent
        if not probe.is_dir():
            raise CurateError(f"{path}: cannot write: {probe} is not a folder")
    else:
        if path.is_dir():
            raise CurateError(f"{path}: cannot write: it is a folder")
        probe = path.parent
        if not probe.is_dir():
            raise CurateError(f"{path}: cannot write: no folder {probe}")
        if path.exists() and not os.access(path, os.W_OK):
            raise CurateError(f"{path}: cannot write: permission denied")
    try:
        with tempfile.TemporaryFile(dir=probe, prefix=".mtcb-curate-probe-"):
            pass
    except OSError as exc:
        raise CurateError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})") from None


# -- opening the data, and saying which ---------------------------------------------------------


def source_line(session, has_workspace: bool) -> str:
    """What a headless command runs on, in one line: the source (and why it was chosen) and
    the workspace (or that there is none)."""
    src = session.dataset.source
    if src.kind == "sample" and "sample" not in src.reason:
        what = f"the bundled sample of {session.dataset.name}, {src.location}"
    elif src.kind == "hub":
        what = f"{src.location}{'@' + src.revision if src.revision else ''} (the Hugging Face Hub)"
    else:
        what = src.location
    if src.reason:
        what += f" ({src.reason})"
    if has_workspace:
        ws = session.workspace
        where = f"{getattr(ws, 'label', None) or ws.path}{' (read-only)' if session.read_only else ''}"
    else:
        where = "none (the source alone; nothing is kept)"
    return f"source: {what}; workspace: {where}"


@contextmanager
def command_session(args: argparse.Namespace, *, write: bool = False,
                    read_only: bool = False) -> Iterator[tuple[Any, bool]]:
    """``app.sources.command_session`` on the command line's options, saying on standard error
    which source and workspace the command runs on (always, before any result).

    Raises:
        as ``app.sources.command_session``.
    """
    from mtcb_curate.app.sources import command_session as open_for_command

    with open_for_command(options(args, read_only=read_only), write=write) as (session, has_ws):
        note(source_line(session, has_ws))
        yield session, has_ws


def open_session(opts: Options):
    """``app.sources.open_session``, saying on standard error which source and workspace were
    opened (the caller closes the workspace)."""
    from mtcb_curate.app.sources import open_session as open_it

    session = open_it(opts)
    note(source_line(session, True))
    return session


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as UTF-8 JSON (indented), atomically, and say where on stderr.

    Raises:
        OSError: the folder is not writable (``filename``: ``path``).
    """
    text = json.dumps(value, ensure_ascii=False, indent=1)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a dataset: ASCII escapes are still JSON
        data = json.dumps(value, indent=1).encode("ascii")
    atomic_write_bytes(Path(path), data + b"\n")
    note(f"wrote {path}")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 (a lone surrogate becomes ``?``), atomically, and say where on
    stderr.

    Raises:
        OSError: it cannot be written; ``filename`` is ``path``.
    """
    atomic_write_bytes(Path(path), text.encode("utf-8", "replace"))
    note(f"wrote {path}")


def confirm(question: str, assume_yes: bool) -> bool:
    """Ask on the terminal; False without a terminal unless ``assume_yes`` (``--yes``)."""
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        return False
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False
