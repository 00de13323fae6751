"""Repairs of a supporting passage: snap to the located span, trim its edges, or take the
curator's selection. Each returns the new passage text; none changes a dataset."""

from __future__ import annotations

import unicodedata

from mtcb_curate.verify.verdict import PairResult

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}


def snap(text: str, result: PairResult) -> str | None:
    """The repair "snap": the located source span ``text[start:end]`` that should replace the
    passage, or None when nothing was located. ``text`` is the pair's document text."""
    if result.start is None or result.end is None:
        return None
    return text[result.start:result.end]


def _edge_junk(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def trim_passage(passage: str) -> str:
    """The repair "trim": strip whitespace and punctuation from both ends of a passage.

    A bracket is kept when its partner is inside the passage (``(in millions)`` stays whole).
    A substring of a document stays a substring (only ends are removed).
    """
    a, b = 0, len(passage)
    while a < b:
        ch = passage[a]
        if ch in _OPENERS and _OPENERS[ch] in passage[a + 1:b]:
            break
        if not _edge_junk(ch):
            break
        a += 1
    while b > a:
        ch = passage[b - 1]
        if ch in _CLOSERS and _CLOSERS[ch] in passage[a:b - 1]:
            break
        if not _edge_junk(ch):
            break
        b -= 1
    return passage[a:b]


def select_span(text: str, start: int, end: int) -> str:
    """The repair "select": the source span ``text[start:end]`` the curator selected.

    Raises:
        ValueError: an empty or out-of-range selection.
    """
    if not 0 <= start < end <= len(text):
        raise ValueError(f"bad selection [{start}, {end}) in a text of {len(text)} characters")
    return text[start:end]
