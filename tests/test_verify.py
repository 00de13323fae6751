"""Verbatim verification: verdicts, offsets, occurrences, chunk windows, the JSON report,
hostile passages, repairs, and the real data in ../shared/data."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_jsonl  # noqa: E402

from mtcb_curate.dataset import tokens
from mtcb_curate.verify.fuzzy import FUZZY_MIN_SCORE, locate_fuzzy
from mtcb_curate.dataset.loading import load
from mtcb_curate.dataset.model import QAPair
from mtcb_curate.verify.normalize import SkeletonIndex, normalize_passage
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.verify import (
    VERDICTS,
    CorpusIndex,
    format_summary,
    report_json,
    select_span,
    snap,
    trim_passage,
    verify_dataset,
    verify_pair,
)

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

FILING = (
    "ITEM 7. MANAGEMENT\u2019S DISCUSSION AND ANALYSIS\n"
    "Net sales increased 8 percent to $34.2\u00a0billion, driven by organic growth in the Safety and\n"
    "Industrial segment. Operating income margin was 19.1 percent compared with 22.9 percent in\n"
    "the prior year \u2014 reflecting litigation charges and supply chain disruptions.\n"
    "Table of Contents\n"
    "Liquidity and capital resources remained strong; free cash flow was $5.0\u00a0billion.\n"
    "Net sales increased 8 percent to $34.2\u00a0billion.\n"
)
OTHER = "Another filing. Liquidity and capital resources remained strong; free cash flow was high.\n"


def pair(passage: str, key: str = "AAA", chunk_index: int | None = None, pid: int = 0) -> QAPair:
    return QAPair(pid, "q?", "a", passage, key, chunk_index)


@pytest.fixture
def index() -> CorpusIndex:
    return CorpusIndex({"AAA": FILING, "BBB": OTHER})


def check_span(text: str, passage: str, r) -> None:
    """The located span's normalization equals the passage's (exact/normalized) or aligns with
    the reported score (fuzzy)."""
    assert 0 <= r.start < r.end <= len(text)
    span = text[r.start:r.end]
    if r.verdict == "exact":
        assert span == passage
    elif r.verdict == "normalized":
        # equal, or widened to whole words around a passage cut mid-word
        assert normalize_passage(passage) in normalize_passage(span)
    if r.verdict != "exact":
        assert not (r.start > 0 and text[r.start - 1].isalnum() and text[r.start].isalnum()), "starts mid-word"
        assert not (r.end < len(text) and text[r.end - 1].isalnum() and text[r.end].isalnum()), "ends mid-word"
    elif r.verdict == "fuzzy":
        assert fuzz.ratio(normalize_passage(passage), normalize_passage(span)) == pytest.approx(r.score)
        assert r.score >= FUZZY_MIN_SCORE


# -- verdict classes -------------------------------------------------------------------------

def test_exact_with_every_occurrence(index):
    p = "Net sales increased 8 percent to $34.2\u00a0billion"
    r = verify_pair(index, pair(p), count_tokens=False)
    assert r.verdict == "exact" and r.score == 100.0
    starts = [m.start() for m in re.finditer(re.escape(p), FILING)]
    assert len(starts) == 2
    assert list(r.offsets) == starts and r.occurrences_in_doc == 2
    assert (r.start, r.end) == (starts[0], starts[0] + len(p))
    assert r.elsewhere == () and r.level is None


def test_overlapping_occurrences_count():
    idx = CorpusIndex({"A": "aaaa"})
    r = verify_pair(idx, pair("aa", "A"), count_tokens=False)
    assert r.offsets == (0, 1, 2) and r.occurrences_in_doc == 3


@pytest.mark.parametrize("passage, level", [
    ("Net sales increased 8 percent to $34.2 billion, driven by organic growth in the Safety and "
     "Industrial segment.", "whitespace"),
    ("ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS Net sales", "typography"),
    ("the prior year - reflecting litigation charges", "typography"),
    ("ITEM 7. MANAGEMENTS DISCUSSION AND ANALYSIS", "ascii"),  # FinanceBench: non-ASCII stripped
    ("the prior year  reflecting litigation charges and supply chain disruptions. Table of Contents",
     "ascii"),
])
def test_normalized_with_level_and_original_span(index, passage, level):
    assert passage not in FILING
    r = verify_pair(index, pair(passage), count_tokens=False)
    assert r.verdict == "normalized" and r.level == level and r.score == 100.0
    check_span(FILING, passage, r)
    assert r.offsets == () and r.occurrences_in_doc == 0


def test_normalized_span_includes_characters_the_passage_lost(index):
    r = verify_pair(index, pair("MANAGEMENTS DISCUSSION"), count_tokens=False)
    assert FILING[r.start:r.end] == "MANAGEMENT\u2019S DISCUSSION"


def test_fuzzy_for_an_altered_word(index):
    p = ("Operating income margin was 19.1 percent compared with 22.9 percent in the previous year, "
         "reflecting litigation charges and supply chain disruptions.")
    r = verify_pair(index, pair(p), count_tokens=False)
    assert r.verdict == "fuzzy" and r.fuzzy_checked
    check_span(FILING, p, r)
    assert FILING[r.start:r.end].startswith("Operating income margin")
    assert FILING[r.start:r.end].endswith("disruptions.")


def test_hyphenated_line_break(index):
    idx = CorpusIndex({"D": "The exam-\nple shows the long-\nterm trend.\n"})
    r = verify_pair(idx, pair("The example shows the long-term trend.", "D"), count_tokens=False)
    assert r.verdict == "normalized" and r.level == "ascii"
    assert (r.start, r.end) == (0, len("The exam-\nple shows the long-\nterm trend."))


def test_case_is_not_normalized(index):
    r = verify_pair(index, pair("net sales increased 8 percent to $34.2 billion, driven by organic"),
                    count_tokens=False)
    assert r.verdict == "fuzzy"  # MTCB is case-sensitive: a near miss, not a normalized match


@pytest.mark.parametrize("passage", [
    "Quantum chromodynamics describes how gluons bind quarks inside hadrons and mesons.",
    "zzzz qqqq xxxx",
    "...",
])
def test_unrelated_is_missing(index, passage):
    r = verify_pair(index, pair(passage), count_tokens=False)
    assert r.verdict == "missing" and r.start is None and r.end is None
    assert r.score is None or r.score < FUZZY_MIN_SCORE


@pytest.mark.parametrize("passage", ["", " ", "\n\t  \n", "\u00a0\u2003"])
def test_empty_and_whitespace_only(index, passage):
    r = verify_pair(index, pair(passage), count_tokens=False)
    assert r.verdict == "empty" and r.start is None and r.score is None
    assert r.edge_whitespace == bool(passage)


def test_edge_whitespace_flag_and_lengths(index):
    p = "\nTable of Contents\n"
    r = verify_pair(index, pair(p))
    assert r.verdict == "exact" and r.edge_whitespace
    assert r.chars == len(p) and r.tokens == tokens.count_tokens(p)
    assert not verify_pair(index, pair("Table of Contents"), count_tokens=False).edge_whitespace


def test_passage_in_another_document(index):
    p = "Liquidity and capital resources remained strong; free cash flow was"
    r = verify_pair(index, pair(p), count_tokens=False)
    assert r.verdict == "exact" and r.elsewhere == (("BBB", 1),) and r.occurrences_elsewhere == 1
    assert verify_pair(index, pair(p), count_tokens=False, elsewhere=False).elsewhere == ()


def test_cross_document_scan_can_be_deferred(index):
    from mtcb_curate.verify import complete_elsewhere

    p = "Liquidity and capital resources remained strong; free cash flow was"
    quick = verify_pair(index, pair(p), elsewhere=False, count_tokens=False)
    assert quick.elsewhere == ()
    assert complete_elsewhere(index, quick) == verify_pair(index, pair(p), count_tokens=False)


def test_agreement_level():
    from mtcb_curate.verify import agreement_level

    assert agreement_level("a  b", "a\u00a0b") == "whitespace"
    assert agreement_level("it's", "it\u2019s") == "typography"
    assert agreement_level("its", "it\u2019s") == "ascii"
    assert agreement_level("its", "it is") is None


def test_unknown_document_key(index):
    p = "Liquidity and capital resources remained strong; free cash flow was"
    r = verify_pair(index, pair(p, key="ZZZ"), count_tokens=False)
    assert r.verdict == "missing" and not r.has_document
    assert r.elsewhere == (("AAA", 1), ("BBB", 1))


def test_fuzzy_can_be_deferred(index):
    from mtcb_curate.verify import complete_fuzzy

    p = "Operating income margin was 19.1 percent compared with 22.9 percent in the previous year"
    quick = verify_pair(index, pair(p), fuzzy=False, count_tokens=False)
    assert quick.verdict == "missing" and not quick.fuzzy_checked
    full = complete_fuzzy(index, quick)
    assert full.verdict == "fuzzy" and full.fuzzy_checked
    assert full == verify_pair(index, pair(p), count_tokens=False)
    assert complete_fuzzy(index, full) is full


# -- properties ------------------------------------------------------------------------------

WORDS = ["revenue", "net", "income", "the", "Company\u2019s", "\u201cGAAP\u201d", "\u2014", "$1,234",
         "million", "fiscal", "2022", "exam-\nple", "Item\u00a07", "\u2022", "caf\u00e9", "\ufb01nance",
         "(in", "millions)", "long-term", "\u00bd", "\u2122"]
SEPS = [" ", " ", " ", "\n", "\u00a0", "  ", "\n\n", "\t"]


def make_tokens(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(WORDS) + rng.choice(SEPS) for _ in range(n)]


def make_doc(rng: random.Random, n: int) -> str:
    return "".join(make_tokens(rng, n))


def degrade(p: str, how: int) -> str:
    """FinanceBench- and LLM-style renderings of a quote."""
    if how == 0:
        return " ".join(p.split())
    if how == 1:  # an extractor that expands ligatures and strips every other non-ASCII character
        return " ".join(p.replace("\u00a0", " ").replace("\ufb01", "fi").encode("ascii", "ignore").decode().split())
    if how == 2:
        return (p.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
                .replace("\u2014", "-").replace("\u00a0", " "))
    return p


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 3), st.data())
def test_normalized_offsets_map_back_to_text_normalizing_to_the_passage(seed, how, data):
    rng = random.Random(seed)
    toks = make_tokens(rng, 400)
    text = "".join(toks)
    i = data.draw(st.integers(0, len(toks) - 1))  # a quote starts and ends at word boundaries
    j = data.draw(st.integers(i + 1, min(len(toks), i + 40)))
    # (the quote starts at character len("".join(toks[:i])) of the text)
    src = "".join(toks[i:j])
    p = degrade(src, how)
    if not normalize_passage(p) or not re.search(r"[A-Za-z0-9]", p):
        return
    if how in (0, 1) and "-\n" in src:
        return  # collapsing whitespace turned "exam-\nple" into "exam- ple": a different text
    r = verify_pair(CorpusIndex({"D": text}), pair(p, "D"), count_tokens=False, fuzzy=False)
    assert r.verdict in ("exact", "normalized"), (p, r)
    check_span(text, p, r)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.data())
def test_fuzzy_offsets_map_back_to_a_span_aligning_with_the_passage(seed, data):
    # (check_span also holds the span to word boundaries: the quote here is cut mid-word)
    rng = random.Random(seed)
    text = make_doc(rng, 600)
    s = data.draw(st.integers(0, len(text) - 400))
    p = text[s:s + data.draw(st.integers(150, 400))]
    words = p.split(" ")
    i = data.draw(st.integers(1, max(1, len(words) - 2)))
    words[i] = "zyzzyva"  # one word altered by an LLM
    q = " ".join(words)
    # One altered word stays above the fuzzy threshold only in a passage with enough letters and
    # digits: passages of mostly symbols ("• ½ • ½ ...") normalize to a few words, where one
    # word is a quarter of the text (found by this test: 74.8 < 75 on 106 characters).
    assume(len(re.sub(r"[^A-Za-z0-9]", "", q)) >= 100)
    r = verify_pair(CorpusIndex({"D": text}), pair(q, "D"), count_tokens=False)
    assert r.verdict in ("normalized", "fuzzy"), (q, r)
    check_span(text, q, r)
    # the span covers the place the quote was taken from
    assert r.start < s + len(p) and r.end > s


# -- hostile passages ------------------------------------------------------------------------

@pytest.mark.parametrize("passage", [
    "Beta sells \ud800 bells.",
    "\udfff",
    "\x1b[31mNet sales increased\x1b[0m",
    "\x00\x07\x08 Net\x7f sales\x85 increased",
    "[bold]Net sales[/] increased 8 percent",
    "Net sales increased 8 percent to $34.2\u00a0billion" * 3000,  # 140 KB, longer than the document
])
def test_hostile_passages_do_not_crash(index, passage):
    r = verify_pair(index, pair(passage))
    assert r.verdict in VERDICTS
    assert r.chars == len(passage)
    if r.start is not None:
        check_span(FILING, passage, r)


def test_surrogates_and_controls_in_the_document():
    text = "head \ud800 Net\x00 sales \x1b[2J increased\u00a0quickly.\n" * 20
    idx = CorpusIndex({"D": text})
    assert verify_pair(idx, pair("\ud800 Net\x00 sales", "D"), count_tokens=False).verdict == "exact"
    p = "Net\x00 sales \x1b[2J increased quickly."  # control characters are data, NBSP is not
    r = verify_pair(idx, pair(p, "D"), count_tokens=False)
    assert r.verdict == "normalized" and r.level == "whitespace"
    check_span(text, p, r)
    r = verify_pair(idx, pair("Net sales increased quickly.", "D"), count_tokens=False)
    assert r.verdict == "fuzzy"
    check_span(text, "Net sales increased quickly.", r)


def test_100kb_passages():
    rng = random.Random(7)
    toks = [t for t in make_tokens(rng, 30000) if "-\n" not in t]
    text = "".join(toks)
    s = len("".join(toks[:100]))
    p = "".join(toks[100:])[:100_000]
    p = p[:p.rindex(" ")]
    idx = CorpusIndex({"D": text, "E": "other"})
    r = verify_pair(idx, pair(p, "D"), count_tokens=False)
    assert r.verdict == "exact" and r.start == s
    q = degrade(p, 1)
    r = verify_pair(idx, pair(q, "D"), count_tokens=False)
    assert r.verdict == "normalized"
    check_span(text, q, r)
    report = verify_dataset_for({"D": text, "E": "other"}, [p, q, "x" * 100_000, "\ud800" * 40, "\x00" * 40])
    assert [r.verdict for r in report.results] == ["exact", "normalized", "missing", "missing", "missing"]
    assert all(isinstance(r.tokens, int) for r in report.results)


# -- chunk windows ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_doc():
    text = "".join(f"Paragraph {i} reports revenue of ${i},000 in fiscal year {i % 30}.\n" for i in range(2200))
    return text, tokens.windows(text)


def test_in_chunk_on_a_multi_window_document(long_doc):
    text, ws = long_doc
    assert len(ws) >= 3
    idx = CorpusIndex({"D": text})
    first = "Paragraph 3 reports revenue of $3,000 in fiscal year 3."
    assert text.index(first) + len(first) <= ws[1].start  # only in window 0
    r = verify_pair(idx, pair(first, "D", chunk_index=0), count_tokens=False)
    assert r.verdict == "exact" and r.in_chunk is True
    assert verify_pair(idx, pair(first, "D", chunk_index=1), count_tokens=False).in_chunk is False
    assert verify_pair(idx, pair(first, "D", chunk_index=99), count_tokens=False).in_chunk is False
    assert verify_pair(idx, pair(first, "D"), count_tokens=False).in_chunk is None
    # a passage inside the 512-token overlap of windows 0 and 1 is in both
    mid = (ws[1].start + ws[0].end) // 2
    a = text.index("Paragraph", mid - 200)
    b = text.index("\n", a)
    p = text[a:b]
    assert ws[1].start <= a and b <= ws[0].end
    assert verify_pair(idx, pair(p, "D", chunk_index=0), count_tokens=False).in_chunk is True
    assert verify_pair(idx, pair(p, "D", chunk_index=1), count_tokens=False).in_chunk is True
    assert verify_pair(idx, pair(p, "D", chunk_index=2), count_tokens=False).in_chunk is False
    # a normalized passage is judged by its located span
    last = text[ws[-1].start + 10:].split("\n")[1]
    r = verify_pair(idx, pair(last.replace(" ", "\u00a0 "), "D", chunk_index=len(ws) - 1), count_tokens=False)
    assert r.verdict == "normalized" and r.in_chunk is True


# -- the dataset level -----------------------------------------------------------------------

def verify_dataset_for(docs: dict[str, str], passages: list[str], keys: list[str] | None = None, **kw):
    from mtcb_curate.dataset.model import Dataset, Document, SourceInfo

    keys = keys or [next(iter(docs))] * len(passages)
    ds = Dataset("t", get_profile("ficha"),
                 {k: Document(k, t, i) for i, (k, t) in enumerate(docs.items())},
                 [pair(p, k, pid=i) for i, (p, k) in enumerate(zip(passages, keys))],
                 SourceInfo("files", "mem"))
    return verify_dataset(ds, **kw)


def test_dataset_batch_agrees_with_single_pair_verification():
    rng = random.Random(3)
    docs = {f"D{i}": make_doc(rng, 3000) for i in range(4)}
    docs["D4"] = docs["D0"][5000:9000]  # a document that repeats another's text
    passages, keys = [], []
    for i in range(120):
        k = f"D{rng.randrange(5)}"
        t = docs[k]
        s = rng.randrange(len(t) - 200)
        p = t[s:s + rng.choice([5, 20, 40, 120, 200])]
        passages.append(degrade(p, rng.choice([0, 3, 3, 1])))
        keys.append(k)
    report = verify_dataset_for(docs, passages, keys, count_tokens=False)
    idx = CorpusIndex(docs)
    ds_pairs = [pair(p, k, pid=i) for i, (p, k) in enumerate(zip(passages, keys))]
    for r, pr in zip(report.results, ds_pairs):
        single = verify_pair(idx, pr, count_tokens=False)
        assert r == single, (r, single)
    assert report.summary["occurring_elsewhere"] > 0
    assert sum(report.summary[v] for v in VERDICTS) == report.summary["pairs"] == 120


def test_edited_passages_and_progress(tiny):
    ds = load("ficha", get_profile("ficha"), [str(tiny)])
    seen = []
    report = verify_dataset(ds, {2: "Beta sells bells."}, progress=lambda d, t: seen.append((d, t)))
    assert [r.verdict for r in report.results] == ["exact", "exact", "exact"]
    assert report.results[2].passage == "Beta sells bells."
    assert seen[-1] == (3, 3)
    report = verify_dataset(ds)
    assert [r.verdict for r in report.results] == ["exact", "exact", "normalized"]
    assert report.results[2].level == "whitespace"
    assert not report.all_exact


def test_report_json_shape(tiny):
    ds = load("ficha", get_profile("ficha"), [str(tiny)])
    report = verify_dataset(ds, {1: "nothing like it at all, really nothing", 0: "  "})
    data = json.loads(json.dumps(report_json(report)))
    assert set(data) == {"summary", "pairs"}
    keys = ["id", "verdict", "score", "doc_key", "start", "end", "occurrences_in_doc",
            "occurrences_elsewhere", "chars", "tokens", "in_chunk"]
    assert all(list(row) == keys for row in data["pairs"])
    rows = data["pairs"]
    assert [r["verdict"] for r in rows] == ["empty", "missing", "normalized"]
    assert rows[1]["start"] is None and rows[1]["end"] is None
    text = ds.documents["BBB"].text
    assert normalize_passage(text[rows[2]["start"]:rows[2]["end"]]) == "Beta sells bells."
    assert rows[2]["in_chunk"] is None  # chunk_index is null for that pair
    assert data["summary"]["pairs"] == 3 and data["summary"]["empty"] == 1
    assert all(isinstance(r["tokens"], int) for r in rows)
    table = format_summary(report)
    for v in VERDICTS:
        assert re.search(rf"^{v}\s+\d+\s+[\d.]+(  #\d+(, #\d+)*)?$", table, re.M)  # ids after
    assert re.search(r"^total\s+3\s+100\.0$", table, re.M)


# -- repairs ---------------------------------------------------------------------------------

def test_repairs(index):
    r = verify_pair(index, pair("MANAGEMENTS DISCUSSION"), count_tokens=False)
    fixed = snap(FILING, r)
    assert fixed == "MANAGEMENT\u2019S DISCUSSION"
    assert verify_pair(index, pair(fixed), count_tokens=False).verdict == "exact"
    assert snap(FILING, verify_pair(index, pair("zzzz qqqq xxxx"), count_tokens=False)) is None
    assert trim_passage("  \u201cNet sales increased.\u201d \n") == "Net sales increased"
    assert trim_passage("(in millions)") == "(in millions)"
    assert trim_passage("- (in millions), ") == "(in millions)"
    assert trim_passage(" ... ") == ""
    assert select_span(FILING, 0, 6) == "ITEM 7"
    with pytest.raises(ValueError):
        select_span(FILING, 5, 5)


# -- real data -------------------------------------------------------------------------------

def _page_of(text: str, offset: int) -> int:
    """0-based PDF page of a character offset: PyMuPDF page texts end with a newline and were
    joined with another, so each page break is a blank line."""
    return len(re.findall(r"\n(?=\n)", text[:offset]))


def test_shared_financebench_passages_are_located_on_their_evidence_page(shared_data):
    ds = load("ficha", get_profile("ficha"), [str(shared_data)])
    prov = [json.loads(line) for line in (shared_data / "provenance" / "financebench_questions.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    pages = {row["ticker"]: row["pages"] for row in map(json.loads, (
        shared_data / "provenance" / "financebench_corpus.jsonl").read_text(encoding="utf-8").splitlines())}
    report = verify_dataset(ds, count_tokens=False)
    assert report.summary["exact"] == 5  # README: 5 of 33 verbatim
    for r, pv in zip(report.results, prov):
        text = ds.documents[r.doc_key].text
        assert r.verdict in ("exact", "normalized"), (r.id, r.verdict)
        check_span(text, r.passage, r)
        page = _page_of(text, r.start)
        breaks = _page_of(text, len(text))
        first = pv["evidence_page_num"][0]
        if breaks == pages[r.doc_key] - 1:  # every blank line is a page break
            assert page == first, (r.id, page, first)
        else:  # blank lines inside pages too (PepsiCo): the count can only run ahead
            assert first <= page <= first + breaks - (pages[r.doc_key] - 1), (r.id, page, first)


def test_shared_squad_passages_are_all_exact(shared_data):
    ds = load("squad", get_profile("gacha"), [str(shared_data / "squad-mtcb")])
    report = verify_dataset(ds, count_tokens=False)
    assert report.summary["exact"] == report.summary["pairs"] == 1299
    for r in report.results[::50]:
        assert ds.documents[r.doc_key].text[r.start:r.end] == r.passage


def test_shared_squad_respaced_passages_are_located(shared_data):
    """Heavily re-spaced quotes (spaces dropped, added inside words, turned into newlines)."""
    ds = load("squad", get_profile("gacha"), [str(shared_data / "squad-mtcb")])
    rng = random.Random(11)
    skel = {k: SkeletonIndex(d.text) for k, d in ds.documents.items()}
    pairs = [p for p in ds.pairs if len(p.passage) >= 80]
    rng.shuffle(pairs)
    for p in pairs[:200]:
        out = []
        for ch in p.passage:
            x = rng.random()
            if ch == " " and x < 0.3:
                continue
            out.append(ch)
            if ch != " " and x > 0.95:
                out.append(" ")
            if ch == " " and x > 0.85:
                out.append("\n  ")
        q = "".join(out)
        text = ds.documents[p.doc_key].text
        m = locate_fuzzy(skel[p.doc_key], q)
        s = text.find(p.passage)
        assert m.matched, (p.id, q)
        overlap = min(m.end, s + len(p.passage)) - max(m.start, s)
        assert overlap >= 0.95 * len(p.passage), (p.id, q, text[m.start:m.end])


def test_sample_verdicts_and_spans(sample_dir):
    ds = load("ficha", get_profile("ficha"), [str(sample_dir)])
    report = verify_dataset(ds, count_tokens=False)
    assert report.summary["exact"] == 4 and report.summary["normalized"] == 19  # README: 4 verbatim
    idx = CorpusIndex.from_dataset(ds)
    prov = [json.loads(line) for line in (sample_dir / "provenance.jsonl").read_text(encoding="utf-8").splitlines()]
    for r, pv in zip(report.results, prov):
        text = ds.documents[r.doc_key].text
        check_span(text, r.passage, r)
        assert _page_of(text, r.start) >= pv["evidence_page_num"][0]
    for pid in (13, 18):  # the fuzzy search alone finds the same span
        r = report.results[pid]
        m = locate_fuzzy(idx.skeleton(r.doc_key), r.passage)
        assert (m.start, m.end) == (r.start, r.end) and m.score == 100.0


def test_synthetic_kinds_get_their_verdicts(tmp_path):
    """benchmarks/make_synthetic.py labels each passage: exact, whitespace-altered, non-ASCII
    dropped, one word changed, foreign."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from make_synthetic import generate_corpus, generate_questions
    finally:
        sys.path.remove(str(BENCHMARKS))
    corpus = generate_corpus(3, 40_000, 5)
    questions, kinds = generate_questions(corpus, 200, 5)
    write_jsonl(tmp_path / "corpus.jsonl", corpus)
    write_jsonl(tmp_path / "questions.jsonl", questions)
    ds = load("ficha", get_profile("ficha"), [str(tmp_path)])
    report = verify_dataset(ds, count_tokens=False)
    expect = {"E": {"exact"}, "W": {"normalized"}, "A": {"normalized"}, "C": {"fuzzy"}, "F": {"missing"}}
    wrong = [(r.id, k, r.verdict) for r, k in zip(report.results, kinds) if r.verdict not in expect[k]]
    assert wrong == []
    assert set(kinds) >= {"E", "W", "F"}


def test_the_synthetic_generator_never_writes_into_a_real_datasets_folder(tmp_path):
    """``make_dataset`` into a folder that holds other files (a benchmark's ``--data`` pointed at
    a real dataset it did not recognise) refuses and leaves the folder as it was."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from make_synthetic import make_dataset
    finally:
        sys.path.remove(str(BENCHMARKS))
    real = tmp_path / "real"
    real.mkdir()
    (real / "README.md").write_text("# real data\n", encoding="utf-8")
    write_jsonl(real / "questions.jsonl", [{"question": "q?"}])
    before = {p.name: p.read_bytes() for p in real.iterdir()}
    with pytest.raises(SystemExit, match="not writing into it"):
        make_dataset(real, docs=2, pairs=3, mean_chars=2_000)
    assert {p.name: p.read_bytes() for p in real.iterdir()} == before
    made = make_dataset(tmp_path / "new", docs=2, pairs=3, mean_chars=2_000)
    assert (made / "synthetic.json").is_file()
    make_dataset(made, docs=2, pairs=4, mean_chars=2_000)  # a synthetic set is made again in place


# -- the split package -----------------------------------------------------------------------


def test_verdict_enum_is_the_plain_string_in_reports_and_json():
    import json

    from mtcb_curate import verify
    from mtcb_curate.verify import Verdict
    from mtcb_curate.verify.repair import snap as snap_repair
    from mtcb_curate.verify.search import CorpusIndex as SearchIndex

    assert verify.CorpusIndex is SearchIndex and verify.snap is snap_repair
    assert [v.value for v in Verdict] == list(VERDICTS) == ["exact", "normalized", "fuzzy", "missing", "empty"]
    report = verify_dataset_for({"D": "Revenue grew 5% in 2023."}, ["Revenue grew", "", "zzz qqq"])
    assert [r.verdict for r in report.results] == [Verdict.EXACT, Verdict.EMPTY, Verdict.MISSING]
    assert all(isinstance(r.verdict, Verdict) for r in report.results)
    data = json.loads(json.dumps(report_json(report)))
    assert [row["verdict"] for row in data["pairs"]] == ["exact", "empty", "missing"]
    assert all(type(k) is str for k in report.summary)
    assert "exact  " in format_summary(report) and "Verdict." not in format_summary(report)


def test_elsewhere_same_in_bytes_as_in_text():
    from mtcb_curate.verify.search import CorpusIndex

    docs = {"A": "Net revenue “rose” — 5% — “rose” again; “rose”", "B": "“rose” — 5% — “rose” — 5% — “rose”",
            "C": "plain ascii rose rose", "D": "nothing here"}
    for needle in ("“rose”", "— 5% —", "rose", "5%", "é"):
        plain = CorpusIndex(docs).elsewhere(needle, "D")
        built = CorpusIndex(docs)
        for key in ("A", "B"):
            built.skeleton(key)  # A and B are then searched in their UTF-8 bytes
        assert built.elsewhere(needle, "D") == plain
    assert CorpusIndex(docs).elsewhere("“rose”", "D") == (("A", 3), ("B", 3))


@pytest.mark.parametrize("passage", ["n one of the most comfortable rooms", "n one of the most comfortabel rooms",
                                     "in one of the most comfortable rooms of the hou"])
def test_normalized_and_fuzzy_locations_never_cut_a_word(passage):
    doc = ("It was, he said, in one of the most comfortable  rooms of the house that the\u00a0guests "
           "gathered after dinner, and the talk went on late.")
    r = verify_pair(CorpusIndex({"D": doc}), pair(passage, "D"), count_tokens=False)
    assert r.verdict in ("normalized", "fuzzy")
    got = doc[r.start:r.end]
    assert got.startswith("in one of") and (got.endswith("rooms") or got.endswith("house")), got
    check_span(doc, passage, r)


def test_the_batch_search_of_many_passages_holds_few_temporaries():
    """``exact_occurrences_batch`` gathers the passages' windows through a view and lets each
    working table go once read: its peak (tracemalloc, numpy's arrays included) stays under 12
    bytes a passage byte for 20,000 passages (16.5 when the windows were gathered by an index
    array of 8 bytes a byte and every table was held to the end)."""
    import random
    import tracemalloc

    from mtcb_curate.verify.search import CorpusIndex

    rnd = random.Random(0)
    words = "revenue income net operating cash flow segment 2022 million the of and in".split()
    docs = {f"D{k}": " ".join(rnd.choice(words) for _ in range(20000)) for k in range(4)}
    index = CorpusIndex(docs)
    passages = {}
    for i in range(20000):
        d = docs[f"D{i % 4}"]
        a = rnd.randrange(0, len(d) - 300)
        passages[i] = d[a:a + 200]
    tracemalloc.start()
    try:
        out = index.exact_occurrences_batch(passages)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(docs[f"D{i % 4}"].encode().find(p.encode()) in out[i][f"D{i % 4}"] for i, p in passages.items())
    assert peak < 12 * sum(len(p) for p in passages.values())
