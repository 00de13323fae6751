"""Untrusted text made safe for a terminal, one character for one character."""

from __future__ import annotations

import pytest

from mtcb_curate.plaintext import one_line, printable


@pytest.mark.parametrize("text", [
    "",
    "plain text",
    "\x1b[31mred\x1b[0m and \x07bell",
    "tab\there, CR\r, NUL\x00, DEL\x7f, C1 \x85\x9b",
    "lone \ud800 high and \udfff low",
    "emoji \U0001F600 and CJK \u4e2d\u6587 and nbsp\u00a0",
    "[bold red]markup[/] stays text",
    "\n\n\n",
])
def test_printable_keeps_length_and_leaves_nothing_a_terminal_acts_on(text):
    out = printable(text)
    assert len(out) == len(text)
    out.encode("utf-8")  # no lone surrogates left
    for ch in out:
        assert ch == "\n" or not (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F), repr(ch)
    flat = printable(text, keep_newlines=False)
    assert len(flat) == len(text)
    assert "\n" not in flat


def test_escape_is_made_visible():
    out = printable("\x1b[31mred\x1b[0m")
    assert out == "\u241b[31mred\u241b[0m"
    assert "\x1b" not in out


def test_other_controls_map_to_visible_stand_ins():
    assert printable("a\x00b") == "a\u2400b"
    assert printable("a\x7fb") == "a\u2421b"
    assert printable("a\tb") == "a b"
    assert printable("a\x9bb") == "a\ufffdb"
    assert printable("a\nb") == "a\nb"
    assert printable("a\nb", keep_newlines=False) == "a\u240ab"


def test_lone_surrogates_become_replacement_characters():
    assert printable("x\ud800y\udfffz") == "x\ufffdy\ufffdz"
    assert printable("\ud83d\ude00") == "\ufffd\ufffd"  # a surrogate pair in a str is two lone halves


def test_printable_leaves_ordinary_text_alone():
    text = "Revenue was $10 million \u2014 \u2019best\u2019 year, \u00a7 12 [b]x[/b]"
    assert printable(text) == text


def test_positions_are_preserved():
    text = "ab\x1bcd\ud800ef"
    out = printable(text)
    assert out[5:] == "\ufffdef"
    assert out.index("cd") == text.index("cd")


def test_one_line_short_text_is_flattened_not_cut():
    assert one_line("What  does\nAlpha\tmake?\r\n", 80) == "What does Alpha make?"
    assert one_line("", 10) == ""


def test_one_line_cuts_with_an_ellipsis():
    out = one_line("word " * 40, 20)
    assert len(out) == 20
    assert out.endswith("…")
    assert out[:-1] == ("word " * 40)[:19]
    exact = one_line("0123456789", 10)
    assert exact == "0123456789"  # fits exactly: no ellipsis
    assert one_line("0123456789A", 10) == "012345678…"


def test_one_line_is_printable():
    out = one_line("\x1b[2J clear\nscreen \ud800", 80)
    assert "\x1b" not in out and "\n" not in out
    assert out == "\u241b[2J clear screen \ufffd"
    assert one_line("abc", 0) == "…"


def test_one_line_treats_every_line_break_as_whitespace():
    assert one_line("page one\x0cpage two\r\nthree\x0bfour\u2028five", 80) == "page one page two three four five"
    assert one_line("literal \u240a and \u240d stay", 80) == "literal \u240a and \u240d stay"


def test_printable_fast_path_matches_the_full_mapping():
    """``printable`` skips clean text; where it does work it equals the character mapping."""
    from mtcb_curate.plaintext import _TABLE_KEEP_NEWLINE

    samples = [
        "[bold]x[/] [@click=app.quit]click[/] \x1b[31mred",
        "plain ascii\nlines\n",
        "tab\there\r\n nul\x00 del\x7f c1\x85 lone\ud800 ok",
        "中文\u200d\ufe0f\n\x1b\x1b\x1b",
        "",
    ]
    for sample in samples:
        full = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in sample.translate(_TABLE_KEEP_NEWLINE))
        assert printable(sample) == full
        assert len(printable(sample)) == len(sample)
