"""CorpusIndex.exact_occurrences_batch against a brute-force byte search."""

from __future__ import annotations

import random

import pytest

from mtcb_curate.verify import search
from mtcb_curate.verify.normalize import encode

WORDS = "revenue net income “quoted” café total fiscal year ended December 31 segment ﬁnal".split()


def _corpus(rng: random.Random) -> dict[str, str]:
    docs = {}
    for d in range(6):
        words = [rng.choice(WORDS) for _ in range(rng.randint(200, 900))]
        docs[f"D{d}"] = " ".join(words)
    docs["D6"] = docs["D0"][:400]  # a passage of D0 also occurs here
    docs["REP"] = "abcdefgh" * 40  # overlapping occurrences
    return docs


def _brute(docs: dict[str, str], passage: str) -> dict[str, list[int]]:
    needle = encode(passage)
    out = {}
    for key, text in docs.items():
        hay, offs, i = encode(text), [], -1
        while (i := hay.find(needle, i + 1)) >= 0:
            offs.append(i)
        if offs:
            out[key] = offs
    return out


@pytest.mark.parametrize("bits", [(22, 27), (6, 9), (6, 30)])
def test_batch_finds_every_occurrence_whatever_the_bitmap_size(monkeypatch, bits):
    """A small bitmap (many false candidates), one grown with the key count, one capped."""
    monkeypatch.setattr(search, "_BITMAP_BITS", bits[0])
    monkeypatch.setattr(search, "_BITMAP_MAX_BITS", bits[1])
    rng = random.Random(7)
    docs = _corpus(rng)
    passages = {}
    for pid in range(300):
        key = rng.choice(sorted(docs))
        text = docs[key]
        a = rng.randrange(0, len(text) - 40)
        passages[pid] = text[a:a + rng.randint(31, 200)]
    passages[300] = "abcdefgh" * 5  # overlapping, 40 bytes
    passages[301] = "not in any document at all, not anywhere here"
    passages[302] = "too short"  # under 31 bytes: skipped
    got = search.CorpusIndex(docs).exact_occurrences_batch(passages)
    want = {}
    for pid, p in passages.items():
        if len(encode(p)) >= 31:
            hits = _brute(docs, p)
            if hits:
                want[pid] = hits
    assert got == want
    assert 302 not in got and 301 not in got
    assert got[300]["REP"] == list(range(0, 320 - 40 + 1, 8))  # every overlapping occurrence


def test_the_passages_looked_up_a_block_at_a_time_give_every_occurrence(monkeypatch):
    """The passages' keys are looked up ``_QUERY_ROWS`` passages at a time: blocks of a few
    give what one block of all of them gives."""
    rng = random.Random(11)
    docs = _corpus(rng)
    passages = {}
    for pid in range(120):
        key = rng.choice(sorted(docs))
        a = rng.randrange(0, len(docs[key]) - 40)
        passages[pid] = docs[key][a:a + rng.randint(31, 150)]
    passages[120] = "abcdefgh" * 5
    whole = search.CorpusIndex(docs).exact_occurrences_batch(passages)
    monkeypatch.setattr(search, "_QUERY_ROWS", 7)
    assert search.CorpusIndex(docs).exact_occurrences_batch(passages) == whole and len(whole) > 100
