"""The application layer (``mtcb_curate.app``) and the workspace boundary.

- no front-end module (``cli/``, ``tui/``) imports ``sqlite3``: storage faults reach them as
  ``WorkspaceError`` (a ``CurateError``);
- ``store.sqlite.Workspace`` satisfies ``store.base.Store``, what ``ReviewSession`` needs;
- the gate and the publish preparation (with its offline fallback) through ``app`` on the
  bundled sample;
- a repair through ``app.review`` says what changed.
"""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

import mtcb_curate
from mtcb_curate.errors import CurateError, WorkspaceError
from mtcb_curate.store.sqlite import Workspace

PACKAGE = Path(mtcb_curate.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_front_end_module_imports_sqlite3():
    offenders = [str(p.relative_to(PACKAGE)) for folder in ("cli", "tui") for p in (PACKAGE / folder).rglob("*.py")
                 if any(n == "sqlite3" or n.startswith("sqlite3.") for n in _imports(p))]
    assert offenders == []


def test_a_storage_fault_on_reading_is_a_workspace_error(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    try:
        ws._conn.close()  # the connection fails under the workspace (what a vanished file does)
        for call in (ws.decisions, ws.edits, ws.history, ws.added_pairs, ws.not_duplicates,
                     ws.decision_times, ws.source_spec, lambda: ws.get_meta("dataset")):
            with pytest.raises(WorkspaceError) as info:
                call()
            assert not isinstance(info.value, sqlite3.Error)
            assert str(tmp_path / "ws") in str(info.value)
    finally:
        ws._conn = None
        ws.close()


def test_a_closed_workspace_says_so(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    ws.close()
    with pytest.raises(WorkspaceError, match="closed"):
        ws.decisions()
    with pytest.raises(WorkspaceError, match="closed"):
        ws.decide(0, "accepted")
