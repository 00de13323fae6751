"""chunk_index repair wired through the store, the session, app/review, the links check, the
CLI (`mtcb-curate repair NAME --chunk-index`) and the review screen (`i`, `I`)."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest
from support import call_main, opened, review_app, settle, write_source

from mtcb_curate.app import review as app_review
from mtcb_curate.app.export import export_rows
from mtcb_curate.checks import CHECKS_BY_ID, CheckContext
from mtcb_curate.dataset import tokens as tok
from mtcb_curate.dataset.model import HistoryKind, Via
from mtcb_curate.hub.tables import accepted_pairs
from mtcb_curate.store.sqlite import Workspace
from mtcb_curate.verify.chunk_index import MEANING_KEY




def _document(words: int = 9000, seed: int = 7) -> str:
    """An English-like document of two windows (about 13,000 tokens)."""
    rng = random.Random(seed)
    vocab = ("revenue market the of and company fiscal year increased net income segment "
             "operating cash flow assets million billion December quarter growth").split()
    out = []
    for n in range(words):
        out.append(rng.choice(vocab) if rng.random() < 0.8 else str(rng.randrange(10_000)))
        out.append(".\n" if n % 17 == 16 else " ")
    return "".join(out)


TEXT = _document()


def _spans() -> tuple[str, str]:
    """A passage only in window 0 and one only in window 1."""
    ws = tok.windows(TEXT)
    assert len(ws) == 2
    early = TEXT[100:220]
    late_start = ws[0].end + 500
    late = TEXT[late_start:late_start + 120]
    assert TEXT.count(early) == 1 and TEXT.count(late) == 1
    return early, late


def _source(tmp_path):
    early, late = _spans()
    corpus = [{"ticker": "AAA", "company": "Alpha", "text": TEXT},
              {"ticker": "BBB", "company": "Beta", "text": "Beta sold 12 boats in 2020 and 14 boats in 2021."}]
    # chunk_index numbers paragraphs, as in SQuAD-style sources: wrong for MTCB's windows.
    q = [
        {"question": "What came first?", "answer": "x", "supporting_passage": early, "ticker": "AAA",
         "company": "Alpha", "chunk_index": 0},  # right: window 0
        {"question": "What came later?", "answer": "y", "supporting_passage": late, "ticker": "AAA",
         "company": "Alpha", "chunk_index": 0},  # wrong: window 1
        {"question": "What else came first?", "answer": "z", "supporting_passage": early[10:90],
         "ticker": "AAA", "company": "Alpha", "chunk_index": 7},  # out of range -> 0
        {"question": "How many boats did Beta sell in 2021?", "answer": "14",
         "supporting_passage": "14 boats in 2021", "ticker": "BBB", "company": "Beta",
         "chunk_index": 3},  # out of range -> 0
    ]
    return write_source(tmp_path / "src", corpus, q)


def _links(session, has_workspace=True):
    ctx = CheckContext.build(session, has_workspace=has_workspace, loads=False)
    return CHECKS_BY_ID["links"](ctx)


def _accept_all(session):
    for pid in range(len(session)):
        session.decide(pid, app_review.Status.ACCEPTED)


def test_workspace_edit_many_is_one_undo_step(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    try:
        ws.edit(9, {"question": "by hand"})
        seqs = ws.edit_many({1: {"chunk_index": 4}, 2: {"chunk_index": 5}, 3: {"chunk_index": None}},
                            via="chunk_index")
        assert len(seqs) == 3
        assert ws.edits() == {9: {"question": "by hand"}, 1: {"chunk_index": 4}, 2: {"chunk_index": 5}}
        groups = {e.pair_id: e.group for e in ws.history() if e.kind == "edit"}
        assert groups == {9: None, 1: seqs[0], 2: seqs[0], 3: seqs[0]}
        entry = ws.undo()
        assert sorted(e.pair_id for e in entry.members) == [1, 2, 3]
        assert ws.edits() == {9: {"question": "by hand"}}  # the whole group, nothing else
        assert ws.undo().pair_id == 9 and ws.edits() == {}
        assert ws.edit_many({}) == []
    finally:
        ws.close()


def test_session_set_chunk_index_is_an_undoable_edit_applied_everywhere(tmp_path):
    session = opened(_source(tmp_path), tmp_path / "ws")
    try:
        assert session.set_chunk_index(1, 1) is True
        assert session.set_chunk_index(1, 1) is False  # already that: nothing recorded
        assert session.pairs[1].chunk_index == 1 and session.dataset.pairs[1].chunk_index == 0
        v = session.view(1)
        assert v.pair.chunk_index == 1 and "chunk_index" in v.edited
        last = session.workspace.history()[-1]
        assert (last.kind, last.via, last.after) == (HistoryKind.EDIT, Via.CHUNK_INDEX, {"chunk_index": 1})
        _accept_all(session)
        assert export_rows(session)[1]["chunk_index"] == 1
        assert [p.chunk_index for p in accepted_pairs(session)] == [0, 1, 7, 3]
        with pytest.raises(ValueError):
            session.set_chunk_index(1, -1)
        session.workspace.close()
        again = opened(None, tmp_path / "ws")  # survives a restart
        try:
            assert again.pairs[1].chunk_index == 1
            # Undo the four decisions, then the edit: the loaded value is back.
            for _ in range(4):
                again.undo()
            assert again.undo() == 1
            assert again.pairs[1].chunk_index == 0 and "chunk_index" not in again.view(1).edited
        finally:
            again.workspace.close()
    finally:
        session.workspace.close()


def test_repair_one_pair_passing_already_right_and_refused(tmp_path):
    session = opened(_source(tmp_path), tmp_path / "ws")
    try:
        change = app_review.repair_chunk_index(session, 1)
        assert change.fields == ("chunk_index",) and change.via == "chunk_index"
        assert change.note.startswith("chunk_index 0 -> 1:")
        assert session.pairs[1].chunk_index == 1
        with pytest.raises(app_review.NotApplicable, match="already holds"):
            app_review.repair_chunk_index(session, 0)
        session.edit(0, {"supporting_passage": "nowhere in any document at all, not even close"})
        with pytest.raises(app_review.NotApplicable, match="not located"):
            app_review.repair_chunk_index(session, 0)
        # A passage straddling the window boundary beyond the overlap: refused with the reason.
        ws = tok.windows(TEXT)
        straddle = TEXT[ws[1].start - 3000:ws[0].end + 3000]
        session.edit(0, {"supporting_passage": straddle})
        with pytest.raises(app_review.NotApplicable, match="shorten"):
            app_review.repair_chunk_index(session, 0)
        assert session.pairs[0].chunk_index == 0
    finally:
        session.workspace.close()


def test_bulk_repair_makes_links_pass_and_one_undo_restores_all(tmp_path):
    session = opened(_source(tmp_path), tmp_path / "ws")
    try:
        _accept_all(session)
        before = _links(session)
        assert before.status == "fail" and before.pairs == [1, 2, 3]
        assert "key i" in before.message and "--chunk-index" in before.message
        assert "set it to 1" in before.reasons[1] and "chunk_index_meaning = ignore" in before.reasons[1]
        fixes = app_review.plan_chunk_index_repairs(session)
        assert [(f.pair_id, f.old, f.new) for f in fixes] == [(1, 0, 1), (2, 7, 0), (3, 3, 0)]
        changes = app_review.repair_all_chunk_indexes(session)
        assert [c.pair_id for c in changes] == [1, 2, 3]
        assert [p.chunk_index for p in session.pairs] == [0, 1, 0, 0]
        assert _links(session).status == "pass"
        assert app_review.repair_all_chunk_indexes(session) == []  # nothing left to do
        assert session.undo() == 1  # one step restores every pair
        assert [p.chunk_index for p in session.pairs] == [0, 0, 7, 3]
        assert session.status(3) == app_review.Status.ACCEPTED  # the decisions stay
        assert _links(session).status == "fail"
    finally:
        session.workspace.close()


def test_repair_limited_to_ids(tmp_path):
    session = opened(_source(tmp_path), tmp_path / "ws")
    try:
        changes = app_review.repair_all_chunk_indexes(session, ids=[3])
        assert [c.pair_id for c in changes] == [3]
        assert [p.chunk_index for p in session.pairs] == [0, 0, 7, 0]
    finally:
        session.workspace.close()


def test_the_meaning_is_read_once_and_again_when_the_workspace_is_read_again(tmp_path):
    """Every pair's problems read chunk_index_meaning: one workspace read, not one per pair;
    set by another session of the same workspace (another curator), it is seen once the
    decisions are read again (``reload_decisions``, the team refresh)."""
    source = _source(tmp_path)
    mine = opened(source, tmp_path / "ws")
    try:
        reads = []
        real = mine.workspace.get_meta
        mine.workspace.get_meta = lambda key: (reads.append(key), real(key))[1]
        assert [mine.chunk_index_meaning for _ in range(5)] == ["mtcb"] * 5
        assert reads == [MEANING_KEY]
        # another writer of the workspace (another curator's, on a shared one)
        with sqlite3.connect(mine.workspace.path / "workspace.sqlite") as other:
            other.execute("INSERT OR REPLACE INTO meta VALUES (?, 'ignore')", (MEANING_KEY,))
        other.close()
        assert mine.chunk_index_meaning == "mtcb"  # not read again yet
        mine.reload_decisions()
        assert mine.chunk_index_meaning == "ignore" and reads == [MEANING_KEY] * 2
        assert app_review.set_chunk_index_meaning(mine, "mtcb") is True
        assert mine.chunk_index_meaning == "mtcb" and real(MEANING_KEY) == "mtcb"
    finally:
        mine.workspace.close()


def test_meaning_ignore_makes_links_skip_chunk_index(tmp_path):
    session = opened(_source(tmp_path), tmp_path / "ws")
    try:
        _accept_all(session)
        assert session.chunk_index_meaning == "mtcb"
        assert app_review.set_chunk_index_meaning(session, "ignore") is True
        assert app_review.set_chunk_index_meaning(session, "ignore") is False
        assert session.workspace.get_meta(MEANING_KEY) == "ignore"
        res = _links(session)
        assert res.status == "pass" and "not checked" in res.message
        with pytest.raises(app_review.NotApplicable):
            app_review.set_chunk_index_meaning(session, "paragraph")
        app_review.set_chunk_index_meaning(session, "mtcb")
        assert _links(session).status == "fail"
    finally:
        session.workspace.close()


def test_the_verdict_cache_follows_the_chunk_index(tmp_path):
    from mtcb_curate.app.verdicts import Verdicts

    session = opened(_source(tmp_path), tmp_path / "ws")
    try:
        verdicts = Verdicts(session)
        assert verdicts.complete(1).in_chunk is False
        app_review.repair_chunk_index(session, 1, verdicts=verdicts)
        assert verdicts.complete(1).in_chunk is True
    finally:
        session.workspace.close()


# -- the command line ------------------------------------------------------------------------


def test_cli_repair_dry_run_then_apply_then_meaning(tmp_path):
    src, ws = _source(tmp_path), tmp_path / "ws"
    out = tmp_path / "fixes.json"
    r = call_main("repair", "ficha", "--source", src, "--workspace", ws, "--chunk-index", "--dry-run",
                  "--json", out)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["dry_run"] is True and data["changed"] == 3 and data["refused"] == 0
    assert [(f["id"], f["old"], f["new"]) for f in data["fixes"]] == [(1, 0, 1), (2, 7, 0), (3, 3, 0)]
    assert not Workspace.exists(ws)  # a dry run writes nothing
    r = call_main("repair", "ficha", "--source", src, "--workspace", ws, "--chunk-index")
    assert r.returncode == 0, r.stderr
    assert "3 pair(s)" in r.stdout
    session = opened(None, ws)
    try:
        assert [p.chunk_index for p in session.pairs] == [0, 1, 0, 0]
        assert session.undo() == 1 and [p.chunk_index for p in session.pairs] == [0, 0, 7, 3]
    finally:
        session.workspace.close()
    r = call_main("repair", "ficha", "--workspace", ws, "--chunk-index-meaning", "ignore")
    assert r.returncode == 0, r.stderr
    session = opened(None, ws)
    try:
        assert session.chunk_index_meaning == "ignore"
    finally:
        session.workspace.close()


def test_cli_repair_bad_input(tmp_path):
    src, ws = _source(tmp_path), tmp_path / "ws"
    r = call_main("repair", "ficha", "--source", src, "--workspace", ws)
    assert r.returncode == 2 and "--chunk-index" in r.stderr
    r = call_main("repair", "ficha", "--source", src, "--workspace", ws, "--chunk-index-meaning", "paragraph")
    assert r.returncode == 2


# -- the review screen -----------------------------------------------------------------------


async def test_keys_i_and_bulk_I_with_confirm_and_undo(tmp_path):
    session = opened(_source(tmp_path), tmp_path / "ws")
    async with review_app(session, close=True) as (app, pilot):
        screen = app.screen
        screen.queue.move_to(1)
        await pilot.pause()
        await pilot.press("i")
        await settle(app, pilot)
        assert session.pairs[1].chunk_index == 1
        assert any("chunk_index 0 -> 1" in str(n.message) for n in app._notifications)
        await pilot.press("u")
        await settle(app, pilot)
        assert session.pairs[1].chunk_index == 0
        # Bulk: asks once; esc cancels, nothing written.
        await pilot.press("I")
        await settle(app, pilot)
        assert "3 pair" in _screen_text(app.screen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert [p.chunk_index for p in session.pairs] == [0, 0, 7, 3]
        await pilot.press("I")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert [p.chunk_index for p in session.pairs] == [0, 1, 0, 0]
        await pilot.press("u")  # one undo restores all
        await settle(app, pilot)
        assert [p.chunk_index for p in session.pairs] == [0, 0, 7, 3]


async def test_bulk_I_fills_null_chunk_indexes(tmp_path):
    src = _source(tmp_path)
    rows = [json.loads(line) for line in (src / "questions.jsonl").read_text().splitlines()]
    for r in rows:
        r["chunk_index"] = None
    (src / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = opened(src, tmp_path / "ws")
    async with review_app(session, close=True) as (app, pilot):
        await pilot.press("I")
        await settle(app, pilot)
        assert "4 pair" in _screen_text(app.screen)
        await pilot.press("y")
        await settle(app, pilot)
        assert [p.chunk_index for p in session.pairs] == [0, 1, 0, 0]
        await pilot.press("u")  # one undo
        await settle(app, pilot)
        assert [p.chunk_index for p in session.pairs] == [None] * 4


def _screen_text(screen) -> str:
    from textual.widgets import Static

    return " ".join(str(w.render()) for w in screen.query(Static))


async def test_the_palette_toggles_the_chunk_index_meaning(tmp_path):
    from test_tui_messages import palette

    session = opened(_source(tmp_path), tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        listed = await palette(app, pilot, "chunk_index means")
        assert any("ignore it" in row for row in listed), listed
        await pilot.press("enter")
        await settle(app, pilot)
        assert session.chunk_index_meaning == "ignore"
        assert session.workspace.get_meta(MEANING_KEY) == "ignore"
        listed = await palette(app, pilot, "repair chunk_index of every")
        assert any("key: I" in row for row in listed), listed


def test_bulk_fills_pairs_without_a_chunk_index(tmp_path):
    src = _source(tmp_path)
    rows = [json.loads(line) for line in (src / "questions.jsonl").read_text().splitlines()]
    del rows[1]["chunk_index"]
    (src / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = opened(src, tmp_path / "ws")
    try:
        assert session.pairs[1].chunk_index is None
        # a null chunk_index is a repairable gap: the bulk fills it with the others
        assert [f.pair_id for f in app_review.plan_chunk_index_repairs(session)] == [1, 2, 3]
        assert [f.pair_id for f in app_review.plan_chunk_index_repairs(session, include_unset=False)] == [2, 3]
        changes = app_review.repair_all_chunk_indexes(session)
        assert [c.pair_id for c in changes] == [1, 2, 3] and session.pairs[1].chunk_index == 1
        assert changes[0].note.startswith("chunk_index none -> 1")
        session.undo()  # one step
        assert session.pairs[1].chunk_index is None
        change = app_review.repair_chunk_index(session, 1)  # one key on the pair sets it
        assert change.note.startswith("chunk_index none -> 1") and session.pairs[1].chunk_index == 1
    finally:
        session.workspace.close()
