"""MTCB generation windows per document, cached in memory (``verify.CorpusIndex``) and on disk.

Tokenizing a corpus costs about 0.1 s per MB (about 5 s for ficha's 48 MB), too slow for a
statistics screen that should open in a second. The windows' character offsets are kept in a
JSON file per document text under a cache folder (``app.stats`` uses the user cache directory,
:func:`default_cache_dir`, for every workspace), named by the sha1 of the UTF-8 text, so a
changed text is never served stale windows and any workspace over the same text reuses them. A file that cannot be read or written is ignored (the windows are computed).
:func:`corpus_window_spans` does a whole corpus, tokenizing the documents not cached yet on
several threads (tiktoken releases the GIL while it encodes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mtcb_curate.dataset import tokens as tok

#: Folder name of the cache inside a workspace.
CACHE_FOLDER = "stats-windows"


def default_cache_dir() -> Path:
    """``<user cache dir>/mtcb-curate/stats-windows`` (``files.user_cache_folder``)."""
    from mtcb_curate.files import user_cache_folder

    return user_cache_folder(CACHE_FOLDER)


def _digest(text: str | bytes) -> str:
    from mtcb_curate.stats.located import text_digest

    return text_digest(text)


def window_spans(text: str | bytes, *, index=None, key: str | None = None, cache_dir: Path | None = None,
                 build: bool = True) -> list[tuple[int, int]] | None:
    """The ``(start, end)`` character offsets of ``text``'s MTCB windows (``tokens.windows``);
    ``text`` may be its UTF-8 bytes (``Document.data``: decoded only to tokenize it).

    Looked up in ``index.cached_windows(key)`` (a ``verify.CorpusIndex``), then in
    ``cache_dir``; else computed (when ``build``) and written to ``cache_dir``.

    Returns:
        The spans in window order, or None when not cached and ``build`` is False.
    """
    path = None if cache_dir is None else Path(cache_dir) / f"{_digest(text)}.json"
    cached = index.cached_windows(key) if index is not None and key is not None else None
    if cached is not None:
        spans = [(w.start, w.end) for w in cached]
        if path is None or path.exists():
            return spans
    else:
        if path is not None:
            try:
                return [(int(a), int(b)) for a, b in json.loads(path.read_text(encoding="utf-8"))]
            except (OSError, ValueError, TypeError):
                pass
        if not build:
            return None
        if isinstance(text, bytes):
            from mtcb_curate.dataset.model import document_text

            text = document_text(text)
        spans = [(w.start, w.end) for w in tok.windows(text)]
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(spans), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
    return spans


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
