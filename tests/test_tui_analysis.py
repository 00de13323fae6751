"""The review screen with its analysis in a worker process: the queue's marks and the view
filters of pairs never visited are true once the analysis lands, and again after a single or a
bulk change; a reopened workspace runs no analysis; progress shows and ``esc`` stops it."""

from __future__ import annotations

import functools

import pytest
from conftest import CORPUS, QUESTIONS
from support import current, opened, review_app, settle, wait_until, write_source

from mtcb_curate.app import bulk as app_bulk
from mtcb_curate.app.analysis import AnalysisRunner
from mtcb_curate.app import filters as app_filters
from mtcb_curate.tui.screens import review_analysis
from mtcb_curate.tui.screens.review_rows import VERDICT_MARK
from mtcb_curate.verify import verify_dataset

#: The tiny corpus with a pair of every verdict, the ones not exact far from the cursor.
FUZZY_PASSAGE = "Revenue was $12 million in 2022."  # one word changed: located fuzzily
ROWS = [
    *QUESTIONS,  # 0, 1 exact; 2 normalized (a doubled space)
    dict(QUESTIONS[1], question="How much revenue in 2022?", supporting_passage=FUZZY_PASSAGE),  # 3 fuzzy
    dict(QUESTIONS[0], question="What did Gamma make?", supporting_passage="Gamma makes gears out of gold."),  # 4
    dict(QUESTIONS[0], question="What does nobody say?", supporting_passage=""),  # 5 empty
]


def mark_of(app, pid: int) -> str:
    """The verdict mark of pair ``pid``'s queue row as the screen draws it (second column)."""
    return app.screen.rows.text(pid, 80)[1]


@pytest.fixture
def source(tmp_path):
    return write_source(tmp_path / "src", CORPUS, ROWS)


async def test_marks_and_filters_of_unvisited_pairs_follow_the_analysis(source, tmp_path):
    session = opened(source, tmp_path / "ws")
    want = {r.id: r.verdict for r in verify_dataset(session.dataset, fuzzy=True, count_tokens=False,
                                                   index=session.corpus_index).results}
    assert want[3] == "fuzzy" and want[4] == "missing" and want[2] == "normalized"
    async with review_app(session) as (app, pilot):
        assert current(app) == 0  # nothing but the first pair was ever shown
        for pid, verdict in want.items():
            assert mark_of(app, pid) == VERDICT_MARK[verdict], pid
        app.screen.set_view(app_filters.parse("verdict:fuzzy"))
        await settle(app, pilot)
        assert list(app.screen.queue.ids) == [3]
        app.screen.set_view(app_filters.parse("verdict:missing"))
        await settle(app, pilot)
        assert list(app.screen.queue.ids) == [4]


async def test_marks_follow_a_bulk_change_of_pairs_never_visited(source, tmp_path):
    session = opened(source, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        assert mark_of(app, 3) == "~"
        c = app.screen.controller
        plan = c.plan_bulk(app_bulk.SNAP, [2, 3], None, None)
        assert sorted(plan.touched) == [2, 3]
        app.screen._apply(c.apply_bulk(plan))
        await settle(app, pilot)
        assert current(app) == 0
        for pid in (2, 3):  # snapped: verbatim now, and the marks say so without a visit
            assert c.verdicts.is_complete(pid)
            assert mark_of(app, pid) == VERDICT_MARK["exact"], pid
        app.screen.set_view(app_filters.parse("verdict:fuzzy"))
        await settle(app, pilot)
        assert list(app.screen.queue.ids) == []


async def test_the_near_duplicates_and_set_checks_come_from_the_analysis(tmp_path):
    rows = [*QUESTIONS, dict(QUESTIONS[0], answer="anvils")]  # 3 repeats pair 0's question
    session = opened(write_source(tmp_path / "src", CORPUS, rows), tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        c = app.screen.controller
        assert c.clusters_ready and sorted(c.cluster_index) == [0, 3]
        assert {p.check_id for p in c.problems(3)} >= {"duplicates"}
        assert mark_of(app, 3) == " " and app.screen.rows.text(3, 80)[2] == "▲"


async def test_a_reopened_workspace_reads_its_analysis_and_starts_no_process(source, tmp_path, monkeypatch):
    started: list[AnalysisRunner] = []

    class Counting(AnalysisRunner):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            started.append(self)

    monkeypatch.setattr(review_analysis, "AnalysisRunner", Counting)
    session = opened(source, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        first = [mark_of(app, pid) for pid in range(len(ROWS))]
    assert started[-1].processes_started == 1
    session = opened(None, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        assert [mark_of(app, pid) for pid in range(len(ROWS))] == first
    assert started[-1].processes_started == 0


async def test_progress_shows_and_escape_stops_the_analysis(source, tmp_path, monkeypatch):
    """A worker that never starts (its interpreter waits on stdin): the bar says the analysis
    runs; ``esc`` stops it (killed after the grace period) and the bar says so."""
    import sys

    script = tmp_path / "python"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n")
    script.chmod(0o755)
    monkeypatch.setattr(review_analysis, "AnalysisRunner", functools.partial(AnalysisRunner, python=str(script)))
    monkeypatch.setattr("mtcb_curate.app.analysis.CANCEL_GRACE_S", 0.05)
    session = opened(source, tmp_path / "ws")
    async with review_app(session, settle_analysis=False) as (app, pilot):
        while not (app.screen._runner and app.screen._runner.worker_pid):
            await pilot.pause(0.02)
        assert "analysing" in app.screen.analysis_note
        await pilot.press("escape")
        await settle(app, pilot)
        assert "analysis stopped" in app.screen.analysis_note
        assert not app.screen._runner.busy


async def test_findability_marks_follow_a_bulk_change_of_pairs_never_visited(sample_dir, tmp_path, monkeypatch):
    """After F, a bulk trim of the view rescored every touched pair for its new passage, in one
    batch, without a visit: each row's ``⊄`` mark is that of its current passage."""
    from test_tui_findability import _press_f

    from mtcb_curate.tui.screens.review_rows import FAIL_MARK, UNFINDABLE_MARK

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _press_f(app, pilot)
        c = app.screen.controller
        batches = []
        real = c.findability.score_pairs
        monkeypatch.setattr(c.findability, "score_pairs", lambda ids: batches.append(list(ids)) or real(ids))
        ids = list(c.queue.ids)
        plan = c.plan_bulk(app_bulk.TRIM, ids, None, None)
        assert len(plan.touched) >= 2, "the sample has passages a trim changes"
        app.screen._apply(c.apply_bulk(plan))
        await settle(app, pilot)
        assert batches and sorted(batches[0]) == sorted(plan.touched)  # one batch, every touched pair
        for pid in plan.touched:
            lines = c.current_find_lines(pid)
            assert lines is not None and lines.passage == session.view(pid).passage, pid
            mark = app.screen.rows.text(pid, 80)[2]
            assert mark in (FAIL_MARK, UNFINDABLE_MARK if lines.fits_nowhere() else " "), pid


async def test_opening_the_filter_bar_builds_what_a_text_query_reads(source, tmp_path):
    """Nothing of the text search is built at start (it is not the analysis's: about a second
    and 100 MB at 100,000 pairs, for a curator who may never filter by text); ``V`` builds it
    while the first query is typed."""
    session = opened(source, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        assert session not in app_filters._LOWER
        await pilot.press("V")
        await settle(app, pilot)
        assert set(app_filters._LOWER[session]) == set(app_filters.TEXT_FIELDS.values())


def _panel_checking(panel) -> bool:
    """Whether the QA panel still says its full check of the pair runs."""
    verdict, facts = panel.section_text("verdict"), panel.section_text("facts")
    return verdict.startswith("checking") or "looking for" in verdict or "checking" in facts


@pytest.mark.slow
async def test_every_sample_mark_after_the_analysis_is_what_the_panel_shows_on_a_visit(tmp_path, monkeypatch):
    """A new workspace on the bundled sample: once the analysis is taken, and before any pair
    but the first was shown, every queue row's verdict mark is the mark of the verdict badge the
    QA panel shows when the pair is visited, and its ``▲`` is shown exactly when the panel lists
    a check the pair would fail."""
    from mtcb_curate.tui.screens.review_rows import FAIL_MARK
    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        c = app.screen.controller
        assert c.clusters_ready and current(app) == c.queue.ids[0]
        ids = list(c.queue.ids)
        marks = {pid: app.screen.rows.text(pid, 200)[1:3] for pid in ids}
        panel = app.screen.query_one(QAPanel)
        shown = {}
        for i, pid in enumerate(ids):
            if i:
                await pilot.press("j")
                await settle(app, pilot)
            assert current(app) == pid
            await wait_until(pilot, lambda: not _panel_checking(panel), "the panel's full check landed")
            badge = panel.section_text("verdict").split()[0]
            fails = any(line.lstrip().startswith("✗") for line in panel.section_text("problems").splitlines())
            shown[pid] = VERDICT_MARK[badge.lower()] + (FAIL_MARK if fails else " ")
        assert marks == shown
        # the sample has pairs of more than one verdict, and pairs failing a check and not
        assert len({m[0] for m in shown.values()}) >= 2 and len({m[1] for m in shown.values()}) == 2


async def test_a_pair_checked_by_the_look_ahead_while_its_panel_says_checking_lands(source, tmp_path, monkeypatch):
    """No analysis (its worker process never starts): the panel of the pair on screen says
    "checking". Its full check is then done by another worker (the look-ahead of the pair
    before, which announces a pair only when its verdict changes) before its own locate worker
    runs: that worker still brings the result to the panel, which stops saying "checking"."""
    import sys

    from mtcb_curate.tui.screens import review_painting
    from mtcb_curate.tui.widgets.qa_panel import QAPanel

    script = tmp_path / "python"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n")
    script.chmod(0o755)
    monkeypatch.setattr(review_analysis, "AnalysisRunner", functools.partial(AnalysisRunner, python=str(script)))
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 600.0)  # the locate worker is started below
    session = opened(source, tmp_path / "ws")
    async with review_app(session, settle_analysis=False) as (app, pilot):
        screen, panel = app.screen, app.screen.query_one(QAPanel)
        pid = current(app)
        assert _panel_checking(panel)
        screen.controller.verdicts.complete(pid)  # what the look-ahead worker does, verdict unchanged
        screen._complete_verdict(pid)  # what the locate timer starts
        await settle(app, pilot, analysis=False)
        assert not _panel_checking(panel), panel.section_text("facts")
        assert panel.section_text("verdict").split()[0] == "EXACT"


async def test_with_answerable_ahead_0_the_app_works_out_the_reason_of_each_pair_it_shows(source, tmp_path):
    """``[review] answerable_ahead = 0`` (the tests' config file, ``conftest.TEST_CONFIG``): the
    analysis ends without any pair's reason, and each pair's answerable line is still the
    rule's, worked out in the app when asked."""
    from mtcb_curate.checks.questions import answerable_problem

    session = opened(source, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        c = app.screen.controller
        assert c.answerable_ahead == 0 and not c.analysis_pending and app.screen.analysis_note == ""
        assert c.answers is not None and set(c.answers.keys) == {""}
        for pid in range(len(session)):
            v = session.view(pid)
            got = [p.reason for p in c.problems(pid) if p.check_id == "answerable"]
            want = answerable_problem(v.answer, v.passage, v.question)
            assert got == ([want] if want else []), pid


@pytest.mark.answerable_stage  # the analysis's last stage, as by default
async def test_the_answerable_reasons_land_after_the_marks_and_end_the_progress_note(source, tmp_path):
    """The analysis's last stage (the answerable reasons) ends its run: the bottom bar no longer
    says it is analysing, and the panel of a pair never worked out in the app has its line."""
    from mtcb_curate.checks.questions import answerable_problem

    session = opened(source, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        c = app.screen.controller
        assert app.screen.analysis_note == "" and not c.analysis_pending
        assert c.answers is not None and len(c.answers) == len(session)
        for pid in range(len(session)):
            v = session.view(pid)
            got = [p.reason for p in c.problems(pid) if p.check_id == "answerable"]
            want = answerable_problem(v.answer, v.passage, v.question)
            assert got == ([want] if want else []), pid
