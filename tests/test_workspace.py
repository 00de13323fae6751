"""The workspace: decisions, edits and unlimited undo, persisted across close/reopen.

Tests taking ``open_store`` are the store contract: they run on SQLite and on a real PostgreSQL
server (conftest.py)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from mtcb_curate.errors import WorkspaceError, WorkspaceLocked
from mtcb_curate.store.opening import describe
from mtcb_curate.store.postgres import is_database_url
from mtcb_curate.store.sqlite import DB_NAME, Workspace, questions_fingerprint


def test_thirty_actions_undone_in_order_after_reopen(open_store):
    statuses = ["accepted", "rejected", "skipped", "flagged"]
    expected = []  # (kind, pair_id, after) in the order they were made
    with open_store() as ws:
        for i in range(30):
            pid = i % 7
            if i % 3 == 2:
                change = {"question": f"edited question {i}"}
                ws.edit(pid, change, at=1000.0 + i)
                expected.append(("edit", pid, change))
            else:
                status = statuses[i % 4]
                reason = "duplicate" if status == "rejected" else None
                ws.decide(pid, status, reason, at=1000.0 + i)
                expected.append(("decide", pid, {"status": status, "reason": reason}))
        final_decisions = ws.decisions()
        final_edits = ws.edits()
    assert len(final_decisions) == 7

    with open_store() as ws:
        assert ws.decisions() == final_decisions
        assert ws.edits() == final_edits
        assert len(ws.history()) == 30
        undone = []
        for _ in range(30):
            entry = ws.undo()
            assert entry is not None
            undone.append((entry.kind, entry.pair_id, entry.after))
        assert undone == list(reversed(expected))
        assert ws.undo() is None
        assert ws.decisions() == {}
        assert ws.edits() == {}
        assert ws.history() == []
        assert len(ws.history(include_undone=True)) == 30

    with open_store() as ws:  # the undos are persisted too
        assert ws.undo() is None
        assert ws.decisions() == {}


def test_undo_restores_the_previous_state_not_just_undecided(open_store):
    with open_store() as ws:
        ws.decide(3, "rejected", "trivial")
        ws.decide(3, "accepted")
        ws.edit(3, {"answer": "first"})
        ws.edit(3, {"answer": "second"})
        assert ws.undo().kind == "edit"
        assert ws.edits() == {3: {"answer": "first"}}
        ws.undo()
        assert ws.edits() == {}
        ws.undo()
        d = ws.decisions()[3]
        assert (d.status, d.reason) == ("rejected", "trivial")
        ws.undo()
        assert ws.decisions() == {}


def test_edits_with_lone_surrogates_and_markup_survive(open_store):
    weird = {
        "question": "Is [bold red]this[/] markup? \x1b[31mESC\x1b[0m \ud800 lone high",
        "answer": "lone low \udfff and \U0001F600 and [link=file:///etc/passwd]x[/link]",
        "supporting_passage": "tab\tnull\x00nbsp\u00a0end\r\n",
    }
    with open_store() as ws:
        ws.edit(0, weird)
        ws.decide(0, "rejected", "other: [b]why[/b]")
    with open_store() as ws:
        assert ws.edits() == {0: weird}
        assert ws.decisions()[0].reason == "other: [b]why[/b]"
        [edit, decide] = ws.history()
        assert edit.after == weird
        ws.undo()
        ws.undo()
        assert ws.edits() == {}


def test_edit_with_none_restores_the_source_text(open_store):
    with open_store() as ws:
        ws.edit(1, {"question": "q", "answer": "a"})
        ws.edit(1, {"question": None})
        assert ws.edits() == {1: {"answer": "a"}}
        ws.undo()
        assert ws.edits() == {1: {"question": "q", "answer": "a"}}


def test_read_only_refuses_writes(open_store):
    with open_store() as ws:
        ws.decide(0, "accepted")
    ro = open_store(read_only=True)
    try:
        assert ro.read_only
        assert ro.decisions()[0].status == "accepted"
        for write in (lambda: ro.decide(1, "accepted"), lambda: ro.edit(1, {"question": "x"}),
                      ro.undo, lambda: ro.set_meta(dataset="x")):
            with pytest.raises(WorkspaceError, match="read-only"):
                write()
        assert ro.decisions().keys() == {0}
    finally:
        ro.close()
    with open_store() as ws:
        assert ws.decisions().keys() == {0}
        assert len(ws.history()) == 1


def test_read_only_open_needs_an_existing_workspace(open_store):
    with pytest.raises(WorkspaceError, match="no workspace here"):
        open_store(read_only=True)
    if not is_database_url(open_store.target):
        assert not open_store.target.exists()


def test_read_only_open_while_a_writer_holds_it(open_store):
    with open_store() as writer:
        writer.decide(2, "flagged")
        with open_store(read_only=True) as reader:
            assert reader.decisions()[2].status == "flagged"
            writer.decide(3, "accepted")
            assert set(reader.decisions()) == {2, 3}


def test_closed_workspace_refuses_writes(open_store):
    ws = open_store()
    ws.close()
    ws.close()  # twice is fine
    with pytest.raises(WorkspaceError, match="closed"):
        ws.decide(0, "accepted")


def test_bind_refuses_other_questions_and_other_datasets(open_store):
    fp = questions_fingerprint([("q", "a", "p", "AAA")])
    other_fp = questions_fingerprint([("q", "a", "p", "BBB")])
    assert fp != other_fp
    with open_store() as ws:
        ws.bind("ficha", ["/data/ficha"], fp)
        ws.bind("ficha", ["/data/ficha"], fp)  # same data: fine
    with open_store() as ws:
        with pytest.raises(WorkspaceError) as info:
            ws.bind("ficha", ["/data/other"], other_fp)
        msg = str(info.value)
        assert describe(open_store.target) in msg and "other questions" in msg and "--workspace" in msg
        assert "\n" not in msg
        with pytest.raises(WorkspaceError) as info:
            ws.bind("gacha", ["/data/ficha"], fp)
        msg = str(info.value)
        assert "'ficha'" in msg and "'gacha'" in msg and describe(open_store.target) in msg
        assert ws.source_spec() == ["/data/ficha"]  # refused binds change nothing
        assert ws.get_meta("fingerprint") == fp


def test_bind_with_same_questions_from_another_source_updates_the_spec(open_store):
    fp = questions_fingerprint([("q", "a", "p", "AAA")])
    with open_store() as ws:
        ws.bind("ficha", ["/a"], fp)
        ws.bind("ficha", ["chonkie-ai/ficha"], fp)
        assert ws.source_spec() == ["chonkie-ai/ficha"]


def test_source_spec_is_stored(open_store):
    spec = ["/data/corpus.parquet", "/data/questions.parquet"]
    with open_store() as ws:
        assert ws.source_spec() is None
        ws.bind("ficha", spec, "f" * 64)
        assert ws.source_spec() == spec
    with open_store() as ws:
        assert ws.source_spec() == spec
        assert ws.get_meta("dataset") == "ficha"


def test_wal_mode_is_on(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        ws.decide(0, "accepted")
    conn = sqlite3.connect(tmp_path / "ws" / DB_NAME)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT status FROM decisions WHERE pair_id=0").fetchone()[0] == "accepted"
    finally:
        conn.close()


def test_fingerprint_depends_on_every_field_and_on_order():
    rows = [("q1", "a1", "p1", "K1"), ("q2", "a2", "p2", "K2")]
    base = questions_fingerprint(rows)
    assert questions_fingerprint(list(rows)) == base
    assert questions_fingerprint(list(reversed(rows))) != base
    for i in range(4):
        changed = [tuple(v + "x" if j == i else v for j, v in enumerate(rows[0])), rows[1]]
        assert questions_fingerprint(changed) != base
    # field boundaries matter: ("ab", "") is not ("a", "b")
    assert questions_fingerprint([("ab", "", "", "")]) != questions_fingerprint([("a", "b", "", "")])
    questions_fingerprint([("\ud800", "", "", "")])  # lone surrogates do not crash


def test_not_a_workspace_file(tmp_path):
    ws_dir = tmp_path / "ws"
    ws_dir.mkdir()
    (ws_dir / DB_NAME).write_bytes(b"definitely not sqlite" * 100)
    with pytest.raises(WorkspaceError) as info:
        Workspace.open(ws_dir)
    assert str(ws_dir) in str(info.value)
    # the lock was released: a valid workspace can be made there afterwards
    (ws_dir / DB_NAME).unlink()
    Workspace.open(ws_dir).close()


def test_second_writer_in_the_same_process_is_refused(tmp_path):
    with Workspace.open(tmp_path / "ws"):
        with pytest.raises(WorkspaceLocked):
            Workspace.open(tmp_path / "ws")
    Workspace.open(tmp_path / "ws").close()


def test_history_values_are_json(open_store):
    with open_store() as ws:
        ws.decide(5, "rejected", "yes/no", at=12.5)
        [entry] = ws.history()
        assert (entry.seq, entry.at, entry.pair_id, entry.kind) == (1, 12.5, 5, "decide")
        assert entry.before is None
        assert entry.after == {"status": "rejected", "reason": "yes/no"}
        raw = ws._conn.execute("SELECT after FROM history").fetchone()[0]
        assert json.loads(raw) == entry.after
        assert ws.decision_times() == [12.5]


def test_a_schema_1_workspace_opens_read_only_and_migrates_when_writable(tmp_path):
    import sqlite3

    from mtcb_curate.store.sqlite import _SCHEMA

    c = sqlite3.connect(tmp_path / "workspace.sqlite")
    c.executescript(_SCHEMA.split("CREATE TABLE IF NOT EXISTS added_pairs")[0])
    c.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    c.execute("INSERT INTO history (at, pair_id, kind, before, after) "
              "VALUES (1, 0, 'decide', NULL, '{\"status\": \"accepted\", \"reason\": null}')")
    c.commit()
    c.close()
    with Workspace.open(tmp_path, read_only=True) as ws:
        assert ws.added_pairs() == {} and ws.not_duplicates() == set()
        assert [(e.kind, e.via) for e in ws.history()] == [("decide", None)]
    with Workspace.open(tmp_path) as ws:
        assert ws.get_meta("schema_version") == "2"
        ws.edit(0, {"question": "Q?"}, via="snap")
        assert [e.via for e in ws.history()] == [None, "snap"]


def test_the_questions_fingerprint_is_the_sha256_of_each_field_and_separator_in_row_order():
    """The chunked fingerprint hashes exactly the bytes the per-field one did (workspaces store
    it: a different value would take every existing workspace for another dataset)."""
    import hashlib
    import random

    from mtcb_curate.store.sqlite import questions_fingerprint

    rng = random.Random(7)
    alphabet = "ab \n\x1f\x1eé€😀\ud83d\ude00\udc80"  # separators and lone surrogates included
    rows = [tuple("".join(rng.choice(alphabet) for _ in range(rng.randrange(6))) for _ in range(4))
            for _ in range(10_000)]
    h = hashlib.sha256()
    for row in rows:
        for v in row:
            h.update(v.encode("utf-8", "surrogatepass") + b"\x1f")
        h.update(b"\x1e")
    assert questions_fingerprint(iter(rows)) == h.hexdigest()
    assert questions_fingerprint([]) == hashlib.sha256().hexdigest()
