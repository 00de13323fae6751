"""The LLM at scale in the app, against the loopback chat server: the run dialog's
elapsed time and streamed tokens, the failed attempts viewer (run dialog and palette), and
generation for every document of the current view through ``app.generation``."""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path

from textual.widgets import Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_app import SIZE, opened, settle  # noqa: E402
from test_tui_llm import REVENUE, at_once, cand, llm, static, until  # noqa: E402,F401

from mtcb_curate.app.generation import PLAN_FILE  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.tui.app import CurateApp  # noqa: E402
from mtcb_curate.tui.screens.attempts import AttemptsScreen  # noqa: E402
from mtcb_curate.tui.screens.corpus_generate import CorpusGenerateScreen  # noqa: E402
from mtcb_curate.tui.screens.llm_run import LLMRunScreen  # noqa: E402
from mtcb_curate.tui.screens.regenerate import RegenerateScreen  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402

HALLUCINATED = cand(REVENUE["question"], "$12 million", "Revenue was $12 million in 2099.")


def config(tmp_path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text + '[generate]\nmode = "quote"\n', encoding="utf-8")
    return path


async def test_the_run_dialog_shows_elapsed_time_and_streamed_tokens(tiny, tmp_path, llm, monkeypatch):
    monkeypatch.setattr(LLMRunScreen, "TICK_S", 0.05)
    gate = threading.Event()
    state: dict = {}
    pieces = ['{"question": "How much revenue did Alpha report for 2022?", ', '"answer": "$10 million", ',
              '"supporting_passage": ', '"Revenue was $10 million in 2022."}']

    def streamed(body):
        from werkzeug import Response

        def events():
            for piece in pieces[:2]:  # two chunks, then the reply stalls until the test lets it go
                chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "stream-model",
                         "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                yield f"data: {json.dumps(chunk)}\n\n"
            gate.wait(20)
            state["closed"] = True

        return Response(events(), status=200, mimetype="text/event-stream")

    llm.default = streamed
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session, config_path=config(tmp_path, "[llm]\nstream = true\n"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(RegenerateScreen(session, 0, n_candidates=1))
        await until(app, pilot, lambda: isinstance(app.screen, LLMRunScreen)
                    and re.search(r"[12] tokens received", static(app, "#llm-run-status")), wait_workers=False,
                    what="the tokens received")
        line = static(app, "#llm-run-status")
        assert re.search(r"· \d+ s · [12] tokens received", line), line
        assert "asking the LLM (candidate 1 of 1)" in line
        await pilot.press("escape")  # cancel: the streamed request is closed at once, no wait for the gate
        await until(app, pilot, lambda: not isinstance(app.screen, LLMRunScreen), wait_workers=False,
                    what="the cancelled run")
        assert not gate.is_set() and len(llm.requests) == 1
        gate.set()
    session.workspace.close()


async def test_failed_attempts_are_viewable_from_the_run_dialog_and_the_palette(tiny, tmp_path, llm):
    gate = threading.Event()
    replies = [HALLUCINATED]

    def second_waits(body):
        if replies:
            return replies.pop()
        gate.wait(20)
        return REVENUE

    llm.default = second_waits
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(RegenerateScreen(session, 0, n_candidates=1))
        await until(app, pilot, lambda: len(llm.requests) == 2 and isinstance(app.screen, LLMRunScreen)
                    and "failed attempts (1)" in static(app, "#llm-run-keys"), wait_workers=False,
                    what="the refused first reply counted")
        await pilot.press("v")
        assert isinstance(app.screen, AttemptsScreen)
        shown = static(app, "#attempts-text")
        assert "AAA · chunk 0 · attempt 1" in shown
        assert "Revenue was $12 million in 2099." in shown  # the rejected quote, in full
        # The full reason, not cut, to its last words (the closest text, "$10 million in 2022", is not
        # proposed: the answer's "$12 million" is not in it, so the next check would refuse it).
        assert "does not occur verbatim in the document window" in shown
        assert "quote a whole sentence of the window that states the answer, exactly as it appears." in shown
        gate.set()  # the run finishes while the viewer is open: the dialog waits for it
        await until(app, pilot, lambda: isinstance(app.screen, AttemptsScreen), what="the run's end")
        await pilot.press("escape")
        await until(app, pilot, lambda: isinstance(app.screen, RegenerateScreen) and not app.screen.running,
                    what="the candidate")
        assert "2 attempts" in static(app, "#regen-candidate-text")
        await pilot.press("o")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        app.screen.action_llm_attempts()  # the palette's entry
        await pilot.pause()
        assert isinstance(app.screen, AttemptsScreen)
        assert "1 refused reply this session" in static(app, "#attempts-title")
    session.workspace.close()


def window_pair(body):
    """A valid pair quoting the first 30+ characters line pair of the window in the prompt."""
    user = body["messages"][1]["content"]
    window = user.split("<<<DOCUMENT WINDOW\n", 1)[1].split("\nDOCUMENT WINDOW>>>", 1)[0]
    key = re.search(r"Document key: (\w+)", user).group(1)
    return cand(f"What does the {key} filing say in its opening two lines?", window.strip().splitlines()[0],
                window.strip())


async def test_generate_for_the_documents_of_the_view_adds_undecided_pairs_and_resumes(tiny, tmp_path, llm):
    llm.default = window_pair
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session, config_path=config(tmp_path, "[llm]\nconcurrency = 2\n"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.action_generate_view()
        await pilot.pause()
        assert isinstance(app.screen, CorpusGenerateScreen) and app.screen.doc_keys == ["AAA", "BBB"]
        await pilot.press("enter")  # N = 1 per document: 2 calls, no confirmation needed
        await until(app, pilot, lambda: isinstance(app.screen, CorpusGenerateScreen) and app.screen.phase == "done",
                    what="the outcome")
        note = str(app.screen.query_one("#corpus-note", Static).content)
        assert note.startswith("2 pair(s) added as undecided"), note
        outcome = static(app, "#corpus-outcome-text")
        assert "AAA: 1 pair(s) added (#3)" in outcome or "BBB: 1 pair(s) added (#3)" in outcome
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
    assert len(session) == 5 and {session.status(i) for i in (3, 4)} == {Status.UNDECIDED}
    details = [v["details"] for v in session.workspace.added_pairs().values()]
    assert sorted(d["job"][0] for d in details) == ["AAA", "BBB"]
    assert not (tmp_path / "ws" / PLAN_FILE).exists() and len(llm.requests) == 2
    session.workspace.close()


async def test_generate_for_the_view_cancelled_keeps_its_plan_for_the_next_run(tiny, tmp_path, llm):
    gate = threading.Event()

    def slow(body):
        gate.wait(20)
        return window_pair(body)

    llm.default = slow
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(CorpusGenerateScreen(session, ["BBB", "AAA"]))
        await pilot.pause()
        await pilot.press("enter")
        await until(app, pilot, lambda: len(llm.requests) == 1, wait_workers=False, what="the first call")
        assert isinstance(app.screen, LLMRunScreen)
        await pilot.press("escape")  # cancel: the call in flight is closed at once, the second never starts
        await until(app, pilot, lambda: isinstance(app.screen, CorpusGenerateScreen) and app.screen.phase != "running",
                    what="the cancelled outcome")
        gate.set()
        note = str(app.screen.query_one("#corpus-note", Static).content)
        assert "cancelled" in note, note
    assert len(llm.requests) == 1
    plan = json.loads((tmp_path / "ws" / PLAN_FILE).read_text(encoding="utf-8"))
    assert plan["options"]["docs"] == ["AAA", "BBB"] and plan["committed"] == []
    session.workspace.close()


def test_the_viewer_shows_hostile_replies_literally_and_newest_first():
    import json as _json

    from mtcb_curate.llm.generate import Attempt
    from mtcb_curate.tui.screens.attempts import attempts_text

    hostile = "[bold]x[/bold] [@click=app.quit]y[/] [$var]"
    older = Attempt("AAA", 0, 0, 1, ("first reason",), False, "not json", False)
    newer = Attempt("BBB", 2, 1, 3, (f"reason with {hostile}",), False,
                    _json.dumps({"question": "Q?", "answer": "A", "supporting_passage": hostile}), True)
    text = attempts_text([older, newer]).plain
    assert text.index("BBB · chunk 2 · sample 1 · attempt 3 · from the cache") < text.index("AAA · chunk 0")
    assert f"the model quoted: {hostile}" in text and f"reason with {hostile}" in text
    assert "the reply: not json" in text
