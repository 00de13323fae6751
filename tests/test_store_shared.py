"""The two workspace backends share one implementation of the history and undo
(``store.history.SharedStore``), take their value types from ``store.base`` and the team's rules
from ``store.team``, and import nothing from each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mtcb_curate.store import base, team
from mtcb_curate.store.history import SharedStore
from mtcb_curate.store.postgres import PgWorkspace
from mtcb_curate.store.sqlite import Workspace

STORE = Path(__file__).resolve().parents[1] / "mtcb_curate" / "store"

#: The writes and reads written once for both backends.
SHARED = ("undo", "decide_many", "edit", "edit_many", "add_pair", "set_note", "mark_not_duplicates",
          "mark_shared_evidence", "resolve", "bind", "source_spec", "get_meta", "set_meta", "edits", "history",
          "history_curators", "added_pairs", "not_duplicates", "shared_evidence", "notes", "decision_times",
          "votes", "conflicts")


def _imported_modules(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_backends_import_nothing_from_each_other():
    assert not any(m.startswith("mtcb_curate.store.postgres") for m in _imported_modules(STORE / "sqlite.py"))
    assert not any(m.startswith("mtcb_curate.store.sqlite") for m in _imported_modules(STORE / "postgres.py"))
    for shared in ("base.py", "history.py", "team.py"):
        imported = _imported_modules(STORE / shared)
        assert not any(m.startswith(("mtcb_curate.store.sqlite", "mtcb_curate.store.postgres")) for m in imported)


def test_undo_and_the_history_are_written_once():
    for name in SHARED:
        assert name in vars(SharedStore), name
        assert name not in vars(Workspace) and name not in vars(PgWorkspace), f"{name} written twice"
    from mtcb_curate.store import postgres

    assert getattr(postgres, "votes_agree", team.votes_agree) is team.votes_agree  # one rule, in store.team


def test_value_types_and_team_rules_live_in_base_and_team():
    assert base.Decision.__module__ == "mtcb_curate.store.base"
    assert base.HistoryEntry.__module__ == "mtcb_curate.store.base"
    assert team.votes_agree([("rejected", "duplicate of #3"), ("rejected", "duplicate of #7")])
    assert not team.votes_agree([("rejected", "duplicate"), ("rejected", "not verbatim")])
    assert not team.votes_agree([("accepted", None), ("rejected", None)])
    assert team.reason_category("other: a long why") == "other" and team.reason_category(None) is None


def test_one_undo_takes_back_every_kind_of_change_on_either_backend(open_store):
    """The shared undo over each backend's hooks: a decision, an edit group, a note, a mark, an
    added pair and a group of decisions, taken back latest first, each whole."""
    with open_store() as ws:
        ws.bind("ficha", ["sample:ficha"], "f" * 64)
        ws.decide(1, "accepted")
        ws.edit_many({1: {"question": "Q1"}, 2: {"answer": "A2"}})
        ws.set_note(3, "look again")
        ws.mark_not_duplicates([(5, 4)])
        ws.add_pair(100, {"question": "q", "answer": "a", "supporting_passage": "p", "doc_key": "d"})
        ws.decide_many({6: ("rejected", "duplicate of #1"), 7: ("skipped", None)}, group=True)
        assert ws.decisions()[6].reason == "duplicate of #1"
        kinds = []
        while (step := ws.undo()) is not None:
            kinds.append((step.kind, len(step.members)))
        assert kinds == [("decide", 2), ("add", 1), ("not_duplicates", 1), ("note", 1), ("edit", 2), ("decide", 1)]
        assert ws.decisions() == {} and ws.edits() == {} and ws.notes() == {}
        assert ws.not_duplicates() == set() and ws.added_pairs() == {}
        assert ws.history() == []  # every entry undone
        assert len(ws.history(include_undone=True)) == 8


@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)
def test_a_resolved_conflict_undone_restores_the_decision_before_it(open_store):
    with open_store() as ws:
        ws.bind("ficha", ["sample:ficha"], "f" * 64)
        ws.add_votes({4: {"ann": ("accepted", None, 1.0), "bob": ("rejected", "duplicate", 2.0)}})
        assert 4 in ws.conflicts() and 4 not in ws.decisions()
        ws.resolve(4, "rejected", "duplicate")
        assert ws.decisions()[4].status == "rejected" and ws.conflicts() == {}
        step = ws.undo()
        assert step.via == "resolve" and 4 not in ws.decisions() and 4 in ws.conflicts()
