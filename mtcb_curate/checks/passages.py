"""Checks on the supporting passages: ``verbatim``, ``unique_passage``, ``passage_length``; and
the ``passage_length`` verdict ``llm.generate`` shares to refuse candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, Limits, check, key_text, result

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
    exact substring of its own document (one line; always a failure), or None when it is."""
    if r.verdict == "empty":
        return "empty passage (a free hit for every retriever)"
    if not r.has_document:
        return f"no document has the key '{key_text(r.doc_key)}'"
    if r.verdict != "exact":
        return (f"{r.verdict}: found only after normalizing; snap it to the source text"
                if r.verdict == "normalized" else "not found verbatim in its document")
    return None


def elsewhere_problem(r: PairResult) -> str | None:
    """The ``unique_passage`` rule for one pair's verification result: which other documents
    also hold the passage (one line; a warning), or None. Needs ``r.elsewhere`` filled
    (``verify_dataset``, or ``complete_elsewhere`` after a quick verdict)."""
    if r.elsewhere:
        keys = ", ".join(key_text(k) for k, _ in r.elsewhere[:3])
        return f"also in {len(r.elsewhere)} other document(s): {keys}"
    return None


@check("verbatim", CheckStatus.FAIL)
def verbatim(ctx: CheckContext) -> CheckResult:
    """Fails: an accepted pair's passage is empty or not an exact substring of its own document
    (``verify``)."""
    reasons = {pid: why for pid, r in ctx.verified.items() if (why := verbatim_problem(r)) is not None}
    n = len(ctx.accepted)
    return result("verbatim", reasons, set(reasons),
                  f"{n - len(reasons)} of {n} accepted passages are verbatim in their document")


@check("unique_passage", CheckStatus.WARN)
def unique_passage(ctx: CheckContext) -> CheckResult:
    """Warns: the passage also occurs in another document (that document's chunks would count
    as hits too)."""
    reasons = {pid: why for pid, r in ctx.verified.items() if (why := elsewhere_problem(r)) is not None}
    return result("unique_passage", reasons, set(), "passages that also occur in another document count "
                  "that document's chunks as hits too")


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
