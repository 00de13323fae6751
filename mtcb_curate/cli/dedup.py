"""``mtcb-curate dedup NAME``: near-duplicate question clusters.

Prints the clusters (largest first) with their reasons, then, separately, the shared-passage
groups (different questions whose passages are the same or overlap: a warning, never a
cluster); ``--json`` writes ``{"clusters": [{"ids", "scores": [[i, j, score], ...], "reason",
...}], "shared_passages": [same shape]}``. Exit 0 when no cluster is unresolved (at most one
member not rejected), 1 otherwise, 2 on bad input; shared-passage groups never change it.

``--llm`` runs the LLM's semantic dedup (batches of 50, then a final pass) first; with a
workspace its clusters are stored there and join the others (and the app's dedup screen).
"""

from __future__ import annotations

import argparse
import threading

from mtcb_curate.cli.common import Progress, command_session, confirm, emit, note, report_problems, write_json


def run(args: argparse.Namespace) -> int:
    """Find the clusters; see the module docstring for the exit codes."""
    from mtcb_curate.app import clusters as cl
    from mtcb_curate import neardup

    threshold = neardup.DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if not 0 < threshold <= 100:
        note("error: --threshold must be in (0, 100]")
        return 2
    with command_session(args, write=args.llm) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if args.llm:
            code = _llm_dedup(args, session, has_ws)
            if code:
                return code
        found, shared = cl.find_both(session, threshold=threshold)
        open_ = cl.unresolved(session, found) if has_ws else found
        lines = []
        for c in found:
            state = "unresolved" if c in open_ else "resolved"
            lines.append(f"{len(c.ids)} pairs {' '.join(f'#{i}' for i in c.ids)} · {c.reason} · {state}")
        open_shared = cl.unresolved(session, shared) if has_ws else shared
        if open_shared:
            lines.append("shared passages (a warning: different questions on the same evidence):")
            for c in open_shared:
                lines.append(f"{len(c.ids)} pairs {' '.join(f'#{i}' for i in c.ids)} · {c.reason}")
        lines.append(f"{len(found)} cluster(s), {len(open_)} unresolved (threshold {threshold:g}); "
                     f"{len(open_shared)} shared-passage group(s) ({sum(c.size for c in open_shared)} pairs)")
        if args.json:  # before any output: a closed pipe never costs the file
            status_of = session.status if has_ws else None
            report = neardup.clusters_json(found, status_of)
            report["shared_passages"] = neardup.clusters_json(shared, status_of)["clusters"]
            try:
                write_json(args.json, report)
            except OSError as exc:
                note(f"error: {args.json}: cannot write ({exc.strerror})")
                return 2
        emit("\n".join(lines))
        return 1 if open_ else 0


def _llm_dedup(args: argparse.Namespace, session, has_ws: bool) -> int:
    from mtcb_curate.app import clusters as cl
    from mtcb_curate.cli.generate import llm_client
    from mtcb_curate.llm.dedup import DedupItem, semantic_dedup
    from mtcb_curate.llm.estimate import estimate_dedup

    items = [DedupItem(pid, v.question, v.answer, v.pair.doc_key)
             for pid, v in ((pid, session.view(pid)) for pid in range(len(session)))]
    client = llm_client(args, session.workspace.path if has_ws else None)
    estimate = estimate_dedup(items, client.config, client=client)
    note(estimate.summary())
    if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
        note("not run: more than 10 calls; pass --yes to run them without asking")
        return 2
    from mtcb_curate.llm.pool import read_concurrency

    with Progress("LLM dedup calls") as bar:
        result = semantic_dedup(client, items, cancel=threading.Event(), on_retry=lambda n: note(str(n)),
                                on_progress=lambda done, total: bar.update(completed=done, total=total),
                                concurrency=read_concurrency(getattr(args, "config", None)))
    for report in result.reports:
        note(str(report))
    groups = [list(c.members) for c in result.clusters]
    note(f"LLM dedup: {len(result.dropped)} question(s) judged duplicates in {len(groups)} cluster(s), "
         f"{result.calls} call(s), {result.cached_calls} from the cache")
    cl.store_llm_clusters(session, groups)  # without a workspace: a throw-away one, for this run
    return 0
