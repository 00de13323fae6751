"""Chunker specs (``recursive:2048``, ``token:512``, ``sentence:512``) and chonkie chunking.

=============  ==================================================================  ========
spec           chonkie chunker                                                     size in
=============  ==================================================================  ========
``recursive``  ``RecursiveChunker(chunk_size=N)``, everything else at chonkie's    chars
               defaults: exactly what MTCB's ``DatasetGenerator`` used
               (``RecursiveChunker()``: character tokenizer, 2,048, default rules)
``token``      ``TokenChunker(tokenizer=cl100k_base, chunk_size=N)``, no overlap   tokens
``sentence``   ``SentenceChunker(tokenizer=count_tokens, chunk_size=N)``           tokens
=============  ==================================================================  ========

Token counts go through our offline ``cl100k_base`` (``dataset.tokens``): the sentence chunker
takes it as a callable token counter; chonkie's ``TokenChunker`` must encode and decode, which
a callable cannot, so it gets the offline ``tiktoken.Encoding`` itself. Nothing is downloaded.
chonkie's RecursiveChunker was rewritten in 2026-02, so boundaries depend on its version:
``library_versions`` goes into every report and every cache key.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from importlib import metadata

from mtcb_curate.errors import InputError

#: spec kind -> the unit its size counts.
KINDS = {"recursive": "chars", "token": "tokens", "sentence": "tokens"}
#: The chunker MTCB's generator used by default (and FichaEvaluator runs in the issue).
DEFAULT_SPECS = ("recursive:2048",)
MAX_SIZE = 1_000_000


@dataclass(frozen=True)
class ChunkerSpec:
    """A parsed spec: ``kind`` (``KINDS``), ``size`` (in ``unit``), ``text`` as given (normalised)."""

    kind: str
    size: int

    @property
    def unit(self) -> str:
        return KINDS[self.kind]

    @property
    def text(self) -> str:
        return f"{self.kind}:{self.size}"

    def __str__(self) -> str:
        return self.text


def parse_spec(spec: str) -> ChunkerSpec:
    """``"recursive:2048"`` -> ``ChunkerSpec("recursive", 2048)``; a bare kind takes 2,048.

    Raises:
        InputError: an unknown kind or a size that is not a whole number from 1 to 1,000,000
            (one line naming the spec and the kinds known).
    """
    raw = str(spec).strip()
    kind, _, size = raw.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise InputError("--chunker", f"unknown chunker spec {raw!r}: use recursive:N, token:N or sentence:N")
    size = size.strip() or "2048"
    if not size.isdigit() or not 1 <= int(size) <= MAX_SIZE:
        raise InputError("--chunker", f"chunker spec {raw!r}: the size must be a whole number from 1 to {MAX_SIZE:,}")
    return ChunkerSpec(kind, int(size))


def library_versions() -> dict[str, str]:
    """``{"chonkie": "1.7.0", "chonkie-core": ...}``: what chunk boundaries depend on."""
    out = {}
    for name in ("chonkie", "chonkie-core"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def make_chunker(spec: ChunkerSpec):
    """The chonkie chunker for ``spec`` (offline; see the module docstring)."""
    from mtcb_curate.dataset.tokens import count_tokens, encoding
    from mtcb_curate.imports import import_hiding

    # chonkie's package init would import openai for its LLM chunkers (mtcb_curate.imports)
    chonkie = import_hiding("chonkie", ("openai",))
    RecursiveChunker, SentenceChunker, TokenChunker = chonkie.RecursiveChunker, chonkie.SentenceChunker, chonkie.TokenChunker

    if spec.kind == "recursive":
        return RecursiveChunker(chunk_size=spec.size)
    if spec.kind == "token":
        return TokenChunker(tokenizer=encoding(), chunk_size=spec.size)
    return SentenceChunker(tokenizer=count_tokens, chunk_size=spec.size)


def passage_size(spec: ChunkerSpec, passage: str) -> int:
    """The passage's length in the spec's unit (characters, or cl100k_base tokens)."""
    if spec.unit == "chars":
        return len(passage)
    from mtcb_curate.dataset.tokens import count_tokens

    return count_tokens(passage)


@dataclass
class Chunks:
    """Every chunk of every document, in document order (what goes into MTCB's one index).

    Attributes:
        spec: the spec that made them; versions: ``library_versions()`` at the time.
        doc_keys: document keys in corpus order; first: index of each document's first chunk
            (``first[d] .. first[d+1]-1``; one extra entry at the end).
        texts, doc, starts, ends: per chunk: its text, its document's position in ``doc_keys``,
            its start and end offsets in the document text (characters, chonkie's indices).
    """

    spec: ChunkerSpec
    versions: dict[str, str]
    doc_keys: list[str]
    first: list[int]
    texts: list[str] = field(default_factory=list)
    doc: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)

    def number_in_doc(self, i: int) -> int:
        """1-based number of chunk ``i`` within its document."""
        return i - self.first[self.doc[i]] + 1

    def overlapping(self, d: int, start: int, end: int) -> range:
        """Global indices of document ``d``'s chunks overlapping ``[start, end)``."""
        lo, hi = self.first[d], self.first[d + 1]
        a = bisect.bisect_right(self.ends, start, lo, hi)
        b = bisect.bisect_left(self.starts, end, lo, hi)
        return range(a, max(a, b))


def chunk_corpus(spec: ChunkerSpec, documents: dict[str, str], chunker=None, progress=None) -> Chunks:
    """Chunk every document (dict order) with ``spec``'s chonkie chunker.

    Args:
        chunker: a ready chunker (default ``make_chunker(spec)``).
        progress: called with (documents done, documents) after each document.
    """
    chunker = chunker if chunker is not None else make_chunker(spec)
    out = Chunks(spec, library_versions(), list(documents), [])
    for d, (key, text) in enumerate(documents.items()):
        out.first.append(len(out.texts))
        if text:
            for c in chunker.chunk(text):
                out.texts.append(c.text)
                out.doc.append(d)
                out.starts.append(int(c.start_index))
                out.ends.append(int(c.end_index))
        if progress is not None:
            progress(d + 1, len(documents))
    out.first.append(len(out.texts))
    return out
