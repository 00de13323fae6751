"""Does a candidate's passage support its answer? The ``answerable`` check's rules, applied to a
generated candidate before the curator sees it.

One seam over the shared evidence rules (``mtcb_curate.evidence``: figures as numbers,
computed answers from the passage's figures, content words after stemming) so that generation
judges a candidate exactly as ``mtcb-curate check`` will judge the pair; when that package is
not available the lexical rule of the ``answerable`` check (``checks.questions.overlap_problem``)
is used. No rule of its own lives here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Support:
    """The verdict on one (answer, passage).

    Attributes:
        supported: True when the passage holds what the answer states.
        missing: what the passage lacks, one line each ("figure $77.7 billion not in the
            passage and not computable from its figures"), for the feedback; may be empty when
            the rule gives only a reason.
        reason: one line for the curator ('' when supported).
    """

    supported: bool
    missing: tuple[str, ...] = ()
    reason: str = ""


def answer_support(question: str, answer: str, passage: str) -> Support:
    """Judge whether ``passage`` supports ``answer`` (to ``question``) by the ``answerable``
    check's rules (see the module docstring).

    Returns:
        A :class:`Support`.
    """
    judged = _evidence_support(question, answer, passage)
    if judged is not None:
        return judged
    from mtcb_curate.checks.questions import overlap_problem
    from mtcb_curate.verify.words import content_words

    why = overlap_problem(answer, passage)
    if why is None:
        return Support(True)
    have = content_words(passage)
    absent = [w for w in sorted(content_words(answer)) if w not in have]
    return Support(False, (f"not in the passage: {', '.join(absent[:8])}",) if absent else (), why)


def _evidence_support(question: str, answer: str, passage: str) -> Support | None:
    """The shared evidence package's verdict (``evidence.support``: ``supported`` is False only
    for an UNSUPPORTED verdict), or None when the package is not there."""
    try:
        from mtcb_curate.evidence import support as evidence_support
    except ImportError:
        return None
    verdict = evidence_support(answer, passage, question=question or None)
    ok = bool(verdict.supported)
    missing = tuple(str(m) for m in verdict.missing or ())
    reason = "" if ok else (verdict.reason() or "the passage does not hold what the answer states")
    return Support(ok, missing, reason)
