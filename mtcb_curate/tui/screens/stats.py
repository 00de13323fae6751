"""The statistics screen (``T``): the set's shape, over all pairs or the review screen's current
view, computed in a worker (``app.stats.session_stats``).

Each section has its plot with its numbers beside it as plain ``Text`` (every label from the data
is plain text, never markup): the passage-length histograms and the coverage along the documents
are bar charts (``textual_plot.PlotWidget``; the chunk sizes and ``[checklist]`` limits drawn as
vertical lines, their labels only on our own axis ticks and in the numbers), the small series
(pairs per document, counts by name, review pace) Textual's ``Sparkline``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Sparkline, Static

from textual_plot import NumericAxisFormatter, PlotWidget
from textual_plot.axis_formatter import AxisFormatter

from mtcb_curate.collector import collection_paused
from mtcb_curate.plaintext import one_line
from mtcb_curate.stats.render import (NO_LLM_TAGS, NO_PREVIEW, bin_label, counts_rows, document_rows,
                                       evidence_lines, findability_note, findability_rows, llm_tag_note,
                                       llm_tag_rows, separation_lines)
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.messages import StatsComputed
from mtcb_curate.tui.workarounds.nodes import is_closing

_HINT = "↑↓ pgup pgdn scroll · esc close"


def _rows(rows: list[tuple], widths: tuple[int, ...]) -> Text:
    out = Text()
    for r in rows:
        line = "  ".join(str(c).rjust(w) if i else one_line(str(c), w).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        out.append(line.rstrip() + "\n")
    return out


class _Ticks(AxisFormatter):
    """Ticks at fixed positions with fixed labels (our own strings, never data)."""

    def __init__(self, ticks: list[tuple[float, str]]):
        self.ticks = ticks

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        return [x for x, _ in self.ticks if min_ <= x <= max_]

    def get_labels_for_ticks(self, ticks) -> list[str]:
        names = dict(self.ticks)
        return [names.get(x, "") for x in ticks]


class _Counts(NumericAxisFormatter):
    """Whole-number ticks with thousands separators (counts of pairs or windows)."""

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        return [t for t in super().get_ticks(min_, max_, min(max_ticks, 4)) if float(t).is_integer()]

    def get_labels_for_ticks(self, ticks) -> list[str]:
        return [f"{t:,.0f}" for t in ticks]


#: Bar and line styles of the charts.
BAR_STYLE, CHUNK_STYLE, LIMIT_STYLE = "blue", "yellow", "red"


def _short(n: int) -> str:
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else f"{n:,}"


def _x_of(edges: list, value: float) -> float:
    """Where ``value`` sits on a histogram drawn with bin i over [i, i + 1) (``edges`` as in
    ``stats.compute``: the last bin open)."""
    for i in range(len(edges) - 1):
        lo, hi = edges[i], edges[i + 1]
        if hi is None or value < hi:
            return i + (0.5 if hi is None else (value - lo) / (hi - lo))
    return len(edges) - 1.5


def draw_histogram(plot: PlotWidget, h: dict, chunk_sizes: list[int], limits: list[int]) -> None:
    """Draw ``h`` (a ``stats.compute`` histogram) on ``plot``: one bar per bin; the chunk sizes
    and ``limits`` as vertical lines; x ticks at the chunk sizes."""
    edges, counts = h["edges"], h["counts"]
    n = len(counts)
    plot.clear()
    plot.bar([i + 0.5 for i in range(n)], counts, width=0.8, bar_style=BAR_STYLE)
    for size in chunk_sizes:
        plot.add_v_line(_x_of(edges, size), CHUNK_STYLE)
    for v in limits:
        plot.add_v_line(_x_of(edges, v), LIMIT_STYLE)
    plot.set_x_formatter(_Ticks([(0.0, "0")] + [(_x_of(edges, c), _short(c)) for c in chunk_sizes]))
    plot.set_y_formatter(_Counts())
    plot.set_xlimits(0, n)
    plot.set_ylimits(0, max(counts + [1]) * 1.1)


def draw_positions(plot: PlotWidget, parts: list[dict]) -> None:
    """Draw ``coverage.by_position``: per tenth along the documents, the share (%) of its
    windows without pairs."""
    plot.clear()
    shares = [100 * p["without_pairs"] / p["windows"] if p["windows"] else 0 for p in parts]
    plot.bar([i + 0.5 for i in range(len(parts))], shares, width=0.8, bar_style=BAR_STYLE)
    plot.set_x_formatter(_Ticks([(0.0, "start"), (len(parts) / 2, "middle"), (float(len(parts)), "end")]))
    plot.set_y_formatter(_Counts())
    plot.set_xlimits(0, len(parts))
    plot.set_ylimits(0, 105)


class Chart(PlotWidget):
    """A ``PlotWidget`` that draws itself with ``draw(self)`` once mounted (no pan or zoom;
    narrower margins than the widget's: no axis titles)."""

    def __init__(self, draw: Callable[[PlotWidget], None], **kwargs):
        super().__init__(allow_pan_and_zoom=False, **kwargs)
        self._draw = draw
        self.set_reactive(PlotWidget.margin_left, 7)
        self.set_reactive(PlotWidget.margin_top, 1)
        self.set_reactive(PlotWidget.margin_bottom, 2)

    def on_mount(self, event: events.Mount) -> None:
        if not self.query("Grid"):
            # Removed while being mounted (newer figures, or the screen closed): PlotWidget's
            # own on_mount would look for its grid and raise.
            event.prevent_default()
            return
        # Then PlotWidget's own on_mount (Textual calls both; it clears the plot).
        self.call_after_refresh(self._draw_now)

    def _draw_now(self) -> None:
        # Not when newer figures have replaced this chart in the meantime.
        if self.is_attached and not is_closing(self) and self.query("#legend"):
            self._draw(self)


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
        """Up to three passes, each shown as soon as it is done: what is at hand (the scan's
        verdicts so far, the on-disk caches; nothing verified, counted or tokenized), then, once
        the start-up passage scan is done, with its verdicts and the passage tokens counted (the
        rest verified), then with the windows of documents not cached yet tokenized."""
        from mtcb_curate.app.stats import session_stats

        import time

        from textual.worker import WorkerState, get_current_worker

        me = get_current_worker()
        config = getattr(self.app, "config_path", None)

        def run(**kwargs):
            # No automatic collections while computing: the app's collector policy (tui.memory)
            # runs a full collection after every few young ones, and the figures of 100,000
            # pairs make millions of objects (those collections made them 3-4 times slower).
            # Back on afterwards; the policy then collects once at the next pause.
            with collection_paused():
                results = self._results() if self._results is not None else None
                return session_stats(self.session, self.ids, results=results, config=config, **kwargs)

        try:
            stats = run(build_windows=False, verify=False, count_tokens=False, tag=False, with_separation=False)
            self.post_message(StatsComputed(stats))
            if any(stats.pending.values()):
                # The start-up passage scan (the review screen's ``scan`` worker) verifies every
                # pair: wait for it and reuse its verdicts rather than verify them a second time.
                for w in list(self.app.workers):
                    while w.group == "scan" and w.state in (WorkerState.PENDING, WorkerState.RUNNING):
                        if me.is_cancelled:
                            return
                        time.sleep(0.02)
                if me.is_cancelled:
                    return
                stats = run(build_windows=False)
                self.post_message(StatsComputed(stats))
            elif stats.findability.get("run"):
                from mtcb_curate.app.stats import separation

                stats.separation = separation(self.session, self.ids, config=config)  # the bootstrap
                if me.is_cancelled:
                    return
                self.post_message(StatsComputed(stats))
            if not _windows_pending(stats) or me.is_cancelled:
                return
            stats = run()
        except Exception as exc:  # noqa: BLE001 - shown on the screen, one line
            self.post_message(StatsComputed(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(StatsComputed(stats))

    @on(StatsComputed)
    async def _computed(self, message: StatsComputed) -> None:
        title = self.query_one("#stats-title", Static)
        if message.error is not None:
            title.update(Text(f"Statistics: {self.scope}: could not be computed: {one_line(message.error, 200)}",
                              style="red"))
            return
        self.stats = s = message.stats
        waiting = [what for what, yes in (("verdicts: waiting for the passage scan", s.pending["verdicts"]),
                                          ("tokens: counting…", s.pending["tokens"]),
                                          ("questions: tagging…", s.pending["tags"]),
                                          ("windows: tokenizing…", _windows_pending(s))) if yes]
        title.update(Text(f"Statistics of {one_line(s.scope['dataset'], 40)}: {self.scope}, {s.scope['pairs']:,} pairs"
                          f" ({s.seconds:.1f} s)" + "".join(f"; {w}" for w in waiting)))
        body = self.query_one("#stats-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(self._sections(s))

    def _section(self, title: str, numbers: Text, series: list[float] | None = None,
                 chart: Callable[[PlotWidget], None] | None = None) -> list:
        parts = [Static(Text(title, style="bold"), classes="stats-heading")]
        if chart is not None:
            plot = Chart(chart, classes="stats-plot stats-chart")
            parts.append(Horizontal(plot, Static(numbers, classes="stats-numbers"), classes="stats-row"))
        elif series:
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
        parts = cov.get("by_position") or []
        if not _windows_pending(s) and any(p["windows"] for p in parts):
            rows = [(f"{p['from']:.0%}-{p['from'] + 0.1:.0%}", p["windows"], p["without_pairs"],
                     f"{p['without_pairs'] / p['windows']:.0%}" if p["windows"] else "-", p["pairs"]) for p in parts]
            out += self._section("Windows without pairs along the documents (% per tenth)",
                                 _rows([("part", "windows", "without", "share", "pairs")] + rows, (9, 7, 7, 5, 6)),
                                 chart=lambda plot, parts=parts: draw_positions(plot, parts))
        limits = s.length.get("limits") or {}
        for unit, name in (("chars", "characters"), ("tokens", "tokens")):
            h = s.length[unit]
            if h is None:
                out += self._section(f"Passage length in {name}",
                                     Text(f"being counted ({s.pending['tokens']:,} passages)…"))
                continue
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
            lims = [v for v in (limits.get("min_chars"), limits.get("max_chars")) if v is not None] \
                if unit == "chars" else []
            numbers.append(f"lines: chunk sizes ({CHUNK_STYLE})" + (f", limits ({LIMIT_STYLE})" if lims else ""),
                           style="dim")
            out += self._section(f"Passage length in {name}", numbers,
                                 chart=lambda plot, h=h, lims=lims: draw_histogram(
                                     plot, h, list(s.length["chunk_sizes"]), lims))
        for title, counts in (("Question forms", s.forms), ("Question types", s.types), ("Verdicts", s.verdicts),
                              ("Statuses", s.statuses), ("Rejection reasons", s.rejection_reasons),
                              ("Edits by kind", s.edits)):
            rows = counts_rows(counts)
            numbers = _rows(rows, (22, 6, 5)) if rows else Text("none\n")
            if title == "Verdicts" and s.pending["verdicts"]:
                numbers.append(f"{s.pending['verdicts']:,} pairs waiting for the passage scan", style="dim")
            if title in ("Question forms", "Question types") and s.pending["tags"]:
                numbers.append(f"{s.pending['tags']:,} questions being tagged", style="dim")
            out += self._section(title, numbers, [float(n) for _, n, _ in rows] if len(rows) > 1 else None)
        if s.checklist is not None:
            rows = [(c["id"], str(c["status"]), c["pairs"]) for c in s.checklist]
            out += self._section("Checklist", _rows([("check", "status", "pairs")] + rows, (22, 6, 6)))
        else:
            out += self._section("Checklist", Text("not run with the statistics: g runs it (and `mtcb-curate stats "
                                                   "--checklist` counts its results)"))
        rows = llm_tag_rows(s)
        if rows is None:
            out += self._section("Question forms and types by the LLM", Text(NO_LLM_TAGS))
        else:
            numbers = _rows([("", "rules", "LLM")] + rows, (22, 6, 6))
            numbers.append(llm_tag_note(s), style="dim")
            out += self._section("Question forms and types by the LLM", numbers)
        table = findability_rows(s)
        if table is None:
            out += self._section("Findability preview", Text(NO_PREVIEW))
        else:
            header, rows = table
            numbers = _rows([header] + rows, (15, 11) + (6,) * (len(header) - 2))
            numbers.append(findability_note(s), style="dim")
            out += self._section("Findability preview (recall, ceiling per chunker)", numbers)
        ev = s.evidence or {}
        counts = ev.get("sentence_counts")
        ev_text = Text()
        for i, line in enumerate(evidence_lines(s)):
            ev_text.append(("\n" if i else "") + line, style="bold" if "evidence-sparse" in line else "")
        out += self._section("Evidence density (HiCBench: 1-2 sentences is evidence-sparse)", ev_text,
                             [float(n) for n in counts.values()] if counts else None)
        sep = s.separation
        sep_text = Text("\n".join(separation_lines(s)))
        if not sep.get("run") and s.findability.get("run"):  # the first, quick pass: not compared yet
            sep_text = Text("comparing the chunkers…" if s.findability.get("run") else NO_PREVIEW)
        out += self._section("Does this set separate the chunkers?", sep_text)
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
                             Text("waiting for the question tags" if s.pending["tags"] else
                                  "within the targets" if not s.balance else "\n".join(s.balance),
                                  style="" if not s.balance else "yellow"))
        return out

    def action_close(self) -> None:
        self.dismiss(None)
