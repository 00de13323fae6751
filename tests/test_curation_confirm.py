"""Found by ``benchmarks/bench_curation.py`` on squad-mtcb: after ``d``, ``k`` (keep this pair,
reject its duplicates) and ``escape``, accepting the kept pair asked "fails duplicates: accept
anyway?" from the set-wide checks computed before the keep (they run again only after a delay,
in a worker). The keep settles the cluster: the accept must decide at once."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tui_dedup import dedup_session  # noqa: E402

from support import current, review_app, review_at_once, settle  # noqa: E402

from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.tui.screens.cluster import ClusterScreen  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402


async def _until_set_checks(app, pilot) -> None:
    for _ in range(300):
        await settle(app, pilot)
        if app.screen.controller.set_results:
            return
        await pilot.pause(0.02)
    raise AssertionError("the set-wide checks never ran")


async def test_accept_after_keep_one_does_not_ask_about_the_settled_cluster(tmp_path, monkeypatch):
    review_at_once(monkeypatch)
    session = dedup_session(tmp_path)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _until_set_checks(app, pilot)
        screen = app.screen
        assert current(app) == 0 and [p.check_id for p in screen.controller.problems(0) if p.fails] == ["duplicates"]
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, ClusterScreen)
        await pilot.press("k", "escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and current(app) == 0
        assert session.status(1) is Status.REJECTED and session.status(2) is Status.REJECTED
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen), "asked about duplicates already resolved"
        assert session.status(0) is Status.ACCEPTED


async def test_accept_still_asks_while_the_cluster_is_unresolved(tmp_path, monkeypatch):
    review_at_once(monkeypatch)
    session = dedup_session(tmp_path)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _until_set_checks(app, pilot)
        await pilot.press("d")
        await settle(app, pilot)
        await pilot.press("escape")  # looked, resolved nothing
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert not isinstance(app.screen, ReviewScreen)  # the confirmation
        assert session.status(0) is Status.UNDECIDED
