"""Every change to a pair, from any screen, made so that the screen never waits on a server.

A screen hands each change (a call of the application layer: a ``ReviewController`` method, an
``app.clusters`` resolution, a dialog's save ...) to the app's :class:`Changes`, with what to do
with its result. It runs through ``app.review.within``: on SQLite at once; on a shared workspace
(PostgreSQL) the app's thread waits at most :data:`PATIENCE_S` for each of the change's store
calls. A change not done by then goes on off the app's thread (``store.changes``) while:

- the screen keeps drawing and says at once what waits ("⟳ saving", then "⟳ reconnecting" when
  the store replaces a lost connection): the review screen on its progress line, any other
  screen in a notification;
- every key typed meanwhile is kept (``KeyGate``, reason ``CHANGE``), then handled in order
  once the change is saved, or dropped when it is not (a line says how many): nothing moves
  past a change that may yet fail;
- no other change starts (one at a time: a second is refused with a line).

When the change is done its result goes to the screen's ``then``, on the app's thread, as if it
had been made at once: a failed write reads as it always does ("Not saved: ..."), the session
holds only what the store committed, and nothing is applied twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text

from mtcb_curate.app import review as app_review
from mtcb_curate.errors import CurateError
from mtcb_curate.store.changes import PendingChange
from mtcb_curate.tui.keys import CHANGE
from mtcb_curate.tui.messages import ChangeReady, ChangeWaiting, WorkspaceReconnecting

if TYPE_CHECKING:
    from textual.app import App

#: Seconds the app's thread waits for a change's store call (a shared workspace's round trip)
#: before the change goes on off it and the screen says it is waiting: a healthy server answers
#: in milliseconds; one whose connection was lost is retried for up to
#: ``store.postgres.RECONNECT_SECONDS``.
PATIENCE_S = 0.25
#: How long the notification saying a change waits stays up on a screen other than the review
#: screen, seconds (it is cleared as soon as the change is done).
WAITING_NOTICE_S = 60.0


@dataclass(frozen=True)
class ChangeResult:
    """What a change came to: :meth:`get` gives what it returned or raises what it raised;
    ``failed``: a store call of it failed (the change may have said so itself)."""

    pending: PendingChange

    @property
    def failed(self) -> bool:
        return self.pending.failed

    def get(self) -> Any:
        """What the change returned. Raises: what it raised."""
        return self.pending.result()


class Changes:
    """The app's changes to pairs, one at a time (see the module docstring).

    Attributes:
        pending: the change waiting on the server, or None. what: what it is, for the lines
            ("the edit of #12"). reconnecting: the store's line while it replaces a lost
            connection during that change, or None.
    """

    def __init__(self, app: App) -> None:
        self.app = app
        self.pending: PendingChange | None = None
        self.what = ""
        self.reconnecting: str | None = None
        self._then: Callable[[ChangeResult], object] | None = None
        self._noticed = False

    @property
    def waiting(self) -> bool:
        """Whether a change waits on the server."""
        return self.pending is not None

    def attach(self) -> None:
        """Hear from a shared workspace when it starts replacing a lost connection."""
        workspace = self.app.session.workspace  # type: ignore[attr-defined]
        if hasattr(workspace, "on_reconnecting"):
            workspace.on_reconnecting = lambda line: self.app.post_message(WorkspaceReconnecting(line))

    def run(self, change: Callable[[], Any], *, what: str, then: Callable[[ChangeResult], object],
            meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> None:
        """Make ``change`` (a call of the application layer) and hand its :class:`ChangeResult`
        to ``then``: at once when it is done within :data:`PATIENCE_S` per store call, else once
        the server has answered (see the module docstring). ``what`` names it in the lines
        ("the note on #12"); ``meanwhile``: work for the app's thread while its first store
        call waits (``app.review.within``)."""
        if self.pending is not None:
            self.app.notify(f"Not done: {self.what} still waits for the server; {what} was not made.",
                            severity="warning", timeout=6, markup=False)
            return
        try:
            pending = app_review.within(self.app.session, change, patience_s=PATIENCE_S,  # type: ignore[attr-defined]
                                        meanwhile=meanwhile)
        except CurateError as exc:  # a change made elsewhere still waits
            self.app.notify(f"Not done: {exc}", severity="warning", timeout=6, markup=False)
            return
        if pending.done():
            then(ChangeResult(pending))
            return
        self.pending, self.what, self._then = pending, what, then
        self.app.key_gate.hold(CHANGE)  # type: ignore[attr-defined]
        self._show()
        pending.on_ready(lambda: self.app.post_message(ChangeReady(pending)))

    def ready(self, pending: PendingChange) -> None:
        """The waiting change's store call is over (``ChangeReady``): let it go on; once done,
        hand its result on and release the keys kept meanwhile (replayed when it was saved,
        dropped when not)."""
        if pending is not self.pending:
            return
        if not pending.resume(PATIENCE_S):  # a further store call waits
            self._show()
            pending.on_ready(lambda: self.app.post_message(ChangeReady(pending)))
            return
        then, what = self._then, self.what
        self.pending, self._then, self.reconnecting = None, None, None
        if self._noticed:
            self.app.clear_notifications()
            self._noticed = False
        kept = self.app.release_keys(CHANGE, replay=not pending.failed)  # type: ignore[attr-defined]
        self._show()
        if then is not None:
            then(ChangeResult(pending))
        if pending.failed and kept:
            self.app.notify(f"{kept} key{'s' if kept != 1 else ''} typed while it waited "
                            f"{'were' if kept != 1 else 'was'} not applied: {what} was not saved.",
                            severity="warning", timeout=10, markup=False)

    def reconnecting_now(self, line: str) -> None:
        """The shared workspace started replacing a lost connection (``WorkspaceReconnecting``):
        said where the waiting change is shown, or in a notification when none waits."""
        if self.pending is None:
            self.app.notify(line, severity="warning", timeout=8, markup=False)
            return
        self.reconnecting = line
        self._show()

    def line(self) -> Text | None:
        """The review screen's progress line while a change waits, else None."""
        if self.pending is None:
            return None
        if self.reconnecting is None:
            return Text.assemble((" ⟳ saving ", "bold reverse yellow"),
                                 f" {self.what} waits for the server; keys typed now wait for it")
        # what the curator needs first (at 80 columns the database's address is cut)
        return Text.assemble((" ⟳ reconnecting ", "bold reverse yellow"),
                             f" {self.what} and the keys typed since wait · ", (self.reconnecting, "dim"))

    def _show(self) -> None:
        """Have the screens show the line again; a screen that does not show it on a line of its
        own (``SHOWS_WAITING_CHANGES``) gets a notification."""
        for screen in self.app.screen_stack:
            screen.post_message(ChangeWaiting())
        line = self.line()
        if line is not None and not getattr(self.app.screen, "SHOWS_WAITING_CHANGES", False):
            if self._noticed:
                self.app.clear_notifications()
            self.app.notify(line.plain.strip(), severity="warning", timeout=WAITING_NOTICE_S, markup=False)
            self._noticed = True


def run_change(app: App, change: Callable[[], Any], *, what: str, then: Callable[[ChangeResult], object]) -> None:
    """``app.changes.run`` (:class:`Changes`), or, in an app without it (a dialog tested on its
    own), ``change`` made at once."""
    changes = getattr(app, "changes", None)
    if isinstance(changes, Changes):
        changes.run(change, what=what, then=then)
        return
    pending = PendingChange(change, inline=True)
    pending.start(0.0)
    then(ChangeResult(pending))
