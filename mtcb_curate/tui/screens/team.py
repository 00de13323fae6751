"""The team screen (``C``): on a shared workspace, each curator's decisions and pace, agreement
on the overlap (Cohen's kappa per pair of curators, Krippendorff's alpha), and the conflicts
view, where a lead decides a pair the curators disagree on (``a`` accepts, ``x`` rejects with
the rejecting curator's reason, ``enter`` shows the pair). Figures come from ``app.team`` in a
worker (they are database queries). Curator names and reasons are plain ``Text``."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from mtcb_curate.errors import CurateError
from mtcb_curate.dataset.model import Status
from mtcb_curate.plaintext import one_line
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.changes import ChangeResult, run_change
from mtcb_curate.tui.messages import TeamComputed

_HINT = "a accept · x reject · enter show the pair · r refresh · esc close"


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def report_text(rep: dict) -> Text:
    """The report as plain text lines (names never parsed as markup)."""
    out = Text()
    out.append(f"{'curator':<24}{'decided':>9}{'per hour':>10}\n", style="bold")
    for c in rep["curators"]:
        pace = "-" if c["per_hour"] is None else f"{c['per_hour']:.0f}"
        out.append(f"{one_line(c['name'], 24):<24}{c['decided']:>9}{pace:>10}\n")
    o = rep["overlap"]
    out.append(f"overlap: {o['pairs']} pairs, {o['decided_by_two']} decided by two, {o['agreed']} agreed, "
               f"{o['open_conflicts']} open conflicts\n")
    out.append(f"Krippendorff's alpha: {_fmt(rep['agreement']['alpha'])}")
    for k in rep["agreement"]["kappas"][:6]:
        out.append(f" · kappa {one_line(k['a'], 12)}/{one_line(k['b'], 12)} {_fmt(k['kappa'])} ({k['pairs']})")
    for reason, a in list(rep["per_reason"].items())[:6]:
        out.append(f"\nrejected as {one_line(reason, 30)}: alpha {_fmt(a['alpha'])}, {a['agreed']}/{a['pairs']} agreed")
    return out


class TeamScreen(ModalScreen[int | None]):
    """The team's figures and open conflicts; dismissed with the pair id to show (or None)."""

    BINDINGS = [
        Binding("escape,q", "close", "close", id="team_close"),
        Binding("a", "resolve('accepted')", "accept", id="team_accept"),
        Binding("x", "resolve('rejected')", "reject", id="team_reject"),
        Binding("r", "refresh", "refresh", id="team_refresh"),
    ]

    def __init__(self, session: ReviewSession):
        super().__init__(id="team-screen")
        self.session = session
        self.conflicts: dict[int, dict] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text("Team (computing…)"), id="team-title")
        yield Static(Text(""), id="team-body")
        yield OptionList(id="team-conflicts")
        yield Static(Text(_HINT, style="dim"), id="team-hint")

    def on_mount(self) -> None:
        self._compute()

    @work(thread=True, exclusive=True, group="team", exit_on_error=False)
    def _compute(self) -> None:
        from mtcb_curate.app import team

        try:
            rep = team.report(self.session)
            conflicts = team.conflicts(self.session)
        except Exception as exc:  # noqa: BLE001 - shown on the screen, one line
            self.post_message(TeamComputed(None, None, f"{one_line(str(exc), 200)}"))
            return
        self.post_message(TeamComputed(rep, conflicts))

    @on(TeamComputed)
    def _computed(self, message: TeamComputed) -> None:
        title = self.query_one("#team-title", Static)
        if message.error is not None:
            title.update(Text(f"Team: {message.error}", style="red"))
            return
        me = getattr(self.session.workspace, "curator", "")
        title.update(Text(f"Team of {one_line(self.session.dataset.name, 30)}: you are {one_line(me, 24)}; "
                          f"{len(message.conflicts)} open conflicts"))
        self.query_one("#team-body", Static).update(report_text(message.report))
        self.conflicts = message.conflicts
        options = self.query_one("#team-conflicts", OptionList)
        options.clear_options()
        for pid, votes in sorted(message.conflicts.items()):
            line = f"#{pid}  " + "; ".join(f"{name}: {status}" + (f" ({reason})" if reason else "")
                                            for name, (status, reason) in sorted(votes.items()))
            options.add_option(Option(Text(one_line(line, 200)), id=str(pid)))
        if message.conflicts:
            options.highlighted = 0
            options.focus()

    def _selected(self) -> int | None:
        options = self.query_one("#team-conflicts", OptionList)
        if options.highlighted is None or not self.conflicts:
            return None
        return int(options.get_option_at_index(options.highlighted).id)

    def action_resolve(self, status: str) -> None:
        """The lead decides the highlighted conflict: accepted, or rejected with the reason of
        the (first) curator who rejected it."""
        from mtcb_curate.app import team

        pid = self._selected()
        if pid is None:
            self.notify("No open conflict.", timeout=3)
            return
        reason = None
        if status == Status.REJECTED:
            reason = next((r for s, r in (v for _, v in sorted(self.conflicts[pid].items())) if s == Status.REJECTED),
                          None)
        session = self.session
        run_change(self.app, lambda: team.resolve(session, pid, status, reason), what=f"the lead's decision on #{pid}",
                   then=lambda result: self._resolved(result, pid, status))

    def _resolved(self, result: ChangeResult, pid: int, status: str) -> None:
        try:
            result.get()
        except CurateError as exc:
            self.notify(str(exc), severity="error", timeout=8, markup=False)
            return
        self.notify(f"Pair #{pid}: {status} (your decision as lead).", timeout=3, markup=False)
        self._compute()

    def action_refresh(self) -> None:
        """Read the figures again (other curators keep deciding)."""
        self._compute()

    @on(OptionList.OptionSelected, "#team-conflicts")
    def _show(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id))

    def action_close(self) -> None:
        """Close the screen."""
        self.dismiss(None)
