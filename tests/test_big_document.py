"""Moving between pairs of one very large document.

On a 50 MB filing a key took up to 0.8 s and the app reached 437 MB. What must hold (the
timings are in ``benchmarks/bench_big_document.py``; nothing here is timed):

- the source viewer makes no document-sized copy (``printable`` runs per drawn row) and
  indexes a document's lines once, however often it is shown again;
- moving between pairs of a document too large to verify inline runs no verification on the
  app's thread: the pair shows "checking…" and a worker finds the passage;
- the document is tokenized (for the chunk windows) in pieces, with the same windows as one
  whole-text encoding, so no token list of the whole document is ever held.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_jsonl
from support import current, wait_until
from mtcb_curate.dataset import tokens
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.tui.app import CurateApp
from mtcb_curate.tui.widgets import source_viewer as sv
from mtcb_curate.tui.widgets.qa_panel import QAPanel
from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span, wrap_rows

SIZE = (160, 45)


def big_text(lines: int = 6000) -> str:
    """About 300 KB of filing-like lines, some long enough to wrap, one control character."""
    out = []
    for i in range(lines):
        if i % 7 == 0:
            out.append(f"Paragraph {i}: " + "the Company’s net revenue rose in fiscal 2023 " * 4)
        else:
            out.append(f"Line {i} of the filing, $ {i * 13 % 997:,} million")
    out[10] = "a NUL \x00 and an escape \x1b[31m here"
    return "\n".join(out) + "\n"


class Spy:
    """Wraps a function; records the calls' first argument's length and thread."""

    def __init__(self, fn):
        self.fn = fn
        self.calls: list[tuple[int, str]] = []

    def __call__(self, *args, **kwargs):
        first = args[0] if args else None
        size = len(first) if isinstance(first, str) else -1
        self.calls.append((size, threading.current_thread().name))
        return self.fn(*args, **kwargs)


# -- the source viewer ------------------------------------------------------------------------

async def test_viewer_makes_no_copy_of_the_document_and_indexes_it_once(monkeypatch):
    from test_source_viewer import ViewerApp

    text = big_text()
    printable = Spy(sv.printable)
    monkeypatch.setattr(sv, "printable", printable)
    builds: list[int] = []
    real = getattr(sv, "LineIndex", None)
    if real is not None:
        class Counting(real):  # type: ignore[misc, valid-type]
            def __init__(self, t: str) -> None:
                builds.append(len(t))
                super().__init__(t)

        monkeypatch.setattr(sv, "LineIndex", Counting)
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        viewer = app.query_one(SourceViewer)
        at = text.index("Line 4000 ")
        viewer.show(text, [Span(at, at + 20)])
        await pilot.pause()
        viewer.show("another document\n")
        viewer.show(text, [Span(at, at + 20)])  # back to it: served from the viewer's cache
        for k in range(20):
            s = text.index(f"Line {70 * k + 1} ")
            viewer.set_spans([Span(s, s + 10)])
        await wait_until(pilot, lambda: printable.calls, "the viewer drawn")
        assert max(size for size, _ in printable.calls) < 1000  # per drawn row, never the text
        assert builds.count(len(text)) == 1
        # Behaviour kept: controls shown as stand-ins, the span's row centred and drawn.
        row = viewer.line_of_offset(text.index("a NUL"))
        viewer.scroll_to(y=row, animate=False, immediate=True)
        await pilot.pause()
        assert "a NUL ␀ and an escape ␛[31m here" in viewer.render_line(0).text
        assert viewer.document_length == len(text)
        start, end = viewer.row_span(viewer.line_of_offset(s))
        assert text[start:end].startswith("Line 1331 ")


# -- the review screen ------------------------------------------------------------------------

@pytest.fixture
def big_source(tmp_path) -> Path:
    text = big_text()
    rows = []
    for i in range(8):
        at = text.index(f"Line {700 * i + 1} ")
        passage = text[at:text.index("\n", at)]
        if i == 3:
            passage = passage.replace(" ", "  ", 1)  # normalized
        rows.append({"question": f"q{i}?", "answer": "a", "supporting_passage": passage, "ticker": "BIG",
                     "chunk_index": None})
    d = tmp_path / "big"
    write_jsonl(d / "corpus.jsonl", [{"ticker": "BIG", "text": text}])
    write_jsonl(d / "questions.jsonl", rows)
    return d


async def test_moving_between_pairs_of_a_big_document_verifies_on_no_key(big_source, tmp_path, monkeypatch):
    from mtcb_curate.app import verdicts
    from mtcb_curate.tui.screens import review_analysis, review_painting

    # The document counts as "big" (the real threshold is megabytes); no worker starts while
    # the keys are pressed (the scan and the full check are far away).
    monkeypatch.setattr(verdicts, "INLINE_MAX_CHARS", 10_000, raising=False)
    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 3600.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 3600.0)
    verify = Spy(verdicts.verify_pair)
    monkeypatch.setattr(verdicts, "verify_pair", verify)
    shows = Spy(SourceViewer.show)
    monkeypatch.setattr(SourceViewer, "show", lambda self, *a, **k: shows(self, *a, **k))

    session = open_session(Options("ficha", source=[str(big_source)], workspace=tmp_path / "ws"))
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        panel = screen.query_one(QAPanel)
        for key in "jjjjjjjkkkkj":
            await pilot.press(key)
        await wait_until(pilot, lambda: current(app) == 4 and screen._shown_pair == 4, "pair 4 shown")
        on_app_thread = [c for c in verify.calls if c[1] == threading.main_thread().name]
        assert on_app_thread == []  # not one document-sized search per key
        assert len(shows.calls) == 1  # the document was laid out once, at the first pair
        assert "checking" in panel.section_text("verdict")
        # Left on a pair, its check runs in a worker and the verdict and highlight appear.
        monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)
        await pilot.press("k")  # pair 3, the normalized one
        # the check's worker starts on a timer: wait for its verdict to land, not for idle
        await wait_until(pilot, lambda: screen._shown_pair == 3 and "checking" not in panel.section_text("verdict"),
                         "pair 3's check done")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "NORMALIZED" in panel.section_text("verdict")
        assert [s.kind for s in screen.query_one(SourceViewer).spans] == ["normalized"]
        assert all(c[1] != threading.main_thread().name for c in verify.calls)
    session.workspace.close()


# -- tokenizing --------------------------------------------------------------------------------

def test_windows_tokenize_in_pieces_with_the_same_windows(sample_dir, monkeypatch):
    import pyarrow.parquet as pq

    texts = []
    for f in sorted((sample_dir / "corpus").glob("*.parquet")):
        texts += [t for t in pq.read_table(f, columns=["text"]).column("text").to_pylist() if t]
    text = "\n".join(texts[:3])
    text = text[:300_000] + "\n\u2019quoted\u2019 é\nnext line\n" + text[300_000:600_000]
    whole = tokens.windows(text)  # reference: one encoding of the whole text
    enc = tokens.encoding()
    seen: list[int] = []

    class Recording:
        def __getattr__(self, name):
            return getattr(enc, name)

        def encode_ordinary(self, t: str):
            seen.append(len(t))
            return enc.encode_ordinary(t)

    monkeypatch.setattr(tokens, "PIECE_CHARS", 50_000, raising=False)
    monkeypatch.setattr(tokens, "encoding", lambda: Recording())
    pieces = tokens.windows(text)
    assert max(seen) <= 60_000  # pieces, never the whole text
    assert len(seen) > 5
    assert pieces == whole
    assert len(whole) > 10


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab  中é\u0301\n\x00\t", max_size=300),
    width=st.integers(min_value=1, max_value=30),
    piece=st.integers(min_value=1, max_value=40),
)
def test_line_index_wraps_as_wrap_rows_on_the_printable_text(text: str, width: int, piece: int) -> None:
    """The indexed, piecewise wrap of the raw text equals `wrap_rows` over its printable lines."""
    from mtcb_curate.plaintext import printable

    shown = printable(text)
    lines = shown.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    wide = [bool(sv._NON_SINGLE_CELL.search(line)) for line in lines]
    old_piece = sv._PIECE_CHARS
    sv._PIECE_CHARS = piece
    try:
        index = sv.LineIndex(text)
    finally:
        sv._PIECE_CHARS = old_piece
    assert list(index.starts) == starts
    assert list(index.wrap(width)) == wrap_rows(lines, starts, width, wide if any(wide) else None)


# -- memory: the skeleton index of a big document ---------------------------------------------

def test_skeleton_index_makes_no_eight_byte_copy_of_the_document():
    import tracemalloc

    from mtcb_curate.verify.normalize import SkeletonIndex, encode

    text = big_text(40_000) + " the ﬁnal ﬁgure"  # ~2 MB, not ASCII, with a ligature
    size = len(encode(text))
    tracemalloc.start()
    try:
        index = SkeletonIndex(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The kept bytes, skeleton and alphanumeric mask are about 2.7 bytes per byte of text; an
    # int64 copy of a per-byte array (np.add.reduceat with dtype=int64) alone was 8.
    assert peak < 5 * size
    assert index.skeleton.endswith(b"thefinalfigure")


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="aé\u2019\U0001F600\ud800\udc00\n", max_size=40),
       piece=st.integers(min_value=1, max_value=7))
def test_encode_in_pieces_is_one_encoding(text: str, piece: int) -> None:
    from mtcb_curate.verify import normalize

    old = normalize.ENCODE_PIECE
    normalize.ENCODE_PIECE = piece
    try:
        assert normalize.encode(text) == text.encode("utf-8", "surrogatepass")
    finally:
        normalize.ENCODE_PIECE = old


async def test_moving_between_pairs_asks_for_no_layout_pass(big_source, tmp_path, monkeypatch):
    """The QA panel's new row count used to set ``virtual_size`` (a layout reactive): a layout
    pass over the whole screen, 10-15 ms, on every key."""
    from textual.widget import Widget

    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 3600.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 3600.0)
    session = open_session(Options("ficha", source=[str(big_source)], workspace=tmp_path / "ws"))
    app = CurateApp(session)
    layouts: list[str] = []
    real = Widget.refresh

    def refresh(self, *args, layout: bool = False, **kwargs):
        if layout and armed:
            layouts.append(type(self).__name__)
        return real(self, *args, layout=layout, **kwargs)

    armed = False
    monkeypatch.setattr(Widget, "refresh", refresh)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(QAPanel)
        armed = True
        for key in "jjjjkkj":
            await pilot.press(key)
        screen = app.screen
        await wait_until(pilot, lambda: current(app) == 3 and screen._shown_pair == 3, "pair 3 shown")
        await pilot.pause()
        armed = False
        assert layouts == []
        assert panel.virtual_size.height == len(panel._rows) > 0  # still what scrolling reads
        assert "q3?" in panel.section_text("question")
    session.workspace.close()
