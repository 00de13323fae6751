"""Checks on the links between questions and the corpus: ``links`` (each pair to exactly one
document and its window), ``corpus`` (no empty document, every document used) and ``reviewed``
(every pair decided)."""

from __future__ import annotations

from collections import Counter

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, check, key_text, result
from mtcb_curate.dataset.model import Status


@check("links", CheckStatus.FAIL)
def links(ctx: CheckContext) -> CheckResult:
    """Fails: the document key matches no corpus row or several; chunk_index out of range, or
    its window does not contain the passage."""
    ds = ctx.dataset
    reasons = {}
    for pid, v in ctx.views.items():
        key = v.pair.doc_key
        if key not in ds.documents:
            reasons[pid] = f"document key '{key_text(key)}' matches no corpus row"
        elif key in ds.duplicate_keys:
            reasons[pid] = f"document key '{key_text(key)}' matches {len(ds.duplicate_keys[key])} corpus rows"
        elif v.pair.chunk_index is not None:
            n = len(ctx.index.windows(key))
            r = ctx.verified.get(pid)
            if v.pair.chunk_index >= n:
                reasons[pid] = f"chunk_index {v.pair.chunk_index} is out of range (the document has {n} windows)"
            elif r is not None and r.verdict == "exact" and r.in_chunk is False:
                reasons[pid] = f"chunk {v.pair.chunk_index}'s window does not contain the passage"
    return result("links", reasons, set(reasons), "every pair links to exactly one document and its window")


def _some(keys: list[str]) -> str:
    return f"{', '.join(map(key_text, keys[:5]))}{' ...' if len(keys) > 5 else ''}"


@check("corpus", CheckStatus.FAIL)
def corpus(ctx: CheckContext) -> CheckResult:
    """Fails: an empty document; warns: documents without an accepted pair."""
    docs = ctx.dataset.documents
    empty = [d.key for d in docs.values() if not d.text.strip()]
    linked = {v.pair.doc_key for v in ctx.views.values()}
    unlinked = [d.key for d in docs.values() if d.key not in linked and d.text.strip()]
    status = CheckStatus.FAIL if empty else CheckStatus.WARN if unlinked else CheckStatus.PASS
    parts = []
    if empty:
        parts.append(f"{len(empty)} empty document(s): {_some(empty)}")
    if unlinked:
        parts.append(f"{len(unlinked)} document(s) without an accepted pair: {_some(unlinked)}")
    return CheckResult("corpus", status, "; ".join(parts) or f"{len(docs)} documents, none empty")


@check("reviewed", CheckStatus.FAIL)
def reviewed(ctx: CheckContext) -> CheckResult:
    """Fails: a pair is undecided, skipped or flagged (skipped without a workspace)."""
    if not ctx.has_workspace:
        return CheckResult("reviewed", CheckStatus.SKIP, "no workspace: every pair treated as accepted; "
                                                         "review in the app to pass this check")
    session = ctx.session
    reasons = {}
    for pid in range(len(session)):
        status = session.status(pid)
        if status in (Status.UNDECIDED, Status.SKIPPED, Status.FLAGGED):
            reasons[pid] = status.value
    counts = Counter(reasons.values())
    msg = ("every pair accepted or rejected" if not reasons else
           "not decided: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return result("reviewed", reasons, set(reasons), msg)
