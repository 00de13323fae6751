"""Bulk actions (app/bulk.py) over a list of ids: what each touches, and ONE undo restores all;
the store's grouped decide_many."""

from __future__ import annotations

import pytest

from support import opened, write_source

from mtcb_curate.app import bulk
from mtcb_curate.dataset.model import Status
from mtcb_curate.store.sqlite import Workspace

CORPUS = [{"ticker": "AAA", "text": "Alpha revenue was 10 million for the whole of the last fiscal year. Alpha costs were 4 million in total. Other words."},
          {"ticker": "BBB", "text": "Beta holds the Needle in its haystack. Beta sold 7 units."}]
QUESTIONS = [
    {"question": "What was Alpha revenue?", "answer": "10 million", "supporting_passage": "Alpha revenue was 10 million for the whole of the last fiscal year.",
     "ticker": "AAA", "chunk_index": 0},
    # trimmable edges (still verbatim inside)
    {"question": "What were Alpha costs?", "answer": "4 million", "supporting_passage": "  Alpha costs were 4 million ",
     "ticker": "AAA", "chunk_index": 0},
    # not verbatim: different spacing (snap puts the source text back)
    {"question": "Where is the needle?", "answer": "In the haystack",
     "supporting_passage": "Beta holds the  Needle in its haystack.", "ticker": "BBB", "chunk_index": 0},
    {"question": "How many units did Beta sell?", "answer": "7 units", "supporting_passage": "Beta sold 7 units",
     "ticker": "BBB", "chunk_index": 3},
]


@pytest.fixture
def s(tmp_path):
    session = opened(write_source(tmp_path / "src", CORPUS, QUESTIONS), tmp_path / "ws")
    yield session
    session.workspace.close()


def test_workspace_decide_many_group_is_one_undo_step(tmp_path):
    with Workspace.open(tmp_path / "w") as ws:
        ws.decide(9, "accepted")
        ws.decide_many({1: ("accepted", None), 2: ("rejected", "vague"), 3: ("flagged", None)}, group=True)
        entry = ws.undo()
        assert {e.pair_id for e in entry.members} == {1, 2, 3}
        assert ws.decisions().keys() == {9}
        ws.decide_many({4: ("accepted", None), 5: ("accepted", None)})  # without group: one by one
        ws.undo()
        assert set(ws.decisions()) == {9, 4}


@pytest.mark.parametrize("action,status", [(bulk.ACCEPT, Status.ACCEPTED), (bulk.SKIP, Status.SKIPPED),
                                           (bulk.FLAG, Status.FLAGGED)])
def test_decision_touches_only_pairs_not_already_there_and_one_undo_restores(s, action, status):
    s.decide(0, status)
    s.decide(1, Status.REJECTED, "vague")
    p = bulk.plan(s, action, [0, 1, 2])
    assert p.touched == [1, 2]
    assert bulk.apply(s, p).touched == [1, 2]
    assert [s.status(i) for i in (0, 1, 2, 3)] == [status, status, status, Status.UNDECIDED]
    s.undo()
    assert [s.status(i) for i in (0, 1, 2)] == [status, Status.REJECTED, Status.UNDECIDED]
    assert s.view(1).reason == "vague"


def test_reject_with_a_reason(s):
    s.decide(0, Status.REJECTED, "trivial")
    r = bulk.run(s, bulk.REJECT, [0, 1, 3], reason="trivial")
    assert r.touched == [1, 3] and s.view(3).reason == "trivial"
    assert s.undo() == 1 and s.status(1) is Status.UNDECIDED and s.status(3) is Status.UNDECIDED


def test_trim(s):
    r = bulk.run(s, bulk.TRIM, [1, 3])  # 3 has no edge to trim
    assert r.touched == [1] and s.view(1).passage == "Alpha costs were 4 million"
    s.undo()
    assert s.view(1).passage == "  Alpha costs were 4 million "


def test_snap_only_pairs_not_verbatim(s):
    r = bulk.run(s, bulk.SNAP, [0, 1, 2, 3])
    assert r.touched == [1, 2]  # 1: edge spaces (normalized), 2: a double space; 0 and 3 verbatim
    assert s.view(2).passage == "Beta holds the Needle in its haystack."
    s.undo()
    assert s.view(2).passage == "Beta holds the  Needle in its haystack."


def test_shrink_uses_the_lexical_proposal(s):
    first = "Alpha revenue was 10 million for the whole of the last fiscal year."
    s.edit(0, {"supporting_passage": first + " Alpha costs were 4 million in total."})
    p = bulk.plan(s, bulk.SHRINK, [0, 3])
    assert p.touched == [0]
    bulk.apply(s, p)
    assert s.view(0).passage == first
    s.undo()
    assert s.view(0).passage.endswith("in total.")


def test_chunk_index_repair_of_the_view_only(s):
    s.edit(0, {})  # nothing
    p = bulk.plan(s, bulk.CHUNK_INDEX, [0, 1, 2, 3])
    assert p.touched == [3]
    assert bulk.apply(s, p).touched == [3] and s.pairs[3].chunk_index == 0
    s.undo()
    assert s.pairs[3].chunk_index == 3
    assert bulk.plan(s, bulk.CHUNK_INDEX, [0, 1]).touched == []


def test_not_duplicates_for_every_shown_cluster_in_one_step(s):
    clusters = [[0, 1], [2, 3], [1, 2]]
    p = bulk.plan(s, bulk.NOT_DUPLICATES, [0, 3], clusters=clusters)
    assert p.touched == [0, 1, 2, 3] and p.changes == [[0, 1], [2, 3]]  # [1, 2] holds no shown pair
    bulk.apply(s, p)
    assert s.not_duplicates() == {(0, 1), (2, 3)}
    s.undo()
    assert s.not_duplicates() == set()
    s.mark_not_duplicates([0, 1])
    assert bulk.plan(s, bulk.NOT_DUPLICATES, [0, 3], clusters=clusters).touched == [2, 3]


def test_nothing_to_do_writes_nothing(s):
    before = len(s.workspace.history())
    assert bulk.run(s, bulk.TRIM, [3]).touched == []
    assert len(s.workspace.history()) == before


def test_unknown_action_and_bad_id(s):
    with pytest.raises(bulk.BulkError):
        bulk.plan(s, "explode", [0])
    with pytest.raises(IndexError):
        bulk.plan(s, bulk.ACCEPT, [99])


def test_session_decide_many_survives_a_restart_and_undoes_as_one(tmp_path):
    src = write_source(tmp_path / "src", CORPUS, QUESTIONS)
    s = opened(src, tmp_path / "ws")
    assert s.decide_many({i: (Status.ACCEPTED, None) for i in range(4)}) == [0, 1, 2, 3]
    s.workspace.close()
    s = opened(src, tmp_path / "ws")
    assert s.counts()[Status.ACCEPTED] == 4
    assert s.undo() == 0 and s.counts()[Status.UNDECIDED] == 4
    s.workspace.close()


def test_shrink_lists_the_pairs_it_could_not_fix_and_the_menu_counts_rejections(s):
    first = "Alpha revenue was 10 million for the whole of the last fiscal year."
    s.edit(0, {"supporting_passage": first + " Alpha costs were 4 million in total."})  # shrinkable
    wordy = "Alpha costs were discussed at length by the board. " * 14  # over 600, not the figure
    s.edit(1, {"supporting_passage": wordy.strip()})
    p = bulk.plan(s, bulk.SHRINK, [0, 1, 2, 3])
    # 2 is not verbatim: shrunk from its located span, so it comes out verbatim (nothing shorter)
    assert p.touched == [0, 2] and p.changes[2]["supporting_passage"] == "Beta holds the Needle in its haystack."
    # the long passage it could not fix is listed with the reason, and left as it is
    assert set(p.skipped) == {1}
    assert "over 600 characters" in p.skipped[1] and "4 million" in p.skipped[1]
    bulk.apply(s, p)
    assert s.view(0).passage == first and s.view(1).passage == wordy.strip()
    assert s.status(1) is Status.UNDECIDED  # nothing rejected
    assert bulk.rejects(s, bulk.SHRINK, [0, 1, 2, 3]) == 0 and bulk.rejects(s, bulk.FIT, [0, 1]) == 0
    s.decide(3, Status.REJECTED, "vague")
    assert bulk.rejects(s, bulk.REJECT, [0, 1, 2, 3]) == 3


def test_fit_applies_where_the_evidence_fits_one_chunk_and_lists_the_rest(s):
    from mtcb_curate.app.findability import DocumentChunks
    from mtcb_curate.preview.chunkers import parse_spec
    from mtcb_curate.preview.settings import PreviewSettings

    chunks = DocumentChunks(PreviewSettings((parse_spec("recursive:48"),)))
    doc = s.dataset.document_for(s.pairs[0]).text
    spans = chunks.spans("AAA", doc)[0][1]
    # pair 0's sentence is longer than any chunk: it cannot be fitted and says why
    p = bulk.plan(s, bulk.FIT, [0, 1, 3], chunks=chunks)
    assert 0 in p.skipped and "chunk" in p.skipped[0]
    # a passage of two sentences whose second one holds the answer, cut by a chonkie boundary
    two = doc[doc.index("Alpha costs"):]
    s.edit(1, {"supporting_passage": two})
    start = doc.index(two)
    assert not any(a <= start and start + len(two) <= b for a, b in spans)
    p = bulk.plan(s, bulk.FIT, [1], chunks=chunks)
    assert p.touched == [1], p.skipped
    new = p.changes[1]["supporting_passage"]
    assert "4 million" in new and new in two
    assert any(a <= doc.index(new) and doc.index(new) + len(new) <= b for a, b in spans)
    bulk.apply(s, p)
    assert s.view(1).passage == new
    s.undo()
    assert s.view(1).passage == two
