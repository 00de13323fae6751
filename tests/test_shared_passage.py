"""Duplicates mean the same question: ``duplicates`` fails only on pairs that ask the same
question, and pairs whose passages are the same or overlap become the ``shared_passage``
warning, settled one group at a time ("distinct questions on shared evidence", undoable);
the ``S`` screen, its ``n`` key, and the head line's ``≈N similar`` / ``shares its passage``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_jsonl  # noqa: E402
from support import SIZE, opened, settle  # noqa: E402

from mtcb_curate import neardup  # noqa: E402
from mtcb_curate.app import clusters  # noqa: E402
from mtcb_curate.checks import CHECKS_BY_ID, CheckContext  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.neardup import Item, find_groups  # noqa: E402
from mtcb_curate.tui import badges  # noqa: E402
from mtcb_curate.tui.app import CurateApp  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402
from mtcb_curate.tui.screens.shared_passage import SharedPassageScreen  # noqa: E402
from mtcb_curate.tui.widgets.qa_panel import QAPanel  # noqa: E402

ONE = "Alpha Corp makes industrial anvils in Ohio and Texas, and sells them to farms across the Midwest."
PART_A = "In fiscal 2022 the company opened a new foundry in Dayton that doubled its casting capacity"
PART_B = " for heavy anvils, and it hired four hundred workers to staff the new plant."
ALPHA = (f"{ONE}\nThe board met twice. Its chair is Dana Smith.\n{PART_A}{PART_B}\n"
         "Alpha's auditor is Smith & Co.\nRevenue was $10 million in fiscal 2022.\n")
# The two overlapping passages: neither contains the other; they overlap by document offsets.
OVER_1 = PART_A + " for heavy anvils, and it hired"
OVER_2 = "a new foundry in Dayton that doubled its casting capacity" + PART_B
CORPUS = [{"ticker": "AAA", "company": "Alpha", "text": ALPHA}]


def row(question: str, answer: str, passage: str) -> dict:
    return {"question": question, "answer": answer, "supporting_passage": passage, "ticker": "AAA",
            "company": "Alpha", "chunk_index": 0}


QUESTIONS = [
    # 0-1: the same question asked twice (different passages): a duplicate
    row("Who is Alpha's auditor?", "Smith & Co.", "Alpha's auditor is Smith & Co."),
    row("Who is the auditor of Alpha?", "Smith & Co.", "Alpha's auditor is Smith & Co.\nRevenue was"),
    # 2-4: three different questions on one passage: shared evidence
    row("What does Alpha Corp make?", "Industrial anvils", ONE),
    row("In which states are Alpha's anvils made?", "Ohio and Texas", ONE),
    row("To whom does Alpha sell its anvils?", "Farms across the Midwest", ONE),
    # 5-6: two different questions on overlapping passages
    row("Where did Alpha open a new foundry in fiscal 2022?", "Dayton", OVER_1),
    row("How many workers did Alpha hire for its new plant?", "Four hundred", OVER_2),
    # 7: alone
    row("What was Alpha's revenue in fiscal 2022?", "$10 million", "Revenue was $10 million in fiscal 2022."),
]


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


@pytest.fixture
def data(tmp_path) -> Path:
    write_jsonl(tmp_path / "src" / "corpus.jsonl", CORPUS)
    write_jsonl(tmp_path / "src" / "questions.jsonl", QUESTIONS)
    return tmp_path / "src"


@pytest.fixture
def session(data, tmp_path):
    s = opened(data, tmp_path / "ws")
    for pid in range(len(s)):
        s.decide(pid, Status.ACCEPTED)
    yield s
    s.workspace.close()


def run(session, check_id: str):
    return CHECKS_BY_ID[check_id](CheckContext.build(session, loads=False))


def test_the_fixture_passages_are_verbatim_and_the_overlap_is_by_offsets_only():
    assert all(r["supporting_passage"] in ALPHA for r in QUESTIONS)
    assert OVER_1 not in OVER_2 and OVER_2 not in OVER_1


# -- the checks ---------------------------------------------------------------------------------

def test_duplicates_fails_only_on_the_same_question_and_shared_passage_warns_on_the_others(session):
    dup = run(session, "duplicates")
    assert dup.status == "fail" and dup.pairs == [0, 1] and dup.failing == {0, 1}
    shared = run(session, "shared_passage")
    assert shared.status == "warn" and not shared.failing
    assert shared.pairs == [2, 3, 4, 5, 6]
    assert shared.reasons[2] == "same passage with #3, #4"
    assert shared.reasons[5] == "overlapping passage with #6"
    assert "2 group(s)" in shared.message


def test_resolving_a_group_clears_it_and_undo_restores_it(session):
    group = next(g for g in clusters.find_shared(session) if 2 in g.ids)
    assert group.ids == (2, 3, 4)
    assert clusters.mark_shared(session, group) is True
    assert clusters.mark_shared(session, group) is False  # already marked
    assert run(session, "shared_passage").pairs == [5, 6]
    assert run(session, "duplicates").pairs == [0, 1]  # the marks are not "not duplicates"
    assert session.undo() == 2
    assert run(session, "shared_passage").pairs == [2, 3, 4, 5, 6]


def test_the_mark_survives_reopening_the_workspace(data, tmp_path):
    s = opened(data, tmp_path / "ws")
    s.mark_shared_evidence([5, 6])
    s.workspace.close()
    s = opened(data, tmp_path / "ws")
    try:
        assert s.shared_evidence() == {(5, 6)} and s.not_duplicates() == set()
        assert [g.ids for g in clusters.find_shared(s)] == [(2, 3, 4)]
    finally:
        s.workspace.close()


def test_overlap_needs_the_located_spans_the_app_passes():
    items = [Item(5, "AAA", QUESTIONS[5]["question"], "", OVER_1), Item(6, "AAA", QUESTIONS[6]["question"], "", OVER_2)]
    assert find_groups(items) == ([], [])  # as text, neither contains the other
    spans = {5: (ALPHA.index(OVER_1), ALPHA.index(OVER_1) + len(OVER_1)),
             6: (ALPHA.index(OVER_2), ALPHA.index(OVER_2) + len(OVER_2))}
    dup, shared = find_groups(items, spans=spans)
    assert dup == [] and [(g.ids, g.reasons) for g in shared] == [((5, 6), (neardup.REASON_OVERLAP,))]


def test_pairs_asking_the_same_question_on_one_passage_are_a_cluster_not_a_shared_group():
    quote = "Alpha Corp makes industrial anvils in Ohio and Texas."
    items = [Item(0, "AAA", "What does Alpha make?", "Anvils", quote),
             Item(1, "AAA", "What does Alpha make?", "Anvils", quote),
             Item(2, "AAA", "Where are the anvils made?", "Ohio", quote)]
    dup, shared = find_groups(items)
    assert [(c.ids, c.reasons) for c in dup] == [((0, 1), (neardup.REASON_IDENTICAL,))]
    assert [g.ids for g in shared] == [(0, 1, 2)]  # 0-2 and 1-2 share only the passage
    assert {(x.a, x.b) for x in shared[0].links} == {(0, 2), (1, 2)}
    # marks: "distinct questions on shared evidence" clears the group, not the cluster
    dup, shared = find_groups(items, shared_marks=[(0, 2), (1, 2)])
    assert [c.ids for c in dup] == [(0, 1)] and shared == []
    # a shared passage never glues clusters together
    assert [c.ids for c in neardup.find_clusters(items)] == [(0, 1)]


# -- the head line --------------------------------------------------------------------------------

def test_head_line_badges_say_why_each_pair_is_linked(session):
    found, shared = clusters.find_both(session)
    index, sindex = neardup.cluster_index(found), neardup.cluster_index(shared)
    # 83 points: under the threshold, linked by the same-answer rule
    assert badges.similar_badge(index[0], 0).plain == "≈1 similar (#1 same answer)"
    assert badges.similar_badge(index.get(2), 2).plain == ""  # shared evidence is not "similar"
    assert badges.shared_badge(sindex[2], 2).plain == "shares its passage with #3, #4"
    assert badges.shared_badge(sindex[6], 6).plain == "shares its passage with #5"
    assert badges.shared_badge(sindex.get(0), 0).plain == ""
    assert badges.link_label((neardup.REASON_SIMILAR,), 91.3) == "similar 91"
    assert badges.link_label((neardup.REASON_SAME_ANSWER,), 72.0) == "same answer"
    assert badges.link_label((neardup.REASON_LLM,), 12.0) == "LLM"


async def test_the_review_head_line_shows_similar_and_shared_separately(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        head = review.query_one(QAPanel).section_text("head")
        assert "≈1 similar (#1 same answer)" in head and "shares its passage" not in head
        await pilot.press("j", "j")
        await settle(app, pilot)
        head = review.query_one(QAPanel).section_text("head")
        assert "shares its passage with #3, #4" in head and "similar" not in head
        await pilot.press("d")  # the cluster screen has nothing for a shared-passage-only pair
        await pilot.pause()
        assert app.screen is review
        assert any("not in a near-duplicate cluster" in n.message for n in app._notifications)
    session.workspace.close()


# -- the S screen ---------------------------------------------------------------------------------

async def test_shared_passage_screen_lists_groups_and_n_marks_one_distinct(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        review = app.screen
        await pilot.press("S")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, SharedPassageScreen)
        assert [g.ids for g in screen.shown] == [(2, 3, 4), (5, 6)]
        first = screen.query_one(OptionList).get_option_at_index(0).prompt.plain
        assert "3 pairs" in first and "same passage" in first and "#3 In which states" in first
        await pilot.press("n")  # one key
        await pilot.pause()
        assert session.shared_evidence() == {(2, 3), (2, 4), (3, 4)}
        assert [g.ids for g in screen.shown] == [(5, 6)]
        assert "1 marked distinct" in str(screen.query_one("#dedup-status", Static).content)
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is review
        await pilot.press("u")  # undone in the review screen
        await settle(app, pilot)
        assert session.shared_evidence() == set()
        await pilot.press("S")
        await settle(app, pilot)
        assert [g.ids for g in app.screen.shown] == [(2, 3, 4), (5, 6)]
        await pilot.press("down", "enter")  # opens the group's first pair in the review screen
        await settle(app, pilot)
        assert app.screen is review and review.queue.current == 5
    session.workspace.close()


async def test_every_shown_group_marked_distinct_in_three_keys_and_one_undo(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        review = app.screen
        await pilot.press("S")
        await settle(app, pilot)
        screen = app.screen
        assert [g.ids for g in screen.shown] == [(2, 3, 4), (5, 6)]
        await pilot.press("N")  # asks first
        await pilot.pause()
        assert session.shared_evidence() == set()
        assert "N again: all 2 group(s) (5 pairs) distinct" in str(screen.query_one("#dedup-status", Static).content)
        await pilot.press("N")
        await pilot.pause()
        assert session.shared_evidence() == {(2, 3), (2, 4), (3, 4), (5, 6)}
        assert screen.shown == [] and "· done" in str(screen.query_one("#dedup-status", Static).content)
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is review
        await pilot.press("u")  # ONE undo takes every group back
        await settle(app, pilot)
        assert session.shared_evidence() == set()
    session.workspace.close()


async def test_shared_passage_screen_is_read_only_safe(data, tmp_path):
    opened(data, tmp_path / "ws").workspace.close()
    session = opened(data, tmp_path / "ws", read_only=True)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("S")
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        assert session.shared_evidence() == set()
        assert any("read-only" in n.message for n in app._notifications)
    session.workspace.close()
