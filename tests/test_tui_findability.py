"""The review screen's findability line, Pilot on the bundled sample: before any
preview the line says F computes it; F chunks and scores every pair in a worker (progress,
esc cancels); the line agrees with a direct chonkie scan; a repair (s/t) re-scores that pair
only; the queue's mark for passages no chunker holds; the palette entry."""

from __future__ import annotations

import threading
import time

import pytest

from support import WAIT_S, current, opened, review_app, settle, text_of, wait_until

from mtcb_curate.app import findability as app_findability
from mtcb_curate.preview.chunkers import chunk_corpus, parse_spec
from mtcb_curate.tui.screens.review import FAIL_MARK, UNFINDABLE_MARK

pytestmark = pytest.mark.usefixtures("review_at_once")


def _line(app) -> str:
    return text_of(app, "#qa-findability")


async def _press_f(app, pilot):
    await pilot.press("F")
    await settle(app, pilot)
    assert not app.screen._find_running


@pytest.mark.slow
async def test_press_f_fills_every_line_and_a_repair_rescores_that_pair_only(sample_dir, ws, monkeypatch):
    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        screen = app.screen
        assert "press F to compute" in _line(app)
        await _press_f(app, pilot)
        line = _line(app)
        assert line.startswith("◇ recursive:2048: ") and " chunks (BM25)" in line, line
        # Every pair has its line, and 'fits' agrees with a direct scan of chonkie's chunks.
        documents = {k: d.text for k, d in session.dataset.documents.items()}
        chunks = chunk_corpus(parse_spec("recursive:2048"), documents)
        assert set(screen.controller.find_lines) == set(range(len(session)))
        for pid, lines in screen.controller.find_lines.items():
            v = session.view(pid)
            f = lines.by_spec["recursive:2048"]
            direct = bool(v.passage) and any(v.passage in t for t in chunks.texts)
            assert (f.fits is not None) == direct, pid
        # The queue marks a pair no chunker holds (when no check fails it).
        marked = [pid for pid, lines in screen.controller.find_lines.items()
                  if lines.fits_nowhere() and not screen.controller.pair_fails(pid)]
        for pid in marked:
            assert screen.rows.text(pid, 80)[2] == UNFINDABLE_MARK
        for pid, lines in screen.controller.find_lines.items():
            if not lines.fits_nowhere():
                assert screen.rows.text(pid, 80)[2] in (" ", FAIL_MARK)
        # A pair snap changes: after s, only it is scored again, for its new passage.
        target = next((pid for pid in range(len(session))
                       if (r := screen.controller.verdicts.cached(pid)) is not None and r.verdict in ("normalized", "fuzzy")),
                      None)
        assert target is not None, "the sample has a passage s can snap"
        screen.goto(target)
        await settle(app, pilot)
        before = _line(app)
        scored = []
        real = screen.controller.findability.score_pairs
        monkeypatch.setattr(screen.controller.findability, "score_pairs", lambda ids: scored.extend(ids) or real(ids))
        old = session.view(target).passage
        await pilot.press("s")
        await settle(app, pilot)
        new = session.view(target).passage
        assert new != old
        assert scored == [target]
        lines = screen.controller.find_lines[target]
        assert lines.passage == new
        after = _line(app)
        assert after.startswith("◇ recursive:2048: ")
        f = lines.by_spec["recursive:2048"]
        assert (f.fits is not None) == any(new in t for t in chunks.texts)
        assert before != "" and after != ""


@pytest.mark.slow
async def test_a_second_app_reads_the_cache_without_f(sample_dir, ws):
    session = opened(None, ws, sample=True)
    async with review_app(session) as (app, pilot):
        await _press_f(app, pilot)
        first = _line(app)
    session = opened(None, ws, sample=True)
    async with review_app(session) as (app, pilot):
        assert _line(app) == first


async def test_esc_cancels_the_run_and_f_resumes(sample_dir, ws, monkeypatch):
    started = threading.Event()

    def slow_chunk_corpus(spec, documents, chunker=None, progress=None):
        started.set()
        end = time.monotonic() + WAIT_S  # a guard against a hang: the cancel ends it long before
        while time.monotonic() < end:
            progress(0, len(documents))
            threading.Event().wait(0.01)
        raise AssertionError("not cancelled")

    monkeypatch.setattr(app_findability, "chunk_corpus", slow_chunk_corpus)
    session = opened(None, ws, sample=True)
    async with review_app(session) as (app, pilot):
        await pilot.press("F")
        await wait_until(pilot, lambda: started.is_set() and "chunking with recursive:2048" in _line(app),
                         "the run's progress shown")
        assert "chunking with recursive:2048" in _line(app) and "esc cancels" in _line(app)
        await pilot.press("escape")
        await settle(app, pilot)
        assert "cancelled" in _line(app) and "press F" in _line(app)
        assert not app.screen._find_running
        monkeypatch.setattr(app_findability, "chunk_corpus", chunk_corpus)
        await _press_f(app, pilot)
        assert _line(app).startswith("◇ recursive:2048: ")


async def test_keys_still_move_while_the_run_works(sample_dir, ws, monkeypatch):
    release = threading.Event()

    def blocked_chunk_corpus(spec, documents, chunker=None, progress=None):
        while not release.wait(0.01):
            progress(0, len(documents))
        return chunk_corpus(spec, documents)

    monkeypatch.setattr(app_findability, "chunk_corpus", blocked_chunk_corpus)
    session = opened(None, ws, sample=True)
    async with review_app(session) as (app, pilot):
        start = current(app)
        await pilot.press("F")
        await pilot.pause(0.1)
        await pilot.press("j")
        assert current(app) != start
        release.set()
        await settle(app, pilot)
        assert _line(app).startswith("◇ recursive:2048: ")


async def test_palette_entry_runs_it(sample_dir, ws):
    from mtcb_curate.tui.palette import ENTRIES

    entry = next(e for e in ENTRIES if e.binding_id == "findability")
    session = opened(None, ws, sample=True)
    async with review_app(session) as (app, pilot):
        entry.run(app.screen)
        await settle(app, pilot)
        assert _line(app).startswith("◇ recursive:2048: ")


async def test_queue_marks_a_passage_every_chunker_cuts(tmp_path, ws):
    from support import write_source

    sentences = [f"Sentence number {i} says the kettle output rose by {i} units in that year." for i in range(80)]
    text = " ".join(sentences)
    chunks = chunk_corpus(parse_spec("recursive:2048"), {"AAA": text})
    assert len(chunks) >= 2
    cut = chunks.ends[0]
    straddling = text[cut - 60:cut + 60]
    assert not any(straddling in t for t in chunks.texts)
    inside = text[10:130]
    rows = [{"question": q, "answer": "some units", "supporting_passage": p, "ticker": "AAA", "company": "Alpha",
             "chunk_index": 0}
            for q, p in (("By how many units did kettle output rise at the first chunk's end?", straddling),
                         ("Which sentence number opens the kettle report of Alpha?", inside))]
    source = write_source(tmp_path / "src", [{"ticker": "AAA", "company": "Alpha", "text": text}], rows)
    session = opened(source, ws)
    async with review_app(session) as (app, pilot):
        await _press_f(app, pilot)
        screen = app.screen
        assert screen.rows.text(0, 80)[2] == UNFINDABLE_MARK
        assert screen.rows.text(1, 80)[2] == " "
        screen.goto(0)
        await settle(app, pilot)
        assert "cut across chunks 0-1 (from 0; o fits it) of AAA" in _line(app)
        assert "findable: cut across chunks by every configured chunker" in text_of(app, "#qa-problems")
