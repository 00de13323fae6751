"""The shrink proposal worked out ahead: once a pair has been on screen for a moment
(:data:`AHEAD_S`), a thread worker computes its lexical shrink proposal
(``app.review.propose_shrink``: tens of ms, the rows of a computed answer looked for around the
passage, the whole document when they do not lie inside one chunk), so that ``z`` shows it at
once. The same worker then works out the proposal of the pair after it in the queue (the one
``j`` or a decision shows next), so that a ``z`` pressed soon after arriving there finds it too
(a whole-document search on a filing not chunked yet can take longer than the moment the
curator reads). ``z`` pressed before that waits for the worker (the dialog opens when it is
done): the proposal is never worked out on the key. Kept per pair and texts (a changed passage, question
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
        """Work out pair ``pid``'s proposal, then the next pair's, once it has been on screen for
        :data:`AHEAD_S` (what is already worked out is not again)."""
        if self._shrink_timer is not None:
            self._shrink_timer.stop()
            self._shrink_timer = None
        if pid is None:
            return
        store, nxt = self._shrink_store(), self._shrink_next(pid)
        if self._shrink_key(pid) in store and (nxt is None or self._shrink_key(nxt) in store):
            return
        self._shrink_timer = self.set_timer(AHEAD_S, lambda: self._shrink_start(pid, ahead=True))

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

    def _shrink_next(self, pid: int) -> int | None:
        """The pair after ``pid`` in the queue, or None."""
        ids = self.controller.queue.ids
        row = self.controller.queue.index_of(pid)
        return ids[row + 1] if row is not None and row + 1 < len(ids) else None

    def _shrink_start(self, pid: int, ahead: bool = False) -> None:
        """Work out pair ``pid``'s proposal in the worker unless kept; ``ahead`` (the pair has
        been read for :data:`AHEAD_S`): then the next pair's too."""
        self._shrink_timer = None
        if self.controller.current != pid:
            return
        key = self._shrink_key(pid)
        if self._shrink_running == key:
            return  # the worker is on it already (worked out ahead as the next pair)
        store = self._shrink_store()
        nxt = self._shrink_next(pid)
        next_key = self._shrink_key(nxt) if nxt is not None and ahead else None
        now = key not in store
        if not now and (next_key is None or next_key in store):
            return
        if now:
            self._shrink_running = key

        def run() -> None:
            if now:
                try:
                    outcome = self._shrink_compute(pid)
                except Exception as exc:  # noqa: BLE001 - said when z waits for it; z works it out again
                    if self._shrink_wanted == key:
                        self._shrink_wanted = None
                        self.app.call_from_thread(self.notify, f"No shrink: {exc}", severity="error", timeout=10,
                                                  markup=False)
                    return
                finally:
                    if self._shrink_running == key:
                        self._shrink_running = None
                self._shrink_keep(key, outcome)
            if next_key is not None and next_key not in store and self.controller.current == pid \
                    and self._shrink_running is None:
                self._shrink_running = next_key
                try:
                    self._shrink_keep(next_key, self._shrink_compute(nxt))
                except Exception:  # noqa: BLE001 - worked out again (and said) when it is on screen
                    pass
                finally:
                    if self._shrink_running == next_key:
                        self._shrink_running = None

        self.run_worker(run, thread=True, exclusive=True, group="shrink_ahead", exit_on_error=False)

    def _shrink_keep(self, key: tuple, outcome) -> None:
        """Keep ``outcome`` for ``key`` (the last :data:`KEEP`); open it if ``z`` waits for it.
        Called from the worker's thread."""
        if outcome.proposal is not None:
            from mtcb_curate.tui.screens.shrink import display_rows

            display_rows(outcome.proposal.text)  # the dialog's reading form, ahead too
        store = self._shrink_store()
        store[key] = outcome
        while len(store) > KEEP:
            store.popitem(last=False)
        if self._shrink_wanted == key:
            self.app.call_from_thread(self._shrink_ready, key)

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
