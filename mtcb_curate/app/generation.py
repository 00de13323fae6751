"""Whole-corpus generation, the workflow both front ends run.

``mtcb-curate generate NAME --all`` and the app's "generate for the filtered documents" both go
through here, in three steps:

1. :func:`prepare_corpus_run` makes the plan (``llm.corpus.plan_corpus``: under-covered
   documents first) or resumes the unfinished one kept in the workspace folder
   (:data:`PLAN_FILE`, same options), and plans the steering of each job
   (``llm.steering``);
2. :func:`execute_corpus_run` runs the calls, up to ``[llm] concurrency`` at once, with
   progress per document (safe in a worker thread: it writes nothing to the workspace, only
   the plan file);
3. :func:`commit_corpus_run` adds the candidates as undecided pairs in plan order (a question
   repeating one of its document's is dropped), then records the jobs done in the plan.

Resumable and idempotent: every finished call is in the response cache and a resumed plan sends
byte-identical requests, so nothing finished is paid twice; every added pair records its run
and job (``details["run"]``, ``details["job"] = [document, window, sample]``), and a job whose
pair is already in the workspace is not added again, so a kill between adding a pair and saving
the plan cannot add it twice.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtcb_curate.errors import CurateError

#: The plan of an unfinished run, in the workspace folder (deleted when the run finishes).
PLAN_FILE = "generate-all.json"


@dataclass
class CorpusRun:
    """A prepared whole-corpus run.

    Attributes:
        session: the review session (pairs are added through it by :func:`commit_corpus_run`).
        plan_path: the plan file.
        plan: ``{"id", "options", "jobs": [[doc, window, sample]...], "committed": [job index...],
            "questions": {doc: [question...]}, "steering": [[examples, form] or None per job]}``.
        resumed: True when an unfinished plan with the same options was picked up.
        replaced: the options of an unfinished plan that was replaced, or None.
    """

    session: Any
    plan_path: Path
    plan: dict[str, Any]
    resumed: bool = False
    replaced: dict[str, Any] | None = None

    @property
    def jobs(self) -> list[Any]:
        """Every job of the plan (``llm.corpus.Job``), in plan order."""
        from mtcb_curate.llm.corpus import Job

        return [Job(*j) for j in self.plan["jobs"]]

    @property
    def todo(self) -> list[Any]:
        """The jobs not yet committed, in plan order."""
        done = set(self.plan["committed"])
        return [j for i, j in enumerate(self.jobs) if i not in done]

    @property
    def mode(self) -> str:
        """The generation mode of the plan (``quote`` for plans without one)."""
        return str(self.plan["options"].get("mode") or "quote")

    @property
    def dense(self) -> bool:
        """True when the plan asks for evidence-dense questions."""
        return bool(self.plan["options"].get("dense"))

    @property
    def documents(self) -> list[str]:
        """The documents with a job to do, in plan order."""
        return list(dict.fromkeys(j.doc_key for j in self.todo))

    def steering(self) -> dict[Any, Any]:
        """Each job's ``prompts.Steering`` (jobs without steering are absent)."""
        from mtcb_curate.llm.prompts import Steering

        out = {}
        for job, st in zip(self.jobs, self.plan.get("steering") or []):
            if st is not None:
                out[job] = Steering(tuple(st[0]), st[1])
        return out

    def save(self) -> None:
        """Write the plan file (atomically)."""
        from mtcb_curate.files import atomic_write_bytes

        atomic_write_bytes(self.plan_path, json.dumps(self.plan, ensure_ascii=False).encode("utf-8"))


@dataclass
class CorpusOutcome:
    """What a commit added.

    Attributes:
        added: the new pair ids of each document, in plan order.
        already: jobs whose pair was already in the workspace (an interrupted commit).
        dropped: one line per candidate not added (a repeated question).
        candidates: ``(pair id, llm.generate.Candidate)`` of each pair added, in plan order.
        failed: jobs that gave no usable pair after their retries.
        finished: True when every job of the plan is done (the plan file is deleted).
        cancelled: True when the calls were cancelled; error: the failure that stopped them.
    """

    added: dict[str, list[int]] = field(default_factory=dict)
    candidates: list[tuple[int, Any]] = field(default_factory=list)
    already: int = 0
    dropped: list[str] = field(default_factory=list)
    failed: int = 0
    finished: bool = False
    cancelled: bool = False
    error: BaseException | None = None

    @property
    def total_added(self) -> int:
        """Pairs added in all."""
        return sum(len(v) for v in self.added.values())


def prepare_corpus_run(session: Any, *, per_doc: int | None = None, per_window: int | None = None,
                       docs: Sequence[str] | None = None, steering: Any = None, mode: str = "quote",
                       dense: bool = False) -> CorpusRun:
    """The run of ``generate --all`` (or the app's run over the filtered documents).

    Args:
        session: a writable review session with a workspace.
        per_doc, per_window: new pairs per document (default 1) or up to N per window.
        docs: only these document keys (in any order), or None for all.
        steering: a ``llm.steering.SteeringConfig``, or None; target form shares are planned
            over every question of the set, job after job.
        mode, dense: the generation mode (``quote`` / ``numbered``) and the evidence-dense
            option; part of the plan's options, so a resumed run sends the same requests.

    Raises:
        CurateError: both ``per_doc`` and ``per_window``; a number below 1; an unknown
            document key; a read-only session.
    """
    from mtcb_curate.llm.corpus import plan_corpus

    if per_doc is not None and per_window is not None:
        raise CurateError("pass --per-doc or --per-window, not both")
    if any(v is not None and v < 1 for v in (per_doc, per_window)):
        raise CurateError("--per-doc and --per-window take a number of at least 1")
    if getattr(session, "read_only", False):
        raise CurateError("the workspace is open read-only: new pairs cannot be added")
    documents = session.dataset.documents
    only = list(docs) if docs is not None else None
    unknown = [k for k in only or () if k not in documents]
    if unknown:
        raise CurateError(session.dataset.no_such_document(unknown[0]))
    wanted: dict[str, Any] = {"per_doc": per_doc, "per_window": per_window, "docs": only,
                              "steering": _steering_key(steering)}
    if mode != "quote" or dense:  # plans made before the modes existed stay resumable
        wanted.update({"mode": mode, "dense": dense})
    plan_path = session.workspace.path / PLAN_FILE
    replaced = None
    if plan_path.is_file():
        try:
            plan = json.loads(plan_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            plan = None
        if isinstance(plan, dict) and plan.get("options") == wanted and "id" in plan:
            return CorpusRun(session, plan_path, plan, resumed=True)
        replaced = plan.get("options") if isinstance(plan, dict) else None
    by_doc: dict[str, list] = {}
    for p in session.pairs:
        by_doc.setdefault(p.doc_key, []).append(session.view(p.id))
    jobs = plan_corpus(documents, by_doc, per_doc=per_doc, per_window=per_window, only=only)
    keys = sorted({j.doc_key for j in jobs})
    steer: list[Any] = [None] * len(jobs)
    if steering is not None and not steering.empty:
        steer = [None if s is None else [list(s.examples), s.form]
                 for s in steering.plan([v.question for vs in by_doc.values() for v in vs], len(jobs))]
    plan = {"id": uuid.uuid4().hex[:12], "options": wanted, "jobs": [j.as_json() for j in jobs], "committed": [],
            "questions": {k: [v.question for v in by_doc.get(k, [])] for k in keys}, "steering": steer}
    return CorpusRun(session, plan_path, plan, replaced=replaced)


def _steering_key(steering: Any) -> Any:
    """The steering as plan options (JSON), so a changed steering is a new plan."""
    if steering is None or steering.empty:
        return None
    return {"examples": list(steering.examples), "forms": dict(sorted(steering.shares.items()))}


def estimate_corpus_run(run: CorpusRun, client: Any) -> Any:
    """The ``llm.estimate.RunEstimate`` of the jobs left (cached replies count as free)."""
    from mtcb_curate.llm.corpus import job_requests
    from mtcb_curate.llm.estimate import GENERATION_OUTPUT_TOKENS, estimate_run
    from mtcb_curate.llm.generate import RETRIES

    return estimate_run(job_requests(run.session.dataset.documents, run.todo, run.plan["questions"],
                                     profile=run.session.dataset.profile, steering=run.steering(),
                                     mode=run.mode, dense=run.dense, client=client),
                        client.config, output_tokens=GENERATION_OUTPUT_TOKENS, retries_per_call=RETRIES,
                        client=client)


def execute_corpus_run(run: CorpusRun, client: Any, *, limits: Any = None, concurrency: int = 1,
                       cancel: threading.Event | None = None, on_retry: Callable[[Any], None] | None = None,
                       on_progress: Callable[[int, int], None] | None = None,
                       on_document: Callable[[str], None] | None = None,
                       on_attempt: Callable[[Any], None] | None = None) -> Any:
    """Run the calls of the jobs left (writes the plan file first; nothing else).

    Args:
        run: the prepared run.
        client: the chat client (with the workspace's response cache).
        limits: the checklist's bounds (``checks.Limits``) candidates must meet.
        concurrency: calls at once.
        cancel, on_retry, on_attempt: see ``llm.generate.generate_for_window``.
        on_progress: ``(documents whose calls all finished, documents)`` as they finish
            (called from the pool's threads).
        on_document: the key of each document whose calls all finished.

    Returns:
        The ``llm.pool.PoolResult`` of ``(job, candidate or None, attempts)`` in plan order.
    """
    from mtcb_curate.llm.corpus import run_jobs

    todo = run.todo
    run.save()
    left: dict[str, int] = {}
    for j in todo:
        left[j.doc_key] = left.get(j.doc_key, 0) + 1
    n_docs = len(left)
    lock = threading.Lock()
    done = [0]

    def job_done(job: Any) -> None:
        with lock:
            left[job.doc_key] -= 1
            if left[job.doc_key]:
                return
            done[0] += 1
            count = done[0]
        if on_document is not None:
            on_document(job.doc_key)
        if on_progress is not None:
            on_progress(count, n_docs)

    return run_jobs(client, run.session.dataset.documents, todo, run.plan["questions"],
                    profile=run.session.dataset.profile, limits=limits, concurrency=concurrency,
                    cancel=cancel or threading.Event(), on_retry=on_retry, steering=run.steering(),
                    on_attempt=on_attempt, on_job_done=job_done, mode=run.mode, dense=run.dense)


def commit_corpus_run(run: CorpusRun, pooled: Any) -> CorpusOutcome:
    """Add the finished candidates as undecided pairs, in plan order, then record the jobs
    done (the plan file is deleted when every job is done).

    A job already recorded in the workspace (``details["run"]`` and ``details["job"]``) is not
    added again; a question repeating one of its document's current questions is dropped.
    """
    from mtcb_curate.llm.generate import find_repeat

    session = run.session
    out = CorpusOutcome(cancelled=pooled.cancelled, error=pooled.error)
    index = {j: i for i, j in enumerate(run.jobs)}
    done_keys = {tuple(d["job"]) for v in session.workspace.added_pairs().values()
                 if isinstance(d := v.get("details"), dict) and d.get("run") == run.plan["id"]
                 and isinstance(d.get("job"), list)}
    questions: dict[str, list[str]] = {}
    for job, cand, _attempts in pooled.results:
        out.added.setdefault(job.doc_key, [])
        key = tuple(job.as_json())
        if cand is None:
            out.failed += 1
        elif key in done_keys:
            out.already += 1
        else:
            current = questions.setdefault(job.doc_key, [session.view(p.id).question for p in session.pairs
                                                         if p.doc_key == job.doc_key])
            repeated = find_repeat(cand.question, current)
            if repeated is not None:
                out.dropped.append(f"{job.doc_key} chunk {job.window}: dropped, its question repeats "
                                   f"'{repeated[:120]}'")
            else:
                pid = session.add_pair(job.doc_key, cand.question, cand.answer, cand.passage, cand.chunk_index,
                                       details={**cand.provenance(), "run": run.plan["id"], "job": list(key)})
                current.append(cand.question)
                out.added[job.doc_key].append(pid)
                out.candidates.append((pid, cand))
        run.plan["committed"].append(index[job])
    if len(run.plan["committed"]) >= len(run.plan["jobs"]):
        run.plan_path.unlink(missing_ok=True)
        out.finished = True
    else:
        run.save()
    return out
