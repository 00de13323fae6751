"""The review screen's start-up passes, in one place: the passage scan (every passage verified
for the queue's marks), the near-duplicate search (the ``≈N similar`` badge and ``d``), the
set-wide checks (duplicates, shared_passage: the problems line) and the token pass (the token
cache for the next session). Each runs in a thread worker and reports back as a Message; the
results go to the review controller (``app.controller.ReviewController``), which the screen then
presents. They run one after another: scan -> near-duplicates -> set checks -> tokens; a change
to a pair's texts runs the near-duplicate search and the set checks again (``Outcome``'s
``find_clusters`` and ``set_checks``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from textual import work
from textual.timer import Timer
from textual.worker import get_current_worker

from mtcb_curate import neardup, threads
from mtcb_curate.app import clusters
from mtcb_curate.app import filters as app_filters
from mtcb_curate.app.controller import ReviewController
from mtcb_curate.checks.pair import set_check_results
from mtcb_curate.tui.memory import trim_heap
from mtcb_curate.tui.messages import ClustersFound, ClusterSearchFailed, PassagesScanned, SetChecksDone
from mtcb_curate.tui.screens.shared_passage import SharedIndexFound

#: Seconds after mounting before every passage is verified for the queue's marks.
SCAN_DELAY_S = 0.5
#: Seconds after the latest change before the set-wide checks (duplicates, shared_passage) run
#: again in a worker for the problems line: a run of decisions starts one search, not one each.
SET_CHECKS_DELAY_S = 1.0
#: Links from which the near-duplicate worker indexes a cluster's links by member ahead
#: (``Cluster.member_rows``, read by the badge at each key); fewer take well under a
#: millisecond when the pair is first shown.
WARM_LINKS = 2_000


class StartUpPasses:
    """Mixin of the review screen (before ``Screen``): the start-up passes' workers and their
    Messages. Uses the screen's ``controller``, ``queue``, ``curate_app``, ``_later``,
    ``_show_current``, ``_update_progress`` and ``notify``."""

    controller: ReviewController
    _set_checks_timer: Timer | None = None
    #: The latest near-duplicate search's links (``app.clusters.search``), which the set checks
    #: group again after a decision instead of searching; None while one runs.
    _search = None
    #: A near-duplicate search is running; the set checks wait for its links when asked then.
    _clusters_searching = False
    _set_checks_waiting = False
    #: The token pass (``_fill_token_cache``) has started: once per session.
    _tokens_filled = False

    def _start_passes(self) -> None:
        """Once the first screen is up and has answered its first keys: the scan holds the GIL."""
        app_filters.prepare(self.controller.session)  # its imports here, not in the scan's worker
        self._later(SCAN_DELAY_S, self._scan_passages)

    @contextmanager
    def _start_up_pass(self) -> Iterator[None]:
        """Around a start-up pass's work (its worker): the app holds it at each key
        (``threads.working``: its loops pace), no full collection while it runs, and its
        results frozen before it lets go, so that no full collection walks them
        (``CollectorPolicy.holding``)."""
        collector = self.curate_app.collector
        with threads.working(), collector.holding():
            yield
            collector.refreeze()

    def _refreeze(self) -> None:
        """Keep the scan's and the search's results out of later full garbage collections."""
        self.curate_app.collector.refreeze()

    # -- the passage scan -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def _scan_passages(self) -> None:
        """Verify every passage (exact and normalized search) to mark the queue."""
        verdicts = self.controller.verdicts
        with self._start_up_pass():
            verdicts.scan()
            app_filters.warm(self.controller.session)  # a first text query reads these instead of building them
        trim_heap()
        if not get_current_worker().is_cancelled:
            self.post_message(PassagesScanned(verdicts.not_exact()))

    def on_passages_scanned(self, message: PassagesScanned) -> None:
        self.controller.not_verbatim = message.bad
        self.queue.refresh()
        self._update_progress()
        self._refreeze()
        self._find_clusters()
        self._schedule_set_checks(0)

    # -- near-duplicates ------------------------------------------------------------------------

    def _find_clusters(self) -> None:
        """Start the near-duplicate search (``_search_clusters``); the set checks wait for it."""
        self._clusters_searching = True
        self._search_clusters()

    @work(thread=True, exclusive=True, group="clusters", exit_on_error=False)
    def _search_clusters(self) -> None:
        """Near-duplicate clusters (rapidfuzz + stored LLM clusters) for the ≈N badge and ``d``,
        and the shared-passage groups for the ``shares its passage`` badge (one search)."""
        worker = get_current_worker()
        self._search = None  # texts changed: the set checks wait for this search
        c = self.controller
        try:
            with self._start_up_pass():
                search = clusters.search(c.session, threshold=c.dedup_threshold, located=c.verdicts.verbatim_spans(),
                                         workers=1)
                found, shared = clusters.groups(c.session, search)
                for cluster in found:  # the badge reads its links by member at each key
                    if cluster.link_count >= WARM_LINKS:
                        cluster.member_rows()
                # in the pass: frozen with its results, no young collection walks them
                shared_index, found_index = neardup.cluster_index(shared), neardup.cluster_index(found)
            trim_heap()
        except Exception as exc:  # noqa: BLE001 - reported, the review goes on
            if not worker.is_cancelled:
                self.post_message(ClusterSearchFailed(exc))
            return
        if not worker.is_cancelled:
            self._search = search
            self.post_message(SharedIndexFound(shared_index))
            self.post_message(ClustersFound(found_index))

    def on_shared_index_found(self, message: SharedIndexFound) -> None:
        self.controller.shared_index = message.index  # shown with the clusters' badge, which follows

    def on_cluster_search_failed(self, message: ClusterSearchFailed) -> None:
        self._clusters_searching = False
        if self._set_checks_waiting:
            self._schedule_set_checks(0)
        self.notify(f"Near-duplicate search failed: {message.error}", severity="warning", markup=False)

    def on_clusters_found(self, message: ClustersFound) -> None:
        self.controller.cluster_index = message.index
        self.controller.clusters_ready = True
        self._clusters_searching = False
        if self._set_checks_waiting:
            self._schedule_set_checks(0)
        self._refreeze()
        self._show_current()  # the badge of the pair on screen
        if not self._set_checks_waiting:
            self._start_token_fill()
        # else after the set checks: one start-up pass at a time, each already competes with
        # the keys for the GIL

    # -- the set-wide checks --------------------------------------------------------------------

    def _schedule_set_checks(self, delay: float = SET_CHECKS_DELAY_S) -> None:
        """Run the set-wide checks again after ``delay`` seconds without another change."""
        if self._set_checks_timer is not None:
            self._set_checks_timer.stop()
        self._set_checks_timer = self._later(delay, self._start_set_checks)

    def _start_set_checks(self) -> None:
        """Start the set checks, unless a near-duplicate search is running: they then wait for
        its links (``on_clusters_found``) instead of searching the whole set a second time."""
        if self._clusters_searching:
            self._set_checks_waiting = True
            return
        self._set_checks_waiting = False
        self._run_set_checks()

    @work(thread=True, exclusive=True, group="set_checks", exit_on_error=False)
    def _run_set_checks(self) -> None:
        """duplicates and shared_passage over every pair not rejected, for the problems line."""
        worker = get_current_worker()
        c = self.controller
        try:
            with self._start_up_pass():
                results = set_check_results(c.session, threshold=c.dedup_threshold, limits=c.limits,
                                            search=self._search)
        except Exception:  # noqa: BLE001 - the problems line goes on without them
            results = None
        trim_heap()
        if not worker.is_cancelled:
            self.post_message(SetChecksDone(results))

    def on_set_checks_done(self, message: SetChecksDone) -> None:
        if not self._clusters_searching:
            self._start_token_fill()
        if message.results is None:  # failed: the problems line goes on without them
            return
        self.controller.set_results = message.results
        self.queue.refresh()
        self._show_current()
        self._refreeze()  # what taking them made, out of the young collections

    # -- the token pass -------------------------------------------------------------------------

    def _start_token_fill(self) -> None:
        """Start the token pass (``_fill_token_cache``) once per session."""
        if not self._tokens_filled:
            self._tokens_filled = True
            self._fill_token_cache()

    @work(thread=True, exclusive=True, group="tokens", exit_on_error=False)
    def _fill_token_cache(self) -> None:
        """The last start-up pass: what a later session would tokenize goes into the token cache
        (``Verdicts.fill_token_cache``), then the tokenizer is let go (about 37 MB), so a
        corpus opened again runs without it until a passage is edited or generated."""
        from mtcb_curate.dataset import tokens

        worker = get_current_worker()
        try:
            with self._start_up_pass():
                self.controller.verdicts.fill_token_cache(lambda: worker.is_cancelled)
        finally:
            if tokens.release_encoding():
                trim_heap()
