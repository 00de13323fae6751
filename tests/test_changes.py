"""A change made through ``app.review.within`` (``ReviewSession.run_within``, ``store.changes``):
its caller waits at most a patience for each store call, the session's memory changes only on
the caller's turn once the store committed, a failed store call is recorded, and one change
runs at a time. The store's slow call is a real SQLite workspace whose statements wait on an
event (as a server that does not answer)."""

from __future__ import annotations

import threading

import pytest

from mtcb_curate.app import review as app_review
from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import WorkspaceError

from support import opened


@pytest.fixture
def waiting(tmp_path):
    """A session whose store waits (``commit_waits``) and whose statements wait for ``go``."""
    session = opened(None, tmp_path / "ws", sample=True)
    ws = session.workspace
    ws.commit_waits = True
    go = threading.Event()
    real = ws._execute

    def slow(*args, **kwargs):
        go.wait(10)
        return real(*args, **kwargs)

    ws._execute = slow
    yield session, go
    go.set()
    ws.close()


def test_a_change_past_its_patience_leaves_the_session_alone_until_the_caller_hands_it_its_turn(waiting):
    session, go = waiting
    pending = app_review.within(session, lambda: app_review.decide(session, 0, Status.ACCEPTED), patience_s=0.05)
    assert not pending.done() and session.status(0) is Status.UNDECIDED
    ready = threading.Event()
    pending.on_ready(ready.set)
    go.set()
    assert ready.wait(10)
    # committed, but the session's memory changes only on the caller's turn
    assert session.status(0) is Status.UNDECIDED
    assert pending.resume(5.0) and not pending.failed
    assert pending.result().changed and session.status(0) is Status.ACCEPTED
    assert [e.kind for e in session.workspace.history()] == ["decide"]


def test_a_change_within_its_patience_is_done_at_once(waiting):
    session, go = waiting
    go.set()
    pending = app_review.within(session, lambda: app_review.set_note(session, 1, "look again"), patience_s=5.0)
    assert pending.done() and pending.result() is True and session.note(1) == "look again"


def test_one_change_at_a_time(waiting):
    session, go = waiting
    first = app_review.within(session, lambda: app_review.decide(session, 0, Status.FLAGGED), patience_s=0.05)
    assert not first.done()
    with pytest.raises(WorkspaceError, match="still waits"):
        app_review.within(session, lambda: app_review.decide(session, 1, Status.FLAGGED), patience_s=0.05)
    go.set()
    assert first.resume(5.0)
    assert session.status(0) is Status.FLAGGED and session.status(1) is Status.UNDECIDED


def test_a_failed_store_call_is_recorded_and_its_error_handed_to_the_caller(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    session.workspace.close()  # every store call now fails
    pending = app_review.within(session, lambda: app_review.decide(session, 0, Status.ACCEPTED), patience_s=0.05)
    assert pending.done() and pending.failed
    with pytest.raises(WorkspaceError, match="closed"):
        pending.result()
    assert session.status(0) is Status.UNDECIDED
    # a change that fails without a store call is not a failed write
    pending = app_review.within(session, lambda: app_review.decide(session, 10**6, Status.ACCEPTED), patience_s=0.05)
    assert pending.done() and not pending.failed
    with pytest.raises(IndexError):
        pending.result()
