"""The near-duplicate screens, driven with Pilot: the dedup list, one cluster side by side,
keep one, "not duplicates", the threshold, opening a pair, hostile text, the ``≈N`` badge."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_jsonl  # noqa: E402
from test_app import SIZE, opened, settle  # noqa: E402

from mtcb_curate.app import clusters  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.tui import badges  # noqa: E402
from mtcb_curate.tui.app import CurateApp  # noqa: E402
from mtcb_curate.tui.screens import cluster as cluster_screen  # noqa: E402
from mtcb_curate.tui.screens.cluster import ClusterScreen  # noqa: E402
from mtcb_curate.tui.screens.dedup import DedupScreen  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402

HOSTILE = "[bold]x[/bold] [@click=app.quit]y[/]"

CORPUS = [
    {"ticker": "AAA", "company": "Alpha", "text": "Alpha makes anvils and hammers.\nRevenue was $10 million in 2022.\n"},
    {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells.\nBeta opened 12 stores in Europe.\n"
                                                 "Beta closed 3 stores in Europe.\nBeta sells big bells to churches.\n"
                                                 "Beta sells small bells to schools.\n"},
]


def row(question: str, answer: str, passage: str, ticker: str = "BBB") -> dict:
    return {"question": question, "answer": answer, "supporting_passage": passage, "ticker": ticker,
            "company": {"AAA": "Alpha", "BBB": "Beta"}[ticker], "chunk_index": 0}


QUESTIONS = [
    # 0-2: one cluster of identical questions (with hostile text)
    row(f"What does Alpha make? {HOSTILE}", "Anvils", "Alpha makes anvils", "AAA"),
    row(f"What does Alpha make? {HOSTILE}", "Hammers", "and hammers.", "AAA"),
    row(f"What does Alpha make? {HOSTILE}", f"Tools {HOSTILE}", "Revenue was", "AAA"),
    # 3-4: an unrelated pair
    row("What was Alpha's revenue in 2022?", "$10 million", "$10 million in 2022.", "AAA"),
    row("Who runs Beta?", "Nobody", "Beta sells bells."),
    # 5-6: similarity 87.8 (a cluster from 85 down, none at 90)
    row("How many stores did Beta open in Europe?", "12", "Beta opened 12 stores in Europe."),
    row("How many stores did Beta open across Europe?", "3", "Beta closed 3 stores in Europe."),
    # 7-8: similarity 82.4 (a cluster from 75 down, none at 85)
    row("What bells does Beta sell to churches?", "big", "Beta sells big bells to churches."),
    row("Which bells does Beta sell to churches in Europe?", "small", "Beta sells small bells to schools."),
]


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


def write_data(tmp_path) -> Path:
    """CORPUS and QUESTIONS written as a dataset folder under ``tmp_path``; returns it."""
    write_jsonl(tmp_path / "src" / "corpus.jsonl", CORPUS)
    write_jsonl(tmp_path / "src" / "questions.jsonl", QUESTIONS)
    return tmp_path / "src"


def dedup_session(tmp_path):
    """A session over :func:`write_data`'s folder, its workspace in ``tmp_path / "ws"``."""
    return opened(write_data(tmp_path), tmp_path / "ws")


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path)


@pytest.fixture
def ws(tmp_path) -> Path:
    return tmp_path / "ws"


class Results:
    """What the pushed screen was dismissed with."""

    def __init__(self) -> None:
        self.values: list[int | None] = []

    def __call__(self, value: int | None) -> None:
        self.values.append(value)


async def open_dedup(app, pilot, threshold: float | None = None) -> Results:
    results = Results()
    screen = DedupScreen(app.session) if threshold is None else DedupScreen(app.session, threshold=threshold)
    app.push_screen(screen, results)
    await settle(app, pilot)
    assert app.screen is screen
    return results


def shown(app) -> list[tuple[int, ...]]:
    return [c.ids for c in app.screen.shown]


def status_line(app) -> str:
    return str(app.screen.query_one("#dedup-status", Static).content)


def member_text(app, index: int) -> str:
    return app.screen._bodies[index].content.plain


async def test_dedup_lists_unresolved_clusters_largest_first(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        assert shown(app) == [(0, 1, 2), (5, 6)]
        assert "2 unresolved cluster(s) · 5 pairs" in status_line(app)
        options = app.screen.query_one(OptionList)
        first = options.get_option_at_index(0).prompt.plain
        assert "3 pairs" in first and "identical question" in first and "#0 #1 #2" in first
        assert "threshold 85" in str(app.screen.query_one("#dedup-title", Static).content)
        # A settled cluster is not listed.
        session.decide(5, Status.REJECTED, "duplicate of #6")
        await pilot.press("plus", "minus")  # search again at 85
        await settle(app, pilot)
        assert shown(app) == [(0, 1, 2)] and "1 settled" in status_line(app)
    session.workspace.close()


async def test_keep_one_rejects_the_others_and_undo_brings_the_cluster_back(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        results = await open_dedup(app, pilot)
        await pilot.press("enter")  # the first (largest) cluster
        await pilot.pause()
        assert isinstance(app.screen, ClusterScreen) and app.screen.cluster.ids == (0, 1, 2)
        assert app.screen.query_one("#cluster-members").has_class("-columns")
        await pilot.press("2", "k")  # keep #1
        assert session.view(0).reason == "duplicate of #1" and session.view(2).reason == "duplicate of #1"
        assert session.status(0) is Status.REJECTED and session.status(2) is Status.REJECTED
        assert session.status(1) is Status.ACCEPTED  # the kept pair is accepted
        # The screen stays, with the new statuses.
        assert "REJECTED (duplicate of #1)" in member_text(app, 0)
        assert "Kept and accepted #1; rejected #0, #2" in str(app.screen.query_one("#cluster-note", Static).content)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, DedupScreen) and shown(app) == [(5, 6)]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and results.values == [None]
        await pilot.press("u")  # undo in the review screen: the whole keep, one step
        assert session.status(2) is Status.UNDECIDED and session.status(0) is Status.UNDECIDED
        assert session.status(1) is Status.UNDECIDED
        await open_dedup(app, pilot)
        assert shown(app) == [(0, 1, 2), (5, 6)]
    session.workspace.close()


async def test_keep_skips_rejected_members_and_refuses_a_rejected_keeper(data, ws):
    session = opened(data, ws)
    session.decide(2, Status.REJECTED, "not verbatim")
    cluster = clusters.find(session)[0]
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(ClusterScreen(session, cluster))
        await pilot.pause()
        await pilot.press("3", "k")  # #2 is rejected: not a keeper
        assert session.status(0) is Status.UNDECIDED and session.status(1) is Status.UNDECIDED
        await pilot.press("left", "left", "k")  # keep #0; #2 keeps its own reason
        assert session.view(1).reason == "duplicate of #0" and session.view(2).reason == "not verbatim"
    session.workspace.close()


@pytest.mark.slow
async def test_not_duplicates_is_remembered_across_restarts(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        await pilot.press("enter", "n")
        assert {(0, 1), (0, 2), (1, 2)} <= session.not_duplicates()
        assert session.decided == 0
        assert "Marked not duplicates" in str(app.screen.query_one("#cluster-note", Static).content)
        await pilot.press("escape")
        await settle(app, pilot)
        assert shown(app) == [(5, 6)]
    session.workspace.close()
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        assert shown(app) == [(5, 6)]
    session.workspace.close()


async def test_threshold_keys_change_the_clusters(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        assert len(shown(app)) == 2
        await pilot.press("plus")
        await settle(app, pilot)
        assert app.screen.threshold == 90 and shown(app) == [(0, 1, 2)]
        assert "threshold 90" in str(app.screen.query_one("#dedup-title", Static).content)
        await pilot.press("minus", "minus", "minus")
        await settle(app, pilot)
        assert app.screen.threshold == 75 and shown(app) == [(0, 1, 2), (5, 6), (7, 8)]
        await pilot.press("escape")
        await open_dedup(app, pilot, threshold=100)
        await pilot.press("plus")  # bounded
        await settle(app, pilot)
        assert app.screen.threshold == 100 and shown(app) == [(0, 1, 2)]
    session.workspace.close()


async def test_opening_a_pair_dismisses_with_its_id(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        results = await open_dedup(app, pilot)
        await pilot.press("down", "o")  # the first pair of the second cluster
        await pilot.pause()
        assert results.values == [5] and isinstance(app.screen, ReviewScreen)
        results = await open_dedup(app, pilot)
        await pilot.press("enter", "right", "right", "enter")  # from the cluster: #2
        await pilot.pause()
        assert results.values == [2] and isinstance(app.screen, ReviewScreen)
        # ClusterScreen alone: escape returns None, o the chosen id.
        cluster = clusters.find(session)[1]
        got = Results()
        app.push_screen(ClusterScreen(session, cluster), got)
        await pilot.pause()
        await pilot.press("escape")
        app.push_screen(ClusterScreen(session, cluster, chosen_id=6), got)
        await pilot.pause()
        await pilot.press("o")
        assert got.values == [None, 6]
    session.workspace.close()


async def test_many_members_are_rows_and_the_arrows_walk_them(data, ws, monkeypatch):
    monkeypatch.setattr(cluster_screen, "COLUMNS_MAX", 2)
    session = opened(data, ws)
    cluster = clusters.find(session)[0]
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(ClusterScreen(session, cluster))
        await pilot.pause()
        screen = app.screen
        assert screen.query_one("#cluster-members").has_class("-rows")
        await pilot.press("right", "right", "right")  # wraps around
        assert screen.chosen_id == 0 and screen.query_one("#member-0").has_class("-chosen")
        await pilot.press("left")
        assert screen.chosen_id == 2 and not screen.query_one("#member-0").has_class("-chosen")
    session.workspace.close()


async def test_hostile_text_is_shown_literally(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        assert HOSTILE in app.screen.query_one(OptionList).get_option_at_index(0).prompt.plain
        await pilot.press("enter")
        await pilot.pause()
        body = member_text(app, 2)
        assert f"What does Alpha make? {HOSTILE}" in body and f"Tools {HOSTILE}" in body
        await pilot.click("#member-1")  # a click chooses; the [@click] text does nothing
        await pilot.pause()
        assert app.is_running and app.screen.chosen_id == 1
    session.workspace.close()


async def test_read_only_workspace_warns_and_changes_nothing(data, ws):
    opened(data, ws).workspace.close()
    session = opened(data, ws, read_only=True)
    cluster = clusters.find(session)[0]
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(ClusterScreen(session, cluster))
        await pilot.pause()
        await pilot.press("k", "n")
        assert session.decided == 0 and session.not_duplicates() == set()
        assert any("read-only" in n.message for n in app._notifications)
    session.workspace.close()


def test_similar_badge_names_the_linked_pairs_and_why(data, ws):
    # Changed with shared_passage: the badge says why each pair is linked, not only a score.
    session = opened(data, ws)
    found = clusters.find(session, threshold=75)
    index = clusters.neardup.cluster_index(found)
    assert badges.similar_badge(index[1], 1).plain == "≈2 similar (#0 identical, #2 identical)"
    assert badges.similar_badge(index[5], 5).plain == "≈1 similar (#6 similar 88)"
    assert badges.similar_badge(index.get(3), 3).plain == ""
    assert badges.similar_badge(index[1], 1, k=1).plain == "≈2 similar (#0 identical, …)"
    assert badges.similar_badge(index[1], 1).spans  # styled, not markup
    session.workspace.close()


async def test_keeping_one_of_a_large_cluster_asks_for_a_second_k(data, ws, monkeypatch):
    monkeypatch.setattr(cluster_screen, "CONFIRM_KEEP_ABOVE", 1)  # the 3-pair cluster counts as large
    session = opened(data, ws)
    cluster = clusters.find(session)[0]
    assert cluster.ids == (0, 1, 2)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(ClusterScreen(session, cluster))
        await pilot.pause()
        await pilot.press("k")
        assert session.status(1) is Status.UNDECIDED and session.status(2) is Status.UNDECIDED
        await pilot.press("k")
        assert session.status(1) is Status.REJECTED and session.status(2) is Status.REJECTED
        assert session.view(1).reason == "duplicate of #0"
    session.workspace.close()


async def test_split_keeps_the_marked_members_and_survives_a_restart(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, ClusterScreen) and app.screen.cluster.ids == (0, 1, 2)
        await pilot.press("s")  # nothing marked: nothing split
        assert session.not_duplicates() == set()
        await pilot.press("1", "space", "2", "space", "s")  # keep #0 and #1, move #2 out
        assert session.not_duplicates() == {(0, 2), (1, 2)}
        assert "moved out" in member_text(app, 2) and "✓ keep" in member_text(app, 0)
        assert "Moved #2 out of the cluster" in str(app.screen.query_one("#cluster-note", Static).content)
        await pilot.press("escape")
        await settle(app, pilot)
        assert shown(app) == [(0, 1), (5, 6)]
    session.workspace.close()
    session = opened(data, ws)  # a restart: the split is kept
    try:
        assert [c.ids for c in clusters.find(session)] == [(0, 1), (5, 6)]
    finally:
        session.workspace.close()


async def test_move_out_is_one_undo_step(data, ws):
    session = opened(data, ws)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_dedup(app, pilot)
        await pilot.press("enter", "2", "m")  # move #1 out
        assert session.not_duplicates() == {(0, 1), (1, 2)}
        await pilot.press("escape")
        await settle(app, pilot)
        assert shown(app) == [(0, 2), (5, 6)]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("u")
        assert session.not_duplicates() == set()
        await open_dedup(app, pilot)
        assert shown(app) == [(0, 1, 2), (5, 6)]
    session.workspace.close()
