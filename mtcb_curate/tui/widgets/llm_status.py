"""The one-line status of the LLM screens: progress, retries, elapsed time, refusals, errors.

The run dialog, regenerate, generate more and semantic dedup each show one :class:`LLMStatus`
(under their own id, for the stylesheet and the tests). Every line is plain text (an LLM reply
or an error message is never parsed as markup), on one row, coloured by its kind.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from rich.text import Text
from textual.widgets import Static

from mtcb_curate.plaintext import printable

#: The kinds of line: '' (plain), ``warning`` (retries, cancels, refusals) or ``error``.
KINDS = ("", "warning", "error")


class LLMStatus(Static):
    """A one-line status of an LLM run.

    ``show(message, kind)`` sets the line; ``started()`` starts the elapsed-time clock that
    ``progress`` and ``retry`` append (whole seconds); ``tick(tokens)`` redraws the last
    progress or retry line with the time now and, when streaming, the tokens received so far
    (a run dialog calls it every second); ``notes`` joins a run's outcome notes (cancel,
    failures, refusal counts) with ``"; "``. The kind sets the CSS class ``-warning`` or
    ``-error``.

    Raises:
        ValueError: ``kind`` is not one of :data:`KINDS`.
    """

    def __init__(self, message: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(Text(printable(message, keep_newlines=False)), id=id, classes=classes)
        self.kind = ""
        self.message = message
        self._started: float | None = None
        #: The last progress or retry line without its time suffix (``tick`` redraws it).
        self._live: tuple[str, str] | None = None
        self._tokens: int | None = None

    def show(self, message: str, kind: str = "") -> None:
        """Show ``message`` (one plain line) as a line of ``kind``."""
        if kind not in KINDS:
            raise ValueError(f"unknown status kind {kind!r}: one of {KINDS}")
        self._live = None
        self._show(message, kind)

    def _show(self, message: str, kind: str) -> None:
        self.kind = kind
        self.message = message
        self.set_class(kind == "warning", "-warning")
        self.set_class(kind == "error", "-error")
        self.update(Text(printable(message, keep_newlines=False)))

    def started(self) -> None:
        """Start the elapsed-time clock (the run's calls begin now)."""
        self._started = time.monotonic()

    def elapsed(self) -> str:
        """`` · 12 s`` since ``started()`` (and `` · 340 tokens received`` once ``tick`` was
        given a count), or '' before it."""
        if self._started is None:
            return ""
        tokens = "" if self._tokens is None else f" · {self._tokens:,} tokens received"
        return f" · {time.monotonic() - self._started:.0f} s{tokens}"

    def _live_show(self, message: str, kind: str) -> None:
        self._live = (message, kind)
        self._show(f"{message}{self.elapsed()}", kind)

    def progress(self, done: int, total: int, unit: str) -> None:
        """``done`` of ``total`` ``unit``s finished (and which one is asked for next)."""
        nxt = f", asking for {unit} {done + 1}…" if done < total else ""
        self._live_show(f"{done} of {total} {unit}s done{nxt}", "")

    def waiting(self, message: str) -> None:
        """A line that ``tick`` keeps up to date (``asking the LLM (window 1 of 3)…``)."""
        self._live_show(message, "")

    def retry(self, notice: str) -> None:
        """A retry notice from the client (``retry 2/5 in 4 s: 429 rate limited``)."""
        self._live_show(notice, "warning")

    def tick(self, tokens: int | None = None) -> None:
        """Redraw the last progress, waiting or retry line with the elapsed time now and
        ``tokens`` received (None: not streaming, not shown); other lines are left alone."""
        if tokens is not None:
            self._tokens = tokens
        if self._live is not None:
            self._show(f"{self._live[0]}{self.elapsed()}", self._live[1])

    def notes(self, notes: Iterable[str | None], *, head: str | None = None) -> None:
        """A run's outcome: ``head`` then each note, joined with ``"; "``; a warning when there
        is any note."""
        items = [n for n in notes if n]
        self.show("; ".join(([head] if head else []) + items), "warning" if items else "")
