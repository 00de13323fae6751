"""The failed attempts viewer: every LLM reply that was not used, its full reasons and its quote.

Reached from the run dialog (``v``) and the command palette. It lists the refused replies of
this app session (``CurateApp.attempt_log``: generation, regeneration and whole-corpus runs),
newest first: the document, window, sample and attempt number, every reason in full (as it was
told to the model), and the passage the model quoted (or the start of its reply when it quoted
none). Everything from the model is shown as plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from mtcb_curate.plaintext import printable
from mtcb_curate.tui.keys import keys_line

#: Most refused attempts listed (the newest); the title says how many there are in all.
MAX_SHOWN = 300
#: Longest quote or reply shown per attempt (characters); a longer one is cut with a note.
MAX_QUOTE_CHARS = 3000


def attempts_text(attempts: Sequence[Any]) -> Text:
    """The refused ``attempts`` (``llm.generate.Attempt``), newest first, as plain text."""
    t = Text()
    shown = list(reversed(attempts))[:MAX_SHOWN]
    if not shown:
        t.append("No refused reply in this session.", style="dim italic")
        return t
    for a in shown:
        head = f"{a.doc_key} · chunk {a.chunk_index}" + (f" · sample {a.sample}" if a.sample else "")
        head += f" · attempt {a.number}" + (" · from the cache" if a.cached else "")
        t.append(printable(head, keep_newlines=False) + "\n", style="bold")
        for reason in a.problems or ("no reason recorded",):
            t.append("  - ")
            t.append(printable(reason, keep_newlines=False) + "\n", style="yellow")
        quote = a.quote
        label = "  the model quoted: " if quote else "  the reply: "
        body = quote or a.reply or "(empty)"
        t.append(label, style="dim")
        t.append(printable(body[:MAX_QUOTE_CHARS]))
        if len(body) > MAX_QUOTE_CHARS:
            t.append(f" … ({len(body):,} characters)", style="dim italic")
        t.append("\n\n")
    return t


class AttemptsScreen(ModalScreen[None]):
    """The refused replies of this session, newest first.

    Args:
        attempts: the refused attempts (``AttemptLog.refused()``), oldest first.

    Keys: ``up``/``down``/``pageup``/``pagedown`` scroll, ``escape``/``q`` close.
    """

    BINDINGS = [Binding("escape,q", "close", "close", show=False)]

    def __init__(self, attempts: Sequence[Any]) -> None:
        super().__init__()
        self.attempts = list(attempts)

    def compose(self) -> ComposeResult:
        with Vertical(id="attempts-dialog", classes="dialog"):
            yield Static(id="attempts-title")
            with VerticalScroll(id="attempts-body"):
                yield Static(id="attempts-text")
            yield Static(id="attempts-keys", classes="llm-keys")

    def on_mount(self) -> None:
        n = len(self.attempts)
        title = Text("Failed LLM attempts", style="bold")
        title.append(f" · {n} refused repl{'y' if n == 1 else 'ies'} this session"
                     + (f", the newest {MAX_SHOWN} shown" if n > MAX_SHOWN else "") + ", newest first", style="dim")
        self.query_one("#attempts-title", Static).update(title)
        self.query_one("#attempts-text", Static).update(attempts_text(self.attempts))
        keys = keys_line((("↑/↓ pgup/pgdn", "scroll"), ("esc", "close")))
        self.query_one("#attempts-keys", Static).update(keys)
        self.query_one("#attempts-body", VerticalScroll).focus()

    def action_close(self) -> None:
        """Close the viewer."""
        self.dismiss(None)
