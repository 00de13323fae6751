"""Regenerate a pair: LLM candidates beside the original; replace, add as new, or keep.

The candidates come from ``llm.generate.regenerate`` (the pair's own window; each passage is
verbatim in it), run through :class:`~mtcb_curate.tui.screens.llm_run.LLMRunScreen`. Nothing
changes until the curator picks: ``r`` replaces the pair's question, answer and passage (an
undoable edit recorded ``via="regenerate"``), ``a`` adds the candidate as a new undecided pair,
``o``/``escape`` keeps the original.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.app import review as app_review
from mtcb_curate.dataset.model import Via
from mtcb_curate.errors import CurateError
from mtcb_curate.plaintext import printable
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.changes import ChangeResult, run_change
from mtcb_curate.tui.keys import keys_line
from mtcb_curate.tui.screens.llm_run import LLMRunScreen
from mtcb_curate.tui.typed_app import CurateAppAccess
from mtcb_curate.tui.widgets.llm_status import LLMStatus
from mtcb_curate.verify.verdict import Verdict

#: Candidates asked for per run (``g`` asks for as many fresh ones).
N_CANDIDATES = 2
#: Longest text shown per field (characters); a longer one is cut with a note.
MAX_FIELD_CHARS = 4000


def field_text(label: str, value: str) -> Text:
    """``label`` in bold, then ``value`` as plain text (never markup), cut when very long."""
    t = Text()
    t.append(f"{label}\n", style="bold")
    shown = value if len(value) <= MAX_FIELD_CHARS else value[:MAX_FIELD_CHARS]
    if shown:
        t.append(printable(shown))
    else:
        t.append("(empty)", style="dim italic")
    if len(value) > MAX_FIELD_CHARS:
        t.append(f" … ({len(value):,} characters)", style="dim italic")
    t.append("\n\n")
    return t


def candidate_text(c: Any) -> Text:
    """A candidate's question, answer, passage (with where it is and how it was made: mode,
    sentence range or snap) and warnings; an answer its passage does not support is said first,
    in red, above the texts."""
    t = Text()
    if not getattr(c, "supported", True):
        t.append("⚠ ANSWER NOT SUPPORTED by its passage: "
                 + printable(getattr(c, "support_reason", ""), keep_newlines=False) + "\n\n", style="bold red")
    t += field_text("Question", c.question)
    t += field_text("Answer", c.answer)
    t += field_text("Supporting passage", c.passage)
    verdict = getattr(c, "verdict", "exact")
    if getattr(c, "mode", "quote") == "numbered" and getattr(c, "sentences", None):
        a, b = c.sentences
        t.append(f"cut from chunk {c.chunk_index} (numbered mode: the model named sentences {a}–{b}), characters "
                 f"{c.start:,}–{c.end:,}", style="green")
    elif verdict == Verdict.EXACT:
        t.append(f"verbatim in chunk {c.chunk_index}, characters {c.start:,}–{c.end:,}", style="green")
    else:
        score = "" if verdict == Verdict.NORMALIZED else f" {c.score:.0f}"
        t.append(f"snapped ({verdict}{score}) to the text of chunk {c.chunk_index}, characters "
                 f"{c.start:,}–{c.end:,}", style="yellow")
    t.append(f" · {c.attempts} attempt{'s' if c.attempts != 1 else ''}", style="dim")
    if c.model:
        t.append(f" · {printable(c.model, keep_newlines=False)}", style="dim")
    t.append("\n")
    if getattr(c, "quoted", ""):
        t += field_text("The model quoted", c.quoted)
    if getattr(c, "window_note", ""):
        t.append(printable(c.window_note, keep_newlines=False) + "\n", style="dim")
    for w in c.warnings:
        if getattr(c, "supported", True) or not w.startswith("The answer states"):
            t.append(f"⚠ {printable(w, keep_newlines=False)}\n", style="yellow")
    return t


class RegenerateScreen(CurateAppAccess, ModalScreen[int | None]):
    """LLM candidates for pair ``pid``, beside the original.

    Args:
        session: the review session (edits and new pairs are committed through it).
        pid: the pair to regenerate.
        n_candidates: candidates per run (default 2).

    Dismiss value: the pid to show: ``pid`` after ``r`` (replace), the new pair's id after
    ``a`` (add), None when the original is kept (``o``/``escape``) or nothing came back.

    Keys: ``left``/``right`` choose a candidate, ``r`` replace, ``a`` add as a new pair, ``g``
    ask for fresh candidates, ``o``/``escape`` keep the original.
    """

    BINDINGS = [
        Binding("left,h", "choose(-1)", "previous candidate", show=False),
        Binding("right,l", "choose(1)", "next candidate", show=False),
        Binding("r", "replace", "replace", show=False),
        Binding("a", "add", "add as new pair", show=False),
        Binding("g", "more", "fresh candidates", show=False),
        Binding("o,escape", "keep", "keep original", show=False),
    ]

    def __init__(self, session: ReviewSession, pid: int, n_candidates: int = N_CANDIDATES) -> None:
        super().__init__()
        self.session = session
        self.pid = pid
        self.n_candidates = n_candidates
        self.candidates: list[Any] = []
        self.index = 0
        #: Samples asked so far: the next run starts at this sample (fresh, not cached, replies).
        self.samples_asked = 0
        self.running = False
        self.pair_view = session.view(pid)
        self.document = session.dataset.document_for(self.pair_view.pair)

    def compose(self) -> ComposeResult:
        with Vertical(id="regen-dialog", classes="dialog"):
            yield Static(id="regen-title")
            with Horizontal(id="regen-columns"):
                with VerticalScroll(id="regen-original", classes="regen-col"):
                    yield Static(id="regen-original-text")
                with VerticalScroll(id="regen-candidate", classes="regen-col"):
                    yield Static(id="regen-candidate-text")
            yield LLMStatus(id="regen-note")
            yield Static(id="regen-keys", classes="llm-keys")

    def on_mount(self) -> None:
        for scroll in self.query(VerticalScroll):
            scroll.can_focus = False
        v = self.pair_view
        title = Text()
        title.append(f"Regenerate pair #{self.pid}", style="bold")
        title.append(f" · {printable(v.pair.doc_key, keep_newlines=False)}")
        if v.pair.chunk_index is not None:
            title.append(f" · chunk {v.pair.chunk_index}")
        self.query_one("#regen-title", Static).update(title)
        original = Text()
        original.append(f"Original #{self.pid} ({v.status.value})\n\n", style="bold underline")
        original += field_text("Question", v.question)
        original += field_text("Answer", v.answer)
        original += field_text("Supporting passage", v.passage)
        self.query_one("#regen-original-text", Static).update(original)
        self._show()
        if self.document is None:
            self._note(f"No document in the corpus for '{printable(v.pair.doc_key, keep_newlines=False)}': "
                       "nothing to regenerate from.", "error")
            return
        if self.session.read_only:
            self._note("The workspace is open read-only: a candidate could not be saved.", "error")
            return
        self._ask()

    # -- asking the LLM ---------------------------------------------------------------------------

    def _ask(self) -> None:
        """Push the run dialog for ``n_candidates`` new samples."""
        session, pid, doc, first = self.session, self.pid, self.document, self.samples_asked
        pair = self.pair_view
        others = [session.view(p.id).question for p in session.pairs if p.doc_key == doc.key and p.id != pid]
        profile = session.dataset.profile
        config_path = self.curate_app.config_path
        n = self.n_candidates
        app = self.curate_app

        def job(client, cancel, on_retry, on_progress):
            from mtcb_curate.checks import Limits
            from mtcb_curate.llm.generate import regenerate

            # Candidates must meet the checklist's bounds: the profile's, then [checklist].
            limits = Limits.resolve(profile, config_path)
            mode, dense = app.llm_mode(client)
            return regenerate(client, pair, doc, other_questions=others, n_candidates=n, first_sample=first,
                              profile=profile, limits=limits, cancel=cancel, on_retry=on_retry,
                              on_progress=on_progress, concurrency=app.llm_concurrency(),
                              steering=app.llm_steering(), on_attempt=app.attempt_log.add, mode=mode,
                              dense=dense)

        self.running = True
        self._show()
        self.app.push_screen(LLMRunScreen(f"Regenerate pair #{pid}: {n} candidate(s)", job, total=n,
                                          unit="candidate"), self._got)

    def _got(self, result: Any) -> None:
        self.running = False
        if result is None:  # an error (shown in the run dialog) or closed before the end
            if not self.candidates:
                self.dismiss(None)
                return
            self._note("No new candidates.", "warning")
            self._show()
            return
        new = list(result.candidates)
        self.samples_asked += len(new) + len(result.failures)
        if result.cancelled and not new and not self.candidates:
            self.notify("Regenerate cancelled.", timeout=3)
            self.dismiss(None)
            return
        if new:
            self.index = len(self.candidates)
            self.candidates.extend(new)
        notes = []
        if result.cancelled:
            notes.append(f"cancelled after {len(new)} of {self.n_candidates} candidate(s)")
        notes.extend(getattr(result, "window_notes", []))
        notes.extend(result.failures)
        notes.append(result.refusal_note())
        if not self.candidates:
            notes.append("no usable candidate: g asks again, esc keeps the original")
        self.query_one("#regen-note", LLMStatus).notes(notes)
        self._show()

    # -- showing ----------------------------------------------------------------------------------

    def _note(self, message: str, kind: str = "") -> None:
        self.query_one("#regen-note", LLMStatus).show(message, kind)

    def _show(self) -> None:
        box = self.query_one("#regen-candidate-text", Static)
        if not self.candidates:
            box.update(Text("asking the LLM…" if self.running else "no candidate", style="dim italic"))
        else:
            c = self.candidates[self.index]
            t = Text()
            t.append(f"Candidate {self.index + 1} of {len(self.candidates)}", style="bold underline")
            if len(self.candidates) > 1:
                t.append("  ←/→ choose", style="dim")
            t.append("\n\n")
            t += candidate_text(c)
            box.update(t)
            self.query_one("#regen-candidate", VerticalScroll).scroll_home(animate=False)
        items = [("←/→", "choose"), ("r", "replace"), ("a", "add as new pair")] if self.candidates else []
        items += [("g", "fresh candidates"), ("o/esc", "keep the original")]
        self.query_one("#regen-keys", Static).update(keys_line(items))

    # -- actions ----------------------------------------------------------------------------------

    def action_choose(self, step: int) -> None:
        """Show the previous / next candidate."""
        if self.candidates:
            self.index = (self.index + step) % len(self.candidates)
            self._show()

    def _chosen(self) -> Any | None:
        if not self.candidates:
            self.notify("No candidate to use yet.", severity="warning", timeout=3)
            return None
        if self.session.read_only:
            self.notify("The workspace is open read-only.", severity="warning")
            return None
        return self.candidates[self.index]

    def action_replace(self) -> None:
        """Replace the pair's question, answer and passage with the candidate (undoable)."""
        c = self._chosen()
        if c is None:
            return

        def replace() -> bool:
            return app_review.edit(self.session, self.pid, {"question": c.question, "answer": c.answer,
                                                            "supporting_passage": c.passage},
                                   via=Via.REGENERATE).changed

        run_change(self.app, replace, what=f"the new texts of #{self.pid}", then=self._replaced)

    def _replaced(self, result: ChangeResult) -> None:
        try:
            changed = result.get()
        except (CurateError, ValueError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        if changed:
            self.notify(f"Pair #{self.pid} replaced by the candidate (u undoes).", timeout=3)
        else:
            self.notify("The pair already has these texts.", timeout=3)
        self.dismiss(self.pid)

    def action_add(self) -> None:
        """Add the candidate as a new, undecided pair of the same document."""
        c = self._chosen()
        if c is None:
            return

        def add() -> int:
            return app_review.add_pair(self.session, c.doc_key, c.question, c.answer, c.passage, c.chunk_index,
                                       origin=Via.GENERATE,
                                       details={**c.provenance(), "regenerated_from": self.pid})

        run_change(self.app, add, what="the new pair", then=self._added)

    def _added(self, result: ChangeResult) -> None:
        try:
            new = result.get()
        except (CurateError, ValueError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10, markup=False)
            return
        self.notify(f"Added as new pair #{new} (undecided).", timeout=3)
        self.dismiss(new)

    def action_more(self) -> None:
        """Ask for fresh candidates (new samples, not the cached replies)."""
        if self.running or self.document is None:
            return
        self._ask()

    def action_keep(self) -> None:
        """Keep the original: nothing changes."""
        self.dismiss(None)
