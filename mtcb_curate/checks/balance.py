"""The ``balance`` check: the accepted set's shape against the target distributions of the
``[stats]`` config table (``stats.targets``): no question form or type above its share, every
document with at least the minimum of pairs. A warning about the whole set, never a failure:
the targets are a curator's aims, and no single pair is at fault."""

from __future__ import annotations

from collections import Counter

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, check


@check("balance", CheckStatus.WARN)
def balance(ctx: CheckContext) -> CheckResult:
    """Warns: the accepted pairs are outside the ``[stats]`` targets (a question form or type
    above its share; documents with fewer pairs than the minimum)."""
    from mtcb_curate.stats.questions import question_form, question_type
    from mtcb_curate.stats.targets import Targets, balance_problems

    targets = ctx.targets or Targets.resolve(ctx.dataset.profile)
    forms: Counter[str] = Counter()
    types: Counter[str] = Counter()
    tagged: dict[int, tuple[str, str]] = {}
    per_doc = {k: 0 for k in ctx.dataset.documents}
    for pid, v in ctx.views.items():
        f = question_form(v.question)
        t = question_type(v.question, v.answer, v.passage, f)
        tagged[pid] = (f, t)
        forms[f] += 1
        types[t] += 1
        if v.pair.doc_key in per_doc:
            per_doc[v.pair.doc_key] += 1
    problems = balance_problems(forms, types, per_doc, targets)
    if problems:
        # The pairs of an over-represented form or type are listed (the checklist screen shows
        # them); a document short of pairs has none to list.
        total = len(tagged)
        reasons: dict[int, str] = {}
        for i, (label, counts, limit) in enumerate((("question form", forms, targets.max_form_share),
                                                    ("question type", types, targets.max_type_share))):
            over = {k for k, n in counts.items() if limit is not None and total and n / total > limit}
            for pid, tags in tagged.items():
                if tags[i] in over:
                    reasons[pid] = "; ".join(filter(None, (reasons.get(pid), f"{label} '{tags[i]}' is over its share "
                                                           f"({counts[tags[i]] / total:.0%}, target at most {limit:.0%})")))
        return CheckResult("balance", CheckStatus.WARN, "; ".join(problems), sorted(reasons), reasons)
    return CheckResult("balance", CheckStatus.PASS, f"{sum(forms.values())} pairs within the [stats] targets")
