"""How the review screen shows the current pair, and paints ahead so that a key's frame is
quick: the QA panel, the source with its highlights, the bars; the full check of a pair (fuzzy
search, other documents, chunk window) in a worker once it has been on screen a moment, and the
next pairs' texts wrapped between frames (``_warm_next``); a run of decisions faster than frames
shows only the pair the last one leads to (``_catch_up``). What is shown comes from the review
controller (``app.controller.ReviewController``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from rich.text import Text
from textual import work
from textual.timer import Timer
from textual.worker import get_current_worker

from mtcb_curate.app import filters as app_filters
from mtcb_curate.app.controller import ReviewController
from mtcb_curate.dataset.model import Status
from mtcb_curate.plaintext import one_line, printable
from mtcb_curate.tui.badges import shared_badge, similar_badge
from mtcb_curate.tui.messages import VerdictCompleted, WindowTokenized
from mtcb_curate.tui.screens.review_keys import BINDINGS
from mtcb_curate.tui.widgets.bar import Bar
from mtcb_curate.tui.widgets.qa_panel import QAPanel, problems_text
from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span
from mtcb_curate.tui.workarounds.keys import keys_waiting
from mtcb_curate.verify import PairResult
from mtcb_curate.verify.verdict import Verdict

#: Seconds a pair must stay on screen before its full check (fuzzy search, other documents,
#: chunk window, tokens) starts in a worker: paging past pairs starts no work per key, and
#: keys a skimming curator presses 150 ms apart never wait for that worker's hold on the GIL.
LOCATE_DELAY_S = 0.3
#: How many pairs after the cursor that worker completes as well (``_ahead``), once the pair
#: has been on screen for ``AHEAD_DELAY_S`` seconds (a key sooner starts none).
LOCATE_AHEAD = 2
AHEAD_DELAY_S = 0.5
#: Seconds after a pair's frame is drawn (and no other pair shown since) before what the next
#: pair shows is painted ahead (``_warm_next``), leaving the GIL to the thread that writes the
#: frame; before a person's next key, and between a held key's keys.
WARM_DELAY_S = 0.003
#: At most this many queue rows' problems are worked out per warm-up (``_warm_next``).
WARM_QUEUE_ROWS = 8
#: The source viewer's highlight kind per verdict (a missing passage's closest match).
_SPAN_KIND = {Verdict.EXACT: "exact", Verdict.NORMALIZED: "normalized", Verdict.FUZZY: "closest"}


class Painting:
    """Mixin of the review screen (before ``Screen``): showing the current pair and painting
    ahead. Uses the screen's ``controller``, ``queue``, ``curate_app`` and ``_findability_text``."""

    controller: ReviewController
    #: Chunk windows shown in the source (``w``).
    show_window = False
    _shown_doc: str | None = None
    _shown_pair: int | None = None
    #: Pairs shown so far (``_show_current``): painting ahead waits for the latest one's frame.
    _shown_count = 0
    #: A wrap of the next pairs' texts is scheduled (``_warm_next``).
    _warming = False
    #: Decisions were made while keys waited, and the current pair is not shown yet
    #: (``_catch_up`` shows it, posted once: ``_catch_up_posted``).
    _behind = False
    _catch_up_posted = False
    _locate_timer: Timer | None = None
    #: (pair, passage, chunk_index, pairs ahead) the locate timer or worker was last started for.
    _locate_for: tuple | None = None
    _match_at = -1

    def _init_painting(self) -> None:
        self._bars: dict[str, Text] = {}
        #: (document key, query) -> the query's match spans in that document (the source's highlights).
        self._doc_matches: dict[tuple, list[Span]] = {}
        session = self.controller.session
        self._key_column = session.dataset.columns.get("doc_key", "document")

    def _later(self, delay: float, callback) -> Timer | None:
        """Run ``callback`` after ``delay`` seconds (0: after the next refresh; no timer)."""
        if delay > 0:
            return self.set_timer(delay, callback)
        self.call_after_refresh(callback)
        return None

    # -- the bars -------------------------------------------------------------------------------

    def _set_bar(self, selector: str, text: Text) -> None:
        """Update a one-row bar unless it already shows ``text``; its height is fixed in the
        stylesheet, so no layout pass is needed."""
        if self._bars.get(selector) != text:
            self._bars[selector] = text
            self.query_one(selector, Bar).update(text)

    def _refresh_source_bar(self) -> None:
        """The top bar: dataset, pairs (generated ones included), documents, source and why it
        was chosen, wrapped onto up to ``SOURCE_BAR_ROWS`` rows (``review.py``) so that the why
        is read whole; the app's badge from 100 columns."""
        from mtcb_curate.tui.screens.review_rows import HAND_ORIGIN

        session = self.controller.session
        ds = session.dataset
        bar = Text()
        if self.app.size.width >= 100:
            bar.append(" mtcb-curate ", style="bold reverse")
        bar.append(f" {printable(ds.name)} ", style="bold")
        added = session.pairs[len(ds.pairs):]
        by_hand = sum(1 for p in added if p.origin == HAND_ORIGIN)
        parts = [f"{len(added) - by_hand:,} generated"] * bool(len(added) - by_hand) + [f"{by_hand:,} by hand"] * bool(by_hand)
        pairs = f"{len(session):,} pairs" + (f" ({', '.join(parts)})" if parts else "")
        bar.append(f"· {pairs} ")
        # What must be seen comes first: read-only and input problems, then the documents, the
        # source and why it was chosen.
        if session.read_only:
            bar.append(" READ-ONLY ", style="bold reverse yellow")
            bar.append(" ")
        if ds.problems:
            bar.append(f"⚑ {len(ds.problems)} input problem(s): flagged pairs carry the details ", style="yellow")
        bar.append(f"· {len(ds.documents):,} documents · ")
        where = "bundled sample" if ds.source.kind == "sample" else ds.source.location
        bar.append(printable(where, keep_newlines=False))
        if ds.source.reason:
            bar.append(f" ({printable(ds.source.reason, keep_newlines=False)})", style="dim")
        self._set_bar("#source-bar", bar)

    def _update_progress(self) -> None:
        changes = getattr(self.app, "changes", None)
        waiting = None if changes is None else changes.line()
        if waiting is not None:  # a change waits on the server (``tui.changes``)
            self._set_bar("#progress", waiting)
            return
        c = self.controller
        s = c.session
        counts = s.counts()
        total = len(s)
        t = Text()
        # what the checklist's `reviewed` counts: accepted or rejected (skipped, flagged are not)
        pct = 100.0 * s.settled / total if total else 0.0
        t.append(f" decided {s.settled:,}/{total:,} ({pct:.0f}%) ", style="bold")
        t.append(f" ✓ {counts[Status.ACCEPTED]:,} accepted ", style="green")
        t.append(f" ✗ {counts[Status.REJECTED]:,} rejected ", style="red")
        t.append(f" » {counts[Status.SKIPPED]:,} skipped ", style="dim")
        t.append(f" ⚑ {counts[Status.FLAGGED]:,} flagged ", style="yellow")
        rate = s.rate_per_hour()
        t.append(f"  {rate:,.0f} pairs/h " if rate is not None else "  — pairs/h ", style="bold")
        if c.not_verbatim:
            t.append(f"  ≠ {len(c.not_verbatim):,} passages not verbatim", style="dim")
        if self.analysis_note:
            t.append(f"  {self.analysis_note}", style="dim")
        self._set_bar("#progress", t)

    def _refresh_queue_title(self, n: int | None = None) -> None:
        """The queue's title: the view, its size and the cursor's row (the queue has no
        scrollbar: repainting a 45-row scrollbar cost about 3 ms a key)."""
        c = self.controller
        queue = c.queue
        n = len(queue.ids) if n is None else n
        name = "all" if c.status_filter is None else c.status_filter.value
        row = f" · row {min(queue.cursor + 1, n):,}/{n:,}" if n else ""
        if c.view_filter.empty:
            self._set_bar("#queue-title",
                Text.assemble(("Queue ", "bold"), f"· {name} ({n:,}){row} · v: change view"))
            return
        line = c.combined_filter().describe()
        self._set_bar("#queue-title", Text.assemble(("view: ", "bold"), f"{n:,} of {len(c.session):,} · ",
                                                    (one_line(line, 60), "italic"), f"{row} · V: filter"))

    # -- the current pair -------------------------------------------------------------------------

    def _show_current(self) -> None:
        self._behind = False
        self._refresh_queue_title()
        c = self.controller
        pid = c.queue.current
        panel = self.query_one(QAPanel)
        viewer = self.query_one(SourceViewer)
        self._shown_pair = pid
        if pid is None:
            panel.show(None)
            viewer.show_message("no pair in this view (v changes the view)")
            self._shown_doc = None
            self._set_bar("#doc-title", Text())
            return
        session = c.session
        view = session.view(pid)
        doc = session.dataset.document_for(view.pair)
        args = self._panel_args(pid, view, doc)
        if doc is None:
            panel.show(**args)
            viewer.show_message(f"no document in the corpus for {self._key_column} '{printable(view.pair.doc_key)}'")
            self._shown_doc = None
            self._set_bar("#doc-title", Text("Source: none", style="bold"))
            return
        result, pending = args["result"], args["pending"]
        spans = self._source_spans(view, doc, result)
        if self._shown_doc != doc.key:
            self._match_at = -1
            viewer.show(doc.text, spans)
            self._shown_doc = doc.key
        else:
            viewer.set_spans(spans)
        fields = [f"{self._key_column}: {printable(doc.key, keep_newlines=False)}"]
        fields += [f"{k}: {printable(str(v), keep_newlines=False)}" for k, v in doc.meta.items()
                   if isinstance(v, (str, int)) and not isinstance(v, bool) and k not in ("text",) and str(v).strip()]
        fields.append(f"{len(doc.text):,} characters")
        self._set_bar("#doc-title", Text.assemble(("Source ", "bold"), " · ".join(fields)))
        panel.show(**args)
        self.shrink_ahead(pid)
        self._shown_count += 1
        if not self._warming:
            self._warming = True
            self.call_after_refresh(self._after_frame, self._shown_count)
        ahead = self._ahead()
        key = (pid, view.passage, session.pairs[pid].chunk_index, ahead)
        if key == self._locate_for and (pending or ahead):
            return  # the same pair and texts shown again (a worker's result): its check is under way
        self._locate_for = key
        if self._locate_timer is not None:
            self._locate_timer.stop()
            self._locate_timer = None
        if pending or ahead:
            # Debounced: paging past pairs starts no search per key (the fuzzy search holds
            # the GIL for up to tens of ms and would delay the next frame). Once the pair has
            # been on screen for AHEAD_DELAY_S, the next pairs of the queue are completed too,
            # so that a decision shows a finished check at once instead of "checking…" and a
            # second frame when the check lands.
            ahead_at = time.monotonic() + AHEAD_DELAY_S
            self._locate_timer = self._later(LOCATE_DELAY_S if pending else AHEAD_DELAY_S,
                                             lambda: self._complete_verdict(pid, ahead, ahead_at, pending))

    def _key_label(self, key: str) -> str:
        """A default key of this screen as bound now (the ``[keys]`` table may rebind it)."""
        for b in BINDINGS:
            if b.id and key in b.key.split(","):
                return self.curate_app.keymap.get(b.id, key).split(",")[0]
        return key

    def _panel_args(self, pid: int, view, doc, shown: bool = True) -> dict:
        """What ``QAPanel.show`` (or ``warm``) takes for pair ``pid``: its view, verdict (None
        for an unverified pair of a very large document: its search, tens of ms per key on a
        50 MB filing, waits for the locate worker and the panel says "checking"), badges,
        problems, findability and the filter's matches. ``shown``: for the pair going on
        screen (a pair only wrapped ahead starts no findability scoring)."""
        verdicts = self.controller.verdicts
        if doc is None:
            result, pending = verdicts.quick(pid), False
        else:
            result = verdicts.quick_inline(pid)
            pending = result is None or not verdicts.is_complete(pid)
        return dict(view=view, result=result, pending=pending, key_column=self._key_column,
                    extra=self._badges(pid), problems=problems_text(self.controller.problems(pid), self._key_label),
                    findability=self._findability_text(pid, rescore=shown), matches=self._text_matches())

    def _after_frame(self, shown: int) -> None:
        """The frame showing the ``shown``-th pair is drawn: paint ahead ``WARM_DELAY_S`` later,
        while the writer thread sends it."""
        self.set_timer(WARM_DELAY_S, partial(self._warm_next, shown))

    def _warm_next(self, shown: int) -> None:
        """After the frame of the ``shown``-th pair shown (another shown since: after that
        one's frame): wrap what the next pair of the queue shows (its QA panel rows and, in the
        same document, its source rows or another document's line index), and work out the
        problems of the queue rows a page ahead, so that a decision's frame builds no row.
        A key waiting for the app (a held key's next one) stops it between two steps: the key
        is not kept waiting longer than a step, and what was made is kept."""
        if shown != self._shown_count:
            self.call_after_refresh(self._after_frame, self._shown_count)
            return
        self._warming = False
        c = self.controller
        queue = c.queue
        if queue.cursor < 0 or not queue.ids:
            return
        row = queue.cursor + 1  # what a decision or j shows next (k goes back to a pair just wrapped)
        key_read = self._keys_waiting
        self._wrap_row(row, stop=key_read, index=True)
        # The queue rows a page ahead: their marks read each pair's problems (about 0.5 ms a
        # pair), which a half-page scroll would otherwise work out for 20 rows in one frame.
        budget = WARM_QUEUE_ROWS
        for pid in queue.ids[row:row + max(1, self.queue.size.height)]:
            if budget == 0 or key_read():
                break
            if not c.problems_cached(pid):
                c.problems(pid)
                budget -= 1

    def _wrap_row(self, row: int, stop: Callable[[], bool] | None = None, index: bool = False) -> None:
        """Wrap what the queue's row ``row`` shows (its QA panel rows and, in the same document,
        its source rows; another document's line index), without showing it. ``stop``: checked
        between sections and rows; True ends the wrapping there (what was wrapped is kept; an
        index of another document, which cannot be cut short, is then not started)."""
        c = self.controller
        if not 0 <= row < len(c.queue.ids):
            return
        pid = c.queue.ids[row]
        view = c.session.view(pid)
        doc = c.session.dataset.document_for(view.pair)
        args = self._panel_args(pid, view, doc, shown=False)
        self.query_one(QAPanel).warm(**args, stop=stop)
        viewer = self.query_one(SourceViewer)
        if doc is not None and doc.key == self._shown_doc:
            viewer.warm(self._source_spans(view, doc, args["result"]), stop=stop)
        elif doc is not None and (stop is None or (index and not stop())):
            viewer.prepare(doc.text)  # another document: its line index and wrap

    def _prepare_next(self, committed: Callable[[], bool]) -> None:
        """A decision's ``meanwhile`` (``ReviewSession.decide``: only while its commit waits on
        a server): wrap the pair the decision leads to, the next row, until the commit
        returns, unless more keys wait (they pass over it: the panel is then built once, for
        where the last one leads)."""
        queue = self.controller.queue
        if queue.cursor >= 0 and not self._keys_waiting():
            self._wrap_row(queue.cursor + 1, stop=committed)

    def _ahead(self) -> tuple[int, ...]:
        """The next :data:`LOCATE_AHEAD` pairs of the queue after the cursor whose full check
        has not run (the pairs a decision or ``j`` shows next)."""
        c = self.controller
        queue = c.queue
        ids = queue.ids[queue.cursor + 1:queue.cursor + 1 + LOCATE_AHEAD] if queue.cursor >= 0 else []
        return tuple(p for p in ids if not c.verdicts.is_complete(p))

    def _badges(self, pid: int) -> Text:
        """Badges for the head line: ``≈N similar`` when the pair is in a near-duplicate cluster,
        ``shares its passage with #N`` when it is in a shared-passage group."""
        c = self.controller
        badges = similar_badge(c.cluster_index.get(pid), pid)
        shared = shared_badge(c.shared_index.get(pid), pid)
        if shared.plain:
            if badges.plain:
                badges.append("   ")
            badges.append_text(shared)
        note = c.session.note(pid)
        if note:
            badges.append("\n" if badges.plain else "")
            badges.append("note: ", style="bold magenta")
            badges.append(printable(note, keep_newlines=False))  # the curator's text: plain, never markup
        return badges

    # -- the source's highlights --------------------------------------------------------------------

    def _source_spans(self, view, doc, result: PairResult | None) -> list[Span]:
        """The source viewer's highlights for a pair: its located passage, its chunk's
        window, and the queue filter's text matches in ``doc``."""
        spans = (self._spans(result) if result is not None else []) + self._window_spans(view.pair)
        return spans + self._match_spans(doc) + self._chunk_marks(view, doc, result)

    @staticmethod
    def _spans(r: PairResult) -> list[Span]:
        if r.start is None or r.end is None or r.end <= r.start:
            return []
        return [Span(r.start, r.end, _SPAN_KIND.get(r.verdict, "closest"))]

    def _window_spans(self, pair) -> list[Span]:
        """The bounds of the pair's chunk_index window (8,192 tokens) when ``w`` has turned them
        on; the document is tokenized in a worker the first time (about 0.1 s per MB)."""
        if not self.show_window or pair.chunk_index is None:
            return []
        cached = self.controller.verdicts.index.cached_windows(pair.doc_key)
        if cached is None:
            self._tokenize(pair.doc_key)
            return []
        if 0 <= pair.chunk_index < len(cached):
            w = cached[pair.chunk_index]
            return [Span(w.start, w.end, "window")]
        return []

    @work(thread=True, exclusive=True, group="windows", exit_on_error=False)
    def _tokenize(self, key: str) -> None:
        self.controller.verdicts.index.windows(key)
        if not get_current_worker().is_cancelled:
            self.post_message(WindowTokenized(key))

    def on_window_tokenized(self, message: WindowTokenized) -> None:
        self._show_current()

    def action_toggle_window(self) -> None:
        """Show or hide the bounds of the pair's chunk_index window in the source."""
        self.show_window = not self.show_window
        c = self.controller
        pid = c.queue.current
        pair = c.session.pairs[pid] if pid is not None else None
        if self.show_window and pair is not None and pair.chunk_index is None:
            self.notify("This pair has no chunk_index: no window to show.", timeout=3)
        self._show_current()

    def _text_matches(self):
        """text -> the view's text-query matches in it, or None without a query."""
        f = self.controller.view_filter
        if not f.text:
            return None
        return lambda text: app_filters.match_spans(f, text, limit=200)

    def _match_spans(self, doc) -> list[Span]:
        """The text query's matches in ``doc`` (cached per document and query), as spans."""
        f = self.controller.view_filter
        if not f.text:
            return []
        key = (doc.key, f.text, f.regex)
        spans = self._doc_matches.get(key)
        if spans is None:
            spans = [Span(a, b, "match") for a, b in app_filters.match_spans(f, doc.text)]
            if len(self._doc_matches) > 8:
                self._doc_matches.clear()
            self._doc_matches[key] = spans
        return spans

    def action_match_step(self, direction: int) -> None:
        """Scroll the source to the next (1) or previous (-1) match of the filter's text query."""
        c = self.controller
        pid = c.queue.current
        doc = None if pid is None else c.session.dataset.document_for(c.session.pairs[pid])
        spans = [] if doc is None else self._match_spans(doc)
        if not c.view_filter.text:
            self.notify("No text in the filter (V sets one).", timeout=3)
            return
        if not spans:
            self.notify("No match in this source.", timeout=3)
            return
        self._match_at = (self._match_at + direction) % len(spans)
        self.query_one(SourceViewer).scroll_to_offset(spans[self._match_at].start)
        self.notify(f"match {self._match_at + 1:,} of {len(spans):,} in this source", timeout=2)

    # -- the full check of the pair on screen -------------------------------------------------------

    @work(thread=True, exclusive=True, group="locate", exit_on_error=False)
    def _complete_verdict(self, pid: int, ahead: tuple[int, ...] = (), ahead_at: float = 0.0,
                          shown_pending: bool = True) -> None:
        """The full check of pair ``pid`` (``shown_pending``: its panel says "checking"), then of
        the pairs ``ahead`` once ``ahead_at`` (``time.monotonic``) has passed; a result that
        may change what is on screen is posted as ``VerdictCompleted``."""
        worker = get_current_worker()
        verdicts, session = self.controller.verdicts, self.controller.session
        for p in (pid, *ahead):
            while p != pid and time.monotonic() < ahead_at and not worker.is_cancelled:
                time.sleep(0.05)  # the look-ahead waits until the pair has been read a moment
            if worker.is_cancelled:
                return
            if verdicts.is_complete(p):
                if p == pid and shown_pending and not worker.is_cancelled:
                    # Completed since the panel said "checking" (by the look-ahead of the pair
                    # before, which announces a pair only when its verdict changes): say so,
                    # or the panel keeps saying "checking" until something else shows it again.
                    self.post_message(VerdictCompleted(p, session.view(p).passage))
                continue
            passage = session.view(p).passage
            before = verdicts.cached(p)
            after = verdicts.complete(p)
            # A pair ahead is announced only when its queue mark may change (the verdict
            # itself): otherwise reading it later finds the cached result, and no frame is drawn.
            if not worker.is_cancelled and (p == pid or before is None or before.verdict != after.verdict):
                self.post_message(VerdictCompleted(p, passage))

    def on_verdict_completed(self, message: VerdictCompleted) -> None:
        pid, passage = message.pid, message.passage
        c = self.controller
        if c.session.view(pid).passage != passage:
            return
        c.recheck(pid)  # also when the curator has moved on: the queue's mark
        if self._shown_pair == pid:
            self._show_current()
        else:
            self.queue.refresh_pair(pid)

    # -- keys faster than frames ------------------------------------------------------------------

    def _keys_waiting(self) -> bool:
        """A key event is waiting in the app's message queue (``tui/workarounds/keys.py``)."""
        return keys_waiting(self.app)

    def _catch_up(self) -> None:
        """Show the current pair, put off by decisions (``_behind``), once no key waits; while
        keys wait, try again from the app's message queue, behind them (posted once)."""
        if not self._behind:
            return
        if self._keys_waiting():
            if not self._catch_up_posted:
                self._catch_up_posted = True
                self.app.call_later(self._posted_catch_up)
            return
        self._show_current()
        self._update_progress()

    def _posted_catch_up(self) -> None:
        self._catch_up_posted = False
        self._catch_up()
