"""The publish screen: the gate, the target, what changes on the Hub, then publish on confirmation.

On open a worker runs the checklist (the gate, ``app.gate``), then plans the publish against
the Hub's current version of the target (``app.publishing.plan``). When the Hub cannot be
reached (offline mode, no network) the screen shows that error line and the offline preview
``app.publishing`` falls back to, marked "Hub not reachable: cannot publish now".

``p`` asks for a confirmation (``y`` publishes, ``n`` or escape cancels); a failing gate refuses
it (publishing anyway, ``--force --reason``, is only offered by the command line). Publishing
runs in a worker; success shows the commit URL, a failure its one-line ``PublishError``. While
the Hub is read or written, each request huggingface_hub retries replaces the status line
("Retrying: the Hub answered 503 while ...") and the libraries' own logging, warnings and
progress bars are kept off the terminal (``hub.quiet_hub``). Nothing here writes to the workspace, and the Hub token is never shown (``publish`` only hands it to
huggingface_hub).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static
from textual.worker import Worker, get_current_worker

from mtcb_curate.checks import CheckStatus, ChecklistReport
from mtcb_curate.plaintext import printable
from mtcb_curate.store.session import ReviewSession

if TYPE_CHECKING:  # mtcb_curate.hub.plan imports pyarrow (~70 ms): the workers import it when needed
    from mtcb_curate.hub import PublishPlan, PublishResult

#: Marks the offline preview: a plan made without reading the Hub cannot be published.
HUB_UNREACHABLE = "Hub not reachable: cannot publish now"

#: The hint line: every key of the screen.
HINT = ("p publish · y confirm · n cancel · r read the Hub again · t target repo · l licence · "
        "esc close (in a field: leave it)")


def _line(text: object) -> str:
    """One printable line of untrusted text."""
    return printable(" ".join(str(text).split()), keep_newlines=False)


class PublishScreen(ModalScreen[None]):
    """Publish ``session`` to the Hub behind the checklist gate. Dismisses with None.

    Keys: ``p`` publish (then ``y`` to confirm, ``n`` to cancel); ``r`` read the Hub again
    (re-plan); ``t`` / ``l`` edit the target repo id / the licence (enter applies, escape
    leaves the field); escape closes (not while a publish is under way).
    """

    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("p", "publish", "publish"),
        Binding("y", "confirm", "confirm", show=False),
        Binding("n", "cancel_confirm", "cancel", show=False),
        Binding("r", "replan", "read the Hub again"),
        Binding("t", "edit_target", "target repo"),
        Binding("l", "edit_license", "licence"),
    ]
    AUTO_FOCUS = ""  # no auto focus: the one-key actions work at once; t and l enter the fields

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.report: ChecklistReport | None = None
        self.plan: PublishPlan | None = None
        self.result: PublishResult | None = None
        #: The PublishError line that made the plan an offline preview, or None.
        self.hub_error: str | None = None
        #: The line of the last failure (plan or publish), or None.
        self.error: str | None = None
        self.repo_id: str = session.dataset.profile.hub_id
        self.license: str | None = None  # typed by the curator; else the plan finds one
        self.busy: str | None = None  # "check", "plan" or "publish"
        self._armed: PublishPlan | None = None  # the plan a `y` would publish

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="publish-dialog", classes="dialog"):
            yield Static(Text.assemble(("Publish ", "bold"), (printable(self.session.dataset.name), "bold"),
                                       " to the Hugging Face Hub"), id="publish-title")
            yield Static(id="publish-gate")
            with Horizontal(id="publish-target-row", classes="publish-row"):
                yield Label("Target", markup=False, classes="publish-label")
                yield Input(value=self.repo_id, placeholder="owner/name", id="publish-repo", compact=True)
                yield Static(Text("@…"), id="publish-revision")
            yield Static(id="publish-changes-title")
            yield Static(id="publish-plan")
            with Horizontal(id="publish-license-row", classes="publish-row"):
                yield Label("Licence", markup=False, classes="publish-label")
                yield Input(placeholder="a Hub licence id, e.g. cc-by-4.0 (enter applies)", id="publish-license",
                            compact=True)
            yield Static(id="publish-status")
            yield Static(Text(HINT), id="publish-hint")

    def on_mount(self) -> None:
        self._show()
        self._start("check")

    # -- what is shown ----------------------------------------------------------------------

    def _set(self, selector: str, text: Text, cls: str | None = None) -> None:
        widget = self.query_one(selector, Static)
        widget.update(text)
        if cls is not None or selector == "#publish-status":
            widget.set_classes(cls or "")

    def _status(self, text: str, cls: str = "") -> None:
        self._set("#publish-status", Text(_line(text)), cls)

    def failing_checks(self) -> list[str]:
        """The ids of the checks that fail (empty before the checklist ran, or when it passes)."""
        return [c.id for c in self.report.checks if c.status == CheckStatus.FAIL] if self.report else []

    def _show(self) -> None:
        """Gate, changes and licence from the current state (status lines are set where they happen)."""
        # Gate
        if self.report is None:
            gate = Text.assemble(("Gate ", "bold"), "running the checklist…")
            cls = "-pending"
        elif self.report.passed:
            warns = [c.id for c in self.report.checks if c.status == CheckStatus.WARN]
            gate = Text.assemble(("Gate ", "bold"), ("PASSED", "bold"),
                                 f" · {len(self.report.checks)} checks" +
                                 (f" · warnings: {', '.join(warns)}" if warns else ""))
            cls = "-passed"
        else:
            gate = Text.assemble(("Gate ", "bold"), ("FAILED", "bold"),
                                 f" · failing checks: {', '.join(self.failing_checks())}")
            cls = "-failed"
        self._set("#publish-gate", gate, cls)
        # Changes against the Hub
        plan = self.plan
        if plan is None:
            title = Text("What changes on the Hub", style="bold")
            body = Text(_line(self.error) if self.error and self.busy is None else
                        "reading the Hub…" if self.busy == "plan" else "—")
            body_cls = "-error" if self.error and self.busy is None else ""
        elif not plan.hub_read:
            title = Text.assemble(("Offline preview", "bold"), " · ", (HUB_UNREACHABLE, "bold"))
            body = Text()
            if self.hub_error:
                body.append(_line(self.hub_error) + "\n", style="bold")
            body.append("\n".join(_line(s) for s in plan.describe()))
            body_cls = "-offline"
        else:
            title = Text("What changes against the Hub's current version", style="bold")
            body = Text("\n".join(_line(s) for s in plan.describe()))
            body_cls = ""
        self._set("#publish-changes-title", title, body_cls)
        self._set("#publish-plan", body, body_cls)
        self.query_one("#publish-revision", Static).update(Text(f"@{_line(plan.revision)}" if plan else "@…"))
        # Licence: an input when no licence is known (or the curator typed one)
        row = self.query_one("#publish-license-row")
        row.display = plan is not None and (plan.license is None or self.license is not None)

    # -- workers ----------------------------------------------------------------------------

    def _start(self, what: str) -> None:
        self.busy = what
        self._armed = None
        self.plan = self.hub_error = None
        if what == "check":
            self._status("Running the checklist (the gate)…", "-busy")
        else:
            self._status(f"Reading the Hub: {self.repo_id}…", "-busy")
        self._show()
        self._prepare(self.repo_id, self.license)

    def _deliver(self, worker: Worker, callback, *args: Any) -> None:
        """Hand a result to the UI thread unless the worker was cancelled or the screen closed."""
        if worker.is_cancelled:
            return

        def guarded() -> None:
            if self.is_attached and not worker.is_cancelled:
                callback(*args)

        try:
            self.app.call_from_thread(guarded)
        except RuntimeError:  # the app is shutting down
            pass

    @work(thread=True, exclusive=True, group="publish-plan", exit_on_error=False)
    def _prepare(self, repo_id: str, license_id: str | None) -> None:
        """The checklist (once), then the plan against the Hub (offline preview as fallback):
        ``app.publishing.prepare``."""
        from mtcb_curate.app import gate, publishing
        from mtcb_curate.hub import PublishError

        worker = get_current_worker()
        report = self.report
        if report is None:

            def progress(check_id: str) -> None:
                i, total = gate.step(check_id)
                self._deliver(worker, self._status, f"Running the checklist: {check_id} ({i + 1}/{total})…", "-busy")

            try:
                report = gate.run_gate(self.session, config=getattr(self.app, "config_path", None), progress=progress,
                                       cache=False)
            except Exception as exc:  # noqa: BLE001 - shown as one line; r retries
                self._deliver(worker, self._failed, f"the checklist could not run: {type(exc).__name__}: {exc}")
                return
            self._deliver(worker, self._checked, report)
        prepared, error = None, None
        try:
            prepared = publishing.plan(self.session, report, repo_id=repo_id, license=license_id,
                                       on_retry=self._retry_reporter(worker))
        except PublishError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - shown as one line; r retries
            error = f"planning failed: {type(exc).__name__}: {exc}"
        if prepared is None:
            self._deliver(worker, self._planned, None, None, error)
        else:
            self._deliver(worker, self._planned, prepared.plan, prepared.hub_error, None)

    def _retry_reporter(self, worker: Worker):
        """A ``on_retry`` callback for ``plan_publish``/``publish``: each retry of a Hub request
        replaces the status line (the libraries' own output never reaches the terminal)."""

        def report(line: str) -> None:
            self._deliver(worker, self._status, f"Retrying: {line}…", "-busy")

        return report

    def _checked(self, report: ChecklistReport) -> None:
        self.report = report
        self.busy = "plan"
        self._status(f"Reading the Hub: {self.repo_id}…", "-busy")
        self._show()

    def _failed(self, line: str) -> None:
        self.busy = None
        self.error = line
        self._status(line, "-error")
        self._show()

    def _planned(self, plan: PublishPlan | None, hub_error: str | None, error: str | None) -> None:
        self.busy = None
        self.plan, self.hub_error, self.error = plan, hub_error, error
        self._show()
        if error is not None:
            self._status(error, "-error")
        elif plan is not None and not plan.hub_read:
            self._status(f"{HUB_UNREACHABLE} (r tries again).", "-warn")
        elif self.report is not None and not self.report.passed:
            self._status("The gate fails: this cannot be published from the app.", "-error")
        elif plan is not None and plan.license is None:
            self._status("The licence is unknown: l, type a Hub licence id, enter.", "-warn")
        else:
            self._status("Ready: p publishes (after a confirmation).", "-ok")

    @work(thread=True, exclusive=True, group="publish-run", exit_on_error=False)
    def _publish(self, plan: PublishPlan, report: ChecklistReport) -> None:
        from mtcb_curate.app import publishing
        from mtcb_curate.hub import PublishError

        worker = get_current_worker()
        try:
            result = publishing.perform(publishing.Prepared(report, plan), on_retry=self._retry_reporter(worker))
        except PublishError as exc:
            self._deliver(worker, self._publish_failed, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - shown as one line; the workspace is untouched
            self._deliver(worker, self._publish_failed, f"publishing failed: {type(exc).__name__}: {exc}")
            return
        self._deliver(worker, self._published, result)

    def _published(self, result: PublishResult) -> None:
        self.busy = None
        self.result = result
        url = result.pr_url or result.commit_url
        self._set("#publish-status", Text.assemble(
            ("Published and verified: ", "bold"),
            f"{result.question_rows:,} questions, {result.corpus_rows:,} documents · ",
            _line(url)), "-ok")

    def _publish_failed(self, line: str) -> None:
        self.busy = None
        self.error = line
        self._status(f"Not published: {line}", "-error")

    # -- actions ----------------------------------------------------------------------------

    def _refusal(self) -> str | None:
        """Why ``p`` cannot publish now, or None."""
        if self.busy == "publish":
            return "A publish is under way."
        if self.busy is not None or self.report is None:
            return "Still preparing: wait for the checklist and the plan."
        if not self.report.passed:
            name = _line(self.session.dataset.name)
            return (f"Publish refused: the checklist fails ({', '.join(self.failing_checks())}). Fix those checks "
                    f"first. Publishing anyway is only possible from the command line: "
                    f"mtcb-curate publish {name} --force --reason \"why\".")
        if self.plan is None:
            return "Nothing to publish: " + (_line(self.error) if self.error else "no plan") + " (r tries again)."
        if not self.plan.hub_read:
            return f"{HUB_UNREACHABLE}: the Hub's current version could not be read (r tries again)."
        if self.result is not None:
            return "Published already: r reads the Hub again before another publish."
        if self.plan.license is None:
            return "The licence is unknown: l, type a Hub licence id (e.g. cc-by-4.0), enter."
        return None

    def action_publish(self) -> None:
        """Ask for the confirmation (``y``) to publish the current plan."""
        why = self._refusal()
        if why is not None:
            self._armed = None
            gate_failed = self.report is not None and not self.report.passed
            self._status(why, "-error" if gate_failed else "-warn")
            if why.startswith("The licence is unknown"):
                self.action_edit_license()
            return
        plan = self.plan
        self._armed = plan
        self._set("#publish-status", Text.assemble(
            ("Publish ", "bold"),
            f"{plan.questions.num_rows:,} questions and {plan.corpus.num_rows:,} documents to "
            f"{_line(plan.repo_id)}@{_line(plan.revision)} in one commit? ",
            ("y", "bold reverse"), " publish  ", ("n", "bold reverse"), " cancel"), "-confirm")

    def action_confirm(self) -> None:
        """Publish the plan ``p`` asked about."""
        if self._armed is None or self._armed is not self.plan or self._refusal() is not None:
            self._armed = None
            if self.busy is None:
                self._status("Nothing to confirm: p asks first.", "-warn")
            return
        plan, self._armed = self._armed, None
        self.busy = "publish"
        self.error = None
        self._status(f"Publishing to {plan.repo_id}@{plan.revision}: one commit, then both configs are loaded "
                     "back to verify…", "-busy")
        self._publish(plan, self.report)

    def action_cancel_confirm(self) -> None:
        if self._armed is not None:
            self._armed = None
            self._status("Not published (p asks again).", "")

    def action_replan(self) -> None:
        """Read the Hub again (and run the checklist again if it could not run)."""
        if self.busy == "publish":
            self._status("A publish is under way: wait for it to finish.", "-warn")
            return
        self.result = None
        self.error = None
        self._start("check" if self.report is None else "plan")

    def action_edit_target(self) -> None:
        if self.busy != "publish":
            self.query_one("#publish-repo", Input).focus()

    def action_edit_license(self) -> None:
        if self.plan is None:
            self._status("The licence can be set once the plan is made.", "-warn")
            return
        self.query_one("#publish-license-row").display = True
        self.query_one("#publish-license", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_focus(None)
        if event.input.id == "publish-repo":
            if self.busy == "publish":
                return
            self.repo_id = event.value.strip() or self.session.dataset.profile.hub_id
            event.input.value = self.repo_id
            self.result = None
            self.error = None
            self._start("check" if self.report is None else "plan")
        elif event.input.id == "publish-license":
            value = event.value.strip()
            if not value or self.plan is None:
                return
            try:
                self.plan = self.plan.with_license(value)
            except ValueError as exc:
                self._status(f"Not a Hub licence id: {exc}", "-error")
                return
            self.license = self.plan.license
            event.input.value = self.license or ""
            self._armed = None
            self._show()
            self._status(f"Licence set to {self.license}.", "-ok")

    def action_close(self) -> None:
        """Leave a field; else cancel a pending confirmation; else close (not while publishing)."""
        focused = self.focused
        if isinstance(focused, Input):
            if focused.id == "publish-repo":
                focused.value = self.repo_id
            self.set_focus(None)
            return
        if self._armed is not None:
            self.action_cancel_confirm()
            return
        if self.busy == "publish":
            self._status("A publish is under way: wait for it to finish (the commit is atomic).", "-warn")
            return
        self.workers.cancel_group(self, "publish-plan")
        self.dismiss(None)
