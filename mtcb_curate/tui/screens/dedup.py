"""The dedup screen: every unresolved near-duplicate cluster, largest first.

Clusters are found in a thread worker (``clusters.find``: rapidfuzz clusters merged with the
stored LLM clusters, "not duplicates" honoured) at a threshold the curator changes with ``+``
and ``-``. ``enter`` opens a cluster side by side (``ClusterScreen``); the list is refreshed
when it closes. ``o`` (here or in the cluster) returns a pair id for the review screen to show.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from mtcb_curate.app import clusters
from mtcb_curate import neardup
from mtcb_curate.neardup import Cluster
from mtcb_curate.plaintext import one_line
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.messages import ClusterListFound, ClusterSearchFailed
from mtcb_curate.tui.screens.cluster import ClusterScreen

#: What ``+`` and ``-`` add to the threshold, and its bounds.
THRESHOLD_STEP = 5.0
THRESHOLD_MIN = 50.0
THRESHOLD_MAX = 100.0
#: Member ids listed per cluster row.
IDS_SHOWN = 10

HINT = "↑/↓ select · enter open the cluster · o open its first pair · +/- threshold · esc close"


class DedupScreen(ModalScreen[int | None]):
    """Lists the unresolved clusters of ``session`` at ``threshold``. Returns a pair id to show
    in the review screen (``o``, or opening a pair from a cluster), or None (``escape``).

    Attributes:
        threshold: the current question-similarity threshold (50-100).
        clusters: every cluster found at ``threshold`` (resolved ones included).
        shown: the unresolved ones, as listed.
        searching: True while the worker runs.
    """

    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("o", "open_first", "open first pair"),
        Binding("plus,equals_sign", "threshold(1)", "threshold +5"),
        Binding("minus", "threshold(-1)", "threshold -5"),
    ]

    def __init__(self, session: ReviewSession, threshold: float = neardup.DEFAULT_THRESHOLD) -> None:
        super().__init__()
        self.session = session
        self.threshold = float(min(THRESHOLD_MAX, max(THRESHOLD_MIN, threshold)))
        self.clusters: list[Cluster] = []
        self.shown: list[Cluster] = []
        self.searching = False
        self._cluster_screen: ClusterScreen | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dedup-dialog", classes="dialog"):
            yield Static(id="dedup-title")
            yield Static(id="dedup-status")
            yield OptionList(id="dedup-list")
            yield Static(Text(HINT, style="dim"), id="dedup-hint")

    def on_mount(self) -> None:
        self._search()
        self.query_one(OptionList).focus()

    # -- searching ----------------------------------------------------------------------------

    def _search(self) -> None:
        self.searching = True
        self._update_title()
        self._set_status(Text(f"searching… (threshold {self.threshold:g})", style="italic"))
        self._find(self.threshold)

    @work(thread=True, exclusive=True, group="dedup", exit_on_error=False)
    def _find(self, threshold: float) -> None:
        worker = get_current_worker()
        try:
            found = clusters.find(self.session, threshold=threshold)
        except Exception as exc:  # noqa: BLE001 - reported on screen, the app stays up
            if not worker.is_cancelled:
                self.post_message(ClusterSearchFailed(exc, threshold))
            return
        if not worker.is_cancelled:
            self.post_message(ClusterListFound(threshold, found))

    @on(ClusterListFound)
    def _found(self, message: ClusterListFound) -> None:
        threshold, found = message.threshold, message.clusters
        if threshold != self.threshold or not self.is_attached:
            return  # a newer search is on its way
        self.searching = False
        self.clusters = found
        self._list()

    @on(ClusterSearchFailed)
    def _failed(self, message: ClusterSearchFailed) -> None:
        threshold, exc = message.threshold, message.error
        if threshold != self.threshold or not self.is_attached:
            return
        self.searching = False
        self._set_status(Text(f"The search failed: {exc}", style="bold red"))
        self.notify(f"Near-duplicate search failed: {exc}", severity="error", timeout=10, markup=False)

    # -- the list -----------------------------------------------------------------------------

    def _list(self) -> None:
        """Show the unresolved clusters (statuses as they are now), keeping the selection."""
        options = self.query_one(OptionList)
        before = options.highlighted
        selected = self.shown[before].ids if before is not None and before < len(self.shown) else None
        self.shown = clusters.unresolved(self.session, self.clusters)
        options.set_options(Option(self._row(c)) for c in self.shown)
        if self.shown:
            index = next((k for k, c in enumerate(self.shown) if c.ids == selected), None)
            if index is None:
                index = min(before or 0, len(self.shown) - 1)
            options.highlighted = index
        self._update_title()
        if not self.searching:
            pairs = sum(c.size for c in self.shown)
            settled = len(self.clusters) - len(self.shown)
            status = Text()
            status.append(f"{len(self.shown):,} unresolved cluster(s)", style="bold")
            status.append(f" · {pairs:,} pairs")
            if settled:
                status.append(f" · {settled:,} settled", style="dim")
            if not self.shown:
                status.append(" · nothing to settle at this threshold", style="green")
            self._set_status(status)

    def _row(self, c: Cluster) -> Text:
        t = Text()
        t.append(f"{c.size:>3} pairs", style="bold")
        t.append("  ")
        t.append(c.reason, style="yellow")
        ids = " ".join(f"#{i}" for i in c.ids[:IDS_SHOWN])
        if c.size > IDS_SHOWN:
            ids += f" +{c.size - IDS_SHOWN}"
        t.append(f"  {ids}", style="cyan")
        keys = ", ".join(one_line(k, 24) for k in c.doc_keys[:3])
        if len(c.doc_keys) > 3:
            keys += f" +{len(c.doc_keys) - 3}"
        t.append(f"  {keys}", style="dim")
        t.append("\n      ")
        t.append(one_line(self.session.view(c.ids[0]).question, 160))
        return t

    def _update_title(self) -> None:
        t = Text()
        t.append("Near-duplicates", style="bold")
        t.append(f" · threshold {self.threshold:g}", style="bold yellow")
        t.append(f" (+/- by {THRESHOLD_STEP:g}, {THRESHOLD_MIN:g}-{THRESHOLD_MAX:g})", style="dim")
        if self.session.read_only:
            t.append("  READ-ONLY", style="bold reverse yellow")
        self.query_one("#dedup-title", Static).update(t)

    def _set_status(self, text: Text) -> None:
        self.query_one("#dedup-status", Static).update(text)

    def _selected(self) -> Cluster | None:
        index = self.query_one(OptionList).highlighted
        return self.shown[index] if index is not None and 0 <= index < len(self.shown) else None

    # -- actions ------------------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.shown):
            self._open_cluster(self.shown[event.option_index])

    def _open_cluster(self, cluster: Cluster) -> None:
        self._cluster_screen = ClusterScreen(self.session, cluster)
        self.app.push_screen(self._cluster_screen, self._cluster_closed)

    def _cluster_closed(self, pid: int | None) -> None:
        changed = self._cluster_screen is not None and self._cluster_screen.changed
        self._cluster_screen = None
        if pid is not None:
            self.dismiss(pid)
            return
        if changed:
            self._list()  # statuses changed by "keep": at once
            self._search()  # "not duplicates" changes the clusters themselves

    def action_open_first(self) -> None:
        """Close and show the selected cluster's first pair in the review screen."""
        c = self._selected()
        if c is not None:
            self.dismiss(c.ids[0])

    def action_threshold(self, direction: int) -> None:
        """Raise (+1) or lower (-1) the threshold by ``THRESHOLD_STEP`` and search again."""
        new = min(THRESHOLD_MAX, max(THRESHOLD_MIN, self.threshold + direction * THRESHOLD_STEP))
        if new == self.threshold:
            self.notify(f"The threshold stays within {THRESHOLD_MIN:g}-{THRESHOLD_MAX:g}.", timeout=2)
            return
        self.threshold = new
        self._search()

    def action_close(self) -> None:
        self.dismiss(None)
