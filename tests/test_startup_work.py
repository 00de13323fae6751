"""Start-up work of the review screen: one near-duplicate search, whose links the set-wide
checks group, instead of the set checks searching the whole set again while it runs."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tui_dedup import dedup_session  # noqa: E402

from support import review_app, review_at_once, settle  # noqa: E402

from mtcb_curate import neardup  # noqa: E402
from mtcb_curate.checks import pair as checks_pair  # noqa: E402


async def _until(app, pilot, done) -> None:
    for _ in range(300):
        await settle(app, pilot)
        if done():
            return
        await pilot.pause(0.02)
    raise AssertionError("never happened")


async def test_startup_searches_near_duplicates_once_and_the_set_checks_use_its_links(tmp_path, monkeypatch):
    review_at_once(monkeypatch)
    searches, set_runs = [], []
    real_search, real_set = neardup.search_links, checks_pair.set_check_results

    def counting_search(*args, **kw):
        searches.append(kw.get("workers"))
        return real_search(*args, **kw)

    def recording_set(session, **kw):
        set_runs.append(kw.get("search"))
        return real_set(session, **kw)

    monkeypatch.setattr(neardup, "search_links", counting_search)
    real_spans, known_given = neardup.passage_spans, []

    def recording_spans(dataset, items=None, known=None):
        known_given.append(known)
        return real_spans(dataset, items, known)

    monkeypatch.setattr(neardup, "passage_spans", recording_spans)
    from mtcb_curate.tui.screens import review

    monkeypatch.setattr(review, "set_check_results", recording_set)
    session = dedup_session(tmp_path)
    from mtcb_curate.tui.memory import CollectorPolicy

    frozen_while_held = []
    real_refreeze = CollectorPolicy.refreeze

    def recording_refreeze(self):
        frozen_while_held.append(self._holds)
        return real_refreeze(self)

    monkeypatch.setattr(CollectorPolicy, "refreeze", recording_refreeze)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _until(app, pilot, lambda: app.screen._set_results and app.screen._clusters_ready)
        await pilot.pause(0.2)
        await settle(app, pilot)
        assert searches == [1]  # one search, on one core: the other one is the screen's
        # Each start-up pass (scan, search, set checks, token cache) freezes its results before
        # it lets go of the collector: no full collection walks them in between.
        assert sum(1 for holds in frozen_while_held if holds) == 4
        # The search takes the passages' places from the scan instead of finding them again.
        assert known_given and known_given[0] and len(known_given[0]) == len(session)
        assert set_runs and all(s is not None for s in set_runs)
        assert [p.check_id for p in app.screen.problems(0) if p.fails] == ["duplicates"]


async def test_the_app_shortens_the_thread_switch_interval_while_it_runs(tmp_path, monkeypatch):
    from mtcb_curate.tui import app as tui_app

    review_at_once(monkeypatch)
    before = sys.getswitchinterval()
    session = dedup_session(tmp_path)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await settle(app, pilot)
        assert sys.getswitchinterval() == tui_app.SWITCH_INTERVAL_S
    assert sys.getswitchinterval() == before
