"""The shrink proposal: a shorter passage cut from the current one, to accept, edit or refuse.

``z`` on the review screen computes the lexical proposal at once (``app.review.propose_shrink``,
well under 100 ms) and shows it here; ``Z`` opens this dialog empty and asks the LLM for the
minimal exact quote in a thread worker (``app.review.propose_llm_shrink``; the chat client comes
from ``CurateApp.llm_client``, as for regenerate), with a status line counting the seconds,
retries and ``esc`` to cancel. Either way the dialog shows the old length -> the new length, the
proposed text (plain text, never markup), what it keeps and why; for the LLM, every reply that
was not used, with its reasons.

The dialog is two widgets: one ``Static`` with the title and the keys, and
:class:`ProposalView`, a Line-API widget that draws the proposal's text (scrolled with the arrow
and page keys or the wheel) above what it keeps and why (always in view); the text is wrapped
only as far as the rows it paints (``qa_panel.SectionRows``), so a 6,000-character table costs
only a screenful. The LLM's status line is mounted only when the LLM is asked (``Z``).

Nothing is written here: the dialog dismisses with ``("accept", text)`` (``enter``/``y``),
``("edit", text)`` (``e``: the review screen opens the edit dialog with ``text`` as the passage)
or None (``esc``: refused, cancelled, or nothing to propose). The review screen applies an
accepted proposal through ``app.review.apply_shrink`` (an undoable edit, verified again).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.containers import Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
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


#: Proposed texts whose reading form (:func:`display_rows`) is kept.
_ROWS_KEPT = 64
_rows_kept: OrderedDict[str, list[str] | None] = OrderedDict()
_rows_lock = threading.Lock()


def display_rows(text: str) -> list[str] | None:
    """``verify.spans.table_rows`` of ``text``'s shown part (a table extracted one cell a line,
    a row a line), kept for the last :data:`_ROWS_KEPT` texts: the shrink proposal worked out
    ahead warms it (``shrink_ahead``), so ``z`` does not work it out on the key. Thread-safe."""
    shown = text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS]
    with _rows_lock:
        if shown in _rows_kept:
            _rows_kept.move_to_end(shown)
            return _rows_kept[shown]
    rows = table_rows(shown)
    with _rows_lock:
        _rows_kept[shown] = rows
        while len(_rows_kept) > _ROWS_KEPT:
            _rows_kept.popitem(last=False)
    return rows


def proposal_text(old: str, new: str, source: str) -> Text:
    """The head of a proposal: ``lexical shrink: 3,546 -> 412 characters (-88 %)``, then the
    proposed text itself as plain text; a table extracted one cell a line is shown a row a line
    (:func:`display_rows`: easier to read, and fewer lines to draw)."""
    t = Text()
    cut = 100 - round(100 * len(new) / len(old)) if old else 0
    t.append(f"{source}: {len(old):,} → {len(new):,} characters", style="bold")
    t.append(f" (−{cut} %)\n\n" if cut > 0 else "\n\n", style="dim")
    rows = display_rows(new)
    if rows is not None:
        t.append("a table row a line here (e shows the passage as the filing has it)\n", style="dim italic")
        t.append(printable("\n".join(rows)))
    else:
        t.append(printable(new if len(new) <= MAX_SHOWN_CHARS else new[:MAX_SHOWN_CHARS]))
    if len(new) > MAX_SHOWN_CHARS:
        t.append(f" … ({len(new):,} characters)", style="dim italic")
    return t


class ProposalView(Widget, can_focus=False):
    """The proposal (``text``: the head line and the proposed text) above the facts (what it
    keeps, why, the derivation), one Line-API widget: the facts keep their rows at the bottom
    (at most :data:`FACTS_SHARE` of the height when the text needs the rest), the text scrolls
    above them (``scroll_text``; its last visible row says how many rows are below). Rows are
    wrapped to the width as Rich wraps a ``Text`` and made only when painted."""

    #: The facts' share of the view's rows when the text does not fit.
    FACTS_SHARE = 0.4

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = Text()
        self.facts = Text()
        #: The first row of the text shown (scrolled).
        self.top_row = 0
        self._rows: tuple[int, Any, Any] | None = None  # (width, text rows, facts rows)
        self._paint: tuple | None = None  # what every row of one paint needs

    def show(self, text: Text, facts: Text) -> None:
        """Show ``text`` (scrolled to its top) above ``facts``."""
        self.text, self.facts, self.top_row, self._rows = text, facts, 0, None
        self.refresh(layout=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._rows = None

    def _wrapped(self, width: int) -> tuple[Any, Any]:
        from mtcb_curate.tui.widgets.qa_panel import SectionRows

        if self._rows is None or self._rows[0] != width:
            base = self.rich_style
            self._rows = (width, SectionRows(self.text, width, self.app.console, base),
                          SectionRows(self.facts, width, self.app.console, base) if self.facts.plain else ())
        return self._rows[1], self._rows[2]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        text, facts = self._wrapped(width)
        return len(text) + (1 + len(facts) if len(facts) else 0)

    def layout_rows(self) -> tuple[int, int, int]:
        """``(text rows shown, facts rows shown, text rows hidden below)`` at the current size."""
        height = self.size.height
        text, facts = self._wrapped(self.size.width)
        n_facts = len(facts)
        if len(text) + (n_facts + 1 if n_facts else 0) <= height:
            return len(text), n_facts, 0
        shown_facts = min(n_facts, max(int(height * self.FACTS_SHARE), height - len(text) - 1)) if n_facts else 0
        text_rows = max(1, height - (shown_facts + 1 if shown_facts else 0))
        self.top_row = max(0, min(self.top_row, len(text) - text_rows))
        return text_rows, shown_facts, max(0, len(text) - self.top_row - text_rows)

    def scroll_text(self, rows: int) -> None:
        """Scroll the text by ``rows`` (negative: up); a page is the text's rows shown."""
        before = self.top_row
        self.top_row = max(0, self.top_row + rows)
        self.layout_rows()  # clamps the offset
        if self.top_row != before:
            self.refresh()

    def page(self) -> int:
        """The text's rows shown (a page)."""
        return max(1, self.layout_rows()[0] - 1)

    def render_lines(self, crop):
        self._paint = (self.rich_style, *self._wrapped(self.size.width), *self.layout_rows())
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base, text, facts, text_rows, facts_rows, hidden = self._paint or (
            self.rich_style, *self._wrapped(width), *self.layout_rows())
        if y < text_rows:
            if y == text_rows - 1 and hidden:
                note = f"▼ {hidden + 1} more lines (↓ PgDn scroll)"
                return Strip([Segment(note, base + Style(dim=True, italic=True))]).adjust_cell_length(width, base)
            k = self.top_row + y
            strip = text[k] if k < len(text) else Strip.blank(width, base)
        elif facts_rows and y == text_rows:
            strip = Strip.blank(width, base)
        elif facts_rows and y - text_rows - 1 < facts_rows:
            strip = facts[y - text_rows - 1]
        else:
            strip = Strip.blank(width, base)
        return strip if strip.cell_length == width else strip.adjust_cell_length(width, base)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.scroll_text(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.scroll_text(-3)


class ShrinkScreen(CurateAppAccess, ModalScreen[Choice]):
    """A shrink proposal for pair ``pid``: ``proposal`` (lexical, shown at once) or, when None,
    the LLM's (asked for in a worker as the dialog opens).

    Keys: ``enter``/``y`` accept, ``e`` edit it, ``esc`` refuse, ``↑``/``↓``/``PgUp``/``PgDn``
    scroll the proposed text; while the LLM runs ``esc`` cancels (a second ``esc`` closes at
    once). :meth:`shown` gives what the dialog shows, as plain text.
    """

    BINDINGS = [
        Binding("enter,y", "accept", "accept", show=False),
        Binding("e", "edit", "edit", show=False),
        Binding("escape", "refuse", "refuse", show=False),
        Binding("down", "scroll_text(1)", "scroll", show=False),
        Binding("up", "scroll_text(-1)", "scroll", show=False),
        Binding("pagedown", "scroll_page(1)", "scroll", show=False),
        Binding("pageup", "scroll_page(-1)", "scroll", show=False),
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
        self._title = Text()
        self._keys = Text()

    def compose(self) -> ComposeResult:
        with Vertical(id="shrink-dialog", classes="dialog"):
            yield Static(id="shrink-head")
            if self.source == "llm":
                yield LLMStatus(id="shrink-status")
            yield ProposalView(id="shrink-view")

    def on_mount(self) -> None:
        title = Text()
        if self.kind == "fit":
            title.append(f"Fit the passage of pair #{self.pid} in one chunk", style="bold")
        else:
            title.append(f"Shrink the passage of pair #{self.pid}", style="bold")
            title.append(" · " + ("lexical proposal" if self.source == "lexical" else "the LLM's minimal exact quote"),
                         style="dim")
        self._title = title
        if self.source == "llm":
            self._ask()
        self._show()

    def on_unmount(self) -> None:
        self._gone = True
        self.cancel_event.set()

    @property
    def status(self) -> LLMStatus:
        """The LLM's status line (elapsed seconds, retries, cancel, the outcome); only while the
        LLM is asked (``Z``).

        Raises:
            textual.css.query.NoMatches: a lexical proposal (no status line).
        """
        return self.query_one("#shrink-status", LLMStatus)

    def shown(self, part: str) -> str:
        """What the dialog shows, as plain text: ``title``, ``keys``, ``text`` (the head line
        and the proposed text) or ``facts`` (what it keeps, why, the derivation, the LLM's
        replies not used)."""
        view = self.query_one(ProposalView)
        return {"title": self._title, "keys": self._keys, "text": view.text, "facts": view.facts}[part].plain

    # -- showing ----------------------------------------------------------------------------------

    def _show(self) -> None:
        facts = Text()
        if self.text is not None:
            name = "fit in one chunk" if self.kind == "fit" else "lexical shrink" if self.source == "lexical" \
                else "LLM shrink"
            body = proposal_text(self.passage, self.text, name)
            p = self.proposal
            if p is not None:
                if p.computed:
                    facts.append("computed answer: ", style="bold green")
                    facts.append(printable("; ".join(p.computed), keep_newlines=False))
                    facts.append("\n")
                if p.where:
                    facts.append("elsewhere in the document: ", style="bold yellow")
                    facts.append(printable(p.where, keep_newlines=False))
                    facts.append("\n")
                elif p.outside:
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
            body = Text("asking the LLM for the minimal exact quote…", style="dim italic")
        else:
            body = Text("no proposal", style="dim italic")
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
        self.query_one(ProposalView).show(body, facts)
        keys = {
            RunPhase.ASKING: [("esc", "cancel")],
            RunPhase.CANCELLING: [("esc", "close now")],
            RunPhase.SHOWN: [("enter/y", "accept"), ("e", "edit it"), ("esc", "refuse"), ("↑↓", "scroll")],
        }.get(self.phase, [("esc", "close")])
        self._keys = keys_line(keys)
        self.query_one("#shrink-head", Static).update(Text.assemble(self._title, "\n", self._keys))

    def action_scroll_text(self, rows: int) -> None:
        """Scroll the proposed text by ``rows``."""
        self.query_one(ProposalView).scroll_text(rows)

    def action_scroll_page(self, direction: int) -> None:
        """Scroll the proposed text by a page (``direction`` 1 down, -1 up)."""
        view = self.query_one(ProposalView)
        view.scroll_text(direction * view.page())

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
