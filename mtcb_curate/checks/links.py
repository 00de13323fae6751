"""Checks on the links between questions and the corpus: ``links`` (each pair to exactly one
document and its window), ``corpus`` (no empty document, every document used) and ``reviewed``
(every pair decided)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, check, key_text, result
from mtcb_curate.dataset.model import Status
from mtcb_curate.verify.chunk_index import MEANING_KEY, checks_chunk_index, chunk_index_problem, propose_fix
from mtcb_curate.verify.verdict import Verdict

if TYPE_CHECKING:
    from mtcb_curate.dataset.model import Dataset, QAPair
    from mtcb_curate.verify.verdict import PairResult


#: How to repair a chunk_index, appended to the ``links`` message when chunk_index fails.
CHUNK_INDEX_HOW = ("repair chunk_index: key i (this pair) or I (every pair) in the app, or "
                   "`mtcb-curate repair NAME --chunk-index`; if the dataset's chunk_index means "
                   "something else, `mtcb-curate repair NAME --chunk-index-meaning ignore`")


def link_problem(ds: Dataset, pair: QAPair, n_windows: Callable[[str], int | None],
                 r: PairResult | None, *, meaning: str | None = None,
                 windows: Callable[[str], list] | None = None) -> str | None:
    """The ``links`` rule for one pair (always a failure): why its document key or chunk_index
    does not link it to its corpus row and window, or None.

    Args:
        ds: the dataset (documents and repeated keys).
        pair: the pair.
        n_windows: document key -> its number of MTCB windows, or None when not known yet
            (the range test is then left out: the whole-set check tokenizes, the per-pair
            evaluation reads the index's cache).
        r: the pair's verification result (``in_chunk`` read when exact), or None.
        meaning: the workspace's ``chunk_index_meaning`` (``verify.chunk_index``; None: ``mtcb``);
            under ``ignore`` chunk_index is not checked.
        windows: document key -> its windows, to name the repair (the window holding the
            passage) in the message; None leaves it out.
    """
    key = pair.doc_key
    if key not in ds.documents:
        return f"document key '{key_text(key)}' matches no corpus row"
    if key in ds.duplicate_keys:
        return f"document key '{key_text(key)}' matches {len(ds.duplicate_keys[key])} corpus rows"
    if pair.chunk_index is None or not checks_chunk_index(meaning):
        return None
    n = n_windows(key)
    in_chunk = r.in_chunk if r is not None and r.verdict == Verdict.EXACT else None
    if n is None:  # the range is not known yet: only the verification's in_chunk
        if in_chunk is not False:
            return None
        n = pair.chunk_index + 1
    fix = None
    if windows is not None and r is not None and r.verdict == Verdict.EXACT:
        fix = propose_fix(windows(key), r)
    return chunk_index_problem(meaning, pair.chunk_index, n, in_chunk, fix)


@check("links", CheckStatus.FAIL)
def links(ctx: CheckContext) -> CheckResult:
    """Fails: the document key matches no corpus row or several; chunk_index out of range, or
    its window does not contain the passage."""
    reasons = {}
    meaning = ctx.session.chunk_index_meaning
    for pid, v in ctx.views.items():
        why = link_problem(ctx.dataset, v.pair, lambda key: len(ctx.index.windows(key)), ctx.verified.get(pid),
                           meaning=meaning, windows=ctx.index.windows)
        if why is not None:
            reasons[pid] = why
    message = "every pair links to exactly one document and its window"
    if not checks_chunk_index(meaning):
        message += f" (chunk_index not checked: {MEANING_KEY} = {meaning})"
    bad_chunk = sum(1 for why in reasons.values() if "window" in why and "document key" not in why)
    if bad_chunk:
        message = f"{bad_chunk:,} pair(s) with a chunk_index whose window does not hold the passage; {CHUNK_INDEX_HOW}"
    return result("links", reasons, set(reasons), message)


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
    if ctx.include_undecided:
        return CheckResult("reviewed", CheckStatus.SKIP, "undecided, skipped and flagged pairs checked as if "
                                                         "accepted: what would fail if they were")
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
