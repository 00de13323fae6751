"""The app's regenerate in numbered mode (the default for a local server): the candidate's passage
is cut from the window by the named sentences, and an answer its passage does not support is
shown marked, never as a clean pair."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_app import SIZE, opened, settle  # noqa: E402
from test_tui_llm import KEY, at_once, regen_ready, static, until  # noqa: E402,F401

from mtcb_curate.tui.app import CurateApp  # noqa: E402


def numbered_llm(monkeypatch, fake_llm):
    """The fake server with no [generate] mode: auto, so numbered for this loopback server."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    return fake_llm


async def test_r_in_numbered_mode_cuts_the_passage_and_marks_an_unsupported_answer(tiny, tmp_path, monkeypatch,
                                                                                  fake_llm):
    llm = numbered_llm(monkeypatch, fake_llm)

    def reply(body):
        system = body["messages"][0]["content"]
        assert "first_sentence" in system  # numbered mode
        sample = "This is candidate 2" in body["messages"][1]["content"]
        if sample:  # the second candidate: a figure the passage does not hold, on every attempt
            return {"question": "Which sales figure did Alpha state for the year 2022?", "answer": "$99 billion",
                    "first_sentence": 2, "last_sentence": 2}
        return {"question": "How much revenue did Alpha report for 2022?", "answer": "$10 million",
                "first_sentence": 2, "last_sentence": 2}

    llm.default = reply
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await until(app, pilot, lambda: regen_ready(app), what="the candidates")
        first = static(app, "#regen-candidate-text")
        assert "numbered mode: the model named sentences 2–2" in first and "NOT SUPPORTED" not in first
        assert "Revenue was $10 million in 2022." in first
        await pilot.press("right")
        second = static(app, "#regen-candidate-text")
        assert second.index("ANSWER NOT SUPPORTED") < second.index("Question")  # said first, above the texts
        assert "$99 billion" in second
        await pilot.press("a")  # added as a new pair: its details carry the provenance
        await settle(app, pilot)
    details = [v["details"] for v in session.workspace.added_pairs().values()]
    assert details and details[0]["mode"] == "numbered" and details[0]["supported"] is False
    assert details[0]["model_text"] == "sentences 2-2" and json.dumps(details[0])
    session.workspace.close()
