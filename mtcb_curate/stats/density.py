"""Evidence density: how long each pair's evidence (its supporting passage) is, in words, in
sentences, and as a share of each configured chunk size.

HiCBench (the HiChunk paper, "evidence sparsity"; its Table 1) measures the average word and
sentence count of each QA set's evidence, and calls a question **evidence-sparse** when its
evidence is one or two sentences: on such sets very different chunkers score almost alike
(``shared/notes/mtcb.md``). The same figures here:

- words: whitespace-separated words (``str.split()``, as ``wc -w`` counts them);
- sentences: nupunkt's Punkt sentence splitter (``nupunkt.sent_tokenize``: the Punkt algorithm
  of Kiss & Strunk 2006 with a model trained on legal and financial English, shipped inside its
  wheel, so it runs offline; nltk's own Punkt needs its ``punkt_tab`` data downloaded, which
  cannot be done here). A table or a list without full stops counts as one sentence;
- share of a chunk size: the passage's length in the chunker's unit (characters for
  ``recursive``, ``cl100k_base`` tokens for ``token`` and ``sentence``) over the chunk size; over
  1.0 no chunk of that size can hold it.

Shapes: :func:`density_summary` gives ``{"pairs", "splitter", "words": {"mean", "min", "p25",
"p50", "p75", "p95", "max"}, "sentences": {same}, "sentence_counts": {"0", "1", "2", "3-5", "6-10",
"11+": pairs}, "sparse": pairs with 1-2 sentences, "sparse_share", "chunkers": [{"chunker",
"unit", "size", "share": {same percentiles}, "over_half": pairs over half a chunk,
"over_chunk": pairs longer than a chunk}]}``. No Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata

import numpy as np

#: HiCBench's evidence-sparse questions: evidence of at most this many sentences.
SPARSE_MAX_SENTENCES = 2
#: The sentence-count bins of ``sentence_counts``: (label, low, high inclusive; None open).
SENTENCE_BINS: tuple[tuple[str, int, int | None], ...] = (("0", 0, 0), ("1", 1, 1), ("2", 2, 2), ("3-5", 3, 5),
                                                          ("6-10", 6, 10), ("11+", 11, None))
_PERCENTILES = (("p25", 25), ("p50", 50), ("p75", 75), ("p95", 95))


def count_words(text: str) -> int:
    """Whitespace-separated words of ``text``."""
    return len(text.split())


@lru_cache(maxsize=1)
def _splitter():
    import nupunkt

    return nupunkt.sent_tokenize


def splitter_name() -> str:
    """``"nupunkt 0.8.0"``: the sentence splitter and its version (reported with the figures)."""
    try:
        return f"nupunkt {metadata.version('nupunkt')}"
    except metadata.PackageNotFoundError:
        return "nupunkt (absent)"


def count_sentences(text: str) -> int:
    """Sentences of ``text`` by nupunkt's Punkt splitter (0 for a blank text)."""
    if not text.strip():
        return 0
    return sum(1 for s in _splitter()(text) if s.strip())


def evidence_counts(passages: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(words, sentences) of each passage, as int64 arrays (each distinct passage split once)."""
    words = np.fromiter((count_words(p) for p in passages), dtype=np.int64, count=len(passages))
    seen: dict[str, int] = {}
    sent = np.empty(len(passages), dtype=np.int64)
    for j, p in enumerate(passages):
        n = seen.get(p)
        if n is None:
            n = seen[p] = count_sentences(p)
        sent[j] = n
    return words, sent


def _summary(values: np.ndarray) -> dict[str, float | None]:
    if not len(values):
        return {"mean": None, "min": None, **{k: None for k, _ in _PERCENTILES}, "max": None}
    v = values.astype(float)
    q = np.percentile(v, [p for _, p in _PERCENTILES])
    return {"mean": round(float(v.mean()), 2), "min": float(v.min()),
            **{k: round(float(x), 3) for (k, _), x in zip(_PERCENTILES, q)}, "max": float(v.max())}


def density_summary(words: np.ndarray, sentences: np.ndarray | None,
                    chunkers: Sequence[tuple[str, str, int, np.ndarray]] = ()) -> dict:
    """The set's evidence density (shape in the module docstring).

    Args:
        words, sentences: per pair (``evidence_counts``); ``sentences`` None when not counted
            yet (its figures are then None).
        chunkers: (spec text, unit ``chars``/``tokens``, chunk size, each passage's length in
            that unit) per configured chunker.
    """
    n = int(len(words))
    out: dict = {"pairs": n, "splitter": splitter_name(), "words": _summary(np.asarray(words))}
    if sentences is None:
        out.update(sentences=None, sentence_counts=None, sparse=None, sparse_share=None)
    else:
        s = np.asarray(sentences)
        out["sentences"] = _summary(s)
        out["sentence_counts"] = {label: int(((s >= lo) & (s <= hi if hi is not None else True)).sum())
                                  for label, lo, hi in SENTENCE_BINS}
        sparse = int(((s >= 1) & (s <= SPARSE_MAX_SENTENCES)).sum())
        out["sparse"], out["sparse_share"] = sparse, (sparse / n if n else None)
    rows = []
    for spec, unit, size, lengths in chunkers:
        share = np.asarray(lengths, dtype=float) / float(size)
        rows.append({"chunker": spec, "unit": unit, "size": int(size), "share": _summary(share),
                     "over_half": int((share > 0.5).sum()), "over_chunk": int((share > 1.0).sum())})
    out["chunkers"] = rows
    return out


def pair_density(passage: str, chunkers: Sequence[tuple[str, int, int]]) -> dict:
    """One pair's ``{"words", "sentences", "share": {spec: length / size}}``; ``chunkers``:
    (spec text, chunk size, the passage's length in that chunker's unit)."""
    return {"words": count_words(passage), "sentences": count_sentences(passage),
            "share": {spec: round(length / size, 4) for spec, size, length in chunkers}}


def density_lines(d: dict) -> list[str]:
    """Plain lines for the text report and the statistics screen: the HiCBench Table 1 figures
    (mean words and sentences), the evidence-sparse share, and the share of each chunk size."""
    if not d or not d.get("pairs"):
        return ["no pair"]
    w = d["words"]
    out = [f"evidence length: {w['mean']:,.1f} words on average (median {w['p50']:,.0f}, p95 {w['p95']:,.0f})"]
    if d["sentences"] is None:
        out.append("sentences: being counted…")
    else:
        s = d["sentences"]
        out.append(f"sentences: {s['mean']:,.2f} on average (median {s['p50']:,.0f}, max {s['max']:,.0f}); "
                   f"evidence-sparse (1-2 sentences): {d['sparse']:,} of {d['pairs']:,} pairs "
                   f"({d['sparse_share']:.1%})")
        out.append("sentences per passage: " + ", ".join(f"{k}: {v:,}" for k, v in d["sentence_counts"].items()))
    for c in d["chunkers"]:
        sh = c["share"]
        out.append(f"share of {c['chunker']} ({c['size']:,} {c['unit']}): median {sh['p50']:.1%}, p95 {sh['p95']:.1%}; "
                   f"{c['over_half']:,} over half a chunk, {c['over_chunk']:,} longer than a chunk")
    out.append(f"sentences split by {d['splitter']}; words split at whitespace")
    return out
