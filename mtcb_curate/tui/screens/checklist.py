"""The checklist screen: MTCB's pre-publish checklist (``mtcb_curate.checks``), one row per
check, and the pairs behind any check one key away.

The checklist runs in a thread worker as soon as the screen opens (the ``loads`` check writes
and reloads the publish layout with ``datasets``: about 1-3 s), with a progress bar over the ten
checks. Then the screen lists each check's status, number of pairs and message; ``enter`` on a
check lists its pairs (id, fail or warn, the reason, the question), and ``enter`` on a pair
closes the screen with that pair's id so the review screen can show it.

Every dataset string (questions, reasons naming document keys, messages) is shown as plain text
(``printable``), never as markup.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from mtcb_curate.app import gate
from mtcb_curate.checks import CHECK_IDS, CheckResult, CheckStatus, ChecklistReport, Limits
from mtcb_curate.plaintext import one_line, printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.messages import ChecklistFailed, ChecklistFinished, ChecklistProgress

#: Mark and theme colour per check status.
MARK = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "–"}
STYLE = {"pass": "$success", "warn": "$warning", "fail": "$error", "skip": "$text-muted"}
#: At most this many pairs are listed for one check (a 20,000-pair queue can leave every pair
#: undecided); a last, disabled row says how many more there are.
MAX_PAIR_ROWS = 1000
#: Widths of the columns of a check row.
_ID_W = 15
_COUNT_W = 6
#: A pair row's question column is shown when at least this many cells are left after the
#: reason has taken what it needs (the reason is never cut to make room for the question; the
#: detail line below the list shows both whole).
_MIN_QUESTION_W = 20

_HINT_CHECKS = "↑↓ select a check · enter its pairs · r re-run · u include undecided pairs · esc close"
_HINT_PAIRS = "↑↓ select a pair · enter show it in the review screen · esc back to the checks · r re-run"
_HINT_RUNNING = "running the checklist … · esc close"


class _Cancelled(Exception):
    """Raised from the progress callback when the worker was cancelled (screen closed)."""


class ChecklistScreen(ModalScreen[int | None]):
    """Run the quality checklist on ``session`` and show it.

    Args:
        session: the review session (only read).
        loads: run the ``loads`` check (writes and loads the publish layout; about 1-2 s).
        limits: passage length bounds (default: the profile's, then the config file's
            ``[checklist]`` table).

    Returns (``dismiss``): the id of the pair picked with ``enter`` in a check's pair list, or
    None (escape).

    Keys: up/down (or j/k) select, enter opens a check's pairs / picks a pair, r re-runs,
    u toggles "include undecided" (every pair not rejected checked as if accepted: what would
    fail if accepted; ``reviewed`` is skipped) and re-runs, escape goes back from the pairs to
    the checks, and closes the screen from the checks.
    """

    BINDINGS = [
        Binding("escape", "back", "back / close"),
        Binding("r", "rerun", "re-run"),
        Binding("u", "toggle_undecided", "include undecided"),
        Binding("j", "cursor(1)", "down", show=False),
        Binding("k", "cursor(-1)", "up", show=False),
    ]

    def __init__(self, session: ReviewSession, *, loads: bool = True, limits: Limits | None = None,
                 include_undecided: bool = False) -> None:
        super().__init__()
        self.session = session
        #: Check every pair not rejected as if accepted ("what would fail if accepted").
        self.include_undecided = include_undecided
        self.loads = loads
        self.limits = limits
        self.report: ChecklistReport | None = None
        self.running = False
        #: The check whose pairs are listed (None: the checks are listed).
        self.open_check: CheckResult | None = None
        self._pair_ids: list[int] = []
        self._started = 0.0
        self._seconds = 0.0

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="checklist-dialog", classes="dialog"):
            yield Static(Text(f"Quality checklist · {printable(self.session.dataset.name, keep_newlines=False)}",
                              style="bold"), id="checklist-title")
            yield Static(id="checklist-header")
            yield ProgressBar(total=len(CHECK_IDS), show_eta=False, id="checklist-progress")
            yield Static(Text(f"   {'check':<{_ID_W}}{'pairs':>{_COUNT_W}}  message", style="bold"),
                         id="checklist-columns")
            yield OptionList(id="checklist-checks")
            yield Static(id="checklist-pairs-title")
            yield OptionList(id="checklist-pairs")
            yield Static(id="checklist-detail")
            yield Static(id="checklist-hint")

    def on_mount(self) -> None:
        self._show_pairs_pane(False)
        self.rerun()

    @property
    def checks_list(self) -> OptionList:
        return self.query_one("#checklist-checks", OptionList)

    @property
    def pairs_list(self) -> OptionList:
        return self.query_one("#checklist-pairs", OptionList)

    def _set(self, selector: str, text: Text) -> None:
        self.query_one(selector, Static).update(text)

    def _show_pairs_pane(self, show: bool) -> None:
        for selector in ("#checklist-pairs-title", "#checklist-pairs", "#checklist-detail"):
            self.query_one(selector).display = show
        for selector in ("#checklist-columns", "#checklist-checks"):
            self.query_one(selector).display = not show
        self._set("#checklist-hint", Text(_HINT_RUNNING if self.running else
                                          _HINT_PAIRS if show else _HINT_CHECKS, style="dim"))

    # -- running ------------------------------------------------------------------------------

    def rerun(self) -> None:
        """Run the checklist again (ignored while it runs)."""
        if self.running:
            return
        self.running = True
        self.report = None
        self.open_check = None
        self.checks_list.clear_options()
        self.pairs_list.clear_options()
        self._show_pairs_pane(False)
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=len(CHECK_IDS), progress=0)
        self._set("#checklist-header", Text("running the checklist …", style="bold"))
        self._started = time.perf_counter()
        self._run()

    @work(thread=True, exclusive=True, group="checklist", exit_on_error=False)
    def _run(self) -> None:
        worker = get_current_worker()

        def progress(check_id: str) -> None:
            if worker.is_cancelled:
                raise _Cancelled
            self.post_message(ChecklistProgress(check_id))

        try:
            report = gate.run_gate(self.session, config=getattr(self.app, "config_path", None), limits=self.limits,
                                   loads=self.loads, progress=progress, include_undecided=self.include_undecided)
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - shown on the screen; the app keeps running
            if not worker.is_cancelled:
                self.post_message(ChecklistFailed(f"{type(exc).__name__}: {exc}"))
            return
        if not worker.is_cancelled:
            self.post_message(ChecklistFinished(report))

    @on(ChecklistProgress)
    def _progress(self, message: ChecklistProgress) -> None:
        check_id = message.check_id
        i, total = gate.step(check_id)
        self.query_one(ProgressBar).update(progress=i)
        self._set("#checklist-header", Text(f"running {check_id} ({i + 1} of {total}) …", style="bold"))

    @on(ChecklistFailed)
    def _failed(self, failed: ChecklistFailed) -> None:
        message = failed.line
        self.running = False
        self.query_one(ProgressBar).display = False
        header = Text("the checklist could not run: ", style="bold")
        header.append(printable(message))
        header.append("  (r re-runs)", style="dim")
        self._set("#checklist-header", header)
        self._show_pairs_pane(False)

    @on(ChecklistFinished)
    def _finished(self, finished: ChecklistFinished) -> None:
        report: ChecklistReport = finished.report
        previous = self.checks_list.highlighted_option
        self.running = False
        self.report = report
        self._seconds = time.perf_counter() - self._started
        bar = self.query_one(ProgressBar)
        bar.update(progress=len(CHECK_IDS))
        bar.display = False
        self._set("#checklist-header", self._header(report))
        self.checks_list.set_options(
            [Option(self._check_row(c), id=c.id) for c in report.checks])
        ids = [c.id for c in report.checks]
        keep = previous.id if previous is not None and previous.id in ids else None
        if keep is None:  # the first failing check, else the first warning, else the first
            keep = next((c.id for s in (CheckStatus.FAIL, CheckStatus.WARN) for c in report.checks if c.status == s),
                        ids[0] if ids else None)
        if keep is not None:
            self.checks_list.highlighted = ids.index(keep)
        self._show_pairs_pane(False)
        self.checks_list.focus()

    def _header(self, report: ChecklistReport) -> Text:
        t = Text()
        if self.include_undecided:
            t.append(" WHAT WOULD FAIL IF ACCEPTED ", style="bold reverse yellow")
            t.append(" undecided, skipped and flagged pairs counted as accepted (u: accepted only)\n",
                     style="yellow")
        if report.passed:
            t.append(" checklist PASSED ", style="bold reverse green")
        else:
            t.append(" checklist FAILED ", style="bold reverse red")
        t.append(" (publishing needs no failing check)  ")
        counts = {s: sum(1 for c in report.checks if c.status == s) for s in MARK}
        t.append(" · ".join(f"{n} {s}" for s, n in counts.items() if n), style="bold")
        pairs = "pairs checked" if self.include_undecided else "accepted pairs"
        t.append(f"  · {len(report.accepted):,} {pairs} · {self._seconds:.1f} s", style="dim")
        return t

    def _width(self, widget: OptionList) -> int:
        width = widget.scrollable_content_region.width or self.size.width - 10
        return max(40, width - 2)

    def _check_row(self, c: CheckResult) -> Content:
        width = self._width(self.checks_list)
        head = f"{c.id:<{_ID_W}}{len(c.pairs):>{_COUNT_W}}  "
        message = one_line(c.message, max(10, width - 2 - len(head)))
        return Content.assemble((f"{MARK[c.status]} ", f"bold {STYLE[c.status]}"), head, message)

    # -- the pairs of one check -----------------------------------------------------------------

    def _open(self, c: CheckResult) -> None:
        if not c.pairs:
            self.notify(f"{c.id}: no pairs to list ({c.status}).", timeout=3, markup=False)
            return
        self.open_check = c
        width = self._width(self.checks_list)
        shown = c.pairs[:MAX_PAIR_ROWS]
        id_w = len(str(max(shown))) + 1
        # The reason takes the width it needs (up to what leaves the question its minimum);
        # the question gets the rest.
        fixed = 1 + id_w + 5 + 1 + 2  # "#id", "fail ", " ", two spaces
        longest = max((len(one_line(c.reasons.get(pid, ""), 10_000)) for pid in shown), default=0)
        reason_w = max(10, min(longest, width - fixed))
        rest = width - fixed - reason_w
        rest = rest if rest >= _MIN_QUESTION_W else 0  # too narrow: the detail line shows the question
        options = []
        for pid in shown:
            kind = "fail" if pid in c.failing else "warn"
            head = f"#{pid:<{id_w}}"
            reason = one_line(c.reasons.get(pid, ""), reason_w)
            question = self.session.view(pid).question if 0 <= pid < len(self.session) else ""
            options.append(Option(Content.assemble(
                head, (f"{kind} ", f"bold {STYLE[kind]}"), f" {reason:<{reason_w}}  ",
                (one_line(question, rest) if rest else "", "$text-muted")), id=f"pair-{pid}"))
        if len(c.pairs) > len(shown):
            options.append(Option(Content(f"… {len(c.pairs) - len(shown):,} more pairs not listed"),
                                  disabled=True))
        self._pair_ids = shown
        self.pairs_list.set_options(options)
        self.pairs_list.highlighted = 0
        title = Text()
        title.append(f"{MARK[c.status]} {c.id}", style="bold")
        title.append(f" · {len(c.pairs):,} pair(s), {len(c.failing & set(c.pairs)):,} failing · ")
        title.append(one_line(c.message, 200), style="dim")
        self._set("#checklist-pairs-title", title)
        self._show_pairs_pane(True)
        self._show_detail(0)
        self.pairs_list.focus()

    def _show_detail(self, index: int | None) -> None:
        c = self.open_check
        if c is None or index is None or not 0 <= index < len(self._pair_ids):
            self._set("#checklist-detail", Text())
            return
        pid = self._pair_ids[index]
        t = Text()
        t.append(f"#{pid} ", style="bold")
        t.append(printable(c.reasons.get(pid, ""), keep_newlines=False))
        if 0 <= pid < len(self.session):
            t.append("\nQ: ", style="bold")
            t.append(one_line(self.session.view(pid).question, 400))
        self._set("#checklist-detail", t)

    # -- events and actions ---------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_list.id == "checklist-checks":
            if self.report is not None and 0 <= event.option_index < len(self.report.checks):
                self._open(self.report.checks[event.option_index])
        elif event.option_list.id == "checklist-pairs":
            if 0 <= event.option_index < len(self._pair_ids):
                self.dismiss(self._pair_ids[event.option_index])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "checklist-pairs":
            self._show_detail(event.option_index)

    def action_back(self) -> None:
        """From a check's pairs: back to the checks. From the checks: close (None)."""
        if self.open_check is not None:
            self.open_check = None
            self._show_pairs_pane(False)
            self.checks_list.focus()
            return
        self.workers.cancel_group(self, "checklist")
        self.dismiss(None)

    def action_rerun(self) -> None:
        """Run every check again (after fixing pairs)."""
        self.rerun()

    def action_toggle_undecided(self) -> None:
        """Include undecided (and skipped, flagged) pairs as if accepted, or not, and re-run."""
        if self.running:
            return
        self.include_undecided = not self.include_undecided
        self.rerun()

    def action_cursor(self, step: int) -> None:
        """j/k: move the highlight in the list shown."""
        target = self.pairs_list if self.open_check is not None else self.checks_list
        if step > 0:
            target.action_cursor_down()
        else:
            target.action_cursor_up()
