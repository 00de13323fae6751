"""Findability preview: MTCB's own scoring, per pair and per chunker."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from support import assert_one_error_line, opened, write_source

from mtcb_curate.app import preview as app_preview
from mtcb_curate.app.preview import run_preview
from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import InputError
from mtcb_curate.preview.chunkers import ChunkerSpec, Chunks, chunk_corpus, make_chunker, parse_spec
from mtcb_curate.preview.retrievers import BM25Retriever
from mtcb_curate.preview.scoring import Item, corpus_occurrences, score


def _fits_direct(chunker, documents: dict[str, str], passages: list[str]) -> list[bool]:
    """The reference: chunk with chonkie itself, then a plain scan of EVERY chunk."""
    texts = [c.text for text in documents.values() if text for c in chunker.chunk(text)]
    return [any(p in t for t in texts) for p in passages]


def _fits_ours(spec: ChunkerSpec, documents: dict[str, str], items: list[Item]) -> list[bool]:
    chunks = chunk_corpus(spec, documents)
    r = BM25Retriever()
    r.fit(chunks.texts)
    s = score(chunks, r, items, [1], corpus_occurrences(documents, items))
    return [p.fits is not None for p in s.pairs]


def _synthetic(seed: int = 7) -> tuple[dict[str, str], list[Item]]:
    rng = random.Random(seed)
    words = "revenue income tax shares fiscal year ended december operating cash flow net loss asset".split()
    docs = {}
    for d in range(6):
        paras = []
        for _ in range(rng.randint(20, 40)):
            sent = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 25))).capitalize() + "."
                    for _ in range(rng.randint(1, 6))]
            paras.append(" ".join(sent))
        docs[f"D{d}"] = "\n\n".join(paras)
    items = []
    keys = list(docs)
    for i in range(120):
        k = rng.choice(keys)
        text = docs[k]
        n = rng.choice([40, 150, 400, 900, 2500])
        a = rng.randrange(0, max(1, len(text) - n))
        items.append(Item(i, f"what about {rng.choice(words)}", text[a:a + n], k))
    items.append(Item(999, "q", "not in any document at all, anywhere", keys[0]))
    return docs, items


@pytest.mark.parametrize("spec", ["recursive:512", "recursive:2048", "token:128", "sentence:128"])
def test_fits_equals_direct_scan_synthetic(spec):
    docs, items = _synthetic()
    sp = parse_spec(spec)
    assert _fits_ours(sp, docs, items) == _fits_direct(make_chunker(sp), docs, [it.passage for it in items])


def test_fits_equals_direct_scan_shared_data(shared_data):
    docs = {}
    for line in (shared_data / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        docs[row["ticker"]] = row["text"]
    items = []
    for i, line in enumerate((shared_data / "questions.jsonl").read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        items.append(Item(i, row["question"], row["supporting_passage"], row["ticker"]))
    # Snapped spans too: a slice of the document around each pair's region, so some fit.
    for it in list(items):
        text = docs.get(it.doc_key, "")
        if len(text) > 1000:
            a = len(text) // 3 + it.pair_id * 97
            items.append(Item(1000 + it.pair_id, it.question, text[a:a + 300], it.doc_key))
    sp = parse_spec("recursive:2048")
    ours = _fits_ours(sp, docs, items)
    assert ours == _fits_direct(make_chunker(sp), docs, [it.passage for it in items])
    assert any(ours) and not all(ours)


class _Fixed:
    """A retriever whose scores are given per question (for hand-computed metrics)."""

    def __init__(self, table):
        self.table = table

    def scores(self, question):
        return np.asarray(self.table[question], dtype=np.float32)


def test_recall_and_mrr_by_hand():
    # Two documents, four chunks: A1 A2 | B1 B2 (global 0 1 2 3).
    docs = {"A": "alpha beta gamma delta", "B": "one two three four"}
    chunks = Chunks(ChunkerSpec("recursive", 11), {"chonkie": "x"}, ["A", "B"], [0, 2, 4],
                    ["alpha beta ", "gamma delta", "one two thr", "ee four"], [0, 0, 1, 1],
                    [0, 11, 0, 11], [11, 22, 11, 18])
    items = [
        Item(0, "q0", "gamma", "A"),        # holder chunk 1, ranked 1st -> hit@1
        Item(1, "q1", "one two", "B"),      # holder chunk 2, ranked 3rd -> hit@3
        Item(2, "q2", "beta gamma", "A"),   # cut across chunks 1-2 -> never a hit
        Item(3, "q3", "alpha", "A"),        # holder chunk 0, ranked 2nd -> hit@2
    ]
    table = {"q0": [0.1, 0.9, 0.2, 0.3], "q1": [0.9, 0.1, 0.5, 0.8], "q2": [1, 1, 0, 0],
             "q3": [0.5, 0.9, 0.1, 0.0]}
    s = score(chunks, _Fixed(table), items, [1, 2, 3], corpus_occurrences(docs, items))
    assert s.recall == {1: 1 / 4, 2: 2 / 4, 3: 3 / 4}
    assert s.mrr[1] == pytest.approx(1 / 4)
    assert s.mrr[2] == pytest.approx((1 + 1 / 2) / 4)
    assert s.mrr[3] == pytest.approx((1 + 1 / 2 + 1 / 3) / 4)
    assert s.ceiling == pytest.approx(3 / 4)
    assert s.too_long == 0
    p = {x.pair_id: x for x in s.pairs}
    assert p[0].fits == ("A", 2) and p[0].best_rank == 1
    assert p[1].fits == ("B", 1) and p[1].best_rank == 3 and p[1].hit_rank == 3
    assert p[2].fits is None and p[2].cut == ("A", 1, 2) and p[2].best_rank is None
    assert p[2].line("recursive:11") == "recursive:11: cut across chunks 0-1 (from 0) of A"
    assert p[3].line("recursive:11") == "recursive:11: fits in chunk 0 (from 0) of A; rank 2 of 4"


def test_empty_passage_is_a_free_hit_as_in_mtcb():
    docs = {"A": "alpha beta"}
    chunks = Chunks(ChunkerSpec("recursive", 20), {}, ["A"], [0, 1], ["alpha beta"], [0], [0], [10])
    s = score(chunks, _Fixed({"q": [0.0]}), [Item(0, "q", "", "A")], [1], corpus_occurrences(docs, []))
    assert s.recall[1] == 1.0


def test_too_long_counts_in_the_specs_unit():
    docs = {"A": "x" * 50}
    chunks = chunk_corpus(parse_spec("recursive:30"), docs)
    r = BM25Retriever()
    r.fit(chunks.texts)
    items = [Item(0, "x", "x" * 40, "A"), Item(1, "x", "x" * 20, "A")]
    s = score(chunks, r, items, [1], corpus_occurrences(docs, items))
    assert s.too_long == 1 and s.pairs[0].too_long and not s.pairs[1].too_long
    assert "longer than the chunk size" in s.pairs[0].line("recursive:30")


@pytest.mark.parametrize("spec", ["fixed:512", "recursive:0", "recursive:abc", "token:-3"])
def test_parse_spec_refuses(spec):
    with pytest.raises(InputError, match="--chunker"):
        parse_spec(spec)


def test_cli_unknown_chunker_one_line(cli, tiny):
    assert_one_error_line(cli("preview", "ficha", "--source", tiny, "--chunker", "fixed:512"),
                          "unknown chunker spec 'fixed:512'")


def test_cli_bad_k_one_line(cli, tiny):
    assert_one_error_line(cli("preview", "ficha", "--source", tiny, "--k", "1,zero"), "--k")


def test_cli_missing_wordllama_one_line(cli, tiny, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_wordllama(name, *a, **kw):
        if name.split(".")[0] == "wordllama":
            raise ImportError("No module named 'wordllama'")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_wordllama)
    assert_one_error_line(cli("preview", "ficha", "--source", tiny, "--retriever", "dense"),
                          "pip install wordllama")


def test_cli_empty_corpus_one_line(cli, tmp_path):
    src = write_source(tmp_path / "src", corpus=[{"ticker": "A", "text": ""}],
                       questions=[{"question": "What?", "answer": "x", "supporting_passage": "p", "ticker": "A"}])
    assert_one_error_line(cli("preview", "ficha", "--source", src), "the corpus is empty")


def test_cli_prints_table_and_writes_json(cli, tiny, tmp_path):
    out = tmp_path / "p.json"
    md = tmp_path / "p.md"
    r = cli("preview", "ficha", "--source", tiny, "--chunker", "recursive:64", "--k", "1,3",
            "--json", out, "--markdown", md)
    assert r.returncode == 0, r.stderr
    assert "recursive:64" in r.stdout and "ceiling" in r.stdout and "chonkie" in r.stdout
    assert "lexical" in r.stdout
    data = json.loads(out.read_text())
    assert data["which"] == "all" and data["chunkers"][0]["chunker"] == "recursive:64"
    assert len(data["chunkers"][0]["per_pair"]) == 3
    assert "| recursive:64 | bm25 |" in md.read_text()


def test_second_run_uses_the_cache(tiny, ws, monkeypatch):
    session = opened(tiny, ws)
    try:
        for pid in session.ids():
            session.decide(pid, Status.ACCEPTED)
        calls = []
        real = app_preview.chunk_corpus

        def counting(*a, **kw):
            calls.append(a[0])
            return real(*a, **kw)

        monkeypatch.setattr(app_preview, "chunk_corpus", counting)
        specs = [parse_spec("recursive:64")]
        first = run_preview(session, specs, cache_dir=ws)
        assert len(calls) == 1 and first.cached == []
        second = run_preview(session, specs, cache_dir=ws)
        assert len(calls) == 1 and second.cached == ["recursive:64"]
        assert second.scores[0].to_dict() == first.scores[0].to_dict()
        # Another spec is another key.
        run_preview(session, [parse_spec("recursive:80")], cache_dir=ws)
        assert len(calls) == 2
    finally:
        session.workspace.close()


def test_accepted_pairs_only_with_a_workspace(tiny, ws):
    session = opened(tiny, ws)
    try:
        with pytest.raises(InputError, match="no accepted pair"):
            run_preview(session, [parse_spec("recursive:64")], cache_dir=ws)
        session.decide(0, Status.ACCEPTED)
        assert run_preview(session, [parse_spec("recursive:64")], cache_dir=ws).pairs == 1
        assert run_preview(session, [parse_spec("recursive:64")], cache_dir=ws, all_pairs=True).pairs == 3
    finally:
        session.workspace.close()


def test_bm25_scores_equal_bm25s_own():
    import bm25s

    texts = ["the cat sat on the mat", "a dog and a cat", "revenue grew in fiscal 2023", "cat cat cat", ""]
    r = BM25Retriever()
    r.fit(texts)
    for q in ("cat", "cat mat revenue", "dog dog fiscal", "the of and", "unknownword cat"):
        words = bm25s.tokenize([q], stopwords="en", show_progress=False, return_ids=False)[0]
        want = np.asarray(r.model.get_scores(words), dtype=np.float32) if words else np.zeros(len(texts))
        np.testing.assert_array_equal(r.scores(q), want)
        np.testing.assert_array_equal(next(iter(r.scores_many([q]))), want)


def test_cached_run_scores_no_question_and_only_edited_pairs_again(tiny, ws, monkeypatch):
    session = opened(tiny, ws)
    try:
        asked = []
        real = BM25Retriever.scores_many

        def counting(self, questions):
            questions = list(questions)
            asked.extend(questions)
            return real(self, questions)

        monkeypatch.setattr(BM25Retriever, "scores_many", counting)
        specs = [parse_spec("recursive:64")]
        first = run_preview(session, specs, cache_dir=ws, all_pairs=True)
        assert len(asked) == 3
        asked.clear()
        second = run_preview(session, specs, cache_dir=ws, all_pairs=True)
        assert asked == [] and second.scores[0].to_dict() == first.scores[0].to_dict()
        v = session.view(0)
        session.edit(0, {"supporting_passage": v.passage[: max(1, len(v.passage) // 2)]})
        third = run_preview(session, specs, cache_dir=ws, all_pairs=True)
        assert asked == [v.question]
        # A different k cut-off is scored from the same cache entries.
        asked.clear()
        run_preview(session, specs, cache_dir=ws, all_pairs=True, ks=(1, 2))
        assert asked == []
        assert third.scores[0].pairs[0].pair_id == 0
    finally:
        session.workspace.close()
