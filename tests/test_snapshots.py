"""Snapshot tests of the review screen at 80x24, 120x30 and 160x48 (pytest-textual-snapshot).

The app runs on the bundled sample with a fresh workspace (its path is not on screen: the top
bar names the bundled sample), animations off (the ``isolated_env`` fixture sets
``TEXTUAL_ANIMATIONS=none``), the textual-dark theme, and every worker and the session's
analysis (its worker process) finished before the screenshot, so a run gives the same SVG every
time. The pace reads ``— pairs/h`` until a pair is decided, and no pair is.

The SVGs are in ``tests/__snapshots__/test_snapshots/``; after a deliberate change to the
screen, look at the failing report (``snapshot_report.html``) and regenerate them with
``pytest tests/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

from support import opened

pytest.importorskip("pytest_textual_snapshot")

# the review screen's problems line shows the analysis's answerable reasons, as by default
pytestmark = [pytest.mark.usefixtures("review_at_once"), pytest.mark.answerable_stage]

SIZES = [(80, 24), (120, 30), (160, 48)]


async def _settled(pilot) -> None:
    """The theme fixed, every worker and the analysis done and their results drawn."""
    from support import settle

    app = pilot.app
    app.theme = "textual-dark"
    await settle(app, pilot)


@pytest.fixture
def sample_app(ws):
    from mtcb_curate.tui.app import CurateApp

    session = opened(None, ws, sample=True)
    try:
        yield CurateApp(session)
    finally:
        session.workspace.close()


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_review_screen(snap_compare, sample_app, size):
    assert snap_compare(sample_app, terminal_size=size, run_before=_settled)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_review_screen_on_a_pair_with_problems(snap_compare, sample_app, size):
    """Pair #3: a long question, a normalized passage of 1,744 characters, three problems."""
    async def run_before(pilot) -> None:
        await _settled(pilot)
        await pilot.press("j", "j", "j")
        await _settled(pilot)

    assert snap_compare(sample_app, terminal_size=size, run_before=run_before)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_statistics_screen(snap_compare, sample_app, size, monkeypatch):
    """``T`` on the sample: the coverage, the bar charts (textual-plot) and their numbers; the
    seconds in the title fixed at 0 (the only figure that changes between runs)."""
    from mtcb_curate.app import stats as app_stats

    real = app_stats.compute_stats

    def timeless(*args, **kwargs):
        s = real(*args, **kwargs)
        s.seconds = 0.0
        return s

    monkeypatch.setattr(app_stats, "compute_stats", timeless)

    async def run_before(pilot) -> None:
        from textual.worker import WorkerCancelled

        from mtcb_curate.tui.screens.stats import StatsScreen

        async def settled() -> None:
            for _ in range(3):  # the review screen may cancel a locate worker (a newer one runs)
                try:
                    await _settled(pilot)
                except WorkerCancelled:
                    continue
                return

        await settled()
        await pilot.press("T")
        await settled()
        assert isinstance(pilot.app.screen, StatsScreen) and pilot.app.screen.stats is not None
        await pilot.pause()

    assert snap_compare(sample_app, terminal_size=size, run_before=run_before)
