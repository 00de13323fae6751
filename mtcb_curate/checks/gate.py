"""The quality checklist: MTCB's pre-publish checklist made executable, the gate of ``publish``.

MTCB's own checklist (chonkie-inc/mtcb, condensed in ``../shared/notes/mtcb.md``): every
supporting passage verbatim in its document; no duplicate questions; minimal passages;
questions answerable from the passage; metadata linking every question to its corpus entry;
both configs load. ``CHECKS`` lists the checks in the order they run and are shown; each is a
``Check`` (id, worst status, function, description) and gives ``pass``, ``warn`` or ``fail``
(or ``skip``), with the offending pair ids and one line of reason per pair.

=================  ======  ==================================================================
id                 worst   what fails or warns
=================  ======  ==================================================================
``verbatim``       fail    an accepted pair's passage is empty or not an exact substring of
                           its own document (``verify``)
``unique_passage`` warn    the passage also occurs in another document (that document's
                           chunks would count as hits too)
``duplicates``     fail    identical questions, or an unresolved near-duplicate cluster,
                           among accepted pairs: the same question asked (``neardup``; "not
                           duplicates" marks hold)
``shared_passage`` warn    accepted pairs with different questions whose passages are the
                           same or overlap, not marked "distinct questions on shared evidence"
``passage_length`` fail    warn below ``min_chars`` or above ``max_chars``; fail above twice
                           ``max_chars`` (also reported in tokens)
``findable``       fail    the passage is longer than ``[preview] reference_size`` (2,048
                           characters): no chunk of that size can hold it; warn: every
                           configured chunker cuts it (from the preview cache; not evaluated
                           before a preview has run)
``answerable``     warn    the answer's content words are mostly absent from the passage (on
                           demand an LLM judges those pairs again, ``llm.judge``); the answer
                           is longer than ``MAX_ANSWER_CHARS``
``question_form``  fail    fail: empty question, or over twice ``MAX_QUESTION_CHARS``
                           (``question_form``); warn: over-long, yes/no, trivial, not a question
``links``          fail    the document key matches no corpus row or several; chunk_index out
                           of range, or its window does not contain the passage
``corpus``         fail    fail: an empty document; warn: documents without an accepted pair
``balance``        warn    the accepted set is outside the ``[stats]`` targets: a question form
                           or type above its share, documents under the minimum of pairs
                           (``stats.targets``)
``reviewed``       fail    a pair is undecided, skipped or flagged (skipped without workspace)
``conflicts``      fail    curators of a team disagree on a pair two of them decided blind and
                           no lead has decided it (passes with one curator)
``loads``          fail    the publish layout, written to a temporary folder, does not load
                           with ``datasets.load_dataset`` with the expected rows, columns, types
=================  ======  ==================================================================

Without a workspace every pair counts as accepted and ``reviewed`` is skipped with a warning,
so the checklist runs on any MTCB dataset in CI.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mtcb_curate.checks import balance, findable, links, loads, passages, questions, team
from mtcb_curate.checks.base import Check, CheckContext, ChecklistReport, CheckResult, Judge, Limits
from mtcb_curate import neardup
from mtcb_curate.store.session import ReviewSession

if TYPE_CHECKING:
    from mtcb_curate.stats.targets import Targets

#: The checks, in the order they run and are shown.
CHECKS: tuple[Check, ...] = (
    passages.verbatim, passages.unique_passage, questions.duplicates, passages.shared_passage,
    passages.passage_length, findable.findable,
    questions.answerable, questions.question_form, links.links, links.corpus, balance.balance, links.reviewed,
    team.conflicts, loads.loads,
)

#: Check ids, in the order they run and are shown.
CHECK_IDS: tuple[str, ...] = tuple(c.id for c in CHECKS)

#: id -> check.
CHECKS_BY_ID: dict[str, Check] = {c.id: c for c in CHECKS}


def run_check(check: Check, ctx: CheckContext) -> CheckResult:
    """Run one check on ``ctx``, timed (``seconds``)."""
    t0 = time.perf_counter()
    result = check(ctx)
    result.seconds = time.perf_counter() - t0
    return result


def run_checklist(session: ReviewSession, *, has_workspace: bool = True, limits: Limits | None = None,
                  threshold: float = neardup.DEFAULT_THRESHOLD, loads: bool = True,
                  progress: Callable[[str], None] | None = None, judge: Judge | None = None,
                  include_undecided: bool = False, targets: Targets | None = None,
                  cache: bool = False) -> ChecklistReport:
    """Run every check of ``CHECKS`` on ``session`` (see the module docstring).

    Args:
        session: the review session (only read).
        has_workspace: False treats every pair as accepted and skips ``reviewed``.
        limits: passage length bounds (default: ``Limits.resolve`` of the dataset's profile,
            without the config file).
        threshold: near-duplicate question similarity threshold (``neardup``).
        loads: run the ``loads`` check (writes and loads the publish layout: about 1-2 s).
        progress: called with each check id as it starts.
        judge: the LLM judge on demand (``llm.judge``): the pairs the lexical ``answerable``
            check warns about are judged again, and its verdict replaces the lexical one.
        include_undecided: "what would fail if accepted": every pair not rejected is checked
            as if accepted (``report.accepted`` lists them) and ``reviewed`` is skipped.
        targets: the ``[stats]`` targets for ``balance`` (default: ``Targets.resolve`` of the
            dataset's profile and the default config file).
        cache: reuse the verification of passages and the ``loads`` verdict of a layout seen
            before, keyed by content hash, and keep this run's (``checks.cache``).

    Returns:
        A ``ChecklistReport``; ``report.passed`` is the gate.
    """
    ctx = CheckContext.build(session, has_workspace=has_workspace, limits=limits, threshold=threshold,
                             loads=loads, judge=judge, include_undecided=include_undecided, targets=targets,
                             cache=cache)
    results = []
    for check in CHECKS:
        if progress is not None:
            progress(check.id)
        results.append(run_check(check, ctx))
    return ChecklistReport(results, ctx.accepted, has_workspace)
