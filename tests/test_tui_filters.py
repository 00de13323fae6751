"""The review screen's filter bar (V), text-match highlights and next match, and bulk actions (B)
over the current view, driven with Pilot."""

from __future__ import annotations

import pytest

from support import current, opened, review_app, text_of, write_source

from mtcb_curate.dataset.model import Status
from mtcb_curate.tui.screens.bulk import BulkScreen
from mtcb_curate.tui.screens.confirm import ConfirmScreen
from mtcb_curate.tui.widgets.filter_bar import FilterBar
from mtcb_curate.tui.widgets.pair_list import PairList
from mtcb_curate.tui.widgets.qa_panel import QAPanel
from mtcb_curate.tui.widgets.source_viewer import SourceViewer

pytestmark = pytest.mark.usefixtures("review_at_once")

CORPUS = [{"ticker": "AAA", "text": "Alpha revenue was 10 million. Alpha costs were 4 million. Alpha hired staff."},
          {"ticker": "BBB", "text": "Beta holds the Needle in its haystack. Beta sold 7 units."}]
QUESTIONS = [
    {"question": "What was Alpha revenue?", "answer": "10 million", "supporting_passage": "Alpha revenue was 10 million.",
     "ticker": "AAA", "chunk_index": 0},
    {"question": "What were Alpha costs?", "answer": "4 million", "supporting_passage": "Alpha costs were 4 million.",
     "ticker": "AAA", "chunk_index": 0},
    {"question": "Where is the needle?", "answer": "In the haystack",
     "supporting_passage": "Beta holds the Needle in its haystack.", "ticker": "BBB", "chunk_index": 0},
    {"question": "How many units did Beta sell?", "answer": "7 units", "supporting_passage": "Beta sold 7 units.",
     "ticker": "BBB", "chunk_index": 0},
    {"question": "Whom did Alpha hire?", "answer": "staff", "supporting_passage": "Alpha hired staff.",
     "ticker": "AAA", "chunk_index": 0},
]


@pytest.fixture
def src(tmp_path):
    return write_source(tmp_path / "src", CORPUS, QUESTIONS)


async def _filter(app, pilot, line: str) -> None:
    await pilot.press("V")
    bar = app.screen.query_one(FilterBar)
    assert bar.is_open
    bar.input.value = ""
    await pilot.press(*line) if line else None
    await pilot.press("enter")
    await pilot.pause()


async def test_filter_bar_narrows_the_queue_and_the_title_shows_the_count(src, ws):
    session = opened(src, ws)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await pilot.press("j")  # cursor on #1 (Alpha costs)
        assert current(app) == 1
        await _filter(app, pilot, "doc:AAA alpha")  # typed: j, k, e ... go to the bar
        assert list(app.screen.query_one(PairList).ids) == [0, 1, 4]
        assert current(app) == 1  # the cursor stays on its pair
        title = text_of(app, "#queue-title")
        assert "view: 3 of 5" in title and "doc:AAA" in title
        assert not app.screen.query_one(FilterBar).is_open
        # the QA panel's question highlights the match; the source holds match spans
        assert any(s.kind == "match" for s in app.screen.query_one(SourceViewer).spans)
        question = app.screen.query_one(QAPanel)._sections["question"]
        assert [(sp.start, sp.end) for sp in question.spans if "reverse" in str(sp.style)] == [(10, 15)]
        await pilot.press("period")
        await pilot.pause()
        # an accept leaves the pair in the view (no status criterion) and advances
        await pilot.press("a")
        await pilot.pause()
        assert session.status(1) is Status.ACCEPTED and current(app) == 4
        await _filter(app, pilot, "status:undecided doc:AAA")
        assert list(app.screen.query_one(PairList).ids) == [0, 4]
        await _filter(app, pilot, "")  # an empty line clears
        assert len(app.screen.query_one(PairList).ids) == 5 and "view:" not in text_of(app, "#queue-title")


async def test_bad_regex_is_shown_on_the_bar_and_nothing_applies(src, ws):
    session = opened(src, ws)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _filter(app, pilot, "/(unclosed/")
        bar = app.screen.query_one(FilterBar)
        assert bar.is_open and "regular expression" in str(bar.query_one("#filter-message").content)
        assert len(app.screen.query_one(PairList).ids) == 5
        await pilot.press("escape")
        assert not bar.is_open


async def test_bulk_accept_over_a_filtered_view_confirm_then_one_undo(src, ws):
    session = opened(src, ws)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _filter(app, pilot, "doc:BBB")
        await pilot.press("B")
        await pilot.pause()
        assert isinstance(app.screen, BulkScreen) and app.screen.counts["accept"] == 2
        await pilot.press("1")  # accept
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and "2 of the 2 pairs" in app.screen.prompt
        await pilot.press("enter")
        await pilot.pause()
        assert [session.status(i) for i in range(5)] == [Status.UNDECIDED, Status.UNDECIDED, Status.ACCEPTED,
                                                          Status.ACCEPTED, Status.UNDECIDED]
        assert "view: 2 of 5" in text_of(app, "#queue-title")
        await pilot.press("u")
        await pilot.pause()
        assert all(session.status(i) is Status.UNDECIDED for i in range(5))


async def test_bulk_menu_escape_writes_nothing(src, ws):
    session = opened(src, ws)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await pilot.press("B")
        await pilot.pause()
        assert isinstance(app.screen, BulkScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert session.workspace.history() == []


def test_palette_lists_the_filter_bar_match_keys_and_every_bulk_action():
    from mtcb_curate.app.bulk import ACTIONS
    from mtcb_curate.tui.palette import ENTRIES

    ids = {e.binding_id for e in ENTRIES}
    assert {"filter_bar", "next_match", "previous_match", "bulk"} <= ids
    names = [e.name for e in ENTRIES]
    assert all(any(n == f"Bulk on the view: {label}" for n in names) for label, _ in ACTIONS.values())


async def test_palette_bulk_flag_asks_once_and_applies(src, ws):
    from test_tui_messages import palette

    session = opened(src, ws)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        listed = await palette(app, pilot, "bulk on the view: flag")
        assert any("flag" in row for row in listed), listed
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and "5 of the 5" in app.screen.prompt
        await pilot.press("enter")
        await pilot.pause()
        assert session.counts()[Status.FLAGGED] == 5


async def test_bulk_shrink_lists_the_pairs_it_could_not_fix_and_rejects_none(src, ws):
    from mtcb_curate.app.bulk import ACTIONS, SHRINK
    from mtcb_curate.tui.screens.bulk import KEYS, BulkPlanScreen

    session = opened(src, ws)
    wordy = ("Alpha costs were discussed at length by the board of directors of the company. " * 9).strip()
    session.edit(1, {"supporting_passage": wordy})  # over 600 characters; the answer's figure is not in it
    session.edit(0, {"supporting_passage": CORPUS[0]["text"]})
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await pilot.press("B")
        await pilot.pause()
        menu = app.screen
        assert isinstance(menu, BulkScreen)
        assert menu.rejects["reject"] == 5 and menu.rejects[SHRINK] == 0  # the menu says what rejects
        shown = str(menu.query_one("Static").content)
        assert "rejects 5" in shown and "rejects none" in shown
        await pilot.press(KEYS[list(ACTIONS).index(SHRINK)])
        for _ in range(200):
            await pilot.pause(0.02)
            if isinstance(app.screen, BulkPlanScreen):
                break
        plan = app.screen
        assert isinstance(plan, BulkPlanScreen) and plan.touched == 1 and set(plan.skipped) == {1}
        listed = "".join(str(w.content) for w in plan.query("Static"))
        assert "#1 over 600 characters" in listed and "4 million" in listed and "nothing is rejected" in listed
        await pilot.press("a")
        await pilot.pause()
        assert session.view(0).passage == "Alpha revenue was 10 million. Alpha costs were 4 million."  # min 30
        assert session.view(1).passage == wordy and all(session.status(i) is Status.UNDECIDED for i in range(5))
