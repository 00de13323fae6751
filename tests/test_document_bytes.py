"""Documents are kept as UTF-8 bytes and decoded on demand: every text comes back unchanged."""

from __future__ import annotations

import pytest

from mtcb_curate.dataset.model import Document, QAPair, document_text, encode_text
from mtcb_curate.verify import verify_dataset, verify_pair
from mtcb_curate.verify.normalize import SkeletonIndex
from mtcb_curate.verify.search import CorpusIndex

TEXTS = [
    "",
    "plain ASCII text.\n",
    "Latin-1: café, naïve, 100 °C",
    "curly “quotes” and — dashes, ﬁnance",
    "astral 😀 and CJK 漢字",
    "lone surrogates \ud800 and \udfff kept, and a pair written as two: \ud83d\ude00",
    "\x00 control \x1b[31m not markup [bold]x[/bold]",
]


@pytest.mark.parametrize("text", TEXTS)
def test_document_text_round_trips_exactly(text):
    doc = Document("K", text, 3, {"company": "X"})
    assert doc.text == text
    assert type(doc.text) is str
    assert doc.data == encode_text(text)
    assert document_text(doc.data) == text
    assert doc == Document("K", text, 3, {"company": "X"})
    assert doc != Document("K", text + " ", 3, {"company": "X"})


@pytest.mark.parametrize("text", TEXTS)
def test_index_over_bytes_gives_the_same_texts_lengths_and_skeletons(text):
    index = CorpusIndex({"K": encode_text(text)})
    assert index.text("K") == text and index.documents["K"] == text
    assert index.chars("K") == len(text)
    assert index.has("K") and not index.has("other") and index.chars("other") is None
    built, from_text = index.skeleton("K"), SkeletonIndex(text)
    assert built.text == text
    assert built.skeleton == from_text.skeleton
    assert built.region(0, len(built.skeleton)) == from_text.region(0, len(from_text.skeleton))


def test_skeletons_beyond_the_kept_number_are_rebuilt_the_same(monkeypatch):
    from mtcb_curate.verify import search

    monkeypatch.setattr(search, "SKELETONS_KEPT", 2)
    docs = {f"D{i}": f"Document {i}: “revenue” rose {i}0 % in fiscal 20{i:02d}." for i in range(5)}
    index = CorpusIndex(docs)
    first = [index.skeleton(k).skeleton for k in docs]
    assert len(index._skel) == 2
    assert [index.skeleton(k).skeleton for k in docs] == first


def test_verify_dataset_results_stay_in_pair_order_and_match_verify_pair(tmp_path):
    from mtcb_curate.dataset.loading import build_dataset  # noqa: F401 - the real Dataset type
    from mtcb_curate.dataset.model import Dataset, SourceInfo
    from mtcb_curate.dataset.profiles import get_profile

    docs = {"B": "Beta sold “widgets” for 10 years. Beta grew.", "A": "Alpha made anvils in 2020. Alpha grew."}
    passages = [("A", "Alpha grew."), ("B", "Beta sold \"widgets\" for 10 years."), ("A", "nowhere at all"),
                ("B", "Beta grew."), ("A", "Alpha made anvils in 2020. Alpha grew."), ("C", "no document")]
    pairs = [QAPair(i, f"q{i}", f"a{i}", p, k) for i, (k, p) in enumerate(passages)]
    ds = Dataset("t", get_profile("ficha"), {k: Document(k, t, i) for i, (k, t) in enumerate(docs.items())},
                 pairs, SourceInfo("files", "x"))
    report = verify_dataset(ds, fuzzy=False, count_tokens=False)
    assert [r.id for r in report.results] == list(range(len(pairs)))
    index = CorpusIndex.from_dataset(ds)
    for p, r in zip(pairs, report.results):
        one = verify_pair(index, p, fuzzy=False, count_tokens=False)
        assert (r.verdict, r.start, r.end, r.elsewhere) == (one.verdict, one.start, one.end, one.elsewhere)
    assert [str(r.verdict) for r in report.results] == ["exact", "normalized", "missing", "exact", "exact", "missing"]
