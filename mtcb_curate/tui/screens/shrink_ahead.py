"""The shrink proposal worked out ahead: once a pair has been on screen for a moment
(:data:`AHEAD_S`), a thread worker computes its lexical shrink proposal
(``app.review.propose_shrink``: tens of ms, the rows of a computed answer looked for around the
passage), so that ``z`` shows it at once. Kept per pair and texts (a changed passage, question
or answer is computed again); the last :data:`KEEP` are kept.

A mixin of the review screen (:class:`ShrinkAhead`); it expects the screen's ``session``,
``controller`` (its verdicts, current pair, limits and reference size) and ``curate_app``.
"""

from __future__ import annotations

from collections import OrderedDict

#: Seconds a pair is on screen before its proposal is worked out (a curator reads first; keys
#: pressed faster than this start no work).
AHEAD_S = 0.35
#: Proposals kept.
KEEP = 32


class ShrinkAhead:
    """``shrink_ahead(pid)`` after a pair is shown; ``shrink_outcome_ahead(pid)`` for ``z``."""

    _shrink_kept: OrderedDict | None = None
    _shrink_timer = None

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

    def _shrink_start(self, pid: int) -> None:
        self._shrink_timer = None
        if self.controller.current != pid:
            return
        key = self._shrink_key(pid)

        def run() -> None:
            try:
                outcome = self._shrink_compute(pid)
            except Exception:  # noqa: BLE001 - z computes it again and says why
                return
            store = self._shrink_store()
            store[key] = outcome
            while len(store) > KEEP:
                store.popitem(last=False)

        self.run_worker(run, thread=True, exclusive=True, group="shrink_ahead", exit_on_error=False)

    def _shrink_compute(self, pid: int):
        from mtcb_curate.app import review as app_review

        return app_review.propose_shrink(self.session, pid, config=self.curate_app.config_path,
                                         verdicts=self.controller.verdicts, limits=self.controller.limits,
                                         reference_size=self.controller.reference_size)

    def shrink_outcome_ahead(self, pid: int):
        """Pair ``pid``'s proposal for its current texts as worked out ahead, or None."""
        return self._shrink_store().get(self._shrink_key(pid))
