"""Workspaces per source: the bundled sample, each --source and the Hub default each
get their own default workspace; plain ``mtcb-curate NAME`` resumes the latest that is not
the sample's; ``export`` runs on a source alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import call_main, opened, write_source  # noqa: E402

from mtcb_curate.app.sources import Options, open_session, source_key
from mtcb_curate.dataset.model import Status
from mtcb_curate.store.sqlite import default_workspace_dir


def test_source_after_the_sample_opens_its_own_workspace(tmp_path):
    s = opened(None, None, sample=True)           # the quick start
    assert s.workspace.path == default_workspace_dir("ficha", "sample")
    s.decide(0, Status.ACCEPTED)
    s.workspace.close()
    src = write_source(tmp_path / "src")
    s = opened(src, None)                         # no "this workspace was made for other questions"
    assert s.workspace.path == default_workspace_dir("ficha", source_key([str(src)]))
    assert s.status(0) is Status.UNDECIDED
    s.decide(1, Status.REJECTED, "trivial")
    s.workspace.close()
    # plain `mtcb-curate ficha` resumes the latest workspace: the --source one
    s = opened(None, None)
    assert s.workspace.path == default_workspace_dir("ficha", source_key([str(src)]))
    assert s.status(1) is Status.REJECTED
    s.workspace.close()
    # back to the sample: its decisions are where they were; now it is the latest
    s = opened(None, None, sample=True)
    assert s.status(0) is Status.ACCEPTED
    s.workspace.close()
    # but a workspace of the sample never stands for the dataset: plain `ficha` resumes the
    # latest workspace of a real source
    s = opened(None, None)
    assert s.dataset.source.kind == "folder" and s.status(1) is Status.REJECTED
    s.workspace.close()


def test_same_folder_given_relative_or_absolute_is_one_workspace(tmp_path, monkeypatch):
    src = write_source(tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    assert source_key(["src"]) == source_key([str(src)]) != source_key(["sample:ficha"])


def test_an_older_workspace_holding_that_source_is_still_used(tmp_path):
    src = write_source(tmp_path / "src")
    base = default_workspace_dir("ficha")
    s = open_session(Options("ficha", source=[str(src)], workspace=base))  # as older versions did
    s.decide(2, Status.FLAGGED)
    s.workspace.close()
    s = opened(src, None)
    assert s.workspace.path == base and s.status(2) is Status.FLAGGED
    s.workspace.close()


def test_cli_source_after_sample_and_export_on_a_source_alone(tmp_path):
    assert call_main("verify", "ficha", "--sample").returncode in (0, 1)
    s = opened(None, None, sample=True)
    s.workspace.close()
    src = write_source(tmp_path / "src")
    r = call_main("verify", "ficha", "--source", src)
    assert r.returncode in (0, 1) and "other questions" not in r.stderr
    out = tmp_path / "o.jsonl"
    r = call_main("export", "ficha", "--source", src, "--out", out)   # no workspace of this source
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and {row["status"] for row in rows} == {"undecided"}
    assert not default_workspace_dir("ficha", source_key([str(src)])).exists()  # nothing written
