"""Where passages lie under the configured chunkers, from the preview cache only.

For the ``findable`` check and the app's findability line: per pair and per chunker, ``fits``
(some chunk holds the passage), ``cut`` (it occurs in the corpus but no chunk holds it: cut by
a boundary, or longer than the chunk), ``absent`` (not in the corpus) or None (not evaluated:
no preview has chunked this corpus with that chunker). Nothing is chunked here: the per-pair
results of an earlier preview are read, and for a pair they lack, the cached chunks of its own
document (and of the other documents verification found it in) are scanned with ``str.find``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mtcb_curate.dataset.model import corpus_fingerprint
from mtcb_curate.preview import cache as pcache
from mtcb_curate.preview.chunkers import ChunkerSpec, Chunks, library_versions
from mtcb_curate.preview.retrievers import retriever_version
from mtcb_curate.preview.scoring import TOP_MIN

FITS, CUT, ABSENT = "fits", "cut", "absent"


def chunks_name(fp: str, spec: ChunkerSpec) -> str:
    """The cache name of ``spec``'s chunks of the corpus with fingerprint ``fp``."""
    return "chunks-" + pcache.key(fp, spec.text, library_versions())


def memo_name(fp: str, spec: ChunkerSpec, retriever: str, ks: Sequence[int]) -> str:
    """The cache name of the per-pair results for one corpus, chunker, retriever and top length."""
    return "pairs-" + pcache.key(fp, spec.text, library_versions(), retriever, retriever_version(retriever),
                                 max(max(ks), TOP_MIN))


def index_name(fp: str, spec: ChunkerSpec, versions: dict[str, str], retriever: str) -> str:
    """The cache name of the retriever fitted on ``spec``'s chunks (``versions``: the chunks'
    ``library_versions``) of the corpus with fingerprint ``fp``."""
    return "index-" + pcache.key(fp, spec.text, versions, retriever, retriever_version(retriever))


def has_cache(cache_dir: Path | None) -> bool:
    """A preview cache folder exists under the workspace folder ``cache_dir``."""
    return cache_dir is not None and (Path(cache_dir) / pcache.FOLDER).is_dir()


def place_in_chunks(chunks: Chunks, passage: str, documents: Mapping[str, str], keys: Iterable[str]) -> str:
    """``FITS``, ``CUT`` or ``ABSENT`` for ``passage`` in the documents ``keys`` (str.find)."""
    pos = {k: d for d, k in enumerate(chunks.doc_keys)}
    found = False
    for key in keys:
        d, text = pos.get(key), documents.get(key)
        if d is None or not text or not passage:
            continue
        o = text.find(passage)
        while o >= 0:
            found = True
            if any(passage in chunks.texts[i] for i in chunks.overlapping(d, o, o + len(passage))):
                return FITS
            o = text.find(passage, o + 1)
    return CUT if found else ABSENT


def cached_placements(documents: Mapping[str, str], items: Sequence[tuple[int, str, str, Sequence[str]]],
                      specs: Sequence[ChunkerSpec], retriever: str, ks: Sequence[int],
                      cache_dir: Path | None) -> dict[int, dict[str, str | None]] | None:
    """pair id -> {spec text: ``FITS`` / ``CUT`` / ``ABSENT`` / None (not evaluated)}, or None
    when no preview cache exists for this workspace (nothing is read or computed then).

    Args:
        items: (pair id, question, passage, document keys to look in: its own first, then the
            others verification found it in).
    """
    if not has_cache(cache_dir):
        return None
    store = pcache.PreviewCache(cache_dir)
    fp = corpus_fingerprint(dict(documents))
    out: dict[int, dict[str, str | None]] = {pid: {} for pid, *_ in items}
    for spec in specs:
        memo = store.get(memo_name(fp, spec, retriever, ks))
        memo = memo if isinstance(memo, dict) else {}
        chunks = None
        loaded = False
        for pid, question, passage, keys in items:
            got = memo.get((question, passage))
            if got is not None:
                fits, cut = got[0], got[1]
                out[pid][spec.text] = FITS if fits is not None else CUT if cut is not None else ABSENT
                continue
            if not loaded:
                c = store.get(chunks_name(fp, spec))
                chunks, loaded = (c if isinstance(c, Chunks) else None), True
            out[pid][spec.text] = place_in_chunks(chunks, passage, documents, keys) if chunks is not None else None
    return out
