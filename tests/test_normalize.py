"""Normalization with an offset map back to the original, and the alphanumeric skeleton."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtcb_curate.dataset.loading import load
from mtcb_curate.verify import normalize as normalize_module
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


# The sites as first written (leftmost-first alternation, a look-behind first): the reference
# the faster first-character-class patterns of ``normalize`` must match exactly.
_REF_HYPHENATION = r"(?P<h>(?<=[^\W\d_])[-\u00ad\u2010\u2011][^\S\n]*\n\s*(?=[^\W\d_]))"
_REF_NOT_HYPHEN_BREAK = "(?!(?<=[^\\W\\d_])[\u00ad\u2010\u2011][^\\S\\n]*\\n\\s*[^\\W\\d_])"
_REF_GAP = {"whitespace": "\\s", "typography": "\\s\\u0080-\\U0010FFFF"}
_REF_SINGLE = {"whitespace": "[^\\S ]", "typography": "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f\\u0080-\\U0010FFFF]"}
_REF_SITES = {
    level: re.compile(f"{_REF_HYPHENATION}|(?:{_REF_NOT_HYPHEN_BREAK}[{_REF_GAP[level]}]){{2,}}|{_REF_SINGLE[level]}")
    for level in ("whitespace", "typography")
}
_REF_ASCII_SITES = re.compile("[ '\"`\\-\\u0080-\\U0010FFFF]{2,}|['\"`\\-\\u0080-\\U0010FFFF]")

# Pieces around hyphenation: every hyphen, before and after letters, spaces and line breaks.
_HYPHEN_PIECES = PIECES + ["\u2010", "\u2011", "\u00ad\n", "\u2010 \n ", "x\u2011\n\u00a0y", " \u00ad", "\u00e9-\n"]


def _sites(pattern, text):
    return [(m.span(), m.lastgroup) for m in pattern.finditer(text)]


@settings(max_examples=600)
@given(st.lists(st.sampled_from(_HYPHEN_PIECES), max_size=60).map("".join))
def test_site_patterns_match_the_reference_alternation(text):
    for level in ("whitespace", "typography"):
        assert _sites(normalize_module._SITES[level], text) == _sites(_REF_SITES[level], text)
    assert _sites(normalize_module._ASCII_SITES, text) == _sites(_REF_ASCII_SITES, text)


def test_site_patterns_match_the_reference_on_the_real_filings(shared_data):
    import json

    with open(shared_data / "corpus.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:4]
    for text in texts:
        for level in ("whitespace", "typography"):
            assert _sites(normalize_module._SITES[level], text) == _sites(_REF_SITES[level], text)
        typo = normalize_text(text, "typography")
        assert _sites(normalize_module._ASCII_SITES, typo) == _sites(_REF_ASCII_SITES, typo)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_text_normalizes_alike_at_whitespace_and_typography(text):
    assert normalize_text(text, "typography") == normalize_text(text, "whitespace")


@given(texts)
def test_the_ascii_level_is_idempotent_so_a_normalized_passage_skeleton_needs_no_second_pass(text):
    from mtcb_curate.verify.normalize import skeleton_of_normalized

    once = normalize_passage(text)
    assert normalize_passage(once) == once
    assert skeleton_of_normalized(once) == skeleton(text)


# Pieces and what a document may show instead (same at some level).
_RENDERINGS = {" ": ["\u00a0", "\n", "  "], "'": ["\u2019", ""], '"': ["\u201c", "'"], "-": ["\u2014", ""],
               "fi": ["\ufb01"], "e": ["e"], "\u00e9": ["e\u0301", "e"], "ab": ["a-\nb", "ab"], "7": ["7"]}


@settings(max_examples=300)
@given(st.lists(st.sampled_from(sorted(_RENDERINGS)), min_size=1, max_size=20), st.data())
def test_the_level_of_a_normalized_match_is_the_least_level_that_agrees(pieces, data):
    from mtcb_curate.verify.verdict import _level_of_normalized, agreement_level

    passage = "".join(pieces)
    span = "".join(data.draw(st.sampled_from([p, *_RENDERINGS[p]])) for p in pieces)
    if normalize_passage(passage) == normalize_passage(span):
        assert _level_of_normalized(passage, span) == agreement_level(passage, span)


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["a", "b", " ", "  ", "\n", "'", '"', "-", "-\n", "x-\ny", "\t", "."]),
                max_size=20).map("".join))
def test_the_level_of_ascii_texts_that_agree(passage):
    from mtcb_curate.verify.verdict import _level_of_normalized, agreement_level

    for span in (passage, passage.replace(" ", "\n"), passage.replace("'", ""), passage.replace("-", "")):
        if normalize_passage(passage) == normalize_passage(span):
            assert _level_of_normalized(passage, span) == agreement_level(passage, span)


@settings(max_examples=500)
@given(st.lists(st.sampled_from(_HYPHEN_PIECES), max_size=40).map("".join))
def test_normalize_text_is_the_text_of_normalize_at_every_level(text):
    for level in LEVELS:
        assert normalize_text(text, level) == normalize(text, level).text
    assert normalize_text(text, "ascii") == _two_passes(text).text


def _two_passes(text, start=0, end=None):
    """The ascii level the long way (what ``normalize`` does where the one pass does not apply)."""
    region = text[start:len(text) if end is None else end]
    norm = normalize_module._build(region, normalize_module._stage_edits(region, "typography"), start, "typography", None)
    return normalize_module._build(norm.text, normalize_module._stage_edits(norm.text, "ascii"), 0, "ascii", norm)


# More characters whose fold is a space, nothing, or a letter: the one pass must agree on all.
_ONE_PASS_PIECES = [p for p in PIECES if p not in ("exam-\nple", "-\n")] + [
    "\ufdfa", "\u0149", "\u2002", "\u200d", "\u2060", "\uff0c", "\u00a8", "\u02bc", "\u00ab", "\u3002",
    "\u1680", "\u2028", "x\u00a0 ", " \u2019 ", "\u00e9\u00a0", "\u2014 ", "\u00ad",
]


def _one_pass_ok(piece):
    return all(ord(c) < 128 or normalize_module._one_pass_ok(c) for c in piece)


# Texts the one pass takes (most), and texts with every piece (some need the two passes).
_one_pass_texts = st.lists(st.sampled_from([p for p in _ONE_PASS_PIECES if _one_pass_ok(p)]), max_size=40).map("".join)
_any_texts = st.lists(st.sampled_from(_ONE_PASS_PIECES), max_size=40).map("".join)


@settings(max_examples=800)
@given(st.one_of(_one_pass_texts, _any_texts), st.data())
def test_the_one_pass_ascii_level_maps_like_the_two_passes(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    slow = _two_passes(text, start, end)
    region = text[start:end]
    assert normalize_module._one_pass_applies(region) == (
        _one_pass_ok(region) and re.search("[-\u00ad\u2010\u2011][^\\S\n]*\n", region) is None)
    if not normalize_module._one_pass_applies(region):  # normalize uses the two passes
        assert normalize(text, "ascii", start, end).text == slow.text
        return
    fast = normalize_module._ascii_in_one_pass(region, start)
    assert fast.text == slow.text
    for k in range(len(slow.text)):
        assert fast.char_origin(k) == slow.char_origin(k)
    for a in range(len(slow.text) + 1):
        assert fast.to_original(a, len(slow.text)) == slow.to_original(a, len(slow.text))


@settings(max_examples=500)
@given(st.one_of(_one_pass_texts, _any_texts))
def test_normalize_text_at_the_ascii_level_is_the_two_passes_text(text):
    assert normalize_text(text, "ascii") == _two_passes(text).text


def _scanned(skeleton: bytes, needle: bytes, limit: int) -> list[int]:
    out, i = [], skeleton.find(needle)
    while i >= 0 and len(out) < limit:
        out.append(i)
        i = skeleton.find(needle, i + 1)
    return out


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab0 ", min_size=0, max_size=400), cuts=st.lists(st.tuples(
    st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=24)), max_size=20),
    limit=st.integers(min_value=1, max_value=9))
def test_find_all_through_the_window_index_is_find_all_by_scanning(text, cuts, limit):
    """Once a skeleton has indexed its windows, ``find_all`` gives the offsets a scan gives:
    every occurrence, overlapping ones too, ascending, at most ``limit``."""
    index = normalize_module.SkeletonIndex(text)
    sk = index.skeleton
    needles = [sk[a:a + n] for a, n in cuts] + [b"ab" * 7, b"0" * 12, b"z" * 12]
    index._finds = normalize_module.INDEX_AFTER  # the next long needle builds the index
    for needle in needles:
        assert index.find_all(needle, limit=limit) == ([] if not needle else _scanned(sk, needle, limit))
    if len(sk) >= normalize_module.GRAM and any(len(x) >= normalize_module.GRAM for x in needles):
        assert index._grams is not None


def test_the_window_index_holds_eight_bytes_a_window_and_a_bucket_table():
    """The skeleton's window index is one array of 64-bit keys (hash prefix and offset) grouped
    by bucket, not hashes plus a separate order: 8 bytes a window, and a table of where each
    bucket starts (about one entry per 8 windows, 2**16 + 1 at most)."""
    index = normalize_module.SkeletonIndex("Revenue was $10 million in 2022. " * 50)
    index._finds = normalize_module.INDEX_AFTER
    needle = index.skeleton[40:60]
    assert index.find_all(needle) == _scanned(index.skeleton, needle, 1000)
    windows = len(index.skeleton) - normalize_module.GRAM + 1
    keys, starts = index._grams[:2]
    assert keys.nbytes == 8 * windows and len(starts) - 1 <= max(2, windows // 4)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_the_window_index_finds_every_occurrence_in_a_large_skeleton(seed):
    """With 16-bit buckets (a skeleton of 2**19 windows and more), ``find_all`` through the
    index still gives the offsets a scan gives."""
    import random

    rnd = random.Random(seed)
    words = ["revenue", "income", "2022", "net", "operating", "cash", "flow", "segment"]
    text = " ".join(rnd.choice(words) for _ in range(110_000))
    index = normalize_module.SkeletonIndex(text)
    index._finds = normalize_module.INDEX_AFTER
    sk = index.skeleton
    for _ in range(5):
        a = rnd.randrange(0, len(sk) - 20)
        needle = sk[a:a + rnd.randint(12, 20)]
        assert index.find_all(needle, limit=10**6) == _scanned(sk, needle, 10**6)
    assert index._grams[3] == 16


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab0 ", min_size=0, max_size=400), cuts=st.lists(st.tuples(
    st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=24)), max_size=20),
    limit=st.integers(min_value=1, max_value=9), indexed=st.booleans())
def test_find_each_is_find_all_of_each_needle(text, cuts, limit, indexed):
    """``find_each`` (the needles looked up together once the index is built) gives what
    ``find_all`` gives for each needle, in order."""
    index = normalize_module.SkeletonIndex(text)
    sk = index.skeleton
    needles = [sk[a:a + n] for a, n in cuts] + [b"ab" * 7, b"0" * 12, b"z" * 12]
    if indexed:
        index._finds = normalize_module.INDEX_AFTER
        index.find_all(b"x" * normalize_module.GRAM)  # builds the index when the skeleton is long enough
    assert index.find_each(needles, limit=limit) == [_scanned(sk, x, limit) if x else [] for x in needles]


def test_a_skeleton_with_two_passages_to_place_is_indexed():
    """The fuzzy step's anchors of a second passage (32 each) build the skeleton's window index
    (one passage is placed by scanning): the index costs about as much as 60-130 scans."""
    from mtcb_curate.verify.fuzzy import MAX_ANCHORS, locate_fuzzy

    words = ("revenue income operating segment cash flow million increased decreased fiscal year quarter "
             "margin gross net total company reported compared prior period").split()
    text = " ".join(words[(k * 7 + k // 3) % len(words)] + str(k % 97) for k in range(4000))
    index = normalize_module.SkeletonIndex(text)
    for n in range(2):
        passage = text[1000 + 3000 * n:1600 + 3000 * n].replace("revenue", "revenues")
        assert locate_fuzzy(index, passage).matched
        assert (index._grams is not None) == (n == 1), n
    assert MAX_ANCHORS < normalize_module.INDEX_AFTER <= 2 * MAX_ANCHORS
