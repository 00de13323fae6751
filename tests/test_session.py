"""The review session: counts, queue order, search, rate, and edits over a workspace.

Tests taking ``store_target`` run on both backends: SQLite and a real PostgreSQL server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_jsonl  # noqa: E402

from mtcb_curate.dataset.model import Status
from mtcb_curate.store.session import IDLE_CAP_SECONDS, ReviewSession
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.store.opening import open_workspace

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen"]
N = len(WORDS)


@pytest.fixture
def data(tmp_path) -> Path:
    """15 pairs over two documents; no digit anywhere in the texts (so '12' can only be an id)."""
    d = tmp_path / "data"
    write_jsonl(d / "corpus.jsonl", [
        {"ticker": "AAA", "text": " ".join(f"Alpha fact {w}." for w in WORDS)},
        {"ticker": "BBB", "text": "Beta holds the Needle in its haystack."},
    ])
    rows = [{"question": f"What is fact {w}?", "answer": f"Answer {w}", "supporting_passage": f"Alpha fact {w}.",
             "ticker": "AAA", "chunk_index": 0} for w in WORDS]
    rows[9] = {"question": "Where is the needle?", "answer": "In the haystack",
               "supporting_passage": "Beta holds the Needle in its haystack.", "ticker": "BBB", "chunk_index": 0}
    write_jsonl(d / "questions.jsonl", rows)
    return d


def session_for(data: Path, ws_dir: Path) -> ReviewSession:
    return open_session(Options("ficha", source=[str(data)], workspace=ws_dir))


@pytest.fixture
def session(data, tmp_path, store_target):
    s = session_for(data, store_target)
    yield s
    s.workspace.close()


def test_counts_per_status(session):
    assert session.counts() == {Status.UNDECIDED: N, Status.ACCEPTED: 0, Status.REJECTED: 0,
                                Status.SKIPPED: 0, Status.FLAGGED: 0}
    session.decide(0, Status.ACCEPTED)
    session.decide(1, Status.ACCEPTED)
    session.decide(2, Status.REJECTED, "trivial")
    session.decide(3, Status.SKIPPED)
    session.decide(4, Status.FLAGGED)
    session.decide(1, Status.REJECTED, "duplicate")  # a change moves the pair, not adds it
    assert session.counts() == {Status.UNDECIDED: N - 5, Status.ACCEPTED: 1, Status.REJECTED: 2,
                                Status.SKIPPED: 1, Status.FLAGGED: 1}
    assert session.decided == 5
    session.decide(4, Status.UNDECIDED)
    assert session.counts()[Status.FLAGGED] == 0
    assert session.counts()[Status.UNDECIDED] == N - 4
    assert session.status(4) is Status.UNDECIDED
    assert sum(session.counts().values()) == N


def test_reason_is_kept_only_for_rejections(session):
    session.decide(0, Status.REJECTED, "yes/no")
    session.decide(1, Status.ACCEPTED, "yes/no")
    assert session.view(0).reason == "yes/no"
    assert session.view(1).reason is None
    assert session.workspace.decisions()[1].reason is None


def test_ids_filtered_by_status(session):
    session.decide(2, Status.ACCEPTED)
    session.decide(7, Status.ACCEPTED)
    session.decide(5, Status.REJECTED)
    assert session.ids() == list(range(N))
    assert session.ids(Status.ACCEPTED) == [2, 7]
    assert session.ids(Status.REJECTED) == [5]
    assert session.ids(Status.FLAGGED) == []
    assert session.ids(Status.UNDECIDED) == [i for i in range(N) if i not in (2, 5, 7)]


def test_next_undecided_wraps_and_is_none_when_all_decided(session):
    for i in range(N):
        if i not in (3, 10):
            session.decide(i, Status.ACCEPTED)
    assert session.next_undecided(3) == 10
    assert session.next_undecided(10) == 3  # wraps around
    assert session.next_undecided(11) == 3
    assert session.next_undecided() == 3
    session.decide(10, Status.SKIPPED)
    assert session.next_undecided(3) == 3  # the only one left, found after a full turn
    session.decide(3, Status.FLAGGED)
    assert session.next_undecided(0) is None
    assert session.first_undecided() is None


def test_first_undecided_after_reopening(data, tmp_path, store_target):
    ws_dir = store_target
    s = session_for(data, ws_dir)
    assert s.first_undecided() == 0
    for i in (0, 1, 2, 4):
        s.decide(i, Status.ACCEPTED)
    s.edit(5, {"answer": "An edited answer"})
    s.workspace.close()

    s = session_for(data, ws_dir)
    try:
        assert s.first_undecided() == 3
        assert s.counts()[Status.ACCEPTED] == 4
        assert s.view(5).answer == "An edited answer"
        assert s.view(5).edited == frozenset({"answer"})
        assert s.undo() == 5  # the edit was the last action
        assert s.view(5).answer == "Answer five"
        assert s.undo() == 4
        assert s.status(4) is Status.UNDECIDED
    finally:
        s.workspace.close()

    # resuming without --source uses the workspace's stored source
    s = open_session(Options("ficha", workspace=ws_dir))
    try:
        assert "resumed" in s.dataset.source.reason
        assert s.first_undecided() == 3
    finally:
        s.workspace.close()


def test_search_fields_case_insensitively(session):
    assert session.search("WHERE IS THE NEEDLE") == 9  # question
    assert session.search("in the HAYSTACK") == 9  # answer
    assert session.search("beta holds") == 9  # passage
    assert session.search("bbb") == 9  # document key
    assert session.search("answer seven") == 7
    assert session.search("fact") == 0
    assert session.search("fact", after=0) == 1
    assert session.search("fact", after=14) == 0  # wraps
    assert session.search("needle", after=9) == 9  # the only match, after a full turn
    assert session.search("no such text anywhere") is None
    assert session.search("   ") is None


def test_search_sees_edited_text(session):
    session.edit(4, {"question": "A Platypus question"})
    assert session.search("platypus") == 4
    assert session.search("what is fact four?") is None


@pytest.mark.parametrize("query", ["12", "#12", " #12 "])
def test_search_by_id(session, query):
    assert session.search(query) == 12
    assert session.search(query, after=12) == 12


def test_rate_per_hour_caps_idle_gaps(data, tmp_path, store_target):
    ws_dir = store_target
    s = session_for(data, ws_dir)
    assert s.rate_per_hour() is None
    t0 = 1_700_000_000.0
    # three decisions a minute apart, a long break, then one more a minute after the break
    times = [t0, t0 + 60, t0 + 120, t0 + 5120, t0 + 5180]
    for i, t in enumerate(times):
        s.workspace.decide(i, "accepted", at=t)
    s.workspace.close()

    s = session_for(data, ws_dir)
    try:
        # active time: 60 + min(5000, cap) + 60 + 60 = 480 s for 4 intervals -> 30 per hour
        assert IDLE_CAP_SECONDS == 300.0
        assert s.rate_per_hour(now=t0 + 5180) == pytest.approx(4 / (180 + IDLE_CAP_SECONDS) * 3600)
        assert s.rate_per_hour(now=t0 + 5180) == pytest.approx(30.0)
        # the time since the last decision counts, capped as well
        assert s.rate_per_hour(now=t0 + 5180 + 100) == pytest.approx(4 / 580 * 3600)
        assert s.rate_per_hour(now=t0 + 99_999) == pytest.approx(4 / 780 * 3600)
    finally:
        s.workspace.close()


def test_rate_per_hour_needs_two_decisions(data, tmp_path, store_target):
    ws_dir = store_target
    with open_workspace(ws_dir) as ws:
        ws.decide(0, "accepted", at=1000.0)
    s = session_for(data, ws_dir)
    try:
        assert s.rate_per_hour(now=1010.0) is None
    finally:
        s.workspace.close()


def test_rate_per_hour_with_a_patched_clock(session, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr("mtcb_curate.store.session.time.time", lambda: clock[0])
    for i, t in enumerate([1000.0, 1030.0, 1060.0, 1090.0]):
        clock[0] = t
        session.decide(i, Status.ACCEPTED)
    assert session.workspace.decision_times() == [1000.0, 1030.0, 1060.0, 1090.0]
    assert session.rate_per_hour(now=1090.0) == pytest.approx(3 / 90 * 3600)
    session.undo()  # an undone decision no longer counts
    assert session.rate_per_hour(now=1060.0) == pytest.approx(2 / 60 * 3600)


def test_edit_back_to_the_original_removes_the_edit(session):
    original = session.view(2).question
    assert session.edit(2, {"question": "Changed?"}) is True
    assert session.view(2).question == "Changed?"
    assert session.view(2).edited == frozenset({"question"})
    assert session.workspace.edits() == {2: {"question": "Changed?"}}
    assert session.edit(2, {"question": original}) is True
    assert session.view(2).question == original
    assert session.view(2).edited == frozenset()
    assert session.workspace.edits() == {}
    assert session.dataset.pairs[2].question == original  # the loaded pair is never changed


def test_edit_without_change_records_nothing(session):
    before = len(session.workspace.history())
    assert session.edit(1, {"answer": session.view(1).answer}) is False
    assert len(session.workspace.history()) == before


def test_edit_of_an_unknown_field_is_refused(session):
    with pytest.raises(ValueError, match="ticker"):
        session.edit(0, {"ticker": "ZZZ"})
    with pytest.raises(ValueError):
        session.edit(0, {"question": "fine", "passage": "not a field name"})
    assert session.workspace.edits() == {}


def test_out_of_range_ids_are_refused(session):
    with pytest.raises(IndexError):
        session.decide(N, Status.ACCEPTED)
    with pytest.raises(IndexError):
        session.edit(-1, {"question": "x"})
    assert session.workspace.history() == []


def test_undo_through_the_session_keeps_counts_in_step(session):
    session.decide(0, Status.ACCEPTED)
    session.decide(0, Status.REJECTED, "other")
    session.edit(0, {"supporting_passage": "new passage"})
    assert session.undo() == 0
    assert session.view(0).passage == "Alpha fact zero."
    assert session.undo() == 0
    assert session.status(0) is Status.ACCEPTED
    assert session.counts()[Status.ACCEPTED] == 1 and session.counts()[Status.REJECTED] == 0
    assert session.undo() == 0
    assert session.counts()[Status.UNDECIDED] == N
    assert session.undo() is None


def test_read_only_session(data, tmp_path, store_target):
    ws_dir = store_target
    s = session_for(data, ws_dir)
    s.decide(0, Status.ACCEPTED)
    s.workspace.close()
    ro = open_session(Options("ficha", workspace=ws_dir, read_only=True))
    try:
        assert ro.read_only
        assert ro.status(0) is Status.ACCEPTED
    finally:
        ro.workspace.close()


# -- pairs added in the workspace, near-duplicate settling, the curation summary ----------------


def _session_at(tmp_path, ws_dir):
    from conftest import CORPUS, QUESTIONS, write_jsonl
    from mtcb_curate.app.sources import Options, open_session

    src = tmp_path / "src"
    if not src.exists():
        write_jsonl(src / "corpus.jsonl", CORPUS)
        write_jsonl(src / "questions.jsonl", QUESTIONS)
    return open_session(Options(name="ficha", source=[str(src)], workspace=ws_dir))


def test_added_pair_gets_next_id_survives_restart_and_undo_removes_it(tmp_path, store_target):
    s = _session_at(tmp_path, store_target)
    n = len(s)
    pid = s.add_pair("AAA", "Where does Alpha report revenue?", "In 2022", "Revenue was $10 million in 2022.",
                     0, details={"model": "m"})
    assert pid == n and len(s) == n + 1 and s.status(pid) is Status.UNDECIDED
    assert s.view(pid).pair.origin == "generate" and s.ids(Status.UNDECIDED)[-1] == pid
    s.decide(pid, Status.ACCEPTED)
    s.workspace.close()
    s = _session_at(tmp_path, store_target)
    assert len(s) == n + 1 and s.status(pid) is Status.ACCEPTED
    assert s.view(pid).passage == "Revenue was $10 million in 2022."
    assert s.undo() == pid and s.status(pid) is Status.UNDECIDED
    s.undo()
    assert len(s) == n
    s.workspace.close()
    s = _session_at(tmp_path, store_target)
    assert len(s) == n
    s.workspace.close()


def test_keep_one_accepts_the_kept_rejects_the_others_naming_it_and_undoes_as_one_step(tmp_path, store_target):
    s = _session_at(tmp_path, store_target)
    s.decide(1, Status.ACCEPTED)
    assert s.keep_one(1, [0, 1, 2]) == [0, 2]
    assert s.status(1) is Status.ACCEPTED
    assert s.view(0).reason == "duplicate of #1" and s.status(2) is Status.REJECTED
    summary = s.curation_summary()
    assert summary["rejected_by_reason"] == {"duplicate": 2} and summary["accepted"] == 1
    assert s.undo() == 0 and s.status(2) is Status.UNDECIDED and s.status(0) is Status.UNDECIDED  # one step
    assert s.status(1) is Status.ACCEPTED  # was accepted before: untouched
    assert s.keep_one(2, [0, 1, 2]) == [0, 1] and s.status(2) is Status.ACCEPTED  # the kept pair is accepted
    assert s.undo() == 0 and s.status(2) is Status.UNDECIDED and s.status(1) is Status.ACCEPTED
    s.workspace.close()


def test_not_duplicates_are_remembered_and_undoable(tmp_path, store_target):
    s = _session_at(tmp_path, store_target)
    assert s.mark_not_duplicates([2, 0, 1]) is True
    assert s.not_duplicates() == {(0, 1), (0, 2), (1, 2)}
    assert s.mark_not_duplicates([0, 1]) is False
    s.workspace.close()
    s = _session_at(tmp_path, store_target)
    assert s.not_duplicates() == {(0, 1), (0, 2), (1, 2)}
    s.undo()
    assert s.not_duplicates() == set()
    s.workspace.close()


def test_curation_summary_counts_edits_and_regenerations(tmp_path, store_target):
    s = _session_at(tmp_path, store_target)
    s.edit(0, {"question": "What does Alpha manufacture?"})
    s.edit(1, {"answer": "Ten million dollars"}, via="regenerate")
    s.decide(2, Status.REJECTED, "trivial")
    summary = s.curation_summary()
    assert summary["edited"] == 2 and summary["regenerated"] == 1
    assert summary["reviewed"] == 1 and summary["rejected_by_reason"] == {"trivial": 1}
    assert [e.via for e in s.workspace.history() if e.kind == "edit"] == [None, "regenerate"]
    s.workspace.close()


def test_command_session_uses_a_workspace_only_when_asked_or_resuming(tmp_path, monkeypatch, store_target):
    from mtcb_curate.errors import WorkspaceError
    from mtcb_curate.app.sources import Options, command_session

    s = _session_at(tmp_path, store_target)  # creates the source folder and a workspace
    s.decide(0, Status.ACCEPTED)
    s.workspace.close()
    src = [str(tmp_path / "src")]
    with command_session(Options(name="ficha", source=src, workspace=store_target)) as (cs, has_ws):
        assert has_ws and cs.status(0) is Status.ACCEPTED and cs.read_only
    with command_session(Options(name="ficha", source=src)) as (cs, has_ws):
        assert not has_ws and cs.decided == 0
        scratch = cs.workspace.path
    assert not scratch.exists()
    with pytest.raises(WorkspaceError):
        with command_session(Options(name="ficha", source=src, workspace=tmp_path / "none")):
            pass


def test_rate_per_hour_waits_for_a_minute_of_review(data, tmp_path, store_target):
    ws_dir = store_target
    with open_workspace(ws_dir) as ws:
        ws.decide(0, "accepted", at=1000.0)
        ws.decide(1, "accepted", at=1001.0)
    s = session_for(data, ws_dir)
    try:
        assert s.rate_per_hour(now=1002.0) is None  # 2 s of review is not a pace
        assert s.rate_per_hour(now=1070.0) == pytest.approx(1 / 70 * 3600)
    finally:
        s.workspace.close()
