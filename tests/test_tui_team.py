"""The team screen (``C``) and the reconnect notice, on a shared workspace of a real PostgreSQL
server (conftest.pg_server), driven with Pilot."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import opened, write_source  # noqa: E402

from mtcb_curate.dataset.model import Status  # noqa: E402

pytestmark = pytest.mark.usefixtures("review_at_once")
HOSTILE = "[bold]x[/bold] [@click=app.quit]y[/]"


async def settle(app, pilot) -> None:
    """``support.settle``, where an exclusive worker replaced by a newer one (the set checks, which
    read the slower shared workspace) is not a failure."""
    from textual.worker import WorkerCancelled

    for _ in range(20):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        await pilot.pause()
        return


@asynccontextmanager
async def review_app(session, size=(100, 30)):
    from mtcb_curate.tui.app import CurateApp

    app = CurateApp(session)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            yield app, pilot
    finally:
        session.workspace.close()


def _team(pg_server, tmp_path):
    from mtcb_curate.app import team

    src = write_source(tmp_path / "src")
    url = pg_server.url()
    ann = opened(src, url, curator="ann")
    bob = opened(src, url, curator=HOSTILE)
    team.plan(ann, 1.0)
    ann.decide(0, Status.ACCEPTED)
    bob.decide(0, Status.ACCEPTED)
    ann.decide(2, Status.ACCEPTED)
    bob.decide(2, Status.REJECTED, "not verbatim")
    ann.workspace.close()
    bob.workspace.close()
    return src, url


async def test_the_team_screen_shows_counts_and_agreement_and_a_lead_decides_a_conflict(pg_server, tmp_path):
    from mtcb_curate.tui.screens.team import TeamScreen

    src, url = _team(pg_server, tmp_path)
    lead = opened(src, url, curator="lead")
    async with review_app(lead, size=(120, 30)) as (app, pilot):
        await pilot.press("C")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, TeamScreen)
        title = str(screen.query_one("#team-title", Static).content)
        body = str(screen.query_one("#team-body", Static).content)
        assert "you are lead; 1 open conflicts" in title
        assert "ann" in body and HOSTILE[:20] in body  # the name shown literally (cut), not as markup
        assert "overlap: 3 pairs, 2 decided by two, 1 agreed, 1 open conflicts" in body
        options = screen.query_one("#team-conflicts", OptionList)
        assert options.option_count == 1
        assert "ann: accepted" in str(options.get_option_at_index(0).prompt)
        await pilot.press("x")  # the lead rejects, with the rejecting curator's reason
        await settle(app, pilot)
        assert screen.conflicts == {}
        assert lead.workspace.conflicts() == {}
        assert lead.workspace.decisions()[2].reason == "not verbatim"
        await pilot.press("escape")
        await settle(app, pilot)
        assert lead.status(2) is Status.REJECTED  # the review screen took the lead's decision


async def test_the_team_key_on_one_curators_workspace_says_so(tmp_path):
    src = write_source(tmp_path / "src")
    s = opened(src, tmp_path / "ws")
    async with review_app(s) as (app, pilot):
        await pilot.press("C")
        await settle(app, pilot)
        assert any("One curator here" in n.message for n in app._notifications)


async def test_a_dropped_connection_is_retried_and_the_screen_says_so(pg_server, tmp_path):
    import psycopg

    src = write_source(tmp_path / "src")
    url = pg_server.url()
    s = opened(src, url, curator="ann")
    async with review_app(s) as (app, pilot):
        pid = s.workspace._conn.info.backend_pid
        with psycopg.connect(pg_server.base_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        await pilot.press("a")
        await settle(app, pilot)
        assert s.workspace.reconnects == 1
        assert any("reconnected to postgresql://postgres@127.0.0.1" in n.message for n in app._notifications)
    again = opened(None, url, curator="ann")
    try:
        assert again.status(0) is Status.ACCEPTED and len(again.workspace.history()) == 1
    finally:
        again.workspace.close()


async def test_n_hands_the_next_claimed_pair_in_a_work_split(pg_server, tmp_path):
    from mtcb_curate.app import team
    from mtcb_curate.store.postgres import PgWorkspace

    src = write_source(tmp_path / "src")
    url = pg_server.url()
    ann = opened(src, url, curator="ann")
    team.plan(ann, 0.0)
    with PgWorkspace.open(url, curator="bob") as bob:
        assert bob.claim_next() == 0  # bob holds pair 0
        async with review_app(ann) as (app, pilot):
            await pilot.press("n")
            await settle(app, pilot)
            assert app.screen.queue.current == 1  # not bob's pair
            await pilot.press("f")
            await settle(app, pilot)
            await pilot.press("n")
            await settle(app, pilot)
            assert app.screen.queue.current == 2
            await pilot.press("f")
            await settle(app, pilot)
            await pilot.press("n")
            await settle(app, pilot)
            assert any("Nothing left to hand you" in n.message for n in app._notifications)
        assert set(bob.votes()) == {1, 2} and {v for vs in bob.votes().values() for v in vs} == {"ann"}


async def test_while_a_decision_commits_the_screen_wraps_the_pair_it_leads_to(pg_server, tmp_path, monkeypatch):
    """On a shared workspace a decision's commit waits on the server: meanwhile the screen wraps
    the next pair (not while more keys wait: they pass over it), then shows it once committed."""
    from textual import events

    from mtcb_curate.store import session as session_module

    monkeypatch.setattr(session_module, "OVERLAP_MIN_COMMIT_S", 0.0)  # the test server commits quickly
    config = tmp_path / "c.toml"  # `a` accepts a pair that fails a check without asking
    config.write_text("[review]\nconfirm_failing_accept = false\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))

    from support import text_of_head, wait_until, while_running

    s = opened(None, pg_server.url(), sample=True, curator="ann")
    async with review_app(s, size=(120, 30)) as (app, pilot):
        screen = app.screen
        start = screen.queue.current
        deciding, wrapped = [], []
        real_decide, real_wrap = s.run_within, screen._wrap_row

        def wrap(row, stop=None, index=False):
            if deciding:
                wrapped.append((screen.queue.ids[row], s.status(screen.queue.current)))
            return real_wrap(row, stop, index)

        s.run_within, screen._wrap_row = while_running(real_decide, deciding), wrap
        # A server slower than the screen: each commit lasts until the screen has begun its
        # meanwhile work (a quick test server could commit before the screen looks, and the
        # screen rightly wraps nothing then); WAIT_S guards against a hang.
        import threading

        from support import WAIT_S

        looked, real_write, real_prepare = threading.Event(), s.workspace._write, screen._prepare_next

        def slow_write(*args, **kwargs):
            looked.wait(WAIT_S)
            looked.clear()
            return real_write(*args, **kwargs)

        def prepare(committed):
            looked.set()
            return real_prepare(committed)

        s.workspace._write, screen._prepare_next = slow_write, prepare
        await pilot.press("a")
        await wait_until(pilot, lambda: text_of_head(app).startswith(f"#{start + 1}"),
                         "the next pair shown")
        # wrapped before the decision was in the session, shown after
        assert wrapped == [(start + 1, Status.UNDECIDED)]
        assert s.status(start) is Status.ACCEPTED and screen.queue.current == start + 1
        assert text_of_head(app).startswith(f"#{start + 1}"), text_of_head(app)
        for _ in range(4):
            app.post_message(events.Key("a", "a"))
        await wait_until(pilot, lambda: s.status(start + 4) is Status.ACCEPTED
                         and text_of_head(app).startswith(f"#{start + 5}"), "the four keys handled")
        assert [s.status(start + i) for i in range(5)] == [Status.ACCEPTED] * 5
        assert wrapped == [(start + 1, Status.UNDECIDED), (start + 5, Status.UNDECIDED)]
