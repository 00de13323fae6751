"""Semantic dedup by the LLM over every pair, stored as near-duplicate clusters.

The run dialog (:class:`~mtcb_curate.tui.screens.llm_run.LLMRunScreen`) estimates the calls
(batches of 50 and a final pass) and asks first when there are more than 10;
``llm.dedup.semantic_dedup`` runs in its worker. Nothing is rejected here: the clusters are
stored in the workspace (``clusters.store_llm_clusters``, replacing the previous run's) and the
curator resolves them on the near-duplicate screen. A cancelled run stores nothing (its replies
are cached, so running it again does not pay twice).
"""

from __future__ import annotations

import threading
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.errors import CurateError
from mtcb_curate.plaintext import one_line, printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.screens.llm_run import LLMRunScreen
from mtcb_curate.tui.widgets.llm_status import LLMStatus

#: Clusters listed in the summary (all are stored).
MAX_LISTED = 30


class SemanticDedupScreen(ModalScreen[None]):
    """Run the LLM's semantic dedup over all pairs and show what it found.

    Args:
        session: the review session (its workspace stores the clusters).

    Dismiss value: None. Keys: ``escape`` closes.
    """

    BINDINGS = [Binding("escape,enter", "close", "close", show=False)]

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.result: Any = None
        self.stored = False
        self._items: list[Any] | None = None
        self._items_lock = threading.Lock()

    def compose(self) -> ComposeResult:
        with Vertical(id="sdedup-dialog", classes="dialog"):
            yield Static(Text("LLM semantic dedup", style="bold"), id="sdedup-title")
            with VerticalScroll(id="sdedup-body"):
                yield Static(id="sdedup-summary")
            yield LLMStatus(id="sdedup-status")
            yield Static(id="sdedup-keys", classes="llm-keys")

    def on_mount(self) -> None:
        self.query_one("#sdedup-body", VerticalScroll).can_focus = False
        keys = Text()
        keys.append(" esc ", style="bold reverse")
        keys.append(" close")
        self.query_one("#sdedup-keys", Static).update(keys)
        if self.session.read_only:
            self._summary(Text("The workspace is open read-only: dedup results could not be stored.",
                               style="bold"))
            self._status("read-only workspace: nothing run", "error")
            return
        self._summary(Text(f"{len(self.session):,} questions, in batches of 50, then a final pass…", style="dim"))
        self.app.push_screen(LLMRunScreen(f"LLM semantic dedup of {len(self.session):,} questions", self._job,
                                          self._estimate, unit="call"), self._got)

    def _summary(self, text: Text) -> None:
        self.query_one("#sdedup-summary", Static).update(text)

    def _status(self, message: str, kind: str = "") -> None:
        """The one-line outcome under the summary."""
        self.query_one("#sdedup-status", LLMStatus).show(message, kind)

    # -- worker side (the run dialog's threads) ------------------------------------------------

    def items(self) -> list[Any]:
        """Every pair's current question, answer and document key, as dedup items."""
        from mtcb_curate.llm.dedup import DedupItem

        with self._items_lock:
            if self._items is None:
                s = self.session
                self._items = [DedupItem(pid, v.question, v.answer, v.pair.doc_key)
                               for pid, v in ((pid, s.view(pid)) for pid in range(len(s)))]
            return self._items

    def _estimate(self, client: Any) -> Any:
        from mtcb_curate.llm.estimate import estimate_dedup

        return estimate_dedup(self.items(), client.config, client=client)

    def _job(self, client: Any, cancel, on_retry, on_progress) -> Any:
        from mtcb_curate.llm.dedup import semantic_dedup

        return semantic_dedup(client, self.items(), cancel=cancel, on_retry=on_retry, on_progress=on_progress)

    # -- the result -------------------------------------------------------------------------------

    def _got(self, result: Any) -> None:
        if result is None:  # declined, closed, or an error (shown in the run dialog)
            self.dismiss(None)
            return
        self.result = result
        t = Text()
        groups = [list(c.members) for c in result.clusters]
        if result.cancelled:
            t.append("Cancelled: nothing stored. ", style="bold")
            t.append("The replies so far are cached, so running it again does not pay for them.\n\n")
        else:
            try:
                from mtcb_curate.app import clusters

                clusters.store_llm_clusters(self.session, groups)
                self.stored = True
            except CurateError as exc:
                t.append(f"Not stored: {printable(str(exc), keep_newlines=False)}\n\n", style="bold")
                self._status(f"not stored: {exc}", "error")
        t.append(f"{result.calls} call(s), {result.cached_calls} from the cache. ")
        t.append(f"{len(groups)} cluster(s) found", style="bold")
        t.append(f", {len(result.dropped)} question(s) judged duplicates.\n")
        if result.cancelled:
            self._status("cancelled: nothing stored", "warning")
        elif self.stored:
            self._status(f"{len(groups)} cluster(s) stored; nothing rejected")
        if self.stored:
            t.append("Stored as near-duplicate clusters (reason \"LLM: semantic duplicate\"): resolve them on the "
                     "near-duplicate screen. Nothing was rejected.\n")
        if result.reports:
            t.append("\nReports\n", style="bold")
            for r in result.reports:
                t.append(f"• {printable(str(r), keep_newlines=False)}\n", style="yellow")
        if result.clusters:
            t.append("\nClusters (kept first)\n", style="bold")
            for c in result.clusters[:MAX_LISTED]:
                t.append(" ".join(f"#{i}" for i in c.members), style="bold")
                t.append(f"  {one_line(self.session.view(c.keep).question, 90)}\n")
            if len(result.clusters) > MAX_LISTED:
                t.append(f"… and {len(result.clusters) - MAX_LISTED} more\n", style="dim")
        self._summary(t)

    def action_close(self) -> None:
        """Close the summary."""
        self.dismiss(None)
