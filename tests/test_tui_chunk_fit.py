"""Findability in the source, driven with Pilot: ``b`` draws the configured chunker's chunk
boundaries around the passage (chonkie's own, numbered from 0 in the gutter) and ``o`` fits the
passage in one chunk (accept with enter, undo with u)."""

from __future__ import annotations

import pytest

from support import opened, review_app, settle, wait_until, write_source

from mtcb_curate.preview.chunkers import chunk_corpus, parse_spec
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.screens.shrink import ShrinkScreen
from mtcb_curate.tui.widgets.source_viewer import SourceViewer

pytestmark = pytest.mark.usefixtures("review_at_once")

SPEC = "recursive:128"
SENTENCES = [f"Sentence {i} of the filing tells an ordinary fact about the year {2000 + i}." for i in range(30)]
DOC = "\n".join(SENTENCES) + "\n"
ANSWER_LINE = "Revenue for the year was 4,231 million dollars."
DOC = DOC.replace(SENTENCES[12], ANSWER_LINE)


def _chunks() -> list[tuple[int, int]]:
    c = chunk_corpus(parse_spec(SPEC), {"AAA": DOC})
    return list(zip(c.starts, c.ends))


def _passage() -> tuple[int, int]:
    """A passage from the line before the answer's line through it, cut by a chunk boundary."""
    end = DOC.index(ANSWER_LINE) + len(ANSWER_LINE)
    for start in (DOC.index(s) for s in reversed(SENTENCES[8:12])):
        if not any(a <= start and end <= b for a, b in _chunks()):
            return start, end
    raise AssertionError("no cut passage in the fixture")


@pytest.fixture
def src(tmp_path):
    start, end = _passage()
    return write_source(tmp_path / "src", [{"ticker": "AAA", "text": DOC}],
                        [{"question": "What was revenue for the year?", "answer": "$4,231 million",
                          "supporting_passage": DOC[start:end], "ticker": "AAA", "chunk_index": 0}])


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(f'[preview]\nchunkers = ["{SPEC}"]\n', encoding="utf-8")
    return path


async def _until(pilot, cond) -> None:
    await wait_until(pilot, cond)


async def test_b_draws_chonkies_chunk_boundaries_numbered_from_0(src, config, tmp_path):
    session = opened(src, tmp_path / "ws")
    async with review_app(session, size=(120, 30), config_path=config) as (app, pilot):
        viewer = app.screen.query_one(SourceViewer)
        assert not [s for s in viewer.spans if s.kind == "boundary"]  # off until b
        await pilot.press("b")
        await _until(pilot, lambda: any(s.kind == "boundary" for s in viewer.spans))
        chunks = _chunks()
        marks = {s.start: s.label for s in viewer.spans if s.kind == "boundary"}
        start, end = _passage()
        touched = [k for k, (a, b) in enumerate(chunks) if a < end and b > start]
        assert len(touched) >= 2  # the passage is cut
        for k in touched:
            assert marks[chunks[k][0]] == f"#{k}"  # chonkie's own start offsets, numbered from 0
        tints = {s.kind for s in viewer.spans}
        assert {"chunk", "chunk-alt", "exact"} <= tints
        # the gutter of the row where the last chunk starts shows its number
        at = chunks[touched[-1]][0]
        viewer.scroll_to_offset(at, center=False)
        await pilot.pause()
        strip = viewer.render_line(viewer.line_of_offset(at) - viewer.scroll_offset.y)
        assert f"#{touched[-1]}" in "".join(seg.text for seg in strip)
        await pilot.press("b")
        await pilot.pause()
        assert not [s for s in viewer.spans if s.kind == "boundary"]


async def test_o_fits_the_passage_in_one_chunk_and_u_restores_it(src, config, tmp_path):
    session = opened(src, tmp_path / "ws")
    async with review_app(session, size=(120, 30), config_path=config) as (app, pilot):
        before = session.view(0).passage
        await pilot.press("o")
        await _until(pilot, lambda: isinstance(app.screen, ShrinkScreen))
        dialog = app.screen
        assert dialog.kind == "fit"
        assert "in one chunk" in dialog.shown("title")
        facts = dialog.shown("facts")
        assert "counted from 0" in facts and "$4,231 million" in facts
        new = dialog.text
        assert ANSWER_LINE in new and new in before
        a = DOC.index(new)
        assert any(x <= a and a + len(new) <= y for x, y in _chunks())  # inside one of chonkie's chunks
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and session.view(0).passage == new
        assert [e.via for e in session.workspace.history()] == ["shrink"]
        # the boundaries are on now, to see where the passage lies
        assert any(s.kind == "boundary" for s in app.screen.query_one(SourceViewer).spans)
        await pilot.press("o")  # inside one chunk now: nothing to fit, said in one line
        await wait_until(pilot, lambda: any("already lies inside one chunk" in str(n.message)
                                            for n in app._notifications), "the one line said")
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("u")
        await settle(app, pilot)
        assert session.view(0).passage == before


def test_fit_reads_the_passage_as_the_shrink_does(tmp_path, config):
    """``o`` on a passage whose figures a computed answer needs, the year header above it: the
    fit says what the shrink says (computed as the question defines it), never "not in the
    passage, nor computable"."""
    from test_shrink_computed import BALANCE, INCOME

    from mtcb_curate.app.findability import DocumentChunks, propose_fit
    from mtcb_curate.app.review import propose_shrink
    from mtcb_curate.preview.settings import PreviewSettings

    doc = DOC + INCOME + BALANCE + DOC
    start, end = doc.index("Total net sales"), doc.index("25,309") + len("25,309")
    q = ("What is the FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
         "between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and FY2017). Round your "
         "answer to two decimal places.")
    src = write_source(tmp_path / "dpo", [{"ticker": "AAA", "text": doc}],
                       [{"question": q, "answer": "93.86", "supporting_passage": doc[start:end], "ticker": "AAA",
                         "chunk_index": 0}])
    session = opened(src, tmp_path / "ws")
    try:
        chunks = DocumentChunks(PreviewSettings.resolve(config))
        spans = chunks.spans("AAA", doc)[0][1]
        assert not any(a <= start and end <= b for a, b in spans)  # the passage is cut
        assert "as the question defines it" in propose_shrink(session, 0, config=config).computed[0]
        out = propose_fit(session, 0, chunks, config=config)
        assert "nor computable" not in out.reason, out.reason
        assert out.computed and "as the question defines it" in out.computed[0]
    finally:
        session.workspace.close()
