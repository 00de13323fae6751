"""Checks on the supporting passages: ``verbatim``, ``unique_passage``, ``passage_length``; and
the ``passage_length`` verdict ``llm.generate`` shares to refuse candidates."""

from __future__ import annotations

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, Limits, check, key_text, result


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


@check("verbatim", CheckStatus.FAIL)
def verbatim(ctx: CheckContext) -> CheckResult:
    """Fails: an accepted pair's passage is empty or not an exact substring of its own document
    (``verify``)."""
    reasons = {}
    for pid, r in ctx.verified.items():
        if r.verdict == "empty":
            reasons[pid] = "empty passage (a free hit for every retriever)"
        elif not r.has_document:
            reasons[pid] = f"no document has the key '{key_text(r.doc_key)}'"
        elif r.verdict != "exact":
            reasons[pid] = (f"{r.verdict}: found only after normalizing; snap it to the source text"
                            if r.verdict == "normalized" else "not found verbatim in its document")
    n = len(ctx.accepted)
    return result("verbatim", reasons, set(reasons),
                  f"{n - len(reasons)} of {n} accepted passages are verbatim in their document")


@check("unique_passage", CheckStatus.WARN)
def unique_passage(ctx: CheckContext) -> CheckResult:
    """Warns: the passage also occurs in another document (that document's chunks would count
    as hits too)."""
    reasons = {}
    for pid, r in ctx.verified.items():
        if r.elsewhere:
            keys = ", ".join(key_text(k) for k, _ in r.elsewhere[:3])
            reasons[pid] = f"also in {len(r.elsewhere)} other document(s): {keys}"
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
