"""Start-up work of the review screen: one near-duplicate search, whose links the set-wide
checks group, instead of the set checks searching the whole set again while it runs."""

from __future__ import annotations

import sys
import threading
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
    from mtcb_curate.tui.screens import review_passes

    monkeypatch.setattr(review_passes, "set_check_results", recording_set)
    session = dedup_session(tmp_path)
    from mtcb_curate.tui.memory import CollectorPolicy

    frozen_while_held = []
    real_refreeze = CollectorPolicy.refreeze

    def recording_refreeze(self):
        frozen_while_held.append(self._holds)
        return real_refreeze(self)

    monkeypatch.setattr(CollectorPolicy, "refreeze", recording_refreeze)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _until(app, pilot, lambda: app.screen.controller.set_results and app.screen.controller.clusters_ready)
        await pilot.pause(0.2)
        await settle(app, pilot)
        assert searches == [1]  # one search, on one core: the other one is the screen's
        # Each start-up pass (scan, search, set checks, token cache) freezes its results before
        # it lets go of the collector: no full collection walks them in between.
        assert sum(1 for holds in frozen_while_held if holds) == 4
        # The search takes the passages' places from the scan instead of finding them again.
        assert known_given and known_given[0] and len(known_given[0]) == len(session)
        assert set_runs and all(s is not None for s in set_runs)
        assert [p.check_id for p in app.screen.controller.problems(0) if p.fails] == ["duplicates"]


async def test_the_app_shortens_the_thread_switch_interval_while_it_runs(tmp_path, monkeypatch):
    from mtcb_curate.tui import app as tui_app

    review_at_once(monkeypatch)
    before = sys.getswitchinterval()
    session = dedup_session(tmp_path)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await settle(app, pilot)
        assert sys.getswitchinterval() == tui_app.SWITCH_INTERVAL_S
    assert sys.getswitchinterval() == before


async def test_start_up_passes_run_one_at_a_time_and_the_search_indexes_large_clusters(tmp_path, monkeypatch):
    """Each start-up pass competes with the keys for the GIL: the token pass starts once the
    set checks are done, not beside them; the near-duplicate worker indexes the links of
    clusters from ``WARM_LINKS`` links by member, so the badge does not sort them at a key."""
    import threading

    from mtcb_curate.app.verdicts import Verdicts
    from mtcb_curate.tui.screens import review_passes

    review_at_once(monkeypatch)
    monkeypatch.setattr(review_passes, "WARM_LINKS", 1)
    events, lock = [], threading.Lock()
    real_set, real_fill = review_passes.set_check_results, Verdicts.fill_token_cache

    def recording_set(session, **kw):
        with lock:
            events.append("set checks start")
        try:
            return real_set(session, **kw)
        finally:
            with lock:
                events.append("set checks end")

    def recording_fill(self, cancelled):
        with lock:
            events.append("tokens start")
        return real_fill(self, cancelled)

    monkeypatch.setattr(review_passes, "set_check_results", recording_set)
    monkeypatch.setattr(Verdicts, "fill_token_cache", recording_fill)
    session = dedup_session(tmp_path)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        await _until(app, pilot, lambda: "tokens start" in events)
        assert events[:3] == ["set checks start", "set checks end", "tokens start"]
        found = set(app.screen.controller.cluster_index.values())
        assert found and all(c.member_index is not None for c in found)


async def test_the_token_pass_runs_when_the_set_checks_fail(tmp_path, monkeypatch):
    from mtcb_curate.app.verdicts import Verdicts
    from mtcb_curate.tui.screens import review_passes

    review_at_once(monkeypatch)
    started = []
    real_fill = Verdicts.fill_token_cache

    def failing(session, **kw):
        raise RuntimeError("set checks broke")

    def recording_fill(self, cancelled):
        started.append(True)
        return real_fill(self, cancelled)

    monkeypatch.setattr(review_passes, "set_check_results", failing)
    monkeypatch.setattr(Verdicts, "fill_token_cache", recording_fill)
    async with review_app(dedup_session(tmp_path), size=(120, 30)) as (app, pilot):
        await _until(app, pilot, lambda: bool(started))
        assert app.screen.controller.set_results == {}  # the problems line goes on without them


async def test_a_key_holds_pacing_workers_until_its_frame_is_drawn(tmp_path, monkeypatch):
    from mtcb_curate import threads
    from mtcb_curate.tui.screens.review import ReviewScreen

    review_at_once(monkeypatch)
    seen = []
    real_next = ReviewScreen.action_next

    def action_next(self):
        seen.append(threads.held())  # while the key is handled
        return real_next(self)

    monkeypatch.setattr(ReviewScreen, "action_next", action_next)
    session = dedup_session(tmp_path)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await _until(app, pilot, lambda: app.screen.controller.set_results and not threads.workers_pacing())
        await pilot.press("j")  # no pass running: nothing held
        await settle(app, pilot)
        with threads.working():  # as a start-up pass's worker
            await pilot.press("j")
            await settle(app, pilot)
            assert not threads.held()  # released once the frame was drawn
        assert seen == [False, True]


async def test_the_start_up_passes_pace_in_their_workers(tmp_path, monkeypatch):
    from mtcb_curate import threads

    review_at_once(monkeypatch)
    pacing = set()
    real_pace = threads.pace

    def pace(lock=None):
        pacing.add(threading.current_thread().name)
        real_pace(lock)

    monkeypatch.setattr(threads, "pace", pace)  # paced() calls it
    session = dedup_session(tmp_path)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await _until(app, pilot, lambda: app.screen.controller.set_results and app.screen.controller.clusters_ready)
    assert pacing and threading.main_thread().name not in pacing


def test_key_holds_count_keys_the_input_thread_held():
    from mtcb_curate import threads
    from mtcb_curate.tui.app import KeyHolds

    holds = KeyHolds()
    holds.arrived()  # no pass running: nothing held, nothing to release
    assert not threads.held() and not holds.handling()
    with threads.working():
        t = threading.Thread(target=holds.arrived)  # as the terminal's input thread
        t.start()
        t.join()
        assert threads.held()  # from the key's arrival, before the app's thread handles it
        assert holds.handling()  # that key: released by the app after its frame
        threads.release()
        assert not threads.held()
        assert holds.handling()  # a key not seen by the input thread (a Pilot's) holds now
        assert threads.held()
        threads.release()
    assert not threads.held()


async def test_the_terminal_driver_holds_the_workers_as_it_reads_a_key(tmp_path, monkeypatch):
    from textual import events

    from mtcb_curate import threads

    review_at_once(monkeypatch)
    async with review_app(dedup_session(tmp_path), size=(80, 24)) as (app, pilot):
        await _until(app, pilot, lambda: app.screen.controller.set_results and not threads.workers_pacing())
        driver_class = app.get_driver_class()  # what a terminal runs (a test runs headless)
        assert driver_class.__name__.startswith("Holding")
        driver = driver_class(app, size=(80, 24))  # its input side, fed the key a terminal sent
        start = app.screen.queue.cursor
        with threads.working():
            t = threading.Thread(target=driver.process_message, args=(events.Key("j", "j"),))
            t.start()
            t.join()
            assert threads.held()
            await settle(app, pilot)
            assert app.screen.queue.cursor == start + 1  # the key reached the app and was handled
            assert not threads.held()  # and its hold was released after the frame
