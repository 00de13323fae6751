"""The edit dialog keeps what the curator did not touch, loses no typed key, and keeps the text
when saving fails."""

from __future__ import annotations

import asyncio
import errno
import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from textual import events
from textual.document._document import Document
from textual.widgets import Static, TextArea

from conftest import write_jsonl
from support import settle, wait_until
from mtcb_curate.errors import WorkspaceError
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.tui.app import CurateApp
from mtcb_curate.tui.screens.edit import EditScreen
from mtcb_curate.tui.widgets.plain_text_area import restore_line_breaks

SIZE = (160, 45)
BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]

# Every line break Python's str.splitlines knows, mixed in one passage.
PASSAGE = ("Net revenue rose 4%.\nOperating income\r\nwas $2.1 billion.\rCash\x0bflow\x0cimproved"
           "\u2028in every\x85segment.\u2029Debt fell.")
QUESTION = "What happened\r\nto revenue?"
DOC = "Annual report.\n" + PASSAGE + "\nEnd of report.\n"


@pytest.fixture
def breaks_source(tmp_path) -> Path:
    d = tmp_path / "breaks"
    write_jsonl(d / "corpus.jsonl", [{"ticker": "AAA", "company": "Alpha", "text": DOC},
                                     {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells.\n"}])
    write_jsonl(d / "questions.jsonl", [
        {"question": QUESTION, "answer": "It rose\n4%.", "supporting_passage": PASSAGE,
         "ticker": "AAA", "company": "Alpha", "chunk_index": 0},
        {"question": "What does Beta sell?", "answer": "Bells", "supporting_passage": "Beta sells bells.",
         "ticker": "BBB", "company": "Beta", "chunk_index": 0},
    ])
    return d


def opened(source: Path, ws: Path):
    return open_session(Options("ficha", source=[str(source)], workspace=ws))


@pytest.fixture(autouse=True)
def scan_at_once(monkeypatch):
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


def type_at_once(app, keys) -> None:
    """Send ``keys`` to the app as a terminal does for a fast typist (or a paste of keys): all
    queued at once, with no pause for the app to catch up between them (``Pilot.press`` waits
    for idle after each key)."""
    for key in keys:
        char = {"space": " "}.get(key, key if len(key) == 1 else None)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


def edit_entries(session) -> list:
    return [e for e in session.workspace.history() if e.kind == "edit"]


async def handled(app, pilot, session, changes: int, what: str) -> None:
    """Let the app run until the workspace has recorded ``changes`` changes in all and no edit
    dialog is open (the keys typed at once are handled, their save included: Pilot's own pause
    only waits for the app to look idle, which a loaded machine fakes), then :func:`settle`."""
    def done() -> bool:
        return len(session.workspace.history()) >= changes and \
            not any(isinstance(s, EditScreen) for s in app.screen_stack)

    await wait_until(pilot, done, what)
    await settle(app, pilot)


# -- restore_line_breaks: the pure mapping ----------------------------------------------------


def lines_of(text: str) -> list[str]:
    """What the editor holds for ``text`` (Textual's own document model)."""
    return Document(text).lines


texts = st.lists(st.one_of(st.text(alphabet="ab c", max_size=6), st.sampled_from(BREAKS)), max_size=12).map("".join)


@given(texts)
def test_untouched_text_comes_back_byte_identical(text):
    assert restore_line_breaks(text, lines_of(text)) == text


@given(texts, st.lists(st.text(alphabet="ab c", max_size=5), min_size=1, max_size=8))
@example("\x0ba", ["", ""])  # an empty last line needs a break the editor ends a line with
@example("\na\r", ["a", "", ""])  # "\r", then an empty line and "\n", would merge into "\r\n"
def test_the_saved_text_shows_exactly_the_editors_lines(original, lines):
    """Whatever the curator typed, the text saved reads back as the same lines: only the break
    characters between them come from the original."""
    assert lines_of(restore_line_breaks(original, lines)) == lines


@pytest.mark.parametrize("text", [PASSAGE, QUESTION, "", "\n", "\r\n\r\n", "a\r", "a\u2028", "\x85\x85x"])
def test_untouched_examples(text):
    assert restore_line_breaks(text, lines_of(text)) == text


def test_edited_line_keeps_the_other_lines_breaks():
    lines = lines_of(PASSAGE)
    lines[1] = "Operating profit"  # one line changed
    assert restore_line_breaks(PASSAGE, lines) == PASSAGE.replace("Operating income", "Operating profit")


def test_added_and_removed_lines_keep_the_remaining_breaks():
    original = "one\r\ntwo\rthree\u2028four"
    # a line typed after "two": the new break is the original's most common one ("\r\n", first)
    assert restore_line_breaks(original, ["one", "two", "new", "three", "four"]) == \
        "one\r\ntwo\rnew\r\nthree\u2028four"
    # "three" deleted: the breaks around the rest stay
    assert restore_line_breaks(original, ["one", "two", "four"]) in ("one\r\ntwo\rfour", "one\r\ntwo\u2028four")
    # a line appended at the end, and the last line deleted
    assert restore_line_breaks(original, ["one", "two", "three", "four", "five"]) == \
        "one\r\ntwo\rthree\u2028four\r\nfive"
    assert restore_line_breaks(original, ["one", "two", "three"]) == "one\r\ntwo\rthree"
    # a break typed inside a line: the text after it keeps the original break that followed
    assert restore_line_breaks(original, ["one", "tw", "o", "three", "four"]) == \
        "one\r\ntw\r\no\rthree\u2028four"


def test_new_text_without_breaks_in_the_original_uses_unix_newlines():
    assert restore_line_breaks("single line", ["single", "line"]) == "single\nline"


# -- the dialog in the app --------------------------------------------------------------------


async def test_saving_untouched_fields_records_no_edit_and_keeps_exact(breaks_source, tmp_path):
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.controller.verdicts.quick(0).verdict == "exact"
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen) and app.screen.is_mounted,
                         "the edit dialog open")
        await pilot.press("ctrl+s")
        await handled(app, pilot, session, 0, "the edit dialog closed")
        v = session.view(0)
        assert v.edited == frozenset()
        assert (v.question, v.answer, v.passage) == (QUESTION, "It rose\n4%.", PASSAGE)
        assert edit_entries(session) == []
        assert app.screen.controller.verdicts.quick(0).verdict == "exact"
    session.workspace.close()


async def test_a_touched_field_keeps_its_untouched_breaks(breaks_source, tmp_path):
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen) and app.screen.is_mounted,
                         "the edit dialog open")
        area = app.screen.query_one("#edit-supporting_passage", TextArea)
        area.focus()
        await wait_until(pilot, lambda: area.has_focus, "the passage field focused")
        area.move_cursor((0, 0))
        await pilot.press("delete", "N")  # "Net" -> "Net" again: Same text, typed by hand
        await pilot.press("end", "exclamation_mark")
        await pilot.press("ctrl+s")
        await handled(app, pilot, session, 1, "the edit saved")
        v = session.view(0)
        assert v.edited == frozenset({"supporting_passage"})
        assert v.passage == PASSAGE.replace("rose 4%.", "rose 4%.!", 1)
        assert v.question == QUESTION  # untouched, byte-identical
    session.workspace.close()


@pytest.mark.slow
@pytest.mark.parametrize("slow_mount", [False, True])
async def test_keys_typed_at_once_after_e_all_reach_the_editor_in_order(breaks_source, tmp_path, monkeypatch,
                                                                       slow_mount):
    if slow_mount:  # the dialog takes a while to be ready (a long passage, a busy machine)
        real_on_mount = EditScreen.on_mount

        async def late_on_mount(self):
            await asyncio.sleep(0.02)
            real_on_mount(self)

        monkeypatch.setattr(EditScreen, "on_mount", late_on_mount)
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j")
        await settle(app, pilot)
        expected = "What does Beta sell?"
        for i in range(30):
            word = f"w{i}xy"  # x and a are review keys too: none may reach the review screen
            type_at_once(app, ["e", *word, "a", "x", "ctrl+s"])
            expected = word + "ax" + expected
            await handled(app, pilot, session, i + 1, f"edit {i} saved")
            assert session.view(1).question == expected, f"edit {i}"
        assert session.view(1).status.value == "undecided"
    session.workspace.close()


async def test_keys_typed_after_tab_land_in_the_next_field(breaks_source, tmp_path):
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j")
        await settle(app, pilot)
        for i in range(10):
            type_at_once(app, ["e", "q", "tab", "a", "tab", "p", "shift+tab", "b", "ctrl+s"])
            await handled(app, pilot, session, i + 1, f"edit {i} saved")
            v = session.view(1)
            assert (v.question, v.answer, v.passage) == (
                "q" * (i + 1) + "What does Beta sell?", "ab" * (i + 1) + "Bells", "p" * (i + 1) + "Beta sells bells.")
    session.workspace.close()


async def test_editing_keys_typed_at_once_apply_to_their_own_field_before_the_save(breaks_source, tmp_path):
    """backspace and the arrows are the editor's bindings: they must act where and when they
    were typed, not on whatever has the focus when the app gets round to them."""
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j")
        await settle(app, pilot)
        for i in range(10):
            type_at_once(app, ["e", "x", "y", "backspace", "tab", "z", "left", "w", "backspace", "ctrl+s"])
            await handled(app, pilot, session, i + 1, f"edit {i} saved")
            v = session.view(1)
            assert (v.question, v.answer) == ("x" * (i + 1) + "What does Beta sell?", "z" * (i + 1) + "Bells")
    session.workspace.close()


async def test_keys_typed_right_after_ctrl_s_go_to_the_review_not_into_the_field(breaks_source, tmp_path):
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j")
        await settle(app, pilot)
        type_at_once(app, ["e", "q", "ctrl+s", "f"])  # f: flag the pair
        await handled(app, pilot, session, 2, "the edit and the decision saved")
        assert session.view(1).question == "qWhat does Beta sell?"
        assert session.view(1).status.value == "flagged"
    session.workspace.close()


@pytest.mark.parametrize("failure", [
    sqlite3.OperationalError("database or disk is full"),
    OSError(errno.ENOSPC, "No space left on device"),
    WorkspaceError("/ws: the workspace is closed"),
])
async def test_a_failed_save_keeps_the_dialog_and_the_text_and_a_retry_saves(breaks_source, tmp_path, monkeypatch,
                                                                             failure):
    session = opened(breaks_source, tmp_path / "ws")
    app = CurateApp(session)
    real_edit = session.workspace._apply_edits  # the fault comes from below the workspace boundary
    calls = []

    def failing_once(*args, **kw):
        calls.append(args)
        if len(calls) == 1:
            raise failure
        return real_edit(*args, **kw)

    monkeypatch.setattr(session.workspace, "_apply_edits", failing_once)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j")
        await settle(app, pilot)
        type_at_once(app, ["e", *"Which", "space", "ctrl+s"])
        await wait_until(pilot, lambda: calls and isinstance(app.screen, EditScreen)
                         and app.screen.query_one("#edit-status", Static).display, "the failed save said")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EditScreen)
        assert screen.query_one("#edit-question", TextArea).text == "Which What does Beta sell?"
        status = str(screen.query_one("#edit-status", Static).content)
        assert "not saved" in status.lower() and str(failure.args[-1]) in status
        assert "\n" not in status
        assert session.view(1).question == "What does Beta sell?"
        await pilot.press("ctrl+s")  # retry
        await handled(app, pilot, session, 1, "the retried save")
        assert session.view(1).question == "Which What does Beta sell?"
        assert len(edit_entries(session)) == 1
    session.workspace.close()
