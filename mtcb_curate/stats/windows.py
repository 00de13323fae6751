"""MTCB generation windows per document for the statistics, cached in memory
(``verify.CorpusIndex``) and on disk (``dataset.token_cache``).

Tokenizing a corpus costs about 0.1 s per MB (about 5 s for ficha's 48 MB), too slow for a
statistics screen that should open in a second. The windows are kept in a file per document
text, named by the sha1 of its UTF-8 bytes (``dataset.token_cache.TokenCache``; ``app.stats``
uses the user cache directory, :func:`default_cache_dir`, the same folder as the session's
corpus index), so a changed text is never served stale windows and any workspace over the same
text reuses them. A file that cannot be read or written is ignored (the windows are computed).
:func:`corpus_window_spans` does a whole corpus, tokenizing the documents not cached yet on
several threads (tiktoken releases the GIL while it encodes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mtcb_curate.dataset.token_cache import TokenCache, cached_windows
from mtcb_curate.dataset.token_cache import default_cache_dir as default_cache_dir  # noqa: F401 - re-exported

#: Folder name of the statistics' own caches inside a workspace.
CACHE_FOLDER = "stats-windows"


def window_spans(text: str | bytes, *, index=None, key: str | None = None, cache_dir: Path | None = None,
                 build: bool = True) -> list[tuple[int, int]] | None:
    """The ``(start, end)`` character offsets of ``text``'s MTCB windows (``tokens.windows``);
    ``text`` may be its UTF-8 bytes (``Document.data``: decoded only to tokenize it).

    Looked up in ``index.cached_windows(key)`` (a ``verify.CorpusIndex``), then in
    ``cache_dir`` (a ``TokenCache`` folder); else computed (when ``build``) and written to
    ``cache_dir``.

    Returns:
        The spans in window order, or None when not cached and ``build`` is False.
    """
    cache = None if cache_dir is None else TokenCache(cache_dir)
    got = index.cached_windows(key) if index is not None and key is not None else None
    if got is not None and cache is not None and not cache.has_windows(text):
        cache.put_windows(text, got)
    if got is None and cache is not None:
        got = cache.windows(text)
    if got is None:
        if not build:
            return None
        got = cached_windows(None, text)
        if cache is not None:
            cache.put_windows(text, got)
    return [(w.start, w.end) for w in got]


#: Threads that tokenize documents at once (at most the CPUs).
MAX_THREADS = 4


def corpus_window_spans(texts: Mapping[str, str | bytes], *, index=None, cache_dir: Path | None = None,
                        build: bool = True) -> dict[str, list[tuple[int, int]] | None]:
    """:func:`window_spans` of every document, key -> spans (None: not cached and not
    ``build``); the documents to tokenize are done on up to ``MAX_THREADS`` threads, through
    ``index.windows(key)`` when an index is given (so the session's ``verify.CorpusIndex``
    keeps them for the checks)."""
    out = {key: window_spans(text, index=index, key=key, cache_dir=cache_dir, build=False)
           for key, text in texts.items()}
    todo = [key for key, spans in out.items() if spans is None]
    if not build or not todo:
        return out

    def one(key: str) -> list[tuple[int, int]]:
        if index is not None:
            index.windows(key)  # fills index.cached_windows(key)
        return window_spans(texts[key], index=index, key=key, cache_dir=cache_dir)

    threads = max(1, min(MAX_THREADS, os.cpu_count() or 1, len(todo)))
    if threads == 1:
        out.update({key: one(key) for key in todo})
    else:
        # The biggest first, so that no thread is left with a long document at the end.
        todo.sort(key=lambda k: -len(texts[k]))
        with ThreadPoolExecutor(threads, thread_name_prefix="stats-windows") as pool:
            out.update(zip(todo, pool.map(one, todo)))
    return out
