"""``mtcb-curate generate NAME --doc KEY --n N``: new QA pairs for one document from an LLM.

Each candidate's passage is verbatim in its window (``llm.generate``). With a workspace the
candidates join the queue as undecided pairs, for the curator to decide like any other; the
JSON file (``--json``) lists them with the attempts log either way.
"""

from __future__ import annotations

import argparse
import os
import threading

from mtcb_curate.cli.common import Progress, command_session, confirm, note, report_problems, write_json


def llm_client(args: argparse.Namespace, workspace_dir=None):
    """A ``ChatClient`` from ``--model``/``--base-url``, the environment and the config file's
    ``[llm]`` table, caching replies in the workspace folder when there is one and it can be
    written (a reader of a workspace on read-only storage runs without the cache); with
    ``--no-cache`` no reply is read from or written to any cache.

    Raises:
        LLMConfigError: no key for OpenAI's API, or a bad setting.
    """
    from mtcb_curate.llm.client import configured_client

    if getattr(args, "no_cache", False):
        workspace_dir = None
    if workspace_dir is not None and not os.access(workspace_dir, os.W_OK):
        workspace_dir = None
    return configured_client(workspace_dir, model=args.model, base_url=args.base_url,
                             config_path=getattr(args, "config", None))


def _steering(args: argparse.Namespace, profile):
    """The run's ``SteeringConfig``: ``[generate]`` of the config file, ``--examples``."""
    from mtcb_curate.llm.steering import SteeringConfig

    return SteeringConfig.resolve(profile, getattr(args, "config", None), getattr(args, "examples", None))


def _mode(args: argparse.Namespace, profile, client) -> tuple[str, bool]:
    """The run's generation mode (``quote`` / ``numbered``) and evidence-dense option: ``--mode``
    and ``--dense``, else ``[generate]``, ``auto`` resolved by the server (said on stderr).

    Raises:
        CurateError: a bad ``[generate]`` mode or dense value.
    """
    from mtcb_curate.llm.generate import resolve_mode
    from mtcb_curate.llm.steering import generation_settings

    asked, dense = generation_settings(profile, getattr(args, "config", None), mode=getattr(args, "mode", None),
                                       dense=getattr(args, "dense", None))
    mode = resolve_mode(asked, client.config.base_url)
    why = " (auto: a local server)" if asked == "auto" and mode == "numbered" else (
        " (auto: a hosted API)" if asked == "auto" else "")
    note(f"generation mode: {mode}{why}" + ("; evidence-dense questions" if dense else ""))
    return mode, dense


def candidate_json(c, pair_id=None) -> dict:
    """One candidate for ``--json``: its fields, place, provenance and the pair it became."""
    return {**c.fields(), "doc_key": c.doc_key, "start": c.start, "end": c.end, **c.provenance(),
            "pair_id": pair_id}


def run(args: argparse.Namespace) -> int:
    """Generate; 0 when at least one pair was produced, 1 when none, 2 on bad input."""
    from mtcb_curate.app import review as app_review
    from mtcb_curate.checks import Limits
    from mtcb_curate.errors import CurateError
    from mtcb_curate.llm.estimate import estimate_generate_more
    from mtcb_curate.llm.generate import generate_more
    from mtcb_curate.llm.pool import read_concurrency

    if getattr(args, "all", False):
        return run_all(args)
    if not args.doc:
        note("error: pass --doc KEY, or --all for every document")
        return 2
    with command_session(args, write=True) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        doc = session.dataset.documents.get(args.doc)
        if doc is None:
            note(f"error: {session.dataset.no_such_document(args.doc)}")
            return 2
        try:
            steering = _steering(args, session.dataset.profile)
        except CurateError as exc:
            note(f"error: {exc}")
            return 2
        existing = [session.view(p.id) for p in session.pairs if p.doc_key == doc.key]
        client = llm_client(args, session.workspace.path if has_ws else None)
        try:
            mode, dense = _mode(args, session.dataset.profile, client)
        except CurateError as exc:
            note(f"error: {exc}")
            return 2
        concurrency = read_concurrency(getattr(args, "config", None))
        estimate = estimate_generate_more(doc, existing, args.n, client.config, client=client,
                                          profile=session.dataset.profile, steering=steering, mode=mode, dense=dense)
        note(f"{estimate.summary()}; {concurrency} at once")
        if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
            note("not run: more than 10 calls; pass --yes to run them without asking")
            return 2
        limits = Limits.resolve(session.dataset.profile, getattr(args, "config", None))
        with Progress(f"generating for {doc.key}", total=args.n) as progress:
            def done(k: int, total: int) -> None:
                progress.update(completed=k, total=total)

            result = generate_more(client, doc, existing, args.n, profile=session.dataset.profile, limits=limits,
                                   cancel=threading.Event(), concurrency=concurrency, steering=steering,
                                   on_retry=lambda notice: note(str(notice)), on_progress=done,
                                   mode=mode, dense=dense)
        added = []
        if has_ws:
            for c in result.candidates:
                added.append(app_review.add_pair(session, doc.key, c.question, c.answer, c.passage, c.chunk_index,
                                                 details=c.provenance()))
        for line in result.refusal_lines() + result.failures:
            note(line)
        for i, c in enumerate(result.candidates):
            note(f"{'#' + str(added[i]) if added else 'candidate ' + str(i + 1)}: {c.provenance_line()}")
        if args.json:
            write_json(args.json, {
                "doc_key": doc.key, "mode": mode, "dense": dense,
                "candidates": [candidate_json(c, added[i] if added else None)
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


from mtcb_curate.app.generation import PLAN_FILE  # noqa: E402  (the plan file's name, for callers)


def run_all(args: argparse.Namespace, cancel: threading.Event | None = None) -> int:
    """``generate NAME --all``: every document (or ``--docs``), under-covered first, up to
    ``[llm] concurrency`` calls at once; the estimate is confirmed first. Candidates are added
    in plan order as undecided pairs (a question repeating one of its document's is dropped).

    The workflow is ``app.generation`` (shared with the app): resumable after a kill (the plan
    is kept in the workspace folder, finished calls are in the cache) and idempotent (a job
    whose pair was added before a kill is not added again).
    Returns 0 when the run finished, 1 when it was cancelled or a call failed, 2 on bad input.
    """
    from mtcb_curate.app.generation import (commit_corpus_run, estimate_corpus_run, execute_corpus_run,
                                            prepare_corpus_run)
    from mtcb_curate.checks import Limits
    from mtcb_curate.errors import CurateError
    from mtcb_curate.llm.pool import read_concurrency

    only = [k.strip() for k in args.docs.split(",") if k.strip()] if args.docs else None
    with command_session(args, write=True) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if not has_ws:
            note("error: --all needs a workspace (--workspace) to keep the pairs and resume")
            return 2
        client = llm_client(args, session.workspace.path)
        try:
            steering = _steering(args, session.dataset.profile)
            mode, dense = _mode(args, session.dataset.profile, client)
            corpus = prepare_corpus_run(session, per_doc=args.per_doc, per_window=args.per_window, docs=only,
                                        steering=steering, mode=mode, dense=dense)
        except CurateError as exc:
            note(f"error: {exc}")
            return 2
        if corpus.replaced is not None:
            note(f"an unfinished --all run with other options is replaced ({corpus.replaced})")
        if corpus.resumed:
            note(f"resuming the unfinished run: {len(corpus.plan['committed'])} of {len(corpus.jobs)} jobs done")
        todo = corpus.todo
        concurrency = read_concurrency(getattr(args, "config", None))
        estimate = estimate_corpus_run(corpus, client)
        n_docs = len(corpus.documents)
        note(f"{len(todo)} jobs over {n_docs} documents, {concurrency} at once: {estimate.summary()}")
        if not todo:
            corpus.plan_path.unlink(missing_ok=True)
            if args.json:
                write_json(args.json, {"mode": mode, "dense": dense, "run": corpus.plan["id"], "candidates": [],
                                       "dropped": [], "failures": [], "refused": [], "calls": 0, "paid_calls": 0,
                                       "finished": True})
            print("nothing to generate")
            return 0
        if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
            note("not run: more than 10 calls; pass --yes to run them without asking")
            return 2
        limits = Limits.resolve(session.dataset.profile, getattr(args, "config", None))
        with Progress("documents", total=n_docs) as progress:
            def done(k: int, total: int) -> None:
                progress.update(completed=k, total=total)
                note(f"calls finished for {k} of {total} documents")

            pooled = execute_corpus_run(corpus, client, limits=limits, concurrency=concurrency,
                                        cancel=cancel or threading.Event(),
                                        on_retry=lambda notice: note(str(notice)), on_progress=done)
        outcome = commit_corpus_run(corpus, pooled)
        for key, got in outcome.added.items():
            note(f"document {key}: {len(got)} pair(s) added" + (f" ({', '.join(f'#{i}' for i in got)})" if got else ""))
        for pid, cand in outcome.candidates:
            note(f"#{pid}: {cand.provenance_line()}")
        for line in outcome.dropped:
            note(line)
        if args.json:
            failures = [f"{job.doc_key} chunk {job.window}" + (f" sample {job.sample}" if job.sample else "")
                        + f": no usable pair after {len(attempts)} attempts"
                        for job, cand, attempts in pooled.results if cand is None]
            refused = [{"doc_key": a.doc_key, "chunk_index": a.chunk_index, "sample": a.sample, "attempt": a.number,
                        "reasons": list(a.problems)}
                       for _job, _cand, attempts in pooled.results for a in attempts if not a.accepted]
            write_json(args.json, {
                "mode": mode, "dense": dense, "run": corpus.plan["id"],
                "candidates": [candidate_json(cand, pid) for pid, cand in outcome.candidates],
                "dropped": outcome.dropped, "failures": failures, "refused": refused,
                "calls": sum(len(a) for _j, _c, a in pooled.results),
                "paid_calls": sum(1 for _j, _c, a in pooled.results for x in a if not x.cached),
                "finished": outcome.finished,
            })
        if outcome.already:
            note(f"{outcome.already} pair(s) were already added by the interrupted run: not added again")
        if not outcome.finished:
            why = "cancelled" if outcome.cancelled else f"stopped: {outcome.error}" if outcome.error else "stopped"
            print(f"{outcome.total_added} pairs added as undecided; {why}; "
                  f"{len(corpus.plan['committed'])} of {len(corpus.jobs)} jobs done: rerun the same command to resume")
            return 1
        print(f"{outcome.total_added} pairs added as undecided from {len(todo)} jobs over {n_docs} documents")
        return 0
