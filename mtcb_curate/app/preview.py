"""The findability preview workflow: MTCB's scores on the current pairs, per chunker.

``run_preview`` takes the session's current passages and questions (edits applied), chunks the
corpus with each chunker (cached in the workspace), fits the retriever on all chunks of all
documents (cached), and scores with MTCB's rule (``preview.scoring``). Over the same pairs it
adds the evidence density (``stats.density``) and whether the pairs tell the chunkers apart
(``preview.separation``: per-pair discrimination, paired bootstrap intervals, McNemar tests,
pairs needed). ``mtcb-curate preview`` and the app call it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import InputError
from mtcb_curate.preview import cache as pcache
from mtcb_curate.preview.chunkers import ChunkerSpec, Chunks, chunk_corpus, library_versions
from mtcb_curate.preview.retrievers import LEXICAL_NOTE, make_retriever, retriever_version
from mtcb_curate.preview.placement import chunks_name, index_name, memo_name
from mtcb_curate.preview.settings import SeparationSettings
from mtcb_curate.preview.scoring import (ChunkerScore, Item, Memo, corpus_occurrences, fill_memo,
                                        summarize)
from mtcb_curate.preview.separation import Separation
from mtcb_curate.stats.density import density_lines
from mtcb_curate.store.session import ReviewSession


@dataclass
class PreviewReport:
    """Every chunker's ``ChunkerScore`` over the same pairs, with what was run."""

    dataset: str
    retriever: str
    ks: tuple[int, ...]
    pairs: int
    which: str  # "accepted" or "all"
    scores: list[ChunkerScore] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    cached: list[str] = field(default_factory=list)
    #: The evidence density of the pairs (``stats.density.density_summary``) and per pair
    #: (``pair_density``, in ``items`` order), or None when the statistics were not asked for.
    evidence: dict | None = None
    evidence_pairs: list[dict] = field(default_factory=list)
    #: Whether the pairs tell the chunkers apart (``preview.separation``), or None.
    separation: Separation | None = None

    @property
    def note(self) -> str:
        return LEXICAL_NOTE if self.retriever == "bm25" else \
            "wordllama is a small static-embedding model, far weaker than the models MTCB is run with"

    def versions_line(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.versions.items())

    def table(self) -> str:
        """The plain-text table the command prints."""
        head = (f"{'chunker':<16}{'chunks':>8}  " + "".join(f"{'R@' + str(k):>7}" for k in self.ks)
                + "".join(f"{'MRR@' + str(k):>8}" for k in self.ks) + f"{'ceiling':>9}{'too long':>10}")
        lines = [f"{self.dataset}: {self.pairs:,} {self.which} pairs, retriever {self.retriever}", head]
        for s in self.scores:
            lines.append(f"{s.spec:<16}{s.n_chunks:>8,}  " + "".join(f"{s.recall[k]:>7.1%}" for k in self.ks)
                         + "".join(f"{s.mrr[k]:>8.3f}" for k in self.ks) + f"{s.ceiling:>9.1%}{s.too_long:>10,}")
        lines.append(f"versions: {self.versions_line()}")
        lines.append(f"note: {self.note}")
        if self.evidence is not None:
            lines += ["", "evidence density (HiCBench):"] + ["  " + x for x in density_lines(self.evidence)]
        if self.separation is not None:
            lines += ["", self.separation_title()]
            lines += ["  " + x for x in self.separation_table()]
            lines += ["  " + x for x in self.separation.lines()]
            lines += ["  " + x for x in self.pair_lists()]
            lines.append(f"  {self.method_line()}")
        return "\n".join(lines)

    def separation_title(self) -> str:
        sep = self.separation
        return (f"does this set separate the chunkers? ({sep.pairs:,} pairs, retriever {sep.retriever}, "
                f"paired bootstrap {sep.resamples:,} resamples seed {sep.seed}, exact McNemar):")

    def separation_table(self) -> list[str]:
        """Per two chunkers at each k: the recall difference in points, its interval, the
        discordant pairs (a only / b only), McNemar's p and the pairs needed."""
        sep = self.separation
        if sep is None or not sep.comparisons:
            return ["fewer than two chunkers: nothing to compare"]
        head = (f"{'chunker a':<16}{'chunker b':<16}{'k':>4}{'diff':>7}{'95 % CI':>16}{'a only':>8}{'b only':>8}"
                f"{'McNemar p':>11}{'need':>9}")
        out = [head]
        for c in sep.comparisons:
            ci = f"{100 * c.ci_low:.1f} to {100 * c.ci_high:.1f}"
            need = "-" if c.needed is None else f"{c.needed:,}"
            out.append(f"{c.a:<16}{c.b:<16}{c.k:>4}{100 * c.difference:>+7.1f}{ci:>16}{c.a_only:>8,}{c.b_only:>8,}"
                       f"{c.mcnemar_p:>11.3g}{need:>9}")
        out.append(f"diff and CI in points of recall@k; need: pairs to detect {sep.detect:g} points at "
                   f"{sep.power:.0%} power (this set: {sep.pairs:,})")
        return out

    def pair_lists(self, limit: int = 20) -> list[str]:
        """The pairs every chunker finds and those none finds (ids, at most ``limit`` each)."""
        from mtcb_curate.preview.separation import FOUND_BY_ALL, FOUND_BY_NONE

        sep = self.separation
        out = []
        for flag, what in ((FOUND_BY_NONE, "found by no chunker (check them: often a bad pair)"),
                           (FOUND_BY_ALL, "found by every chunker (they only add to everyone's score)")):
            ids = sep.with_flag(flag)
            shown = ", ".join(f"#{i}" for i in ids[:limit]) + (f" and {len(ids) - limit:,} more" if len(ids) > limit
                                                               else "")
            out.append(f"{what}: {len(ids):,}" + (f" ({shown})" if ids else ""))
        return out

    def method_line(self) -> str:
        return ("method: docs/chunker-separation.md (bootstrap: Efron 1987; McNemar 1947, exact binomial; "
                "pairs needed: Connor 1987; evidence density: HiCBench)")

    def to_markdown(self) -> str:
        head = ("| chunker | retriever | chunks | " + " | ".join(f"recall@{k}" for k in self.ks) + " | "
                + " | ".join(f"MRR@{k}" for k in self.ks) + " | ceiling | longer than chunk |")
        sep = "|" + "---|" * (5 + 2 * len(self.ks))
        rows = [f"| {s.spec} | {s.retriever} | {s.n_chunks:,} | " + " | ".join(f"{s.recall[k]:.1%}" for k in self.ks)
                + " | " + " | ".join(f"{s.mrr[k]:.3f}" for k in self.ks) + f" | {s.ceiling:.1%} | {s.too_long:,} |"
                for s in self.scores]
        out = [f"{self.pairs:,} {self.which} pairs of {self.dataset}.", "", head, sep, *rows, "",
               f"Versions: {self.versions_line()}. {self.note}.", ""]
        if self.separation is not None or self.evidence is not None:
            from mtcb_curate.hub.card import separation_markdown

            out += [separation_markdown(self.separation.to_json() if self.separation is not None else None,
                                        self.evidence, heading="##", scope=f"{self.which} pairs"), ""]
        return "\n".join(out)

    def to_json(self) -> dict:
        return {"dataset": self.dataset, "retriever": self.retriever, "k": list(self.ks), "pairs": self.pairs,
                "which": self.which, "versions": self.versions, "note": self.note, "seconds": self.seconds,
                "chunkers": [s.to_dict() for s in self.scores],
                "evidence": None if self.evidence is None else {**self.evidence, "per_pair": self.evidence_pairs},
                "separation": None if self.separation is None else self.separation.to_json()}


def preview_items(session: ReviewSession, *, all_pairs: bool) -> list[Item]:
    """The pairs to score: accepted ones, or every pair (``all_pairs``), with current texts."""
    ids = session.ids() if all_pairs else session.ids(Status.ACCEPTED)
    out = []
    for pid in ids:
        v = session.view(pid)
        out.append(Item(pid, v.question, v.passage, v.pair.doc_key))
    return out


def load_chunks(spec: ChunkerSpec, documents: dict[str, str], store: pcache.PreviewCache, fingerprint: str,
                progress: Callable[[str], None] | None = None) -> tuple[Chunks, bool]:
    """Chunks for ``spec`` from the cache, else chunked and stored; (chunks, from_cache)."""
    name = chunks_name(fingerprint, spec)
    got = store.get(name)
    if isinstance(got, Chunks):
        return got, True
    if progress:
        progress(f"chunking with {spec.text}")
    chunks = chunk_corpus(spec, documents)
    store.put(name, chunks)
    return chunks, False


def load_index(chunks: Chunks, retriever: str, store: pcache.PreviewCache, fingerprint: str,
               progress: Callable[[str], None] | None = None):
    """The retriever fitted on ``chunks`` from the cache, else fitted and stored; (index, from_cache)."""
    name = index_name(fingerprint, chunks.spec, chunks.versions, retriever)
    got = store.get(name)
    if got is not None:
        return got, True
    r = make_retriever(retriever)
    if progress:
        progress(f"indexing {len(chunks):,} chunks ({retriever})")
    r.fit(chunks.texts)
    store.put(name, r)
    return r, False


def run_preview(session: ReviewSession, specs: Sequence[ChunkerSpec], *, retriever: str = "bm25",
                ks: Sequence[int] = (1, 3, 5, 10), all_pairs: bool = False, cache_dir: Path | None = None,
                progress: Callable[[str], None] | None = None, statistics: bool = True,
                separation: SeparationSettings | None = None) -> PreviewReport:
    """MTCB's scores on the session's pairs for each chunker (see the module docstring).

    Args:
        all_pairs: every pair instead of the accepted ones.
        cache_dir: the workspace folder (None: no cache).
        statistics: add the evidence density and the chunker separation (``report.evidence``,
            ``report.separation``); False: the scores alone.
        separation: the bootstrap's seed and resamples and the pairs-needed target (default
            ``SeparationSettings()``).

    Raises:
        InputError: the corpus is empty (no document has text), no pair to score, or
            ``retriever`` is unknown or needs the missing ``dense`` extra.
    """
    t0 = time.perf_counter()
    documents = {k: d.text for k, d in session.dataset.documents.items()}
    if not any(documents.values()):
        raise InputError("corpus", "the corpus is empty: no document has text to chunk")
    items = preview_items(session, all_pairs=all_pairs)
    if not items:
        raise InputError("questions", "no accepted pair to score (review some, or pass --all)"
                         if not all_pairs else "no pair to score")
    make_retriever(retriever) if retriever != "bm25" else None  # a missing extra fails before any work
    store = pcache.PreviewCache(cache_dir)
    fp = session.corpus_fingerprint
    report = PreviewReport(session.dataset.name, retriever, tuple(sorted(set(ks))), len(items),
                           "all" if all_pairs else "accepted",
                           versions={**library_versions(), ("bm25s" if retriever == "bm25" else "wordllama"):
                                     retriever_version(retriever)})
    occ = Occurrences(documents, session.corpus_index)
    for spec in specs:
        report.scores.append(score_spec(spec, documents, items, report.ks, retriever, store, fp, occ,
                                        report.versions, report.cached, progress))
    if statistics:
        add_statistics(report, items, specs, separation or SeparationSettings(), progress)
    report.seconds = time.perf_counter() - t0
    return report


def evidence_of(items: Sequence[Item], specs: Sequence[ChunkerSpec]) -> tuple[dict, list[dict]]:
    """The evidence density of ``items``' passages (``stats.density``): the summary, with each
    chunker's share of its chunk size, and one ``{"pair_id", "words", "sentences", "share"}``
    per item."""
    import numpy as np

    from mtcb_curate.preview.chunkers import passage_size
    from mtcb_curate.stats.density import density_summary, evidence_counts

    passages = [it.passage for it in items]
    words, sentences = evidence_counts(passages)
    specs = list(dict.fromkeys(specs))
    by_unit = {s.unit: s for s in specs}  # one count per unit (characters, cl100k tokens)
    counted = {u: np.array([passage_size(s, p) for p in passages], dtype=np.int64) for u, s in by_unit.items()}
    lengths = {s.text: counted[s.unit] for s in specs}
    summary = density_summary(words, sentences, [(s.text, s.unit, s.size, lengths[s.text]) for s in specs])
    per_pair = [{"pair_id": it.pair_id, "words": int(words[j]), "sentences": int(sentences[j]),
                 "share": {s.text: round(int(lengths[s.text][j]) / s.size, 4) for s in specs}}
                for j, it in enumerate(items)]
    return summary, per_pair


def add_statistics(report: PreviewReport, items: Sequence[Item], specs: Sequence[ChunkerSpec],
                   settings: SeparationSettings, progress: Callable[[str], None] | None = None) -> None:
    """Fill in ``report.evidence`` / ``evidence_pairs`` and ``report.separation`` from its scores."""
    from mtcb_curate.preview.separation import separate_scores

    if progress:
        progress("evidence density and chunker separation")
    report.evidence, report.evidence_pairs = evidence_of(items, specs)
    report.separation = separate_scores(report.scores, report.ks, seed=settings.seed, resamples=settings.resamples,
                                        detect=settings.detect, power=settings.power)


class Occurrences:
    """``occurrences(item)`` for ``preview.scoring``, found for the items asked about only, once
    per (pair id, passage) (one corpus pass per ``need`` call)."""

    def __init__(self, documents: dict[str, str], index=None):
        self.documents, self.index = documents, index
        self.found: dict[tuple[int, str], list[tuple[int, int]]] = {}

    def need(self, items: Sequence[Item]) -> None:
        todo = [it for it in items if (it.pair_id, it.passage) not in self.found]
        if todo:
            occ = corpus_occurrences(self.documents, todo, self.index)
            for it in todo:
                self.found[(it.pair_id, it.passage)] = occ(it)

    def __call__(self, it: Item) -> list[tuple[int, int]]:
        return self.found.get((it.pair_id, it.passage), [])


def score_spec(spec: ChunkerSpec, documents: dict[str, str], items: Sequence[Item], ks: Sequence[int],
               retriever: str, store: pcache.PreviewCache, fp: str, occ: "Occurrences",
               versions: dict[str, str], cached: list[str] | None = None,
               progress: Callable[[str], None] | None = None) -> ChunkerScore:
    """One chunker's scores: the per-pair results cached for (corpus, spec, versions,
    retriever, question, passage) are reused; only the others load the chunks and the index
    and are scored (as one batch). Appends ``spec.text`` to ``cached`` when nothing was chunked,
    fitted or scored."""
    name = memo_name(fp, spec, retriever, ks)
    got = store.get(name)
    memo: Memo = got if isinstance(got, dict) else {}
    todo = [it for it in items if (it.question, it.passage) not in memo]
    n_chunks = memo.get(("", "\0n_chunks"))
    if not todo and n_chunks is not None:
        if cached is not None:
            cached.append(spec.text)
        return summarize(spec.text, retriever, items, ks, memo, versions, n_chunks)
    chunks, c1 = load_chunks(spec, documents, store, fp, progress)
    index, c2 = load_index(chunks, retriever, store, fp, progress)
    if c1 and c2 and not todo and cached is not None:
        cached.append(spec.text)
    occ.need(todo)
    if progress and todo:
        progress(f"scoring {len(todo):,} questions ({spec.text})")
    fill_memo(chunks, index, todo, occ, memo, top_k=max(ks))
    memo[("", "\0n_chunks")] = len(chunks)
    store.put(name, memo)
    return summarize(spec.text, retriever, items, ks, memo, versions, len(chunks))
