"""The QA panel: the current pair's question, answer, supporting passage, key and flags.

Every dataset string goes in as ``rich.text.Text`` made with ``printable``: markup such as
``[bold]`` or ``[@click=app.quit]`` and ANSI escapes appear literally and do nothing.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from mtcb_curate.locate import Location
from mtcb_curate.plaintext import printable
from mtcb_curate.session import PairView

#: Longest text shown per field, in characters; a longer one is cut with a note (a 100 KB
#: passage would otherwise make the panel sluggish to lay out). The full text is in the editor.
MAX_FIELD_CHARS = 4000

_STATUS_STYLE = {
    "undecided": "bold",
    "accepted": "bold green",
    "rejected": "bold red",
    "skipped": "bold dim",
    "flagged": "bold yellow",
}


def _field(text: str) -> Text:
    shown = text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS]
    out = Text(printable(shown)) if shown else Text("(empty)", style="dim italic")
    if len(text) > MAX_FIELD_CHARS:
        out.append(f" … ({len(text):,} characters; e opens the whole text)", style="dim italic")
    return out


def location_text(loc: Location | None, passage: str, locating: bool) -> Text:
    """The verdict line under the passage: verbatim, not verbatim (closest match), empty ..."""
    if loc is None:
        return Text("checking the passage against the document…", style="dim")
    if loc.kind == "exact":
        t = Text("✓ verbatim", style="bold green")
        t.append(f" at characters {loc.start:,}–{loc.end:,}", style="dim")
        if loc.occurrences > 1:
            t.append(f" · occurs {loc.occurrences} times in this document", style="yellow")
        return t
    if loc.kind == "empty":
        return Text("✗ EMPTY PASSAGE: it would match every chunk (a free hit)", style="bold red")
    t = Text("✗ NOT VERBATIM: MTCB will never find this passage", style="bold red")
    if locating:
        t.append(" · looking for the closest match…", style="dim")
    elif loc.kind == "closest":
        t.append(f" · closest match {loc.score:.1f}/100 at characters {loc.start:,}–{loc.end:,}", style="yellow")
    elif loc.kind == "missing":
        t.append(" · no similar text in the document", style="dim")
    return t


class QAPanel(VerticalScroll, can_focus=False):
    """Shows one ``PairView``; call ``show(view, location, locating, flags)``."""

    def compose(self) -> ComposeResult:
        yield Static(id="qa-head")
        yield Static(id="qa-verdict")
        yield Static(id="qa-flags")
        yield Static("Question", classes="qa-label")
        yield Static(id="qa-question", classes="qa-text")
        yield Static("Answer", classes="qa-label")
        yield Static(id="qa-answer", classes="qa-text")
        yield Static("Supporting passage", classes="qa-label")
        yield Static(id="qa-passage", classes="qa-text")

    def show(self, view: PairView | None, loc: Location | None = None, locating: bool = False,
             key_column: str = "document") -> None:
        """Display ``view`` (None: an empty queue) with the passage's location verdict."""
        if view is None:
            self.query_one("#qa-head", Static).update(Text("No pair in this view.", style="dim"))
            for name in ("question", "answer", "passage"):
                self.query_one(f"#qa-{name}", Static).update("")
            self.query_one("#qa-verdict", Static).update("")
            self.query_one("#qa-flags", Static).update("")
            return
        pair = view.pair
        head = Text()
        head.append(f"#{pair.id}", style="bold")
        head.append("  ")
        head.append(view.status.value.upper(), style=_STATUS_STYLE[view.status.value])
        if view.reason:
            head.append(f" ({view.reason})", style="red")
        head.append(f"   {key_column}: ", style="dim")
        head.append(printable(pair.doc_key) or "(none)")
        head.append("   chunk_index: ", style="dim")
        head.append("—" if pair.chunk_index is None else str(pair.chunk_index))
        if view.edited:
            head.append("   edited: " + ", ".join(sorted(view.edited)), style="italic cyan")
        self.query_one("#qa-head", Static).update(head)
        self.query_one("#qa-question", Static).update(_field(view.question))
        self.query_one("#qa-answer", Static).update(_field(view.answer))
        self.query_one("#qa-passage", Static).update(_field(view.passage))
        self.query_one("#qa-verdict", Static).update(location_text(loc, view.passage, locating))
        flags = Text()
        for problem in pair.problems:
            flags.append("⚑ ", style="bold yellow")
            flags.append(printable(problem, keep_newlines=False))
            flags.append("\n")
        flags.rstrip()
        self.query_one("#qa-flags", Static).update(flags)
        self.scroll_home(animate=False)
