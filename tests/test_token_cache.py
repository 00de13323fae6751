"""The token cache: windows and passage token counts kept on disk, so that a corpus opened again
needs no tokenizer, and the review screen lets the tokenizer go once the cache is filled."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tui_dedup import dedup_session  # noqa: E402

from support import opened, review_app, review_at_once  # noqa: E402

from mtcb_curate.dataset import token_cache, tokens  # noqa: E402
from mtcb_curate.dataset.token_cache import TokenCache  # noqa: E402
from mtcb_curate.verify import CorpusIndex  # noqa: E402

TEXT = "".join(f"word{i} café “q” \n" for i in range(2700))  # three windows


def _no_tokenizer(monkeypatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("the tokenizer was needed")

    monkeypatch.setattr(tokens, "encoding", refuse)


def test_windows_round_trip_by_content_for_text_and_bytes(tmp_path):
    cache = TokenCache(tmp_path / "tc")
    assert cache.windows(TEXT) is None and not cache.has_windows(TEXT)
    ws = tokens.windows(TEXT)
    assert len(ws) == 3
    assert cache.put_windows(TEXT, ws)
    assert TokenCache(tmp_path / "tc").windows(TEXT) == ws
    assert cache.windows(TEXT.encode("utf-8")) == ws and cache.has_windows(TEXT.encode("utf-8"))
    assert cache.windows(TEXT + " ") is None  # another text, another file
    assert TokenCache(tmp_path / "other").windows(TEXT) is None


def test_a_malformed_or_foreign_windows_file_is_ignored_and_rewritten(tmp_path):
    cache = TokenCache(tmp_path)
    ws = tokens.windows(TEXT)
    cache.put_windows(TEXT, ws)
    (path,) = tmp_path.glob("windows-*.json")
    good = json.loads(path.read_text())
    for bad in ("not json", json.dumps({**good, "format": 0}), json.dumps({**good, "tokens": good["tokens"] + 1}),
                json.dumps({**good, "windows": good["windows"][:-1]}),
                json.dumps({**good, "windows": [[0, 8192, 5, 1]] + good["windows"][1:]})):
        path.write_text(bad)
        assert cache.windows(TEXT) is None, bad
    assert token_cache.cached_windows(cache, TEXT) == ws
    assert cache.windows(TEXT) == ws


def test_an_empty_text_has_one_empty_window_stored(tmp_path):
    cache = TokenCache(tmp_path)
    assert token_cache.cached_windows(cache, "") == [tokens.Window(0, 0, 0, 0, 0)]
    assert cache.windows("") == [tokens.Window(0, 0, 0, 0, 0)]


def test_counts_are_appended_read_back_and_skip_malformed_lines(tmp_path):
    cache = TokenCache(tmp_path)
    assert cache.count("hello world") is None
    assert token_cache.cached_count(cache, "hello world") == 2
    assert cache.put_counts({"a b c": 3, "lone \ud800 surrogate": 7})
    (path,) = tmp_path.glob("passage-tokens-*.tsv")
    with open(path, "ab") as f:
        f.write(b"garbage line\nzzzzzzzzzzzzzzzz\t4\n")
    again = TokenCache(tmp_path)
    assert again.count("hello world") == 2 and again.count("a b c") == 3
    assert again.count("lone \ud800 surrogate") == 7
    assert again.count("never counted") is None
    n = len(path.read_bytes().splitlines())
    assert again.put_counts({"a b c": 3})  # already stored: nothing appended
    assert len(path.read_bytes().splitlines()) == n


def test_the_counts_file_is_rewritten_with_the_newest_when_it_grows(tmp_path, monkeypatch):
    monkeypatch.setattr(token_cache, "COUNTS_KEPT", 3)
    cache = TokenCache(tmp_path)
    for i in range(7):
        cache.put_count(f"text {i}", i)
    (path,) = tmp_path.glob("passage-tokens-*.tsv")
    assert len(path.read_bytes().splitlines()) <= 6
    again = TokenCache(tmp_path)
    assert again.count("text 6") == 6 and again.count("text 0") is None


def test_an_index_over_a_corpus_seen_before_reads_its_windows_without_the_tokenizer(tmp_path, monkeypatch):
    texts = {"A": TEXT, "B": "short one"}
    first = CorpusIndex(texts, TokenCache(tmp_path))
    expected = {k: first.windows(k) for k in texts}
    assert expected["A"] == tokens.windows(TEXT)
    _no_tokenizer(monkeypatch)
    second = CorpusIndex({k: v.encode("utf-8") for k, v in texts.items()}, TokenCache(tmp_path))
    assert second.windows_stored("A") and not second.windows_stored("C")
    assert {k: second.windows(k) for k in texts} == expected
    with pytest.raises(AssertionError):
        CorpusIndex(texts).windows("A")  # no cache: tokenized


async def test_the_analysis_fills_the_cache_in_its_process_and_a_reopened_app_needs_no_tokenizer(tmp_path, monkeypatch):
    review_at_once(monkeypatch)
    session = dedup_session(tmp_path)
    async with review_app(session, size=(120, 30)) as (app, pilot):
        assert tokens._encoding is None  # the worker counted; a first pair checked before is let go
        first = app.screen.controller.verdicts.complete(3)
        assert first.tokens is not None
    cache = TokenCache()
    assert all(cache.count(p.passage) is not None for p in session.pairs)
    assert all(cache.has_windows(d.data) for d in session.dataset.documents.values())

    _no_tokenizer(monkeypatch)
    session = opened(None, tmp_path / "ws")
    async with review_app(session, size=(120, 30)) as (app, pilot):
        again = app.screen.controller.verdicts.complete(3)
        assert (again.tokens, again.in_chunk, again.verdict) == (first.tokens, first.in_chunk, first.verdict)
        assert again.tokens is not None and again.in_chunk is not None
