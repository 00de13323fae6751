"""``mtcb-curate generate NAME --doc KEY --n N``: new QA pairs for one document from an LLM.

Each candidate's passage is verbatim in its window (``llm.generate``). With a workspace the
candidates join the queue as undecided pairs, for the curator to decide like any other; the
JSON file (``--json``) lists them with the attempts log either way.
"""

from __future__ import annotations

import argparse
import os
import threading

from mtcb_curate.cli.common import confirm, note, options, report_problems, write_json
from mtcb_curate.app.sources import command_session


def llm_client(args: argparse.Namespace, workspace_dir=None):
    """A ``ChatClient`` from ``--model``/``--base-url``, the environment and the config file's
    ``[llm]`` table, caching replies in the workspace folder when there is one and it can be
    written (a reader of a workspace on read-only storage runs without the cache).

    Raises:
        LLMConfigError: no key for OpenAI's API, or a bad setting.
    """
    from mtcb_curate.llm.client import configured_client

    if workspace_dir is not None and not os.access(workspace_dir, os.W_OK):
        workspace_dir = None
    return configured_client(workspace_dir, model=args.model, base_url=args.base_url,
                             config_path=getattr(args, "config", None))


def run(args: argparse.Namespace) -> int:
    """Generate; 0 when at least one pair was produced, 1 when none, 2 on bad input."""
    from mtcb_curate.checks import Limits
    from mtcb_curate.llm.estimate import estimate_generate_more
    from mtcb_curate.llm.generate import generate_more

    if getattr(args, "all", False):
        return run_all(args)
    if not args.doc:
        note("error: pass --doc KEY, or --all for every document")
        return 2
    with command_session(options(args), write=True) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        doc = session.dataset.documents.get(args.doc)
        if doc is None:
            note(f"error: no document '{args.doc}' in the corpus ({session.dataset.columns.get('doc_key', 'key')})")
            return 2
        existing = [session.view(p.id) for p in session.pairs if p.doc_key == doc.key]
        client = llm_client(args, session.workspace.path if has_ws else None)
        estimate = estimate_generate_more(doc, existing, args.n, client.config, client=client)
        note(estimate.summary())
        if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
            note("not run: more than 10 calls; pass --yes to run them without asking")
            return 2
        limits = Limits.resolve(session.dataset.profile, getattr(args, "config", None))
        result = generate_more(client, doc, existing, args.n, profile=session.dataset.profile, limits=limits,
                               cancel=threading.Event(),
                               on_retry=lambda notice: note(str(notice)),
                               on_progress=lambda done, total: note(f"window {done}/{total}"))
        added = []
        if has_ws:
            for c in result.candidates:
                added.append(session.add_pair(doc.key, c.question, c.answer, c.passage, c.chunk_index,
                                              details={"model": c.model, "request": c.cache_key}))
        for line in result.refusal_lines() + result.failures:
            note(line)
        if args.json:
            write_json(args.json, {
                "doc_key": doc.key,
                "candidates": [{**c.fields(), "doc_key": c.doc_key, "start": c.start, "end": c.end,
                                "attempts": c.attempts, "warnings": list(c.warnings), "model": c.model,
                                "pair_id": added[i] if added else None}
                               for i, c in enumerate(result.candidates)],
                "failures": result.failures,
                "refused": result.refusals(),
                "calls": len(result.attempts), "paid_calls": result.paid_calls,
            })
        if added:
            where = f"added to the workspace as undecided pairs {', '.join(f'#{i}' for i in added)}"
        elif has_ws:
            where = "nothing added to the workspace (no usable candidate came back)"
        elif result.candidates:
            where = "not added anywhere (no workspace: pass --workspace to keep them)"
        else:
            where = "nothing to keep (no usable candidate came back)"
        print(f"{len(result.candidates)} of {args.n} pairs generated for {doc.key}; {where}")
        return 0 if result.candidates else 1


#: The plan of an unfinished ``--all`` run, in the workspace folder (deleted when it finishes).
PLAN_FILE = "generate-all.json"


def run_all(args: argparse.Namespace, cancel: threading.Event | None = None) -> int:
    """``generate NAME --all``: every document (or ``--docs``), under-covered first, up to
    ``[llm] concurrency`` calls at once; the estimate is confirmed first. Candidates are added
    in plan order as undecided pairs (a question repeating one of its document's is dropped).

    Resumable: the plan (jobs and each document's questions when it was made) is kept in the
    workspace (:data:`PLAN_FILE`) with the jobs already committed; a rerun with the same options
    resumes it, and its requests are byte-identical, so finished calls come from the cache.
    Returns 0 when the run finished, 1 when it was cancelled or a call failed, 2 on bad input.
    """
    import json

    from mtcb_curate.checks import Limits
    from mtcb_curate.files import atomic_write_bytes
    from mtcb_curate.llm.corpus import Job, job_requests, plan_corpus, run_jobs
    from mtcb_curate.llm.estimate import GENERATION_OUTPUT_TOKENS, estimate_run
    from mtcb_curate.llm.generate import RETRIES, find_repeat
    from mtcb_curate.llm.pool import read_concurrency

    if args.per_doc is not None and args.per_window is not None:
        note("error: pass --per-doc or --per-window, not both")
        return 2
    if any(v is not None and v < 1 for v in (args.per_doc, args.per_window)):
        note("error: --per-doc and --per-window take a number of at least 1")
        return 2
    only = [k.strip() for k in args.docs.split(",") if k.strip()] if args.docs else None
    with command_session(options(args), write=True) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if not has_ws:
            note("error: --all needs a workspace (--workspace) to keep the pairs and resume")
            return 2
        docs = session.dataset.documents
        unknown = [k for k in only or () if k not in docs]
        if unknown:
            note(f"error: no document '{unknown[0]}' in the corpus")
            return 2
        wanted = {"per_doc": args.per_doc, "per_window": args.per_window, "docs": only}
        plan_path = session.workspace.path / PLAN_FILE
        plan = None
        if plan_path.is_file():
            try:
                plan = json.loads(plan_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                plan = None
            if plan is not None and plan.get("options") != wanted:
                note(f"an unfinished --all run with other options is replaced ({plan.get('options')})")
                plan = None
            elif plan is not None:
                note(f"resuming the unfinished run: {len(plan['committed'])} of {len(plan['jobs'])} jobs done")
        if plan is None:
            by_doc: dict[str, list] = {}
            for p in session.pairs:
                by_doc.setdefault(p.doc_key, []).append(session.view(p.id))
            jobs = plan_corpus(docs, by_doc, per_doc=args.per_doc, per_window=args.per_window, only=only)
            keys = {j.doc_key for j in jobs}
            plan = {"options": wanted, "jobs": [j.as_json() for j in jobs], "committed": [],
                    "questions": {k: [v.question for v in by_doc.get(k, [])] for k in sorted(keys)}}

        def save() -> None:
            atomic_write_bytes(plan_path, json.dumps(plan, ensure_ascii=False).encode("utf-8"))

        jobs = [Job(*j) for j in plan["jobs"]]
        todo = [j for i, j in enumerate(jobs) if i not in set(plan["committed"])]
        index = {j: i for i, j in enumerate(jobs)}
        client = llm_client(args, session.workspace.path)
        concurrency = read_concurrency(getattr(args, "config", None))
        estimate = estimate_run(job_requests(docs, todo, plan["questions"], profile=session.dataset.profile),
                                client.config, output_tokens=GENERATION_OUTPUT_TOKENS, retries_per_call=RETRIES,
                                client=client)
        n_docs = len({j.doc_key for j in todo})
        note(f"{len(todo)} jobs over {n_docs} documents, {concurrency} at once: {estimate.summary()}")
        if not todo:
            plan_path.unlink(missing_ok=True)
            print("nothing to generate")
            return 0
        if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
            note("not run: more than 10 calls; pass --yes to run them without asking")
            return 2
        save()
        limits = Limits.resolve(session.dataset.profile, getattr(args, "config", None))
        result = run_jobs(client, docs, todo, plan["questions"], profile=session.dataset.profile, limits=limits,
                          concurrency=concurrency, cancel=cancel or threading.Event(),
                          on_retry=lambda notice: note(str(notice)),
                          on_progress=lambda done, total: note(f"call {done}/{total}"))
        per_doc: dict[str, list[int]] = {}
        jobs_left: dict[str, int] = {}
        for j in todo:
            jobs_left[j.doc_key] = jobs_left.get(j.doc_key, 0) + 1
        for job, cand, attempts in result.results:
            added = None
            if cand is not None:
                current = [session.view(p.id).question for p in session.pairs if p.doc_key == job.doc_key]
                if find_repeat(cand.question, current) is None:
                    added = session.add_pair(job.doc_key, cand.question, cand.answer, cand.passage, cand.chunk_index,
                                             details={"model": cand.model, "request": cand.cache_key})
            plan["committed"].append(index[job])
            save()
            per_doc.setdefault(job.doc_key, []).extend([added] if added is not None else [])
            jobs_left[job.doc_key] -= 1
            if jobs_left[job.doc_key] == 0:
                got = per_doc[job.doc_key]
                note(f"document {job.doc_key}: {len(got)} pair(s) added"
                     + (f" ({', '.join(f'#{i}' for i in got)})" if got else ""))
        total_added = sum(len(v) for v in per_doc.values())
        if result.error is not None or result.cancelled:
            why = "cancelled" if result.cancelled else f"stopped: {result.error}"
            print(f"{total_added} pairs added as undecided; {why}; "
                  f"{len(plan['committed'])} of {len(jobs)} jobs done: rerun the same command to resume")
            return 1
        plan_path.unlink(missing_ok=True)
        print(f"{total_added} pairs added as undecided from {len(todo)} jobs over {n_docs} documents")
        return 0
