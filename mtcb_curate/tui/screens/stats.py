"""The statistics screen (``T``): the set's shape, over all pairs or the review screen's current
view, computed in a worker (``app.stats.session_stats``).

Each section has its plot (Textual's ``Sparkline`` for the histograms and series) with its
numbers beside it as plain ``Text`` (every label from the data is plain text, never markup).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Sparkline, Static

from mtcb_curate.plaintext import one_line
from mtcb_curate.stats.render import bin_label, counts_rows, document_rows
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.messages import StatsComputed

_HINT = "↑↓ pgup pgdn scroll · esc close"


def _rows(rows: list[tuple], widths: tuple[int, ...]) -> Text:
    out = Text()
    for r in rows:
        line = "  ".join(str(c).rjust(w) if i else one_line(str(c), w).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        out.append(line.rstrip() + "\n")
    return out


def _windows_pending(stats) -> bool:
    """Some document's windows were not available (not cached, not built)."""
    return any(d["windows"] is None for d in stats.coverage["per_document"])


class StatsScreen(ModalScreen[None]):
    """Statistics of ``ids`` (None: every pair) of ``session``; ``scope`` names them
    (``all pairs``, ``accepted pairs`` ...); ``results`` gives verdicts already at hand."""

    BINDINGS = [Binding("escape,q", "close", "close", id="stats_close")]
    #: Below 100 columns each plot sits above its numbers (styles/stats.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def __init__(self, session: ReviewSession, ids: list[int] | None = None, *, scope: str = "all pairs",
                 results: Callable[[], Mapping] | None = None):
        super().__init__(id="stats-screen")
        self.session = session
        self.ids = ids
        self.scope = scope
        self._results = results
        self.stats = None

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Statistics: {self.scope} (computing…)"), id="stats-title")
        yield VerticalScroll(id="stats-body")
        yield Static(Text(_HINT, style="dim"), id="stats-hint")

    def on_mount(self) -> None:
        self._compute()

    @work(thread=True, exclusive=True, group="stats", exit_on_error=False)
    def _compute(self) -> None:
        from mtcb_curate.app.stats import session_stats

        import time

        from textual.worker import WorkerState, get_current_worker

        # The start-up passage scan (the review screen's ``scan`` worker) verifies every pair:
        # wait for it and reuse its verdicts rather than verify them all a second time.
        me = get_current_worker()
        for w in list(self.app.workers):
            while w.group == "scan" and w.state in (WorkerState.PENDING, WorkerState.RUNNING):
                if me.is_cancelled:
                    return
                time.sleep(0.02)
        try:
            results = self._results() if self._results is not None else None
            config = getattr(self.app, "config_path", None)
            # First without tokenizing documents whose windows are not cached (the first run over
            # a corpus: about 0.1 s per MB), so the numbers show at once; then with them.
            stats = session_stats(self.session, self.ids, results=results, config=config, build_windows=False)
            if not _windows_pending(stats):
                self.post_message(StatsComputed(stats))
                return
            self.post_message(StatsComputed(stats))
            if me.is_cancelled:
                return
            stats = session_stats(self.session, self.ids, results=results, config=config)
        except Exception as exc:  # noqa: BLE001 - shown on the screen, one line
            self.post_message(StatsComputed(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(StatsComputed(stats))

    @on(StatsComputed)
    def _computed(self, message: StatsComputed) -> None:
        title = self.query_one("#stats-title", Static)
        if message.error is not None:
            title.update(Text(f"Statistics: {self.scope}: could not be computed: {one_line(message.error, 200)}",
                              style="red"))
            return
        self.stats = s = message.stats
        pending = _windows_pending(s)
        title.update(Text(f"Statistics of {one_line(s.scope['dataset'], 40)}: {self.scope}, {s.scope['pairs']:,} pairs"
                          f" ({s.seconds:.1f} s)" + ("; windows: tokenizing…" if pending else "")))
        body = self.query_one("#stats-body", VerticalScroll)
        body.remove_children()
        body.mount_all(self._sections(s))

    def _section(self, title: str, numbers: Text, series: list[float] | None = None) -> list:
        parts = [Static(Text(title, style="bold"), classes="stats-heading")]
        if series:
            parts.append(Horizontal(Sparkline(series, classes="stats-plot"), Static(numbers, classes="stats-numbers"),
                                    classes="stats-row"))
        else:
            parts.append(Static(numbers, classes="stats-numbers"))
        return parts

    def _sections(self, s) -> list:
        cov = s.coverage
        out = []
        if _windows_pending(s):
            windows = (f"windows: being tokenized (the first time for this corpus); "
                       f"{cov['unlinked_pairs']:,} pairs on no document\n")
        else:
            windows = (f"{cov['windows']:,} windows of {cov['window_tokens']:,} tokens, {cov['windows_without_pairs']:,} "
                       f"without pairs; {cov['unplaced_pairs']:,} pairs not placed, {cov['unlinked_pairs']:,} on no "
                       f"document\n")
        head = Text(f"{cov['documents']:,} documents, {len(cov['documents_without_pairs']):,} without pairs; " + windows)
        head.append_text(_rows([("document", "pairs", "windows", "per window (· none)")] + document_rows(s, 30),
                               (14, 6, 8, 0)))
        if cov["documents_without_pairs"]:
            head.append("without pairs: " + ", ".join(one_line(str(k), 30) for k in cov["documents_without_pairs"][:20]))
        out += self._section("Coverage (fewest pairs first)",
                             head, [float(d["pairs"]) for d in cov["per_document"]] or None)
        for unit, name in (("chars", "characters"), ("tokens", "tokens")):
            h = s.length[unit]
            marks: dict[int, list[str]] = {}
            for m in h["marks"]:
                marks.setdefault(m["bin"], []).append(m["label"])
            total = max(1, s.scope["pairs"])
            rows = [(bin_label(h["edges"], i), n, f"{n / total:.0%}", ", ".join(marks.get(i, ())))
                    for i, n in enumerate(h["counts"])]
            p = h["percentiles"]
            numbers = Text(" ".join(f"{k} {'-' if p[k] is None else f'{p[k]:,.0f}'}"
                                    for k in ("min", "p25", "p50", "p75", "p95", "max")) + "\n")
            numbers.append_text(_rows(rows, (11, 6, 5, 0)))
            out += self._section(f"Passage length in {name}", numbers, [float(c) for c in h["counts"]])
        for title, counts in (("Question forms", s.forms), ("Question types", s.types), ("Verdicts", s.verdicts),
                              ("Statuses", s.statuses), ("Rejection reasons", s.rejection_reasons),
                              ("Edits by kind", s.edits)):
            rows = counts_rows(counts)
            out += self._section(title, _rows(rows, (22, 6, 5)) if rows else Text("none"),
                                 [float(n) for _, n, _ in rows] if len(rows) > 1 else None)
        pace = s.pace
        rate = pace["rate_per_hour"]
        out += self._section("Review pace", Text(
            f"{pace['decisions']:,} decisions over {len(pace['per_day'])} day(s); "
            f"{'-' if rate is None else f'{rate:,.0f}'} pairs per hour lately"),
            [float(d["decisions"]) for d in pace["per_day"]] if len(pace["per_day"]) > 1 else None)
        llm = s.llm
        out += self._section("LLM", Text("not recorded" if not llm["recorded"] else
                                         f"{llm['calls']:,} calls, {llm['prompt_tokens']:,} prompt tokens, "
                                         f"{llm['completion_tokens']:,} completion tokens, cost "
                                         + ("unknown" if llm["cost_usd"] is None else f"${llm['cost_usd']:,.4f}")))
        out += self._section("Balance ([stats] targets)",
                             Text("within the targets" if not s.balance else "\n".join(s.balance),
                                  style="" if not s.balance else "yellow"))
        return out

    def action_close(self) -> None:
        self.dismiss(None)
