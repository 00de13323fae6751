"""A change to pairs run so that its caller waits on the storage for a bounded time only.

A change is any call of the application layer that reads and writes a ``ReviewSession`` (a
decision, an edit, a repair, a note, an undo, a bulk action, a cluster resolution ...). On a
store whose calls wait on a server (``Store.commit_waits``: PostgreSQL), a store call can take
up to the store's reconnect time (``store.postgres.RECONNECT_SECONDS``) when the connection was
lost. :class:`PendingChange` runs the change on a thread of its own and hands the turn back and
forth with its caller, so that the two never run session code at the same time:

- the caller waits while the change runs its own code (reading the session, working out what
  to write), as it would for a direct call;
- while the change is inside a store call (``Store.call_guard``: a round trip, a reconnection),
  the caller waits at most ``patience_s`` seconds, then goes on (the change is *pending*);
- once that store call has returned or failed, the change waits until the caller hands it the
  turn again (:meth:`PendingChange.resume`), then runs to its end (putting what was committed
  into the session's memory) or to its next store call.

So the session's memory is only ever changed on the caller's turn, after the store committed,
and a change runs once: a store call retried on a new connection is recognised by the store
(``store.postgres``: each write carries an action id) and not applied twice.

On a store whose calls do not wait on a server (SQLite) the change runs on the caller's thread,
at once; :attr:`PendingChange.failed` is kept all the same.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_RUNNING = "running"        # the change runs its own code; the caller waits
_IN_STORE = "in store"      # the change waits on a store call; the caller may run
_STORE_DONE = "store done"  # the store call is over; the change waits for the caller's turn
_DONE = "done"              # the change returned or raised


class PendingChange:
    """One change (``change()``, a callable of the application layer) made through
    ``ReviewSession.run_within``: done, or still waiting on a store call.

    Attributes:
        failed: True once a store call of the change raised (the change was not saved, or not
            whole; the change itself may have caught the error and returned a message).
        store_seconds: how long each store call of the change took, seconds, in order.
    """

    def __init__(self, change: Callable[[], Any], *, inline: bool) -> None:
        self._change = change
        self._inline = inline
        self._cond = threading.Condition()
        self._state = _RUNNING
        self._since = 0.0
        self._depth = 0
        self._detached = False
        self._ready: Callable[[], object] | None = None
        self._value: Any = None
        self._error: BaseException | None = None
        self._ident: int | None = None
        self.failed = False
        self.store_seconds: list[float] = []

    # -- the caller's side ------------------------------------------------------------------

    def start(self, patience_s: float, meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> bool:
        """Run the change: on this thread when ``inline``, else on its own, waiting at most
        ``patience_s`` seconds for each of its store calls (``meanwhile`` runs once on this
        thread during the first one, with a function that turns True once it is over).
        Returns :meth:`done`."""
        if self._inline:
            self._ident = threading.get_ident()
            self._run()
            return True
        thread = threading.Thread(target=self._run, name="mtcb-change", daemon=True)
        thread.start()
        return self.resume(patience_s, meanwhile)

    def done(self) -> bool:
        """True once the change returned or raised (:meth:`result` gives what)."""
        return self._state == _DONE

    def result(self) -> Any:
        """What the change returned, once :meth:`done`.

        Raises:
            whatever the change raised. RuntimeError: not done yet.
        """
        if self._state != _DONE:
            raise RuntimeError("the change is not done yet")
        if self._error is not None:
            raise self._error
        return self._value

    def resume(self, patience_s: float, meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> bool:
        """Hand the change its turn when its store call is over and wait (on the calling thread:
        the one that started it) until it is done, or inside a store call for more than
        ``patience_s`` seconds. Returns :meth:`done`; when False, :meth:`on_ready` says when to
        call this again."""
        with self._cond:
            self._detached = False
            while True:
                if self._state == _DONE:
                    return True
                if self._state == _STORE_DONE:
                    self._state = _RUNNING
                    self._cond.notify_all()
                elif self._state == _RUNNING:
                    self._cond.wait()
                elif meanwhile is not None:
                    work, meanwhile = meanwhile, None
                    self._cond.release()
                    try:
                        work(lambda: self._state != _IN_STORE)
                    finally:
                        self._cond.acquire()
                else:
                    left = self._since + patience_s - time.monotonic()
                    if left <= 0:
                        self._detached = True
                        return False
                    self._cond.wait(left)

    def runs_here(self) -> bool:
        """Whether the calling thread is the change's own."""
        return threading.get_ident() == self._ident

    def on_ready(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` once, when the change, left pending by :meth:`resume`, is ready to
        go on (its store call is over) or done: on the change's thread, or at once on this one
        if it already is."""
        with self._cond:
            ready = self._state in (_STORE_DONE, _DONE)
            if not ready:
                self._ready = callback
        if ready:
            callback()

    # -- the change's side ------------------------------------------------------------------

    def _run(self) -> None:
        self._ident = threading.get_ident()
        try:
            self._value = self._change()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by ``result``
            self._error = exc
        self._enter(_DONE)

    def _enter(self, state: str) -> None:
        """Move to ``state``; tell a caller that left the change pending."""
        with self._cond:
            self._state = state
            self._cond.notify_all()
            callback = self._ready if self._detached else None
            if callback is not None:
                self._ready = None
        if callback is not None:
            callback()

    @contextmanager
    def store_call(self) -> Iterator[None]:
        """Around one store call (``Store.call_guard``). On the change's own thread the caller
        may run meanwhile, and the change waits for its turn afterwards; a failure is recorded
        (``failed``). Elsewhere (another thread's read), and inside an outer store call, it
        does nothing."""
        if threading.get_ident() != self._ident or self._depth:
            if threading.get_ident() == self._ident:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
            else:
                yield
            return
        self._depth = 1
        start = time.monotonic()
        if not self._inline:
            with self._cond:
                self._state = _IN_STORE
                self._since = start
                self._cond.notify_all()
        try:
            yield
        except BaseException:
            self.failed = True
            raise
        finally:
            self._depth = 0
            self.store_seconds.append(time.monotonic() - start)
            if not self._inline:
                self._enter(_STORE_DONE)
                with self._cond:
                    while self._state != _RUNNING:
                        self._cond.wait()
