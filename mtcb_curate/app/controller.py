"""The review screen's state and what follows each key, without Textual.

``ReviewController`` holds what the review screen shows (the queue's pair ids and cursor, the
view, each pair's problems before acceptance, the latest set-wide and near-duplicate results)
and carries out every key that changes or moves something: a decision, an undo, an edit, a
repair, a note, a bulk action, a filter, a move. Every change goes through the application
layer (``app.review``, ``app.bulk``, ``app.hand``) and so through ``ReviewSession``; none
touches the store. Each call returns an :class:`Outcome`: the pair shown next, the queue rows
to repaint, the lines to tell the curator, and which background work to start again. The
screen (``tui.screens.review``) only presents an ``Outcome`` and forwards keys; the tests
drive the controller directly (``tests/test_controller.py``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from mtcb_curate import neardup
from mtcb_curate.app import bulk as app_bulk
from mtcb_curate.app import filters as app_filters
from mtcb_curate.app import review as app_review
from mtcb_curate.app.analysis import ANSWERABLE_AHEAD
from mtcb_curate.app.verdicts import Verdicts
from mtcb_curate.checks import Limits
from mtcb_curate.checks.base import without_pairs
from mtcb_curate.checks.pair import NOT_KNOWN, WORK_OUT, PairProblem, failing, pair_problems
from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import CurateError
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.verify.verdict import Verdict

Severity = Literal["information", "warning", "error"]

#: The queue filter cycle of the ``v`` key: all pairs, then one status at a time.
FILTERS: tuple[Status | None, ...] = (None, Status.UNDECIDED, Status.ACCEPTED, Status.REJECTED,
                                      Status.SKIPPED, Status.FLAGGED)

READ_ONLY = "The workspace is open read-only."


@dataclass(frozen=True)
class Notice:
    """One line to tell the curator: ``severity`` as Textual's notifications name it,
    ``timeout`` in seconds (None: the app's default). Always plain text, never markup."""

    text: str
    severity: Severity = "information"
    timeout: float | None = None


@dataclass
class Outcome:
    """What follows a key, for the screen to present (nothing here is drawn yet).

    Attributes:
        current: the pair under the queue's cursor afterwards (None: the view is empty).
        notices: lines to tell the curator, in order.
        rows: pair ids whose queue rows changed (their marks or status).
        moved_from: the queue row the cursor left (None: it did not move).
        rebuilt: the queue's ids changed (a new view, or a row left it): every row is drawn again.
        show: the current pair is shown again (panel, source, bars).
        deferred: a decision moved on: the current pair is shown once the keys waiting are
            handled (the screen's catch-up), not for every pair passed over.
        progress: the progress bar is drawn again. source_bar: the top bar too (pairs were added).
        rescore: pairs whose texts changed: their findability is scored again (when known).
        find_clusters: texts or resolutions changed: the near-duplicates are searched again.
        set_checks: the set-wide checks (duplicates, shared_passage) run again, debounced.

    A front end that must not wait on a server makes each change through
    ``app.review.within`` (the call returning this ``Outcome`` runs there as a whole).
    """

    current: int | None = None
    notices: list[Notice] = field(default_factory=list)
    rows: set[int] = field(default_factory=set)
    moved_from: int | None = None
    rebuilt: bool = False
    show: bool = False
    deferred: bool = False
    progress: bool = False
    source_bar: bool = False
    rescore: list[int] = field(default_factory=list)
    find_clusters: bool = False
    set_checks: bool = False

    def say(self, text: str, severity: Severity = "information", timeout: float | None = None) -> Outcome:
        """Add a notice; returns self."""
        self.notices.append(Notice(text, severity, timeout))
        return self


class Queue:
    """The queue's pair ids (ascending) and its cursor (a row index), without any drawing.

    The review screen's ``PairList`` draws it; the controller moves it.
    """

    def __init__(self, ids: list[int] | None = None) -> None:
        self.ids: list[int] = [] if ids is None else ids
        self.cursor = 0

    @property
    def current(self) -> int | None:
        """The pair id under the cursor, or None when the queue is empty."""
        return self.ids[self.cursor] if self.ids else None

    def index_of(self, pair_id: int) -> int | None:
        """The row of ``pair_id``, or None when it is not in the queue (a binary search: ids ascend)."""
        i = bisect_left(self.ids, pair_id)
        return i if i < len(self.ids) and self.ids[i] == pair_id else None

    def set_ids(self, ids: list[int], keep: int | None = None) -> None:
        """Hold ``ids``; the cursor goes to pair ``keep`` when held, else stays on its row
        (clamped to the last)."""
        self.ids = ids
        index = None if keep is None else self.index_of(keep)
        self.cursor = index if index is not None else min(self.cursor, max(0, len(ids) - 1))

    def remove(self, pair_id: int) -> bool:
        """Drop ``pair_id``'s row; the cursor stays on the row that followed it, or the new last
        row. False when it was not held. One list deletion, not a rebuild."""
        i = self.index_of(pair_id)
        if i is None:
            return False
        del self.ids[i]
        if self.cursor > i:
            self.cursor -= 1
        self.cursor = min(self.cursor, max(0, len(self.ids) - 1))
        return True

    def move_to_row(self, row: int) -> int:
        """Put the cursor on ``row`` (clamped); returns the row it left."""
        old = self.cursor
        if self.ids:
            self.cursor = max(0, min(len(self.ids) - 1, row))
        return old


class ReviewController:
    """What the review screen shows and does, for one ``ReviewSession``.

    Args:
        session: the open session; every change goes through ``app.review`` and its methods.

    Attributes:
        session, verdicts: the session and its verdict cache (``app.verdicts.Verdicts``).
        queue: the queue's ids and cursor (:class:`Queue`).
        status_filter: the ``v`` cycle's status (None: all); view_filter: the filter bar's
            criteria (``app.filters.Filter``); the status replaces its statuses when set.
        limits: the checklist's limits (``checks.Limits``); reference_size: ``[preview]
            reference_size`` (characters); confirm_failing_accept: ``[review]``'s setting.
        dedup_threshold: the near-duplicate threshold (0-100, rapidfuzz's scale).
        set_results: the set-wide checks' latest results (``checks.pair.set_check_results``).
        cluster_index, shared_index: pid -> its near-duplicate cluster / shared-passage group.
        clusters_ready: the near-duplicate search has answered at least once.
        not_verbatim: pair ids whose passage is not found verbatim (the progress bar's count).
        findability: the per-pair findability cache (``app.findability.Findability``) or None;
            find_lines: pid -> its ``PairLines``; find_failed: (pid, question, passage) that
            could not be scored.
    """

    def __init__(self, session: ReviewSession) -> None:
        self.session = session
        self.verdicts = Verdicts(session)
        self.queue = Queue()
        self.status_filter: Status | None = None
        self.view_filter = app_filters.Filter()
        self.limits = Limits.resolve(session.dataset.profile, {})
        self.confirm_failing_accept = True
        self.reference_size: int | None = None
        self.dedup_threshold = neardup.DEFAULT_THRESHOLD
        self.set_results: dict = {}
        self.cluster_index: dict[int, neardup.Cluster] = {}
        self.shared_index: dict[int, neardup.Cluster] = {}
        self.clusters_ready = False
        self.not_verbatim: set[int] = set()
        self.findability = None
        self.find_lines: dict = {}
        self.find_failed: set[tuple[int, str, str]] = set()
        self.last_query = ""
        #: pid -> (what the evaluation read, its problems, whether one fails): the queue's ▲ marks.
        self._fails: dict[int, tuple[tuple, list[PairProblem], bool]] = {}
        #: Every pair's ``answerable`` support reason from the latest analysis
        #: (``analysis_store.AnswerableTable``), or None.
        self.answers = None
        #: ``answerable_key`` of a pair's texts -> its support reason, from every analysis taken
        #: (an undo finds the reason of the texts it brings back at once).
        self._answers_by_key: dict[str, str | None] = {}
        #: An analysis is asked for or running (the front end says so): a pair whose support
        #: reason it lacks waits for it instead of loading the stemmer and the paraphrase model
        #: here (``problems``).
        self.analysis_pending = False
        #: ``[review] answerable_ahead``: the pairs whose support reasons the analysis works out
        #: ahead (``app.analysis.AnalysisRunner``).
        self.answerable_ahead = ANSWERABLE_AHEAD

    # -- settings -------------------------------------------------------------------------------

    def configure(self, config: Path | None) -> Outcome:
        """Read the checklist's limits, ``[review] confirm_failing_accept`` and
        ``answerable_ahead`` and the ``[preview]`` settings (findability) from the config file;
        a bad file says so and the defaults apply."""
        from mtcb_curate.app.findability import Findability
        from mtcb_curate.app.gate import resolve_limits
        from mtcb_curate.config import answerable_ahead, confirm_failing_accept
        from mtcb_curate.preview.chunkers import DEFAULT_SPECS, parse_spec
        from mtcb_curate.preview.settings import PreviewSettings

        out = Outcome()
        try:
            self.limits = resolve_limits(self.session, config)
            self.confirm_failing_accept = confirm_failing_accept(config)
            self.answerable_ahead = answerable_ahead(config, ANSWERABLE_AHEAD)
        except (CurateError, ValueError) as exc:
            out.say(f"Config: {exc}; the defaults apply.", "warning", 10)
        try:
            settings = PreviewSettings.resolve(config)
        except (CurateError, ValueError, OSError) as exc:
            out.say(f"Config: {exc}; the default [preview] settings apply.", "warning", 10)
            settings = PreviewSettings(tuple(parse_spec(x) for x in DEFAULT_SPECS))
        self.findability = Findability(self.session, settings, getattr(self.session.workspace, "path", None))
        self.reference_size = settings.reference_size
        return out

    @property
    def read_only(self) -> bool:
        return self.session.read_only

    @property
    def current(self) -> int | None:
        """The pair under the queue's cursor."""
        return self.queue.current

    # -- problems before acceptance ---------------------------------------------------------------

    def problems(self, pid: int) -> list[PairProblem]:
        """The checks pair ``pid`` would fail or warn if accepted (``checks.pair``): the lexical
        ones now, the passage's from its cached verdict, the set-wide ones from the latest
        worker run. Cached per texts, verdict, set-wide results and findability (the queue's
        marks, the panel and an accept all ask for the same pair)."""
        sig = self._problems_signature(pid)
        hit = self._fails.get(pid)
        if hit is None or hit[0] != sig:
            cached = self.verdicts.cached(pid)
            lines = self.current_find_lines(pid)
            found = pair_problems(self.session, pid, self.limits, result=cached, set_results=self.set_results,
                                  placements=lines.placements() if lines is not None else None,
                                  reference_size=self.reference_size, support_reason=sig[-1])
            hit = (sig, found, bool(failing(found)))
            self._fails[pid] = hit
        return list(hit[1])

    def _problems_signature(self, pid: int) -> tuple:
        """What ``problems(pid)`` depends on: its texts, verdict, set-wide results, findability,
        the checklist's limits, the reference chunk size and its ``answerable`` support reason."""
        v = self.session.view(pid)
        return (v.question, v.answer, v.passage, id(self.verdicts.cached(pid)), id(self.set_results),
                id(self.find_lines.get(pid)), self.limits, self.reference_size, self._support_reason(pid))

    def _support_reason(self, pid: int) -> object:
        """Pair ``pid``'s ``answerable`` support reason for ``pair_problems``: an analysis's
        for its current texts (the latest's, or an earlier one's for texts an undo brought
        back); else ``NOT_KNOWN`` while an analysis is pending (it works them
        out), else ``WORK_OUT`` (here, loading the stemmer and the paraphrase model once)."""
        if self._answers_by_key:
            from mtcb_curate.checks.cache import answerable_key

            v = self.session.view(pid)
            key = answerable_key(v.question, v.answer, v.passage)
            if key in self._answers_by_key:
                return self._answers_by_key[key]
        return NOT_KNOWN if self.analysis_pending else WORK_OUT

    def _take_answers(self, answers) -> None:
        self.answers = answers
        self._answers_by_key.update(answers.by_key())
        self._answers_by_key.pop("", None)  # the pairs it left out

    def problems_cached(self, pid: int) -> bool:
        """Whether ``problems(pid)`` would be read from its cache."""
        hit = self._fails.get(pid)
        return hit is not None and hit[0] == self._problems_signature(pid)

    def forget_problems(self) -> None:
        """Drop every cached evaluation (they are worked out again when asked)."""
        self._fails.clear()

    def pair_fails(self, pid: int) -> bool:
        """Whether ``pid`` would fail a check if accepted (``problems``, cached)."""
        self.problems(pid)
        return self._fails[pid][2]

    def failing_checks(self, pid: int) -> list[str]:
        """The ids of the checks ``pid`` would fail if accepted, each once, in order."""
        return list(dict.fromkeys(p.check_id for p in failing(self.problems(pid))))

    def forget_duplicates(self, ids) -> None:
        """Drop the ``duplicates`` problems of ``ids`` from the latest set-wide results (a new
        dict: the queue's marks are cached per results), so accepting one does not ask about
        a cluster just settled while the worker has not run again."""
        old = self.set_results.get("duplicates")
        if old is None:
            return
        gone = set(ids)
        self.set_results = {**self.set_results, "duplicates": replace(
            old, pairs=[i for i in old.pairs if i not in gone],
            reasons=without_pairs(old.reasons, gone), failing=old.failing - gone)}

    def recheck(self, pid: int) -> None:
        """Re-verify ``pid``'s current passage (after an edit, a repair or an undo) for the
        count of passages not verbatim."""
        if pid >= len(self.session):
            self.not_verbatim.discard(pid)
            return
        r = self.verdicts.quick_inline(pid)
        if r is None:
            return  # a very large document: the worker's result rechecks it
        if r.verdict == Verdict.EXACT:
            self.not_verbatim.discard(pid)
        else:
            self.not_verbatim.add(pid)

    # -- findability --------------------------------------------------------------------------------

    def current_find_lines(self, pid: int):
        """Pair ``pid``'s findability for its CURRENT texts (``PairLines``), or None."""
        lines = self.find_lines.get(pid)
        if lines is None:
            return None
        v = self.session.view(pid)
        return lines if (lines.question, lines.passage) == (v.question, v.passage) else None

    def find_failed_now(self, pid: int) -> bool:
        """Whether scoring ``pid``'s current texts failed (not retried until ``F``)."""
        v = self.session.view(pid)
        return (pid, v.question, v.passage) in self.find_failed

    def pair_scored(self, pid: int, lines) -> None:
        """One pair's findability came back (``lines`` None: it failed for these texts)."""
        if lines is not None:
            self.find_lines = {**self.find_lines, pid: lines}
        else:
            v = self.session.view(pid)
            self.find_failed.add((pid, v.question, v.passage))

    # -- clusters -------------------------------------------------------------------------------

    def clusters_shown(self) -> list[list[int]]:
        """Every near-duplicate cluster found, once each, as lists of pair ids."""
        seen, out = set(), []
        for c in self.cluster_index.values():
            if c.ids not in seen:
                seen.add(c.ids)
                out.append(list(c.ids))
        return out

    # -- the view -------------------------------------------------------------------------------

    def combined_filter(self) -> app_filters.Filter:
        """The view: the filter bar's criteria, with the v cycle's status when one is set."""
        f = self.view_filter
        return f if self.status_filter is None else replace(f, statuses=frozenset({self.status_filter}))

    def _verdict_of(self, pid: int) -> str | None:
        v = self.verdicts.verdict(pid)
        return None if v is None else str(v)

    def outcomes_of(self, pid: int) -> frozenset[str] | None:
        """Pair ``pid``'s outcome flags across the configured chunkers (``is:discriminating``
        ...), from its findability for its current texts; None until every chunker scored it."""
        from mtcb_curate.preview.separation import pair_flags

        lines = self.current_find_lines(pid)
        if lines is None or self.findability is None or any(f is None for f in lines.by_spec.values()):
            return None
        return pair_flags([f.hit_rank for f in lines.by_spec.values()], self.findability.settings.k)

    def filters_on_outcomes(self) -> bool:
        """Whether the view filters on the chunkers' outcomes (``is:discriminating``,
        ``is:found-by-all``, ``is:found-by-none``), which read the findability."""
        f = self.view_filter
        return (f.discriminating, f.found_by_all, f.found_by_none) != (None, None, None)

    def view_ids(self, ids=None) -> list[int]:
        """The ids of the current view (``ids``: only among these)."""
        if self.view_filter.empty and ids is None:
            return self.session.ids(self.status_filter)
        try:
            return app_filters.apply(self.session, self.combined_filter(), verdict_of=self._verdict_of,
                                     problems=self.problems, ids=ids, outcomes_of=self.outcomes_of)
        except app_filters.FilterError:  # parse() checked it; a pattern never turns bad later
            return []

    def in_view(self, pid: int) -> bool:
        """Whether pair ``pid`` passes the current view."""
        if self.view_filter.empty:
            return self.status_filter is None or self.session.status(pid) == self.status_filter
        return bool(self.view_ids([pid]))

    @property
    def whole(self) -> bool:
        """The view is every pair (no status, no criteria)."""
        return self.view_filter.empty and self.status_filter is None

    def view_scope(self) -> str:
        """The view in words (``all pairs`` or the filter's description)."""
        return "all pairs" if self.whole else (self.combined_filter().describe() or "all pairs")

    def view_doc_keys(self) -> list[str]:
        """The document keys of the view's pairs, each once, in queue order."""
        return list(dict.fromkeys(self.session.pairs[i].doc_key for i in self.view_ids()))

    def apply_filter(self, status: Status | None, keep: int | None, out: Outcome | None = None) -> Outcome:
        """Show the view with ``status`` (the v cycle's) and the filter bar's criteria; the cursor
        stays on pair ``keep`` when the view holds it."""
        out = Outcome() if out is None else out
        self.status_filter = status
        self.queue.set_ids(self.view_ids(), keep=keep)
        out.rebuilt = out.show = out.progress = True
        return self._done(out)

    def cycle_filter(self) -> Outcome:
        """The next view of the ``v`` cycle: all pairs, then one status at a time."""
        nxt = FILTERS[(FILTERS.index(self.status_filter) + 1) % len(FILTERS)]
        return self.apply_filter(nxt, keep=self.queue.current)

    def show_view(self, status: Status | None) -> Outcome:
        """All pairs (None) or only those of ``status`` (the command palette's views)."""
        return self.apply_filter(status, keep=self.queue.current)

    def set_view(self, f: app_filters.Filter) -> Outcome:
        """Show the pairs passing ``f`` (its statuses replace the v cycle's); the cursor stays on
        its pair when the new view holds it."""
        self.view_filter = replace(f, statuses=frozenset()) if len(f.statuses) <= 1 else f
        status = next(iter(f.statuses)) if len(f.statuses) == 1 else None
        out = self.apply_filter(status, keep=self.queue.current)
        if not self.queue.ids:
            needs_f = self.filters_on_outcomes() and not self.find_lines
            out.say("No pair passes this filter (V changes it; an empty line clears it)."
                    + (" is:discriminating and is:found-by-… need the findability: press F." if needs_f else ""),
                    timeout=4)
        elif not f.empty:  # the queue and its title are hidden in the narrow layout
            out.say(f"view: {len(self.queue.ids):,} of {len(self.session):,} pairs", timeout=3)
        return out

    # -- moving ---------------------------------------------------------------------------------

    def _done(self, out: Outcome) -> Outcome:
        out.current = self.queue.current
        return out

    def _move(self, row: int, out: Outcome) -> None:
        old = self.queue.move_to_row(row)
        if out.moved_from is None:
            out.moved_from = old

    def move_by(self, delta: int) -> Outcome:
        """Move the cursor ``delta`` rows (clamped) and show that pair."""
        out = Outcome(show=True)
        if self.queue.ids:
            self._move(self.queue.cursor + delta, out)
        return self._done(out)

    def move_to(self, pid: int) -> Outcome:
        """Show pair ``pid``; when the view does not hold it, the view switches to all pairs."""
        out = Outcome(show=True)
        row = self.queue.index_of(pid)
        if row is None:
            return self.apply_filter(None, keep=pid, out=out)
        self._move(row, out)
        return self._done(out)

    def next_undecided(self) -> Outcome:
        """Go to the next undecided pair (switching the view to show it if needed); in a team's
        work split, the next pair handed to this curator (``app.team.next_pair``)."""
        from mtcb_curate.app import team

        current = self.queue.current
        try:
            pid = team.next_pair(self.session, -1 if current is None else current)
        except CurateError as exc:
            return self._done(Outcome().say(str(exc), "error", 8))
        if pid is None:
            return self._done(Outcome().say(
                "Every pair has a decision." if not team.is_team(self.session) else
                "Nothing left to hand you: every pair is decided or held by another curator.", timeout=3))
        return self.move_to(pid)

    def search(self, query: str) -> Outcome:
        """Show the next pair whose texts, document key or id contain ``query`` (empty: the
        last query again)."""
        query = query or self.last_query
        self.last_query = query
        current = self.queue.current
        pid = self.session.search(query, -1 if current is None else current)
        if pid is None:
            return self._done(Outcome().say(f"No pair matches {query!r}.", "warning", 3))
        return self.move_to(pid)

    def goto(self, pid: int | None, *, refresh: bool = False) -> Outcome:
        """Show pair ``pid``, switching the view to all when the current view does not hold it.

        ``refresh``: statuses changed or pairs were added elsewhere (a dialog), so the queue is
        rebuilt first. None or an unknown id only refreshes.
        """
        valid = pid is not None and 0 <= pid < len(self.session)
        if refresh:
            return self.after_change(pid if valid else None, rebuild_queue=True)
        if not valid:
            return self._done(Outcome())
        row = self.queue.index_of(pid)
        if row is None:
            status = self.status_filter
            keep_status = status is None or self.session.status(pid) == status
            return self.apply_filter(status if keep_status else None, keep=pid)
        out = Outcome(show=True)
        self._move(row, out)
        return self._done(out)

    def clicked(self, pid: int) -> Outcome:
        """The curator clicked pair ``pid``'s row."""
        return self.move_to(pid) if self.queue.index_of(pid) is not None else self._done(Outcome())

    # -- what follows a change -------------------------------------------------------------------

    def after_change(self, pid: int | None, *, rebuild_queue: bool = False, advance: bool = False,
                     clusters: bool = False, out: Outcome | None = None) -> Outcome:
        """The one refresh after anything changed pair ``pid`` (a decision, an undo, an edit, a
        repair, a dialog's keep-one or added pairs).

        ``pid``'s passage is verified again and its findability scored again (not after a
        decision: its texts did not change); ``clusters``: its question or passage changed, so
        the near-duplicate clusters are searched again. ``advance`` (a decision): the cursor
        goes to the next row, or the row leaves a view it no longer passes. ``rebuild_queue``:
        pairs were added or removed or statuses changed elsewhere: the queue is rebuilt from
        the session, with the source bar, and ``pid`` is shown (the view switches to all when
        it does not hold it; an unknown ``pid`` or None keeps the cursor where it is).
        """
        out = Outcome() if out is None else out
        session, queue = self.session, self.queue
        if pid is not None and pid >= 0 and not advance:
            self.recheck(pid)
            if pid < len(session):
                out.rescore.append(pid)
        if clusters:
            out.find_clusters = True
        if clusters or rebuild_queue or (advance and pid is not None and session.status(pid) == Status.REJECTED):
            # the set of pairs or their texts changed: grouped again from the latest search's
            # links when its texts are still the current ones, else searched
            out.set_checks = True
        if rebuild_queue:
            valid = pid is not None and 0 <= pid < len(session)
            out.source_bar = True
            keep = pid if valid or queue.current is None else queue.current
            holds = not valid or self.status_filter is None or session.status(keep) == self.status_filter
            self.apply_filter(self.status_filter if holds else None, keep=keep, out=out)
            if valid and queue.current != pid and not self.view_filter.empty and not self.in_view(pid):
                out.say(f"#{pid} is not in this view (V changes the filter).", timeout=3)
            return self._done(out)
        if pid is None:
            return self._done(out)
        if advance and not self.in_view(pid):
            queue.remove(pid)
            out.rebuilt = True
        else:
            out.rows.add(pid)
            if advance:
                if queue.cursor + 1 < len(queue.ids):
                    self._move(queue.cursor + 1, out)
                else:
                    out.say("End of the queue (n: next undecided pair).", timeout=3)
        if advance:
            out.deferred = True
        else:
            out.show = out.progress = True
        return self._done(out)

    # -- decisions ------------------------------------------------------------------------------

    def accept_check(self) -> list[str]:
        """The checks the current pair would fail if accepted, when an accept must ask first
        (``[review] confirm_failing_accept``); empty: accept at once."""
        pid = self.queue.current
        if pid is None or not self.confirm_failing_accept or self.session.read_only:
            return []
        return self.failing_checks(pid)

    def decide(self, status: Status, reason: str | None = None, *,
               meanwhile: Callable[[Callable[[], bool]], object] | None = None) -> Outcome:
        """Decide the current pair (``app.review.decide``) and move on to the next row (or the
        row leaves a view it no longer passes). ``meanwhile``: work for the caller's thread while
        the commit waits on a server (``ReviewSession.decide``)."""
        pid = self.queue.current
        if pid is None:
            return self._done(Outcome())
        if self.session.read_only:
            return self._done(Outcome().say("The workspace is open read-only: nothing can be decided.", "warning"))
        try:
            app_review.decide(self.session, pid, status, reason, meanwhile=meanwhile)
        except CurateError as exc:
            return self._done(Outcome().say(f"Not saved: {exc}", "error", 10))
        return self.after_change(pid, advance=True)

    def undo(self) -> Outcome:
        """Undo the latest decision or edit (``app.review.undo``) and show its pair."""
        if self.session.read_only:
            return self._done(Outcome().say(READ_ONLY, "warning"))
        try:
            pid = app_review.undo(self.session)
        except CurateError as exc:
            return self._done(Outcome().say(f"Undo failed: {exc}", "error", 10))
        if pid is None:
            return self._done(Outcome().say("Nothing to undo.", timeout=2))
        # Rebuilt even in the "all" view: an undone added pair leaves the queue; an undone edit
        # may move the pair into or out of a near-duplicate cluster.
        return self.after_change(pid, rebuild_queue=True, clusters=True)

    def writable_pair(self) -> tuple[int | None, Outcome]:
        """The current pair when it may be changed, else None and why (read-only)."""
        pid = self.queue.current
        if pid is None:
            return None, self._done(Outcome())
        if self.session.read_only:
            return None, self._done(Outcome().say(READ_ONLY, "warning"))
        return pid, self._done(Outcome())

    def writable(self) -> Outcome | None:
        """None when the workspace may be written, else the outcome saying it is read-only."""
        return self._done(Outcome().say(READ_ONLY, "warning")) if self.session.read_only else None

    # -- edits and repairs ----------------------------------------------------------------------

    def save_edit(self, pid: int, changes: dict[str, str], via: str | None = None) -> app_review.Change:
        """Save an edit dialog's changes (``app.review.edit``); raises as that does (the dialog
        stays open and says why). Follow it with :meth:`edited`."""
        return app_review.edit(self.session, pid, changes, via=via)

    def edited(self, pid: int) -> Outcome:
        """After an edit of ``pid``'s texts: verified again; an edited question or passage may
        join or leave a cluster."""
        return self.after_change(pid, clusters=True)

    def _repaired(self, change: app_review.Change, via: str) -> Outcome:
        if not change.changed:
            return self._done(Outcome().say("The passage is already that text.", timeout=2))
        out = self.after_change(change.pair_id, clusters=True)
        return out.say(f"{via}: the passage is now {(change.verdict or '').upper()} (u undoes).", timeout=3)

    def _repair(self, do: Callable[[], app_review.Change], via: str) -> Outcome:
        try:
            change = do()
        except app_review.NothingToDo as exc:
            return self._done(Outcome().say(str(exc), timeout=2))
        except app_review.NothingLocated:
            raise
        except app_review.NotApplicable as exc:
            return self._done(Outcome().say(str(exc), "warning"))
        except (CurateError, ValueError) as exc:
            return self._done(Outcome().say(f"Repair not saved: {exc}", "error", 10))
        return self._repaired(change, via)

    def snap(self, pid: int) -> Outcome:
        """Replace the passage with the located source text (``app.review.snap``)."""
        try:
            return self._repair(lambda: app_review.snap(self.session, self.verdicts, pid), "snap")
        except app_review.NothingLocated as exc:
            return self._done(Outcome().say(f"{str(exc).rstrip('.')}: m selects a span of the source.", "warning"))

    def trim(self, pid: int) -> Outcome:
        """Strip whitespace and punctuation from both ends of the passage (``app.review.trim``)."""
        return self._repair(lambda: app_review.trim(self.session, self.verdicts, pid), "trim")

    def select(self, pid: int, start: int, end: int) -> Outcome:
        """Make characters ``[start, end)`` of the pair's document its passage (``app.review.select``)."""
        return self._repair(lambda: app_review.select(self.session, self.verdicts, pid, start, end), "select")

    def select_start(self, pid: int) -> tuple[int, int] | None:
        """Where a span selection starts without a mouse selection: the located passage, or
        None (the screen starts at the source's top line)."""
        r = self.verdicts.quick(pid)
        return (r.start, r.end) if r.start is not None and r.end is not None else None

    def set_note(self, pid: int, text: str) -> Outcome:
        """Write, change or remove (blank) pair ``pid``'s note (``app.review.set_note``; undoable)."""
        try:
            changed = app_review.set_note(self.session, pid, text)
        except (CurateError, IndexError) as exc:
            return self._done(Outcome().say(f"Not saved: {exc}", "error", 10))
        if not changed:
            return self._done(Outcome())
        out = self.after_change(pid)
        return out.say(f"Note on #{pid} {'saved' if text.strip() else 'removed'} (u undoes).", timeout=3)

    def add_hand_pair(self, doc_key: str, start: int, end: int, question: str, answer: str) -> Outcome:
        """Add the pair the curator wrote (``app.hand.add_hand_pair``) and show it."""
        from mtcb_curate.app.hand import add_hand_pair

        try:
            new = add_hand_pair(self.session, doc_key, start, end, question, answer)
        except (CurateError, ValueError) as exc:
            return self._done(Outcome().say(f"Not added: {exc}", "error", 10))
        out = Outcome().say(f"Added #{new} by hand (undecided; u undoes).", timeout=3)
        return self.after_change(new, rebuild_queue=True, clusters=True, out=out)

    def propose_shrink(self, pid: int, config: Path | None, *, outcome=None) -> tuple[object | None, Outcome]:
        """The lexical shrink proposal for ``pid`` (``app.review.propose_shrink``; ``outcome``: one
        already worked out for its current texts), or None and why."""
        try:
            if outcome is None:
                outcome = app_review.propose_shrink(self.session, pid, config=config, verdicts=self.verdicts,
                                                    limits=self.limits, reference_size=self.reference_size)
        except (CurateError, ValueError) as exc:
            return None, self._done(Outcome().say(f"No shrink: {exc}", "error", 10))
        if outcome.proposal is None:
            return None, self._done(Outcome().say(f"No shrink: {outcome.reason}.", "warning", 6))
        return outcome.proposal, self._done(Outcome())

    def apply_shrink(self, pid: int, text: str) -> Outcome:
        """Make ``text``, a part of the current passage, the passage (``app.review.apply_shrink``)."""
        try:
            change = app_review.apply_shrink(self.session, pid, text, verdicts=self.verdicts)
        except app_review.NotApplicable as exc:
            return self._done(Outcome().say(str(exc), "warning", 4))
        except (CurateError, ValueError) as exc:
            return self._done(Outcome().say(f"Shrink not saved: {exc}", "error", 10))
        out = self.after_change(pid, clusters=True)
        return out.say(f"shrink: the passage has {len(text):,} characters, {(change.verdict or '').upper()} "
                       "(u undoes).", timeout=3)

    def save_shrunk_edit(self, pid: int, changes: dict[str, str], passage_before: str) -> app_review.Change:
        """Save the edit dialog opened with a shrink proposal: recorded ``via="shrink"`` when the
        new passage is a part of the passage it had (``passage_before``); raises as
        ``app.review.edit``."""
        new = changes.get(app_review.PASSAGE)
        via = "shrink" if new is not None and new.strip() and new in passage_before else None
        return app_review.edit(self.session, pid, changes, via=via, verdicts=self.verdicts)

    def repair_chunk_index(self, pid: int) -> Outcome:
        """Set ``pid``'s chunk_index to the MTCB window holding its passage (undoable)."""
        try:
            change = app_review.repair_chunk_index(self.session, pid, verdicts=self.verdicts)
        except app_review.NotApplicable as exc:
            return self._done(Outcome().say(str(exc), timeout=4))
        except CurateError as exc:
            return self._done(Outcome().say(f"Repair not saved: {exc}", "error", 10))
        out = self.after_change(pid)
        return out.say(f"{change.note} (u undoes).", timeout=5)

    def plan_chunk_index_repairs(self) -> tuple[list, str]:
        """The chunk_index repairs to make (refusals left out) and the note on those refused.
        Seconds on a large set: call it in a worker. Raises ``CurateError``."""
        fixes = app_review.plan_chunk_index_repairs(self.session)
        todo = [f for f in fixes if not f.refused]
        refused = len(fixes) - len(todo)
        return todo, f" ({refused:,} refused: no single window holds the passage)" if refused else ""

    def repair_all_chunk_indexes(self, todo: list, note: str) -> Outcome:
        """Apply the planned chunk_index repairs as ONE undoable step."""
        try:
            changes = app_review.repair_all_chunk_indexes(self.session, fixes=todo)
        except CurateError as exc:
            return self._done(Outcome().say(f"Repair not saved: {exc}", "error", 10))
        out = self.after_change(self.queue.current, rebuild_queue=True)  # every row's marks
        return out.say(f"chunk_index repaired on {len(changes):,} pairs{note}; u undoes them all.", timeout=5)

    def toggle_chunk_index_meaning(self) -> Outcome:
        """Switch what the dataset's chunk_index means: MTCB's window (checked by ``links``) or
        something else (ignored); kept in the workspace."""
        new = "mtcb" if self.session.chunk_index_meaning == "ignore" else "ignore"
        try:
            app_review.set_chunk_index_meaning(self.session, new)
        except CurateError as exc:
            return self._done(Outcome().say(f"Not saved: {exc}", "error", 10))
        return self._done(Outcome().say(
            "chunk_index is now ignored by the links check (it means something else)." if new == "ignore"
            else "chunk_index is MTCB's window again: the links check compares it.", timeout=4))

    # -- bulk -----------------------------------------------------------------------------------

    def bulk_counts(self, ids: list[int]) -> dict[str, int]:
        """Per quick bulk action, how many pairs of ``ids`` it would change (the menu's counts)."""
        counts = {}
        for action, (_label, slow) in app_bulk.ACTIONS.items():
            if not slow and action != app_bulk.REJECT:
                counts[action] = len(app_bulk.plan(self.session, action, ids, clusters=self.clusters_shown()).touched)
        counts[app_bulk.REJECT] = sum(1 for pid in ids if self.session.status(pid) != Status.REJECTED)
        return counts

    def plan_bulk(self, action: str, ids: list[int], reason: str | None, config: Path | None, *,
                  cancelled: Callable[[], bool] | None = None, chunks=None) -> app_bulk.Plan:
        """What bulk ``action`` would change over ``ids`` (``app.bulk.plan``; ``chunks``: the
        ``app.findability.DocumentChunks`` a fit fits in); nothing written. A slow action
        (``app.bulk.ACTIONS``) takes seconds: call it in a worker."""
        if app_bulk.ACTIONS[action][1]:
            return app_bulk.plan(self.session, action, ids, reason=reason, verdicts=self.verdicts, config=config,
                                 cancelled=cancelled or (lambda: False), chunks=chunks)
        return app_bulk.plan(self.session, action, ids, reason=reason, verdicts=self.verdicts,
                             clusters=self.clusters_shown(), config=config)

    def apply_bulk(self, p: app_bulk.Plan) -> Outcome:
        """Apply a confirmed bulk plan (``app.bulk.apply``: one undo step); the view stays."""
        label = app_bulk.ACTIONS[p.action][0]
        try:
            result = app_bulk.apply(self.session, p)
        except CurateError as exc:
            return self._done(Outcome().say(f"Not saved: {exc}", "error", 10))
        out = Outcome()
        edits = p.action in (app_bulk.SNAP, app_bulk.TRIM, app_bulk.SHRINK, app_bulk.FIT)
        if edits:
            for pid in result.touched:
                self.recheck(pid)
            out.rescore.extend(result.touched)  # their findability, visited or not
        if p.action == app_bulk.NOT_DUPLICATES:
            self.forget_duplicates(result.touched)
        if edits or p.action == app_bulk.NOT_DUPLICATES:
            out.find_clusters = True
        out.set_checks = True
        self.apply_filter(self.status_filter, keep=self.queue.current, out=out)  # the view stays; its pairs change
        return out.say(f"Bulk {label}: {result.count:,} pairs changed (u undoes all of it).", timeout=5)

    # -- the session's analysis ----------------------------------------------------------------

    def absorb_analysis(self, analysis) -> Outcome:
        """Take a finished analysis (``app.analysis.Analysis``, from the worker process): every
        pair's complete verdict while its texts are those analysed, the near-duplicate clusters
        and shared-passage groups, the set-wide checks' results. Every queue row is drawn
        again; a filtered view is applied again (a verdict or check filter may now hold other
        pairs); the pair on screen and the progress bar too."""
        self.verdicts.absorb(analysis)
        if analysis.answers is not None:
            self._take_answers(analysis.answers)
        self.set_results = analysis.set_results
        self.cluster_index, self.shared_index = analysis.cluster_index, analysis.shared_index
        self.clusters_ready = True
        n = len(self.session)
        bad = {pid for pid in analysis.not_exact() if pid < n}
        for pid in range(len(analysis.passages), n):  # pairs added since the snapshot
            self.recheck(pid)
            if pid in self.not_verbatim:
                bad.add(pid)
        self.not_verbatim = bad
        return self._view_again(Outcome(show=True, progress=True), rebuilt=True)

    def absorb_answers(self, answers, pending: bool) -> Outcome:
        """Take the latest analysis's ``answerable`` support reasons
        (``analysis_store.AnswerableTable``); ``pending``: another analysis is still asked for.
        The pair on screen is shown again; a filtered view is applied again."""
        self._take_answers(answers)
        self.analysis_pending = pending
        return self._view_again(Outcome(show=True))

    def analysis_ended(self, pending: bool) -> Outcome:
        """The analysis stopped (cancelled or failed) or landed; ``pending``: another is still
        asked for. Without one, a pair whose support reason is not known works it out here."""
        if pending == self.analysis_pending:
            return Outcome()
        self.analysis_pending = pending
        return self._view_again(Outcome(show=True))

    def _view_again(self, out: Outcome, *, rebuilt: bool = False) -> Outcome:
        """``out`` after an analysis (or its answerable reasons) landed: a filtered view is
        applied again (a verdict or check filter may now hold other pairs; every row is drawn
        again); without a filter the view stays, its rows drawn again when ``rebuilt``."""
        if not self.view_filter.empty:
            return self.apply_filter(self.status_filter, keep=self.queue.current, out=out)
        out.rebuilt = out.rebuilt or rebuilt
        return self._done(out)

    # -- back from other screens ------------------------------------------------------------------

    def dialog_closed(self, pid: int | None, *, clusters: bool = True) -> Outcome:
        """Back from a screen that may have changed statuses or added pairs (clusters, dedup,
        the LLM's): the queue is rebuilt; ``pid`` is shown when given and known."""
        return self.after_change(pid if pid is not None and 0 <= pid < len(self.session) else None,
                                 rebuild_queue=True, clusters=clusters)

    def team_closed(self, pid: int | None) -> Outcome:
        """Back from the team screen: the store's decisions are read again (a lead's decision,
        other curators' settled pairs) and ``pid`` shown when given."""
        self.session.reload_decisions()
        keep = self.queue.current if pid is None else pid
        status = self.status_filter if pid is None or pid in self.view_ids() else None
        return self.apply_filter(status, keep=keep)

    def stats_scope(self) -> tuple[list[int] | None, str]:
        """The statistics screen's pairs (None: all) and their name."""
        if self.whole:
            return None, "all pairs"
        return self.view_ids(), self.view_scope()
