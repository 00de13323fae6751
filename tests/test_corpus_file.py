"""The corpus kept in a file, not in memory: every loaded document's bytes come back unchanged,
whatever the format, and loading holds neither the corpus nor a Python copy of it."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mtcb_curate.dataset import loading
from mtcb_curate.dataset.model import (
    CorpusFile,
    DocumentBytes,
    corpus_fingerprint,
    document_text,
    encode_text,
)
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.verify.search import CorpusIndex

PIECES = [
    "plain ASCII text.\n",
    "Latin-1: café, naïve, 100 °C",
    "curly “quotes” and — dashes, ﬁnance",
    "astral 😀 and CJK 漢字",
    "\x00 control \x1b[31m not markup [bold]x[/bold]",
    "\r\n Windows line ends\r\n and a form feed \x0c and U+2028 \u2028 inside",
]


def _texts(n: int, size: int) -> dict[str, str]:
    """``n`` documents of about ``size`` characters each, every piece above in each."""
    out = {}
    for i in range(n):
        body = " ".join(PIECES) + f" document {i}. "
        out[f"D{i:03d}"] = (body * (size // len(body) + 1))[:size] + f" end of {i}"
    return out


def _questions(keys) -> dict[str, list]:
    keys = list(keys)
    return {"ticker": keys, "question": [f"q {k}?" for k in keys], "answer": ["a"] * len(keys),
            "supporting_passage": ["plain ASCII text."] * len(keys), "chunk_index": [None] * len(keys)}


def _write(folder, texts: dict[str, str], fmt: str, files: int = 1) -> list[str]:
    """The corpus and questions of ``texts`` as ``fmt`` files in ``folder``: [corpus, questions]
    (for parquet in ``files`` corpus files, a folder in Hub layout)."""
    keys = list(texts)
    corpus = {"ticker": keys, "company": [f"Company {k}" for k in keys], "text": list(texts.values())}
    if fmt == "parquet":
        (folder / "corpus").mkdir()
        (folder / "questions").mkdir()
        per = -(-len(keys) // files)
        for f in range(files):
            part = {c: v[f * per:(f + 1) * per] for c, v in corpus.items()}
            pq.write_table(pa.table(part), folder / "corpus" / f"train-{f:05d}.parquet")
        pq.write_table(pa.table(_questions(keys)), folder / "questions" / "train-00000.parquet")
        return [str(folder)]
    if fmt == "jsonl":
        for name, cols in (("corpus", corpus), ("questions", _questions(keys))):
            rows = [dict(zip(cols, vals)) for vals in zip(*cols.values())]
            (folder / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        return [str(folder / "corpus.jsonl"), str(folder / "questions.jsonl")]
    raise AssertionError(fmt)


@pytest.mark.parametrize("fmt,files", [("parquet", 1), ("parquet", 3), ("jsonl", 1)])
def test_loaded_documents_are_byte_identical_and_read_from_the_corpus_file(tmp_path, fmt, files):
    texts = _texts(12, 9000)  # over LONG_TEXT_BYTES a value: parquet spills them as it reads
    ds = loading.load("ficha", get_profile("ficha"), _write(tmp_path, texts, fmt, files))
    assert list(ds.documents) == list(texts)
    for i, (key, text) in enumerate(texts.items()):
        doc = ds.documents[key]
        assert doc.data == encode_text(text) and doc.text == text and doc.size == len(encode_text(text))
        assert doc.row == i and doc.meta == {"company": f"Company {key}"}
    assert corpus_fingerprint(DocumentBytes(ds.documents)) == corpus_fingerprint(texts)
    index = CorpusIndex.from_dataset(ds)
    assert all(index.text(k) == t for k, t in texts.items())
    assert index.elsewhere("end of 7", "D001") == (("D007", 1),)


def test_a_null_document_text_is_still_reported_and_shown_empty(tmp_path):
    texts = _texts(4, 9000)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "questions").mkdir()
    values = list(texts.values())
    values[2] = None
    pq.write_table(pa.table({"ticker": list(texts), "text": pa.array(values, pa.string())}),
                   tmp_path / "corpus" / "train.parquet")
    pq.write_table(pa.table(_questions(texts)), tmp_path / "questions" / "train.parquet")
    ds = loading.load("ficha", get_profile("ficha"), [str(tmp_path)])
    assert ds.documents["D002"].text == ""
    assert any(p.field == "text" and "missing (null)" in p.message and p.row == 2 for p in ds.problems)
    assert ds.documents["D003"].text == texts["D003"]


def test_loading_a_parquet_corpus_holds_no_python_copy_of_it(tmp_path, monkeypatch):
    """The documents' text is never turned into Python ``str`` or ``bytes`` all at once, and
    the loaded dataset does not keep it (tracemalloc sees Python's allocations, not Arrow's)."""
    monkeypatch.setattr(loading, "SPILL_BYTES", 64 << 10)
    texts = _texts(40, 60_000)
    total = sum(len(encode_text(t)) for t in texts.values())
    spec = _write(tmp_path, texts, "parquet")
    gc.collect()
    tracemalloc.start()
    try:
        ds = loading.load("ficha", get_profile("ficha"), spec)
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total > 2_000_000
    assert held < total / 10, (held, total)
    assert peak < total / 4, (peak, total)
    assert ds.documents["D039"].text == texts["D039"]


def test_the_corpus_file_keeps_few_documents_read_and_gives_the_same_object_again(tmp_path, monkeypatch):
    monkeypatch.setattr(CorpusFile, "KEEP_BYTES", 2500)
    f = CorpusFile(tmp_path)
    spans = [f.append(bytes([65 + i]) * 1000) for i in range(5)]
    assert spans[1] == (1000, 2000) and f.size == 5000
    assert not list(tmp_path.iterdir())  # unlinked at once: nothing left on disk
    first = f.read(*spans[0])
    assert f.read(*spans[0]) is first and first == b"A" * 1000
    for s in spans[1:]:
        f.read(*s)
    assert f.read(*spans[0]) is not first and f.read(*spans[0]) == first  # dropped, read again
    assert document_text(f.read(*spans[4])) == "E" * 1000


def test_the_worker_reads_the_corpus_file_a_document_at_a_time(tmp_path, monkeypatch):
    """The analysis's corpus file, opened as the worker opens it: the same bytes, and the batched
    exact search over it finds what it finds in memory without holding every document."""
    from mtcb_curate.app import analysis_store

    texts = _texts(30, 80_000)
    data = {k: encode_text(t) for k, t in texts.items()}
    path = tmp_path / "corpus.bin"
    analysis_store.write_corpus(path, list(data.items()) + [("D000", b"a repeated key: the first one counts")])
    docs = analysis_store.open_corpus(path)
    assert list(docs) == list(data) and all(docs[k].data == data[k] for k in data)
    assert [d.row for d in docs.values()] == list(range(len(data)))
    passages = {i: f"{PIECES[-1]} document {i}. " for i in range(20)}
    passages[99] = "end of 29"  # too short for the batched pass
    monkeypatch.setattr(CorpusFile, "KEEP_BYTES", 0)  # only the last document read is kept
    alive = [0, 0]  # documents' bytes alive now, at most

    class Counted(bytes):
        def __del__(self):
            alive[0] -= 1

    class Reads(DocumentBytes):
        def __getitem__(self, key):
            alive[0] += 1
            alive[1] = max(alive[1], alive[0])
            return Counted(super().__getitem__(key))

    in_memory = CorpusIndex(data).exact_occurrences_batch(passages)
    assert in_memory and set(in_memory[3]) == {"D003"}
    from_file = CorpusIndex(Reads(docs)).exact_occurrences_batch(passages)
    assert from_file == in_memory and list(from_file) == list(in_memory)
    assert alive[1] <= 3, alive  # a few at once (the one searched, the next as it is read), not all 30


def test_a_damaged_corpus_file_is_refused(tmp_path):
    from mtcb_curate.app import analysis_store

    path = tmp_path / "corpus.bin"
    analysis_store.write_corpus(path, [("A", b"x" * 100), ("B", b"y" * 50)])
    path.write_bytes(path.read_bytes()[60:])  # cut at the front: the index points past the data
    with pytest.raises(ValueError):
        analysis_store.open_corpus(path)


def test_a_hub_table_keeps_its_long_texts_in_the_corpus_file(monkeypatch):
    """A Hub config arrives as an Arrow table (``datasets``): its document texts go to the corpus
    file in steps, byte-identical, the other columns as Python values."""
    from mtcb_curate.dataset.model import SourceInfo

    monkeypatch.setattr(loading, "SPILL_BYTES", 20_000)
    texts = _texts(9, 9000)
    keys = list(texts)
    corpus = loading._arrow_to_table(pa.table({"ticker": keys, "text": list(texts.values())}), "o/n:corpus")
    assert isinstance(corpus.columns["text"], loading.StoredTexts) and corpus.columns["ticker"] == keys
    assert corpus.types["text"] == "string"
    questions = loading._arrow_to_table(pa.table(_questions(keys)), "o/n:questions")
    assert isinstance(questions.columns["question"], list)
    ds = loading.build_dataset("ficha", get_profile("ficha"), corpus, questions, SourceInfo("hub", "o/n"))
    assert {k: d.text for k, d in ds.documents.items()} == texts
