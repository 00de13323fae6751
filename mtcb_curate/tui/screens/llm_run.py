"""The LLM run dialog: estimate, confirm, run in a worker with progress, retries and cancel.

Every LLM action of the app (regenerate, generate more, semantic dedup) pushes an
:class:`LLMRunScreen` with a job function and, when the run can be large, an estimator. The
dialog:

1. builds the chat client (``CurateApp.llm_client``: it imports openai) and the estimate in a
   thread worker (the estimate counts tokens with tiktoken);
2. shows the estimate; a run of more than 10 paid calls waits for ``y``/``enter``,
   ``escape`` closes it without any call;
3. runs the job in a thread worker with a progress bar and a status line for each retry
   ("retry 2/5 in 4 s: 429 rate limited"), redrawn every second with the elapsed time and,
   when the client streams, the tokens received so far; ``v`` opens the failed attempts
   viewer (``screens.attempts``: every refused reply, its full reasons and its quote; the
   keys line counts this run's); a second line says what the server is doing
   (``ChatClient.status_line``: queued behind a one-at-a-time server, reading the prompt with
   the seconds so far against the estimate from this server's measured speed, or the reply's
   tokens so far when it streams); ``escape``/``c`` sets the job's ``threading.Event``: the
   client closes the request in flight at once and stops (a second ``escape`` closes the
   dialog at once);
4. dismisses with the job's return value (the domain functions return their partial result,
   marked ``cancelled``, on cancel), or shows an error as ONE plain line (``LLMUnavailable``,
   ``LLMConfigError``, ``LLMError`` ...) and dismisses with None on ``escape``: the rest of the
   app keeps working without the LLM.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from mtcb_curate.plaintext import printable
from mtcb_curate.tui.keys import keys_line
from mtcb_curate.tui.phases import RunPhase
from mtcb_curate.tui.messages import LLMFailed, LLMFinished, LLMPrepared, LLMProgress, LLMRetry
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.widgets.llm_status import LLMStatus

#: ``job(client, cancel, on_retry, on_progress) -> result``; runs in a worker thread.
Job = Callable[[Any, threading.Event, Callable[[Any], None], Callable[[int, int], None]], Any]
#: ``estimator(client) -> RunEstimate``; runs in a worker thread.
Estimator = Callable[[Any], Any]

#: Longest error line shown (characters); LLM errors are one line already.
MAX_ERROR_CHARS = 300


def error_line(exc: BaseException) -> str:
    """One plain line for an exception: the message of our own errors, else its type too."""
    from mtcb_curate.errors import CurateError

    msg = " ".join(str(exc).split())
    if not isinstance(exc, CurateError):
        msg = f"the LLM run failed: {type(exc).__name__}: {msg}" if msg else f"the LLM run failed: {type(exc).__name__}"
    if len(msg) > MAX_ERROR_CHARS:
        msg = msg[: MAX_ERROR_CHARS - 1] + "…"
    return printable(msg, keep_newlines=False)


class LLMRunScreen(CurateAppAccess, ModalScreen[Any]):
    """Run one LLM job with an estimate, a confirmation when large, progress and cancel.

    Args:
        title: what the run does, e.g. ``Regenerate pair #12`` (shown as plain text).
        job: ``job(client, cancel, on_retry, on_progress)``; its return value is the dismiss
            value. Domain functions catch the cancel themselves and return a partial result.
        estimator: ``estimator(client) -> RunEstimate`` or None (small runs: no estimate).
        total: the number of progress steps, when known before the run.
        unit: what one progress step is (``candidate``, ``window``, ``call``).
        preparing: the line shown while the client and the estimate are made.

    Dismiss value: the job's result; None when closed before it finished, or after an error.

    Keys: ``y``/``enter`` run (when asked), ``escape``/``c`` cancel (a second ``escape``
    while cancelling closes at once), ``escape`` closes after an error.
    """

    BINDINGS = [
        Binding("y,enter", "run", "run", show=False),
        Binding("escape", "cancel", "cancel", show=False),
        Binding("c", "cancel_run", "cancel", show=False),
        Binding("v", "attempts", "failed attempts", show=False),
    ]

    #: Seconds between redraws of the elapsed time and tokens received while running.
    TICK_S = 1.0

    def __init__(self, title: str, job: Job, estimator: Estimator | None = None, *,
                 total: int | None = None, unit: str = "step", preparing: str = "connecting to the LLM…") -> None:
        super().__init__()
        self.preparing_text = preparing
        self.title_text = title
        self.job = job
        self.estimator = estimator
        self.total = total
        self.unit = unit
        #: preparing -> (confirm ->) running (-> cancelling) -> closed; or failed.
        self.phase = RunPhase.PREPARING
        self.cancel_event = threading.Event()
        self.error: str | None = None
        self.estimate: Any = None
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._gone = False
        self._job_started = False
        #: The client of the running job, for the tokens received (the job closes it).
        self._run_client: Any = None
        self._refused_before = 0
        self._ticker: Any = None
        #: The result of a run that finished while the viewer covered the dialog.
        self._pending: tuple[Any] | None = None

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="llm-run-dialog", classes="dialog"):
            yield Static(Text(printable(self.title_text, keep_newlines=False), style="bold"), id="llm-run-title")
            yield Static(Text(self.preparing_text, style="dim"), id="llm-run-config")
            yield Static(id="llm-run-estimate")
            yield ProgressBar(total=self.total, show_eta=False, id="llm-run-progress")
            yield LLMStatus(id="llm-run-status")
            yield Static(id="llm-run-server")
            yield Static(id="llm-run-keys", classes="llm-keys")

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False  # shown while the calls run
        self._set_keys()
        self._prepare()

    def on_unmount(self) -> None:
        # The app may exit with the dialog open: no further request (one in flight is closed).
        self._gone = True
        self.cancel_event.set()
        self._release_client()

    def _set(self, selector: str, text: Text | str, style: str = "") -> None:
        self.query_one(selector, Static).update(text if isinstance(text, Text) else Text(text, style=style))

    @property
    def status(self) -> LLMStatus:
        """The status line (progress, retries, cancel, the error)."""
        return self.query_one("#llm-run-status", LLMStatus)

    def _status(self, message: str, kind: str = "") -> None:
        """The status line: ``kind`` is '', ``warning`` (retries, cancel) or ``error``."""
        self.status.show(message, kind)

    def _refused_count(self) -> int:
        """Replies refused since this run started (the app's attempt log)."""
        log = getattr(self.app, "attempt_log", None)
        return 0 if log is None else max(len(log.refused()) - self._refused_before, 0)

    def _set_keys(self) -> None:
        failed = [("v", f"failed attempts ({self._refused_count()})")] if self._job_started else []
        keys = {
            RunPhase.PREPARING: [("esc", "close")],
            RunPhase.CONFIRM: [("y/enter", "run these calls"), ("esc", "cancel, no call")],
            RunPhase.RUNNING: [("esc/c", "cancel"), *failed],
            RunPhase.CANCELLING: [("esc", "close now"), *failed],
            RunPhase.FAILED: [("esc", "close"), *failed],
        }.get(self.phase, [])
        t = keys_line(keys)
        self._set("#llm-run-keys", t)

    # -- preparing: client and estimate ---------------------------------------------------------

    @work(thread=True, exclusive=True, group="llm-prepare", exit_on_error=False)
    def _prepare(self) -> None:
        try:
            client = self.curate_app.llm_client()
        except Exception as exc:  # LLMConfigError, or openai missing: one line, never a crash
            self._post(LLMFailed(error_line(exc)))
            return
        with self._client_lock:
            if self._gone:
                close_client(client)
                return
            self._client = client
        estimate = None
        if self.estimator is not None:
            try:
                estimate = self.estimator(client)
            except Exception as exc:
                self._post(LLMFailed(error_line(exc)))
                return
        self._post(LLMPrepared(estimate))

    def _post(self, message: Any) -> None:
        """From a worker: post ``message`` to this dialog, unless it is gone."""
        if self._gone:
            return
        try:
            self.post_message(message)
        except RuntimeError:  # the app is shutting down
            pass

    @property
    def _open(self) -> bool:
        """Still on screen: a report that arrives after the dialog closed is dropped."""
        return not self._gone and self.is_attached

    @on(LLMPrepared)
    def _prepared(self, message: LLMPrepared) -> None:
        if not self._open:
            return
        estimate = self.estimate = message.estimate
        self._set("#llm-run-config", Text(printable(self._client.config.describe(), keep_newlines=False), style="dim"))
        if estimate is not None:
            self._set("#llm-run-estimate", Text(estimate.summary()))
        if estimate is not None and estimate.needs_confirmation:
            self.phase = RunPhase.CONFIRM
            self._status("More than 10 calls: run them?", "warning")
            self._set_keys()
            return
        self._start()

    # -- running ------------------------------------------------------------------------------

    def action_run(self) -> None:
        """Run the confirmed calls."""
        if self.phase == RunPhase.CONFIRM:
            self._start()

    def _start(self) -> None:
        self.phase = RunPhase.RUNNING
        log = getattr(self.app, "attempt_log", None)
        self._refused_before = 0 if log is None else len(log.refused())
        self._job_started = True
        self._run_client = self._client
        self.query_one(ProgressBar).display = True
        self.status.started()
        self.status.waiting(f"asking the LLM ({self.unit} 1{f' of {self.total}' if self.total else ''})…")
        self._set_keys()
        self._ticker = self.set_interval(self.TICK_S, self._tick)
        self._run_job()

    def _tick(self) -> None:
        """Every second while running: the elapsed time, the tokens received, the refusals."""
        if not self._open or self.phase not in (RunPhase.RUNNING, RunPhase.CANCELLING):
            return
        client = self._run_client
        streaming = bool(getattr(getattr(client, "config", None), "stream", False))
        self.status.tick(int(getattr(client, "streamed_chunks", 0)) if streaming else None)
        line = client.status_line() if hasattr(client, "status_line") else ""
        self._set("#llm-run-server", Text(printable(f"server: {line}" if line else "", keep_newlines=False),
                                          style="dim"))
        self._set_keys()

    def action_attempts(self) -> None:
        """Open the failed attempts viewer (every refused reply of this session)."""
        log = getattr(self.app, "attempt_log", None)
        if log is None or not self._job_started:
            return
        from mtcb_curate.tui.screens.attempts import AttemptsScreen

        self.app.push_screen(AttemptsScreen(log.refused()), self._viewer_closed)

    def _viewer_closed(self, _: Any) -> None:
        """Back from the viewer: close now if the run finished while it was open."""
        if self._pending is not None:
            (result,), self._pending = self._pending, None
            self._close(result)

    @work(thread=True, exclusive=True, group="llm-run", exit_on_error=False)
    def _run_job(self) -> None:
        client = self._client
        try:
            result = self.job(client, self.cancel_event, self._on_retry, self._on_progress)
        except Exception as exc:
            from mtcb_curate.llm.errors import LLMCancelled

            if isinstance(exc, LLMCancelled):
                self._post(LLMFinished(None))
            else:
                self._post(LLMFailed(error_line(exc)))
            return
        finally:
            with self._client_lock:
                self._client = None
            close_client(client)
        self._post(LLMFinished(result))

    def _on_retry(self, notice: Any) -> None:
        """From the worker: a retry is about to happen (429, 5xx, timeout)."""
        self._post(LLMRetry(str(notice)))

    def _on_progress(self, done: int, total: int) -> None:
        """From the worker: ``done`` of ``total`` steps finished."""
        self._post(LLMProgress(done, total))

    @on(LLMRetry)
    def _retrying(self, message: LLMRetry) -> None:
        if self._open:
            self.status.retry(message.notice)

    @on(LLMProgress)
    def _progressed(self, message: LLMProgress) -> None:
        if not self._open:
            return
        self.query_one(ProgressBar).update(total=message.total, progress=message.done)
        if self.phase == RunPhase.RUNNING:
            self.status.progress(message.done, message.total, self.unit)

    @on(LLMFinished)
    def _finished(self, message: LLMFinished) -> None:
        if not self._open:
            return
        if self.app.screen is not self:  # the viewer is open: close when it closes
            self._pending = (message.result,)
            return
        self._close(message.result)

    @on(LLMFailed)
    def _failed(self, message: LLMFailed) -> None:
        if not self._open:
            return
        if self._ticker is not None:
            self._ticker.stop()
        self.phase = RunPhase.FAILED
        self.error = message.line
        self.query_one(ProgressBar).display = False
        self._status(message.line, "error")
        self._set_keys()

    # -- cancel and close -----------------------------------------------------------------------

    def action_cancel(self) -> None:
        """escape: no call when not started; cancel a run; close at once when cancelling."""
        if self.phase == RunPhase.RUNNING:
            self.action_cancel_run()
        else:
            self._close(None)

    def action_cancel_run(self) -> None:
        """Stop the run: the request in flight is closed at once (the server sees the close)."""
        if self.phase != RunPhase.RUNNING:
            if self.phase in (RunPhase.CONFIRM, RunPhase.PREPARING):
                self._close(None)
            return
        self.phase = RunPhase.CANCELLING
        self.cancel_event.set()
        self._status("cancelling: closing the request in flight (esc closes now)", "warning")
        self._set_keys()

    def _close(self, result: Any) -> None:
        if self._gone:
            return
        self._gone = True
        self.cancel_event.set()
        self._release_client()
        self.dismiss(result)

    def _release_client(self) -> None:
        """Close the client unless the job has it (the job's worker closes it when done)."""
        with self._client_lock:
            if self._job_started or self._client is None:
                return
            client, self._client = self._client, None
        close_client(client)


def close_client(client: Any) -> None:
    """Close a chat client and its response cache (quietly)."""
    if client is None:
        return
    for close in (getattr(client, "close", None), getattr(getattr(client, "cache", None), "close", None)):
        if close is not None:
            try:
                close()
            except Exception:
                pass
