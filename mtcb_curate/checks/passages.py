"""Checks on the supporting passages: ``verbatim``, ``unique_passage``, ``shared_passage``,
``passage_length``; and the ``passage_length`` verdict ``llm.generate`` shares to refuse
candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mtcb_curate import neardup
from mtcb_curate.verify.verdict import Verdict
from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, Limits, MemberReasons, check, key_text, result

if TYPE_CHECKING:
    from mtcb_curate.verify.verdict import PairResult


def passage_length_problem(chars: int, limits: Limits, tokens: int | None = None) -> tuple[str, str] | None:
    """The ``passage_length`` verdict on a passage of ``chars`` characters: ``("fail", reason)``
    over twice ``limits.max_chars``, ``("warn", reason)`` over ``max_chars`` or under
    ``min_chars`` (an empty passage is ``verbatim``'s fault, not this one's); None within.
    ``tokens``, when given, is named in the reason."""
    tok = f", {tokens} tokens" if tokens is not None else ""
    if chars > 2 * limits.max_chars:
        return CheckStatus.FAIL, f"{chars} characters{tok}: over twice the maximum {limits.max_chars}"
    if chars > limits.max_chars:
        return CheckStatus.WARN, f"{chars} characters{tok}: over the maximum {limits.max_chars}"
    if 0 < chars < limits.min_chars:
        return CheckStatus.WARN, f"{chars} characters{tok}: under the minimum {limits.min_chars}"
    return None


def verbatim_problem(r: PairResult) -> str | None:
    """The ``verbatim`` rule for one pair's verification result: why its passage is not an
    exact substring of its own document (one line; always a failure), or None when it is, or
    when the cause is the pair's link (one cause, one flag: its document key matches no
    document, or the passage is verbatim in another document: ``links`` fails it)."""
    if r.verdict == Verdict.EMPTY:
        return "empty passage (a free hit for every retriever)"
    if not r.has_document or r.in_other_document:
        return None
    if r.verdict != Verdict.EXACT:
        return (f"{r.verdict}: found only after normalizing; snap it to the source text"
                if r.verdict == Verdict.NORMALIZED else "not found verbatim in its document")
    return None


def elsewhere_problem(r: PairResult) -> str | None:
    """The ``unique_passage`` rule for one pair's verification result: which other documents
    also hold the passage (one line; a warning), or None. Needs ``r.elsewhere`` filled
    (``verify_dataset``, or ``complete_elsewhere`` after a quick verdict). Says nothing when
    the passage is not in its own document at all (``links`` names the document it is in)."""
    if r.elsewhere and not r.in_other_document:
        keys = ", ".join(key_text(k) for k, _ in r.elsewhere[:3])
        return f"also in {len(r.elsewhere)} other document(s): {keys}"
    return None


@check("verbatim", CheckStatus.FAIL)
def verbatim(ctx: CheckContext) -> CheckResult:
    """Fails: an accepted pair's passage is empty or not an exact substring of its own document
    (``verify``)."""
    reasons = {pid: why for pid, r in ctx.verified.items() if (why := verbatim_problem(r)) is not None}
    linked = sum(1 for r in ctx.verified.values() if r.in_other_document or not r.has_document)
    n = len(ctx.accepted)
    message = f"{n - len(reasons) - linked} of {n} accepted passages are verbatim in their document"
    if linked:
        message += f"; {linked} passage(s) in another document than their link, or with no document (see links)"
    return result("verbatim", reasons, set(reasons), message)


@check("unique_passage", CheckStatus.WARN)
def unique_passage(ctx: CheckContext) -> CheckResult:
    """Warns: the passage also occurs in another document (that document's chunks would count
    as hits too)."""
    reasons = {pid: why for pid, r in ctx.verified.items() if (why := elsewhere_problem(r)) is not None}
    return result("unique_passage", reasons, set(), "passages that also occur in another document count "
                  "that document's chunks as hits too")


#: Member ids named in one ``shared_passage`` reason.
SHARED_IDS_SHOWN = 8


@check("shared_passage", CheckStatus.WARN)
def shared_passage(ctx: CheckContext) -> CheckResult:
    """Warns: accepted pairs of one document whose passages are the same or overlap (by
    document offsets) while their questions differ: distinct questions on shared evidence, or
    one question asked twice in other words. Settled by marking the group "distinct questions
    on shared evidence" (``S`` in the app); pairs that ask the same question are
    ``duplicates``'."""
    items = [(pid, v.pair.doc_key, v.question, v.answer, v.passage) for pid, v in ctx.views.items()]
    spans = {pid: (r.start, r.end) for pid, r in ctx.verified.items()
             if r.verdict == Verdict.EXACT and r.start is not None and r.end is not None}
    session = ctx.session
    extra = neardup.llm_links(session.workspace.get_meta(neardup.LLM_CLUSTERS_KEY), len(session))
    groups = neardup.find_shared_passages(items, threshold=ctx.threshold, spans=spans, extra_links=extra,
                                          not_duplicates=session.not_duplicates(),
                                          shared_marks=session.shared_evidence())
    return shared_passage_result(groups)


def shared_passage_result(groups: list) -> CheckResult:
    """The ``shared_passage`` result for these shared-passage groups (``neardup.Cluster``s of
    the pairs checked): every member warns, naming up to ``SHARED_IDS_SHOWN`` others (each
    reason made when it is read: ``MemberReasons``)."""
    reasons = MemberReasons(groups, shared_reason)
    pairs = sum(g.size for g in groups)
    message = (f"{len(groups)} group(s) of accepted pairs ({pairs} pairs) share or overlap a passage: "
               "mark each distinct questions on shared evidence, or keep one" if groups
               else "no accepted pairs with different questions share a passage")
    return result("shared_passage", reasons, set(), message)


def shared_reason(group: Any, pid: int) -> str:
    """The ``shared_passage`` reason of member ``pid`` of a shared-passage ``group``: its reason
    and up to ``SHARED_IDS_SHOWN`` other members, then how many more."""
    others = [o for o in group.ids if o != pid]
    named = ", ".join(f"#{o}" for o in others[:SHARED_IDS_SHOWN])
    more = f" and {len(others) - SHARED_IDS_SHOWN} more" if len(others) > SHARED_IDS_SHOWN else ""
    return f"{group.reason} with {named}{more}"


@check("passage_length", CheckStatus.FAIL)
def passage_length(ctx: CheckContext) -> CheckResult:
    """Warns below ``min_chars`` or above ``max_chars``; fails above twice ``max_chars`` (also
    reported in tokens)."""
    limits = ctx.limits
    reasons, failing = {}, set()
    for pid, r in ctx.verified.items():
        problem = passage_length_problem(r.chars, limits, r.tokens)
        if problem is not None:
            severity, reasons[pid] = problem
            if severity == CheckStatus.FAIL:
                failing.add(pid)
    return result("passage_length", reasons, failing,
                  f"passages of {limits.min_chars}-{limits.max_chars} characters; over {2 * limits.max_chars} fails")
