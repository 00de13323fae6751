"""Verdicts and one-key repairs in the review screen: snap, trim, select, each undoable."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORPUS
from mtcb_curate.tui.screens.select_span import SelectSpanScreen
from mtcb_curate.tui.widgets.source_viewer import SourceViewer
from support import opened, review_app, settle, text_of, write_source

pytestmark = pytest.mark.usefixtures("review_at_once")

DOC = CORPUS[1]["text"]  # "Beta sells bells.\nIts ’best’ year was 2021.\n"


@pytest.fixture
def data(tmp_path) -> Path:
    rows = [
        {"question": "What does Beta sell?", "answer": "Bells", "supporting_passage": "Beta sells  bells.",
         "ticker": "BBB", "company": "Beta", "chunk_index": 0},
        {"question": "Which was Beta's best year?", "answer": "2021",
         "supporting_passage": "Its 'best' year was 2021 ", "ticker": "BBB", "company": "Beta", "chunk_index": 0},
        {"question": "What year was best for Beta?", "answer": "2021",
         "supporting_passage": "Its finest year was 2021.", "ticker": "BBB", "company": "Beta", "chunk_index": 0},
        {"question": "What is the passage?", "answer": "-", "supporting_passage": "  ",
         "ticker": "BBB", "company": "Beta", "chunk_index": 0},
    ]
    return write_source(tmp_path / "src", questions=rows)


async def test_verdict_badges_and_spans_per_verdict(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        viewer = app.screen.query_one(SourceViewer)
        assert "NORMALIZED" in text_of(app, "#qa-verdict")
        assert [s.kind for s in viewer.spans] == ["normalized"]
        await pilot.press("j", "j")
        await settle(app, pilot)
        assert "FUZZY" in text_of(app, "#qa-verdict")
        assert [s.kind for s in viewer.spans] == ["closest"]
        await pilot.press("j")
        await settle(app, pilot)
        assert "EMPTY" in text_of(app, "#qa-verdict") and viewer.spans == ()
        # The queue marks each kind.
        rows = [app.screen.rows.text(i, 60) for i in range(4)]
        assert [r[1] for r in rows] == ["≈", "≈", "~", "∅"]


async def test_snap_makes_the_passage_exact_and_undo_restores_it(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        await pilot.press("s")
        await settle(app, pilot)
        assert session.view(0).passage == "Beta sells bells."
        assert "EXACT" in text_of(app, "#qa-verdict")
        assert [e.via for e in session.workspace.history()] == ["snap"]
        await pilot.press("j", "j")  # a fuzzy match snaps too
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        assert session.view(2).passage in DOC and "EXACT" in text_of(app, "#qa-verdict")
        await pilot.press("u")
        await settle(app, pilot)
        assert session.view(2).passage == "Its finest year was 2021."
        assert "FUZZY" in text_of(app, "#qa-verdict")


async def test_trim_strips_edge_whitespace_and_punctuation(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        await pilot.press("j", "t")
        await settle(app, pilot)
        assert session.view(1).passage == "Its 'best' year was 2021"
        await pilot.press("t")  # nothing left to trim: no new edit
        await settle(app, pilot)
        assert len(session.workspace.history()) == 1
        await pilot.press("u")
        assert session.view(1).passage == "Its 'best' year was 2021 "


async def test_select_a_span_with_the_keys(data, tmp_path):
    session = opened(data, tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        await pilot.press("j", "j", "j")  # the empty passage: nothing located
        await settle(app, pilot)
        await pilot.press("m")
        assert isinstance(app.screen, SelectSpanScreen)
        scr = app.screen
        scr.start, scr.end = 0, 0
        await pilot.press("right", "right")  # end moves two words: "Beta sells"
        assert DOC[scr.start:scr.end] == "Beta sells"
        assert [s.kind for s in app.screen.viewer.spans] == ["selection"]
        await pilot.press("shift+right")  # start moves one word: "sells"
        assert DOC[scr.start:scr.end] == "sells"
        await pilot.press("escape")  # cancel: nothing changes
        await settle(app, pilot)
        assert session.view(3).passage == "  " and not session.workspace.history()
        await pilot.press("m")
        scr = app.screen
        scr.start, scr.end = 0, 0
        await pilot.press("down")  # end of the first line
        await pilot.press("enter")
        await settle(app, pilot)
        assert session.view(3).passage == "Beta sells bells."
        assert "EXACT" in text_of(app, "#qa-verdict")
        assert [e.via for e in session.workspace.history()] == ["select"]
        await pilot.press("u")
        assert session.view(3).passage == "  "


async def test_w_shows_the_chunk_window_bounds(tmp_path):
    from mtcb_curate.dataset import tokens

    text = "".join(f"Sentence number {i} of the filing talks about revenue. " for i in range(3000))
    passage = "Sentence number 2500 of the filing talks about revenue."
    ws = tokens.windows(text)
    chunk = next(w.index for w in ws if w.start <= text.index(passage) and text.index(passage) + len(passage) <= w.end)
    write_source(tmp_path / "w", [{"ticker": "AAA", "company": "Alpha", "text": text}], [
        {"question": "What does sentence 2500 talk about?", "answer": "Revenue", "supporting_passage": passage,
         "ticker": "AAA", "company": "Alpha", "chunk_index": chunk}])
    session = opened(tmp_path / "w", tmp_path / "ws")
    async with review_app(session) as (app, pilot):
        viewer = app.screen.query_one(SourceViewer)
        assert [s.kind for s in viewer.spans] == ["exact"]
        await pilot.press("w")
        await settle(app, pilot)
        window = [s for s in viewer.spans if s.kind == "window"]
        assert [(s.start, s.end) for s in window] == [(ws[chunk].start, ws[chunk].end)]
        await pilot.press("w")
        assert [s.kind for s in viewer.spans] == ["exact"]
