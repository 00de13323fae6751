"""In the app: a snapped candidate shows its verdict and the model's own quote, and
regenerate says which window it used."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_app import SIZE, opened, settle  # noqa: E402
from test_tui_llm import at_once, llm, regen_ready, static, until  # noqa: E402,F401

from mtcb_curate.tui.app import CurateApp  # noqa: E402

NEAR_MISS = {"question": "How much revenue did Alpha report for 2022?", "answer": "$10 million",
             "supporting_passage": "Alpha makes anvils. Revenue was $10 million in 2022."}


@pytest.mark.usefixtures("at_once")
async def test_regenerate_shows_a_snapped_quote_and_the_window_used(tiny, tmp_path, llm):
    llm.script = [NEAR_MISS, {**NEAR_MISS, "question": "Which year did Alpha earn $10 million of revenue in?"}]
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await until(app, pilot, lambda: regen_ready(app), what="the candidates")
        shown = static(app, "#regen-candidate-text")
        assert "snapped (normalized) to the text of chunk 0" in shown
        assert "The model quoted" in shown and NEAR_MISS["supporting_passage"] in shown
        assert "window 0" in shown
    assert len(llm.requests) == 2  # kept at once, not sent back
    session.workspace.close()
