"""``mtcb-curate verify``: counts per verdict, the JSON report, exit codes."""

from __future__ import annotations

import json

from conftest import CORPUS, QUESTIONS
from support import assert_one_error_line, opened, write_source

JSON_KEYS = {"id", "verdict", "score", "doc_key", "start", "end", "occurrences_in_doc",
             "occurrences_elsewhere", "chars", "tokens", "in_chunk"}


def test_verify_reports_each_verdict_and_exits_1_unless_all_exact(tiny, tmp_path, cli):
    out = tmp_path / "v.json"
    proc = cli("verify", "ficha", "--source", tiny, "--json", out)
    assert proc.returncode == 1, proc.stderr
    assert "exact" in proc.stdout and "normalized" in proc.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert set(report) == {"summary", "pairs"}
    assert [set(p) for p in report["pairs"]] == [JSON_KEYS] * len(QUESTIONS)
    by_id = {p["id"]: p for p in report["pairs"]}
    text = CORPUS[0]["text"]
    first = by_id[0]
    assert first["verdict"] == "exact" and text[first["start"]:first["end"]] == QUESTIONS[0]["supporting_passage"]
    assert report["summary"]["pairs"] == len(QUESTIONS)
    assert sum(report["summary"][v] for v in ("exact", "normalized", "fuzzy", "missing", "empty")) == len(QUESTIONS)
    assert report["summary"]["exact"] < len(QUESTIONS)  # the tiny set has a curly-quote passage


def test_verify_uses_workspace_edits_and_exits_0_when_all_exact(tmp_path, cli):
    src = write_source(tmp_path / "src")
    session = opened(src, tmp_path / "ws")
    from mtcb_curate.verify import CorpusIndex, verify_pair

    index = CorpusIndex.from_dataset(session.dataset)
    for pair in session.pairs:
        r = verify_pair(index, pair, pair.passage)
        if r.verdict != "exact":
            session.edit(pair.id, {"supporting_passage": session.dataset.documents[pair.doc_key].text[r.start:r.end]})
    session.workspace.close()
    proc = cli("verify", "ficha", "--source", src, "--workspace", tmp_path / "ws")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "edited passage(s) from the workspace" in proc.stderr
    # The same source without the workspace still has the unrepaired passage.
    assert cli("verify", "ficha", "--source", src).returncode == 1


def test_verify_bad_input_is_exit_2(tmp_path, cli):
    proc = cli("verify", "ficha", "--source", tmp_path / "nothing-here")
    assert_one_error_line(proc, "nothing-here")
