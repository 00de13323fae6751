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

if TYPE_CHECKING:
    from mtcb_curate.dataset.model import Dataset, QAPair
    from mtcb_curate.verify.verdict import PairResult


#: How to repair a chunk_index, appended to the ``links`` message when chunk_index fails.
CHUNK_INDEX_HOW = ("repair chunk_index: key i (this pair) or I (every pair) in the app, or "
                   "`mtcb-curate repair NAME --chunk-index`; if the dataset's chunk_index means "
                   "something else, `mtcb-curate repair NAME --chunk-index-meaning ignore`")


def link_problem(ds: Dataset, pair: QAPair, n_windows: Callable[[str], int | None],
                 r: PairResult | None, *, meaning: str | None = None,
                 windows: Callable[[str], list] | None = None) -> tuple[CheckStatus, str] | None:
    """The ``links`` rule for one pair: ``(CheckStatus.FAIL or WARN, why)`` when its document key
    or chunk_index does not link it to its corpus row and window, or None.

    Fails: the document key matches no corpus row or several; the passage is not in the linked
    document but verbatim in another (``PairResult.in_other_document``: the link is the one
    cause, so ``verbatim`` and ``unique_passage`` say nothing); chunk_index out of range; its
    window does not hold the located passage (exact, normalized or fuzzy: the verification's
    ``in_chunk`` for the located span). Warns: no chunk_index (null or empty) in a dataset with
    a chunk_index column, under ``chunk_index_meaning`` ``mtcb``: a repairable gap (``i``,
    ``I``, bulk, ``repair --chunk-index`` fill it with the window holding the passage).

    Args:
        ds: the dataset (documents and repeated keys).
        pair: the pair.
        n_windows: document key -> its number of MTCB windows, or None when not known yet
            (the range test is then left out: the whole-set check tokenizes, the per-pair
            evaluation reads the index's cache).
        r: the pair's verification result (``in_chunk`` read when the passage is located), or
            None.
        meaning: the workspace's ``chunk_index_meaning`` (``verify.chunk_index``; None: ``mtcb``);
            under ``ignore`` chunk_index is not checked.
        windows: document key -> its windows, to name the repair (the window holding the
            passage) in the message; None leaves it out.
    """
    key = pair.doc_key
    if key not in ds.documents:
        return CheckStatus.FAIL, f"document key '{key_text(key)}' matches no corpus row"
    if key in ds.duplicate_keys:
        return CheckStatus.FAIL, f"document key '{key_text(key)}' matches {len(ds.duplicate_keys[key])} corpus rows"
    if r is not None and r.in_other_document:
        others = ", ".join(f"'{key_text(k)}'" for k, _ in r.elsewhere[:3])
        more = f" and {len(r.elsewhere) - 3} more" if len(r.elsewhere) > 3 else ""
        return CheckStatus.FAIL, (f"the passage is not in its linked document '{key_text(key)}' but verbatim in "
                                  f"{others}{more}: link the pair to that document, or select the passage in "
                                  f"'{key_text(key)}'")
    if not checks_chunk_index(meaning):
        return None
    located = r is not None and r.start is not None
    fix = None
    if windows is not None and located:
        fix = propose_fix(windows(key), r)
    if pair.chunk_index is None:
        if "chunk_index" not in ds.columns:
            return None
        where = (f": the passage is in window {fix.new}" if fix is not None and fix.new is not None else
                 ": no single window holds the passage (shorten it first)" if fix is not None else "")
        return CheckStatus.WARN, f"no chunk_index{where}; repair chunk_index fills it"
    n = n_windows(key)
    in_chunk = r.in_chunk if located else None
    if n is None:  # the range is not known yet: only the verification's in_chunk
        if in_chunk is not False:
            return None
        n = pair.chunk_index + 1
    why = chunk_index_problem(meaning, pair.chunk_index, n, in_chunk, fix)
    return None if why is None else (CheckStatus.FAIL, why)


@check("links", CheckStatus.FAIL)
def links(ctx: CheckContext) -> CheckResult:
    """Fails: the document key matches no corpus row or several; chunk_index out of range, or
    its window does not contain the located passage; warns: no chunk_index (a repairable gap)."""
    reasons, failing = {}, set()
    meaning = ctx.session.chunk_index_meaning
    for pid, v in ctx.views.items():
        got = link_problem(ctx.dataset, v.pair, lambda key: len(ctx.index.windows(key)), ctx.verified.get(pid),
                           meaning=meaning, windows=ctx.index.windows)
        if got is not None:
            status, reasons[pid] = got
            if status == CheckStatus.FAIL:
                failing.add(pid)
    message = "every pair links to exactly one document and its window"
    if not checks_chunk_index(meaning):
        message += f" (chunk_index not checked: {MEANING_KEY} = {meaning})"
    bad_chunk = sum(1 for why in reasons.values() if "window" in why and "document key" not in why
                    and not why.startswith("no chunk_index"))
    unset = sum(1 for why in reasons.values() if why.startswith("no chunk_index"))
    parts = []
    if bad_chunk:
        parts.append(f"{bad_chunk:,} pair(s) with a chunk_index whose window does not hold the passage")
    if unset:
        parts.append(f"{unset:,} pair(s) without a chunk_index")
    if parts:
        message = f"{'; '.join(parts)}; {CHUNK_INDEX_HOW}"
    return result("links", reasons, failing, message)


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
