"""Findability in the source: the configured chunkers' chunk boundaries drawn around the passage
(``b``), and "fit in one chunk" (``o``): the largest part of the passage inside one chunk that
still holds what the answer needs, shown as a proposal to accept, edit or refuse.

A mixin of the review screen (:class:`ChunkFitActions`): the screen keeps its keys and its
source viewer; this module keeps the state and the work. The chunks of the pair's document come
from ``app.findability.DocumentChunks`` (the corpus chunks of a findability run when there are
some, else the document chunked in a thread worker the first time, then kept). Chunk numbers
are shown 0-based, as ``chunk_index`` counts, and say so.

Drawing: the chunks around the passage (:data:`AROUND` either side of the chunks it touches)
alternate two faint tints (``chunk``/``chunk-alt`` spans) and each chunk's first character is
marked (``boundary`` span) with its number in the gutter (``#117``; with several chunkers, the
spec's first letter: ``r117``, ``t45``).
"""

from __future__ import annotations

from mtcb_curate.tui.widgets.source_viewer import Span

#: Chunks drawn on each side of those the passage touches.
AROUND = 2


def chunk_spans(chunkers, start: int, end: int) -> list[Span]:
    """The source viewer's spans for the chunks around ``[start, end)`` (character offsets):
    tints for the first chunker's chunks, a boundary mark at each chunker's chunk starts.

    Args:
        chunkers: ``[(spec name, [(chunk start, chunk end), ...]), ...]`` as
            ``DocumentChunks.spans`` returns them.
    """
    out: list[Span] = []
    several = len(chunkers) > 1
    for n, (name, chunks) in enumerate(chunkers):
        touched = [k for k, (a, b) in enumerate(chunks) if a < max(end, start + 1) and b > start]
        if not touched:
            continue
        lo, hi = max(0, touched[0] - AROUND), min(len(chunks), touched[-1] + AROUND + 1)
        prefix = name[0] if several else "#"
        for k in range(lo, hi):
            a, b = chunks[k]
            if n == 0:
                out.append(Span(a, b, "chunk" if k % 2 == 0 else "chunk-alt"))
            out.append(Span(a, a + 1, "boundary", f"{prefix}{k}"))
    return out


class ChunkFitActions:
    """The review screen's chunk boundaries (``b``) and "fit in one chunk" (``o``). Expects the
    screen's ``session``, ``controller`` (its verdicts, findability and current pair),
    ``_writable_pair``, ``_show_current``, ``_shrunk`` and ``curate_app``."""

    #: ``b`` turned the chunk boundaries on.
    show_chunks: bool = False
    _doc_chunks = None

    def _chunks_store(self):
        """The screen's ``DocumentChunks`` (made on first use from the findability settings)."""
        if self._doc_chunks is None:
            from mtcb_curate.app.findability import DocumentChunks
            from mtcb_curate.preview.chunkers import DEFAULT_SPECS, parse_spec
            from mtcb_curate.preview.settings import PreviewSettings

            fa = self.controller.findability
            settings = fa.settings if fa is not None else PreviewSettings(tuple(parse_spec(x) for x in DEFAULT_SPECS))
            self._doc_chunks = DocumentChunks(settings, fa)
        return self._doc_chunks

    def _chunk_marks(self, view, doc, result) -> list[Span]:
        """Spans for the chunks around the pair's located passage when ``b`` is on (the
        document is chunked in a worker the first time; the marks come with the next frame)."""
        if not self.show_chunks or doc is None or result is None or result.start is None:
            return []
        store = self._chunks_store()
        got = store.cached(doc.key, doc.text)
        if got is None:
            self._chunk_document(doc.key, doc.text)
            return []
        return chunk_spans(got, result.start, result.end or result.start)

    def _chunk_document(self, key: str, text: str) -> None:
        from textual.worker import get_current_worker

        store = self._chunks_store()

        def run() -> None:
            try:
                store.spans(key, text)
            except Exception as exc:  # noqa: BLE001 - one line, never a crash
                self.app.call_from_thread(self.notify, f"Chunking failed: {exc}", severity="error", timeout=8,
                                          markup=False)
                return
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._show_current)

        self.run_worker(run, thread=True, exclusive=True, group="doc_chunks", exit_on_error=False)

    def action_chunk_bounds(self) -> None:
        """Show or hide the configured chunkers' chunk boundaries around the passage."""
        self.show_chunks = not self.show_chunks
        if self.show_chunks:
            names = ", ".join(s.text for s in self._chunks_store().settings.chunkers)
            self.notify(f"Chunk boundaries of {names} (numbers from 0, as chunk_index counts). b hides them.",
                        timeout=4, markup=False)
        self._show_current()

    # -- fit in one chunk ------------------------------------------------------------------------

    def action_fit_chunk(self) -> None:
        """Propose the largest part of the passage inside one chunk that still holds what the
        answer needs (the document is chunked in a worker when needed)."""
        pid = self._writable_pair()
        if pid is None:
            return
        store = self._chunks_store()
        doc = self.session.dataset.document_for(self.session.pairs[pid])
        if doc is not None and store.cached(doc.key, doc.text) is not None:
            self._fit_now(pid)
            return
        self.notify("Chunking this document…", timeout=2)
        self._fit_worker(pid)

    def _fit_worker(self, pid: int) -> None:
        store = self._chunks_store()
        doc = self.session.dataset.document_for(self.session.pairs[pid])

        def run() -> None:
            if doc is not None:
                try:
                    store.spans(doc.key, doc.text)
                except Exception as exc:  # noqa: BLE001 - one line, never a crash
                    self.app.call_from_thread(self.notify, f"Chunking failed: {exc}", severity="error", timeout=8,
                                              markup=False)
                    return
            self.app.call_from_thread(self._fit_now, pid)

        self.run_worker(run, thread=True, exclusive=True, group="fit_chunk", exit_on_error=False)

    def _fit_now(self, pid: int) -> None:
        from mtcb_curate.app.findability import propose_fit
        from mtcb_curate.app.review import NotApplicable
        from mtcb_curate.errors import CurateError
        from mtcb_curate.tui.screens.shrink import ShrinkScreen

        if self.controller.current != pid:
            return  # the curator moved on meanwhile
        try:
            outcome = propose_fit(self.session, pid, self._chunks_store(), verdicts=self.controller.verdicts,
                                  config=self.curate_app.config_path)
        except NotApplicable as exc:
            self.notify(str(exc), severity="warning", timeout=5, markup=False)
            return
        except (CurateError, ValueError) as exc:
            self.notify(f"No fit: {exc}", severity="error", timeout=10, markup=False)
            return
        if not self.show_chunks:
            self.show_chunks = True
            self._show_current()
        if outcome.proposal is None:
            self.notify(f"No fit: {outcome.reason}.", severity="warning", timeout=8, markup=False)
            return
        self.app.push_screen(ShrinkScreen(self.session, pid, outcome.proposal, kind="fit"),
                             lambda c: self._shrunk(pid, c))
