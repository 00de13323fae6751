"""The command line's own behaviour around a command's work: the one progress display, output
past a closed pipe, output paths checked before the work, mistyped commands and options, the
source and workspace said on standard error, and failed writes naming their target."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import write_source  # noqa: E402

from mtcb_curate.cli import common  # noqa: E402
from mtcb_curate.cli.common import Progress, check_writable  # noqa: E402
from mtcb_curate.errors import CurateError  # noqa: E402

# -- the progress display -------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_prints_a_line_every_few_seconds_and_a_last_one():
    out, clock = io.StringIO(), Clock()
    with Progress("verifying", total=10, stream=out, every_s=5.0, clock=clock) as bar:
        bar.advance()  # a short run says nothing until it ends
        clock.now += 6
        bar.advance()
        clock.now += 1
        bar.advance()  # within 5 s of the last line: nothing
        clock.now += 5
        bar.update(completed=9)
    lines = out.getvalue().splitlines()
    assert lines == ["mtcb-curate: verifying: 2/10", "mtcb-curate: verifying: 9/10",
                     "mtcb-curate: verifying: 9/10 (12.0 s)"]


def test_notes_from_many_threads_are_whole_lines_above_the_progress_display(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    with Progress("calls", total=400, stream=out, every_s=0.0) as bar:
        def work(k: int) -> None:
            for i in range(50):
                common.note(f"thread {k} line {i} done")
                bar.advance()

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = out.getvalue().splitlines()
    notes = [ln for ln in lines if " line " in ln]
    assert len(notes) == 400
    assert all(ln.startswith("mtcb-curate: thread ") and ln.endswith(" done") for ln in notes)
    assert all(ln.startswith("mtcb-curate: ") for ln in lines)
    assert lines[-1].startswith("mtcb-curate: calls: 400/400 (")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_draws_one_rich_bar_and_logs_above_it(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    out = _Terminal()
    with Progress("checklist", total=4, stream=out) as bar:
        bar.log("mtcb-curate: [bold]not markup[/]")
        bar.update(completed=4)
    text = out.getvalue()
    assert "checklist" in text and "4/4" in text
    assert "[bold]not markup[/]" in text  # plain text, never read as markup
    monkeypatch.setenv("TERM", "dumb")  # a dumb terminal gets the plain lines
    out, clock = _Terminal(), Clock()
    with Progress("checklist", total=4, stream=out, clock=clock) as bar:
        clock.now += 6
        bar.update(completed=2)
        bar.update(completed=4)  # the end: said once, by the last line
    assert out.getvalue() == "mtcb-curate: checklist: 2/4\nmtcb-curate: checklist: 4/4 (6.0 s)\n"
    assert "\x1b[" not in out.getvalue()


def test_a_short_run_prints_no_progress_line():
    out, clock = io.StringIO(), Clock()
    with Progress("checklist", total=4, stream=out, clock=clock) as bar:
        clock.now += 1
        bar.update(completed=4)
    assert out.getvalue() == ""


# -- a closed standard output -------------------------------------------------------------------


@pytest.mark.parametrize("command,expected", [("verify", 1), ("check", 1), ("dedup", 0)])
def test_a_closed_pipe_ends_quietly_with_the_file_written_and_the_exit_code_kept(command, expected, tmp_path):
    """``mtcb-curate verify ... --json p.json | head -1``: the reader has gone before the
    output; no traceback, the JSON file is written, the exit code is the command's own."""
    out = tmp_path / "p.json"
    proc = subprocess.Popen([sys.executable, "-X", "dev", "-m", "mtcb_curate", command, "ficha", "--sample",
                             "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    proc.stdout.close()  # the reader is gone before the command writes anything
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == expected, err  # the sample: passages only normalized, a failing check, no cluster
    assert json.loads(out.read_text(encoding="utf-8"))


def test_emit_after_the_reader_has_gone_redirects_to_devnull(tmp_path):
    code = ("import sys\nfrom mtcb_curate.cli.common import emit\nsys.stdout.close = lambda: None\n"
            "for i in range(20000):\n    emit('x' * 100)\nprint('done', file=sys.stderr)\n")
    proc = subprocess.Popen([sys.executable, "-X", "dev", "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert err.strip() == "done"


# -- output paths first ----------------------------------------------------------------------


def test_an_unwritable_output_path_is_refused_before_the_work(cli, tmp_path):
    proc = cli("verify", "ficha", "--sample", "--json", tmp_path / "missing" / "x.json")
    assert proc.returncode == 2
    assert proc.stdout == ""  # no report: nothing was done
    [line] = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert line == f"mtcb-curate: error: {tmp_path / 'missing' / 'x.json'}: cannot write: no folder {tmp_path / 'missing'}"
    proc = cli("check", "ficha", "--sample", "--markdown", tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{tmp_path}: cannot write: it is a folder" in proc.stderr
    (tmp_path / "file").write_text("x")
    proc = cli("export", "ficha", "--sample", "--format", "beir", "--out", tmp_path / "file")
    assert proc.returncode == 2 and "it is a file, not a folder" in proc.stderr


def test_check_writable_tries_for_real(tmp_path, monkeypatch):
    check_writable(tmp_path / "new.json")
    check_writable(tmp_path / "a" / "b", folder=True)
    assert not (tmp_path / "a").exists()  # a folder output is not made by the check

    def refuse(*a, **kw):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(common.tempfile, "TemporaryFile", refuse)
    with pytest.raises(CurateError, match=r"new.json: cannot write \(Read-only file system\)"):
        check_writable(tmp_path / "new.json")


# -- mistyped commands and options -------------------------------------------------------------


def test_a_mistyped_command_suggests_the_closest(cli):
    proc = cli("verfy", "ficha", "--sample")
    assert proc.returncode == 2
    assert "unknown command 'verfy' (did you mean 'verify'?)" in proc.stderr
    assert "unrecognized arguments" not in proc.stderr


def test_a_mistyped_option_shows_the_commands_usage_and_the_closest_option(cli):
    proc = cli("verify", "ficha", "--smaple")
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: mtcb-curate verify ")
    assert "unrecognized arguments: --smaple (did you mean --sample?)" in proc.stderr
    proc = cli("ficha", "--read-onyl")  # the review command, named or not
    assert proc.stderr.startswith("usage: mtcb-curate review ") and "did you mean --read-only?" in proc.stderr


def test_dataset_names_are_not_taken_for_typos(tmp_path, monkeypatch):
    """A profile name, a Hub id or an existing folder is a dataset, even when close to a command."""
    from mtcb_curate.cli import _mistyped_command

    assert _mistyped_command("stat") == "stats"
    assert _mistyped_command("ficha") is None
    assert _mistyped_command("me/verfy") is None
    assert _mistyped_command("squad") is None  # close to nothing
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stat").mkdir()
    assert _mistyped_command("stat") is None


# -- the source used, and where a command wrote ---------------------------------------------------


def test_headless_commands_say_which_source_and_workspace_they_used(cli, tmp_path):
    proc = cli("verify", "ficha")  # offline, no cache, no workspace: the bundled sample
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("mtcb-curate: source: ")]
    assert len(lines) == 1, proc.stderr
    assert "sample_data" in lines[0] and "the Hugging Face Hub is unreachable" in lines[0]
    assert "opened the bundled sample" in lines[0] and "workspace: none" in lines[0]
    src = write_source(tmp_path / "src")
    proc = cli("check", "ficha", "--source", src)
    [line] = [ln for ln in proc.stderr.splitlines() if ln.startswith("mtcb-curate: source: ")]
    assert line == f"mtcb-curate: source: {src} (given with --source); workspace: none (the source alone; nothing is kept)"


def test_repair_says_where_it_wrote_and_check_then_reads_that_workspace(cli, tmp_path):
    """``repair`` without ``--workspace`` writes to the source's own workspace and says so; a
    later ``check --source`` of the same source reads that workspace (and says so)."""
    from mtcb_curate.app.sources import Options

    rows = [dict(q) for q in __import__("conftest").QUESTIONS]
    for r in rows:
        r["chunk_index"] = 7  # wrong: every passage is in window 0
    src = write_source(tmp_path / "src", questions=rows)
    ws = Options("ficha", source=[str(src)]).workspace_dir()
    before = cli("verify", "ficha", "--source", src)
    assert "workspace: none" in before.stderr
    proc = cli("repair", "ficha", "--source", src, "--chunk-index")
    assert proc.returncode == 0, proc.stderr
    assert f"written to the workspace {ws}" in proc.stderr
    after = cli("check", "ficha", "--source", src, "--json", tmp_path / "c.json")
    assert f"workspace: {ws} (read-only)" in after.stderr
    links = [c for c in json.loads((tmp_path / "c.json").read_text())["checks"] if c["id"] == "links"]
    assert links and not links[0]["pairs"], links


# -- failed writes name their target ----------------------------------------------------------------


@pytest.mark.parametrize("argv", [("check", "--json"), ("check", "--markdown"), ("stats", "--json"),
                                  ("verify", "--json"), ("dedup", "--json")])
def test_a_failed_write_names_the_target_file(argv, cli, tmp_path, monkeypatch):
    from mtcb_curate import files

    real_fdopen = os.fdopen

    class Full(io.RawIOBase):
        def __init__(self, fd):
            self._fh = real_fdopen(fd, "wb")

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._fh.close()

    def fdopen(fd, mode):  # only files under tmp_path meet a full disk
        path = os.readlink(f"/proc/self/fd/{fd}")
        return Full(fd) if path.startswith(str(tmp_path)) else real_fdopen(fd, mode)

    monkeypatch.setattr(files.os, "fdopen", fdopen)
    target = tmp_path / "out.file"
    command, option = argv
    proc = cli(command, "ficha", "--sample", option, target)
    assert proc.returncode == 2
    [line] = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert line == f"mtcb-curate: error: {target}: cannot write (No space left on device)"
    assert not list(tmp_path.iterdir())  # no temporary file left behind


def test_an_unknown_document_key_lists_the_keys_there_are(cli):
    """The README's ``generate ficha --doc AAPL`` on the sample (which has no AAPL)."""
    proc = cli("generate", "ficha", "--sample", "--doc", "AAPL")
    assert proc.returncode == 2
    [line] = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert line == ("mtcb-curate: error: no document 'AAPL' in the corpus (ticker); the 6 documents are: "
                    "AXP, PEP, MMM, CVS, PFE, ATVI")
    proc = cli("generate", "ficha", "--sample", "--doc", "MMN")
    assert "did you mean 'MMM'?" in proc.stderr


def test_a_forced_publish_does_not_say_publishing_is_refused(cli, tmp_path):
    proc = cli("publish", "ficha", "--sample", "--dry-run", tmp_path / "pub", "--license", "cc-by-4.0",
               "--force", "--reason", "a trial")
    assert proc.returncode == 0, proc.stderr
    assert "publishing is refused" not in proc.stdout
    assert "checklist FAILED: publishing anyway (--force; the reason goes into the card)" in proc.stdout
    proc = cli("publish", "ficha", "--sample", "--dry-run", tmp_path / "pub2", "--license", "cc-by-4.0")
    assert "checklist FAILED: publishing is refused" in proc.stdout  # without --force it still says so


@pytest.mark.parametrize("command,option", [("verify", "--json"), ("check", "--markdown"), ("stats", "--json"),
                                            ("dedup", "--json")])
def test_a_command_that_writes_says_where(command, option, cli, tmp_path):
    out = tmp_path / "out.file"
    proc = cli(command, "ficha", "--sample", option, out)
    assert f"mtcb-curate: wrote {out}" in proc.stderr.splitlines()
    assert out.stat().st_size > 0
