"""The review screen: the queue, the current pair, and its source document, one key per action.

The screen presents and forwards keys; what a key does is the review controller's
(``app.controller.ReviewController``): every change goes through the application layer and
``ReviewSession``, which commits it to the workspace before the screen moves on, so what the
screen shows as decided is on disk. The controller answers each key with an ``Outcome`` (the
pair shown next, the rows to repaint, the lines to tell the curator), which ``_apply`` presents.

The screen's other parts live beside it: the keys (``review_keys``), the queue's rows
(``review_rows``), showing the pair and painting ahead (``review_painting``), the start-up
analysis (``review_analysis``: in a worker process), findability (``review_findability``) and the actions that open
another screen (``review_dialogs``).
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Input, TextArea

from mtcb_curate.app import filters as app_filters
from mtcb_curate.app.controller import FILTERS, Outcome, ReviewController
from mtcb_curate.dataset.model import Status
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.workarounds.frames import PromptFrames
from mtcb_curate.tui.messages import ChangeWaiting, HubLoadDone, WorkspaceReconnected
from mtcb_curate.tui.screens.confirm import ConfirmScreen
from mtcb_curate.tui.screens.review_dialogs import Dialogs
from mtcb_curate.tui.screens.chunk_fit import ChunkFitActions
from mtcb_curate.tui.screens.review_findability import FindabilityWork
from mtcb_curate.tui.screens.shrink_ahead import ShrinkAhead
from mtcb_curate.tui.screens.review_keys import BINDINGS
from mtcb_curate.tui.screens.review_painting import Painting
from mtcb_curate.tui.screens.review_analysis import AnalysisWork
from mtcb_curate.tui.screens.review_rows import (FAIL_MARK, GLYPH, HAND_MARK, HAND_ORIGIN, MARK_LEGEND,
                                                UNFINDABLE_MARK, VERDICT_MARK, QueueRows)
from mtcb_curate.tui.screens.reject import RejectScreen
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.widgets.bar import Bar
from mtcb_curate.tui.widgets.filter_bar import FilterBar
from mtcb_curate.tui.widgets.keys_footer import KeysFooter
from mtcb_curate.tui.widgets.pair_list import PairList
from mtcb_curate.tui.widgets.qa_panel import QAPanel
from mtcb_curate.tui.widgets.scrolling import KeepsPaintedLines, StillHorizontal, StillVertical
from mtcb_curate.tui.widgets.source_viewer import SourceViewer

__all__ = ["BINDINGS", "FAIL_MARK", "FILTERS", "GLYPH", "HAND_MARK", "HAND_ORIGIN", "MARK_LEGEND",
           "ReviewScreen", "UNFINDABLE_MARK", "VERDICT_MARK"]

#: The compact layout (question, answer and verdict first; ``styles/app.tcss``, ``QAPanel.compact``)
#: applies at this many columns or fewer, or this many rows or fewer.
COMPACT_MAX_COLUMNS = 120
COMPACT_MAX_ROWS = 30
#: Below this many columns the queue is hidden too (``narrow``): its rows would show a few
#: characters of each question, and the panel needs the width (j/k still move through it).
NARROW_MIN_COLUMNS = 100
#: Seconds after mounting before what an earlier preview cached is read (``F``'s findability).
FINDABILITY_DELAY_S = 0.5
#: Rows the top bar may take to show the source and why it was chosen whole (it takes one
#: when they fit; a longer "why" is cut with "…" on the last).
SOURCE_BAR_ROWS = 3


class ReviewScreen(ChunkFitActions, ShrinkAhead, Dialogs, FindabilityWork, AnalysisWork, Painting, PromptFrames,
                   KeepsPaintedLines,
                   CurateAppAccess, Screen[None]):
    """Walk every pair of a ``ReviewSession``; see ``BINDINGS`` for the keys.

    ``controller`` (``app.controller.ReviewController``) holds the queue, the view and each
    pair's problems, and carries out every key; the screen presents its ``Outcome``."""

    BINDINGS = BINDINGS
    AUTO_FOCUS = None
    #: Every key here is a priority binding that takes effect as the app reads it: the keys
    #: typed behind one need not wait for it (``tui.keys.keys_in_order``).
    KEYS_AT_ONCE = True
    #: A change waiting on the server is said on the progress line (``tui.changes``).
    SHOWS_WAITING_CHANGES = True

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.controller = ReviewController(session)
        self.rows = QueueRows(self.controller)
        self._init_painting()

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Bar(id="source-bar", max_rows=SOURCE_BAR_ROWS)
        yield FilterBar(id="filter-bar")
        with StillHorizontal(id="main"):
            with StillVertical(id="queue-pane"):
                yield Bar(id="queue-title")
                yield PairList(self.rows.text, self.rows.css_class, queue=self.controller.queue, id="queue")
            with StillVertical(id="pair-pane"):
                yield QAPanel(id="qa")
                yield Bar(id="doc-title")
                yield SourceViewer(id="source")
        yield Bar(id="progress")
        yield KeysFooter()  # help and quit always shown; the other keys as the width allows

    def on_mount(self) -> None:
        c = self.controller
        # Before the first pair is shown: its problems read [preview] reference_size.
        self._apply(c.configure(self.curate_app.config_path))
        self._refresh_source_bar()
        self._fit_layout()
        if hasattr(self.session.workspace, "on_reconnect"):  # a shared workspace: say when it reconnected
            self.session.workspace.on_reconnect = self._reconnected
        self._later(FINDABILITY_DELAY_S, self._load_findability)  # what an earlier preview cached
        self._expect_analysis()
        start = self.session.first_undecided()
        self._apply(c.apply_filter(None, keep=0 if start is None else start))
        self.set_interval(5.0, self._update_progress)
        self._start_passes()

    @property
    def queue(self) -> PairList:
        return self.query_one(PairList)

    # -- presenting an outcome ----------------------------------------------------------------

    def _apply(self, out: Outcome) -> None:
        """Present what the controller did: start the work it calls for, repaint the queue's
        rows, tell the curator, show the current pair (after a decision: once no key waits)."""
        for pid in out.rescore:
            self._rescore_findability(pid)
        if out.find_clusters:
            self._find_clusters()
        if out.set_checks:
            self._schedule_set_checks()
        if out.source_bar:
            self.rows.resized()
            self._refresh_source_bar()
        if out.rebuilt or out.rows or out.moved_from is not None:
            self.queue.sync(rebuilt=out.rebuilt, moved_from=out.moved_from, rows=out.rows)
            if out.rebuilt and not out.show:
                self._refresh_queue_title()
        for n in out.notices:
            self.notify(n.text, severity=n.severity, timeout=n.timeout, markup=False)
        if out.deferred:
            # Keys waiting (a held key, keys faster than frames): the queue's cursor has moved
            # and the decision is saved; the panel, the source and the bars show the pair the
            # last of those keys leads to, once they are handled, instead of being built for
            # every pair passed over.
            self._behind = True
            self._catch_up()
            return
        if out.show:
            self._show_current()
        if out.progress:
            self._update_progress()

    def _after_change(self, pid: int | None, **what) -> None:
        """Present a change made elsewhere (a dialog, another screen's action) to pair ``pid``:
        ``ReviewController.after_change`` (``rebuild_queue``, ``advance``, ``clusters``)."""
        self._apply(self.controller.after_change(pid, **what))

    @property
    def verdicts(self):
        """The controller's verdict cache (``app.verdicts.Verdicts``)."""
        return self.controller.verdicts

    def _writable_pair(self) -> int | None:
        """The current pair when it may be changed; else None (and why, when read-only)."""
        pid, out = self.controller.writable_pair()
        if pid is None:
            self._apply(out)
        return pid

    # -- decisions ----------------------------------------------------------------------------

    def _change(self, change, what: str, meanwhile=None) -> None:
        """Make ``change`` (a controller call returning an ``Outcome``) through the app's
        ``Changes`` (``tui.changes``: on a shared workspace whose server does not answer within
        a quarter second it goes on off this thread, the progress line says so and the keys
        typed meanwhile wait for it), then present its outcome."""
        self.curate_app.changes.run(change, what=what, then=lambda result: self._apply(result.get()),
                                    meanwhile=meanwhile)

    def _decide(self, status: Status, reason: str | None = None) -> None:
        # Where the commit waits on a server, the pair it leads to is wrapped meanwhile.
        c = self.controller
        self._change(lambda: c.decide(status, reason), f"the decision on #{c.current}", meanwhile=self._prepare_next)

    @on(ChangeWaiting)
    def _change_waiting(self) -> None:
        self._update_progress()

    def action_accept(self) -> None:
        """Accept the current pair and go to the next one. When it would fail a check (and
        ``[review] confirm_failing_accept`` is on), ask once first: a/enter accepts, esc not."""
        fails = self.controller.accept_check()
        if not fails:
            self._decide(Status.ACCEPTED)
            return
        pid = self.controller.current

        def done(yes: bool | None) -> None:
            if yes and self.controller.current == pid:
                self._decide(Status.ACCEPTED)

        self.app.push_screen(ConfirmScreen(f"#{pid} fails {', '.join(fails)}: accept anyway? a/enter yes, esc no"),
                             done)

    def action_reject(self) -> None:
        """Reject the current pair, with an optional reason, and go to the next one (the dialog
        makes the decision: it stays open, the reason kept, when it is not saved)."""
        pid = self.controller.current
        if pid is None:
            return
        c = self.controller
        self.app.push_screen(RejectScreen(pid, save=lambda reason: c.decide(Status.REJECTED, reason),
                                          saved=self._apply))

    def action_skip(self) -> None:
        """Skip the current pair (decide later) and go to the next one."""
        self._decide(Status.SKIPPED)

    def action_flag(self) -> None:
        """Flag the current pair for a second look and go to the next one."""
        self._decide(Status.FLAGGED)

    def action_undo(self) -> None:
        """Undo the latest decision or edit, and show its pair."""
        self._change(self.controller.undo, "the undo")

    # -- navigation ---------------------------------------------------------------------------

    def action_next(self) -> None:
        """Go to the next pair in the view."""
        self._apply(self.controller.move_by(1))

    def action_previous(self) -> None:
        """Go to the previous pair in the view."""
        self._apply(self.controller.move_by(-1))

    def action_next_undecided(self) -> None:
        """Go to the next undecided pair (switching the view to show it if needed); in a team's
        work split, the next pair handed to this curator (``app.team.next_pair``)."""
        self._apply(self.controller.next_undecided())

    def action_cycle_filter(self) -> None:
        """Show all pairs, or only those of one status (cycles)."""
        self._apply(self.controller.cycle_filter())

    def show_view(self, status: Status | None) -> None:
        """Show all pairs (None) or only those of ``status`` (the command palette's views)."""
        self._apply(self.controller.show_view(status))

    def goto(self, pid: int | None, *, refresh: bool = False) -> None:
        """Show pair ``pid``, switching the view to all when the current view does not hold it.

        ``refresh``: statuses changed or pairs were added elsewhere (a dialog), so the queue is
        rebuilt first. None or an unknown id only refreshes. Screens pushed from here dismiss
        with a pair id and come back through this.
        """
        self._apply(self.controller.goto(pid, refresh=refresh))

    def on_pair_list_selected(self, event: PairList.Selected) -> None:
        if self.curate_app.changes.waiting:
            return  # the cursor stays where the change waiting on the server leaves it
        self._apply(self.controller.clicked(event.pair_id))

    # -- the filter bar -----------------------------------------------------------------------

    def action_filter_bar(self) -> None:
        """Open the filter bar (every criterion: status, verdict, checks, document, edited,
        generated, by hand, note, text or regex); enter applies, esc closes."""
        c = self.controller
        self.query_one(FilterBar).open(c.combined_filter().describe() if not c.view_filter.empty else "")
        self._warm_filters()

    @work(thread=True, exclusive=True, group="filters_warm", exit_on_error=False)
    def _warm_filters(self) -> None:
        """Build what a text query reads (``app.filters.warm``: lower-cased texts, Arrow columns
        from ``ARROW_MIN_PAIRS`` pairs) while the curator types the first one; once built, the
        call only looks."""
        app_filters.warm(self.controller.session)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a text input has focus (the filter bar), the screen's keys (priority bindings
        all) go to it, not to their actions."""
        if isinstance(self.focused, (Input, TextArea)):
            return False
        return True

    @on(FilterBar.Applied)
    def _filter_applied(self, message: FilterBar.Applied) -> None:
        self.set_view(message.filter)

    @on(FilterBar.Closed)
    def _filter_closed(self) -> None:
        self.set_focus(None)

    def set_view(self, f: app_filters.Filter) -> None:
        """Show the pairs passing ``f`` (its statuses replace the v cycle's); the cursor stays on
        its pair when the new view holds it."""
        self.set_focus(None)
        self._doc_matches.clear()
        self._match_at = -1
        self._apply(self.controller.set_view(f))

    # -- scrolling and layout -------------------------------------------------------------------

    def action_panel_page(self, direction: int) -> None:
        """Scroll the QA panel by a page (1 down, -1 up)."""
        self.query_one(QAPanel).scroll_page(direction)

    def action_source_page(self, direction: int) -> None:
        """Scroll the source document by a page."""
        viewer = self.query_one(SourceViewer)
        viewer.scroll_relative(y=direction * max(1, viewer.size.height - 2), animate=False)

    def action_centre(self) -> None:
        """Scroll the source back to the highlighted passage."""
        self._shown_doc = None
        self._show_current()

    def _fit_layout(self) -> None:
        """The compact layout at <= ``COMPACT_MAX_COLUMNS`` columns or <= ``COMPACT_MAX_ROWS``
        rows (the screen's ``compact`` class: the panel takes most of the height, question and
        answer before the problems and facts, the source below), without the queue below
        ``NARROW_MIN_COLUMNS`` (``narrow``); the panel's hint names the scroll keys as bound now."""
        width, height = self.app.size
        compact = width <= COMPACT_MAX_COLUMNS or height <= COMPACT_MAX_ROWS
        self.set_class(compact, "compact")
        self.set_class(width < NARROW_MIN_COLUMNS, "narrow")
        panel = self.query_one(QAPanel)
        panel.scroll_keys = " ".join(self._bound_key(i) for i in ("panel_up", "panel_down"))
        panel.compact = compact

    def _bound_key(self, binding_id: str) -> str:
        """The first key bound now to this screen's binding ``binding_id``, as typed."""
        from textual.keys import format_key

        default = next(b.key for b in BINDINGS if b.id == binding_id)
        return format_key(self.curate_app.keymap.get(binding_id, default).split(",")[0].strip())

    def on_resize(self) -> None:
        self._fit_layout()
        self._refresh_source_bar()  # the app's badge only from 100 columns

    def on_screen_resume(self) -> None:
        self._fit_layout()  # the terminal may have been resized while a dialog was open

    # -- a shared workspace ---------------------------------------------------------------------

    def _reconnected(self, message: str) -> None:
        """The shared workspace lost its connection and made a new one (the write went through).
        Called on the thread that wrote: posted, since the app's thread may be waiting for that
        write (a decision's commit)."""
        self.post_message(WorkspaceReconnected(message))

    @on(WorkspaceReconnected)
    def _say_reconnected(self, message: WorkspaceReconnected) -> None:
        self.notify(message.message, severity="warning", timeout=8, markup=False)

    @on(HubLoadDone)
    def _hub_load_done(self, message: HubLoadDone) -> None:
        """The background Hub load ended: its outcome becomes the top bar's "why this source"
        and a notice (the sample stays open: its decisions are in the sample's workspace)."""
        from dataclasses import replace

        ds = self.session.dataset
        ds.source = replace(ds.source, reason=message.outcome)
        self._refresh_source_bar()
        self.notify(message.outcome, severity="information" if message.loaded else "warning", timeout=20,
                    markup=False)

    def action_quit(self) -> None:
        """Quit (every decision is already saved)."""
        self.app.exit()
