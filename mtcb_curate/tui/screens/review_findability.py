"""The review screen's findability (``F``): what the preview cache already knows is read at
start, ``F`` chunks the corpus with every configured chunker and scores every pair in a worker
(progress on the QA panel's findability line, esc cancels), and a pair edited since is scored
again alone. The results live in the review controller (``find_lines``), which the queue's
marks and the problems read."""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.worker import get_current_worker

from mtcb_curate.app.controller import ReviewController
from mtcb_curate.plaintext import one_line
from mtcb_curate.tui.messages import FindabilityLoaded, FindabilityPairsScored, FindabilityProgress
from mtcb_curate.tui.widgets.qa_panel import findability_text


class FindabilityWork:
    """Mixin of the review screen (before ``Screen``): the findability workers, their Messages
    and the QA panel's findability line. Uses the screen's ``controller``, ``queue``,
    ``_later``, ``_show_current`` and ``_shown_pair``."""

    controller: ReviewController
    #: The line shown while no pair's findability is known.
    _find_note: str | None = "looking for a preview cache…"
    #: ``F``'s run is under way.
    _find_running = False
    #: Pairs being scored alone (``_rescore_findability``).
    _find_pending: frozenset[int] = frozenset()
    #: Pairs to score in the next batch (asked for while a batch was running).
    _find_queued: frozenset[int] = frozenset()

    def _findability_text(self, pid: int, rescore: bool = True) -> Text:
        """The panel's findability lines for ``pid``; ``rescore``: start scoring a pair edited
        since the last run (not for a pair only wrapped ahead)."""
        c = self.controller
        lines = c.current_find_lines(pid)
        retriever = c.findability.settings.retriever if c.findability is not None else "bm25"
        if lines is not None:
            return findability_text(lines, retriever, ks=c.findability.settings.k if c.findability is not None else None)
        if c.find_lines and not self._find_running:
            if c.find_failed_now(pid):
                return findability_text(None, note="could not score this pair · F computes every pair again")
            if rescore:
                self._rescore_findability(pid)  # edited since (e.g. in another screen): score it
            return findability_text(None, note="scoring this pair…")
        return findability_text(None, note=self._find_note)

    @work(thread=True, exclusive=True, group="findability", exit_on_error=False)
    def _load_findability(self) -> None:
        """Every pair's findability from the preview cache (None: nothing cached yet)."""
        worker = get_current_worker()
        try:
            lines = self.controller.findability.load()
        except Exception as exc:  # noqa: BLE001 - the line says it; the review goes on
            lines, error = None, f"could not read the preview cache: {one_line(str(exc), 200)}"
        else:
            error = None
        if not worker.is_cancelled:
            self.post_message(FindabilityLoaded(lines, error))

    def action_findability(self) -> None:
        """Chunk the corpus with every configured chunker, index it and score every pair, in a
        worker (progress on the findability line; esc cancels). Cached: a second run is quick."""
        if self.controller.findability is None or self._find_running:
            return
        self._find_running = True
        self._find_note = "starting… (esc cancels)"
        self._show_current()
        self._compute_findability()

    @work(thread=True, exclusive=True, group="findability", exit_on_error=False)
    def _compute_findability(self) -> None:
        from mtcb_curate.app.findability import Cancelled

        worker = get_current_worker()
        last = [0.0, ""]

        def progress(what: str, done: int, total: int) -> None:
            now = time.monotonic()  # at most 5 redraws a second, and each new step
            if what != last[1] or now - last[0] >= 0.2 or done == total:
                last[:] = [now, what]
                self.post_message(FindabilityProgress(what, done, total))

        try:
            lines = self.controller.findability.compute_all(progress, cancelled=lambda: worker.is_cancelled)
        except Cancelled:
            self.post_message(FindabilityLoaded(None, "cancelled (what was chunked is cached; F resumes)"))
            return
        except Exception as exc:  # noqa: BLE001 - one plain line, the review goes on
            self.post_message(FindabilityLoaded(None, f"failed: {one_line(str(exc), 200)}"))
            return
        self.post_message(FindabilityLoaded(lines))

    def action_cancel_findability(self) -> None:
        """Cancel a running findability run (``F``); with none, stop the session's analysis."""
        if self._find_running:
            self.workers.cancel_group(self, "findability")
            self._find_note = "cancelling…"
            self._show_current()
        else:
            self.action_cancel_analysis()

    def on_findability_progress(self, message: FindabilityProgress) -> None:
        if not self._find_running:
            return
        count = f" {message.done:,}/{message.total:,}" if message.total else ""
        self._find_note = f"{message.what}{count}… (esc cancels)"
        pid = self.queue.current
        if pid is None or self.controller.current_find_lines(pid) is None:
            self._show_current()

    def on_findability_loaded(self, message: FindabilityLoaded) -> None:
        c = self.controller
        self._find_running = False
        if message.lines is not None:
            c.find_lines = message.lines
        elif message.error is not None:
            self._find_note = message.error + " · press F to compute"
        else:
            self._find_note = "press F to compute (chunks the corpus once)"
        if message.error is not None and message.lines is None and c.find_lines:
            self.notify(f"Findability: {message.error}", timeout=5, markup=False)
        if message.lines is not None and c.filters_on_outcomes():
            self._apply(c.apply_filter(c.status_filter, keep=self.queue.current))  # the outcome filters read the findability
        self.queue.refresh()
        self._show_current()

    def _rescore_findability(self, pid: int) -> None:
        """Score pair ``pid`` again for its current texts (after an edit, a repair or a bulk
        change; visited or not), when the findability is known: the pairs asked for meanwhile
        are scored together in one worker (the cache does the rest)."""
        c = self.controller
        if c.findability is None or not c.find_lines or pid in self._find_pending or pid in self._find_queued:
            return
        if c.current_find_lines(pid) is not None or c.find_failed_now(pid):
            return
        if not self._find_queued:
            self.call_later(self._score_queued_findability)
        self._find_queued = self._find_queued | {pid}

    def _score_queued_findability(self) -> None:
        if self._find_pending or not self._find_queued:
            return  # the running batch starts the next one when it is back
        ids, self._find_queued = self._find_queued, frozenset()
        self._find_pending = ids
        self._score_pairs_findability(ids)

    @work(thread=True, exclusive=False, group="findability_pair", exit_on_error=False)
    def _score_pairs_findability(self, ids: frozenset[int]) -> None:
        try:
            lines = self.controller.findability.score_pairs(sorted(ids))
        except Exception:  # noqa: BLE001 - the line keeps saying "scoring"; F runs it all again
            lines = {}
        self.post_message(FindabilityPairsScored(ids, lines))

    def on_findability_pairs_scored(self, message: FindabilityPairsScored) -> None:
        self._find_pending = frozenset()
        c = self.controller
        for pid in sorted(message.ids):
            # not retried for failed texts (the line says so; F computes everything again)
            c.pair_scored(pid, message.lines.get(pid))
            self.queue.refresh_pair(pid)
        if self._shown_pair in message.ids:
            self._show_current()
        self._score_queued_findability()
