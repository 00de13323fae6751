"""Normalization with an offset map back to the original, and the alphanumeric skeleton."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtcb_curate.dataset.loading import load
from mtcb_curate.verify.normalize import (
    BLOCK_BYTES,
    LEVELS,
    SkeletonIndex,
    encode,
    fold_char,
    normalize,
    normalize_passage,
    normalize_text,
    skeleton,
)
from mtcb_curate.dataset.profiles import get_profile

# Pieces that exercise every rule: NBSP and other whitespace, curly quotes, dashes, hyphenation
# at a line break, a ligature, a symbol, accents (composed and combining), format characters,
# a lone surrogate, control characters.
PIECES = [
    "a", "b", "E", "7", "word", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2009", "\u3000",
    "'", '"', "`", "-", "\u2019", "\u201c", "\u201d", "\u2014", "\u2013", "\u2212", "exam-\nple",
    "-\n", "\u00ad", "\u200b", "\ufeff", "\ufb01", "\u2122", "\u00bd", "\u00e9", "e\u0301",
    "\u00ba", "\uff21", "\ud800", "\x00", "\x1b", "\x7f", "\x85", "\u01c6", "(", ".", ",",
]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def test_levels_on_a_filing_line():
    t = "The company\u2019s  \u201cGAAP\u201d\u00a0results \u2014 exam-\nple"
    assert normalize_text(t, "whitespace") == "The company\u2019s \u201cGAAP\u201d results \u2014 example"
    assert normalize_text(t, "typography") == "The company's \"GAAP\" results - example"
    assert normalize_text(t, "ascii") == "The companys GAAP results example"


@pytest.mark.parametrize("char, ascii_, typo", [
    ("\u00a0", " ", " "),          # NBSP is whitespace
    ("\u2019", "", "'"),           # curly apostrophe
    ("\u201c", "", '"'),
    ("\u2014", "", "-"),           # em dash
    ("\u2212", "", "-"),           # minus sign
    ("\ufb01", "fi", "fi"),        # ligature: NFKC
    ("\uff21", "A", "A"),          # full-width letter: NFKC
    ("\u2122", "", "\u2122"),      # a symbol is not expanded to "TM" (extractors drop it)
    ("\u00e9", "", "\u00e9"),      # other non-ASCII: kept, then dropped at the ascii level
    ("\u200b", "", ""),            # format characters vanish
    ("\ud800", "", "\ud800"),      # a lone surrogate is data
    ("'", "", "'"),                # ASCII quotes and hyphens are dropped at the ascii level
    ("-", "", "-"),
])
def test_fold_char(char, ascii_, typo):
    assert fold_char(char, "ascii") == ascii_
    assert fold_char(char, "typography") == typo
    assert fold_char(char, "whitespace") == (" " if char.isspace() else char)


def test_unknown_level_is_refused():
    with pytest.raises(ValueError):
        normalize("x", "lowercase")
    with pytest.raises(ValueError):
        normalize_text("x", "nfc")
    with pytest.raises(ValueError):
        normalize("abc", "ascii", 2, 1)


def test_hyphenation_only_between_letters():
    assert normalize_text("exam-\nple") == "example"
    assert normalize_text("exam-\n   ple", "whitespace") == "example"
    assert normalize_text("long-term", "whitespace") == "long-term"
    assert normalize_text("2021-\n2022", "whitespace") == "2021- 2022"  # digits: not a hyphenation
    assert normalize_text("\u00e9-\nb", "ascii") == "b"  # a dropped letter still hyphenates


def test_finance_bench_style_passage_matches_filing_text():
    filing = "the Company\u2019s\u00a0net revenues \u2014 in 2022 \u2014 were\n$10.1\u00a0billion"
    evidence = "the Companys net revenues  in 2022  were $10.1 billion"  # non-ASCII stripped
    llm = "the Company's net revenues - in 2022 - were $10.1 billion"  # retyped
    assert normalize_passage(evidence) == normalize_passage(filing) == normalize_passage(llm)


def test_span_maps_back_minimally():
    t = "Non-GAAP measures (\u201cGAAP\u201d) follow.\u00a0\u00a0Next"
    n = normalize(t)
    k = n.text.index("GAAP)")
    s, e = n.to_original(k, k + 4)
    assert t[s:e] == "GAAP"  # the curly quotes around it are not taken
    k = n.text.index("follow. Next")
    s, e = n.to_original(k, k + len("follow. Next"))
    assert t[s:e] == "follow.\u00a0\u00a0Next"


def test_empty_span_and_region_offsets():
    t = "xx\u00a0\u00a0abc def"
    n = normalize(t, "ascii", 2, len(t))
    assert n.text == " abc def"
    assert n.to_original(1, 4) == (4, 7)
    assert n.to_original(len(n.text), len(n.text)) == (len(t), len(t))
    assert n.to_original(1, 1) == (4, 4)
    with pytest.raises(IndexError):
        n.to_original(3, 2)
    with pytest.raises(IndexError):
        n.char_origin(len(n.text))


def _clean_cuts(n, a, b):
    """True when [a, b) starts and ends on non-spaces and does not cut a multi-character
    replacement."""
    if n.text[a] == " " or n.text[b - 1] == " ":
        return False
    s0, e0, c0 = n.char_origin(a)
    s1, e1, c1 = n.char_origin(b - 1)
    if c0 and a > 0 and n.char_origin(a - 1)[:2] == (s0, e0):
        return False
    if c1 and b < len(n.text) and n.char_origin(b)[:2] == (s1, e1):
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(LEVELS), st.data())
def test_normalized_span_maps_to_source_that_normalizes_to_it(text, level, data):
    n = normalize(text, level)
    assert n.text == normalize_text(text, level)
    if not n.text:
        return
    a = data.draw(st.integers(0, len(n.text) - 1))
    b = data.draw(st.integers(a + 1, len(n.text)))
    if not _clean_cuts(n, a, b):
        return
    s, e = n.to_original(a, b)
    assert 0 <= s < e <= len(text)
    assert normalize_text(text[s:e], level) == n.text[a:b]


@settings(max_examples=200, deadline=None)
@given(texts)
def test_levels_are_nested(text):
    # what agrees at a lower level agrees at every higher one: ascii is a function of
    # typography, and typography of whitespace
    w, t, a = (normalize_text(text, lv) for lv in LEVELS)
    assert normalize_text(w, "typography") == t
    assert normalize_text(t, "ascii") == a
    assert a.isascii()


@settings(max_examples=200, deadline=None)
@given(texts, st.integers(0, 3))
def test_skeleton_index_matches_skeleton(text, repeat):
    text = text * (1 + repeat * 40)  # long enough to span several blocks
    idx = SkeletonIndex(text)
    assert idx.skeleton == skeleton(text)
    assert idx.data == encode(text)


@settings(max_examples=150, deadline=None)
@given(texts, st.data())
def test_skeleton_region_contains_every_matching_span(text, data):
    text = ("prefix word " + text + " suffix") * 30
    idx = SkeletonIndex(text)
    s = data.draw(st.integers(0, len(text) - 1))
    e = data.draw(st.integers(s + 1, len(text)))
    sk = skeleton(text[s:e])
    if not sk:
        return
    # the skeleton offset of this span: its alphanumerics follow those before it
    x = len(skeleton(text[:s]))
    if skeleton(text[:s] + text[s:e]) != skeleton(text[:s]) + sk:
        return  # the span cuts a multi-letter replacement or a hyphenation
    a, b = idx.region(x, x + len(sk))
    assert a <= s and e <= b


def test_char_offset_of_bytes():
    text = ("\u00e9\u2019x\ud800 " * 700) + "needle"
    idx = SkeletonIndex(text)
    b = idx.data.find(b"needle")
    assert idx.char_offset(b) == text.index("needle")
    assert len(idx.data) > 2 * BLOCK_BYTES


def test_empty_text():
    idx = SkeletonIndex("")
    assert idx.skeleton == b"" and idx.region(0, 0) == (0, 0)
    assert normalize("").text == "" and normalize_passage("  \u00a0 ") == ""


def test_sample_passages_normalize_into_their_filings(sample_dir):
    ds = load("ficha", get_profile("ficha"), [str(sample_dir)])
    found = 0
    for pair in ds.pairs:
        if normalize_passage(pair.passage) in normalize_text(ds.document_for(pair).text):
            found += 1
    assert found == len(ds.pairs) == 23
