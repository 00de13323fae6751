"""Chunker separation in the app, Pilot on the bundled sample with two chunkers configured:
after F, ``is:discriminating`` (and ``is:found-by-…``) narrow the queue to the pairs whose
outcome differs between the chunkers, the findability panel says so per pair, and the
statistics screen shows the evidence density and the paired comparison."""

from __future__ import annotations

import pytest

from support import opened, review_app, settle, text_of, wait_until

from mtcb_curate.preview.separation import DISCRIMINATING, FOUND_BY_ALL, FOUND_BY_NONE, pair_flags
from mtcb_curate.tui.widgets.filter_bar import FilterBar
from mtcb_curate.tui.widgets.pair_list import PairList

pytestmark = pytest.mark.usefixtures("review_at_once")


async def _filter(app, pilot, line: str) -> None:
    await pilot.press("V")
    bar = app.screen.query_one(FilterBar)
    bar.input.value = ""
    await pilot.press(*line)
    await pilot.press("enter")
    await settle(app, pilot)


@pytest.mark.slow
async def test_outcome_filters_panel_line_and_statistics(sample_dir, ws, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[preview]\nchunkers = ["recursive:2048", "recursive:512"]\nk = [1, 5]\nresamples = 300\n',
                      encoding="utf-8")
    session = opened(None, ws, sample=True)
    async with review_app(session, size=(120, 30), config_path=config) as (app, pilot):
        screen = app.screen
        await _filter(app, pilot, "is:discriminating")
        assert list(screen.query_one(PairList).ids) == []  # no findability yet: nothing passes
        await pilot.press("F")
        await settle(app, pilot)
        assert not screen._find_running and screen.controller.find_lines
        flags = {pid: pair_flags([f.hit_rank for f in lines.by_spec.values()], (1, 5))
                 for pid, lines in screen.controller.find_lines.items()}
        want = sorted(pid for pid, f in flags.items() if DISCRIMINATING in f)
        assert want, "the sample has pairs the two chunkers disagree on"
        # The findability run re-applied the outcome filter.
        assert list(screen.query_one(PairList).ids) == want
        line = text_of(app, "#qa-findability")
        assert line.startswith("◇ discriminating at k=") and " only by recursive:" in line, line
        for word, flag in (("is:found-by-all", FOUND_BY_ALL), ("is:found-by-none", FOUND_BY_NONE)):
            await _filter(app, pilot, word)
            assert list(screen.query_one(PairList).ids) == sorted(p for p, f in flags.items() if flag in f)
        await _filter(app, pilot, "-is:discriminating")
        assert list(screen.query_one(PairList).ids) == sorted(set(flags) - set(want))
        # The statistics screen: evidence density and the comparison of the two chunkers.
        await _filter(app, pilot, "")
        await pilot.press("T")
        await settle(app, pilot)
        stats = app.screen
        await wait_until(pilot, lambda: stats.stats is not None and stats.stats.separation.get("run"),
                         "the chunkers' comparison on the statistics screen", step=0.05)
        s = stats.stats
        assert s.separation["run"] and s.separation["pairs"] == len(session)
        comps = s.separation["comparisons"]
        assert {(c["a"], c["b"]) for c in comps} == {("recursive:2048", "recursive:512")}
        assert s.evidence["pairs"] == len(session) and s.evidence["sentences"] is not None
        body = "\n".join(str(w.render()) for w in stats.query("#stats-body Static"))
        assert "Evidence density" in body and "Does this set separate the chunkers?" in body
        assert "evidence-sparse (1-2 sentences)" in body and "recursive:2048" in body
