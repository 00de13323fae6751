"""Generate N more pairs for one document: the windows with the fewest pairs first.

The curator types N, the run dialog (:class:`~mtcb_curate.tui.screens.llm_run.LLMRunScreen`)
shows the estimate and asks first when it is more than 10 calls, ``llm.generate.generate_more``
runs in its worker, and the candidates are listed. ``a`` adds them all, ``space`` chooses some
and ``enter`` adds the chosen: each joins the queue as an undecided pair, published like any
other once accepted. ``escape`` closes without adding anything (the replies stay in the
response cache: running it again with the same N costs nothing).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from mtcb_curate.app import review as app_review
from mtcb_curate.dataset.model import Via
from mtcb_curate.errors import CurateError
from mtcb_curate.plaintext import printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.keys import keys_line, typed_count
from mtcb_curate.tui.phases import RunPhase
from mtcb_curate.tui.screens.llm_run import LLMRunScreen
from mtcb_curate.tui.screens.regenerate import candidate_text
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.widgets.llm_status import LLMStatus
from mtcb_curate.verify.verdict import Verdict

#: Most pairs one run may ask for (a typo such as 300 should not start 300 calls).
MAX_N = 100


class GenerateMoreScreen(CurateAppAccess, ModalScreen[int | None]):
    """New pairs for document ``doc_key`` from the LLM.

    Args:
        session: the review session (new pairs are added through it).
        doc_key: the document to generate for.
        n: the N shown in the input at first (default 3).

    Dismiss value: the id of the first pair added, or None when nothing was added.

    Keys: type N then ``enter`` (estimate, confirm when more than 10 calls, run); then
    ``up``/``down`` move, ``space`` chooses, ``enter`` adds the chosen, ``a`` adds all;
    ``escape`` closes.
    """

    BINDINGS = [
        Binding("escape", "close", "close", show=False),
        Binding("up,k", "move(-1)", "previous", show=False),
        Binding("down,j", "move(1)", "next", show=False),
        Binding("space", "toggle", "choose", show=False),
        Binding("enter", "add_chosen", "add chosen", show=False),
        Binding("a", "add_all", "add all", show=False),
    ]

    def __init__(self, session: ReviewSession, doc_key: str, n: int = 3) -> None:
        super().__init__()
        self.session = session
        self.doc_key = doc_key
        self.n = n
        self.document = session.dataset.documents.get(doc_key)
        self.candidates: list[Any] = []
        self.chosen: set[int] = set()
        self.cursor = 0
        #: ask (typing N) -> running -> pick (candidates listed)
        self.phase = RunPhase.ASK

    def compose(self) -> ComposeResult:
        with Vertical(id="gen-dialog", classes="dialog"):
            yield Static(id="gen-title")
            yield Input(value=str(self.n), type="integer", id="gen-n", placeholder="how many pairs")
            yield LLMStatus(id="gen-note")
            yield VerticalScroll(id="gen-list")
            yield Static(id="gen-keys", classes="llm-keys")

    def on_mount(self) -> None:
        self.query_one("#gen-list", VerticalScroll).can_focus = False
        existing = sum(1 for p in self.session.pairs if p.doc_key == self.doc_key)
        title = Text()
        title.append("Generate more pairs", style="bold")
        title.append(f" for {printable(self.doc_key, keep_newlines=False)}")
        title.append(f" · {existing} pair(s) now; the windows with the fewest pairs go first", style="dim")
        self.query_one("#gen-title", Static).update(title)
        self._keys()
        if self.document is None:
            self._note(f"No document '{printable(self.doc_key, keep_newlines=False)}' in the corpus.", "error")
            self.query_one(Input).disabled = True
            return
        if self.session.read_only:
            self._note("The workspace is open read-only: new pairs cannot be added.", "error")
            self.query_one(Input).disabled = True
            return
        self._note("How many new pairs? enter estimates the run (more than 10 calls are confirmed first).")
        self.query_one(Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("move", "toggle", "add_chosen", "add_all"):
            return self.phase == RunPhase.PICK
        return True

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def _status(self) -> LLMStatus:
        return self.query_one("#gen-note", LLMStatus)

    def _note(self, message: str, kind: str = "") -> None:
        self._status.show(message, kind)

    def _keys(self) -> None:
        if self.phase == RunPhase.PICK:
            items = [("↑/↓", "move"), ("space", "choose"), ("enter", "add chosen"), ("a", "add all"),
                     ("esc", "close, add nothing")]
        else:
            items = [("enter", "estimate and run"), ("esc", "close")]
        t = keys_line(items)
        self.query_one("#gen-keys", Static).update(t)

    # -- asking ------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.phase != RunPhase.ASK or self.document is None or self.session.read_only:
            return
        n = typed_count(event.value, MAX_N)
        if n is None:
            self._note(f"Type a number of pairs from 1 to {MAX_N}.", "warning")
            return
        self.n = n
        self._run(n)

    def _run(self, n: int) -> None:
        doc = self.document
        existing = [self.session.view(p.id) for p in self.session.pairs if p.doc_key == doc.key]
        profile = self.session.dataset.profile
        config_path = self.curate_app.config_path
        app = self.curate_app

        def estimator(client):
            from mtcb_curate.llm.estimate import estimate_generate_more

            mode, dense = app.llm_mode(client)
            return estimate_generate_more(doc, existing, n, client.config, profile=profile, client=client,
                                          steering=app.llm_steering(), mode=mode, dense=dense)

        def job(client, cancel, on_retry, on_progress):
            from mtcb_curate.checks import Limits
            from mtcb_curate.llm.generate import generate_more

            # Candidates must meet the checklist's bounds: the profile's, then [checklist].
            limits = Limits.resolve(profile, config_path)
            mode, dense = app.llm_mode(client)
            return generate_more(client, doc, existing, n, profile=profile, limits=limits, cancel=cancel,
                                 on_retry=on_retry, on_progress=on_progress, concurrency=app.llm_concurrency(),
                                 steering=app.llm_steering(), on_attempt=app.attempt_log.add, mode=mode,
                                 dense=dense)

        self.phase = RunPhase.RUNNING
        self._note("asking the LLM…")
        self.app.push_screen(LLMRunScreen(f"Generate {n} more pair(s) for {doc.key}", job, estimator, total=n,
                                          unit="window"), self._got)

    def _got(self, result: Any) -> None:
        if result is None:  # declined, closed, or an error (shown in the run dialog)
            self.phase = RunPhase.ASK
            self._note("Not run. Change N and press enter, or esc to close.")
            self.query_one(Input).focus()
            return
        notes = []
        if result.cancelled:
            notes.append(f"cancelled: {len(result.candidates)} of {self.n} pair(s) generated before the cancel")
        notes.extend(getattr(result, "window_notes", []))
        notes.extend(result.failures)
        notes.append(result.refusal_note())
        if not result.candidates:
            self.phase = RunPhase.ASK
            self._status.notes(notes + ["no usable pair: press enter to try again, esc to close"])
            self.query_one(Input).focus()
            return
        self.candidates = list(result.candidates)
        self.chosen = set()
        self.cursor = 0
        self.phase = RunPhase.PICK
        self.query_one(Input).display = False
        self.set_focus(None)
        snapped = sum(1 for c in self.candidates if getattr(c, "verdict", Verdict.EXACT) != Verdict.EXACT)
        unsupported = sum(1 for c in self.candidates if not getattr(c, "supported", True))
        head = f"{len(self.candidates)} candidate(s), each passage verbatim in its window"
        if snapped:
            head += f" ({snapped} snapped from the model's near-miss quote)"
        if unsupported:
            head += f"; {unsupported} with an answer its passage does not support (marked)"
        self._status.notes(notes, head=head)
        box = self.query_one("#gen-list", VerticalScroll)
        box.mount_all([Static(self._item_text(i), classes="gen-item -cursor" if i == 0 else "gen-item",
                              id=f"gen-item-{i}") for i in range(len(self.candidates))])
        self._keys()

    def _item_text(self, i: int) -> Text:
        t = Text()
        t.append("[x] " if i in self.chosen else "[ ] ", style="bold")
        t.append(f"{i + 1}. ", style="bold")
        t += candidate_text(self.candidates[i])
        return t

    def _render_items(self) -> None:
        for i in range(len(self.candidates)):
            item = self.query_one(f"#gen-item-{i}", Static)
            item.update(self._item_text(i))
            item.set_class(i == self.cursor, "-cursor")
            item.set_class(i in self.chosen, "-chosen")

    # -- picking -----------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        """Move the cursor to the previous / next candidate."""
        self.cursor = max(0, min(len(self.candidates) - 1, self.cursor + step))
        self._render_items()
        self.query_one(f"#gen-item-{self.cursor}", Static).scroll_visible(animate=False)

    def action_toggle(self) -> None:
        """Choose or un-choose the candidate under the cursor."""
        self.chosen ^= {self.cursor}
        self._render_items()

    def action_add_chosen(self) -> None:
        """Add the chosen candidates as undecided pairs."""
        if not self.chosen:
            self.notify("Nothing chosen: space chooses a candidate, a adds them all.", timeout=3)
            return
        self._add(sorted(self.chosen))

    def action_add_all(self) -> None:
        """Add every candidate as an undecided pair."""
        self._add(list(range(len(self.candidates))))

    def _add(self, indices: list[int]) -> None:
        added: list[int] = []
        try:
            for i in indices:
                c = self.candidates[i]
                added.append(app_review.add_pair(self.session, c.doc_key, c.question, c.answer, c.passage,
                                                 c.chunk_index, origin=Via.GENERATE, details=c.provenance()))
        except (CurateError, ValueError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
        if added:
            self.notify(f"Added {len(added)} undecided pair(s): {', '.join(f'#{i}' for i in added)}.", timeout=4)
        self.dismiss(added[0] if added else None)

    def action_close(self) -> None:
        """Close; nothing is added."""
        self.dismiss(None)
