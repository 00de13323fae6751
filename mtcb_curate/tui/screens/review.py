"""The review screen: the queue, the current pair, and its source document, one key per action.

Every decision is committed to the workspace (``ReviewSession.decide``) before the screen
advances, so what the screen shows as decided is on disk. Slow work (finding the closest match
of a passage that is not verbatim; checking every passage at start) runs in thread workers.
"""

from __future__ import annotations


import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, TextArea
from textual.worker import get_current_worker

from mtcb_curate import threads
from mtcb_curate.errors import CurateError
from mtcb_curate.dataset.model import Status
from mtcb_curate.plaintext import one_line, printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.app.verdicts import Verdicts
from mtcb_curate.verify import PairResult, select_span, snap, trim_passage
from mtcb_curate.app import clusters
from mtcb_curate.app import review as app_review
from mtcb_curate import neardup
from mtcb_curate.tui.badges import shared_badge, similar_badge
from mtcb_curate.tui.frames import PromptFrames
from mtcb_curate.tui.memory import trim_heap
from mtcb_curate.tui.messages import (ClustersFound, ClusterSearchFailed, FindabilityLoaded,
                                       FindabilityPairScored, FindabilityProgress, PassagesScanned,
                                       SetChecksDone, VerdictCompleted, WindowTokenized,
                                       WorkspaceReconnected)
from mtcb_curate.checks import Limits
from mtcb_curate.checks.pair import PairProblem, failing, pair_problems, set_check_results
from mtcb_curate.tui.screens.confirm import ConfirmScreen
from mtcb_curate.tui.widgets.qa_panel import findability_text, problems_text
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.screens.checklist import ChecklistScreen
from mtcb_curate.tui.screens.cluster import ClusterScreen
from mtcb_curate.tui.screens.dedup import DedupScreen
from mtcb_curate.tui.screens.shared_passage import SharedIndexFound, SharedPassageScreen
from mtcb_curate.tui.screens.edit import EditScreen
from mtcb_curate.tui.screens.generate_more import GenerateMoreScreen
from mtcb_curate.tui.screens.regenerate import RegenerateScreen
from mtcb_curate.tui.screens.semantic_dedup import SemanticDedupScreen
from mtcb_curate.tui.screens.publish import PublishScreen
from mtcb_curate.tui.screens.help import HelpScreen
from mtcb_curate.tui.screens.reject import CANCEL, RejectScreen
from mtcb_curate.tui.screens.note import NoteScreen
from mtcb_curate.tui.screens.hand_pair import HandPairScreen
from mtcb_curate.tui.screens.search import SearchScreen
from mtcb_curate.tui.screens.select_span import SelectSpanScreen
from mtcb_curate.tui.screens.shrink import ShrinkScreen
from mtcb_curate.tui.widgets.pair_list import PairList
from mtcb_curate.tui.widgets.filter_bar import FilterBar
from mtcb_curate.tui.screens.bulk import BulkScreen
from mtcb_curate.app import bulk as app_bulk
from mtcb_curate.app import filters as app_filters
from mtcb_curate.tui.widgets.bar import Bar
from mtcb_curate.tui.widgets.keys_footer import KeysFooter
from mtcb_curate.tui.widgets.qa_panel import QAPanel
from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span
from mtcb_curate.tui.widgets.scrolling import KeepsPaintedLines, StillHorizontal, StillVertical

#: Seconds a pair must stay on screen before its full check (fuzzy search, other documents,
#: chunk window, tokens) starts in a worker: paging past pairs starts no work per key, and
#: keys a skimming curator presses 150 ms apart never wait for that worker's hold on the GIL.
LOCATE_DELAY_S = 0.3
#: How many pairs after the cursor that worker completes as well (``ReviewScreen._ahead``),
#: once the pair has been on screen for ``AHEAD_DELAY_S`` seconds (a key sooner starts none).
LOCATE_AHEAD = 2
AHEAD_DELAY_S = 0.5
#: Seconds after a pair's frame is drawn (and no other pair shown since) before what the next
#: pair shows is painted ahead (``ReviewScreen._warm_next``), leaving the GIL to the thread
#: that writes the frame; before a person's next key, and between a held key's keys.
WARM_DELAY_S = 0.003
#: At most this many queue rows' problems are worked out per warm-up (``_warm_next``).
WARM_QUEUE_ROWS = 8
#: Seconds after mounting before every passage is verified for the queue's marks.
SCAN_DELAY_S = 0.5
#: Seconds after the latest change before the set-wide checks (duplicates, shared_passage) run
#: again in a worker for the problems line: a run of decisions starts one search, not one each.
SET_CHECKS_DELAY_S = 1.0
#: Links from which the near-duplicate worker indexes a cluster's links by member ahead
#: (``Cluster.member_rows``, read by the badge at each key); fewer take well under a
#: millisecond when the pair is first shown.
WARM_LINKS = 2_000
#: The compact layout (question, answer and verdict first; ``styles/app.tcss``, ``QAPanel.compact``)
#: applies at this many columns or fewer, or this many rows or fewer.
COMPACT_MAX_COLUMNS = 120
COMPACT_MAX_ROWS = 30
#: Below this many columns the queue is hidden too (``narrow``): its rows would show a few
#: characters of each question, and the panel needs the width (j/k still move through it).
NARROW_MIN_COLUMNS = 100
#: Queue mark of a pair that would fail a check if accepted (not shown on rejected pairs).
FAIL_MARK = "▲"
#: Queue mark of a passage no configured chunker holds wholly (``F``'s findability; shown when
#: the pair would fail no check, in the same column as ``FAIL_MARK``).
UNFINDABLE_MARK = "⊄"
#: Queue and head-line mark of a pair the curator wrote (``H``), before its question.
HAND_MARK = "✎"
#: The ``origin`` of a hand-written pair.
HAND_ORIGIN = "hand"
#: Every mark the queue and the QA panel show: (mark, where, meaning), for the help screen.
MARK_LEGEND: list[tuple[str, str, str]] = [
    ("·", "queue", "undecided"),
    ("✓", "queue", "accepted"),
    ("✗", "queue", "rejected"),
    ("»", "queue", "skipped"),
    ("⚑", "queue", "flagged"),
    ("≈", "queue", "passage found after normalizing (whitespace, typography or ASCII)"),
    ("~", "queue", "passage found only as a fuzzy match"),
    ("≠", "queue", "passage missing from its document"),
    ("∅", "queue", "empty passage"),
    ("(none)", "queue", "exact passage, or not verified yet since the last change"),
    ("!", "queue", "an input problem on the row (a load problem)"),
    ("▲", "queue", "the pair would fail a check if accepted (not on rejected pairs)"),
    ("⊄", "queue", "no configured chunker holds the passage wholly (after F)"),
    ("✎", "queue, head line", "a pair added by hand (H)"),
    ("≈N similar", "head line", "near-duplicates of this pair (d opens the cluster)"),
    ("shares its passage", "head line", "a shared-passage group (S): a warning, not duplicates"),
    ("note:", "head line", "the curator's note on the pair (N)"),
    ("✗", "panel problems", "a check the pair would fail if accepted, with the key that fixes it"),
    ("!", "panel problems", "a check the pair would warn about if accepted"),
    ("◇", "panel findability", "per chunker: the chunk holding the passage and BM25's rank (F)"),
]
#: Queue mark per verdict (exact passages have none).
VERDICT_MARK = {"exact": " ", "normalized": "≈", "fuzzy": "~", "missing": "≠", "empty": "∅"}

GLYPH = {Status.UNDECIDED: "·", Status.ACCEPTED: "✓", Status.REJECTED: "✗", Status.SKIPPED: "»",
         Status.FLAGGED: "⚑"}
#: The queue filter cycle of the ``v`` key: all pairs, then one status at a time.
FILTERS: tuple[Status | None, ...] = (None, Status.UNDECIDED, Status.ACCEPTED, Status.REJECTED,
                                      Status.SKIPPED, Status.FLAGGED)

def _key(key: str, action: str, description: str, **options) -> Binding:
    """One of the review screen's keys: a priority binding (see ``BINDINGS``)."""
    return Binding(key, action, description, priority=True, **options)


#: Every key but escape is a priority binding (``_key``): it reaches its action as soon as the
#: app reads it, instead of going first to the focused source viewer and bubbling up through its
#: containers (a message hop each, about 1.4 ms a key at 160x48: README, Performance); the arrows
#: and pages also move between pairs while the source viewer has focus, and the keys typed right
#: after `e` go to the dialog. ``ReviewScreen.check_action`` hands every key to a focused text
#: input.
BINDINGS = [
    _key("a", "accept", "accept", id="accept"),
    _key("x", "reject", "reject", id="reject"),
    _key("space", "skip", "skip", id="skip"),
    _key("f", "flag", "flag", id="flag"),
    _key("u,backspace", "undo", "undo", id="undo"),
    _key("j,down", "next", "next", id="next", show=False),
    _key("k,up", "previous", "prev", id="previous", show=False),
    _key("n", "next_undecided", "undecided", id="next_undecided"),
    _key("e", "edit", "edit", id="edit"),
    _key("slash", "search", "search", id="search"),
    _key("v", "cycle_filter", "filter", id="filter", show=False),
    _key("V", "filter_bar", "filter bar", show=False, id="filter_bar"),
    _key("full_stop", "match_step(1)", "next match", show=False, id="next_match"),
    _key("comma", "match_step(-1)", "previous match", show=False, id="previous_match"),
    _key("B", "bulk", "bulk action", show=False, id="bulk"),
    _key("question_mark", "help", "help", id="help"),
    _key("q", "quit", "quit", id="quit"),
    _key("pagedown", "source_page(1)", "source page down", show=False, id="source_page_down"),
    _key("pageup", "source_page(-1)", "source page up", show=False, id="source_page_up"),
    _key("c", "centre", "centre passage", show=False, id="centre"),
    _key("right_square_bracket,shift+down", "panel_page(1)", "panel down", show=False, id="panel_down"),
    _key("left_square_bracket,shift+up", "panel_page(-1)", "panel up", show=False, id="panel_up"),
    _key("s", "snap", "snap", id="snap"),
    _key("t", "trim", "trim", show=False, id="trim"),
    _key("m", "select_span", "select span", show=False, id="select_span"),
    _key("z", "shrink", "shrink", show=False, id="shrink"),
    _key("Z", "shrink_llm", "LLM shrink", show=False, id="shrink_llm"),
    _key("g", "gate", "check", id="gate"),
    _key("d", "cluster", "similar", id="cluster"),
    _key("D", "dedup", "dedup", id="dedup"),
    _key("S", "shared_passage", "shared passages", show=False, id="shared_passage"),
    _key("P", "publish", "publish", id="publish"),
    _key("r", "regenerate", "regen", id="regenerate"),
    _key("G", "generate_more", "generate more", show=False, id="generate_more"),
    _key("L", "semantic_dedup", "LLM dedup", show=False, id="semantic_dedup"),
    _key("w", "toggle_window", "chunk window", show=False, id="window"),
    _key("i", "repair_chunk_index", "repair chunk_index", show=False, id="repair_chunk_index"),
    _key("I", "repair_all_chunk_indexes", "repair every chunk_index", show=False, id="repair_all_chunk_indexes"),
    _key("T", "stats", "statistics", show=False, id="stats"),
    _key("C", "team", "team", show=False, id="team"),
    _key("F", "findability", "findability", show=False, id="findability"),
    _key("N", "note", "note", show=False, id="note"),
    _key("H", "hand_pair", "new pair by hand", show=False, id="hand_pair"),
    # not priority: escape goes to the focused widget first (it closes what is open there).
    Binding("escape", "cancel_findability", "cancel findability run", show=False, id="cancel_findability"),
]


class ReviewScreen(PromptFrames, KeepsPaintedLines, CurateAppAccess, Screen[None]):
    """Walk every pair of a ``ReviewSession``; see ``BINDINGS`` for the keys."""

    BINDINGS = BINDINGS
    AUTO_FOCUS = None

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.filter: Status | None = None
        #: The filter bar's criteria (``app.filters.Filter``); ``filter`` (the v cycle's status)
        #: replaces its statuses when set.
        self.view_filter = app_filters.Filter()
        self._view_line = ""
        #: (document key, query) -> the query's match spans in that document (the source's highlights).
        self._doc_matches: dict[tuple, list[Span]] = {}
        self._match_at = -1
        self.verdicts = Verdicts(session)
        self.dedup_threshold = neardup.DEFAULT_THRESHOLD
        self.show_window = False
        self._cluster_index: dict[int, neardup.Cluster] = {}
        #: pid -> its shared-passage group (different questions on the same evidence).
        self._shared_index: dict[int, neardup.Cluster] = {}
        self._clusters_ready = False
        #: The token pass (``_fill_token_cache``) has started: once per session.
        self._tokens_filled = False
        self._not_verbatim: set[int] = set()
        self._shown_doc: str | None = None
        self._shown_pair: int | None = None
        self._last_query = ""
        self._bars: dict[str, Text] = {}
        self._locate_timer: Timer | None = None
        #: A wrap of the next pairs' texts is scheduled (``_warm_next``).
        self._warming = False
        #: Decisions were made while keys waited, and the current pair is not shown yet
        #: (``_catch_up`` shows it, posted once: ``_catch_up_posted``).
        self._behind = False
        self._catch_up_posted = False
        #: Pairs shown so far (``_show_current``): painting ahead waits for the latest one's frame.
        self._shown_count = 0
        #: (pair, passage, chunk_index, pairs ahead) the locate timer or worker was last started for.
        self._locate_for: tuple | None = None
        self._set_checks_timer: Timer | None = None
        #: The set-wide checks' latest results (``checks.pair.set_check_results``).
        self._set_results: dict = {}
        #: The latest near-duplicate search's links (``app.clusters.search``), which the set
        #: checks group again after a decision instead of searching; None while one runs.
        self._search = None
        #: A near-duplicate search is running; the set checks wait for its links when asked then.
        self._clusters_searching = False
        self._set_checks_waiting = False
        #: pid -> (what the evaluation read, its problems, whether one fails): the queue's ▲ marks.
        self._fails: dict[int, tuple[tuple, list[PairProblem], bool]] = {}
        self._limits = Limits.resolve(session.dataset.profile, {})
        self.confirm_failing_accept = True
        #: Findability (issue 14): the per-pair cache (``app.findability.Findability``, made on
        #: mount), pid -> ``PairLines``, the line shown while there are none, pids being scored.
        self._findability = None
        self._find_lines: dict = {}
        self._find_note: str | None = "looking for a preview cache…"
        self._find_running = False
        self._find_pending: set[int] = set()
        self._find_failed: set[tuple[int, str, str]] = set()
        #: ``[preview] reference_size`` of the app's config file (``findable``'s limit).
        self._reference_size: int | None = None
        key_col = session.dataset.columns.get("doc_key", "document")
        self._key_column = key_col
        self._id_width = len(str(max(0, len(session) - 1)))
        self._key_width = min(10, max((len(p.doc_key) for p in session.pairs), default=4))

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Bar(id="source-bar")
        yield FilterBar(id="filter-bar")
        with StillHorizontal(id="main"):
            with StillVertical(id="queue-pane"):
                yield Bar(id="queue-title")
                yield PairList(self._row_text, self._row_class, id="queue")
            with StillVertical(id="pair-pane"):
                yield QAPanel(id="qa")
                yield Bar(id="doc-title")
                yield SourceViewer(id="source")
        yield Bar(id="progress")
        yield KeysFooter(compact=True)  # every key of the review screen fits a 150-column terminal

    def on_mount(self) -> None:
        from mtcb_curate.app.gate import resolve_limits
        from mtcb_curate.config import confirm_failing_accept

        config = self.curate_app.config_path
        try:
            self._limits = resolve_limits(self.session, config)
            self.confirm_failing_accept = confirm_failing_accept(config)
        except (CurateError, ValueError) as exc:
            self.notify(f"Config: {exc}; the defaults apply.", severity="warning", timeout=10, markup=False)
        self._refresh_source_bar()
        self._fit_layout()
        if hasattr(self.session.workspace, "on_reconnect"):  # a shared workspace: say when it reconnected
            self.session.workspace.on_reconnect = self._reconnected
        # Before the first pair is shown: its problems read [preview] reference_size.
        self._init_findability(config)
        start = self.session.first_undecided()
        self._apply_filter(None, keep=0 if start is None else start)
        self.set_interval(5.0, self._update_progress)
        # Once the first screen is up and has answered its first keys: the scan holds the GIL.
        self._later(SCAN_DELAY_S, self._scan_passages)

    def _refresh_source_bar(self) -> None:
        """The top bar: dataset, pairs (generated ones included), documents, source and why."""
        ds = self.session.dataset
        bar = Text()
        bar.append(" mtcb-curate ", style="bold reverse")
        bar.append(f" {printable(ds.name)} ", style="bold")
        added = self.session.pairs[len(ds.pairs):]
        by_hand = sum(1 for p in added if p.origin == HAND_ORIGIN)
        parts = [f"{len(added) - by_hand:,} generated"] * bool(len(added) - by_hand) + [f"{by_hand:,} by hand"] * bool(by_hand)
        pairs = f"{len(self.session):,} pairs" + (f" ({', '.join(parts)})" if parts else "")
        bar.append(f"· {pairs} ")
        # What must be seen comes before what may be cut at 80 columns: read-only and input
        # problems, then the documents, the source and why it was chosen.
        if self.session.read_only:
            bar.append(" READ-ONLY ", style="bold reverse yellow")
            bar.append(" ")
        if ds.problems:
            bar.append(f"⚑ {len(ds.problems)} input problem(s): flagged pairs carry the details ", style="yellow")
        bar.append(f"· {len(ds.documents):,} documents · ")
        where = f"bundled sample of {ds.name}" if ds.source.kind == "sample" else ds.source.location
        bar.append(printable(where, keep_newlines=False))
        if ds.source.reason:
            bar.append(f"  ({printable(ds.source.reason, keep_newlines=False)})", style="dim")
        self._set_bar("#source-bar", bar)

    def _later(self, delay: float, callback) -> Timer | None:
        """Run ``callback`` after ``delay`` seconds (0: after the next refresh; no timer)."""
        if delay > 0:
            return self.set_timer(delay, callback)
        self.call_after_refresh(callback)
        return None

    def _set_bar(self, selector: str, text: Text) -> None:
        """Update a one-row bar unless it already shows ``text``; its height is fixed in the
        stylesheet, so no layout pass is needed."""
        if self._bars.get(selector) != text:
            self._bars[selector] = text
            self.query_one(selector, Bar).update(text)

    # -- queue rows -------------------------------------------------------------------------

    def _row_text(self, pid: int, width: int) -> str:
        pair = self.session.pairs[pid]
        status = self.session.status(pid)
        r = self.verdicts.cached(pid)  # the CURRENT passage's verdict, when known: never a stale one
        mark = "!" if pair.problems else (VERDICT_MARK[r.verdict] if r is not None else " ")
        fails = FAIL_MARK if status != Status.REJECTED and self._pair_fails(pid) else " "
        if fails == " " and self._find_lines:
            lines = self._current_find_lines(pid)
            fails = UNFINDABLE_MARK if lines is not None and lines.fits_nowhere() else " "
        key = one_line(pair.doc_key, self._key_width)
        head = f"{GLYPH[status]}{mark}{fails}{pid:>{self._id_width}} {key:<{self._key_width}} "
        if pair.origin == HAND_ORIGIN:
            head += HAND_MARK + " "
        return head + one_line(self.session.view(pid).question, max(0, width - len(head)))

    # -- problems before acceptance -----------------------------------------------------------

    def problems(self, pid: int) -> list[PairProblem]:
        """The checks pair ``pid`` would fail or warn if accepted (``checks.pair``): the lexical
        ones now, the passage's from its cached verdict, the set-wide ones from the latest
        worker run. Cached per texts, verdict, set-wide results and findability (the queue's
        marks, the panel and an accept all ask for the same pair)."""
        sig = self._problems_signature(pid)
        hit = self._fails.get(pid)
        if hit is None or hit[0] != sig:
            cached = self.verdicts.cached(pid)
            lines = self._current_find_lines(pid)
            found = pair_problems(self.session, pid, self._limits, result=cached, set_results=self._set_results,
                                  placements=lines.placements() if lines is not None else None,
                                  reference_size=self._reference_size)
            hit = (sig, found, bool(failing(found)))
            self._fails[pid] = hit
        return list(hit[1])

    def _problems_signature(self, pid: int) -> tuple:
        """What ``problems(pid)`` depends on: its texts, verdict, set-wide results, findability,
        the checklist's limits and the reference chunk size."""
        v = self.session.view(pid)
        return (v.question, v.answer, v.passage, id(self.verdicts.cached(pid)), id(self._set_results),
                id(self._find_lines.get(pid)), self._limits, self._reference_size)

    def _problems_cached(self, pid: int) -> bool:
        """Whether ``problems(pid)`` would be read from its cache."""
        hit = self._fails.get(pid)
        return hit is not None and hit[0] == self._problems_signature(pid)

    def _pair_fails(self, pid: int) -> bool:
        """Whether ``pid`` would fail a check if accepted (``problems``, cached)."""
        self.problems(pid)
        return self._fails[pid][2]

    def _key_label(self, key: str) -> str:
        """A default key of this screen as bound now (the ``[keys]`` table may rebind it)."""
        for b in BINDINGS:
            if b.id and key in b.key.split(","):
                return self.curate_app.keymap.get(b.id, key).split(",")[0]
        return key

    def _problems_text(self, pid: int) -> Text:
        return problems_text(self.problems(pid), self._key_label)

    # -- findability (issue 14) -------------------------------------------------------------------

    def _init_findability(self, config) -> None:
        """Make the per-pair findability cache from the ``[preview]`` settings and read what an
        earlier preview cached, in a worker (nothing is chunked until ``F``)."""
        from mtcb_curate.app.findability import Findability
        from mtcb_curate.preview.chunkers import DEFAULT_SPECS, parse_spec
        from mtcb_curate.preview.settings import PreviewSettings

        try:
            settings = PreviewSettings.resolve(config)
        except (CurateError, ValueError, OSError) as exc:
            self.notify(f"Config: {exc}; the default [preview] settings apply.", severity="warning",
                        timeout=10, markup=False)
            settings = PreviewSettings(tuple(parse_spec(x) for x in DEFAULT_SPECS))
        self._findability = Findability(self.session, settings, getattr(self.session.workspace, "path", None))
        self._reference_size = settings.reference_size
        self._later(SCAN_DELAY_S, self._load_findability)

    def _current_find_lines(self, pid: int):
        """Pair ``pid``'s findability for its CURRENT texts (``PairLines``), or None."""
        lines = self._find_lines.get(pid)
        if lines is None:
            return None
        v = self.session.view(pid)
        return lines if (lines.question, lines.passage) == (v.question, v.passage) else None

    def _findability_text(self, pid: int, rescore: bool = True) -> Text:
        """The panel's findability lines for ``pid``; ``rescore``: start scoring a pair edited
        since the last run (not for a pair only wrapped ahead)."""
        lines = self._current_find_lines(pid)
        retriever = self._findability.settings.retriever if self._findability is not None else "bm25"
        if lines is not None:
            return findability_text(lines, retriever)
        if self._find_lines and not self._find_running:
            v = self.session.view(pid)
            if (pid, v.question, v.passage) in self._find_failed:
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
            lines = self._findability.load()
        except Exception as exc:  # noqa: BLE001 - the line says it; the review goes on
            lines, error = None, f"could not read the preview cache: {one_line(str(exc), 200)}"
        else:
            error = None
        if not worker.is_cancelled:
            self.post_message(FindabilityLoaded(lines, error))

    def action_findability(self) -> None:
        """Chunk the corpus with every configured chunker, index it and score every pair, in a
        worker (progress on the findability line; esc cancels). Cached: a second run is quick."""
        if self._findability is None or self._find_running:
            return
        self._find_running = True
        self._find_note = "starting… (esc cancels)"
        self._show_current()
        self._compute_findability()

    @work(thread=True, exclusive=True, group="findability", exit_on_error=False)
    def _compute_findability(self) -> None:
        from mtcb_curate.app.findability import Cancelled

        import time

        worker = get_current_worker()
        last = [0.0, ""]

        def progress(what: str, done: int, total: int) -> None:
            now = time.monotonic()  # at most 5 redraws a second, and each new step
            if what != last[1] or now - last[0] >= 0.2 or done == total:
                last[:] = [now, what]
                self.post_message(FindabilityProgress(what, done, total))

        try:
            lines = self._findability.compute_all(progress, cancelled=lambda: worker.is_cancelled)
        except Cancelled:
            self.post_message(FindabilityLoaded(None, "cancelled (what was chunked is cached; F resumes)"))
            return
        except Exception as exc:  # noqa: BLE001 - one plain line, the review goes on
            self.post_message(FindabilityLoaded(None, f"failed: {one_line(str(exc), 200)}"))
            return
        self.post_message(FindabilityLoaded(lines))

    def action_cancel_findability(self) -> None:
        """Cancel a running findability run (``F``)."""
        if self._find_running:
            self.workers.cancel_group(self, "findability")
            self._find_note = "cancelling…"
            self._show_current()

    @on(FindabilityProgress)
    def _findability_progress(self, message: FindabilityProgress) -> None:
        if not self._find_running:
            return
        count = f" {message.done:,}/{message.total:,}" if message.total else ""
        self._find_note = f"{message.what}{count}… (esc cancels)"
        pid = self.queue.current
        if pid is None or self._current_find_lines(pid) is None:
            self._show_current()

    @on(FindabilityLoaded)
    def _findability_loaded(self, message: FindabilityLoaded) -> None:
        self._find_running = False
        if message.lines is not None:
            self._find_lines = message.lines
        elif message.error is not None:
            self._find_note = message.error + " · press F to compute"
        else:
            self._find_note = "press F to compute (chunks the corpus once)"
        if message.error is not None and message.lines is None and self._find_lines:
            self.notify(f"Findability: {message.error}", timeout=5, markup=False)
        self.queue.refresh()
        self._show_current()

    def _rescore_findability(self, pid: int) -> None:
        """Score pair ``pid`` again for its current texts (after an edit or repair), when the
        findability is known (only that pair is scored; the cache does the rest)."""
        if self._findability is None or not self._find_lines or pid in self._find_pending:
            return
        v = self.session.view(pid)
        if self._current_find_lines(pid) is not None or (pid, v.question, v.passage) in self._find_failed:
            return
        self._find_pending.add(pid)
        self._score_pair_findability(pid)

    @work(thread=True, exclusive=False, group="findability_pair", exit_on_error=False)
    def _score_pair_findability(self, pid: int) -> None:
        try:
            lines = self._findability.score_pair(pid)
        except Exception:  # noqa: BLE001 - the line keeps saying "scoring"; F runs it all again
            lines = None
        self.post_message(FindabilityPairScored(pid, lines))

    @on(FindabilityPairScored)
    def _findability_pair_scored(self, message: FindabilityPairScored) -> None:
        self._find_pending.discard(message.pid)
        if message.lines is not None:
            self._find_lines = {**self._find_lines, message.pid: message.lines}
        else:  # not retried for these texts (the line says so; F computes everything again)
            v = self.session.view(message.pid)
            self._find_failed.add((message.pid, v.question, v.passage))
        self.queue.refresh_pair(message.pid)
        if self._shown_pair == message.pid:
            self._show_current()

    def _schedule_set_checks(self, delay: float = SET_CHECKS_DELAY_S) -> None:
        """Run the set-wide checks again after ``delay`` seconds without another change."""
        if self._set_checks_timer is not None:
            self._set_checks_timer.stop()
        self._set_checks_timer = self._later(delay, self._start_set_checks)

    def _start_set_checks(self) -> None:
        """Start the set checks, unless a near-duplicate search is running: they then wait for
        its links (``_clusters_found``) instead of searching the whole set a second time."""
        if self._clusters_searching:
            self._set_checks_waiting = True
            return
        self._set_checks_waiting = False
        self._run_set_checks()

    @work(thread=True, exclusive=True, group="set_checks", exit_on_error=False)
    def _run_set_checks(self) -> None:
        """duplicates and shared_passage over every pair not rejected, for the problems line."""
        worker = get_current_worker()
        try:
            with self._start_up_pass():
                results = set_check_results(self.session, threshold=self.dedup_threshold, limits=self._limits,
                                            search=self._search)
        except Exception:  # noqa: BLE001 - the problems line goes on without them
            results = None
        trim_heap()
        if not worker.is_cancelled:
            self.post_message(SetChecksDone(results))

    @on(SetChecksDone)
    def _set_checks_done(self, message: SetChecksDone) -> None:
        if not self._clusters_searching:
            self._start_token_fill()
        if message.results is None:  # failed: the problems line goes on without them
            return
        self._set_results = message.results
        self.queue.refresh()
        self._show_current()
        self._refreeze()  # what taking them made, out of the young collections

    def _row_class(self, pid: int) -> str:
        return self.session.status(pid).value

    @property
    def queue(self) -> PairList:
        return self.query_one(PairList)

    def _combined_filter(self) -> app_filters.Filter:
        """The view: the filter bar's criteria, with the v cycle's status when one is set."""
        f = self.view_filter
        return f if self.filter is None else replace(f, statuses=frozenset({self.filter}))

    def _verdict_of(self, pid: int) -> str | None:
        r = self.verdicts.cached(pid)
        return None if r is None else str(r.verdict)

    def _view_ids(self, ids=None) -> list[int]:
        """The ids of the current view (``ids``: only among these)."""
        if self.view_filter.empty and ids is None:
            return self.session.ids(self.filter)
        try:
            return app_filters.apply(self.session, self._combined_filter(), verdict_of=self._verdict_of,
                                     problems=self.problems, ids=ids)
        except app_filters.FilterError:  # parse() checked it; a pattern never turns bad later
            return []

    def _in_view(self, pid: int) -> bool:
        if self.view_filter.empty:
            return self.filter is None or self.session.status(pid) == self.filter
        return bool(self._view_ids([pid]))

    def _apply_filter(self, status: Status | None, keep: int | None) -> None:
        self.filter = status
        ids = self._view_ids()
        self.queue.set_ids(ids, keep=keep)
        self._refresh_queue_title(len(ids))
        self._show_current()
        self._update_progress()

    # -- showing the current pair -------------------------------------------------------------

    def _show_current(self) -> None:
        self._behind = False
        self._refresh_queue_title()
        pid = self.queue.current
        panel = self.query_one(QAPanel)
        viewer = self.query_one(SourceViewer)
        self._shown_pair = pid
        if pid is None:
            panel.show(None)
            viewer.show_message("no pair in this view (v changes the view)")
            self._shown_doc = None
            self._set_bar("#doc-title", Text())
            return
        view = self.session.view(pid)
        doc = self.session.dataset.document_for(view.pair)
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
        self._shown_count += 1
        if not self._warming:
            self._warming = True
            self.call_after_refresh(self._after_frame, self._shown_count)
        ahead = self._ahead()
        key = (pid, view.passage, self.session.pairs[pid].chunk_index, ahead)
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
                                             lambda: self._complete_verdict(pid, ahead, ahead_at))

    def _panel_args(self, pid: int, view, doc, shown: bool = True) -> dict:
        """What ``QAPanel.show`` (or ``warm``) takes for pair ``pid``: its view, verdict (None
        for an unverified pair of a very large document: its search, tens of ms per key on a
        50 MB filing, waits for the locate worker and the panel says "checking"), badges,
        problems, findability and the filter's matches. ``shown``: for the pair going on
        screen (a pair only wrapped ahead starts no findability scoring)."""
        if doc is None:
            result, pending = self.verdicts.quick(pid), False
        else:
            result = self.verdicts.quick_inline(pid)
            pending = result is None or not self.verdicts.is_complete(pid)
        return dict(view=view, result=result, pending=pending, key_column=self._key_column,
                    extra=self._badges(pid), problems=self._problems_text(pid),
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
        A key read from the terminal meanwhile (a held key's next one) stops it between two
        steps: the key is not kept waiting, and what was made is kept."""
        if shown != self._shown_count:
            self.call_after_refresh(self._after_frame, self._shown_count)
            return
        self._warming = False
        queue = self.queue
        if queue.cursor < 0 or not queue.ids:
            return
        row = queue.cursor + 1  # what a decision or j shows next (k goes back to a pair just wrapped)
        holds = self.app.key_holds
        read = holds.read

        def key_read() -> bool:
            return holds.read != read

        self._wrap_row(row, stop=key_read, index=True)
        # The queue rows a page ahead: their marks read each pair's problems (about 0.5 ms a
        # pair), which a half-page scroll would otherwise work out for 20 rows in one frame.
        budget = WARM_QUEUE_ROWS
        for pid in queue.ids[row:row + max(1, queue.size.height)]:
            if budget == 0 or key_read():
                break
            if not self._problems_cached(pid):
                self.problems(pid)
                budget -= 1

    def _wrap_row(self, row: int, stop: Callable[[], bool] | None = None, index: bool = False) -> None:
        """Wrap what the queue's row ``row`` shows (its QA panel rows and, in the same document,
        its source rows; another document's line index), without showing it. ``stop``: checked
        between sections and rows; True ends the wrapping there (what was wrapped is kept; an
        index of another document, which cannot be cut short, is then not started)."""
        if not 0 <= row < len(self.queue.ids):
            return
        pid = self.queue.ids[row]
        view = self.session.view(pid)
        doc = self.session.dataset.document_for(view.pair)
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
        if self.queue.cursor >= 0 and not self._keys_waiting():
            self._wrap_row(self.queue.cursor + 1, stop=committed)

    def _source_spans(self, view, doc, result: PairResult | None) -> list[Span]:
        """The source viewer's highlights for a pair: its located passage, its chunk's
        window, and the queue filter's text matches in ``doc``."""
        spans = (self._spans(result) if result is not None else []) + self._window_spans(view.pair)
        return spans + self._match_spans(doc)

    def _ahead(self) -> tuple[int, ...]:
        """The next :data:`LOCATE_AHEAD` pairs of the queue after the cursor whose full check
        has not run (the pairs a decision or ``j`` shows next)."""
        queue = self.queue
        ids = queue.ids[queue.cursor + 1:queue.cursor + 1 + LOCATE_AHEAD] if queue.cursor >= 0 else []
        return tuple(p for p in ids if not self.verdicts.is_complete(p))

    def _badges(self, pid: int) -> Text:
        """Badges for the head line: ``≈N similar`` when the pair is in a near-duplicate cluster,
        ``shares its passage with #N`` when it is in a shared-passage group."""
        badges = similar_badge(self._cluster_index.get(pid), pid)
        shared = shared_badge(self._shared_index.get(pid), pid)
        if shared.plain:
            if badges.plain:
                badges.append("   ")
            badges.append_text(shared)
        note = self.session.note(pid)
        if note:
            badges.append("\n" if badges.plain else "")
            badges.append("note: ", style="bold magenta")
            badges.append(printable(note, keep_newlines=False))  # the curator's text: plain, never markup
        return badges

    @staticmethod
    def _spans(r: PairResult) -> list[Span]:
        if r.start is None or r.end is None or r.end <= r.start:
            return []
        kind = {"exact": "exact", "normalized": "normalized", "fuzzy": "closest"}.get(r.verdict, "closest")
        return [Span(r.start, r.end, kind)]

    def _window_spans(self, pair) -> list[Span]:
        """The bounds of the pair's chunk_index window (8,192 tokens) when ``w`` has turned them
        on; the document is tokenized in a worker the first time (about 0.1 s per MB)."""
        if not self.show_window or pair.chunk_index is None:
            return []
        cached = self.verdicts.index.cached_windows(pair.doc_key)
        if cached is None:
            self._tokenize(pair.doc_key)
            return []
        if 0 <= pair.chunk_index < len(cached):
            w = cached[pair.chunk_index]
            return [Span(w.start, w.end, "window")]
        return []

    @work(thread=True, exclusive=True, group="windows", exit_on_error=False)
    def _tokenize(self, key: str) -> None:
        self.verdicts.index.windows(key)
        if not get_current_worker().is_cancelled:
            self.post_message(WindowTokenized(key))

    @on(WindowTokenized)
    def _window_tokenized(self, message: WindowTokenized) -> None:
        self._show_current()

    def action_toggle_window(self) -> None:
        """Show or hide the bounds of the pair's chunk_index window in the source."""
        self.show_window = not self.show_window
        pid = self.queue.current
        pair = self.session.pairs[pid] if pid is not None else None
        if self.show_window and pair is not None and pair.chunk_index is None:
            self.notify("This pair has no chunk_index: no window to show.", timeout=3)
        self._show_current()

    @work(thread=True, exclusive=True, group="locate", exit_on_error=False)
    def _complete_verdict(self, pid: int, ahead: tuple[int, ...] = (), ahead_at: float = 0.0) -> None:
        worker = get_current_worker()
        for p in (pid, *ahead):
            while p != pid and time.monotonic() < ahead_at and not worker.is_cancelled:
                time.sleep(0.05)  # the look-ahead waits until the pair has been read a moment
            if worker.is_cancelled:
                return
            if self.verdicts.is_complete(p):
                continue
            passage = self.session.view(p).passage
            before = self.verdicts.cached(p)
            after = self.verdicts.complete(p)
            # A pair ahead is announced only when its queue mark may change (the verdict
            # itself): otherwise reading it later finds the cached result, and no frame is drawn.
            if not worker.is_cancelled and (p == pid or before is None or before.verdict != after.verdict):
                self.post_message(VerdictCompleted(p, passage))

    @on(VerdictCompleted)
    def _verdict_completed(self, message: VerdictCompleted) -> None:
        pid, passage = message.pid, message.passage
        if self.session.view(pid).passage != passage:
            return
        self._recheck(pid)  # also when the curator has moved on: the queue's mark
        if self._shown_pair == pid:
            self._show_current()
        else:
            self.queue.refresh_pair(pid)

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def _scan_passages(self) -> None:
        """Verify every passage (exact and normalized search) to mark the queue."""
        with self._start_up_pass():
            self.verdicts.scan()
            app_filters.warm(self.session)  # a first text query reads these instead of building them
        trim_heap()
        if not get_current_worker().is_cancelled:
            self.post_message(PassagesScanned(self.verdicts.not_exact()))

    @on(PassagesScanned)
    def _scanned(self, message: PassagesScanned) -> None:
        self._not_verbatim = message.bad
        self.queue.refresh()
        self._update_progress()
        self._refreeze()
        self._find_clusters()
        self._schedule_set_checks(0)

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
        threshold = self.dedup_threshold
        try:
            with self._start_up_pass():
                search = clusters.search(self.session, threshold=threshold, located=self.verdicts.verbatim_spans(),
                                         workers=1)
                found, shared = clusters.groups(self.session, search)
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

    @on(SharedIndexFound)
    def _shared_found(self, message: SharedIndexFound) -> None:
        self._shared_index = message.index  # shown with the clusters' badge, which follows

    @on(ClusterSearchFailed)
    def _clusters_failed(self, message: ClusterSearchFailed) -> None:
        self._clusters_searching = False
        if self._set_checks_waiting:
            self._schedule_set_checks(0)
        self.notify(f"Near-duplicate search failed: {message.error}", severity="warning", markup=False)

    @on(ClustersFound)
    def _clusters_found(self, message: ClustersFound) -> None:
        self._cluster_index = message.index
        self._clusters_ready = True
        self._clusters_searching = False
        if self._set_checks_waiting:
            self._schedule_set_checks(0)
        self._refreeze()
        self._show_current()  # the badge of the pair on screen
        if not self._set_checks_waiting:
            self._start_token_fill()
        # else after the set checks: one start-up pass at a time, each already competes with
        # the keys for the GIL

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
                self.verdicts.fill_token_cache(lambda: worker.is_cancelled)
        finally:
            if tokens.release_encoding():
                trim_heap()

    def action_cluster(self) -> None:
        """Open the current pair's near-duplicate cluster side by side."""
        pid = self.queue.current
        if pid is None:
            return
        cluster = self._cluster_index.get(pid)
        if cluster is None:
            msg = "not in a near-duplicate cluster" if self._clusters_ready else "still looking for near-duplicates…"
            self.notify(f"#{pid}: {msg}", timeout=3)
            return
        screen = ClusterScreen(self.session, cluster, chosen_id=pid)

        def done(opened: int | None) -> None:
            if screen.changed:  # kept one or "not duplicates": the cluster is settled now,
                self._forget_duplicates(cluster.ids)  # before the set-wide checks run again
            self._dedup_closed(opened)

        self.app.push_screen(screen, done)

    def _forget_duplicates(self, ids) -> None:
        """Drop the ``duplicates`` problems of ``ids`` from the latest set-wide results (a new
        dict: the queue's marks are cached per results), so accepting one does not ask about
        a cluster just settled while the worker has not run again."""
        old = self._set_results.get("duplicates")
        if old is None:
            return
        gone = set(ids)
        self._set_results = {**self._set_results, "duplicates": replace(
            old, pairs=[i for i in old.pairs if i not in gone],
            reasons={i: r for i, r in old.reasons.items() if i not in gone}, failing=old.failing - gone)}

    def action_dedup(self) -> None:
        """Every unresolved near-duplicate cluster, largest first."""
        screen = DedupScreen(self.session, threshold=self.dedup_threshold)

        def done(pid: int | None) -> None:
            self.dedup_threshold = screen.threshold
            self._dedup_closed(pid)

        self.app.push_screen(screen, done)

    def action_shared_passage(self) -> None:
        """Every shared-passage group (different questions on the same or overlapping passage);
        ``n`` there marks one "distinct questions on shared evidence"."""
        self.app.push_screen(SharedPassageScreen(self.session, threshold=self.dedup_threshold), self._dedup_closed)

    def _dedup_closed(self, pid: int | None) -> None:
        """Back from the cluster or dedup screen: statuses may have changed; show ``pid`` if given."""
        self._after_change(pid if pid is not None and 0 <= pid < len(self.session) else None,
                           rebuild_queue=True, clusters=True)

    # -- progress -----------------------------------------------------------------------------

    def _update_progress(self) -> None:
        s = self.session
        c = s.counts()
        total = len(s)
        t = Text()
        # what the checklist's `reviewed` counts: accepted or rejected (skipped, flagged are not)
        pct = 100.0 * s.settled / total if total else 0.0
        t.append(f" decided {s.settled:,}/{total:,} ({pct:.0f}%) ", style="bold")
        t.append(f" ✓ {c[Status.ACCEPTED]:,} accepted ", style="green")
        t.append(f" ✗ {c[Status.REJECTED]:,} rejected ", style="red")
        t.append(f" » {c[Status.SKIPPED]:,} skipped ", style="dim")
        t.append(f" ⚑ {c[Status.FLAGGED]:,} flagged ", style="yellow")
        rate = s.rate_per_hour()
        t.append(f"  {rate:,.0f} pairs/h " if rate is not None else "  — pairs/h ", style="bold")
        if self._not_verbatim:
            t.append(f"  ≠ {len(self._not_verbatim):,} passages not verbatim", style="dim")
        self._set_bar("#progress", t)

    # -- decisions ----------------------------------------------------------------------------

    def _decide(self, status: Status, reason: str | None = None) -> None:
        pid = self.queue.current
        if pid is None:
            return
        if self.session.read_only:
            self.notify("The workspace is open read-only: nothing can be decided.", severity="warning")
            return
        try:
            # where the commit waits on a server, the pair it leads to is wrapped meanwhile
            self.session.decide(pid, status, reason, meanwhile=self._prepare_next)
        except CurateError as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self._after_change(pid, advance=True)

    def _after_change(self, pid: int | None, *, rebuild_queue: bool = False, advance: bool = False,
                      clusters: bool = False) -> None:
        """The one refresh after anything changed pair ``pid`` (a decision, an undo, an edit, a
        repair, a dialog's keep-one or added pairs): every view of the session is redrawn.

        ``pid``'s passage is verified again (not after a decision: its texts did not change);
        ``clusters``: its question or passage changed, so the near-duplicate clusters are
        searched again. ``advance`` (a decision): the cursor goes to the next row, or the row
        leaves a view of one status it no longer has. ``rebuild_queue``: pairs were added or
        removed or statuses changed elsewhere: the queue is rebuilt from the session, with the
        source bar, and ``pid`` is shown (the view switches to all when it does not hold it; an
        unknown ``pid`` or None keeps the cursor where it is).
        """
        if pid is not None and pid >= 0 and not advance:
            self._recheck(pid)
            self._rescore_findability(pid)
        if clusters:
            self._find_clusters()
        if clusters or rebuild_queue or (advance and pid is not None
                                         and self.session.status(pid) == Status.REJECTED):
            # the set of pairs or their texts changed: grouped again from the latest search's
            # links when its texts are still the current ones, else searched
            self._schedule_set_checks()
        queue = self.queue
        if rebuild_queue:
            valid = pid is not None and 0 <= pid < len(self.session)
            self._id_width = len(str(max(0, len(self.session) - 1)))
            self._refresh_source_bar()
            keep = pid if valid or queue.current is None else queue.current
            holds = not valid or self.filter is None or self.session.status(keep) == self.filter
            self._apply_filter(self.filter if holds else None, keep=keep)  # draws the pair and progress
            if valid and self.queue.current != pid and not self.view_filter.empty and not self._in_view(pid):
                self.notify(f"#{pid} is not in this view (V changes the filter).", timeout=3)
            return
        if pid is None:
            return
        if advance and not self._in_view(pid):
            queue.remove(pid)
            self._refresh_queue_title(len(queue.ids))
        else:
            queue.refresh_pair(pid)
            if advance:
                if queue.cursor + 1 < len(queue.ids):
                    queue.move_by(1)
                else:
                    self.notify("End of the queue (n: next undecided pair).", timeout=3)
        if advance:
            # Keys waiting (a held key, keys faster than frames): the queue's cursor has moved
            # and the decision is saved; the panel, the source and the bars show the pair the
            # last of those keys leads to, once they are handled, instead of being built for
            # every pair passed over.
            self._behind = True
            self._catch_up()
            return
        self._show_current()
        self._update_progress()

    def _keys_waiting(self) -> bool:
        """A key event is waiting in the app's message queue or was peeked from it (read
        without taking it; Textual's own queue keeps its messages in ``values``)."""
        app = self.app
        if isinstance(getattr(app, "_pending_message", None), events.Key):
            return True
        return any(isinstance(m, events.Key) for m in getattr(app._message_queue, "values", ()))

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

    def _refresh_queue_title(self, n: int | None = None) -> None:
        """The queue's title: the view, its size and the cursor's row (the queue has no
        scrollbar: repainting a 45-row scrollbar cost about 3 ms a key)."""
        queue = self.queue
        n = len(queue.ids) if n is None else n
        name = "all" if self.filter is None else self.filter.value
        row = f" · row {min(queue.cursor + 1, n):,}/{n:,}" if n else ""
        if self.view_filter.empty:
            self._set_bar("#queue-title",
                Text.assemble(("Queue ", "bold"), f"· {name} ({n:,}){row} · v: change view"))
            return
        line = self._combined_filter().describe()
        self._set_bar("#queue-title", Text.assemble(("view: ", "bold"), f"{n:,} of {len(self.session):,} · ",
                                                    (one_line(line, 60), "italic"), f"{row} · V: filter"))

    def action_accept(self) -> None:
        """Accept the current pair and go to the next one. When it would fail a check (and
        ``[review] confirm_failing_accept`` is on), ask once first: a/enter accepts, esc not."""
        pid = self.queue.current
        if pid is None or not self.confirm_failing_accept or self.session.read_only:
            self._decide(Status.ACCEPTED)
            return
        fails = failing(self.problems(pid))
        if not fails:
            self._decide(Status.ACCEPTED)
            return
        ids = ", ".join(dict.fromkeys(p.check_id for p in fails))

        def done(yes: bool | None) -> None:
            if yes and self.queue.current == pid:
                self._decide(Status.ACCEPTED)

        self.app.push_screen(ConfirmScreen(f"#{pid} fails {ids}: accept anyway? a/enter yes, esc no"), done)

    def action_reject(self) -> None:
        """Reject the current pair, with an optional reason, and go to the next one."""
        pid = self.queue.current
        if pid is None:
            return

        def done(reason: str | None) -> None:
            if reason != CANCEL and self.queue.current == pid:
                self._decide(Status.REJECTED, reason)

        self.app.push_screen(RejectScreen(pid), done)

    def action_skip(self) -> None:
        """Skip the current pair (decide later) and go to the next one."""
        self._decide(Status.SKIPPED)

    def action_flag(self) -> None:
        """Flag the current pair for a second look and go to the next one."""
        self._decide(Status.FLAGGED)

    def action_undo(self) -> None:
        """Undo the latest decision or edit, and show its pair."""
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return
        try:
            pid = self.session.undo()
        except CurateError as exc:
            self.notify(f"Undo failed: {exc}", severity="error", timeout=10, markup=False)
            return
        if pid is None:
            self.notify("Nothing to undo.", timeout=2)
            return
        # Rebuilt even in the "all" view: an undone added pair leaves the queue; an undone edit
        # may move the pair into or out of a near-duplicate cluster.
        self._after_change(pid, rebuild_queue=True, clusters=True)

    # -- navigation ---------------------------------------------------------------------------

    def action_next(self) -> None:
        """Go to the next pair in the view."""
        self.queue.move_by(1)
        self._show_current()

    def action_previous(self) -> None:
        """Go to the previous pair in the view."""
        self.queue.move_by(-1)
        self._show_current()

    def action_next_undecided(self) -> None:
        """Go to the next undecided pair (switching the view to show it if needed); in a team's
        work split, the next pair handed to this curator (``app.team.next_pair``)."""
        from mtcb_curate.app import team

        current = self.queue.current
        try:
            pid = team.next_pair(self.session, -1 if current is None else current)
        except CurateError as exc:
            self.notify(str(exc), severity="error", timeout=8, markup=False)
            return
        if pid is None:
            self.notify("Every pair has a decision." if not team.is_team(self.session) else
                        "Nothing left to hand you: every pair is decided or held by another curator.", timeout=3)
            return
        if not self.queue.move_to(pid):
            self._apply_filter(None, keep=pid)
            return
        self._show_current()

    def action_cycle_filter(self) -> None:
        """Show all pairs, or only those of one status (cycles)."""
        nxt = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        self._apply_filter(nxt, keep=self.queue.current)

    # -- the filter bar, text matches, bulk actions ------------------------------------------------

    def action_filter_bar(self) -> None:
        """Open the filter bar (every criterion: status, verdict, checks, document, edited,
        generated, by hand, note, text or regex); enter applies, esc closes."""
        bar = self.query_one(FilterBar)
        bar.open(self._combined_filter().describe() if not self.view_filter.empty else "")

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
        self.view_filter = replace(f, statuses=frozenset()) if len(f.statuses) <= 1 else f
        status = next(iter(f.statuses)) if len(f.statuses) == 1 else None
        self._doc_matches.clear()
        self._match_at = -1
        self._apply_filter(status, keep=self.queue.current)
        if not self.queue.ids:
            self.notify("No pair passes this filter (V changes it; an empty line clears it).", timeout=4)
        elif not f.empty:  # the queue and its title are hidden in the narrow layout
            self.notify(f"view: {len(self.queue.ids):,} of {len(self.session):,} pairs", timeout=3)

    def _text_matches(self):
        """text -> the view's text-query matches in it, or None without a query."""
        f = self.view_filter
        if not f.text:
            return None
        return lambda text: app_filters.match_spans(f, text, limit=200)

    def _match_spans(self, doc) -> list[Span]:
        """The text query's matches in ``doc`` (cached per document and query), as spans."""
        f = self.view_filter
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
        pid = self.queue.current
        doc = None if pid is None else self.session.dataset.document_for(self.session.pairs[pid])
        spans = [] if doc is None else self._match_spans(doc)
        if not self.view_filter.text:
            self.notify("No text in the filter (V sets one).", timeout=3)
            return
        if not spans:
            self.notify("No match in this source.", timeout=3)
            return
        self._match_at = (self._match_at + direction) % len(spans)
        self.query_one(SourceViewer).scroll_to_offset(spans[self._match_at].start)
        self.notify(f"match {self._match_at + 1:,} of {len(spans):,} in this source", timeout=2)

    def _view_scope(self) -> str:
        return "all pairs" if self.view_filter.empty and self.filter is None else \
            (self._combined_filter().describe() or "all pairs")

    def _clusters_shown(self) -> list[list[int]]:
        seen, out = set(), []
        for c in self._cluster_index.values():
            if c.ids not in seen:
                seen.add(c.ids)
                out.append(list(c.ids))
        return out

    def action_bulk(self) -> None:
        """A bulk action over every pair of the view (menu with counts; asks once; one undo)."""
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return
        ids = list(self.queue.ids)
        if not ids:
            self.notify("No pair in this view.", timeout=3)
            return
        counts = {}
        for action, (_label, slow) in app_bulk.ACTIONS.items():
            if not slow and action != app_bulk.REJECT:
                counts[action] = len(app_bulk.plan(self.session, action, ids,
                                                   clusters=self._clusters_shown()).touched)
        counts[app_bulk.REJECT] = sum(1 for pid in ids if self.session.status(pid) != Status.REJECTED)

        def picked(action: str | None) -> None:
            if action is not None:
                self.run_bulk(action, ids)

        self.app.push_screen(BulkScreen(len(ids), self._view_scope(), counts), picked)

    def run_bulk(self, action: str, ids: list[int] | None = None) -> None:
        """Bulk ``action`` (``app.bulk.ACTIONS``) over ``ids`` (default: the view): a reject asks
        its reason first; then the count, one confirmation, ONE undo step (the palette's entries)."""
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return
        ids = list(self.queue.ids) if ids is None else ids
        if not ids:
            self.notify("No pair in this view.", timeout=3)
            return
        if action == app_bulk.REJECT:
            def reason(r: str | None) -> None:
                if r != CANCEL:
                    self._plan_bulk(action, ids, r)
            self.app.push_screen(RejectScreen(None, count=len(ids)), reason)
            return
        self._plan_bulk(action, ids, None)

    def _plan_bulk(self, action: str, ids: list[int], reason: str | None) -> None:
        if app_bulk.ACTIONS[action][1]:
            self.notify(f"Counting what {action} changes over {len(ids):,} pairs ...", timeout=3)
            self._plan_bulk_worker(action, ids, reason)
            return
        self._confirm_bulk(app_bulk.plan(self.session, action, ids, reason=reason, verdicts=self.verdicts,
                                         clusters=self._clusters_shown(), config=self.curate_app.config_path))

    @work(thread=True, exclusive=True, group="bulk_plan", exit_on_error=False)
    def _plan_bulk_worker(self, action: str, ids: list[int], reason: str | None) -> None:
        worker = get_current_worker()
        try:
            p = app_bulk.plan(self.session, action, ids, reason=reason, verdicts=self.verdicts,
                              config=self.curate_app.config_path, cancelled=lambda: worker.is_cancelled)
        except Exception as exc:  # noqa: BLE001 - reported, nothing written
            self.app.call_from_thread(self.notify, f"Bulk {action} failed: {exc}", severity="error",
                                      timeout=10, markup=False)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._confirm_bulk, p)

    def _confirm_bulk(self, p) -> None:
        label = app_bulk.ACTIONS[p.action][0]
        n = len(p.touched)
        if not n:
            left = f" ({len(p.skipped):,} left out: {next(iter(p.skipped.values()))})" if p.skipped else ""
            self.notify(f"Bulk {label}: no pair of this view to change{left}.", timeout=5, markup=False)
            return

        def done(yes: bool | None) -> None:
            if not yes:
                return
            try:
                result = app_bulk.apply(self.session, p)
            except CurateError as exc:
                self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
                return
            edits = p.action in (app_bulk.SNAP, app_bulk.TRIM, app_bulk.SHRINK)
            if edits:
                for pid in result.touched:
                    self._recheck(pid)
            if p.action == app_bulk.NOT_DUPLICATES:
                self._forget_duplicates(result.touched)
            if edits or p.action == app_bulk.NOT_DUPLICATES:
                self._find_clusters()
            self._schedule_set_checks()
            self._apply_filter(self.filter, keep=self.queue.current)  # the view stays; its pairs change
            self.notify(f"Bulk {label}: {result.count:,} pairs changed (u undoes all of it).", timeout=5)

        reason = f" (reason: {p.changes[p.touched[0]][1]})" if p.action == app_bulk.REJECT and p.changes[
            p.touched[0]][1] else ""
        self.app.push_screen(ConfirmScreen(f"{label}{reason}: {n:,} of the {len(p.ids):,} pairs of this view? "
                                           "a/enter yes, esc no"), done)

    def show_view(self, status: Status | None) -> None:
        """Show all pairs (None) or only those of ``status`` (the command palette's views)."""
        self._apply_filter(status, keep=self.queue.current)

    def on_pair_list_selected(self, event: PairList.Selected) -> None:
        self._show_current()

    def action_panel_page(self, direction: int) -> None:
        """Scroll the QA panel by a page (1 down, -1 up)."""
        self.query_one(QAPanel).scroll_page(direction)

    # -- layout by terminal size ----------------------------------------------------------------

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

    def on_screen_resume(self) -> None:
        self._fit_layout()  # the terminal may have been resized while a dialog was open

    def action_source_page(self, direction: int) -> None:
        """Scroll the source document by a page."""
        viewer = self.query_one(SourceViewer)
        viewer.scroll_relative(y=direction * max(1, viewer.size.height - 2), animate=False)

    def action_centre(self) -> None:
        """Scroll the source back to the highlighted passage."""
        self._shown_doc = None
        self._show_current()

    # -- edit, search, help --------------------------------------------------------------------

    def action_edit(self) -> None:
        """Edit the question, answer or passage; an edited passage is re-checked against the document."""
        pid = self.queue.current
        if pid is None:
            return
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return

        def done(changes: dict[str, str] | None) -> None:
            if changes:  # saved by ``EditScreen`` through ``self.session.edit`` (a failure keeps it open)
                # An edited question or passage may join or leave a cluster.
                self._after_change(pid, clusters=True)

        self.app.push_screen(EditScreen(self.session.view(pid), save=lambda ch: self.session.edit(pid, ch)), done)

    def _recheck(self, pid: int) -> None:
        """Re-verify ``pid``'s current passage (after an edit, a repair or an undo)."""
        if pid >= len(self.session):
            self._not_verbatim.discard(pid)
            return
        r = self.verdicts.quick_inline(pid)
        if r is None:
            return  # a very large document: the worker's result rechecks it
        if r.verdict == "exact":
            self._not_verbatim.discard(pid)
        else:
            self._not_verbatim.add(pid)

    # -- repairs: snap, trim, select -------------------------------------------------------------

    def _repair(self, pid: int, passage: str, via: str) -> None:
        """Save ``passage`` as the pair's supporting passage (undoable; the original stays in
        the history) and verify it again at once."""
        try:
            change = app_review.repair(self.session, self.verdicts, pid, passage, via)
        except (CurateError, ValueError) as exc:
            self.notify(f"Repair not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        if not change.changed:
            self.notify("The passage is already that text.", timeout=2)
            return
        self._after_change(pid, clusters=True)
        self.notify(f"{via}: the passage is now {(change.verdict or '').upper()} (u undoes).", timeout=3)

    def _writable_pair(self) -> int | None:
        pid = self.queue.current
        if pid is None:
            return None
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return None
        return pid

    def action_snap(self) -> None:
        """Replace the passage with the located source text (normalized or fuzzy match)."""
        pid = self._writable_pair()
        if pid is None:
            return
        doc = self.session.dataset.document_for(self.session.pairs[pid])
        if doc is None:
            self.notify("This pair's document is not in the corpus.", severity="warning")
            return
        r = self.verdicts.complete(pid)  # an explicit key: the fuzzy step may run here
        if r.verdict == "exact":
            self.notify("Already verbatim: nothing to snap.", timeout=2)
            return
        new = snap(doc.text, r)
        if new is None:
            self.notify("Nothing was located to snap to: m selects a span of the source.", severity="warning")
            return
        self._repair(pid, new, "snap")

    def action_trim(self) -> None:
        """Strip whitespace and punctuation from both ends of the passage."""
        pid = self._writable_pair()
        if pid is None:
            return
        passage = self.session.view(pid).passage
        trimmed = trim_passage(passage)
        if trimmed == passage:
            self.notify("Nothing to trim.", timeout=2)
            return
        self._repair(pid, trimmed, "trim")

    def action_select_span(self) -> None:
        """Pick a span of the source with the keys (or the mouse selection) as the passage."""
        pid = self._writable_pair()
        if pid is None:
            return
        doc = self.session.dataset.document_for(self.session.pairs[pid])
        viewer = self.query_one(SourceViewer)
        if doc is None or self._shown_doc != doc.key:
            self.notify("This pair's document is not in the corpus.", severity="warning")
            return
        picked = viewer.selection_range()
        if picked is None:
            r = self.verdicts.quick(pid)
            if r.start is not None and r.end is not None:
                picked = (r.start, r.end)
            else:
                top = viewer.offset_of_line(viewer.scroll_offset.y)
                picked = (top, min(len(doc.text), top + 200))

        def done(span: tuple[int, int] | None) -> None:
            if span is None:
                return
            try:
                passage = select_span(doc.text, *span)
            except ValueError as exc:
                self.notify(str(exc), severity="warning", markup=False)
                return
            self._repair(pid, passage, "select")

        self.app.push_screen(SelectSpanScreen(viewer, *picked), done)

    # -- notes and hand-written pairs -------------------------------------------------------------

    def action_note(self) -> None:
        """Write, change or remove the current pair's free-text note (undoable)."""
        pid = self._writable_pair()
        if pid is None:
            return

        def done(text: str | None) -> None:
            if text is None:
                return
            try:
                changed = self.session.set_note(pid, text)
            except (CurateError, IndexError) as exc:
                self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
                return
            if changed:
                self.notify(f"Note on #{pid} {'saved' if text.strip() else 'removed'} (u undoes).", timeout=3)
                self._after_change(pid)

        self.app.push_screen(NoteScreen(pid, self.session.note(pid)), done)

    def action_hand_pair(self) -> None:
        """Write a new pair by hand on the current document: select the passage in the source
        (as ``m``), then type the question and the answer; added undecided, verified and queued."""
        from mtcb_curate.app.hand import add_hand_pair

        pid = self._writable_pair()
        if pid is None:
            return
        doc = self.session.dataset.document_for(self.session.pairs[pid])
        viewer = self.query_one(SourceViewer)
        if doc is None or self._shown_doc != doc.key:
            self.notify("This pair's document is not in the corpus.", severity="warning")
            return
        picked = viewer.selection_range()
        if picked is None:
            top = viewer.offset_of_line(viewer.scroll_offset.y)
            picked = (top, min(len(doc.text), top + 200))

        def typed(span: tuple[int, int], answer: tuple[str, str] | None) -> None:
            if answer is None:
                return
            try:
                new = add_hand_pair(self.session, doc.key, span[0], span[1], *answer)
            except (CurateError, ValueError) as exc:
                self.notify(f"Not added: {exc}", severity="error", timeout=10, markup=False)
                return
            self.notify(f"Added #{new} by hand (undecided; u undoes).", timeout=3)
            self._after_change(new, rebuild_queue=True, clusters=True)

        def selected(span: tuple[int, int] | None) -> None:
            if span is None or span[1] <= span[0]:
                return
            self.app.push_screen(HandPairScreen(doc.key, doc.text[span[0]:span[1]]),
                                 lambda answer: typed(span, answer))

        self.app.push_screen(SelectSpanScreen(viewer, *picked), selected)

    # -- shrink: a shorter part of the passage ---------------------------------------------------

    def action_shrink(self) -> None:
        """Propose the shortest run of whole sentences, lines or table rows of the passage that
        still holds the answer's figures and words (offline, at once); accept, edit or refuse."""
        pid = self._writable_pair()
        if pid is None:
            return
        try:
            outcome = app_review.propose_shrink(self.session, pid, config=self.curate_app.config_path)
        except (CurateError, ValueError) as exc:
            self.notify(f"No shrink: {exc}", severity="error", timeout=10, markup=False)
            return
        if outcome.proposal is None:
            self.notify(f"No shrink: {outcome.reason}.", severity="warning", timeout=6, markup=False)
            return
        self.app.push_screen(ShrinkScreen(self.session, pid, outcome.proposal), lambda c: self._shrunk(pid, c))

    def action_shrink_llm(self) -> None:
        """Ask the LLM for the minimal exact quote of the passage that supports the answer (in a
        worker, esc cancels); accept, edit or refuse it."""
        pid = self._writable_pair()
        if pid is None:
            return
        self.app.push_screen(ShrinkScreen(self.session, pid), lambda c: self._shrunk(pid, c))

    def _shrunk(self, pid: int, choice: tuple[str, str] | None) -> None:
        """Back from the shrink proposal: apply it (undoable), or open the edit dialog with it."""
        if choice is None:
            return
        what, text = choice
        if what == "edit":
            self._edit_with_passage(pid, text)
            return
        try:
            change = app_review.apply_shrink(self.session, pid, text, verdicts=self.verdicts)
        except app_review.NotApplicable as exc:
            self.notify(str(exc), severity="warning", timeout=4, markup=False)
            return
        except (CurateError, ValueError) as exc:
            self.notify(f"Shrink not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self._after_change(pid, clusters=True)
        self.notify(f"shrink: the passage has {len(text):,} characters, {(change.verdict or '').upper()} (u undoes).",
                    timeout=3)

    def _edit_with_passage(self, pid: int, passage: str) -> None:
        """The edit dialog with ``passage`` in place of the current passage (saved only with ctrl+s)."""
        from mtcb_curate.tui.screens.shrink import PrefilledEditScreen

        view = self.session.view(pid)

        def save(changes: dict[str, str]) -> None:
            new = changes.get(app_review.PASSAGE)
            via = "shrink" if new is not None and new.strip() and new in view.passage else None
            app_review.edit(self.session, pid, changes, via=via, verdicts=self.verdicts)

        def done(changes: dict[str, str] | None) -> None:
            if changes:
                self._after_change(pid, clusters=True)

        self.app.push_screen(PrefilledEditScreen(view, passage, save=save), done)

    # -- chunk_index repair -----------------------------------------------------------------------

    def action_repair_chunk_index(self) -> None:
        """Set this pair's chunk_index to the MTCB window holding its passage (undoable)."""
        pid = self._writable_pair()
        if pid is None:
            return
        try:
            change = app_review.repair_chunk_index(self.session, pid, verdicts=self.verdicts)
        except app_review.NotApplicable as exc:
            self.notify(str(exc), timeout=4, markup=False)
            return
        except CurateError as exc:
            self.notify(f"Repair not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self._after_change(pid)
        self.notify(f"{change.note} (u undoes).", timeout=5, markup=False)

    def action_repair_all_chunk_indexes(self) -> None:
        """Repair every pair's chunk_index: find them in a worker, say how many, ask once, then
        apply them as one undoable step."""
        if self._writable_pair() is None:
            return
        self.notify("Looking for chunk_index values whose window does not hold the passage...", timeout=3)
        self.run_worker(self._plan_chunk_indexes(), group="chunk_index", exclusive=True)

    async def _plan_chunk_indexes(self) -> None:
        import asyncio

        try:
            fixes = await asyncio.to_thread(app_review.plan_chunk_index_repairs, self.session)
        except CurateError as exc:
            self.notify(f"chunk_index: {exc}", severity="error", timeout=10, markup=False)
            return
        todo = [f for f in fixes if not f.refused]
        refused = len(fixes) - len(todo)
        note = f" ({refused:,} refused: no single window holds the passage)" if refused else ""
        if not todo:
            self.notify(f"Every chunk_index already holds its passage{note}.", timeout=4, markup=False)
            return

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify("chunk_index repair cancelled: nothing changed.", timeout=2)
                return
            try:
                changes = app_review.repair_all_chunk_indexes(self.session, fixes=todo)
            except CurateError as exc:
                self.notify(f"Repair not saved: {exc}", severity="error", timeout=10, markup=False)
                return
            self._after_change(self.queue.current, rebuild_queue=True)  # every row's marks
            self.notify(f"chunk_index repaired on {len(changes):,} pairs{note}; u undoes them all.",
                        timeout=5, markup=False)

        self.app.push_screen(ConfirmScreen(
            f"Set chunk_index to the window holding the passage on {len(todo):,} pairs{note}? "
            f"y/enter: yes · esc: no (one u undoes all)"), done)

    def toggle_chunk_index_meaning(self) -> None:
        """Switch what the dataset's chunk_index means: MTCB's window (checked by ``links``) or
        something else (ignored); kept in the workspace."""
        if self._writable_pair() is None:
            return
        new = "mtcb" if self.session.chunk_index_meaning == "ignore" else "ignore"
        try:
            app_review.set_chunk_index_meaning(self.session, new)
        except CurateError as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self.notify("chunk_index is now ignored by the links check (it means something else)." if new == "ignore"
                    else "chunk_index is MTCB's window again: the links check compares it.", timeout=4)

    def action_search(self) -> None:
        """Find the next pair whose texts, document key or id contain a query."""

        def done(query: str | None) -> None:
            if query is None:
                return
            query = query or self._last_query
            self._last_query = query
            current = self.queue.current
            pid = self.session.search(query, -1 if current is None else current)
            if pid is None:
                self.notify(f"No pair matches {query!r}.", severity="warning", timeout=3, markup=False)
                return
            if not self.queue.move_to(pid):
                self._apply_filter(None, keep=pid)
                return
            self._show_current()

        self.app.push_screen(SearchScreen(self._last_query), done)

    def goto(self, pid: int | None, *, refresh: bool = False) -> None:
        """Show pair ``pid``, switching the view to all when the current view does not hold it.

        ``refresh``: statuses changed or pairs were added elsewhere (a dialog), so the queue is
        rebuilt first. None or an unknown id only refreshes. Screens pushed from here dismiss
        with a pair id and come back through this.
        """
        valid = pid is not None and 0 <= pid < len(self.session)
        if refresh:
            self._after_change(pid if valid else None, rebuild_queue=True)
            return
        if valid and not self.queue.move_to(pid):
            self._apply_filter(None if self.filter is not None and self.session.status(pid) != self.filter
                               else self.filter, keep=pid)
            return
        if valid:
            self._show_current()

    def action_stats(self) -> None:
        """The statistics screen over the pairs of the current view: all pairs, or the ``v``
        status and the filter bar's criteria (``_view_ids``, named by ``_view_scope``)."""
        from mtcb_curate.tui.screens.stats import StatsScreen

        whole = self.view_filter.empty and self.filter is None
        ids = None if whole else self._view_ids()
        scope = "all pairs" if whole else self._view_scope()
        verdicts = self.verdicts

        def results() -> dict:
            return verdicts.cached_many(range(len(self.session)) if ids is None else ids)

        self.app.push_screen(StatsScreen(self.session, ids, scope=scope, results=results))

    def _reconnected(self, message: str) -> None:
        """The shared workspace lost its connection and made a new one (the write went through).
        Called on the thread that wrote: posted, since the app's thread may be waiting for that
        write (a decision's commit)."""
        self.post_message(WorkspaceReconnected(message))

    @on(WorkspaceReconnected)
    def _say_reconnected(self, message: WorkspaceReconnected) -> None:
        self.notify(message.message, severity="warning", timeout=8, markup=False)

    def action_team(self) -> None:
        """The team screen (a shared workspace): counts, pace, agreement, and the conflicts a
        lead decides; enter on a conflict shows that pair here."""
        from mtcb_curate.app import team
        from mtcb_curate.tui.screens.team import TeamScreen

        if not team.is_team(self.session):
            self.notify("One curator here: a team shares a PostgreSQL workspace (--workspace postgresql://...).",
                        timeout=5, markup=False)
            return

        def shown(pid: int | None) -> None:
            self._reload_decisions()
            keep = self.queue.current if pid is None else pid
            # The queue is built again: the lead's decisions and other curators' change its marks.
            self._apply_filter(self.filter if pid is None or pid in self._view_ids() else None, keep=keep)

        self.app.push_screen(TeamScreen(self.session), shown)

    def _reload_decisions(self) -> None:
        """Take the store's decisions again (a lead's decision, other curators' settled pairs)."""
        self.session.reload_decisions()

    def action_gate(self) -> None:
        """Run the quality checklist; a pair picked there is shown here."""
        self.app.push_screen(ChecklistScreen(self.session), self.goto)

    # -- LLM: regenerate, generate more, semantic dedup -------------------------------------------

    def _after_llm(self, pid: int | None) -> None:
        """Back from an LLM screen: new pairs join the queue; show ``pid`` if given."""
        self._after_change(pid if pid is not None and 0 <= pid < len(self.session) else None,
                           rebuild_queue=True, clusters=True)

    def action_regenerate(self) -> None:
        """Ask the LLM for candidates to replace the current pair (r replace, a add, o keep)."""
        pid = self._writable_pair()
        if pid is None:
            return
        self.app.push_screen(RegenerateScreen(self.session, pid), self._after_llm)

    def action_generate_more(self) -> None:
        """Ask the LLM for N new pairs for the current pair's document."""
        pid = self._writable_pair()
        if pid is None:
            return
        self.app.push_screen(GenerateMoreScreen(self.session, self.session.pairs[pid].doc_key), self._after_llm)

    def action_generate_view(self) -> None:
        """Ask the LLM for new pairs for every document of the current view (the palette's
        entry; ``app.generation``, as ``generate --all --docs`` does)."""
        from mtcb_curate.tui.screens.corpus_generate import CorpusGenerateScreen

        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return
        keys = list(dict.fromkeys(self.session.pairs[i].doc_key for i in self._view_ids()))
        self.app.push_screen(CorpusGenerateScreen(self.session, keys), self._after_llm)

    def action_llm_attempts(self) -> None:
        """List every LLM reply refused this session, with its full reasons and quote."""
        from mtcb_curate.tui.screens.attempts import AttemptsScreen

        self.app.push_screen(AttemptsScreen(self.curate_app.attempt_log.refused()))

    def action_semantic_dedup(self) -> None:
        """Run the LLM's semantic dedup over every pair; its clusters join the near-duplicates."""
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return
        self.app.push_screen(SemanticDedupScreen(self.session), lambda _: self._find_clusters())

    def action_publish(self) -> None:
        """Publish to the Hub behind the checklist gate: the changes first, then a confirmation."""
        self.app.push_screen(PublishScreen(self.session))

    def action_export(self) -> None:
        """Write every pair's decision and current texts as JSON Lines to ``export.jsonl`` in
        the workspace folder (as ``mtcb-curate export`` does; the command palette's entry)."""
        from mtcb_curate.app.export import export_jsonl

        out = self.session.workspace.path / "export.jsonl"
        try:
            n = export_jsonl(self.session, out)
        except (CurateError, OSError) as exc:
            self.notify(f"Export failed: {exc}", severity="error", timeout=10, markup=False)
            return
        self.notify(f"Exported {n:,} pairs to {out}", timeout=6, markup=False)

    def action_help(self) -> None:
        """Show every key, as bound now."""
        keymap = self.curate_app.keymap
        rows = []
        for b in BINDINGS:
            keys = keymap.get(b.id, b.key) if b.id else b.key
            rows.append((keys.replace("question_mark", "?").replace("slash", "/"), b.id or "", b.description))
        rows.append(("1-7 / enter", "", "in the reject dialog: reason / no reason"))
        rows.append(("ctrl+p", "", "command palette"))
        rows.append((FAIL_MARK, "", "in the queue: the pair would fail a check if accepted (the QA panel "
                                    "lists each problem with the key that fixes it)"))
        rows.append((UNFINDABLE_MARK, "", "in the queue: no configured chunker holds the passage wholly "
                                          "(F computes the findability; the QA panel's ◇ lines say where)"))
        from mtcb_curate.config import default_config_path

        hint = f"Rebind keys in {default_config_path()} under [keys], e.g.  accept = \"y\""
        self.app.push_screen(HelpScreen(rows, hint, MARK_LEGEND))

    def action_quit(self) -> None:
        """Quit (every decision is already saved)."""
        self.app.exit()
