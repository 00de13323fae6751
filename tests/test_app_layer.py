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


# -- the gate and the publish preparation through the application layer ----------------------


def _sample(tmp_path):
    from mtcb_curate.app.sources import Options, open_session

    return open_session(Options("ficha", sample=True, workspace=tmp_path / "ws"))


def test_the_gate_resolves_the_limits_from_the_config_file(tmp_path):
    from mtcb_curate.app import gate

    config = tmp_path / "config.toml"
    config.write_text("[checklist]\nmax_passage_chars = 5\n", encoding="utf-8")
    session = _sample(tmp_path)
    try:
        assert gate.resolve_limits(session, config).max_chars == 5
        default = gate.run_gate(session, has_workspace=False, config=tmp_path / "none.toml", loads=False)
        tight = gate.run_gate(session, has_workspace=False, config=config, loads=False)
    finally:
        session.workspace.close()
    by_id = {c.id: c for c in tight.checks}
    assert by_id["passage_length"].status == "fail"  # every sample passage is over 2 x 5 characters
    assert len(by_id["passage_length"].pairs) == len(session)
    normal = {c.id: c for c in default.checks}["passage_length"]
    assert len(normal.failing) < len(by_id["passage_length"].failing) == len(session)
    assert not tight.passed


def test_prepare_a_publish_offline_falls_back_to_the_preview(tmp_path):
    from mtcb_curate.app import publishing
    from mtcb_curate.hub import PublishError

    session = _sample(tmp_path)  # conftest: HF_HUB_OFFLINE=1, the Hub cannot be read
    gates = []
    try:
        prepared = publishing.prepare(session, has_workspace=False, config=tmp_path / "none.toml",
                                      on_gate=gates.append, repo_id="me/ficha-test")
        with pytest.raises(PublishError) as info:
            publishing.plan(session, prepared.report, has_workspace=False, offline_ok=False)
    finally:
        session.workspace.close()
    assert gates == [prepared.report]
    assert prepared.offline and not prepared.plan.hub_read
    assert "HF_HUB_OFFLINE" in prepared.hub_error
    assert prepared.plan.repo_id == "me/ficha-test"
    assert prepared.plan.questions.num_rows == len(session)  # no workspace: every pair counts
    assert info.value.kind == "offline"
    with pytest.raises(PublishError):  # an offline preview is never published
        publishing.perform(prepared)


# -- decide, edit and repair through app.review ------------------------------------------------


@pytest.fixture
def tiny_session(tiny, tmp_path):
    from mtcb_curate.app.sources import Options, open_session

    session = open_session(Options("ficha", source=[str(tiny)], workspace=tmp_path / "ws"))
    yield session
    session.workspace.close()


def test_a_repair_returns_what_changed(tiny_session):
    from mtcb_curate.app import review
    from mtcb_curate.app.verdicts import Verdicts
    from mtcb_curate.dataset.model import Status

    session, verdicts = tiny_session, Verdicts(tiny_session)
    assert verdicts.quick(2).verdict == "normalized"  # "Beta sells  bells." (a doubled space)
    change = review.snap(session, verdicts, 2)
    assert change == review.Change(2, ("supporting_passage",), Status.UNDECIDED, "exact", "snap")
    assert session.view(2).passage == "Beta sells bells."
    with pytest.raises(review.NotApplicable, match="Already verbatim"):
        review.snap(session, verdicts, 2)
    trimmed = review.trim(session, verdicts, 2)
    assert (trimmed.fields, trimmed.verdict, trimmed.via) == (("supporting_passage",), "exact", "trim")
    assert session.view(2).passage == "Beta sells bells"
    with pytest.raises(review.NotApplicable, match="Nothing to trim"):
        review.trim(session, verdicts, 2)
    same = review.repair(session, verdicts, 2, "Beta sells bells", "select")
    assert not same.changed and same.fields == ()
    selected = review.select(session, verdicts, 1, 0, len("Alpha makes anvils."))
    assert selected.fields == ("supporting_passage",) and selected.verdict == "exact" and selected.via == "select"
    with pytest.raises(review.NotApplicable):
        review.select(session, verdicts, 1, 5, 5)  # an empty span: nothing written
    assert session.undo() == 1 and session.undo() == 2 and session.undo() == 2
    assert session.view(2).passage == "Beta sells  bells."
    decided = review.decide(session, 0, Status.REJECTED, "off topic")
    assert decided == review.Change(0, ("status",), Status.REJECTED)


def test_a_repair_on_a_read_only_workspace_is_a_workspace_error(tiny, tmp_path, tiny_session):
    from mtcb_curate.app import review
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.app.verdicts import Verdicts

    tiny_session.workspace.close()
    reader = open_session(Options("ficha", source=[str(tiny)], workspace=tmp_path / "ws", read_only=True))
    try:
        with pytest.raises(CurateError):
            review.snap(reader, Verdicts(reader), 2)
        assert reader.view(2).passage == "Beta sells  bells."
    finally:
        reader.workspace.close()


# -- the store interface ------------------------------------------------------------------------


def test_the_sqlite_workspace_is_a_store_with_the_same_signatures(tmp_path):
    import inspect

    from mtcb_curate.store.base import STORE_MEMBERS, Store

    ws = Workspace.open(tmp_path / "ws")
    try:
        assert isinstance(ws, Store)
    finally:
        ws.close()
    declared = {n for n in vars(Store) if not n.startswith("_")} | set(Store.__annotations__)
    assert declared == set(STORE_MEMBERS)
    for name in STORE_MEMBERS:
        if callable(getattr(Store, name, None)):
            assert (list(inspect.signature(getattr(Store, name)).parameters)
                    == list(inspect.signature(getattr(Workspace, name)).parameters)), name


def test_the_session_needs_nothing_of_its_workspace_beyond_the_store(tmp_path):
    """Every ``workspace.X`` the session and the application layer use is a ``Store`` member."""
    import re

    from mtcb_curate.store.base import STORE_MEMBERS

    used = set()
    for path in [PACKAGE / "store" / "session.py", *(PACKAGE / "app").glob("*.py")]:
        used |= set(re.findall(r"\bworkspace\.(\w+)", path.read_text(encoding="utf-8")))
    assert used and used <= set(STORE_MEMBERS), used - set(STORE_MEMBERS)
