"""Tokenizer work kept on disk between runs, keyed by content: a document's MTCB windows and a
passage's token count, so that a corpus opened again needs no tokenizer.

tiktoken's ``cl100k_base`` holds about 37 MB once loaded (its rank table in Python and again in
Rust) and takes about 0.3 s to build; the review screen needs it only for the windows of the
current pair's document (``chunk_index``) and the token count of its passage. Both depend on
the text alone, so they are kept under ``<user cache dir>/mtcb-curate/tokens/``
(:func:`default_cache_dir`) for every workspace:

``windows-cl100k_base-1-<sha1>.json``
    One file per document text (the sha1 of its UTF-8 bytes, ``dataset.model.text_digest``,
    so a document is hashed once per process): its token count and every window as
    ``[start_token, end_token, start, end]`` (``dataset.tokens.Window``). A file whose windows
    do not follow MTCB's cut (8,192 tokens, stride 7,680) is ignored and rewritten.
``passage-tokens-cl100k_base-1.tsv``
    One line per passage counted: the first 16 hex digits of the sha1 of its UTF-8 bytes, a
    tab, its token count (64 bits of key: a collision among a million passages has odds of
    about 1 in 4 x 10^7). Lines are appended as counts are made; the file is read once per
    process and rewritten with its newest :data:`COUNTS_KEPT` counts when it grows past twice
    that.

Both names hold the encoding's name and :data:`FORMAT` (``cl100k_base`` and ``1`` above), so
another cut or encoding never reads an old answer. An unreadable or malformed file is ignored
(the work is done again); writing is best effort (a read-only folder means no cache) and atomic
for the window files (a temporary file renamed over the old one).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path

from mtcb_curate.dataset import tokens as tok
from mtcb_curate.dataset.model import document_text, text_digest
from mtcb_curate.files import atomic_write_bytes, user_cache_folder

#: Folder name under the user cache directory.
CACHE_FOLDER = "tokens"
#: Bump when the files' layout changes.
FORMAT = 1
#: Passage counts kept when the counts file is rewritten (it is at twice this).
COUNTS_KEPT = 200_000


def default_cache_dir() -> Path:
    """``<user cache dir>/mtcb-curate/tokens`` (``files.user_cache_folder``), not created."""
    return user_cache_folder(CACHE_FOLDER)


def _count_key(text: str) -> int:
    """A passage's key in the counts file: the first 64 bits of its ``dataset.model.text_digest``."""
    return int(text_digest(text)[:16], 16)


def _windows_from_json(raw: object) -> list[tok.Window] | None:
    """The windows stored in ``raw`` when they are MTCB's cut of a text of ``raw["tokens"]``
    tokens (every offset an int, character offsets ascending), else None."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("encoding") != tok.ENCODING:
        return None
    n, rows = raw.get("tokens"), raw.get("windows")
    if type(n) is not int or n < 0 or not isinstance(rows, list):
        return None
    starts = list(range(0, max(n - tok.OVERLAP_TOKENS, 1), tok.STRIDE_TOKENS)) if n else [0]
    if len(rows) != len(starts):
        return None
    out = []
    for i, (row, s) in enumerate(zip(rows, starts)):
        if not (isinstance(row, list) and len(row) == 4 and all(type(v) is int for v in row)):
            return None
        start_token, end_token, start, end = row
        if start_token != s or end_token != min(s + tok.WINDOW_TOKENS, n) or not 0 <= start <= end:
            return None
        if out and start < out[-1].start:
            return None
        out.append(tok.Window(i, start_token, end_token, start, end))
    return out


class TokenCache:
    """Get and put windows and token counts under ``folder`` (see the module docstring).

    Args:
        folder: the cache folder (default :func:`default_cache_dir`); created on the first put.

    Thread-safe: the review screen's workers and the checklist share one.
    """

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self._lock = threading.Lock()
        self._counts: dict[int, int] | None = None
        self._counts_lines = 0

    # -- windows ------------------------------------------------------------------------------

    def _windows_path(self, text: str | bytes) -> Path:
        return self.folder / f"windows-{tok.ENCODING}-{FORMAT}-{text_digest(text)}.json"

    def windows(self, text: str | bytes) -> list[tok.Window] | None:
        """The stored windows of ``text`` (a document's text or its UTF-8 bytes, the same
        file), or None when none are stored (or the file is unreadable or malformed)."""
        try:
            raw = json.loads(self._windows_path(text).read_bytes())
        except (OSError, ValueError):
            return None
        return _windows_from_json(raw)

    def has_windows(self, text: str | bytes) -> bool:
        """Whether a windows file for ``text`` exists (not read)."""
        return self._windows_path(text).exists()

    def put_windows(self, text: str | bytes, windows: list[tok.Window]) -> bool:
        """Store ``windows`` (``tokens.windows(text)``) for ``text``; False when it could not be
        written."""
        n = windows[-1].end_token if windows else 0
        body = {"format": FORMAT, "encoding": tok.ENCODING, "tokens": n,
                "windows": [[w.start_token, w.end_token, w.start, w.end] for w in windows]}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self._windows_path(text), json.dumps(body, separators=(",", ":")).encode("ascii"))
            return True
        except OSError:
            return False

    # -- passage counts -----------------------------------------------------------------------

    def _counts_path(self) -> Path:
        return self.folder / f"passage-tokens-{tok.ENCODING}-{FORMAT}.tsv"

    def _load_counts(self) -> dict[int, int]:
        """The counts file read once (the caller holds the lock); a malformed line is skipped."""
        if self._counts is None:
            counts: dict[int, int] = {}
            try:
                with open(self._counts_path(), "rb") as f:
                    raw = f.read()
            except OSError:
                raw = b""
            lines = raw.splitlines()
            for line in lines:
                key, _, value = line.partition(b"\t")
                if len(key) == 16 and value.isdigit():
                    try:
                        counts[int(key, 16)] = int(value)
                    except ValueError:
                        continue
            self._counts, self._counts_lines = counts, len(lines)
        return self._counts

    def count(self, text: str) -> int | None:
        """The stored ``cl100k_base`` token count of ``text``, or None."""
        with self._lock:
            return self._load_counts().get(_count_key(text))

    def put_count(self, text: str, n: int) -> bool:
        """Store ``n`` as the token count of ``text`` (:meth:`put_counts`)."""
        return self.put_counts({text: n})

    def put_counts(self, counts: Mapping[str, int]) -> bool:
        """Store each text's token count (one line appended per text not stored with that
        count); False when the file could not be written (the counts are still remembered for
        this process)."""
        new = {_count_key(text): n for text, n in counts.items()}
        with self._lock:
            stored = self._load_counts()
            lines = [f"{key:016x}\t{n}\n" for key, n in new.items() if stored.get(key) != n]
            if not lines:
                return True
            stored.update(new)
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                if self._counts_lines + len(lines) > 2 * COUNTS_KEPT:
                    newest = list(stored.items())[-COUNTS_KEPT:]  # newest last
                    body = "".join(f"{k:016x}\t{v}\n" for k, v in newest)
                    atomic_write_bytes(self._counts_path(), body.encode("ascii"))
                    self._counts_lines = len(newest)
                else:
                    with open(self._counts_path(), "ab") as f:
                        f.write("".join(lines).encode("ascii"))
                    self._counts_lines += len(lines)
                return True
            except OSError:
                return False


def cached_windows(cache: TokenCache | None, text: str | bytes) -> list[tok.Window]:
    """``text``'s windows from ``cache`` when stored there, else ``tokens.windows`` (then
    stored). ``text`` may be a document's UTF-8 bytes (decoded only to tokenize)."""
    got = cache.windows(text) if cache is not None else None
    if got is None:
        if isinstance(text, bytes):
            got = tok.windows(document_text(text))
        else:
            got = tok.windows(text)
        if cache is not None:
            cache.put_windows(text, got)
    return got


def cached_count(cache: TokenCache | None, text: str) -> int:
    """``text``'s token count from ``cache`` when stored there, else ``tokens.count_tokens``
    (then stored)."""
    n = cache.count(text) if cache is not None else None
    if n is None:
        n = tok.count_tokens(text)
        if cache is not None:
            cache.put_count(text, n)
    return n
