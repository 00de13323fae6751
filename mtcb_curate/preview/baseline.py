"""Baseline scores for the dataset card, from an existing preview cache only.

``cached_scores`` gives MTCB's recall@k, MRR@k and ceiling per configured chunker over the
given pairs from the per-pair results an earlier preview cached (``mtcb-curate preview`` or the
app's ``F``). Pairs the cache lacks (edited since) are scored only when that chunker's chunks
and fitted retriever are cached too; otherwise the chunker is left out. Nothing is chunked or
indexed here: a publish never runs a cold preview unasked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from mtcb_curate.dataset.model import corpus_fingerprint
from mtcb_curate.preview import cache as pcache
from mtcb_curate.preview.chunkers import ChunkerSpec, Chunks, library_versions
from mtcb_curate.preview.placement import chunks_name, has_cache, index_name, memo_name
from mtcb_curate.preview.retrievers import retriever_version
from mtcb_curate.preview.scoring import ChunkerScore, Item, corpus_occurrences, fill_memo, summarize

#: The memo entry holding the number of chunks (as ``app.preview.score_spec`` writes it).
N_CHUNKS_KEY = ("", "\0n_chunks")


def cached_scores(documents: Mapping[str, str], items: Sequence[Item], specs: Sequence[ChunkerSpec],
                  retriever: str, ks: Sequence[int], cache_dir: Path | None, index=None) -> list[ChunkerScore]:
    """One ``ChunkerScore`` per chunker of ``specs`` whose results for every item are in the
    preview cache under ``cache_dir`` (the workspace folder), or can be completed from its
    cached chunks and index; [] when there is no cache or no item.

    Args:
        index: a ``verify.CorpusIndex`` over ``documents`` to reuse for the passages' exact
            occurrences (only when a pair must be scored).
    """
    if not items or not has_cache(cache_dir):
        return []
    store = pcache.PreviewCache(cache_dir)
    documents = dict(documents)
    fp = corpus_fingerprint(documents)
    versions = {**library_versions(), ("bm25s" if retriever == "bm25" else "wordllama"): retriever_version(retriever)}
    ks = tuple(sorted(set(int(k) for k in ks)))
    out = []
    for spec in specs:
        name = memo_name(fp, spec, retriever, ks)
        memo = store.get(name)
        memo = memo if isinstance(memo, dict) else {}
        todo = [it for it in items if (it.question, it.passage) not in memo]
        n_chunks = memo.get(N_CHUNKS_KEY)
        if todo or n_chunks is None:
            chunks = store.get(chunks_name(fp, spec))
            if not isinstance(chunks, Chunks):
                continue
            fitted = store.get(index_name(fp, spec, chunks.versions, retriever))
            if fitted is None:
                continue
            if todo:
                fill_memo(chunks, fitted, todo, corpus_occurrences(documents, todo, index), memo, top_k=max(ks))
            n_chunks = memo[N_CHUNKS_KEY] = len(chunks)
            store.put(name, memo)
        out.append(summarize(spec.text, retriever, items, ks, memo, versions, n_chunks))
    return out
