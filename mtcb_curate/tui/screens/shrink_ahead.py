"""The shrink proposal worked out ahead: once a pair has been on screen for a moment
(:data:`AHEAD_S`), a thread worker computes its lexical shrink proposal
(``app.review.propose_shrink``: tens of ms, the rows of a computed answer looked for around the
passage, the whole document when they do not lie inside one chunk), so that ``z`` shows it at
once. ``z`` pressed before that waits for the worker (the dialog opens when it is done): the
proposal is never worked out on the key. Kept per pair and texts (a changed passage, question
or answer is computed again); the last :data:`KEEP` are kept.

A mixin of the review screen (:class:`ShrinkAhead`); it expects the screen's ``session``,
``controller`` (its verdicts, current pair, limits and reference size), ``curate_app``,
``_chunks_store`` (``ChunkFitActions``) and ``action_shrink``.
"""

from __future__ import annotations

from collections import OrderedDict

#: Seconds a pair is on screen before its proposal is worked out (a curator reads first; keys
#: pressed faster than this start no work).
AHEAD_S = 0.35
#: Proposals kept.
KEEP = 32


class ShrinkAhead:
    """``shrink_ahead(pid)`` after a pair is shown; ``shrink_outcome_ahead(pid)`` for ``z``;
    ``shrink_when_ready(pid)`` when ``z`` comes before the proposal is worked out."""

    _shrink_kept: OrderedDict | None = None
    _shrink_timer = None
    #: The texts (``_shrink_key``) ``z`` waits for: the dialog opens once they are worked out.
    _shrink_wanted: tuple | None = None
    #: The texts the worker is working on now.
    _shrink_running: tuple | None = None

    def _shrink_key(self, pid: int) -> tuple:
        v = self.session.view(pid)
        return pid, v.question, v.answer, v.passage

    def _shrink_store(self) -> OrderedDict:
        if self._shrink_kept is None:
            self._shrink_kept = OrderedDict()
        return self._shrink_kept

    def shrink_ahead(self, pid: int | None) -> None:
        """Work out pair ``pid``'s proposal once it has been on screen for :data:`AHEAD_S`."""
        if self._shrink_timer is not None:
            self._shrink_timer.stop()
            self._shrink_timer = None
        if pid is None or self._shrink_key(pid) in self._shrink_store():
            return
        self._shrink_timer = self.set_timer(AHEAD_S, lambda: self._shrink_start(pid))

    def shrink_when_ready(self, pid: int) -> None:
        """``z`` before pair ``pid``'s proposal is worked out: work it out now in the worker (or
        let the running one finish) and open the dialog then (``action_shrink`` again), unless
        the curator has moved on. Nothing is worked out on the key."""
        key = self._shrink_key(pid)
        self._shrink_wanted = key
        if self._shrink_running != key:
            if self._shrink_timer is not None:
                self._shrink_timer.stop()
                self._shrink_timer = None
            self._shrink_start(pid)

    def _shrink_start(self, pid: int) -> None:
        self._shrink_timer = None
        if self.controller.current != pid:
            return
        key = self._shrink_key(pid)
        self._shrink_running = key

        def run() -> None:
            try:
                outcome = self._shrink_compute(pid)
                if outcome.proposal is not None:
                    from mtcb_curate.tui.screens.shrink import display_rows

                    display_rows(outcome.proposal.text)  # the dialog's reading form, ahead too
            except Exception as exc:  # noqa: BLE001 - said when z waits for it; z works it out again
                if self._shrink_wanted == key:
                    self._shrink_wanted = None
                    self.app.call_from_thread(self.notify, f"No shrink: {exc}", severity="error", timeout=10,
                                              markup=False)
                return
            finally:
                if self._shrink_running == key:
                    self._shrink_running = None
            store = self._shrink_store()
            store[key] = outcome
            while len(store) > KEEP:
                store.popitem(last=False)
            if self._shrink_wanted == key:
                self.app.call_from_thread(self._shrink_ready, key)

        self.run_worker(run, thread=True, exclusive=True, group="shrink_ahead", exit_on_error=False)

    def _shrink_ready(self, key: tuple) -> None:
        """The proposal ``z`` waited for is worked out: open it, if the pair is still on screen
        with the same texts and no dialog opened meanwhile."""
        if self._shrink_wanted != key:
            return
        self._shrink_wanted = None
        pid = key[0]
        if self.controller.current == pid and self.app.screen is self and self._shrink_key(pid) == key:
            self.action_shrink()

    def _shrink_compute(self, pid: int):
        from mtcb_curate.app import review as app_review

        return app_review.propose_shrink(self.session, pid, config=self.curate_app.config_path,
                                         verdicts=self.controller.verdicts, limits=self.controller.limits,
                                         reference_size=self.controller.reference_size,
                                         chunks=self._chunks_store())

    def shrink_outcome_ahead(self, pid: int):
        """Pair ``pid``'s proposal for its current texts as worked out ahead, or None."""
        return self._shrink_store().get(self._shrink_key(pid))
