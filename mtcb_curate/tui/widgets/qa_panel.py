"""The QA panel: the current pair's head line, verdict, flags, question, answer and passage.

One Line-API widget: ``show`` wraps the sections once to the panel width (the row bounds;
each row's ``Strip`` is made when first painted: ``SectionRows``) and ``render_line`` hands out
the rows. Nothing is measured by the layout engine, so moving to the next
pair repaints the panel without a layout pass over the screen (the six auto-height ``Static``
widgets this replaced cost two layout passes of about 10 ms per key).

Every dataset string goes in as ``rich.text.Text`` made with ``printable``: markup such as
``[bold]`` or ``[@click=app.quit]`` and ANSI escapes appear literally and do nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip

from mtcb_curate.checks.pair import FIX_WORDS, PairProblem
from mtcb_curate.dataset.model import Via
from mtcb_curate.plaintext import printable
from mtcb_curate.store.session import PairView
from mtcb_curate.tui.badges import STATUS_STYLE
from mtcb_curate.verify import PairResult
from mtcb_curate.verify.verdict import Verdict
from mtcb_curate.tui.workarounds.text import divide_line
from mtcb_curate.tui.widgets.scrolling import BareScrollView, bare_box, inner_style, padded, paint_rows, prefilter

#: Longest text shown per field, in characters; a longer one is cut with a note (a 100 KB
#: passage would otherwise take long to wrap). The full text is in the editor.
MAX_FIELD_CHARS = 4000

#: Padded rows kept (``QAPanel.render_lines``): a few screens' worth. Every kept row is some
#: twenty objects the cyclic garbage collector walks (a ``Strip`` and its caches): keeping
#: more only made each full collection longer (``tui/memory.py``).
_PADDED_ROWS = 160
#: Wrapped sections kept (``QAPanel._wrapped_rows``): the pair on screen, the one before and
#: the one warmed ahead (about 8 sections a pair).
_WRAP_CACHE_SIZE = 24

#: Sections in display order: (name, label shown above it or None).
SECTIONS: tuple[tuple[str, str | None], ...] = (
    ("head", None),
    ("verdict", None),
    ("facts", None),
    ("flags", None),
    ("problems", None),
    ("findability", None),
    ("question", "Question"),
    ("answer", "Answer"),
    ("passage", "Supporting passage"),
)

#: The compact layout's order (``QAPanel.compact``: <= 120 columns or <= 30 rows): what a
#: decision needs first (head, verdict, the findability warning, question, answer), then the
#: problems and facts; labels start their section's first row, with no blank row before them.
#: The warning (``find_warning``: no chunker holds the passage in one chunk) sits above the
#: question so that it is on screen at 80x24; the per-chunker lines stay below the problems.
COMPACT_SECTIONS: tuple[tuple[str, str | None], ...] = (
    ("head", None),
    ("verdict", None),
    ("find_warning", None),
    ("question", "Question"),
    ("answer", "Answer"),
    ("problems", None),
    ("find_detail", None),
    ("facts", None),
    ("flags", None),
    ("passage", "Supporting passage"),
)

def _field(text: str) -> Text:
    shown = text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS]
    out = Text(printable(shown)) if shown else Text("(empty)", style="dim italic")
    if len(text) > MAX_FIELD_CHARS:
        out.append(f" … ({len(text):,} characters; e opens the whole text)", style="dim italic")
    return out


_LEVEL_WORDS = {
    "whitespace": "after collapsing whitespace",
    "typography": "after mapping quotes and dashes",
    "ascii": "after dropping quotes, dashes and non-ASCII symbols",
}


def _same_sections(a: dict[str, Text], b: dict[str, Text]) -> bool:
    """Whether two section maps would draw the same rows: same names, and per section the same
    plain text, spans and base style."""
    return a.keys() == b.keys() and all(
        x.plain == y.plain and x.spans == y.spans and x.style == y.style
        for x, y in ((a[k], b[k]) for k in a))


def verdict_text(r: PairResult | None, pending: bool) -> Text:
    """The verdict badge and what it means for MTCB's evaluator (``passage in chunk``).

    ``pending``: the full check (fuzzy search, other documents, chunk window) is still running.
    """
    if r is None:
        return Text("checking the passage against the document…", style="dim")
    span = f" at characters {r.start:,}–{r.end:,}" if r.start is not None else ""
    if r.verdict == Verdict.EXACT:
        t = Text(" EXACT ", style="bold reverse green")
        t.append(f" verbatim{span}", style="green")
        if r.occurrences_in_doc > 1:
            t.append(f" · occurs {r.occurrences_in_doc} times in this document", style="yellow")
        return t
    if r.verdict == Verdict.EMPTY:
        t = Text(" EMPTY ", style="bold reverse red")
        t.append(" passage: it would match every chunk (a free hit)", style="bold red")
        return t
    if r.verdict == Verdict.NORMALIZED:
        t = Text(" NORMALIZED ", style="bold reverse yellow")
        where = f", at characters {r.start:,}–{r.end:,}" if r.start is not None else ""
        t.append(f" not verbatim; found {_LEVEL_WORDS.get(r.level or '', 'after normalizing')}{where}",
                 style="yellow")
        t.append(" · s snaps the passage to the source text", style="dim")
        return t
    if r.verdict == Verdict.FUZZY:
        t = Text(" FUZZY ", style="bold reverse yellow")
        t.append(f" not verbatim; closest match {r.score:.1f}/100{span}", style="yellow")
        t.append(" · s snaps to it, m selects a span", style="dim")
        return t
    t = Text(" MISSING ", style="bold reverse red")
    t.append(" MTCB will never find this passage in its document", style="bold red")
    if not r.has_document:
        t.append(" · no document has this key", style="dim")
    elif pending or not r.fuzzy_checked:
        t.append(" · looking for the closest match…", style="dim")
    elif r.score is not None:
        t.append(f" · best alignment {r.score:.1f}/100 is below the threshold; m selects a span", style="dim")
    return t


def facts_text(r: PairResult | None, pending: bool) -> Text:
    """One line of facts: length in characters and tokens, the chunk window, other documents,
    edge whitespace."""
    t = Text(style="dim")
    if r is None:
        return t
    t.append(f"{r.chars:,} characters")
    if r.tokens is not None:
        t.append(f" · {r.tokens:,} tokens")
    if r.chunk_index is not None and r.start is not None:
        if r.in_chunk is True:
            t.append(f" · inside chunk {r.chunk_index}'s window")
        elif r.in_chunk is False:
            t.append(f" · OUTSIDE chunk {r.chunk_index}'s window", style="bold yellow")
    if r.elsewhere:
        keys = ", ".join(printable(k, keep_newlines=False) for k, _ in r.elsewhere[:3])
        more = f" and {len(r.elsewhere) - 3} more" if len(r.elsewhere) > 3 else ""
        t.append(f" · ALSO IN {len(r.elsewhere)} OTHER DOCUMENT(S): {keys}{more}", style="bold yellow")
    if r.edge_whitespace:
        t.append(" · edge whitespace (t trims)", style="yellow")
    if pending:
        t.append(" · checking other documents…")
    return t


def head_text(view: PairView, key_column: str, extra: Text | None = None) -> Text:
    """The head line: ``#id  STATUS (reason)   key: value   chunk_index: n   edited: ...``,
    then ``extra`` (badges such as ``≈2 similar``)."""
    pair = view.pair
    head = Text()
    head.append(f"#{pair.id}", style="bold")
    head.append("  ")
    head.append(view.status.value.upper(), style=STATUS_STYLE[view.status])
    if view.reason:
        head.append(f" ({view.reason})", style="red")
    head.append(f"   {key_column}: ", style="dim")
    head.append(printable(pair.doc_key, keep_newlines=False) or "(none)")
    head.append("   chunk_index: ", style="dim")
    head.append("—" if pair.chunk_index is None else str(pair.chunk_index))
    if view.edited:
        head.append("   edited: " + ", ".join(sorted(view.edited)), style="italic cyan")
    if view.pair.origin == Via.HAND:  # written by the curator (H)
        head.append("   ✎ added by hand", style="bold cyan")
    elif view.pair.origin != "source":
        head.append("   generated by LLM" if view.pair.origin == Via.GENERATE else f"   {view.pair.origin}",
                    style="italic magenta")
    if extra is not None and extra.plain:
        head.append("   ")
        head.append_text(extra)
    return head


def flags_text(problems: list[str] | tuple[str, ...]) -> Text:
    """One ``⚑`` line per input problem of the pair (empty Text when there are none)."""
    flags = Text()
    for problem in problems:
        flags.append("⚑ ", style="bold yellow")
        flags.append(printable(str(problem), keep_newlines=False))
        flags.append("\n")
    flags.rstrip()
    return flags


#: Mark and style of a problem line per check status.
_PROBLEM_MARK = {"fail": ("✗ ", "bold red"), "warn": ("! ", "bold yellow")}


def problems_text(problems: Sequence[PairProblem], key_label: Callable[[str], str] = str) -> Text:
    """One line per check the pair would fail or warn if accepted: ``✗ check: reason · z
    shrink, m select`` (failures red, warnings yellow); empty Text when there are none.
    ``key_label`` turns a default fix key into the key as bound now."""
    out = Text()
    for p in problems:
        mark, style = _PROBLEM_MARK.get(str(p.status), ("! ", "bold yellow"))
        out.append(mark + p.check_id, style=style)
        out.append(": ")
        out.append(printable(p.reason, keep_newlines=False))
        if p.fix_keys:
            out.append(" · ", style="dim")
            out.append(", ".join(f"{key_label(k)} {FIX_WORDS.get(k, '')}".rstrip() for k in p.fix_keys),
                       style="bold cyan")
        out.append("\n")
    out.rstrip()
    return out


#: The first line of the findability lines when no chunker holds the passage in one chunk: MTCB
#: can then count no hit for the pair (the queue's ⊄ mark).
FINDABILITY_WARNING = "◇ unfindable: no chunker holds the passage in one chunk (per chunker below)"


def outcome_text(lines, ks) -> Text:
    """One line on how the configured chunkers' outcomes compare for this pair (``lines``: a
    ``PairLines`` with every chunker evaluated, at least two): discriminating (at the first k
    where they differ: the chunkers that find it, or those that miss it, whichever are fewer),
    found by every chunker, or by none
    (``preview.separation.pair_flags``); empty Text otherwise."""
    from mtcb_curate.preview.separation import (DISCRIMINATING, FOUND_BY_ALL, FOUND_BY_NONE, hit_at,
                                                pair_flags)

    out = Text()
    found = lines.by_spec if lines is not None else {}
    if len(found) < 2 or any(f is None for f in found.values()):
        return out
    ks = sorted(set(int(k) for k in ks))
    flags = pair_flags([f.hit_rank for f in found.values()], ks)
    if DISCRIMINATING in flags:
        k = next(k for k in ks if len({hit_at(f.hit_rank, k) for f in found.values()}) > 1)
        hit = [spec for spec, f in found.items() if hit_at(f.hit_rank, k)]
        miss = [spec for spec, f in found.items() if not hit_at(f.hit_rank, k)]
        out.append(f"◇ discriminating at k={k}: ", style="bold magenta")
        out.append(f"found only by {', '.join(hit)}" if len(hit) <= len(miss) else f"missed only by {', '.join(miss)}")
    elif FOUND_BY_ALL in flags:
        out.append("◇ every chunker finds it", style="bold")
        out.append(f" (top {ks[-1]}): it adds to every score alike", style="dim")
    elif FOUND_BY_NONE in flags:
        out.append("◇ no chunker finds it", style="bold yellow")
        out.append(f" in the top {ks[-1]}: check the pair", style="dim")
    return out


def findability_text(lines, retriever: str = "bm25", note: str | None = None, ks=None) -> Text:
    """The findability lines: first ``FINDABILITY_WARNING`` when no configured chunker holds the
    passage wholly (``PairLines.fits_nowhere``), then per configured chunker, where the passage
    lies (fits in chunk N / cut across chunks N-M, numbered from 0 as ``chunk_index`` counts /
    longer than the chunk size) and the
    retriever's rank of the best chunk holding it out of all chunks. ``lines``: an ``app.findability.PairLines``
    for the pair's current texts, or None; then ``note`` (one plain line, e.g. "press F to
    compute") is shown instead (empty Text when both are None). ``ks``: the configured cut-offs;
    given, a line before the per-chunker ones says how their outcomes compare (:func:`outcome_text`)."""
    out = Text()
    if lines is None:
        if note:
            out.append("◇ findability: ", style="bold")
            out.append(note, style="dim")
        return out
    if lines.fits_nowhere():
        out.append(FINDABILITY_WARNING + "\n", style="bold yellow")
    who = "BM25" if retriever == "bm25" else retriever
    if ks is not None:
        outcome = outcome_text(lines, ks)
        if outcome.plain:
            out.append_text(outcome)
            out.append("\n")
    for spec, f in lines.by_spec.items():
        out.append("◇ " + spec + ": ", style="bold")
        if f is None:
            out.append("not computed for this chunker (F chunks the corpus)", style="dim")
        elif f.fits is not None:
            out.append(f"fits in chunk {f.fits[1] - 1:,} (from 0)", style="green")
            out.append(" of ")
            out.append(printable(f.fits[0], keep_newlines=False))
        elif f.too_long:
            out.append("longer than the chunk size", style="bold red")
        elif f.cut is not None:
            out.append(f"cut across chunks {f.cut[1] - 1:,}-{f.cut[2] - 1:,} (from 0; o fits it)", style="bold yellow")
            out.append(" of ")
            out.append(printable(f.cut[0], keep_newlines=False))
        else:
            out.append("not found in any document", style="bold red")
        if f is not None:
            if f.best_rank is not None:
                out.append(f" · rank {f.best_rank:,} of {f.n_chunks:,} chunks ({who})", style="dim")
            else:
                out.append(f" · no chunk of {f.n_chunks:,} holds it", style="dim")
        out.append("\n")
    out.rstrip()
    return out


class SectionRows(Sequence[Strip]):
    """One section wrapped to ``width`` cells, row for row as Rich's ``Text.wrap(console, width,
    overflow="fold")`` wraps it, each row a ``Strip`` over the panel's ``base`` style padded to
    ``width`` cells with its trailing whitespace dropped; the text's own style under its spans,
    as Rich prints a ``Text``.

    The rows' bounds are found at once, with the function ``Text.wrap`` itself breaks lines with
    (``divide_line``, ``tui/workarounds/text.py``, per line of the text, after expanding tabs as ``Text.wrap``
    does); a row's ``Strip`` is made from its slice of the text when it is first asked for, so
    a long passage costs only the rows a screen paints. Indexing takes an ``int`` (negative
    counts from the end) or a ``slice`` (a list).
    """

    __slots__ = ("_text", "_bounds", "_strips", "_console", "_width", "_base")

    def __init__(self, text: Text, width: int, console: Console, base: Style) -> None:
        if text.style:
            # The text's own style as the lowest span, as Rich's console output has it (its
            # Text.join turns each line's style into a span): a row with no span over it would
            # otherwise render unstyled ("(empty)" not dim, "checking…" not dim).
            text = Text(text.plain, justify=text.justify, overflow=text.overflow,
                        spans=[Span(0, len(text.plain), text.style), *text.spans])
        if "\t" in text.plain:
            text = text.copy()
            text.expand_tabs(8)  # as Text.wrap expands them (tab_size 8), before breaking
        bounds: list[tuple[int, int]] = []
        start = 0
        for line in text.plain.split("\n"):
            edges = [0, *divide_line(line, width, fold=True), len(line)]
            bounds.extend((start + a, start + b) for a, b in zip(edges, edges[1:]))
            start += len(line) + 1
        self._text = text
        self._bounds = bounds
        self._strips: list[Strip | None] = [None] * len(bounds)
        self._console = console
        self._width = width
        self._base = base

    def __len__(self) -> int:
        return len(self._bounds)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._bounds)))]
        strip = self._strips[i]
        if strip is None:
            strip = self._strips[i] = self._row(i)
        return strip

    def _row(self, i: int) -> Strip:
        a, b = self._bounds[i]
        text = self._text
        # text[a:b] as Text.divide makes it, without copying the rest of the text
        spans = [Span(max(0, s - a), min(e, b) - a, style) for s, e, style in text.spans
                 if min(e, b) - a > max(0, s - a)]
        width, base, console = self._width, self._base, self._console
        if not spans:  # most rows: what the Text below renders to, without making it
            plain = text.plain[a:b]
            if cell_len(plain) > width:
                plain = set_cell_size(plain, width)
            plain = plain.rstrip()
            return Strip([Segment(plain)], cell_len(plain)).apply_style(base).adjust_cell_length(width, base)
        line = Text(text.plain[a:b], style=text.style, justify=text.justify, overflow=text.overflow, spans=spans)
        line.truncate(width, overflow="fold")  # as Text.wrap does (its rstrip_end: rstrip below)
        line.rstrip()
        line.end = ""
        return Strip(list(line.render(console)), line.cell_len).apply_style(base).adjust_cell_length(width, base)


def _findability_parts(findability: Text | None) -> dict[str, Text]:
    """The findability lines split for the compact layout: ``find_warning`` (the warning line,
    when there is one) and ``find_detail`` (the lines after it)."""
    if findability is None or not findability.plain.startswith(FINDABILITY_WARNING):
        return {"find_warning": Text(), "find_detail": findability if findability is not None else Text()}
    cut = len(FINDABILITY_WARNING) + 1
    return {"find_warning": findability[:len(FINDABILITY_WARNING)], "find_detail": findability[cut:]}


def _sections(view: PairView | None, result: PairResult | None, pending: bool, key_column: str,
              extra: Text | None, problems: Text | None, findability: Text | None,
              matches: Callable[[str], list[tuple[int, int]]] | None) -> dict[str, Text]:
    """Section name -> its ``Text`` for ``QAPanel.show`` (same arguments)."""
    if view is None:
        sections = {name: Text() for name, _ in (*SECTIONS, *COMPACT_SECTIONS)}
        sections["head"] = Text("No pair in this view.", style="dim")
        return sections
    sections = {
        "head": head_text(view, key_column, extra),
        "verdict": verdict_text(result, pending),
        "facts": facts_text(result, pending),
        "flags": flags_text(view.pair.problems),
        "problems": problems if problems is not None else Text(),
        "findability": findability if findability is not None else Text(),
        **_findability_parts(findability),
        "question": _field(view.question),
        "answer": _field(view.answer),
        "passage": _field(view.passage),
    }
    if matches is not None:
        for name in ("question", "answer", "passage"):
            text = sections[name]
            for start, end in matches(text.plain):
                text.stylize("reverse bold", start, end)
    return sections


class QAPanel(BareScrollView, can_focus=False):
    """Shows one ``PairView``; call ``show(view, result, pending, key_column)``.

    ``section_text(name)`` returns the plain text of a section (see ``SECTIONS``), for tests
    and for copying.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"qa-panel--label", "qa-panel--more"}

    # Styles: styles/app.tcss (QAPanel, .qa-panel--label, .qa-panel--more). Their colours are
    # theme variables with alpha ($text-muted, $boost): they are resolved over the panel's own
    # background (``_component_style``), not taken as partial Rich styles, which drop the alpha
    # (the hint was white on white in textual-dark).

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._sections: dict[str, Text] = {name: Text() for name, _ in SECTIONS}
        #: Every row of the panel: (its section's rows, its index there); the ``Strip`` is made
        #: when the row is first painted (``SectionRows``).
        self._rows: list[tuple[Sequence[Strip], int]] = []
        self._wrapped_for = -1
        #: Wrapped rows per section, by what they were wrapped from (``_section_key``); the
        #: screen warms it with the next pairs' texts while idle, so a decision wraps little.
        self._wrapped: OrderedDict[tuple, SectionRows] = OrderedDict()
        #: The panel's own Rich style (``rich_style`` walks every ancestor): resolved once per
        #: style update, not once per row.
        self._base: Style | None = None
        self._paint: tuple[int, int, int, Style] | None = None
        #: The label style baked into ``_rows`` (wrapped again when the theme changes it).
        self._label_style: Style | None = None
        #: Rows with the panel's side padding, by the row they were made from (``render_lines``).
        self._padded: OrderedDict[tuple, tuple[Strip, Strip]] = OrderedDict()
        #: The panel style baked into ``_rows`` (wrapped again when it changes).
        self._rows_base: Style | None = None
        self._compact = False
        #: The keys named in the "more lines" hint (the screen sets the keys as bound now).
        self.scroll_keys = "[ ]"

    @property
    def compact(self) -> bool:
        """Whether the sections follow ``COMPACT_SECTIONS`` (question and answer before the
        problems and facts, no blank lines) rather than ``SECTIONS``."""
        return self._compact

    @compact.setter
    def compact(self, value: bool) -> None:
        if value != self._compact:
            self._compact = value
            if self._wrapped_for >= 0:
                self._wrap()
                self.refresh()

    def scroll_page(self, direction: int) -> None:
        """Scroll by a page down (``direction`` 1) or up (-1); the hint row overlaps."""
        step = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=self.scroll_offset.y + direction * step, animate=False, immediate=True)

    # -- public API ---------------------------------------------------------------------------

    def show(self, view: PairView | None, result: PairResult | None = None, pending: bool = False,
             key_column: str = "document", extra: Text | None = None, problems: Text | None = None,
             findability: Text | None = None,
             matches: Callable[[str], list[tuple[int, int]]] | None = None) -> None:
        """Display ``view`` (None: an empty queue) with its passage's verification ``result``
        (``pending``: the full check is still running), an ``extra`` line of badges, the
        ``problems`` lines (``problems_text``: the checks it would fail or warn if accepted) and
        the ``findability`` lines (``findability_text``). ``matches``: text -> the queue
        filter's match offsets in it, highlighted in the question, answer and passage.
        Sections equal to those shown (text, spans and style) change nothing: no re-wrap, no
        scroll to the top, no repaint."""
        sections = _sections(view, result, pending, key_column, extra, problems, findability, matches)
        if _same_sections(sections, self._sections):
            # Shown again unchanged (a worker's result that changes nothing on screen): no
            # re-wrap, no scroll back to the top, no repaint, so no second frame for the key.
            return
        self._sections = sections
        self._wrap()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def section_text(self, name: str) -> str:
        """Plain text of section ``name`` as last shown ("" when empty)."""
        return self._sections[name].plain

    def strips(self) -> list[Strip]:
        """Every row of the panel as painted (scrolled or not), one ``Strip`` each, padded to the
        content width; makes the rows not painted yet."""
        return [section[i] for section, i in self._rows]

    # -- rendering ----------------------------------------------------------------------------

    def _wrap(self) -> None:
        """Wrap every section to the content width and store the rows (one ``Strip`` each)."""
        width = self.scrollable_content_region.width
        self._wrapped_for = width
        if width <= 0:
            self._rows = []
            return
        label_style = self._label_style = self._component_style("qa-panel--label")
        base = self._rows_base = self._base_style()
        rows: list[tuple[Sequence[Strip], int]] = []
        for label, section in self._laid_out(self._sections, width, label_style, base):
            if label is not None:
                if rows:
                    rows.append(((Strip.blank(width, base),), 0))
                head = Strip([Segment(label, label_style)]).apply_style(base).adjust_cell_length(width, base)
                rows.append(((head,), 0))
            rows.extend((section, i) for i in range(len(section)))
        self._rows = rows
        # Without the reactive's layout pass (``virtual_size`` asks for one): the panel's size
        # is fixed by the stylesheet, and that pass over the whole screen cost 10-15 ms on
        # every key. Scrolling reads ``virtual_size`` directly.
        self.set_reactive(QAPanel.virtual_size, Size(width, len(rows)))

    def _laid_out(self, sections: dict[str, Text], width: int, label_style: Style, base: Style,
                  stop: Callable[[], bool] | None = None) -> Iterator[tuple[str | None, SectionRows]]:
        """The sections the panel shows, top to bottom: ``(label, rows)``, ``label`` the one
        drawn on a row of its own above the rows (after a blank row, but for the first shown),
        or None (the compact layout puts it before the text; a section without one). A section
        with neither text nor label is not shown. ``stop``: checked before each section; True
        ends the sections there."""
        for name, label in COMPACT_SECTIONS if self._compact else SECTIONS:
            if stop is not None and stop():
                return
            text = sections[name]
            if not text.plain and label is None:
                continue
            yield (None if self._compact else label,
                   self._wrapped_rows(text, label if self._compact else None, width, label_style, base))

    def _wrapped_rows(self, text: Text, label: str | None, width: int, label_style: Style,
                      base: Style) -> SectionRows:
        """``text`` (after ``label: `` in the compact layout) wrapped to ``width`` cells, one
        ``Strip`` per row, over the panel's ``base`` style and padded to ``width``: what the
        panel paints as it is (``SectionRows``: each row made when first painted); cached by
        what it was made from."""
        key = (label, text.plain, tuple(text.spans), text.style, width, label_style, base)
        rows = self._wrapped.get(key)
        if rows is not None:
            self._wrapped.move_to_end(key)
            return rows
        if label is not None:
            text = Text.assemble(Text(label + ": ", style=label_style), text)
        rows = self._wrapped[key] = SectionRows(text, width, self.app.console, base)
        while len(self._wrapped) > _WRAP_CACHE_SIZE:
            self._wrapped.popitem(last=False)
        return rows

    def warm(self, view: PairView, result: PairResult | None = None, pending: bool = False,
             key_column: str = "document", extra: Text | None = None, problems: Text | None = None,
             findability: Text | None = None,
             matches: Callable[[str], list[tuple[int, int]]] | None = None,
             stop: Callable[[], bool] | None = None) -> None:
        """Wrap what ``show`` with the same arguments would show, ahead of time (the screen
        calls this for the pairs a decision or ``j``/``k`` shows next, while idle), so that
        showing it wraps nothing. Changes nothing on screen. ``stop``: checked before each
        section; True ends the wrapping there (the sections wrapped are kept).

        Every section's row bounds are found (``show`` counts all rows), but rows are made only
        for the first screenful, the ``height`` rows from the top that the pair's first frame
        paints (``show`` starts a pair at the top), laid out as ``_wrap`` lays them out
        (``_laid_out``)."""
        width = self.scrollable_content_region.width
        if width <= 0 or self._label_style is None:
            return
        sections = _sections(view, result, pending, key_column, extra, problems, findability, matches)
        # painted by the panel itself (render_lines): padded and filtered ahead too
        padding = self._side_padding() if bare_box(self, side_padding=True, bottom_border=True) else None
        left = self.size.height  # rows of the first screenful not yet laid out
        first = True
        for label, rows in self._laid_out(sections, width, self._label_style, self._base_style(), stop):
            if label is not None:
                left -= 1 if first else 2  # the label's row, after a blank row
            first = False
            shown = rows[:max(0, left)]  # makes those rows' strips
            left -= len(rows)
            if padding is not None and shown:
                prefilter(self, [self._padded_row(strip, *padding) for strip in shown])

    def _component_style(self, name: str) -> Style:
        """The Rich style of component class ``name``, its colours blended over the panel's
        background (theme variables such as $text-muted carry alpha)."""
        return self.get_visual_style(name).rich_style

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._wrapped_for:
            self._wrap()
            self.refresh()

    def notify_style_update(self) -> None:
        """Repaint when CSS (e.g. the theme) changes. The rows are wrapped again by
        ``render_lines`` when the label style baked into them differs: not here, where the
        component styles may not be updated yet (reading them now cached the old theme's)."""
        super().notify_style_update()
        self._base = None
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Resolve what every row needs once per paint (region, scroll, styles), then paint
        the rows in ``crop``: straight from ``render_line``, padded (``scrolling.paint_rows``),
        when the panel's styles add only side padding and a bottom border, which comes from
        Textual's styles cache as every row does otherwise."""
        if self._label_style is not None and (self._component_style("qa-panel--label") != self._label_style
                                              or self._base_style() != self._rows_base):
            self._wrap()  # the theme changed after the last wrap (the styles are resolved late)
        self._paint = self._paint_state()
        try:
            if not bare_box(self, side_padding=True, bottom_border=True):
                return super().render_lines(crop)
            # The rows straight from the panel (padded once per row, kept with their filtered
            # copies); the bottom border from Textual's styles cache.
            padding = self._side_padding()
            content_height = self.size.height  # the content area (no top padding or border)

            def row(y: int) -> Strip:
                return self._padded_row(self.render_line(y), *padding)

            split = min(max(crop.y, content_height), crop.bottom)
            strips = paint_rows(self, Region(crop.x, crop.y, crop.width, split - crop.y), row)
            if split < crop.bottom:
                strips += super().render_lines(Region(crop.x, split, crop.width, crop.bottom - split))
            return strips
        finally:
            self._paint = None

    def _side_padding(self) -> tuple[int, int, Style]:
        """The panel's left and right padding (cells) and their Rich style."""
        _, right, _, left = self.styles.padding
        return left, right, inner_style(self)

    def _padded_row(self, strip: Strip, left: int, right: int, style: Style) -> Strip:
        """``strip`` with the panel's side padding (``left``, ``right`` cells in ``style``),
        kept per row."""
        key = (id(strip), left, right, style)
        kept = self._padded.get(key)
        if kept is None or kept[0] is not strip:
            kept = self._padded[key] = (strip, padded(strip, left, right, style))
            if len(self._padded) > _PADDED_ROWS:
                self._padded.popitem(last=False)
        return kept[1]

    def _base_style(self) -> Style:
        """The panel's own Rich style, resolved once per style update."""
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def _paint_state(self) -> tuple[int, int, int, Style]:
        """(top row shown, content width, content height, base style) as of now."""
        region = self.scrollable_content_region
        return self.scroll_offset.y, region.width, region.height, self._base_style()

    def render_line(self, y: int) -> Strip:
        """Row ``y`` of the viewport (0 = top visible row), padded to the content width. When
        rows are hidden below, the last visible row says how many and names the keys that
        scroll it (``scroll_keys``; the panel has no scrollbar, and ``e`` shows every text whole)."""
        top, width, height, base = self._paint or self._paint_state()
        row = top + y
        hidden = len(self._rows) - (top + height)
        if y == height - 1 and hidden > 0:
            style = self._component_style("qa-panel--more")
            note = f" ▼ {hidden + 1} more line{'s' if hidden else ''} ({self.scroll_keys} scroll; e shows the whole texts)"
            return Strip([Segment(note, style)]).adjust_cell_length(width, style)
        if 0 <= row < len(self._rows):
            section, i = self._rows[row]
            strip = section[i]  # styled and padded when made
            return strip if strip.cell_length == width else strip.adjust_cell_length(width, base)
        return Strip.blank(width, base)
