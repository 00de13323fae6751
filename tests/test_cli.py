"""The command line: one-line errors with exit code 2, and export.

Most commands run in-process through ``main(argv)`` (the ``cli`` fixture, ``support.call_main``);
a few run as a real process (``run_cli``), for what only a process shows: exit codes and no
traceback as a shell sees them, the installed ``mtcb-curate`` script, a workspace held by another
process, and the review command failing before any screen is drawn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import CORPUS, QUESTIONS, write_jsonl
from mtcb_curate import __version__
from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import WorkspaceLocked
from mtcb_curate.store.sqlite import Workspace, default_workspace_dir
# FATAL, assert_one_error_line and run_cli are imported from here by test_sources_faults.
from support import SCRIPT, assert_one_error_line, opened, run_cli, write_source  # noqa: F401


def bind_workspace(ws_dir: Path, source: list[str], name: str = "ficha") -> None:
    """Open (so create) the workspace in ``ws_dir`` on ``source``, and close it."""
    from mtcb_curate.app.sources import Options, open_session

    open_session(Options(name, source=source, workspace=ws_dir)).workspace.close()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------------------------------------
# fatal bad input: one line naming file, row and field; exit 2; no traceback


def _readme_without_questions(d: Path):
    d.mkdir()
    (d / "README.md").write_text("---\nconfigs:\n- config_name: corpus\n  data_files: corpus.jsonl\n---\n",
                                 encoding="utf-8")
    write_jsonl(d / "corpus.jsonl", CORPUS)
    return [str(d)], [str(d / "README.md"), "field 'configs'", "'questions'"]


def _only_corpus(d: Path):
    write_jsonl(d / "corpus.jsonl", CORPUS)
    return [str(d)], [str(d), "'questions'"]


def _no_passage_column(d: Path):
    write_jsonl(d / "corpus.jsonl", CORPUS)
    write_jsonl(d / "questions.jsonl", [{k: v for k, v in q.items() if k != "supporting_passage"}
                                        for q in QUESTIONS])
    return [str(d)], [str(d / "questions.jsonl"), "field 'supporting_passage'"]


def _no_text_column(d: Path):
    write_jsonl(d / "corpus.jsonl", [{k: v for k, v in c.items() if k != "text"} for c in CORPUS])
    write_jsonl(d / "questions.jsonl", QUESTIONS)
    return [str(d)], [str(d / "corpus.jsonl"), "field 'text'"]


def _mistyped_parquet(d: Path):
    d.mkdir()
    pq.write_table(pa.Table.from_pylist(CORPUS), d / "c.parquet")
    pq.write_table(pa.Table.from_pylist([dict(q, question=7) for q in QUESTIONS]), d / "q.parquet")
    return [str(d / "c.parquet"), str(d / "q.parquet")], [str(d / "q.parquet"), "field 'question'", "int64"]


def _empty_file(d: Path):
    write_jsonl(d / "corpus.jsonl", CORPUS)
    (d / "questions.jsonl").write_bytes(b"")
    return [str(d)], [str(d / "questions.jsonl"), "empty"]


def _whitespace_file(d: Path):
    write_jsonl(d / "questions.jsonl", QUESTIONS)
    (d / "corpus.jsonl").write_bytes(b"\n   \n\t\n")
    return [str(d)], [str(d / "corpus.jsonl"), "empty"]


def _non_utf8_row(d: Path):
    write_jsonl(d / "corpus.jsonl", CORPUS)
    write_jsonl(d / "questions.jsonl", QUESTIONS)
    lines = (d / "questions.jsonl").read_bytes().split(b"\n")
    lines[2] = lines[2][:10] + b"\xff" + lines[2][10:]
    (d / "questions.jsonl").write_bytes(b"\n".join(lines))
    return [str(d)], [str(d / "questions.jsonl") + " row 2 (line 3)", "UTF-8"]


def _invalid_json_row(d: Path):
    write_jsonl(d / "questions.jsonl", QUESTIONS)
    write_jsonl(d / "corpus.jsonl", CORPUS)
    with (d / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"ticker": "CCC", "text": "unterminated}\n')
    return [str(d)], [str(d / "corpus.jsonl") + " row 2 (line 3)", "not valid JSON"]


def _missing_path(d: Path):
    return [str(d / "nowhere")], [str(d / "nowhere"), "no such file or folder"]


def _single_file(d: Path):
    write_jsonl(d / "questions.jsonl", QUESTIONS)
    return [str(d / "questions.jsonl")], [str(d / "questions.jsonl"), "single file"]


FATAL = [_readme_without_questions, _only_corpus, _no_passage_column, _no_text_column, _mistyped_parquet,
         _empty_file, _whitespace_file, _non_utf8_row, _invalid_json_row, _missing_path, _single_file]


@pytest.mark.parametrize("make", FATAL, ids=[f.__name__.strip("_") for f in FATAL])
def test_export_with_bad_input_prints_one_line(make, tiny, tmp_path, cli):
    ws_dir = tmp_path / "ws"
    bind_workspace(ws_dir, [str(tiny)])
    bad = tmp_path / "bad"
    spec, fragments = make(bad)
    out = tmp_path / "out.jsonl"
    proc = cli("export", "ficha", "--source", *spec, "--workspace", ws_dir, "--out", out)
    assert_one_error_line(proc, *fragments)
    assert not out.exists()


@pytest.mark.parametrize("make", [_no_passage_column, _non_utf8_row, _mistyped_parquet],
                         ids=["no-passage-column", "non-utf8-row", "mistyped-parquet"])
def test_review_with_bad_input_prints_one_line_before_any_screen(make, tmp_path):
    spec, fragments = make(tmp_path / "bad")
    proc = run_cli("ficha", "--source", *spec, "--workspace", tmp_path / "ws")
    assert_one_error_line(proc, *fragments)


def test_strict_turns_a_row_level_problem_into_exit_2(tmp_path, cli):
    data = tmp_path / "data"
    questions = [dict(q) for q in QUESTIONS]
    questions[1]["ticker"] = "ZZZ"
    write_source(data, questions=questions)
    ws_dir = tmp_path / "ws"
    bind_workspace(ws_dir, [str(data)])
    out = tmp_path / "out.jsonl"

    lenient = cli("export", "ficha", "--workspace", ws_dir, "--out", out)
    assert lenient.returncode == 0, lenient.stderr
    warnings = [ln for ln in lenient.stderr.splitlines() if ln.startswith("mtcb-curate: warning: ")]
    assert len(warnings) == 1
    assert f"{data / 'questions.jsonl'} row 1 (line 2), field 'ticker'" in warnings[0] and "ZZZ" in warnings[0]
    assert len(read_jsonl(out)) == 3
    out.unlink()

    strict = cli("export", "ficha", "--workspace", ws_dir, "--out", out, "--strict")
    line = assert_one_error_line(strict, f"{data / 'questions.jsonl'} row 1 (line 2), field 'ticker'", "ZZZ")
    assert "warning" not in line
    assert not out.exists()


def test_strict_without_problems_exports(tiny, tmp_path, cli):
    ws_dir = tmp_path / "ws"
    bind_workspace(ws_dir, [str(tiny)])
    proc = cli("export", "ficha", "--workspace", ws_dir, "--out", tmp_path / "o.jsonl", "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "error" not in proc.stderr and "warning" not in proc.stderr


# ---------------------------------------------------------------------------------------------
# export


def _curate(session) -> None:
    session.decide(0, Status.ACCEPTED)
    session.decide(1, Status.REJECTED, "not verbatim")
    session.edit(2, {"supporting_passage": "Beta sells bells.", "question": "What does Beta sell, \ud800?"})
    session.decide(2, Status.SKIPPED)
    session.edit(0, {"answer": "Anvils (and more)"})
    session.edit(0, {"answer": QUESTIONS[0]["answer"]})  # back to the source: not an edit any more


def _check_export(rows: list[dict]) -> None:
    assert [r["id"] for r in rows] == [0, 1, 2]
    for r in rows:
        assert {"id", "status", "reason", "question", "answer", "supporting_passage"} <= r.keys()
    r0, r1, r2 = rows
    assert (r0["status"], r0["reason"]) == ("accepted", None)
    assert r0["question"] == QUESTIONS[0]["question"] and r0["answer"] == QUESTIONS[0]["answer"]
    assert r0["edited"] == []
    assert (r1["status"], r1["reason"]) == ("rejected", "not verbatim")
    assert r1["supporting_passage"] == QUESTIONS[1]["supporting_passage"]
    assert (r2["status"], r2["reason"]) == ("skipped", None)
    assert r2["supporting_passage"] == "Beta sells bells."
    assert r2["question"] == "What does Beta sell, \ud800?"
    assert r2["answer"] == QUESTIONS[2]["answer"]
    assert r2["edited"] == ["question", "supporting_passage"]
    assert [r["ticker"] for r in rows] == ["AAA", "AAA", "BBB"]
    assert [r["chunk_index"] for r in rows] == [0, 0, None]


def test_export_reflects_decisions_and_edits(tiny, tmp_path, cli):
    ws_dir = tmp_path / "ws"
    session = opened(tiny, ws_dir)
    try:
        _curate(session)
    finally:
        session.workspace.close()
    out = tmp_path / "out.jsonl"
    proc = cli("export", "ficha", "--workspace", ws_dir, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"mtcb-curate: wrote 3 pairs to {out}"
    assert proc.stderr.splitlines()[0].startswith("mtcb-curate: source: ")
    assert out.read_text(encoding="utf-8").count("\n") == 3
    _check_export(read_jsonl(out))
    # the same with the source given again, as a real process: the same bytes and message
    out2 = tmp_path / "out2.jsonl"
    proc = run_cli("export", "ficha", "--source", tiny, "--workspace", ws_dir, "--out", out2)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"mtcb-curate: wrote 3 pairs to {out2}"
    assert out2.read_bytes() == out.read_bytes()
    assert not list(tmp_path.glob(".export-*"))  # no temporary file left behind


def test_export_uses_the_default_workspace(tiny, tmp_path, cli):
    session = opened(tiny, None)
    try:
        # the source's own default workspace; plain `export ficha` resumes the latest
        assert session.workspace.path.parent == default_workspace_dir("ficha").parent
        assert str(session.workspace.path).startswith(os.environ["XDG_DATA_HOME"])
        _curate(session)
    finally:
        session.workspace.close()
    out = tmp_path / "out.jsonl"
    proc = cli("export", "ficha", "--out", out)
    assert proc.returncode == 0, proc.stderr
    _check_export(read_jsonl(out))


def test_export_does_not_change_the_workspace(tiny, tmp_path, cli):
    ws_dir = tmp_path / "ws"
    session = opened(tiny, ws_dir)
    try:
        _curate(session)
        history = session.workspace.history(include_undone=True)
    finally:
        session.workspace.close()
    assert cli("export", "ficha", "--workspace", ws_dir, "--out", tmp_path / "o.jsonl").returncode == 0
    with Workspace.open(ws_dir) as ws:
        assert ws.history(include_undone=True) == history


def test_export_on_a_missing_workspace(tiny, tmp_path, cli):
    ws_dir = tmp_path / "never-made"
    out = tmp_path / "out.jsonl"
    proc = cli("export", "ficha", "--source", tiny, "--workspace", ws_dir, "--out", out)
    assert_one_error_line(proc, str(ws_dir), "no workspace")
    assert not ws_dir.exists()
    assert not out.exists()


def test_export_to_an_unwritable_place(tiny, tmp_path, cli):
    ws_dir = tmp_path / "ws"
    bind_workspace(ws_dir, [str(tiny)])
    out = tmp_path / "no" / "such" / "dir" / "out.jsonl"
    proc = cli("export", "ficha", "--workspace", ws_dir, "--out", out)
    assert_one_error_line(proc, str(out), "cannot write")


def test_export_with_other_data_than_the_workspace_is_refused(tiny, tmp_path, cli):
    ws_dir = tmp_path / "ws"
    bind_workspace(ws_dir, [str(tiny)])
    other = tmp_path / "other"
    write_source(other, questions=list(reversed(QUESTIONS)))
    out = tmp_path / "out.jsonl"
    proc = cli("export", "ficha", "--source", other, "--workspace", ws_dir, "--out", out)
    assert_one_error_line(proc, str(ws_dir), "other questions")
    assert not out.exists()


def test_sample_exports_once_a_workspace_exists(tmp_path, cli):
    ws_dir = tmp_path / "ws"
    out = tmp_path / "sample.jsonl"
    first = cli("export", "ficha", "--sample", "--workspace", ws_dir, "--out", out)
    assert_one_error_line(first, str(ws_dir))
    session = opened(None, ws_dir, sample=True)
    try:
        assert len(session) == 23
        session.decide(22, Status.FLAGGED)
    finally:
        session.workspace.close()
    proc = cli("export", "ficha", "--sample", "--workspace", ws_dir, "--out", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_jsonl(out)
    assert len(rows) == 23
    assert [r["id"] for r in rows] == list(range(23))
    assert rows[22]["status"] == "flagged"
    assert {r["status"] for r in rows[:22]} == {"undecided"}
    # resuming without --sample finds the sample through the workspace
    out2 = tmp_path / "again.jsonl"
    assert cli("export", "ficha", "--workspace", ws_dir, "--out", out2).returncode == 0
    assert out2.read_bytes() == out.read_bytes()


# ---------------------------------------------------------------------------------------------
# one writer per workspace


def test_export_succeeds_while_another_process_holds_the_workspace(tiny, tmp_path):
    ws_dir = tmp_path / "ws"
    session = opened(tiny, ws_dir)
    try:
        session.decide(1, Status.ACCEPTED)
        with pytest.raises(WorkspaceLocked):
            Workspace.open(ws_dir)  # the lock really is held
        out = tmp_path / "out.jsonl"
        proc = run_cli("export", "ficha", "--workspace", ws_dir, "--out", out)
        assert proc.returncode == 0, proc.stderr
        assert [r["status"] for r in read_jsonl(out)] == ["undecided", "accepted", "undecided"]
        session.decide(2, Status.REJECTED, "trivial")  # still writable after the export
    finally:
        session.workspace.close()


def test_second_review_of_a_held_workspace_is_refused(tiny, tmp_path):
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir):
        proc = run_cli("ficha", "--source", tiny, "--workspace", ws_dir)
    line = assert_one_error_line(proc, str(ws_dir), "open in another mtcb-curate", f"pid {os.getpid()}")
    assert "--read-only" in line


def test_workspace_held_by_another_process_is_refused(tmp_path):
    ws_dir = tmp_path / "ws"
    code = textwrap.dedent(f"""
        import sys
        from mtcb_curate.store.sqlite import Workspace
        ws = Workspace.open({str(ws_dir)!r})
        print("locked", flush=True)
        sys.stdin.read()  # hold the lock until the test closes our stdin
        ws.close()
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ))
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(WorkspaceLocked) as info:
            Workspace.open(ws_dir)
        msg = str(info.value)
        assert str(ws_dir) in msg
        assert f"pid {holder.pid}" in msg
        assert "\n" not in msg
    finally:
        holder.stdin.close()
        holder.wait(timeout=120)
    assert holder.returncode == 0
    Workspace.open(ws_dir).close()  # free again once the holder closed it


def test_usage_errors_exit_2(tmp_path):
    proc = run_cli("export", "ficha")  # --out is required
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--out" in proc.stderr


def test_installed_script_runs_and_exits_with_the_code_of_main(tiny, tmp_path):
    if not SCRIPT.is_file():
        pytest.skip(f"no installed console script at {SCRIPT}")
    version = run_cli("--version", script=True)
    assert version.returncode == 0 and version.stdout.strip() == f"mtcb-curate {__version__}"
    ws_dir = tmp_path / "ws"
    bind_workspace(ws_dir, [str(tiny)])
    missing = run_cli("export", "ficha", "--source", tmp_path / "nowhere", "--workspace", ws_dir,
                      "--out", tmp_path / "o.jsonl", script=True)
    assert_one_error_line(missing, str(tmp_path / "nowhere"), "no such file or folder")
    ok = run_cli("export", "ficha", "--workspace", ws_dir, "--out", tmp_path / "o.jsonl", script=True)
    assert ok.returncode == 0, ok.stderr
    assert len(read_jsonl(tmp_path / "o.jsonl")) == 3


def test_in_process_usage_errors_and_version_are_exit_codes_not_exceptions(cli):
    usage = cli("export", "ficha")
    assert usage.returncode == 2 and "--out" in usage.stderr and usage.stdout == ""
    version = cli("--version")
    assert version == (0, f"mtcb-curate {__version__}\n", "")
