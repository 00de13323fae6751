"""The review screen's analysis of the whole session: every passage verified (the queue's marks),
the near-duplicate clusters and shared-passage groups (the badges, ``d``, ``S``), the set-wide
checks (the problems line), every pair's ``answerable`` support reason (the problems line,
without the stemmer and paraphrase model in the app's process) and the token cache for the
next session.

``app.analysis.AnalysisRunner`` runs it in a worker process and keeps its results in the
workspace (a session opened again reads them and runs nothing); its events arrive here as
Messages, and a finished analysis goes to the review controller (``absorb_analysis``), which
says what to repaint. A change to the pairs (texts, statuses, marks) asks for the analysis
again after ``CHANGE_DELAY_S`` without another change: only what changed is worked out again
(the verdicts of the edited pairs; the links when a text changed; the groups). The progress bar
says how far it is; ``esc`` stops it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.timer import Timer

from mtcb_curate.app.analysis import (Analysis, AnalysisAnswers, AnalysisCancelled, AnalysisEvent, AnalysisFailed,
                                      AnalysisNote, AnalysisProgress, AnalysisReady, AnalysisRunner)
from mtcb_curate.tui.memory import trim_heap
from mtcb_curate.tui.messages import AnalysisMessage

if TYPE_CHECKING:
    from mtcb_curate.app.controller import ReviewController

#: Seconds after mounting before the analysis is asked for (the first screen is drawn first).
ANALYSIS_DELAY_S = 0.3
#: Seconds after the latest change before the analysis is asked for again: a run of decisions
#: starts one run, not one each.
CHANGE_DELAY_S = 1.0
#: What the progress bar calls each stage of the worker (``analysis_worker.STAGES``).
STAGE_WORDS = {"verdicts": "verifying passages", "tokens": "counting tokens", "links": "near-duplicates",
               "groups": "grouping", "answerable": "answerable check"}


class AnalysisWork:
    """Mixin of the review screen (before ``Screen``): the session's analysis and its Messages.
    Uses the screen's ``controller``, ``_apply``, ``_later``, ``_update_progress`` and ``notify``."""

    controller: ReviewController
    _runner: AnalysisRunner | None = None
    _analysis_timer: Timer | None = None
    #: The analysis's state for the progress bar ("" when nothing runs).
    analysis_note: str = ""

    def _expect_analysis(self) -> None:
        """Before the first pair is shown: the analysis will be asked for (the pairs' support
        reasons wait for it)."""
        self.controller.analysis_pending = True

    def _start_passes(self) -> None:
        """Ask for the analysis once the first screen is drawn."""
        self.controller.analysis_pending = True
        self._runner = AnalysisRunner(self.controller.session, self._analysis_event,
                                      answerable_ahead=self.controller.answerable_ahead)
        self._analysis_timer = self._later(ANALYSIS_DELAY_S, self._request_analysis)

    def _analysis_event(self, event: AnalysisEvent) -> None:
        """The runner's callback (its thread): hand the event to the screen's thread."""
        self.post_message(AnalysisMessage(event))

    def _request_analysis(self) -> None:
        self._analysis_timer = None
        if self._runner is None:
            return
        self._runner.request(self.controller.dedup_threshold)
        self._set_analysis_note("analysing…")

    def _find_clusters(self) -> None:
        """Texts or resolutions changed: the analysis again (debounced)."""
        self._schedule_set_checks()

    def _schedule_set_checks(self, delay: float = CHANGE_DELAY_S) -> None:
        """Ask for the analysis ``delay`` seconds after the latest change."""
        if self._analysis_timer is not None:
            self._analysis_timer.stop()
        self._analysis_timer = self._later(delay, self._request_analysis)
        self.controller.analysis_pending = True

    def _still_pending(self) -> bool:
        """Another analysis is asked for (its timer, or a request waiting in the runner)."""
        return self._analysis_timer is not None or (self._runner is not None and self._runner.waiting)

    @property
    def analysis_busy(self) -> bool:
        """An analysis is asked for, running or waiting (tests wait on it)."""
        return self._analysis_timer is not None or (self._runner is not None and self._runner.busy)

    def action_cancel_analysis(self) -> None:
        """Stop the analysis (the marks keep what was known)."""
        if self._runner is not None and self._runner.busy:
            self._runner.cancel()
            self._set_analysis_note("stopping the analysis…")

    def _set_analysis_note(self, note: str) -> None:
        if note != self.analysis_note:
            self.analysis_note = note
            self._update_progress()

    def on_analysis_message(self, message: AnalysisMessage) -> None:
        event = message.event
        if isinstance(event, AnalysisProgress):
            words = STAGE_WORDS.get(event.stage, event.stage)
            count = f" {event.done:,}/{event.total:,}" if event.total > 1 else ""
            self._set_analysis_note(f"analysing: {words}{count}… (esc stops)")
        elif isinstance(event, AnalysisReady):
            self._absorb(event.analysis)
            if event.analysis.answers is not None:  # from the cache: the run ends here
                self._apply(self.controller.analysis_ended(self._still_pending()))
        elif isinstance(event, AnalysisAnswers):
            self._set_analysis_note("")  # the run's end (a run asked for since says so as it goes)
            self._apply(self.controller.absorb_answers(event.answers, self._still_pending()))
        elif isinstance(event, AnalysisNote):
            self.notify(f"Analysis: {event.message}", severity="warning", timeout=5, markup=False)
        elif isinstance(event, AnalysisFailed):
            self._set_analysis_note("")
            self.notify(f"Analysis: {event.message}", severity="error", timeout=15, markup=False)
            self._apply(self.controller.analysis_ended(self._still_pending()))
        elif isinstance(event, AnalysisCancelled):
            self._set_analysis_note("analysis stopped (a change starts it again)")
            self._apply(self.controller.analysis_ended(self._still_pending()))

    def _absorb(self, analysis: Analysis) -> None:
        from mtcb_curate.dataset import tokens

        self._set_analysis_note("")  # a run asked for since says so with its first progress
        self._apply(self.controller.absorb_analysis(analysis))
        # A pair checked before the analysis came may have loaded the tokenizer (about 37 MB):
        # the analysis counted every passage into the token cache, so it is let go.
        if tokens.release_encoding():
            trim_heap()
        self.curate_app.collector.refreeze()  # its results, out of later full collections

    def on_unmount(self) -> None:
        if self._runner is not None:
            self._runner.close()
