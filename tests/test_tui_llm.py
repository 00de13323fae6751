"""The LLM screens in the app, against the loopback chat server: regenerate, generate more,
semantic dedup, and the run dialog's estimate, confirmation, errors, retries and cancel."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import Input, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret  # noqa: E402
from llmfake import status  # noqa: E402
from test_app import SIZE, current, opened, settle, text_of  # noqa: E402

from mtcb_curate.app import clusters  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.tui.app import CurateApp  # noqa: E402
from mtcb_curate.tui.screens.generate_more import GenerateMoreScreen  # noqa: E402
from mtcb_curate.tui.screens.llm_run import LLMRunScreen  # noqa: E402
from mtcb_curate.tui.screens.regenerate import RegenerateScreen  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402
from mtcb_curate.tui.screens.semantic_dedup import SemanticDedupScreen  # noqa: E402

HOSTILE = "[bold]x[/bold] [@click=app.quit]y[/]"
KEY = fake_secret("llm-key")


def cand(question: str, answer: str, passage: str) -> dict:
    return {"question": question, "answer": answer, "supporting_passage": passage}


REVENUE = cand("How much revenue did Alpha report for 2022?", "$10 million", "Revenue was $10 million in 2022.")
# At least the checklist's 30 characters: a shorter passage is refused.
ANVILS = "Alpha makes anvils.\nRevenue was $10 million in 2022."
PRODUCT = cand("Which product does Alpha manufacture?", "Anvils", ANVILS)


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


@pytest.fixture
def llm(monkeypatch, fake_llm):
    """The fake server, in quote mode (the scripts here quote their passages; the numbered
    mode's screens are tested in test_tui_numbered.py)."""
    import os

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    Path(os.environ["MTCB_CURATE_CONFIG"]).parent.mkdir(parents=True, exist_ok=True)
    Path(os.environ["MTCB_CURATE_CONFIG"]).write_text('[generate]\nmode = "quote"\n', encoding="utf-8")
    return fake_llm


async def until(app, pilot, cond, *, wait_workers: bool = True, what: str = "the condition") -> None:
    """Let the app run until ``cond()`` holds (a guard against a hang after ``support.WAIT_S``
    seconds; not a timing assertion)."""
    import time

    from textual.worker import WorkerCancelled

    from support import WAIT_S

    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        if wait_workers:
            try:
                await app.workers.wait_for_complete()
            except WorkerCancelled:  # an exclusive worker replaced by a newer one
                pass
        await pilot.pause()
        if cond():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"never reached: {what}")


def static(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def regen_ready(app) -> bool:
    return isinstance(app.screen, RegenerateScreen) and not app.screen.running


# -- regenerate -----------------------------------------------------------------------------------


async def test_regenerate_shows_candidates_beside_the_original_and_r_replaces_undoably(tiny, tmp_path, llm):
    llm.script = [REVENUE, PRODUCT]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await until(app, pilot, lambda: regen_ready(app), what="the candidates")
        assert "What does Alpha make?" in static(app, "#regen-original-text")
        shown = static(app, "#regen-candidate-text")
        assert "Candidate 1 of 2" in shown and REVENUE["question"] in shown and "verbatim in chunk 0" in shown
        await pilot.press("right")
        assert PRODUCT["question"] in static(app, "#regen-candidate-text")
        await pilot.press("left")
        assert REVENUE["question"] in static(app, "#regen-candidate-text")
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and current(app) == 0
        v = session.view(0)
        assert (v.question, v.answer, v.passage) == (REVENUE["question"], REVENUE["answer"], REVENUE["supporting_passage"])
        assert [e.via for e in session.workspace.history()] == ["regenerate"]
        assert REVENUE["question"] in text_of(app, "#qa-question")
        await pilot.press("u")
        await settle(app, pilot)
        assert session.view(0).question == "What does Alpha make?" and session.view(0).edited == frozenset()
        assert "What does Alpha make?" in text_of(app, "#qa-question")
    # The second candidate was asked as a fresh sample, for another fact (the two are asked at once).
    assert len(llm.requests) == 2
    assert "This is candidate 2 for this window" in llm.requests[1]["messages"][1]["content"]
    session.workspace.close()


async def test_regenerate_a_adds_a_new_undecided_pair_shown_literally(tiny, tmp_path, llm):
    llm.script = [cand(f"What is {HOSTILE}?", "Anvils", ANVILS), PRODUCT]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await until(app, pilot, lambda: regen_ready(app), what="the candidates")
        assert HOSTILE in static(app, "#regen-candidate-text")
        await pilot.press("a")
        await settle(app, pilot)
        assert app.is_running and isinstance(app.screen, ReviewScreen)
        assert len(session) == 4 and session.status(3) is Status.UNDECIDED
        assert session.pairs[3].origin == "generate" and session.view(3).passage == ANVILS
        assert session.view(0).question == "What does Alpha make?"  # the original is untouched
        assert current(app) == 3 and HOSTILE in text_of(app, "#qa-question")
        await pilot.press("a")  # the new pair is decided like any other
        assert session.status(3) is Status.ACCEPTED
    session.workspace.close()


async def test_a_hallucinated_passage_then_a_valid_one_still_yields_a_candidate(tiny, tmp_path, llm):
    llm.script = [cand(REVENUE["question"], "$10 million", "Revenue was $12 million in 2022."), REVENUE]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(RegenerateScreen(session, 0, n_candidates=1))
        await until(app, pilot, lambda: regen_ready(app), what="the candidate")
        shown = static(app, "#regen-candidate-text")
        assert "Candidate 1 of 1" in shown and "2 attempts" in shown and "$10 million in 2022." in shown
    assert len(llm.requests) == 2 and "verbatim" in llm.requests[1]["messages"][-1]["content"]
    session.workspace.close()


async def test_g_asks_for_fresh_samples_and_keeps_the_earlier_candidates(tiny, tmp_path, llm):
    llm.script = [REVENUE, PRODUCT]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(RegenerateScreen(session, 0, n_candidates=1))
        await until(app, pilot, lambda: regen_ready(app), what="the first candidate")
        await pilot.press("g")
        await until(app, pilot, lambda: regen_ready(app) and len(app.screen.candidates) == 2, what="a fresh one")
        assert "Candidate 2 of 2" in static(app, "#regen-candidate-text")
        assert PRODUCT["question"] in static(app, "#regen-candidate-text")
        await pilot.press("o")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and session.workspace.history() == []
    session.workspace.close()


# -- errors: one clear line, the app keeps working -------------------------------------------------


@pytest.mark.parametrize("setup, expected", [
    ({"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}, "no API key for https://api.openai.com/v1: set OPENAI_API_KEY"),
    ({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
     "cannot reach the LLM server at http://127.0.0.1:9/v1"),
])
async def test_missing_key_or_unreachable_server_is_one_line_and_review_goes_on(tiny, tmp_path, monkeypatch,
                                                                               setup, expected):
    for name, value in setup.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await until(app, pilot, lambda: isinstance(app.screen, LLMRunScreen) and app.screen.phase == "failed",
                    what="the error")
        line = static(app, "#llm-run-status")
        assert expected in line and "\n" not in line and KEY not in line
        assert "Traceback" not in line
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.is_running and isinstance(app.screen, ReviewScreen)
        await pilot.press("a")
        assert session.status(0) is Status.ACCEPTED and current(app) == 1
        # The other LLM actions fail the same way, once, and close as cleanly.
        await pilot.press("L")
        await until(app, pilot, lambda: isinstance(app.screen, LLMRunScreen) and app.screen.phase == "failed",
                    what="the dedup error")
        assert expected in static(app, "#llm-run-status")
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
    session.workspace.close()


# -- cancel ------------------------------------------------------------------------------------------


async def test_cancel_mid_run_closes_the_request_in_flight_at_once(tiny, tmp_path, llm):
    gate = threading.Event()

    def slow(body):
        gate.wait(20)  # the reply is in flight until the test lets it go (never, here)
        return REVENUE

    llm.default = slow
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            app.push_screen(RegenerateScreen(session, 0, n_candidates=2))
            await until(app, pilot, lambda: len(llm.requests) == 1, wait_workers=False, what="the first request")
            await pilot.press("escape")
            # The request in flight is closed at once (the status says so while it closes): the
            # run ends without its reply, which the server never got to send.
            await until(app, pilot, lambda: isinstance(app.screen, ReviewScreen), what="the cancelled run")
            assert not gate.is_set()
        assert len(llm.requests) == 1  # the second candidate was never asked for
    finally:
        gate.set()
    session.workspace.close()


async def test_retries_are_shown_and_cancel_interrupts_the_backoff(tiny, tmp_path, llm):
    llm.default = status(429, "slow down", headers={"Retry-After": "30"})
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(GenerateMoreScreen(session, "AAA", n=1))
        await pilot.pause()
        await pilot.press("enter")
        await until(app, pilot, lambda: isinstance(app.screen, LLMRunScreen)
                    and "retry 1/5 in 30 s: 429 rate limited" in static(app, "#llm-run-status"),
                    wait_workers=False, what="the retry notice")
        await pilot.press("c")
        await until(app, pilot, lambda: isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "ask",
                    what="the cancelled run")
        assert "cancelled" in static(app, "#gen-note")
    assert len(llm.requests) == 1 and len(session) == 3
    session.workspace.close()


# -- generate more ---------------------------------------------------------------------------------


def numbered_questions():
    """A fake model answering with a new, verbatim question each call."""
    count = iter(range(1, 1000))

    def reply(body):
        k = next(count)
        return cand(f"Which product does line {k} of the filing say Alpha makes?", "Anvils", ANVILS)

    return reply


async def test_more_than_10_calls_asks_first_and_escape_makes_no_call(tiny, tmp_path, llm):
    llm.default = numbered_questions()
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G")
        await pilot.pause()
        assert isinstance(app.screen, GenerateMoreScreen) and app.screen.query_one(Input).value == "3"
        app.screen.query_one(Input).value = ""
        await pilot.press("1", "1", "enter")
        await until(app, pilot, lambda: isinstance(app.screen, LLMRunScreen) and app.screen.phase == "confirm",
                    what="the confirmation")
        estimate = static(app, "#llm-run-estimate")
        assert estimate.startswith("11 calls") and "input tokens" in estimate and "cost" in estimate
        assert "run them?" in static(app, "#llm-run-status")
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "ask"
        assert llm.requests == []
        # Confirmed this time: 11 calls, 11 candidates.
        await pilot.press("enter")
        await until(app, pilot, lambda: isinstance(app.screen, LLMRunScreen) and app.screen.phase == "confirm",
                    what="the confirmation again")
        await pilot.press("y")
        await until(app, pilot, lambda: isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "pick",
                    what="the candidates")
        assert len(llm.requests) == 11 and len(app.screen.candidates) == 11
        await pilot.press("escape")  # close: nothing added
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and len(session) == 3
    session.workspace.close()


async def test_generate_more_space_chooses_enter_adds_and_review_shows_the_new_pair(tiny, tmp_path, llm):
    llm.default = numbered_questions()
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("v")  # the "undecided" view: new pairs must join it
        await pilot.press("G")
        await pilot.pause()
        app.screen.query_one(Input).value = "2"
        await pilot.press("enter")
        await until(app, pilot, lambda: isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "pick",
                    what="the candidates")
        assert "line 1 of the filing" in static(app, "#gen-item-0") and "[ ]" in static(app, "#gen-item-0")
        await pilot.press("down", "space")
        assert "[x]" in static(app, "#gen-item-1")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert len(session) == 4 and session.status(3) is Status.UNDECIDED
        assert session.view(3).question == "Which product does line 2 of the filing say Alpha makes?"
        assert session.pairs[3].chunk_index == 0 and current(app) == 3
        assert 3 in app.screen.queue.ids and "line 2 of the filing" in text_of(app, "#qa-question")
    session.workspace.close()


async def test_generate_more_a_adds_all_and_a_document_without_usable_replies_adds_none(tiny, tmp_path, llm):
    llm.default = numbered_questions()
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G")
        await pilot.pause()
        assert app.screen.doc_key == "AAA"
        app.screen.query_one(Input).value = "2"
        await pilot.press("enter")
        await until(app, pilot, lambda: isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "pick",
                    what="the candidates")
        await pilot.press("a")
        await settle(app, pilot)
        assert len(session) == 5 and [session.status(i) for i in (3, 4)] == [Status.UNDECIDED] * 2
        assert current(app) == 3
        # BBB: the fake model quotes Alpha's text, never in BBB's window.
        await pilot.press("k", "G")  # pair 2 is BBB's
        await pilot.pause()
        assert app.screen.doc_key == "BBB"
        app.screen.query_one(Input).value = "1"
        await pilot.press("enter")
        await until(app, pilot, lambda: isinstance(app.screen, GenerateMoreScreen) and app.screen.phase == "ask"
                    and "no usable pair" in static(app, "#gen-note"), what="the failure note")
        assert "BBB chunk 0: no usable pair after 4 attempts" in static(app, "#gen-note")
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and len(session) == 5
    session.workspace.close()


# -- semantic dedup --------------------------------------------------------------------------------


async def test_semantic_dedup_stores_clusters_for_the_near_duplicate_screen(tiny, tmp_path, llm):
    llm.script = [{"indices": [0, 2], "groups": [[0, 1]]}]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("L")
        await until(app, pilot, lambda: isinstance(app.screen, SemanticDedupScreen)
                    and app.screen.result is not None, what="the dedup summary")
        summary = static(app, "#sdedup-summary")
        assert "1 call(s), 0 from the cache" in summary and "1 cluster(s) found" in summary
        assert "#0 #1" in summary
        assert clusters.llm_clusters(session) == [[0, 1]]
        assert all(session.status(i) is Status.UNDECIDED for i in range(3))  # nothing rejected
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
    assert len(llm.requests) == 1
    session.workspace.close()


async def test_semantic_dedup_reports_an_unusable_answer_and_keeps_all(tiny, tmp_path, llm):
    llm.script = [{"indices": []}]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(SemanticDedupScreen(session))
        await until(app, pilot, lambda: isinstance(app.screen, SemanticDedupScreen)
                    and app.screen.result is not None, what="the dedup summary")
        summary = static(app, "#sdedup-summary")
        assert "0 cluster(s) found" in summary and "kept all 3 questions" in summary
        assert clusters.llm_clusters(session) == []
    session.workspace.close()


async def test_read_only_workspace_makes_no_call(tiny, tmp_path, llm):
    opened(tiny, tmp_path / "ws").workspace.close()  # create the workspace
    session = opened(tiny, tmp_path / "ws", read_only=True)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r", "G", "L")  # the review screen refuses each with a warning
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        app.push_screen(RegenerateScreen(session, 0))
        await settle(app, pilot)
        assert "read-only" in static(app, "#regen-note")
        await pilot.press("escape")
        app.push_screen(GenerateMoreScreen(session, "AAA"))
        await settle(app, pilot)
        assert "read-only" in static(app, "#gen-note")
        await pilot.press("enter", "escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
    assert llm.requests == [] and len(session) == 3
    session.workspace.close()


async def test_undoing_an_added_pair_removes_it_from_the_queue(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    n = len(session)
    session.add_pair("AAA", "How much revenue did Alpha report for 2022?", "$10 million",
                     "Revenue was $10 million in 2022.", 0)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        queue = app.screen.queue
        assert len(queue.ids) == n + 1 and "(1 generated)" in text_of(app, "#source-bar")
        await pilot.press("u")
        await settle(app, pilot)
        assert len(session) == n and list(queue.ids) == list(range(n))
        assert f"· {n} pairs ·" in text_of(app, "#source-bar")
        for _ in range(n + 2):  # walking past the end never touches the removed id
            await pilot.press("j")
        assert app.is_running and current(app) == n - 1
    session.workspace.close()
