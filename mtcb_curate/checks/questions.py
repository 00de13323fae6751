"""Checks on questions and answers: ``duplicates``, ``answerable``, ``question_form``; and the
lexical helpers (``content_words``, ``answer_overlap``) and the answer bound ``llm.generate``
shares to refuse candidates."""

from __future__ import annotations

from typing import Any

from mtcb_curate.dataset import question_form as form
from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, MemberReasons, check, result
from mtcb_curate.neardup import LLM_CLUSTERS_KEY, find_clusters, llm_links
from mtcb_curate.evidence import support
from mtcb_curate.verify.words import MIN_ANSWER_OVERLAP, answer_overlap, content_words  # noqa: F401 (re-exported)


#: An answer longer than this (characters) is not the concise answer of one or two sentences
#: MTCB asks for: ``answerable`` warns, and a generated candidate is refused. Our bound: the
#: longest answer in the shared data is 609 characters (a FinanceBench answer listing three
#: lawsuits); squad-mtcb's longest is 160.
MAX_ANSWER_CHARS = 1_000



def answer_length_problem(answer: str) -> str | None:
    """Why ``answer`` is too long (one line), or None: more than ``MAX_ANSWER_CHARS`` characters."""
    n = len(answer)
    if n > MAX_ANSWER_CHARS:
        return f"answer of {n:,} characters: over the maximum {MAX_ANSWER_CHARS} (one or two sentences)"
    return None


def overlap_problem(answer: str, passage: str, question: str | None = None) -> str | None:
    """The ``answerable`` rule for one pair without the LLM judge: why the passage does not hold
    what the answer needs (``evidence.support``: figures as numbers or computed from the
    passage's figures, stemmed words, paraphrase; the missing parts named), or None when it
    does or when the answer states nothing to look for ("Yes")."""
    found = support(answer, passage, question)
    return None if found.supported else found.reason()


def join_reasons(*reasons: str | None) -> str:
    """One line of several reasons of one check: the non-empty ones joined by ``"; "``."""
    return "; ".join(r for r in reasons if r)


def answerable_problem(answer: str, passage: str, question: str | None = None) -> str | None:
    """The ``answerable`` rule for one pair without the LLM judge (a warning): the support
    reason (:func:`overlap_problem`) and the answer-length reason joined, or None when neither
    applies."""
    return join_reasons(overlap_problem(answer, passage, question), answer_length_problem(answer)) or None


def question_form_problem(question: str) -> tuple[CheckStatus, str] | None:
    """The ``question_form`` rule for one pair: ``(CheckStatus.FAIL or WARN, reason)`` from
    ``question_form.form_problem``, or None."""
    problem = form.form_problem(question)
    if problem is None:
        return None
    severity, why = problem
    return CheckStatus(severity), why


@check("duplicates", CheckStatus.FAIL)
def duplicates(ctx: CheckContext) -> CheckResult:
    """Fails: identical questions, or an unresolved near-duplicate cluster, among accepted pairs:
    pairs that ask the same question (identical, similar, same answer with a similar question,
    the LLM's semantic links; ``neardup``; "not duplicates" marks hold). Shared passages are
    ``shared_passage``'s."""
    items = [(pid, v.pair.doc_key, v.question, v.answer, v.passage) for pid, v in ctx.views.items()]
    extra = llm_links(ctx.session.workspace.get_meta(LLM_CLUSTERS_KEY), len(ctx.session))
    clusters = find_clusters(items, threshold=ctx.threshold, not_duplicates=ctx.session.not_duplicates(),
                             extra_links=extra)
    return duplicates_result(clusters, ctx.threshold)


def duplicates_result(clusters: list, threshold: float) -> CheckResult:
    """The ``duplicates`` result for these near-duplicate clusters (``neardup.Cluster``s of the
    pairs checked) at ``threshold``: every member fails, naming the others (each reason made
    when it is read: ``MemberReasons``)."""
    reasons = MemberReasons(clusters, duplicate_reason)
    return result("duplicates", reasons, set(reasons),
                  f"{len(clusters)} unresolved near-duplicate cluster(s) among accepted pairs "
                  f"(threshold {threshold:g})" if clusters else "no identical or near-duplicate questions "
                  "among accepted pairs")


def duplicate_reason(cluster: Any, pid: int) -> str:
    """The ``duplicates`` reason of member ``pid`` of a near-duplicate ``cluster``: its reason
    and every other member (``near-duplicate with #3, #9``)."""
    return f"{cluster.reason} with {', '.join(f'#{o}' for o in cluster.ids if o != pid)}"


@check("answerable", CheckStatus.WARN)
def answerable(ctx: CheckContext) -> CheckResult:
    """Warns: the passage does not hold what the answer needs (``evidence.support``: a figure
    neither in it nor computable from its figures, a year it lacks, or most of the answer's
    words absent even in other words; on demand an LLM judges those pairs again,
    ``llm.judge``); the answer is longer than ``MAX_ANSWER_CHARS``."""
    views = ctx.views
    reasons = {pid: why for pid, why in _support_reasons(ctx).items() if why is not None}
    too_long = {pid: why for pid, v in views.items() if (why := answer_length_problem(v.answer))}
    message = "the passage should hold what the answer states (figures as numbers or computed, words or paraphrases)"
    if ctx.judge is not None and reasons:
        verdicts = ctx.judge([(pid, views[pid].question, views[pid].answer, views[pid].passage)
                              for pid in sorted(reasons)])
        cleared = 0
        for pid, (supported, why) in verdicts.items():
            if supported is True:
                del reasons[pid]
                cleared += 1
            elif supported is False:
                reasons[pid] = f"LLM judge: not supported: {why}"
            else:
                reasons[pid] += f" (LLM judge gave no verdict: {why})"
        message += f"; LLM judge: {len(verdicts)} judged, {cleared} supported after all"
    for pid, why in too_long.items():
        reasons[pid] = join_reasons(reasons.get(pid), why)
    message += f"; answers of at most {MAX_ANSWER_CHARS:,} characters"
    return result("answerable", reasons, set(), message)


def _support_reasons(ctx: CheckContext) -> dict[int, str | None]:
    """pair id -> :func:`overlap_problem` of its texts (None: supported), read from the
    checklist cache where kept (``ChecklistCache.answerable``) and kept for next time (only
    when the paraphrase model is wordllama: the fuzzy fallback's reasons are not kept)."""
    views = ctx.views
    if ctx.cache is None:
        return {pid: overlap_problem(v.answer, v.passage, v.question) for pid, v in views.items()}
    from mtcb_curate.checks.cache import answerable_key

    keys = {pid: answerable_key(v.question, v.answer, v.passage) for pid, v in views.items()}
    kept = ctx.cache.answerable(keys.values())
    out, new = {}, {}
    for pid, v in views.items():
        key = keys[pid]
        if key in kept:
            out[pid] = kept[key]
        else:
            out[pid] = new[key] = overlap_problem(v.answer, v.passage, v.question)
    if new:
        from mtcb_curate.evidence.paraphrase import WordLlamaParaphraser, default_paraphraser

        if isinstance(default_paraphraser(), WordLlamaParaphraser):  # never keep the fallback's
            ctx.cache.put_answerable(new, keep=len(views))
    return out


@check("question_form", CheckStatus.FAIL)
def question_form(ctx: CheckContext) -> CheckResult:
    """Fails: an empty question, or one over twice ``MAX_QUESTION_CHARS`` (``question_form``);
    warns: over-long, yes/no, trivial, not a question."""
    reasons, failing = {}, set()
    for pid, v in ctx.views.items():
        problem = question_form_problem(v.question)
        if problem is not None:
            severity, reasons[pid] = problem
            if severity == CheckStatus.FAIL:
                failing.add(pid)
    return result("question_form", reasons, failing, "no empty, over-long, yes/no, trivial or non-questions")
