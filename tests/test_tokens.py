"""MTCB generation windows and offline tiktoken."""

from __future__ import annotations

from mtcb_curate.dataset import tokens


def test_encoding_works_offline_in_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
    tokens.release_encoding()
    try:
        assert tokens.encoding().encode_ordinary("hello world") == [15339, 1917]
        assert any((tmp_path / "tk").iterdir())
    finally:
        tokens.release_encoding()


def test_a_released_encoding_is_loaded_again_and_the_old_one_still_works():
    first = tokens.encoding()
    assert tokens.encoding() is first
    assert tokens.release_encoding() is True
    assert tokens.release_encoding() is False
    second = tokens.encoding()
    assert second is not first
    assert first.encode_ordinary("hello world") == second.encode_ordinary("hello world") == [15339, 1917]


def test_windows_follow_stride_and_overlap():
    text = "".join(f"word{i} café “q” " for i in range(12000))
    enc = tokens.encoding()
    ids = enc.encode_ordinary(text)
    _, offsets = enc.decode_with_offsets(ids)
    ws = tokens.windows(text)
    assert [w.start_token for w in ws] == list(range(0, len(ids) - tokens.OVERLAP_TOKENS, tokens.STRIDE_TOKENS))
    for w in ws:
        assert w.end_token == min(w.start_token + tokens.WINDOW_TOKENS, len(ids))
        assert w.start == offsets[w.start_token]
        assert w.end == (offsets[w.end_token] if w.end_token < len(ids) else len(text))
    assert ws[-1].end == len(text)
    # Consecutive windows overlap by 512 tokens.
    assert all(b.start_token == a.end_token - tokens.OVERLAP_TOKENS for a, b in zip(ws, ws[1:]))


def test_short_and_empty_texts_have_one_window():
    assert tokens.windows("") == [tokens.Window(0, 0, 0, 0, 0)]
    (w,) = tokens.windows("A short filing.")
    assert (w.start, w.end) == (0, len("A short filing."))
    assert tokens.window_of("A short filing.", 1) is None
    assert tokens.window_of("A short filing.", -1) is None
    assert tokens.count_tokens("hello world") == 2
