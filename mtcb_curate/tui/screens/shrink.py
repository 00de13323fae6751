"""The shrink proposal: a shorter passage cut from the current one, to accept, edit or refuse.

``z`` on the review screen computes the lexical proposal at once (``app.review.propose_shrink``,
well under 100 ms) and shows it here; ``Z`` opens this dialog empty and asks the LLM for the
minimal exact quote in a thread worker (``app.review.propose_llm_shrink``; the chat client comes
from ``CurateApp.llm_client``, as for regenerate), with a status line counting the seconds,
retries and ``esc`` to cancel. Either way the dialog shows the old length -> the new length, the
proposed text (plain text, never markup), what it keeps and why; for the LLM, every reply that
was not used, with its reasons.

Nothing is written here: the dialog dismisses with ``("accept", text)`` (``enter``/``y``),
``("edit", text)`` (``e``: the review screen opens the edit dialog with ``text`` as the passage)
or None (``esc``: refused, cancelled, or nothing to propose). The review screen applies an
accepted proposal through ``app.review.apply_shrink`` (an undoable edit, verified again).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Static

from mtcb_curate.plaintext import printable
from mtcb_curate.store.session import PairView, ReviewSession
from mtcb_curate.tui.keys import keys_line
from mtcb_curate.tui.phases import RunPhase
from mtcb_curate.tui.screens.edit import EditScreen
from mtcb_curate.tui.messages import LLMFailed, LLMFinished, LLMRetry
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.widgets.llm_status import LLMStatus
from mtcb_curate.verify.shrink import ShrinkProposal
from mtcb_curate.verify.spans import table_rows

#: Longest proposed text shown (characters); a longer one is cut with a note.
MAX_SHOWN_CHARS = 6000

Choice = tuple[str, str] | None


def proposal_text(old: str, new: str, source: str) -> Text:
    """The head of a proposal: ``lexical shrink: 3,546 -> 412 characters (-88 %)``, then the
    proposed text itself as plain text; a table extracted one cell a line is shown a row a line
    (``verify.spans.table_rows``: easier to read, and fewer lines to draw)."""
    t = Text()
    cut = 100 - round(100 * len(new) / len(old)) if old else 0
    t.append(f"{source}: {len(old):,} → {len(new):,} characters", style="bold")
    t.append(f" (−{cut} %)\n\n" if cut > 0 else "\n\n", style="dim")
    shown = new if len(new) <= MAX_SHOWN_CHARS else new[:MAX_SHOWN_CHARS]
    rows = table_rows(shown)
    if rows is not None:
        t.append("a table row a line here (e shows the passage as the filing has it)\n", style="dim italic")
        t.append(printable("\n".join(rows)))
    else:
        t.append(printable(shown))
    if len(new) > MAX_SHOWN_CHARS:
        t.append(f" … ({len(new):,} characters)", style="dim italic")
    return t


class ShrinkScreen(CurateAppAccess, ModalScreen[Choice]):
    """A shrink proposal for pair ``pid``: ``proposal`` (lexical, shown at once) or, when None,
    the LLM's (asked for in a worker as the dialog opens).

    Keys: ``enter``/``y`` accept, ``e`` edit it, ``esc`` refuse; while the LLM runs ``esc``
    cancels (a second ``esc`` closes at once).
    """

    BINDINGS = [
        Binding("enter,y", "accept", "accept", show=False),
        Binding("e", "edit", "edit", show=False),
        Binding("escape", "refuse", "refuse", show=False),
    ]

    def __init__(self, session: ReviewSession, pid: int, proposal: ShrinkProposal | None = None,
                 kind: str = "shrink") -> None:
        super().__init__()
        #: ``shrink`` (``z``, ``Z``) or ``fit`` (``o``: fit in one chunk).
        self.kind = kind
        self.session = session
        self.pid = pid
        self.passage = session.view(pid).passage
        #: The proposed passage (None while the LLM runs, or when it proposed nothing).
        self.text: str | None = proposal.text if proposal is not None else None
        self.proposal = proposal
        #: ``lexical`` or ``llm``; with the LLM: asking -> shown | refused; or cancelling, failed.
        self.source = "lexical" if proposal is not None else "llm"
        self.phase = RunPhase.SHOWN if proposal is not None else RunPhase.ASKING
        self.result: Any = None
        self.cancel_event = threading.Event()
        self._ticker: Timer | None = None
        self._client: Any = None
        self._gone = False

    def compose(self) -> ComposeResult:
        with Vertical(id="shrink-dialog", classes="dialog"):
            yield Static(id="shrink-title")
            # the keys right under the title: visible however small the terminal
            yield Static(id="shrink-keys", classes="llm-keys")
            yield LLMStatus(id="shrink-status")
            with VerticalScroll(id="shrink-body"):
                yield Static(id="shrink-text")
            yield Static(id="shrink-facts")

    def on_mount(self) -> None:
        self.query_one("#shrink-body", VerticalScroll).can_focus = False
        title = Text()
        if self.kind == "fit":
            title.append(f"Fit the passage of pair #{self.pid} in one chunk", style="bold")
        else:
            title.append(f"Shrink the passage of pair #{self.pid}", style="bold")
            title.append(" · " + ("lexical proposal" if self.source == "lexical" else "the LLM's minimal exact quote"),
                         style="dim")
        self.query_one("#shrink-title", Static).update(title)
        if self.source == "llm":
            self.status.display = True
            self._ask()
        else:
            self.status.display = False
        self._show()

    def on_unmount(self) -> None:
        self._gone = True
        self.cancel_event.set()

    @property
    def status(self) -> LLMStatus:
        """The LLM's status line (elapsed seconds, retries, cancel, the outcome)."""
        return self.query_one("#shrink-status", LLMStatus)

    # -- showing ----------------------------------------------------------------------------------

    def _show(self) -> None:
        body = self.query_one("#shrink-text", Static)
        facts = Text()
        if self.text is not None:
            name = "fit in one chunk" if self.kind == "fit" else "lexical shrink" if self.source == "lexical" \
                else "LLM shrink"
            body.update(proposal_text(self.passage, self.text, name))
            p = self.proposal
            if p is not None:
                if p.computed:
                    facts.append("computed answer: ", style="bold green")
                    facts.append(printable("; ".join(p.computed), keep_newlines=False))
                    facts.append("\n")
                if p.outside:
                    facts.append("reaches out: ", style="bold yellow")
                    facts.append(f"{p.outside:,} characters of the proposal lie outside the current passage "
                                 "(the rows the answer needs)\n")
                facts.append("keeps: ", style="bold")
                facts.append(printable(", ".join(p.keeps) or "nothing named", keep_newlines=False))
                facts.append(f" · whole {p.unit}s\n", style="dim")
                facts.append("why: ", style="bold")
                facts.append(printable(p.reason, keep_newlines=False))
                if p.dropped:
                    facts.append("\nleft out: ", style="bold yellow")
                    facts.append(printable(", ".join(p.dropped), keep_newlines=False), style="yellow")
        elif self.phase in (RunPhase.ASKING, RunPhase.CANCELLING):
            body.update(Text("asking the LLM for the minimal exact quote…", style="dim italic"))
        else:
            body.update(Text("no proposal", style="dim italic"))
        r = self.result
        if r is not None:
            if r.warnings:
                facts.append("\n" if facts else "")
                facts.append("⚠ " + printable("; ".join(r.warnings), keep_newlines=False), style="yellow")
            failed = r.refusal_reasons()
            if failed:
                facts.append("\n" if facts else "")
                facts.append(f"replies not used ({len(failed)}):", style="bold")
                for line in failed:
                    facts.append("\n· " + printable(line, keep_newlines=False))
        self.query_one("#shrink-facts", Static).update(facts)
        keys = {
            RunPhase.ASKING: [("esc", "cancel")],
            RunPhase.CANCELLING: [("esc", "close now")],
            RunPhase.SHOWN: [("enter/y", "accept"), ("e", "edit it"), ("esc", "refuse")],
        }.get(self.phase, [("esc", "close")])
        t = keys_line(keys)
        self.query_one("#shrink-keys", Static).update(t)

    # -- the LLM -----------------------------------------------------------------------------------

    def _ask(self) -> None:
        self.status.started()
        self._tick()
        self._ticker = self.set_interval(1.0, self._tick)
        self._run_llm()

    def _tick(self) -> None:
        if self.phase == RunPhase.ASKING and self.status.kind == "":
            client = self._client
            line = client.status_line() if client is not None and hasattr(client, "status_line") else ""
            self.status.show(f"asking the LLM for the minimal exact quote…{self.status.elapsed()}"
                             + (f" · server: {line}" if line else ""))

    @work(thread=True, exclusive=True, group="shrink-llm", exit_on_error=False)
    def _run_llm(self) -> None:
        from mtcb_curate.app.review import propose_llm_shrink
        from mtcb_curate.tui.screens.llm_run import close_client, error_line

        try:
            client = self.curate_app.llm_client()
        except Exception as exc:  # LLMConfigError, or openai missing: one line, never a crash
            self._post(LLMFailed(error_line(exc)))
            return
        self._client = client  # for the status line's "server: ..." (read on the app's thread)
        try:
            result = propose_llm_shrink(self.session, self.pid, client, config=self.curate_app.config_path,
                                        cancel=self.cancel_event, on_retry=lambda n: self._post(LLMRetry(str(n))))
        except Exception as exc:
            self._post(LLMFailed(error_line(exc)))
            return
        finally:
            self._client = None
            close_client(client)
        self._post(LLMFinished(result))

    def _post(self, message: Any) -> None:
        if self._gone:
            return
        try:
            self.post_message(message)
        except RuntimeError:  # the app is shutting down
            pass

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    @on(LLMRetry)
    def _retrying(self, message: LLMRetry) -> None:
        if not self._gone and self.phase == RunPhase.ASKING:
            self.status.retry(message.notice)

    @on(LLMFailed)
    def _failed(self, message: LLMFailed) -> None:
        if self._gone:
            return
        self._stop_ticker()
        self.phase = RunPhase.FAILED
        self.status.show(message.line, "error")
        self._show()

    @on(LLMFinished)
    def _finished(self, message: LLMFinished) -> None:
        if self._gone:
            return
        self._stop_ticker()
        r = self.result = message.result
        if r is None or (r.cancelled and r.quote is None):
            self.notify("LLM shrink cancelled: the passage is unchanged.", timeout=3)
            self._close(None)
            return
        if r.quote is not None and r.quote != self.passage.strip():
            self.text = r.quote
            self.phase = RunPhase.SHOWN
            self.status.show(f"{r.note()}{self.status.elapsed()}", "warning" if r.warnings else "")
        else:
            self.phase = RunPhase.REFUSED
            note = "the LLM's quote is the whole passage: nothing shorter" if r.quote is not None else r.note()
            self.status.show(f"{note}{self.status.elapsed()}", "warning")
        self._show()

    # -- actions -----------------------------------------------------------------------------------

    def _close(self, choice: Choice) -> None:
        if self._gone:
            return
        self._gone = True
        self.cancel_event.set()
        self._stop_ticker()
        self.dismiss(choice)

    def action_accept(self) -> None:
        """Use the proposal as the passage."""
        if self.phase == RunPhase.SHOWN and self.text is not None:
            self._close(("accept", self.text))

    def action_edit(self) -> None:
        """Open the edit dialog with the proposal as the passage."""
        if self.phase == RunPhase.SHOWN and self.text is not None:
            self._close(("edit", self.text))

    def action_refuse(self) -> None:
        """Refuse the proposal; while the LLM runs, cancel it (again: close at once)."""
        if self.phase == RunPhase.ASKING:
            self.phase = RunPhase.CANCELLING
            self.cancel_event.set()
            self._stop_ticker()
            self.status.show("cancelling: closing the request in flight (esc closes now)", "warning")
            self._show()
            return
        self._close(None)


class PrefilledEditScreen(EditScreen):
    """The edit dialog with ``passage`` (a shrink proposal) in place of the pair's passage, the
    cursor in it: ``ctrl+s`` saves it, as edited, even when it was not touched; ``esc``
    discards it. The question and answer are the pair's own."""

    def __init__(self, view: PairView, passage: str,
                 save: Callable[[dict[str, str]], object] | None = None) -> None:
        super().__init__(view, focus_field="supporting_passage", save=save)
        self.current_passage = view.passage
        self.originals["supporting_passage"] = passage

    def changes(self) -> dict[str, str]:
        """As :meth:`EditScreen.changes`, the proposal counting as a change of the passage."""
        out = super().changes()
        proposal = self.originals["supporting_passage"]
        if "supporting_passage" not in out and proposal != self.current_passage:
            out["supporting_passage"] = proposal
        if out.get("supporting_passage") == self.current_passage:
            del out["supporting_passage"]
        return out
