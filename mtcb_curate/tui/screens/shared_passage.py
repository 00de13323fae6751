"""The shared-passage screen: pairs whose passages are the same or overlap while their questions
differ, one group per row, largest first. A warning (``shared_passage``), not a duplicate.

Groups are found in a thread worker (``clusters.find_shared``: located passages overlap by
document offsets; "distinct questions on shared evidence" and "not duplicates" marks hold).
Each row shows the members' questions and the shared passage, so one key settles it: ``n``
marks the selected group "distinct questions on shared evidence" (saved at once, ``u`` in the
review screen undoes it) and it leaves the list; ``N`` (twice: it asks first) marks every group
shown in one step (one ``u`` undoes them all); ``enter``/``o`` returns its first member not
rejected for the review screen to show (``x`` there rejects a true duplicate).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from mtcb_curate import neardup
from mtcb_curate.app import clusters
from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import CurateError
from mtcb_curate.neardup import Cluster
from mtcb_curate.plaintext import one_line
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.changes import ChangeResult, run_change

#: Member questions shown per group row (the rest are counted).
QUESTIONS_SHOWN = 3
#: Characters of a question, and of the shared passage, on a group row.
QUESTION_CHARS = 120
PASSAGE_CHARS = 160

HINT = ("↑/↓ select · n distinct questions on shared evidence · N all shown groups · u in the review "
        "screen undoes · enter/o open its first pair · esc close")


@dataclass(eq=False)
class SharedListFound(Message, bubble=False):
    """Every shared-passage group (resolved ones included), or the search's ``error``."""

    groups: list[Cluster]
    error: Exception | None = None


class SharedPassageScreen(ModalScreen[int | None]):
    """Lists the unresolved shared-passage groups of ``session``. Returns a pair id to show in
    the review screen (``enter``/``o``), or None (``escape``).

    Attributes:
        groups: every group found (resolved ones included).
        shown: the unresolved ones, as listed (a group marked distinct leaves it).
        marked: groups marked "distinct questions on shared evidence" while the screen was open.
        searching: True while the worker runs.
    """

    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("n", "distinct", "distinct questions"),
        Binding("N", "distinct_all", "all distinct"),
        Binding("o", "open_first", "open first pair"),
    ]

    def __init__(self, session: ReviewSession, threshold: float = neardup.DEFAULT_THRESHOLD) -> None:
        super().__init__()
        self.session = session
        self.threshold = threshold
        self.groups: list[Cluster] = []
        self.shown: list[Cluster] = []
        self.marked: list[Cluster] = []
        self.searching = True
        self._armed_all: int | None = None  # groups shown when N was pressed once

    @property
    def changed(self) -> bool:
        """True once a group was marked (the review screen searches again)."""
        return bool(self.marked)

    def compose(self) -> ComposeResult:
        with Vertical(id="dedup-dialog", classes="dialog"):
            title = Text()
            title.append("Shared passages", style="bold")
            title.append(" · different questions on the same or overlapping evidence (a warning, not duplicates)",
                         style="dim")
            if self.session.read_only:
                title.append("  READ-ONLY", style="bold reverse yellow")
            yield Static(title, id="dedup-title")
            yield Static(Text("searching…", style="italic"), id="dedup-status")
            yield OptionList(id="dedup-list")
            yield Static(Text(HINT, style="dim"), id="dedup-hint")

    def on_mount(self) -> None:
        self._find()
        self.query_one(OptionList).focus()

    @work(thread=True, exclusive=True, group="shared-passages", exit_on_error=False)
    def _find(self) -> None:
        worker = get_current_worker()
        try:
            found = clusters.find_shared(self.session, threshold=self.threshold)
        except Exception as exc:  # noqa: BLE001 - reported on screen, the app stays up
            if not worker.is_cancelled:
                self.post_message(SharedListFound([], exc))
            return
        if not worker.is_cancelled:
            self.post_message(SharedListFound(found))

    @on(SharedListFound)
    def _found(self, message: SharedListFound) -> None:
        self.searching = False
        if message.error is not None:
            self._set_status(Text(f"The search failed: {message.error}", style="bold red"))
            return
        self.groups = message.groups
        self._list()

    # -- the list -----------------------------------------------------------------------------

    def _list(self) -> None:
        options = self.query_one(OptionList)
        before = options.highlighted
        self.shown = [g for g in clusters.unresolved(self.session, self.groups) if g not in self.marked]
        options.set_options(Option(self._row(g)) for g in self.shown)
        if self.shown:
            options.highlighted = min(before or 0, len(self.shown) - 1)
        status = Text()
        status.append(f"{len(self.shown):,} shared-passage group(s)", style="bold")
        status.append(f" · {sum(g.size for g in self.shown):,} pairs")
        if self.marked:
            status.append(f" · {len(self.marked):,} marked distinct", style="dim")
        if not self.shown:
            status.append(" · done", style="green")
        self._set_status(status)

    def _row(self, g: Cluster) -> Text:
        t = Text()
        t.append(f"{g.size:>3} pairs", style="bold")
        t.append("  ")
        t.append(g.reason, style="cyan")
        t.append("  " + one_line(g.doc_keys[0], 24) if g.doc_keys else "", style="dim")
        for pid in g.ids[:QUESTIONS_SHOWN]:
            view = self.session.view(pid)
            t.append(f"\n      #{pid} ", style="bold")
            if view.status is Status.REJECTED:
                t.append("✗ ", style="red")
            t.append(one_line(view.question, QUESTION_CHARS))
        if g.size > QUESTIONS_SHOWN:
            t.append(f"\n      +{g.size - QUESTIONS_SHOWN} more", style="dim")
        t.append("\n      passage: ", style="dim")
        t.append(one_line(self.session.view(g.ids[0]).passage, PASSAGE_CHARS), style="dim")
        return t

    def _set_status(self, text: Text) -> None:
        self.query_one("#dedup-status", Static).update(text)

    def _selected(self) -> Cluster | None:
        index = self.query_one(OptionList).highlighted
        return self.shown[index] if index is not None and 0 <= index < len(self.shown) else None

    # -- actions ------------------------------------------------------------------------------

    def action_distinct(self) -> None:
        """Mark the selected group "distinct questions on shared evidence": it is not warned
        about again (``u`` in the review screen undoes)."""
        g = self._selected()
        if g is None:
            return
        self._armed_all = None
        if self.session.read_only:
            self.notify("The workspace is open read-only: nothing can be marked.", severity="warning")
            return
        session = self.session
        run_change(self.app, lambda: clusters.mark_shared(session, g), what="distinct questions",
                   then=lambda result: self._distinct_done(result, g))

    def _distinct_done(self, result: ChangeResult, g: Cluster) -> None:
        try:
            result.get()
        except (CurateError, IndexError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self.marked.append(g)
        self._list()
        self.notify(f"{', '.join(f'#{i}' for i in g.ids[:6])}: distinct questions on shared evidence "
                    "(u in the review screen undoes)", timeout=3, markup=False)

    def action_distinct_all(self) -> None:
        """Mark every group shown "distinct questions on shared evidence" in one step: the first
        ``N`` says how many, the second marks them (``u`` in the review screen undoes all)."""
        if self.searching or not self.shown:
            return
        if self.session.read_only:
            self.notify("The workspace is open read-only: nothing can be marked.", severity="warning")
            return
        n = len(self.shown)
        if self._armed_all != n:
            self._armed_all = n
            status = Text()
            status.append(f"N again: all {n:,} group(s) ({sum(g.size for g in self.shown):,} pairs) distinct",
                          style="bold yellow")
            status.append(" · one u undoes", style="dim")
            self._set_status(status)
            return
        self._armed_all = None
        groups, session = list(self.shown), self.session
        run_change(self.app, lambda: clusters.mark_shared_all(session, groups),
                   what=f"distinct questions ({n:,} groups)", then=lambda result: self._distinct_all_done(result, groups))

    def _distinct_all_done(self, result: ChangeResult, groups: list[Cluster]) -> None:
        n = len(groups)
        try:
            result.get()
        except (CurateError, IndexError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self.marked.extend(groups)
        self._list()
        self.notify(f"{n:,} group(s) marked distinct questions on shared evidence (one u in the review screen "
                    "undoes)", timeout=3, markup=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.shown):
            self._open(self.shown[event.option_index])

    def action_open_first(self) -> None:
        """Close and show the selected group's first pair not rejected in the review screen."""
        g = self._selected()
        if g is not None:
            self._open(g)

    def _open(self, g: Cluster) -> None:
        live = [i for i in g.ids if self.session.status(i) is not Status.REJECTED]
        self.dismiss((live or list(g.ids))[0])

    def action_close(self) -> None:
        self.dismiss(None)
