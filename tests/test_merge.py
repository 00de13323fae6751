"""``mtcb-curate merge``: several SQLite workspaces of one source folded into a new one with the
shared workspace's rules (agreeing decisions decide, disagreeing ones are conflicts a lead
decides; the gate fails meanwhile)."""

from __future__ import annotations

import json

from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.dataset.model import Status


def _curate(tiny, folder, name, work):
    s = open_session(Options("ficha", source=[str(tiny)], workspace=folder, curator=name))
    try:
        work(s)
    finally:
        s.workspace.close()


def _three(tiny, tmp_path):
    def ann(s):
        s.decide(0, Status.ACCEPTED)
        s.decide(1, Status.REJECTED, "trivial")
        s.edit(0, {"question": "What does Alpha manufacture?"})

    def bob(s):
        s.decide(0, Status.ACCEPTED)
        s.decide(1, Status.ACCEPTED)
        s.set_note(2, "check the [b]passage[/b]")
        s.mark_not_duplicates([0, 1])

    def cleo(s):
        s.decide(2, Status.FLAGGED)

    folders = []
    for name, work in (("ann", ann), ("bob", bob), ("cleo", cleo)):
        folders.append(tmp_path / name)
        _curate(tiny, folders[-1], name, work)
    return folders


def test_merge_keeps_agreement_decides_and_leaves_conflicts_to_a_lead(tiny, tmp_path, cli):
    from mtcb_curate.store.sqlite import Workspace

    folders = _three(tiny, tmp_path)
    out = tmp_path / "merged"
    code, stdout, err = cli("merge", "ficha", *folders, "--workspace", out, "--json", tmp_path / "team.json")
    assert code == 1, err  # a conflict is open
    assert "merged 3 workspaces (ann, bob, cleo): 2 pairs decided, 1 conflicts" in err
    assert "conflict #1: ann rejected (trivial); bob accepted" in stdout
    rep = json.loads((tmp_path / "team.json").read_text())
    assert [(c["name"], c["decided"]) for c in rep["curators"]] == [("ann", 2), ("bob", 2), ("cleo", 1)]
    assert rep["overlap"] == {"pairs": 2, "decided_by_two": 2, "agreed": 1, "open_conflicts": 1}
    with Workspace.open(out, read_only=True) as ws:
        assert {p: d.status for p, d in ws.decisions().items()} == {0: "accepted", 2: "flagged"}
        assert ws.edits() == {0: {"question": "What does Alpha manufacture?"}}
        assert ws.notes() == {2: "check the [b]passage[/b]"} and ws.not_duplicates() == {(0, 1)}
        who = ws.history_curators()
        assert sorted(who[e.seq] for e in ws.history() if e.via == "merge" and e.kind == "decide") == ["ann", "cleo"]
    code, stdout, err = cli("check", "ficha", "--workspace", out)
    assert code == 1 and "conflicts" in stdout
    code, stdout, err = cli("team", "ficha", "--workspace", out, "--resolve", "1", "rejected", "--reason", "trivial",
                            "--curator", "lead", "--conflicts")
    assert code == 0, err
    with Workspace.open(out, read_only=True) as ws:
        assert ws.decisions()[1].status == "rejected" and ws.conflicts() == {}


def test_merge_refuses_other_questions_and_a_used_target(tiny, tmp_path, cli):
    from conftest import write_jsonl

    folders = _three(tiny, tmp_path)
    other = tmp_path / "other-src"
    write_jsonl(other / "corpus.jsonl", [{"ticker": "AAA", "text": "Alpha."}])
    write_jsonl(other / "questions.jsonl", [{"question": "Q?", "answer": "A", "supporting_passage": "Alpha.",
                                             "ticker": "AAA"}])
    _curate(other, tmp_path / "dana", "dana", lambda s: s.decide(0, Status.ACCEPTED))
    code, _out, err = cli("merge", "ficha", folders[0], tmp_path / "dana", "--workspace", tmp_path / "m1")
    assert code == 2 and "other questions" in err and not (tmp_path / "m1").exists()
    code, _out, err = cli("merge", "ficha", folders[0], folders[1], "--workspace", folders[2])
    assert code == 2 and "already holds changes" in err
