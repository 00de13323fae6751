"""One near-duplicate cluster, its members side by side: keep one, split it, or mark "not
duplicates".

A split keeps some members as the cluster and moves the others out (``app.clusters.split``):
``space`` marks the members to keep, ``s`` splits; ``m`` moves the chosen member out alone.
Saved at once (kept across restarts), one ``u`` in the review screen undoes it.

Members are columns (up to ``COLUMNS_MAX``) or rows (more), each with its id, status,
document key, question, answer, passage and question similarity to the other members.

After ``k`` (keep) or ``n`` (not duplicates) the screen stays open and shows the new statuses
and what was done; ``escape`` closes it (returns None), ``o``/``enter`` returns the chosen
member's id for the review screen to show. Both actions are undone in the review screen (``u``).
"""

from __future__ import annotations


from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from mtcb_curate.app import clusters
from mtcb_curate.errors import CurateError
from mtcb_curate.dataset.model import Status
from mtcb_curate.neardup import Cluster
from mtcb_curate.plaintext import one_line, printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.badges import status_text
from mtcb_curate.tui.changes import ChangeResult, run_change

#: Up to this many members are shown as columns; more as rows.
COLUMNS_MAX = 4
#: Keeping one pair of a cluster that would reject more than this many others asks for a second
#: ``k`` (templated questions can chain into clusters of thousands).
CONFIRM_KEEP_ABOVE = 5
#: Longest passage shown per member (characters), in columns / in rows; the rest is cut with a note.
PASSAGE_CHARS_COLUMNS = 2000
PASSAGE_CHARS_ROWS = 400
#: Longest question or answer shown per member (characters).
FIELD_CHARS = 1000
#: Similarity scores listed per member.
SCORES_SHOWN = 8

HINT = ("←/→ 1-9 choose · k keep it, reject the others · space mark · s split off the unmarked · "
        "m move it out · n not duplicates · o open · esc close")


def _field(text: str, limit: int) -> Text:
    if not text:
        return Text("(empty)", style="dim italic")
    out = Text(printable(text[:limit]))
    if len(text) > limit:
        out.append(f" … ({len(text):,} characters)", style="dim italic")
    return out


class ClusterScreen(ModalScreen[int | None]):
    """The members of ``cluster`` side by side. Returns the id of the pair to open (``o`` or
    ``enter``) or None (``escape``); keep and "not duplicates" are saved at once and the
    screen stays open.

    Attributes:
        chosen: index in ``cluster.ids`` of the chosen member.
        changed: True once keep or "not duplicates" changed the workspace.
    """

    BINDINGS = [
        # priority: the member panes scroll with the arrows otherwise.
        Binding("left", "choose_by(-1)", "previous member", priority=True),
        Binding("right", "choose_by(1)", "next member", priority=True),
        *[Binding(str(i + 1), f"choose({i})", f"member {i + 1}", show=False) for i in range(9)],
        Binding("k", "keep", "keep chosen"),
        Binding("n", "not_duplicates", "not duplicates"),
        Binding("space", "toggle_split", "mark to keep", show=False),
        Binding("s", "split", "split"),
        Binding("m", "move_out", "move out"),
        Binding("o,enter", "open", "open pair"),
        Binding("escape", "close", "close"),
    ]
    AUTO_FOCUS = None

    def __init__(self, session: ReviewSession, cluster: Cluster, chosen_id: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.cluster = cluster
        self.chosen = cluster.ids.index(chosen_id) if chosen_id in cluster.ids else 0
        self.changed = False
        self._columns = cluster.size <= COLUMNS_MAX
        self._bodies: list[Static] = []
        self._panes: list[VerticalScroll] = []
        self._armed: tuple[int, int] | None = None  # (kept id, rejections) awaiting a second k
        self.marked: set[int] = set()  # members marked to stay in the cluster at a split
        self.moved: set[int] = set()  # members moved out by a split on this screen

    @property
    def chosen_id(self) -> int:
        """The chosen member's pair id."""
        return self.cluster.ids[self.chosen]

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        c = self.cluster
        title = Text()
        title.append(f"Near-duplicate cluster · {c.size} pairs", style="bold")
        title.append(" · ")
        title.append(printable(c.reason, keep_newlines=False), style="bold yellow")
        keys = ", ".join(one_line(k, 40) for k in c.doc_keys[:5])
        more = f" and {len(c.doc_keys) - 5} more" if len(c.doc_keys) > 5 else ""
        title.append(f" · {self._key_column()}: {keys}{more}", style="dim")
        self._bodies = [Static(self._member_text(i), classes="member-body") for i in range(c.size)]
        self._panes = [VerticalScroll(body, classes="member", id=f"member-{i}", can_focus=False)
                       for i, body in enumerate(self._bodies)]
        members: Widget = (Horizontal(*self._panes, id="cluster-members", classes="-columns") if self._columns
                           else VerticalScroll(*self._panes, id="cluster-members", classes="-rows", can_focus=False))
        with Vertical(id="cluster-dialog", classes="dialog"):
            yield Static(title, id="cluster-title")
            yield members
            yield Static(id="cluster-note")
            yield Static(Text(HINT, style="dim"), id="cluster-hint")

    def on_mount(self) -> None:
        self._mark_chosen()

    def _key_column(self) -> str:
        return str(self.session.dataset.columns.get("doc_key", "document"))

    def _member_text(self, index: int) -> Text:
        pid = self.cluster.ids[index]
        view = self.session.view(pid)
        t = Text()
        if index < 9:
            t.append(f" {index + 1} ", style="bold reverse")
            t.append(" ")
        t.append(f"#{pid}", style="bold")
        if pid in self.marked:
            t.append("  ✓ keep", style="bold cyan")
        if pid in self.moved:
            t.append("  moved out", style="bold magenta")
        t.append("  ")
        t.append_text(status_text(view.status, view.reason))
        if view.edited:
            t.append("  edited", style="italic cyan")
        t.append(f"\n{self._key_column()}: ", style="dim")
        t.append(printable(view.pair.doc_key, keep_newlines=False) or "(none)")
        closest = self.cluster.closest(pid, SCORES_SHOWN)
        if closest:
            t.append("\nsimilarity: ", style="dim")
            t.append(" · ".join(f"#{other} {score:.1f}" for other, score in closest))
            if self.cluster.size - 1 > len(closest):
                t.append(" · …", style="dim")
        passage_limit = PASSAGE_CHARS_COLUMNS if self._columns else PASSAGE_CHARS_ROWS
        for label, text, limit in (("Question", view.question, FIELD_CHARS), ("Answer", view.answer, FIELD_CHARS),
                                   ("Supporting passage", view.passage, passage_limit)):
            t.append(f"\n\n{label}\n", style="bold")
            t.append_text(_field(text, limit))
        return t

    def _refresh_members(self) -> None:
        for i, body in enumerate(self._bodies):
            body.update(self._member_text(i))

    def _mark_chosen(self) -> None:
        for i, pane in enumerate(self._panes):
            pane.set_class(i == self.chosen, "-chosen")
        if not self._columns:
            self._panes[self.chosen].scroll_visible(animate=False)

    def _note(self, text: Text) -> None:
        self.query_one("#cluster-note", Static).update(text)

    # -- actions ------------------------------------------------------------------------------

    def action_choose(self, index: int) -> None:
        """Choose member ``index`` (0-based; keys 1-9)."""
        if 0 <= index < self.cluster.size:
            self.chosen = index
            self._mark_chosen()

    def action_choose_by(self, step: int) -> None:
        """Choose the previous (-1) or next (+1) member, wrapping around."""
        self.action_choose((self.chosen + step) % self.cluster.size)

    def on_click(self, event: events.Click) -> None:
        node = event.widget
        while node is not None and node is not self:
            if node in self._panes:
                self.action_choose(self._panes.index(node))
                return
            node = node.parent

    def _writable(self) -> bool:
        if self.session.read_only:
            self.notify("The workspace is open read-only: nothing can be decided.", severity="warning")
            return False
        return True

    def action_keep(self) -> None:
        """Keep the chosen member: it is accepted, and every other member not already rejected
        is rejected with ``duplicate of #ID`` (one transaction; ONE ``u`` in the review screen
        undoes it all)."""
        if not self._writable():
            return
        keep = self.chosen_id
        if self.session.status(keep) is Status.REJECTED:
            self.notify(f"#{keep} is rejected: choose another pair to keep.", severity="warning")
            return
        others = [i for i in self.cluster.ids if i != keep and self.session.status(i) is not Status.REJECTED]
        if not others and self.session.status(keep) is Status.ACCEPTED:
            self.notify(f"Every other pair is already rejected: #{keep} is the one left.", timeout=3)
            return
        if len(others) > CONFIRM_KEEP_ABOVE and self._armed != (keep, len(others)):
            self._armed = (keep, len(others))
            note = Text(f"Press k again to reject {len(others)} pairs as duplicates of #{keep}.", style="bold yellow")
            self._note(note)
            return
        self._armed = None
        session, ids = self.session, [keep, *others]
        run_change(self.app, lambda: clusters.keep_one(session, keep, ids), what=f"keeping #{keep}",
                   then=lambda result: self._kept(result, keep))

    def _kept(self, result: ChangeResult, keep: int) -> None:
        try:
            rejected = result.get()
        except (CurateError, IndexError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self.changed = True
        self._refresh_members()
        note = Text()
        note.append(f"Kept and accepted #{keep}", style="bold green")
        if rejected:
            note.append(f"; rejected {', '.join(f'#{i}' for i in rejected)} as duplicate of #{keep}")
        note.append(" (u in the review screen undoes)", style="dim")
        self._note(note)

    def action_not_duplicates(self) -> None:
        """Remember that no two members are duplicates: the cluster is never raised again."""
        if not self._writable():
            return
        session, ids = self.session, list(self.cluster.ids)
        run_change(self.app, lambda: clusters.mark_not_duplicates(session, ids), what="not duplicates",
                   then=self._marked)

    def _marked(self, result: ChangeResult) -> None:
        try:
            marked = result.get()
        except (CurateError, IndexError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        if not marked:
            self.notify("These pairs are already marked not duplicates.", timeout=3)
            return
        self.changed = True
        note = Text()
        note.append("Marked not duplicates", style="bold green")
        note.append(f": {', '.join(f'#{i}' for i in self.cluster.ids)} will not be raised together again")
        note.append(" (u in the review screen undoes)", style="dim")
        self._note(note)

    def action_toggle_split(self) -> None:
        """Mark (or unmark) the chosen member to stay in the cluster at the next split (``s``)."""
        pid = self.chosen_id
        if pid in self.moved:
            self.notify(f"#{pid} is already moved out of this cluster.", timeout=3)
            return
        self.marked ^= {pid}
        self._bodies[self.chosen].update(self._member_text(self.chosen))
        left = [i for i in self.cluster.ids if i not in self.moved]
        note = Text()
        if self.marked:
            note.append(f"{len(self.marked)} of {len(left)} marked to keep in the cluster", style="bold cyan")
            note.append(": s moves the others out", style="dim")
        self._note(note)

    def action_split(self) -> None:
        """Split: the marked members stay the cluster, every other member (not moved out yet)
        is moved out (marked "not duplicates" of each kept member; one undo step)."""
        left = [i for i in self.cluster.ids if i not in self.moved]
        keep = [i for i in left if i in self.marked]
        if not keep:
            self.notify("Mark the members to keep in the cluster with space first (m moves the chosen one out).",
                        severity="warning", timeout=4)
            return
        self._split(keep, [i for i in left if i not in self.marked])

    def action_move_out(self) -> None:
        """Move the chosen member out of the cluster (one undo step)."""
        pid = self.chosen_id
        if pid in self.moved:
            self.notify(f"#{pid} is already moved out of this cluster.", timeout=3)
            return
        left = [i for i in self.cluster.ids if i not in self.moved]
        self._split([i for i in left if i != pid], [pid])

    def _split(self, keep: list[int], out: list[int]) -> None:
        if not self._writable():
            return
        if not out:
            self.notify("Every member is marked to keep: nothing to move out.", severity="warning", timeout=4)
            return
        from mtcb_curate.app.clusters import split

        session, cluster = self.session, self.cluster
        run_change(self.app, lambda: split(session, cluster, keep), what="the split",
                   then=lambda result: self._split_done(result, keep, out))

    def _split_done(self, result: ChangeResult, keep: list[int], out: list[int]) -> None:
        try:
            changed = result.get()
        except (CurateError, IndexError, ValueError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self.moved |= set(out)
        self.marked -= set(out)
        if changed:
            self.changed = True
        self._refresh_members()
        note = Text()
        note.append(f"Moved {', '.join(f'#{i}' for i in out)} out of the cluster", style="bold green")
        note.append(f"; {', '.join(f'#{i}' for i in keep)} stay{'s' if len(keep) == 1 else ''}")
        note.append(" (u in the review screen undoes)", style="dim")
        self._note(note)

    def action_open(self) -> None:
        """Close and show the chosen pair in the review screen."""
        self.dismiss(self.chosen_id)

    def action_close(self) -> None:
        self.dismiss(None)
