"""Notes: a free-text note on any pair, persisted in the workspace, undoable, in the
history, searchable, exported and shown in the QA panel."""

from __future__ import annotations

import json
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import opened, write_source  # noqa: E402

from mtcb_curate.store.sqlite import Workspace


def test_note_round_trips_through_the_workspace_and_undo(tmp_path):
    src = write_source(tmp_path / "src")
    s = opened(src, tmp_path / "ws")
    assert s.note(0) is None
    assert s.set_note(0, "  check the 2022 figure  ") is True
    assert s.set_note(0, "check the 2022 figure") is False  # unchanged: nothing recorded
    assert s.note(0) == "check the 2022 figure"
    s.set_note(1, "second")
    s.set_note(1, "")  # blank removes it
    assert s.note(1) is None
    entries = [e for e in s.workspace.history() if e.kind == "note"]
    assert [(e.pair_id, e.before, e.after) for e in entries] == [
        (0, None, "check the 2022 figure"), (1, None, "second"), (1, "second", None)]
    s.workspace.close()

    s = opened(src, tmp_path / "ws")  # persisted
    assert s.note(0) == "check the 2022 figure" and s.notes() == {0: "check the 2022 figure"}
    assert s.undo() == 1 and s.note(1) == "second"   # undo restores the removed note
    assert s.undo() == 1 and s.note(1) is None
    assert s.undo() == 0 and s.note(0) is None
    s.workspace.close()
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.notes() == {}


def test_note_is_searchable_and_filterable(tmp_path):
    from mtcb_curate.app.filters import apply, parse

    s = opened(write_source(tmp_path / "src"), tmp_path / "ws")
    s.set_note(1, "Ask Legal about zanzibar")
    assert s.search("zanzibar") == 1
    assert apply(s, parse("has:note")) == [1]
    s.workspace.close()


def test_note_is_exported(tmp_path):
    from mtcb_curate.app.export import export_jsonl

    s = opened(write_source(tmp_path / "src"), tmp_path / "ws")
    s.set_note(0, "a note")
    out = tmp_path / "d.jsonl"
    export_jsonl(s, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["note"] == "a note" and rows[1]["note"] is None
    s.workspace.close()


def test_read_only_workspace_of_an_older_schema_reads_no_notes(tmp_path):
    import sqlite3

    src = write_source(tmp_path / "src")
    s = opened(src, tmp_path / "ws")
    s.workspace.close()
    conn = sqlite3.connect(tmp_path / "ws" / "workspace.sqlite")
    conn.execute("DROP TABLE notes")
    conn.commit()
    conn.close()
    with Workspace.open(tmp_path / "ws", read_only=True) as ws:
        assert ws.notes() == {}
