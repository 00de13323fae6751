"""The checklist screen, driven with Textual's Pilot: statuses, a check's pairs, the picked pair
returned, re-running after a fix, hostile text shown literally."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_jsonl  # noqa: E402
from test_app import SIZE, opened, settle  # noqa: E402

from mtcb_curate.checks import CHECK_IDS  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.tui.app import CurateApp  # noqa: E402
from mtcb_curate.tui.screens.checklist import ChecklistScreen  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402

HOSTILE = "[bold]x[/bold] [@click=app.quit]y[/]"
ALPHA = ("Alpha Corp makes industrial anvils in Ohio and Texas.\n"
         "Total revenue was $10 million in fiscal 2022, up from $8 million.\n")
BETA = ("Beta Inc sells brass bells through retail stores.\n"
        "Its best year was 2021, when net income reached $3 million.\n")
CORPUS = [{"ticker": "AAA", "company": "Alpha", "text": ALPHA},
          {"ticker": "BBB", "company": "Beta", "text": BETA}]
#: The verbatim passage of pair 2, and the one in the source (its last word is not in BETA).
FIXED = "Beta Inc sells brass bells through retail stores."
BROKEN = "Beta Inc sells brass bells through retail stores worldwide."


def q(question: str, answer: str, passage: str, ticker: str, chunk_index: int | None = None) -> dict:
    return {"question": question, "answer": answer, "supporting_passage": passage, "ticker": ticker,
            "company": {"AAA": "Alpha", "BBB": "Beta"}[ticker], "chunk_index": chunk_index}


def questions(question_2: str = "Through which channel does Beta Inc sell its brass bells?") -> list[dict]:
    return [
        q("What does Alpha Corp make in Ohio and Texas?", "Industrial anvils",
          "Alpha Corp makes industrial anvils in Ohio and Texas.", "AAA", 0),
        q("What was Alpha's total revenue in fiscal 2022?", "$10 million",
          "Total revenue was $10 million in fiscal 2022, up from $8 million.", "AAA", 0),
        q(question_2, "Retail stores", BROKEN, "BBB", 0),
        q("How much net income did Beta report for 2021?", "$3 million",
          "Its best year was 2021, when net income reached $3 million.", "BBB", 0),
    ]


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


@pytest.fixture
def accepted(tmp_path):
    """``accepted(rows)`` -> a session over CORPUS and ``rows`` with every pair accepted."""
    sessions = []

    def make(rows: list[dict]):
        src = tmp_path / "src"
        write_jsonl(src / "corpus.jsonl", CORPUS)
        write_jsonl(src / "questions.jsonl", rows)
        session = opened(src, tmp_path / "ws")
        for pid in range(len(session)):
            session.decide(pid, Status.ACCEPTED)
        sessions.append(session)
        return session

    yield make
    for s in sessions:
        s.workspace.close()


def static(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def rows(app, selector: str) -> list[str]:
    return [str(o.prompt) for o in app.screen.query_one(selector, OptionList).options]


def check_rows(app) -> dict[str, str]:
    """Check id -> its row (mark, id, count, message)."""
    out = {}
    for row in rows(app, "#checklist-checks"):
        mark, check_id = row.split()[:2]
        out[check_id] = row
        assert mark in "✓!✗–"
    return out


async def open_checklist(app, pilot, session, **kw) -> list:
    """Push the checklist over the review screen; returns the list its dismiss value lands in."""
    await settle(app, pilot)
    picked: list = []
    app.push_screen(ChecklistScreen(session, **kw), picked.append)
    await settle(app, pilot)
    assert isinstance(app.screen, ChecklistScreen)
    return picked


async def test_statuses_pairs_of_a_check_and_the_picked_pair(accepted):
    session = accepted(questions())
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        picked = await open_checklist(app, pilot, session)  # with the loads check
        screen = app.screen
        got = check_rows(app)
        assert list(got) == list(CHECK_IDS)
        assert got["verbatim"].startswith("✗ verbatim") and " 1 " in got["verbatim"]
        assert "3 of 4 accepted passages" in got["verbatim"]
        for check_id in CHECK_IDS[1:]:
            assert got[check_id].startswith(f"✓ {check_id}"), got[check_id]
        assert "checklist FAILED" in static(app, "#checklist-header")
        assert "publishing needs no failing check" in static(app, "#checklist-header")
        assert screen.query_one("#checklist-checks").has_focus
        # The first failing check is highlighted: enter lists its pairs.
        await pilot.press("down", "up", "enter")
        assert screen.open_check is not None and screen.open_check.id == "verbatim"
        pair_rows = rows(app, "#checklist-pairs")
        assert len(pair_rows) == 1
        assert pair_rows[0].startswith("#2") and "fail" in pair_rows[0]
        assert "not found verbatim in its document" in pair_rows[0]
        assert "Through which channel" in pair_rows[0]
        assert "not found verbatim" in static(app, "#checklist-detail")
        # escape goes back to the checks, enter opens the pairs again, enter picks the pair.
        await pilot.press("escape")
        assert screen.open_check is None and isinstance(app.screen, ChecklistScreen)
        await pilot.press("enter", "enter")
        await pilot.pause()
        assert picked == [2]
        assert isinstance(app.screen, ReviewScreen)


async def test_a_check_without_pairs_stays_and_escape_closes_with_none(accepted):
    session = accepted(questions())
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        picked = await open_checklist(app, pilot, session, loads=False)
        assert check_rows(app)["loads"].startswith("– loads")  # skipped: loads=False
        await pilot.press("down")  # unique_passage: passes, no pairs
        await pilot.press("enter")
        assert app.screen.open_check is None
        await pilot.press("escape")
        await pilot.pause()
        assert picked == [None] and isinstance(app.screen, ReviewScreen)


async def test_rerun_after_fixing_the_pair_shows_verbatim_pass(accepted):
    session = accepted(questions())
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        picked = await open_checklist(app, pilot, session, loads=False)
        assert check_rows(app)["verbatim"].startswith("✗ verbatim")
        assert session.edit(2, {"supporting_passage": FIXED})
        await pilot.press("enter")  # in the pairs list: r re-runs from there too
        await pilot.press("r")
        await settle(app, pilot)
        got = check_rows(app)
        assert got["verbatim"].startswith("✓ verbatim") and "4 of 4" in got["verbatim"]
        assert app.screen.open_check is None  # back on the checks
        assert "checklist PASSED" in static(app, "#checklist-header")
        assert picked == []


async def test_hostile_text_is_shown_literally(accepted):
    session = accepted(questions(question_2=HOSTILE))
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_checklist(app, pilot, session, loads=False)
        got = check_rows(app)
        assert got["verbatim"].startswith("✗ verbatim")
        await pilot.press("enter")
        assert HOSTILE in rows(app, "#checklist-pairs")[0]
        assert HOSTILE in static(app, "#checklist-detail")
        assert app.is_running and isinstance(app.screen, ChecklistScreen)
        # question_form warns about it, and lists the hostile question literally too.
        assert got["question_form"].startswith("! question_form")
        from mtcb_curate.checks import CHECK_IDS
        await pilot.press("escape", *["down"] * CHECK_IDS.index("question_form"), "enter")
        assert app.screen.open_check.id == "question_form"
        assert HOSTILE in rows(app, "#checklist-pairs")[0]
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ReviewScreen)
