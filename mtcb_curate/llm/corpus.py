"""Whole-corpus generation (``mtcb-curate generate NAME --all``): the plan and the run.

The plan is a list of :class:`Job` (document, window, sample), under-covered documents first
(fewest pairs per window, then the key), each document's jobs in :func:`generate.pick_windows`
order. Every job's prompt lists the document's questions *as they were when the plan was made*
(not the ones the run adds), so jobs are independent: they run up to ``[llm] concurrency`` at
once (:mod:`mtcb_curate.llm.pool`) and a rerun of the same plan sends byte-identical requests,
which the cache answers: nothing finished is paid twice. The caller commits the candidates in
plan order, dropping a question that repeats one committed before it (``generate.find_repeat``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mtcb_curate.dataset.model import Document
from mtcb_curate.dataset.tokens import Window, windows
from mtcb_curate.llm.client import ChatClient, ChatRequest, RetryCallback
from mtcb_curate.llm.pool import PoolResult, run_ordered


@dataclass(frozen=True, slots=True)
class Job:
    """One generation call of a plan: ``window`` is the chunk_index; ``sample`` tells apart
    repeated jobs of one window (part of the cache key)."""

    doc_key: str
    window: int
    sample: int = 0

    def as_json(self) -> list:
        """``[doc_key, window, sample]``."""
        return [self.doc_key, self.window, self.sample]


def plan_corpus(documents: Mapping[str, Document], pairs_by_doc: Mapping[str, Sequence[Any]], *,
                per_doc: int | None = None, per_window: int | None = None,
                only: Sequence[str] | None = None) -> list[Job]:
    """The jobs of a whole-corpus run.

    Args:
        documents: the corpus by key.
        pairs_by_doc: each document's pairs (``QAPair`` or ``PairView``); their windows count.
        per_doc: N new pairs per document, in its least-covered windows (the default, 1).
        per_window: instead, top every window up to N pairs.
        only: restrict to these document keys (order ignored).

    Returns:
        The jobs, documents with the fewest pairs per window first (ties: key order).
    """
    from mtcb_curate.llm.generate import pair_window, pick_windows

    keys = [k for k in documents if only is None or k in set(only)]
    plans: list[tuple[float, str, list[Job]]] = []
    for key in keys:
        doc = documents[key]
        if not doc.text.strip():
            continue
        ws = windows(doc.text)
        existing = list(pairs_by_doc.get(key, ()))
        counts = [0] * len(ws)
        for p in existing:
            counts[pair_window(p, doc.text, ws).index] += 1
        if per_window is not None:
            picks = [i for i, c in enumerate(counts) for _ in range(max(per_window - c, 0))]
        else:
            picks = pick_windows(doc.text, [pair_window(p, doc.text, ws).index for p in existing],
                                 per_doc if per_doc is not None else 1, doc_windows=ws)
        seen: dict[int, int] = {}
        jobs = []
        for i in picks:
            jobs.append(Job(key, i, seen.get(i, 0)))
            seen[i] = seen.get(i, 0) + 1
        plans.append((len(existing) / len(ws), key, jobs))
    plans.sort(key=lambda t: (t[0], t[1]))
    return [j for _, _, jobs in plans for j in jobs]


def job_requests(documents: Mapping[str, Document], jobs: Sequence[Job], questions: Mapping[str, Sequence[str]],
                 *, profile: Any = None, steering: Any = None, mode: str = "quote", dense: bool = False,
                 limits: Any = None, client: Any = None) -> list[ChatRequest]:
    """The first-attempt request of each job (for the estimate); ``steering`` maps a job to
    its ``prompts.Steering`` (absent: none), or is one for all; ``mode``, ``dense``: see
    ``generate.generate_for_window``."""
    from mtcb_curate.llm.generate import _hint, _limits, first_request

    hint = _hint(profile)
    lim = _limits(profile, limits)
    cut: dict[str, list[Window]] = {}
    out = []
    for j in jobs:
        doc = documents[j.doc_key]
        ws = cut.setdefault(j.doc_key, windows(doc.text))
        w = ws[j.window]
        out.append(first_request(doc.text[w.start:w.end], doc_key=doc.key, chunk_index=w.index,
                                 existing_questions=list(questions.get(j.doc_key, ())), hint=hint,
                                 sample=j.sample, steering=_steering(steering, j), mode=mode, dense=dense,
                                 limits=lim, client=client))
    return out


def _steering(steering: Any, job: Job) -> Any:
    """The steering of one job: ``steering.get(job)`` for a mapping, else ``steering``."""
    return steering.get(job) if isinstance(steering, Mapping) else steering


def run_jobs(client: ChatClient, documents: Mapping[str, Document], jobs: Sequence[Job],
             questions: Mapping[str, Sequence[str]], *, profile: Any = None, limits: Any = None,
             concurrency: int = 1, cancel: threading.Event | None = None, on_retry: RetryCallback | None = None,
             on_progress: Callable[[int, int], None] | None = None, steering: Any = None,
             on_attempt: Callable[[Any], None] | None = None,
             on_job_done: Callable[[Job], None] | None = None, mode: str = "quote",
             dense: bool = False) -> PoolResult:
    """Run every job (``generate.generate_for_window`` with the document's planned questions),
    up to ``concurrency`` at once. ``steering``: see :func:`job_requests`; ``on_attempt``: see
    ``generate.generate_for_window``; ``mode``, ``dense``: the generation mode and the
    evidence-dense option; ``on_job_done``: called with each job that finished
    (from the thread that ran it).

    Returns:
        A :class:`~mtcb_curate.llm.pool.PoolResult` of ``(job, candidate or None, attempts)`` in
        plan order (the finished prefix on a cancel or a failure; ``error`` holds the failure).
    """
    from mtcb_curate.llm.generate import _hint, _limits, generate_for_window

    hint = _hint(profile)
    lim = _limits(profile, limits)
    cut = {k: windows(documents[k].text) for k in dict.fromkeys(j.doc_key for j in jobs)}

    def one(job: Job):
        doc = documents[job.doc_key]
        cand, attempts = generate_for_window(
            client, doc_key=doc.key, doc_text=doc.text, window=cut[job.doc_key][job.window],
            existing_questions=list(questions.get(job.doc_key, ())), hint=hint, limits=lim, sample=job.sample,
            cancel=cancel, on_retry=on_retry, steering=_steering(steering, job), on_attempt=on_attempt,
            mode=mode, dense=dense)
        if on_job_done is not None:
            on_job_done(job)
        return job, cand, attempts

    return run_ordered(one, list(jobs), concurrency=concurrency, cancel=cancel, on_progress=on_progress)
