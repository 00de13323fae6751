"""Locating a supporting passage in its document: exact, closest, missing, empty."""

from __future__ import annotations

import pytest

from mtcb_curate.loading import load
from mtcb_curate.locate import CLOSEST_MIN_SCORE, locate, locate_exact
from mtcb_curate.profiles import get_profile

DOC = ("Alpha makes anvils.\nRevenue was $10 million in 2022.\n" * 3
       + "Beta sells bells.\nIts \u2019best\u2019 year was 2021.\n")

FILING = (
    "ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS\n"
    "Net sales increased 8 percent to $34.2 billion, driven by organic growth in the Safety and\n"
    "Industrial segment. Operating income margin was 19.1 percent compared with 22.9 percent in\n"
    "the prior year, reflecting litigation charges and supply chain disruptions.\n"
    "Table of Contents\n"
    "Liquidity and capital resources remained strong; free cash flow was $5.0 billion.\n"
)


def collapse(s: str) -> str:
    return " ".join(s.split())


def test_exact_with_occurrences():
    loc = locate(DOC, "Alpha makes anvils.")
    assert loc.kind == "exact" and loc.verbatim
    assert (loc.start, loc.end) == (0, len("Alpha makes anvils."))
    assert loc.score == 100.0
    assert loc.occurrences == 3
    once = locate(DOC, "Beta sells bells.")
    assert once.occurrences == 1
    assert DOC[once.start:once.end] == "Beta sells bells."
    assert locate_exact(DOC, "Beta sells  bells.") is None


def test_exact_is_case_sensitive_like_mtcb():
    loc = locate(DOC, "alpha makes anvils.")
    assert loc.kind != "exact"
    assert not loc.verbatim


@pytest.mark.parametrize("passage", ["", " ", "\n\t  \n", "\u00a0\u2003"])
def test_empty_and_whitespace_only(passage):
    for loc in (locate(DOC, passage), locate_exact(DOC, passage)):
        assert loc.kind == "empty"
        assert not loc.verbatim
        assert (loc.start, loc.end, loc.occurrences) == (0, 0, 0)


@pytest.mark.parametrize("doc, passage", [
    (DOC, "Beta sells  bells."),
    (DOC, "Revenue   was $10\nmillion in 2022."),
    (DOC, "  Alpha\tmakes\n\nanvils.\nRevenue was"),
    (FILING, "Net sales increased 8 percent to $34.2 billion, driven by organic growth in the Safety and "
             "Industrial segment."),
    (FILING, "Operating income  margin was 19.1 percent compared with 22.9 percent in the prior year,\n"
             "reflecting litigation charges and supply chain disruptions."),
    (FILING, "the prior year, reflecting litigation charges and supply chain disruptions. Table of Contents "
             "Liquidity and capital resources remained strong; free cash flow was $5.0 billion."),
    (FILING, "ITEM 7.  MANAGEMENT'S   DISCUSSION AND ANALYSIS Net sales increased 8 percent"),
], ids=["doubled-space", "final-period", "tabs-and-leading-space", "line-break-as-space", "space-as-line-break",
        "across-a-page-header", "document-start"])
def test_whitespace_altered_passage_is_closest_and_the_span_covers_it(doc, passage):
    assert passage not in doc
    loc = locate(doc, passage)
    assert loc.kind == "closest"
    assert not loc.verbatim
    assert CLOSEST_MIN_SCORE <= loc.score < 100
    assert 0 <= loc.start < loc.end <= len(doc)
    assert collapse(doc[loc.start:loc.end]) == collapse(passage)


def test_closest_span_includes_characters_the_passage_lost():
    # curly quotes in the document, straight ones in the passage
    loc = locate(DOC, "Its 'best' year was 2021.")
    assert loc.kind == "closest"
    assert DOC[loc.start:loc.end] == "Its \u2019best\u2019 year was 2021."


@pytest.mark.parametrize("passage", [
    "Quantum chromodynamics describes how gluons bind quarks inside hadrons.",
    "zzzz qqqq xxxx",
])
def test_unrelated_passage_is_missing(passage):
    loc = locate(DOC, passage)
    assert loc.kind == "missing"
    assert loc.score < CLOSEST_MIN_SCORE
    assert (loc.start, loc.end, loc.occurrences) == (0, 0, 0)


def test_empty_document_gives_missing():
    assert locate("", "anything").kind == "missing"


@pytest.mark.parametrize("doc, passage", [
    (DOC, "Beta sells \ud800 bells."),
    (DOC, "\udfff"),
    ("Alpha \ud800 makes anvils.\n", "Alpha \ud800 makes anvils."),
    ("Alpha \ud800 makes anvils.\n", "Alpha \udc00 makes anvils"),
    ("Alpha \ud800 makes anvils.\n", "Alpha makes anvils."),
    (DOC, "\x1b[31mBeta sells bells.\x1b[0m"),
    (DOC, "\x00\x07\x08 Beta\x7f sells\x85 bells."),
    ("ctrl \x00\x1b[2J text " * 50, "ctrl \x1b[2J text ctrl \x00"),
    (DOC + "\udc80" * 10, "year was 2021.\n\udc80\udc80"),
], ids=["surrogate-in-passage", "only-a-surrogate", "surrogate-exact", "different-surrogate",
        "surrogate-in-document", "ansi-escapes", "c0-c1-controls", "controls-repeated", "surrogate-run"])
def test_lone_surrogates_and_control_characters_do_not_crash(doc, passage):
    loc = locate(doc, passage)
    assert loc.kind in ("exact", "closest", "missing")
    assert 0 <= loc.start <= loc.end <= len(doc)
    if loc.kind == "exact":
        assert doc[loc.start:loc.end] == passage


def test_exact_with_a_lone_surrogate():
    doc = "Alpha \ud800 makes anvils.\n"
    loc = locate(doc, "\ud800 makes")
    assert loc.kind == "exact" and (loc.start, loc.end) == (6, 13)


def test_every_shared_passage_is_found(shared_data):
    ds = load("ficha", get_profile("ficha"), [str(shared_data)])
    kinds = []
    for pair in ds.pairs:
        text = ds.document_for(pair).text
        loc = locate(text, pair.passage)
        assert loc.kind in ("exact", "closest"), (pair.id, loc)
        assert loc.score >= 75, (pair.id, loc)
        assert 0 <= loc.start < loc.end <= len(text)
        if loc.kind == "exact":
            assert text[loc.start:loc.end] == pair.passage
        kinds.append(loc.kind)
    assert kinds.count("exact") == 5  # README: 5 of 33 are verbatim
