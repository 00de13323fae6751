"""What the review screen must show at 80x24 (and wider): the essential keys in the footer, the
source and why it was chosen in the top bar, keys in the help as a curator types them with
their ids whole, a pair's findability warning above the fold, and the select-span keys that
end it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rich.console import Console

from support import current, opened, review_app, settle, wait_until
from test_tui_reading import screen_text

#: A long "why this source", as the fallback to the bundled sample gives it.
WHY = ("no workspace yet; the Hugging Face Hub is unreachable (connection refused) and "
       "feyninc/ficha and chonkie-ai/ficha are not in the local cache: opened the bundled sample")


def footer_row(app) -> str:
    return screen_text(app).splitlines()[-1]


@pytest.mark.parametrize("size, at_least", [((80, 24), 8), ((120, 30), 11), ((160, 48), 15)])
async def test_the_footer_always_shows_help_and_quit_and_only_whole_keys(tmp_path, size, at_least):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=size) as (app, pilot):
        row = footer_row(app)
        assert row.rstrip().endswith("? help  q quit"), row
        assert row.startswith("a accept  x reject")
        words = row.split()
        # every key shown is whole: a key and its description, never cut ("/ sear")
        from mtcb_curate.tui.widgets.keys_footer import KeysFooter

        shown = app.screen.query_one(KeysFooter).shown_keys()
        assert [f"{k.key} {k.description}" in row for k in shown] == [True] * len(shown)
        assert len(shown) >= at_least
        assert "sear" not in words or "search" in words


async def test_the_footer_shows_a_rebound_key_as_bound(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(80, 24), keymap={"help": "f1", "accept": "y"}) as (app, pilot):
        row = footer_row(app)
        assert "f1 help" in row and row.startswith("y accept"), row


@pytest.mark.parametrize("width", [80, 120, 200])
async def test_the_top_bar_shows_why_this_source_whole(tmp_path, width):
    session = opened(None, tmp_path / "ws", sample=True)
    ds = session.dataset
    ds.source = replace(ds.source, reason=WHY)
    async with review_app(session, size=(width, 30)) as (app, pilot):
        rows = screen_text(app).splitlines()
        bar = " ".join(" ".join(rows[:3]).split())
        assert WHY in bar, bar
        assert "…" not in " ".join(rows[:3])
        assert ("#" + str(current(app))) in " ".join(rows[:6])  # the pair still starts near the top


async def test_a_short_source_line_takes_one_row_at_80_columns(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        rows = screen_text(app).splitlines()
        assert "(asked for with --sample)" in rows[0]
        assert rows[1].lstrip().startswith(f"#{current(app)} ")


async def test_the_help_lists_keys_as_typed_and_ids_whole(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        on_screen = set(screen_text(app).split())
        assert not on_screen & {"full_stop", "comma", "u,backspace"}, "raw key names on the help screen"
        assert {".", ","} <= on_screen
        help_screen = app.screen
        console = Console(width=help_screen.query_one("#help-dialog").content_region.width, record=True,
                          color_system=None, legacy_windows=False)
        console.print(help_screen.table)
        text = console.export_text()
        rows = {line.split()[-1]: line for line in text.splitlines() if line.split()}
        words = set(text.split())
        for raw in ("full_stop", "comma", "pagedown", "question_mark", "right_square_bracket", "slash"):
            assert raw not in words, raw
        assert rows["next_match"].split()[0] == "."
        assert rows["previous_match"].split()[0] == ","
        assert rows["source_page_down"].split()[0] == "pgdn"
        assert rows["panel_down"].split()[:2] == ["]", "shift+↓"]
        assert "repair_all_chunk_indexes" in rows and "…" not in text


async def test_the_findability_warning_is_above_the_fold_at_80x24(tmp_path, monkeypatch):
    from support import review_at_once

    review_at_once(monkeypatch)
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        screen = app.screen
        await pilot.press("F")
        await wait_until(pilot, lambda: not screen._find_running, "the findability run finished", step=0.1)
        await settle(app, pilot)
        unfindable = [pid for pid in screen.queue.ids
                      if (lines := screen.controller.current_find_lines(pid)) is not None and lines.fits_nowhere()]
        assert unfindable, "the sample has pairs no chunker holds wholly"
        pid = max(unfindable, key=lambda p: len(session.view(p).answer))  # the longest answer
        screen.goto(pid)
        await settle(app, pilot)
        panel_rows = screen_text(app).splitlines()[1:12]
        assert any("no chunker holds the passage in one chunk" in row for row in panel_rows), panel_rows


async def test_the_select_span_hint_shows_the_keys_that_end_it_at_80x24(tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    async with review_app(session, size=(80, 24)) as (app, pilot):
        await pilot.press("m")
        await pilot.pause()
        rows = screen_text(app).splitlines()
        hint = " ".join(rows[-4:])
        assert "enter use" in hint and "esc cancel" in hint, rows[-4:]
