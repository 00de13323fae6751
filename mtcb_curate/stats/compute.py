"""The statistics of a review session's pairs, aggregated with pandas.

:func:`compute_stats` gives a :class:`Stats`: plain JSON-ready values (``to_json``), which
``stats.render`` turns into text tables and Markdown, and the statistics screen into plots.

Shapes (all counts are pairs of the chosen subset unless said otherwise):

- ``scope``: ``{"dataset", "pairs", "subset"}`` (``subset``: True when ids were given);
- ``coverage``: ``{"documents", "documents_without_pairs": [keys], "unlinked_pairs",
  "windows", "windows_without_pairs", "unplaced_pairs", "window_tokens", "by_position":
  [{"from", "windows", "without_pairs", "pairs"}] (ten parts along the documents, ``from`` 0.0,
  0.1, ...: window i of n in part floor(10 i / n)),
  "per_document": [{"doc", "pairs", "windows", "per_window": [n, ...]}]}``; a pair is placed
  in the first 8,192-token window (``dataset.tokens``) holding the START of its located passage
  (character offset from the verification); ``windows`` is None for a document whose windows
  were not available (``build_windows=False`` and not cached);
- ``length``: ``{"chars"|"tokens": {"edges", "counts", "percentiles": {"min", "p5", "p25",
  "p50", "p75", "p95", "max", "mean"}, "marks": [{"value", "label", "bin"}], "longer_than": {size: n}}, "chunk_sizes", "limits":
  {"min_chars", "max_chars"} or None}``; ``edges`` are histogram bin edges (the last bin is open,
  ``edges[-1]`` is None), ``counts[i]`` pairs in ``[edges[i], edges[i+1])``; ``marks`` are the
  chunk sizes (both units) and the ``[checklist]`` limits (characters) when given, each with
  the bin holding it;
- ``forms`` / ``types``: name -> count, every name of ``FORMS`` / ``TYPES`` present;
- ``verdicts``, ``statuses``, ``rejection_reasons``: name -> count;
- ``checklist``: ``[{"id", "status", "pairs"}]`` from a given report (pairs in the subset), or
  None;
- ``edits``: kind -> history entries not undone (``hand``, ``snap``, ``trim``, ``select``,
  ``shrink``, ``regenerate``, ``chunk_index``, ``added``, ...);
- ``pace``: ``{"decisions", "first", "last" (Unix seconds or None), "per_day": [{"day", "decisions"}],
  "rate_per_hour"}`` (days in UTC, empty days filled, at most the last 60);
- ``llm``: ``{"recorded": False}`` or ``{"recorded": True, "calls", "prompt_tokens",
  "completion_tokens", "cost_usd"}`` (None without prices);
- ``balance``: one line per target missed (``stats.targets``);
- ``pending``: ``{"verdicts", "tokens", "tags"}``: pairs left unverified (``verify=False``: not
  in ``verdicts``, not placed in a window), passages left uncounted (``count_tokens=False``:
  their sentences are not counted, and ``length.tokens`` is None when some tokens are not cached) and questions left untagged (``tag=False``: not in ``forms``
  and ``types``; ``balance`` empty); all 0 otherwise;
- ``findability``: the findability preview's saved scores per chunker (``app.stats.findability``
  fills it in; ``{"run": False}`` here);
- ``llm_tags``: the LLM's question forms and types saved in the workspace's LLM cache
  (``app.stats.llm_tags`` fills it in; ``{"tagged": 0}`` here);
- ``evidence``: the evidence density of the passages (``stats.density.density_summary``: words,
  sentences, the evidence-sparse share, the share of each configured chunk size); sentences
  and token shares are None / left out while ``count_tokens`` is False (``pending.tokens``);
- ``separation``: whether the pairs tell the configured chunkers apart, from the preview's
  saved per-pair results (``app.stats.separation`` fills it in; ``{"run": False}`` here).
"""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from operator import attrgetter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mtcb_curate.dataset.model import PASSAGE_FIELD, DocumentBytes, HistoryKind, Status
from mtcb_curate.dataset.tokens import WINDOW_TOKENS
from mtcb_curate.stats.questions import FORMS, TYPES, question_form, question_type
from mtcb_curate.stats.targets import Targets, balance_problems
from mtcb_curate.stats.windows import corpus_window_spans

if TYPE_CHECKING:
    from mtcb_curate.store.session import ReviewSession
    from mtcb_curate.verify.verdict import PairResult

#: Threads that count passage tokens (at most the CPUs; one below 1,000 passages).
TOKEN_THREADS = 2
#: Common chunk sizes marked on the length histograms (characters on one, tokens on the other).
CHUNK_SIZES: tuple[int, ...] = (256, 512, 1024, 2048)
#: Histogram bin edges (left-closed; an open last bin above the last edge).
CHAR_EDGES: tuple[int, ...] = (0, 32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 4096)
TOKEN_EDGES: tuple[int, ...] = (0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
#: Percentiles reported, as (name, fraction).
PERCENTILES: tuple[tuple[str, float], ...] = (("p5", .05), ("p25", .25), ("p50", .5), ("p75", .75), ("p95", .95))
#: Days shown in ``pace.per_day`` (the latest ones).
MAX_PACE_DAYS = 60


@dataclass
class Stats:
    """The statistics (shapes in the module docstring)."""

    scope: dict[str, Any]
    coverage: dict[str, Any]
    length: dict[str, Any]
    forms: dict[str, int]
    types: dict[str, int]
    verdicts: dict[str, int]
    statuses: dict[str, int]
    rejection_reasons: dict[str, int]
    checklist: list[dict[str, Any]] | None
    edits: dict[str, int]
    pace: dict[str, Any]
    llm: dict[str, Any]
    balance: list[str] = field(default_factory=list)
    seconds: float = 0.0
    pending: dict[str, int] = field(default_factory=lambda: {"verdicts": 0, "tokens": 0, "tags": 0})
    findability: dict[str, Any] = field(default_factory=lambda: {"run": False})
    llm_tags: dict[str, Any] = field(default_factory=lambda: {"tagged": 0})
    evidence: dict[str, Any] = field(default_factory=dict)
    separation: dict[str, Any] = field(default_factory=lambda: {"run": False})

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON-ready values (``longer_than`` keys become strings)."""
        out = asdict(self)
        for unit in ("chars", "tokens"):
            if out["length"][unit] is None:
                continue
            lt = out["length"][unit]["longer_than"]
            out["length"][unit]["longer_than"] = {str(k): v for k, v in lt.items()}
        return out


def count_passage_tokens(texts: list[str]) -> list[int]:
    """``cl100k_base`` tokens of each of ``texts`` (``dataset.tokens``; each distinct text
    encoded once, one ``encode_ordinary`` per text: the batch call's thread pool costs more
    than it saves on short passages). Loads the tokenizer the first time in a process."""
    from mtcb_curate.dataset.tokens import encoding

    encode = encoding().encode_ordinary
    counted: dict[str, int] = {}
    out = []
    for t in texts:
        n = counted.get(t)
        if n is None:
            n = counted[t] = len(encode(t))
        out.append(n)
    return out


def _histogram(values: np.ndarray, edges: tuple[int, ...], marks: Iterable[tuple[int, str]] = ()) -> dict[str, Any]:
    e = list(edges)
    counts = np.histogram(values, bins=np.array(e + [np.inf], dtype=float))[0] if len(values) else np.zeros(len(e), int)
    s = pd.Series(values, dtype=float)
    pct: dict[str, float | None] = {"min": None, **{k: None for k, _ in PERCENTILES}, "max": None, "mean": None}
    if len(s):
        q = s.quantile([f for _, f in PERCENTILES])
        pct = {"min": float(s.min()), **{k: float(q[f]) for k, f in PERCENTILES}, "max": float(s.max()),
               "mean": round(float(s.mean()), 1)}
    return {"edges": e + [None], "counts": [int(c) for c in counts], "percentiles": pct,
            "marks": [{"value": v, "label": label, "bin": max(0, bisect_right(e, v) - 1)} for v, label in marks],
            "longer_than": {size: int((s > size).sum()) for size in CHUNK_SIZES}}


#: Parts of a document in ``coverage.by_position`` (tenths).
POSITION_BINS = 10


def _by_position(per_document: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Windows, windows without pairs and pairs by where the window sits along its document:
    window ``i`` of ``n`` falls in tenth ``floor(10 i / n)`` (its start's share of the windows)."""
    out = [{"from": k / POSITION_BINS, "windows": 0, "without_pairs": 0, "pairs": 0} for k in range(POSITION_BINS)]
    for d in per_document:
        pw = d["per_window"]
        for i, c in enumerate(pw or ()):
            b = out[i * POSITION_BINS // len(pw)]
            b["windows"] += 1
            b["pairs"] += c
            b["without_pairs"] += c == 0
    return out


def _place(spans: list[tuple[int, int]], starts: list[int], pos: int) -> int:
    """Index of the first window holding character ``pos`` (windows overlap)."""
    i = max(0, bisect_right(starts, pos) - 1)
    while i > 0 and pos < spans[i - 1][1]:
        i -= 1
    return i


def _place_all(spans: list[tuple[int, int]], positions: np.ndarray) -> np.ndarray:
    """:func:`_place` of each of ``positions`` at once: the first window holding a position is
    the first one ending after it (window ends never decrease), unless that one starts after it."""
    starts = np.fromiter((a for a, _ in spans), dtype=np.int64, count=len(spans))
    ends = np.fromiter((b for _, b in spans), dtype=np.int64, count=len(spans))
    last_starting = np.maximum(np.searchsorted(starts, positions, side="right") - 1, 0)
    return np.minimum(last_starting, np.searchsorted(ends, positions, side="right"))


def compute_stats(session: ReviewSession, ids: Iterable[int] | None = None, *,
                  results: Mapping[int, PairResult] | None = None,
                  passage_limits: tuple[int, int] | None = None, targets: Targets | None = None,
                  report: Any = None, windows_cache: Path | None = None, build_windows: bool = True,
                  llm_usage: tuple[int, int, int] | None = None,
                  prices: tuple[float, float] | None = None, located_cache: Path | None = None,
                  verify: bool = True, count_tokens: bool = True, tag: bool = True,
                  chunkers: Iterable[tuple[str, str, int]] = ()) -> Stats:
    """The statistics of ``session``'s pairs ``ids`` (default: every pair).

    Args:
        session: the review session (only read).
        ids: the subset (the review screen's current filter), or None for all pairs.
        results: pair id -> verification of its CURRENT passage (the app's scan); the pairs
            missing here are verified (exact and normalized, no fuzzy step).
        passage_limits: (min, max) passage characters marked on the histograms (the
            ``[checklist]`` limits, ``checks.Limits``), or None: not marked.
        targets: the target distributions (default: ``Targets()``).
        report: a checklist report (``checks.ChecklistReport``: ``.checks``, each with ``id``,
            ``status``, ``pairs``) to summarize, or None.
        windows_cache: folder of the on-disk window cache (``stats.windows``), or None.
        build_windows: tokenize documents whose windows are not cached (about 0.1 s per MB).
        llm_usage: (calls, prompt tokens, completion tokens) recorded in the workspace's LLM
            cache (``app.stats.llm_usage``), or None: not recorded.
        prices: (USD per 1M input tokens, per 1M output tokens) for the LLM cost, or None.
        located_cache: the on-disk cache file of per-pair figures (``stats.located``): read,
            and rewritten when pairs had to be verified or tokenized; None: no cache.
        verify: verify the pairs whose verdict is neither in ``results`` nor cached; with
            False they are left out of ``verdicts`` and of the windows (``pending.verdicts``
            counts them): the statistics screen's first, quick pass.
        count_tokens: count the passage tokens not cached (loads the tokenizer, about 0.3-1 s
            the first time in a process); with False and some not cached, ``length.tokens`` is
            None (``pending.tokens`` counts them).
        tag: tag the questions whose form and type are not cached (``stats.questions``, about
            45 µs a pair); with False those are left out of ``forms`` and ``types``
            (``pending.tags`` counts them) and ``balance`` is empty.
        chunkers: (spec text, unit ``chars``/``tokens``, chunk size) of the configured
            chunkers, for the evidence density's share of each chunk size.
    """
    t0 = time.perf_counter()
    from mtcb_curate.verify import verify_dataset

    targets = targets or Targets()
    n_all = len(session)
    subset = ids is not None
    id_list = sorted({i for i in ids if 0 <= i < n_all}) if subset else list(range(n_all))
    # The current texts (edits applied) as columns, without a PairView per pair.
    pairs = session.pairs
    edited = {name: session.edited_texts(name) for name in ("question", "answer", PASSAGE_FIELD)}

    chosen = pairs if not subset and len(pairs) == n_all else [pairs[i] for i in id_list]

    def current(name: str, attr: str) -> list[str]:
        ed = edited[name]
        values = list(map(attrgetter(attr), chosen))
        if ed:
            values = [ed.get(i, v) for i, v in zip(id_list, values)]
        return values

    questions, answers = current("question", "question"), current("answer", "answer")
    passages = current(PASSAGE_FIELD, "passage")
    doc_keys = list(map(attrgetter("doc_key"), chosen))
    # The windows and the passage tokens (tiktoken, which releases the GIL while it encodes)
    # are done on other threads while the pairs are verified and the questions tagged here.
    from concurrent.futures import ThreadPoolExecutor

    documents = session.dataset.documents
    pool = ThreadPoolExecutor(1 + TOKEN_THREADS, thread_name_prefix="stats")
    # Each document's UTF-8 bytes: its digest names the cache file, and only a document not
    # cached yet is decoded (all 88 of ficha's took 0.09 s on every screen opening).
    spans_future = pool.submit(corpus_window_spans, DocumentBytes(documents),
                               index=session.corpus_index, cache_dir=windows_cache, build=build_windows)
    from mtcb_curate.stats import located as loc

    # Per pair (position j in id_list): verdict, start, tokens, form, type: from the results at
    # hand (their verdict), the disk cache, else computed here (verification: exact and
    # normalized, no fuzzy step).
    corpus, keys = "", None
    cached = loc.Cached()
    if located_cache is not None:
        corpus = loc.corpus_digest(documents)
        cached = loc.load(located_cache, corpus)
        keys = loc.pair_keys(doc_keys, list(map(attrgetter("chunk_index"), chosen)), passages, questions, answers)
    got = cached.lookup(keys) if keys is not None else {c: [None] * len(id_list) for c in loc.COLUMNS}

    def column(name: str) -> list:
        return got[name]

    verdict, start, tokens = column("verdict"), column("start"), column("tokens")
    form, qtype = column("form"), column("type")
    sentences = column("sentences")
    res: Mapping[int, PairResult] = results or {}
    if res:
        for j, pid in enumerate(id_list):
            r = res.get(pid)
            if r is not None and r.passage == passages[j]:
                verdict[j], start[j] = str(r.verdict), r.start if r.start is not None else -1
                if r.tokens is not None:
                    tokens[j] = r.tokens
    fresh = set()
    todo = [j for j, n in enumerate(tokens) if n is None] if count_tokens else []
    parts = max(1, min(TOKEN_THREADS, os.cpu_count() or 1, len(todo) // 1000))
    tokens_futures = [pool.submit(count_passage_tokens, [passages[j] for j in todo[k::parts]]) for k in range(parts)] \
        if todo else []
    pool.shutdown(wait=False)
    tokens_todo = todo
    todo = [j for j, v in enumerate(verdict) if v is None] if verify else []
    if todo:
        # Tokens are counted below (one loop: tiktoken's encode_ordinary_batch spends more on
        # one thread-pool task per passage than on encoding 100,000 short passages).
        at = {id_list[j]: j for j in todo}
        rep = verify_dataset(session.dataset, {id_list[j]: passages[j] for j in todo}, fuzzy=False,
                             count_tokens=False, index=session.corpus_index, pairs=[pairs[id_list[j]] for j in todo])
        for r in rep.results:
            j = at[r.id]
            verdict[j], start[j] = str(r.verdict), r.start if r.start is not None else -1
        fresh.update(todo)
    todo = [j for j, f in enumerate(form) if f is None or qtype[j] is None] if tag else []
    for j in todo:
        form[j] = question_form(questions[j])
        qtype[j] = question_type(questions[j], answers[j], passages[j], form[j])
    fresh.update(todo)
    for k, future in enumerate(tokens_futures):
        for j, n in zip(tokens_todo[k::len(tokens_futures)], future.result()):
            tokens[j] = n
    fresh.update(tokens_todo)
    # Evidence sentences (nupunkt, 13-45 µs a passage), with the tokens: cached like them.
    from mtcb_curate.stats import density

    todo = [j for j, n in enumerate(sentences) if n is None] if count_tokens else []
    if todo:
        for j, n in zip(todo, density.evidence_counts([passages[j] for j in todo])[1].tolist()):
            sentences[j] = n
        fresh.update(todo)
    pending = {"verdicts": sum(1 for v in verdict if v is None), "tokens": sum(1 for n in tokens if n is None),
               "tags": sum(1 for f, t in zip(form, qtype) if f is None or t is None)}
    if pending["tags"]:
        form = [f if t is not None else None for f, t in zip(form, qtype)]
        qtype = [t if f is not None else None for f, t in zip(form, qtype)]
    if fresh and keys is not None:
        rows = sorted(fresh)
        values = {"verdict": verdict, "start": start, "tokens": tokens, "form": form, "type": qtype,
                  "sentences": sentences}
        old = cached if len(cached) <= 4 * max(n_all, 1) else loc.Cached()
        loc.save(located_cache, corpus, old, keys[rows], {c: [v[j] for j in rows] for c, v in values.items()})
    decisions = session.decisions()
    undecided = (Status.UNDECIDED.value, None)
    decided = [decisions.get(i, undecided) for i in id_list]
    statuses = [st for st, _ in decided]
    rejected_value = Status.REJECTED.value
    reasons_of = [reason if st == rejected_value else None for st, reason in decided]

    def strings(values: list) -> pd.Series:
        # object columns: pandas' default string dtype would convert every value to Arrow
        return pd.Series(values, dtype=object)

    frame = pd.DataFrame({
        "id": id_list,
        "doc": strings(doc_keys),
        "status": strings(statuses),
        "reason": strings(reasons_of),
        "chars": np.fromiter(map(len, passages), dtype=np.int64, count=len(passages)),
        "form": strings(form),
        "type": strings(qtype),
        "verdict": strings(verdict),
        "start": np.array([-1 if a is None else a for a in start], dtype=np.int64),
    })

    # -- coverage
    per_doc_counts = frame["doc"].value_counts()
    per_document = []
    without = []
    unplaced = 0
    n_windows = 0
    windows_without = 0
    groups = {k: g for k, g in frame[frame["start"] >= 0].groupby("doc", sort=False)["start"]}
    all_spans = spans_future.result()
    for key in documents:
        n = int(per_doc_counts.get(key, 0))
        if n == 0:
            without.append(key)
        spans = all_spans[key]
        if spans is None:
            per_document.append({"doc": key, "pairs": n, "windows": None, "per_window": None})
            unplaced += n
            continue
        at = groups.get(key)
        if at is None or not len(at):
            per_window, placed = [0] * len(spans), 0
        else:
            per_window = np.bincount(_place_all(spans, at.to_numpy()), minlength=len(spans)).tolist()
            placed = len(at)
        unplaced += n - placed
        n_windows += len(spans)
        windows_without += sum(1 for c in per_window if c == 0)
        per_document.append({"doc": key, "pairs": n, "windows": len(spans), "per_window": per_window})
    unlinked = int(sum(n for k, n in per_doc_counts.items() if k not in documents))
    coverage = {"documents": len(documents), "documents_without_pairs": without, "unlinked_pairs": unlinked,
                "windows": n_windows, "windows_without_pairs": windows_without, "unplaced_pairs": unplaced,
                "window_tokens": WINDOW_TOKENS, "by_position": _by_position(per_document),
                "per_document": per_document}

    # -- lengths
    chunk_marks = [(size, f"chunk {size:,}") for size in CHUNK_SIZES]
    lo, hi = passage_limits if passage_limits is not None else (None, None)
    limit_marks = [] if passage_limits is None else [(lo, f"min {lo:,}"), (hi, f"max {hi:,}")]
    length = {"chars": _histogram(frame["chars"].to_numpy(), CHAR_EDGES, sorted(chunk_marks + limit_marks)),
              "tokens": None if pending["tokens"] else _histogram(np.array(tokens, dtype=np.int64), TOKEN_EDGES,
                                                                  chunk_marks),
              "chunk_sizes": list(CHUNK_SIZES),
              "limits": None if passage_limits is None else {"min_chars": lo, "max_chars": hi}}

    def counts(column: str, names: Iterable[str] = ()) -> dict[str, int]:
        vc = frame[column].value_counts()
        out = {name: int(vc.get(name, 0)) for name in names}
        for name, n in vc.items():
            out.setdefault(str(name), int(n))
        return out

    from mtcb_curate.verify.verdict import VERDICTS

    rejected = frame[frame["status"] == Status.REJECTED.value]["reason"].map(
        lambda r: "no reason" if not r else "duplicate" if r.startswith("duplicate of #") else r)
    reasons = {str(k): int(v) for k, v in rejected.value_counts().items()}

    # -- checklist
    checklist = None
    if report is not None:
        wanted = set(id_list)
        checklist = [{"id": c.id, "status": str(c.status), "pairs": sum(1 for p in c.pairs if p in wanted)}
                     for c in report.checks]

    # -- history: edits by kind, decisions over time
    wanted_ids = set(id_list) if subset else None
    edits: dict[str, int] = {}
    decided_at: list[float] = []
    for e in session.workspace.history():
        if wanted_ids is not None and e.pair_id not in wanted_ids:
            continue
        if e.kind == HistoryKind.EDIT:
            kind = str(e.via) if e.via else "hand"
            edits[kind] = edits.get(kind, 0) + 1
        elif e.kind == HistoryKind.ADD:
            edits["added"] = edits.get("added", 0) + 1
        elif e.kind == HistoryKind.DECIDE and e.after is not None:
            decided_at.append(e.at)
    pace: dict[str, Any] = {"decisions": len(decided_at), "first": None, "last": None, "per_day": [],
                            "rate_per_hour": session.rate_per_hour()}
    if decided_at:
        days = pd.to_datetime(pd.Series(decided_at), unit="s", utc=True).dt.floor("D")
        per_day = days.value_counts().sort_index()
        full = per_day.reindex(pd.date_range(per_day.index.min(), per_day.index.max(), freq="D"), fill_value=0)
        pace.update(first=min(decided_at), last=max(decided_at),
                    per_day=[{"day": d.strftime("%Y-%m-%d"), "decisions": int(n)}
                             for d, n in full.iloc[-MAX_PACE_DAYS:].items()])

    # -- LLM
    llm: dict[str, Any] = {"recorded": False}
    if llm_usage is not None:
        calls, pt, ct = llm_usage
        cost = None if prices is None else pt / 1e6 * prices[0] + ct / 1e6 * prices[1]
        llm = {"recorded": True, "calls": calls, "prompt_tokens": pt, "completion_tokens": ct, "cost_usd": cost}

    # -- evidence density (HiCBench): words always; sentences counted with the tokens (cached)
    words = np.fromiter(map(density.count_words, passages), dtype=np.int64, count=len(passages))
    counted = None if any(n is None for n in sentences) else np.array(sentences, dtype=np.int64)
    lengths = {"chars": frame["chars"].to_numpy(),
               "tokens": None if pending["tokens"] else np.array(tokens, dtype=np.int64)}
    evidence = density.density_summary(words, counted, [(spec, unit, size, lengths[unit])
                                                        for spec, unit, size in chunkers
                                                        if lengths.get(unit) is not None])
    if counted is None:  # a later pass counts them with the tokens
        pending["tokens"] = max(pending["tokens"], sum(1 for n in sentences if n is None))

    forms_c = counts("form", FORMS)
    types_c = counts("type", TYPES)
    per_doc_all = {k: int(per_doc_counts.get(k, 0)) for k in documents}
    return Stats(
        scope={"dataset": session.dataset.name, "pairs": len(id_list), "subset": subset},
        coverage=coverage, length=length, forms=forms_c, types=types_c,
        verdicts=counts("verdict", VERDICTS), statuses=counts("status", [s.value for s in Status]),
        rejection_reasons=reasons, checklist=checklist, edits=dict(sorted(edits.items())), pace=pace, llm=llm,
        balance=[] if pending["tags"] else balance_problems(forms_c, types_c, per_doc_all, targets),
        seconds=time.perf_counter() - t0, pending=pending, evidence=evidence)
