"""The review controller without Textual: every key that changes or moves something, and what
follows it (the pair shown next, the rows to repaint, the lines to tell the curator, the
problems of the pairs changed), on a real session and workspace."""

from __future__ import annotations

import sys

import pytest

from conftest import CORPUS
from support import opened, write_source

from mtcb_curate.app import bulk as app_bulk
from mtcb_curate.app import filters
from mtcb_curate.app.controller import FILTERS, Queue, ReviewController
from mtcb_curate.dataset.model import Status

QUESTIONS = [
    {"question": "What does Alpha make?", "answer": "Anvils", "supporting_passage": "Alpha makes anvils.",
     "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
    {"question": "What was Alpha's revenue in 2022?", "answer": "$10 million",
     "supporting_passage": "Revenue was $10 million in 2022.", "ticker": "AAA", "company": "Alpha",
     "chunk_index": 0},
    {"question": "What does Beta sell?", "answer": "Bells", "supporting_passage": "Beta sells  bells.",
     "ticker": "BBB", "company": "Beta", "chunk_index": None},
    {"question": "Which year was Beta's best?", "answer": "2021",
     "supporting_passage": "  Its \u2019best\u2019 year was 2021.", "ticker": "BBB", "company": "Beta",
     "chunk_index": None},
]


@pytest.fixture
def session(tmp_path):
    s = opened(write_source(tmp_path / "src", CORPUS, QUESTIONS), tmp_path / "ws")
    yield s
    s.workspace.close()


@pytest.fixture
def c(session) -> ReviewController:
    controller = ReviewController(session)
    controller.configure(None)
    controller.apply_filter(None, keep=0)
    return controller


def texts(out) -> list[str]:
    return [n.text for n in out.notices]


def test_the_controller_runs_without_textual(tmp_path):
    """In a fresh interpreter: deciding through the controller loads no Textual module."""
    import subprocess

    src = write_source(tmp_path / "src", CORPUS, QUESTIONS)
    code = ("import sys; sys.path.insert(0, 'tests');"
            "from support import opened;"
            "from mtcb_curate.app.controller import ReviewController;"
            "from mtcb_curate.dataset.model import Status;"
            f"s = opened({str(src)!r}, {str(tmp_path / 'ws')!r});"
            "c = ReviewController(s); c.apply_filter(None, keep=0); c.decide(Status.ACCEPTED); c.undo();"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))")
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- deciding ------------------------------------------------------------------------------------


def test_a_decision_is_saved_and_moves_to_the_next_row(c, session, tmp_path):
    out = c.decide(Status.ACCEPTED)
    assert session.status(0) is Status.ACCEPTED
    assert session.workspace.decisions()[0].status == "accepted"  # on disk before the screen moves
    assert (out.current, out.rows, out.moved_from) == (1, {0}, 0)
    assert out.deferred and not out.show  # shown once no key waits
    assert not out.set_checks  # an accept changes no set-wide check's input
    out = c.decide(Status.REJECTED, "unanswerable")
    assert session.view(1).reason == "unanswerable" and out.current == 2
    assert out.set_checks  # a rejection leaves the duplicates' and shared passages' set


def test_the_last_row_stays_and_says_so(c, session):
    c.move_to(3)
    out = c.decide(Status.SKIPPED)
    assert out.current == 3 and out.moved_from is None
    assert texts(out) == ["End of the queue (n: next undecided pair)."]
    assert session.status(3) is Status.SKIPPED


def test_a_decided_row_leaves_a_view_of_another_status(c, session):
    c.apply_filter(Status.UNDECIDED, keep=1)
    out = c.decide(Status.FLAGGED)
    assert out.rebuilt and c.queue.ids == [0, 2, 3] and out.current == 2
    assert session.status(1) is Status.FLAGGED


def test_a_read_only_workspace_decides_nothing(tmp_path):
    src = write_source(tmp_path / "src", CORPUS, QUESTIONS)
    opened(src, tmp_path / "ws").workspace.close()
    session = opened(src, tmp_path / "ws", read_only=True)
    try:
        c = ReviewController(session)
        c.apply_filter(None, keep=0)
        out = c.decide(Status.ACCEPTED)
        assert out.notices[0].severity == "warning" and "read-only" in out.notices[0].text
        assert session.status(0) is Status.UNDECIDED and c.current == 0
        assert c.writable_pair()[0] is None and "read-only" in texts(c.undo())[0]
    finally:
        session.workspace.close()


def test_accept_asks_first_only_when_a_check_fails(c):
    c.verdicts.quick(2)  # the doubled space: not verbatim
    c.move_to(2)
    assert c.accept_check() == ["verbatim"]
    c.confirm_failing_accept = False
    assert c.accept_check() == []
    c.confirm_failing_accept = True
    c.move_to(1)
    assert c.accept_check() == []


# -- undo ----------------------------------------------------------------------------------------


def test_undo_takes_back_the_latest_decision_and_shows_its_pair(c, session):
    c.decide(Status.ACCEPTED)
    c.decide(Status.ACCEPTED)
    assert c.current == 2
    out = c.undo()
    assert session.status(1) is Status.UNDECIDED and session.status(0) is Status.ACCEPTED
    assert out.current == 1 and out.rebuilt and out.show and out.source_bar
    assert out.find_clusters and out.set_checks
    c.undo()
    assert texts(c.undo()) == ["Nothing to undo."]


def test_undo_of_an_edit_restores_the_text_and_its_problems(c, session):
    before = c.problems(0)
    c.save_edit(0, {"supporting_passage": "Alpha makes anvils. Revenue was $10 million in 2022."})
    out = c.edited(0)
    assert out.rescore == [0] and out.find_clusters and out.show
    assert c.problems(0) != before
    c.undo()
    assert session.view(0).passage == "Alpha makes anvils." and c.problems(0) == before


# -- problems after each change ---------------------------------------------------------------------


def test_problems_follow_a_repair_and_its_undo(c, session):
    c.verdicts.quick(2)
    assert "verbatim" in {p.check_id for p in c.problems(2) if p.fails} and c.pair_fails(2)
    out = c.snap(2)
    assert session.view(2).passage == "Beta sells bells."
    assert texts(out) == ["snap: the passage is now EXACT (u undoes)."]
    assert 2 in out.rescore and out.find_clusters
    assert "verbatim" not in {p.check_id for p in c.problems(2)} and 2 not in c.not_verbatim
    c.undo()
    assert session.view(2).passage == "Beta sells  bells." and 2 in c.not_verbatim
    assert "verbatim" in {p.check_id for p in c.problems(2) if p.fails}


def test_repairs_that_do_nothing_say_so_and_write_nothing(c, session):
    out = c.trim(3)  # leading spaces, a trailing full stop
    assert session.view(3).passage == "Its \u2019best\u2019 year was 2021"
    assert texts(out) == ["trim: the passage is now EXACT (u undoes)."]
    history = len(session.workspace.history())
    assert texts(c.trim(3)) == ["Nothing to trim."]
    assert texts(c.snap(0)) == ["Already verbatim: nothing to snap."]
    assert len(session.workspace.history()) == history


def test_a_selected_span_becomes_the_passage(c, session):
    text = session.dataset.documents["AAA"].text
    start = text.index("Revenue")
    c.select(1, start, start + len("Revenue was $10 million"))
    assert session.view(1).passage == "Revenue was $10 million"
    assert c.select(1, 5, 5).notices[0].severity == "warning"  # an empty span: nothing written
    assert session.view(1).passage == "Revenue was $10 million"


def test_the_set_wide_results_feed_the_problems_until_forgotten(c):
    from mtcb_curate.checks.pair import set_check_results

    c.set_results = set_check_results(c.session, threshold=c.dedup_threshold, limits=c.limits)
    assert c.problems_cached(0) is False  # the results changed: worked out again
    c.problems(0)
    assert c.problems_cached(0)
    c.forget_problems()
    assert not c.problems_cached(0)


# -- the view and the cursor ---------------------------------------------------------------------


def test_moves_clamp_and_jumps_switch_the_view(c):
    out = c.move_by(-1)
    assert out.current == 0 and out.show
    assert c.move_by(10).current == 3
    c.decide(Status.ACCEPTED)  # pair 3
    c.apply_filter(Status.UNDECIDED, keep=0)
    assert c.queue.ids == [0, 1, 2]
    out = c.move_to(3)  # not in this view: the view becomes all pairs
    assert out.current == 3 and c.status_filter is None and out.rebuilt
    out = c.goto(1)
    assert out.current == 1 and out.moved_from == 3


def test_the_v_cycle_and_the_filter_bar(c, session):
    c.decide(Status.ACCEPTED)
    seen = []
    for _ in FILTERS:
        out = c.cycle_filter()
        seen.append((c.status_filter, list(c.queue.ids)))
    assert seen[0] == (Status.UNDECIDED, [1, 2, 3]) and seen[1] == (Status.ACCEPTED, [0])
    assert seen[-1] == (None, [0, 1, 2, 3])
    out = c.set_view(filters.parse("doc:BBB"))
    assert c.queue.ids == [2, 3] and texts(out) == ["view: 2 of 4 pairs"] and not c.whole
    assert c.in_view(3) and not c.in_view(0) and c.view_doc_keys() == ["BBB"]
    out = c.set_view(filters.parse("doc:ZZZ"))
    assert c.queue.ids == [] and out.current is None and "No pair passes" in texts(out)[0]
    assert c.decide(Status.ACCEPTED).notices == []  # nothing to decide in an empty view


def test_next_undecided_and_search(c):
    c.decide(Status.ACCEPTED)
    c.decide(Status.ACCEPTED)
    c.move_to(0)
    assert c.next_undecided().current == 2
    assert c.search("Beta's best").current == 3
    assert c.search("").current == 3 and c.last_query == "Beta's best"  # the last query again
    assert c.search("no such words").notices[0].severity == "warning"


# -- notes, pairs by hand, bulk --------------------------------------------------------------------


def test_a_note_is_saved_said_and_undone(c, session):
    out = c.set_note(1, "check the 10-K")
    assert session.note(1) == "check the 10-K" and texts(out) == ["Note on #1 saved (u undoes)."]
    assert c.set_note(1, "check the 10-K").notices == []  # unchanged: nothing recorded
    c.undo()
    assert session.note(1) is None


def test_a_pair_by_hand_joins_the_queue_and_is_shown(c, session):
    text = session.dataset.documents["BBB"].text
    start = text.index("Beta")
    out = c.add_hand_pair("BBB", start, start + len("Beta sells bells."), "What does Beta sell?", "Bells")
    assert len(session) == 5 and out.current == 4 and c.queue.ids[-1] == 4 and out.source_bar
    assert c.add_hand_pair("BBB", 0, 0, "q", "a").notices[0].severity == "error"
    c.undo()
    assert len(session) == 4 and c.current in c.queue.ids and 4 not in c.queue.ids


def test_a_bulk_action_over_the_view_is_one_undo_step(c, session):
    c.set_view(filters.parse("doc:AAA"))
    ids = list(c.queue.ids)
    assert c.bulk_counts(ids)[app_bulk.ACCEPT] == 2
    plan = c.plan_bulk(app_bulk.ACCEPT, ids, None, None)
    out = c.apply_bulk(plan)
    assert [session.status(i) for i in range(4)] == [Status.ACCEPTED] * 2 + [Status.UNDECIDED] * 2
    assert texts(out) == ["Bulk accept: 2 pairs changed (u undoes all of it)."] and out.rebuilt
    c.undo()
    assert all(session.status(i) is Status.UNDECIDED for i in range(4))


def test_the_queue_model_keeps_its_cursor_on_a_removed_row():
    q = Queue()
    q.set_ids([1, 3, 5, 7], keep=5)
    assert q.cursor == 2
    q.remove(5)
    assert q.current == 7
    q.remove(7)
    assert q.current == 3
    q.set_ids([2, 4], keep=9)
    assert q.current == 4  # kept on its row, clamped


def _answers_for(session, reasons: dict[int, str | None]):
    """An ``AnswerableTable`` of the session's current texts with these support reasons."""
    from mtcb_curate.app.analysis_store import AnswerableTable, answerable_stamp
    from mtcb_curate.checks.cache import answerable_key

    views = [session.view(pid) for pid in range(len(session))]
    return AnswerableTable([answerable_key(v.question, v.answer, v.passage) for v in views],
                           [reasons.get(pid) for pid in range(len(views))], answerable_stamp(), "wordllama")


def _answerable(problems) -> list[str]:
    return [p.reason for p in problems if p.check_id == "answerable"]


def test_answerable_comes_from_the_analysis_and_is_never_worked_out_here_while_one_is_pending(c, session,
                                                                                                monkeypatch):
    from mtcb_curate.checks import questions

    calls = []
    real = questions.overlap_problem
    monkeypatch.setattr(questions, "overlap_problem", lambda *a, **k: calls.append(a) or real(*a, **k))
    c.analysis_pending = True
    assert _answerable(c.problems(0)) == [] and calls == []  # not known yet: nothing said, nothing loaded
    out = c.absorb_answers(_answers_for(session, {0: "figure $1 not in the passage"}), pending=False)
    assert out.show and out.current == 0
    assert _answerable(c.problems(0)) == ["figure $1 not in the passage"] and calls == []
    # an edit: the reason worked out for the old texts no longer applies; while an analysis is
    # asked for the pair waits for it, without one it is worked out here
    c.save_edit(0, {"answer": "Anvils and $45 million"})
    c.edited(0)
    c.analysis_pending = True
    assert _answerable(c.problems(0)) == [] and calls == []
    out = c.analysis_ended(pending=False)
    assert out.show
    assert _answerable(c.problems(0)) == [questions.overlap_problem("Anvils and $45 million", "Alpha makes anvils.",
                                                                    "What does Alpha make?")]
    assert len(calls) == 2 and _answerable(c.problems(0))  # cached: not worked out again
    assert len(calls) == 2


def test_an_undo_finds_the_reason_of_the_texts_it_brings_back_at_once(c, session, monkeypatch):
    from mtcb_curate.checks import questions

    monkeypatch.setattr(questions, "overlap_problem", lambda *a, **k: pytest.fail("worked out in the app"))
    c.analysis_pending = True
    c.absorb_answers(_answers_for(session, {0: "figure $1 not in the passage"}), pending=False)
    c.save_edit(0, {"answer": "Anvils, made by Alpha"})
    c.edited(0)
    c.absorb_answers(_answers_for(session, {0: None}), pending=False)  # the analysis of the edit
    assert _answerable(c.problems(0)) == []
    c.undo()
    assert session.view(0).answer == "Anvils"
    assert _answerable(c.problems(0)) == ["figure $1 not in the passage"]


def test_a_long_answer_is_said_while_its_support_reason_is_not_known(c, session):
    from mtcb_curate.checks.questions import MAX_ANSWER_CHARS

    c.save_edit(1, {"answer": "$10 million " * (MAX_ANSWER_CHARS // 10)})
    c.analysis_pending = True
    got = _answerable(c.problems(1))
    assert len(got) == 1 and "over the maximum" in got[0]


@pytest.mark.answerable_stage  # no config file: the defaults
def test_answerable_ahead_is_read_from_the_config_and_a_bad_value_says_so(session, tmp_path):
    from mtcb_curate.app.analysis import ANSWERABLE_AHEAD

    c = ReviewController(session)
    assert not texts(c.configure(None)) and c.answerable_ahead == ANSWERABLE_AHEAD
    config = tmp_path / "config.toml"
    config.write_text("[review]\nanswerable_ahead = 0\n", encoding="utf-8")
    assert not texts(c.configure(config)) and c.answerable_ahead == 0
    for bad in ("-1", "1.5", "true", '"many"'):
        config.write_text(f"[review]\nanswerable_ahead = {bad}\n", encoding="utf-8")
        c = ReviewController(session)
        said = texts(c.configure(config))
        assert c.answerable_ahead == ANSWERABLE_AHEAD, bad
        assert len(said) == 1 and "[review] answerable_ahead must be a whole number" in said[0], bad


def test_reasons_landing_apply_a_filtered_view_again_and_leave_an_unfiltered_one(c, session, monkeypatch):
    """``absorb_answers`` and ``analysis_ended`` end as ``absorb_analysis`` does: a filtered view
    is applied again (its pairs may change), an unfiltered one stays (only the pair shown again)."""
    from mtcb_curate.checks import questions

    monkeypatch.setattr(questions, "overlap_problem", lambda *a, **k: pytest.fail("worked out in the app"))
    c.analysis_pending = True
    out = c.absorb_answers(_answers_for(session, {}), pending=True)
    assert out.show and not out.rebuilt and c.queue.ids == list(range(len(session)))
    c.set_view(filters.parse("warns:answerable"))
    assert c.queue.ids == []
    out = c.absorb_answers(_answers_for(session, {1: "figure $9 not in the passage"}), pending=True)
    assert out.show and out.rebuilt and out.current == 1 and c.queue.ids == [1]
    out = c.analysis_ended(pending=False)
    assert out.show and out.rebuilt and c.queue.ids == [1]
