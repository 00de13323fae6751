"""Generate new pairs for every document of the current view (the filter bar's documents).

The app's side of ``mtcb-curate generate NAME --all --docs ...``, through the same workflow
(``app.generation``): the curator types N (new pairs per document), the run dialog
(:class:`~mtcb_curate.tui.screens.llm_run.LLMRunScreen`) prepares the plan (or resumes the
unfinished one with the same options) and shows the estimate, asking first when it is more than
10 calls; the calls run up to ``[llm] concurrency`` at once with progress per document and
cancel; then the candidates are added in plan order as undecided pairs (here, on the app's
thread) and the outcome is listed. A cancelled or failed run keeps its plan in the workspace
folder: the next run with the same N over the same documents resumes it, answered from the
cache for the calls that finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from mtcb_curate.errors import CurateError
from mtcb_curate.plaintext import printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.keys import keys_line, typed_count
from mtcb_curate.tui.phases import RunPhase
from mtcb_curate.tui.screens.llm_run import LLMRunScreen
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.widgets.llm_status import LLMStatus

#: Most new pairs per document one run may ask for.
MAX_PER_DOC = 20
#: Document keys listed by name in the dialog (the rest are counted).
MAX_LISTED = 12


class CorpusGenerateScreen(CurateAppAccess, ModalScreen[int | None]):
    """New pairs for each of ``doc_keys`` from the LLM.

    Args:
        session: the review session (new pairs are added through it).
        doc_keys: the documents of the current view, in view order.

    Dismiss value: the id of the first pair added, or None.

    Keys: type N then ``enter`` (estimate, confirm, run); ``escape`` closes.
    """

    BINDINGS = [Binding("escape", "close", "close", show=False)]

    def __init__(self, session: ReviewSession, doc_keys: Sequence[str], n: int = 1) -> None:
        super().__init__()
        self.session = session
        self.doc_keys = [k for k in doc_keys if k in session.dataset.documents]
        self.n = n
        self.added: list[int] = []
        self.phase = RunPhase.ASK
        self._run: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="corpus-dialog", classes="dialog"):
            yield Static(id="corpus-title")
            yield Static(id="corpus-docs")
            yield Input(value=str(self.n), type="integer", id="corpus-n", placeholder="new pairs per document")
            yield LLMStatus(id="corpus-note")
            with VerticalScroll(id="corpus-outcome"):
                yield Static(id="corpus-outcome-text")
            yield Static(id="corpus-keys", classes="llm-keys")

    def on_mount(self) -> None:
        self.query_one("#corpus-outcome", VerticalScroll).can_focus = False
        n = len(self.doc_keys)
        title = Text("Generate pairs for the documents of the current view", style="bold")
        title.append(f" · {n} document{'s' if n != 1 else ''}; the least covered go first", style="dim")
        self.query_one("#corpus-title", Static).update(title)
        shown = ", ".join(printable(k, keep_newlines=False) for k in self.doc_keys[:MAX_LISTED])
        more = f" and {n - MAX_LISTED} more" if n > MAX_LISTED else ""
        self.query_one("#corpus-docs", Static).update(Text(shown + more, style="dim"))
        self._keys()
        if not self.doc_keys:
            self._note("No document of the corpus in the current view.", "error")
            self.query_one(Input).disabled = True
            return
        if self.session.read_only:
            self._note("The workspace is open read-only: new pairs cannot be added.", "error")
            self.query_one(Input).disabled = True
            return
        self._note("How many new pairs per document? enter estimates the run (more than 10 calls are "
                   "confirmed first).")
        self.query_one(Input).focus()

    def _note(self, message: str, kind: str = "") -> None:
        self.query_one("#corpus-note", LLMStatus).show(message, kind)

    def _keys(self) -> None:
        items = [("esc", "close")] if self.phase == RunPhase.DONE else [("enter", "estimate and run"), ("esc", "close")]
        t = keys_line(items)
        self.query_one("#corpus-keys", Static).update(t)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.phase != RunPhase.ASK or not self.doc_keys or self.session.read_only:
            return
        n = typed_count(event.value, MAX_PER_DOC)
        if n is None:
            self._note(f"Type a number of pairs per document from 1 to {MAX_PER_DOC}.", "warning")
            return
        self.n = n
        self._start(n)

    def _start(self, n: int) -> None:
        session, keys, app = self.session, list(self.doc_keys), self.curate_app
        config_path = app.config_path

        def estimator(client):
            from mtcb_curate.app.generation import estimate_corpus_run, prepare_corpus_run

            mode, dense = app.llm_mode(client)
            self._run = prepare_corpus_run(session, per_doc=n, docs=sorted(keys), steering=app.llm_steering(),
                                           mode=mode, dense=dense)
            return estimate_corpus_run(self._run, client)

        def job(client, cancel, on_retry, on_progress):
            from mtcb_curate.app.generation import execute_corpus_run
            from mtcb_curate.checks import Limits

            limits = Limits.resolve(session.dataset.profile, config_path)
            return execute_corpus_run(self._run, client, limits=limits, concurrency=app.llm_concurrency(),
                                      cancel=cancel, on_retry=on_retry, on_progress=on_progress,
                                      on_attempt=app.attempt_log.add)

        self.phase = RunPhase.RUNNING
        self._note("asking the LLM…")
        self.app.push_screen(LLMRunScreen(f"Generate {n} pair(s) for each of {len(keys)} document(s)", job,
                                          estimator, total=len(keys), unit="document",
                                          preparing="planning the run (the windows and pairs of every document) "
                                                    "and connecting to the LLM…"), self._got)

    def _got(self, pooled: Any) -> None:
        from mtcb_curate.app.generation import commit_corpus_run

        if pooled is None:  # declined, closed, or an error (shown in the run dialog)
            self.phase = RunPhase.ASK
            self._note("Not run, or stopped: the next run with the same N resumes it. Change N and press enter, "
                       "or esc to close.")
            self.query_one(Input).focus()
            return
        try:
            outcome = commit_corpus_run(self._run, pooled)
        except (CurateError, ValueError, OSError) as exc:
            self.phase = RunPhase.ASK
            self._note(f"Not saved: {exc}", "error")
            return
        self.added = [pid for ids in outcome.added.values() for pid in ids]
        self.phase = RunPhase.DONE
        self.query_one(Input).display = False
        self.set_focus(None)
        head = f"{outcome.total_added} pair(s) added as undecided"
        notes = []
        if outcome.cancelled:
            notes.append("cancelled: the next run with the same N resumes it")
        elif outcome.error is not None:
            notes.append(f"stopped: {' '.join(str(outcome.error).split())[:200]}")
        if outcome.failed:
            notes.append(f"{outcome.failed} job(s) gave no usable pair (v in the run dialog, or the palette's "
                         "failed attempts, shows why)")
        if outcome.already:
            notes.append(f"{outcome.already} already added by an interrupted run")
        self.query_one("#corpus-note", LLMStatus).notes(notes, head=head)
        t = Text()
        for key, ids in outcome.added.items():
            t.append(printable(key, keep_newlines=False), style="bold")
            t.append(f": {len(ids)} pair(s) added" + (f" ({', '.join(f'#{i}' for i in ids)})" if ids else "") + "\n")
        for line in outcome.dropped:
            t.append(printable(line, keep_newlines=False) + "\n", style="yellow")
        self.query_one("#corpus-outcome-text", Static).update(t)
        self._keys()

    def action_close(self) -> None:
        """Close; the pairs added stay (undecided, in the queue)."""
        self.dismiss(self.added[0] if self.added else None)
