"""Agreement between curators on the pairs two of them decided blind (the overlap).

Coefficients (nominal data), from well-kept libraries:

- Cohen's kappa for each pair of curators, over the pairs both decided:
  ``nltk.metrics.agreement.AnnotationTask.kappa_pairwise`` (Cohen 1960, kappa = (p_o - p_e) /
  (1 - p_e), p_e from each curator's own label shares; equal to scikit-learn's
  ``cohen_kappa_score``, which would pull scipy, about 160 MB, for this one formula);
- Krippendorff's alpha over all curators, missing votes allowed: ``krippendorff.alpha`` with
  ``level_of_measurement="nominal"`` (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

Both are computed on the decision (accepted / rejected / skipped / flagged) and, per rejection
reason R, on "rejected for R" against anything else. A coefficient is None where it is undefined
(fewer than two pairs, or every vote the same value: p_e = 1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from mtcb_curate.dataset.model import Status

#: Votes: pair id -> {curator: (status, reason or None)}.
Votes = dict[int, dict[str, tuple[str, "str | None"]]]


@dataclass
class PairKappa:
    """Cohen's kappa of two curators (``a`` < ``b``) over the ``pairs`` both decided."""

    a: str
    b: str
    pairs: int
    kappa: float | None


@dataclass
class Agreement:
    """The agreement figures of one labelling (the decision, or one rejection reason).

    Attributes:
        pairs: overlap pairs decided by at least two curators.
        agreed: of those, pairs where every curator gave the same label.
        alpha: Krippendorff's alpha over all curators (None: undefined).
        kappas: Cohen's kappa for each pair of curators who share at least one pair.
    """

    pairs: int
    agreed: int
    alpha: float | None
    kappas: list[PairKappa] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _label(vote: tuple[str, str | None]) -> str:
    from mtcb_curate.store.team import reason_category

    status, reason = vote
    return f"rejected:{reason_category(reason)}" if status == Status.REJECTED else status


def agreement(votes: Votes, labeller=None) -> Agreement:
    """Agreement over ``votes`` (pairs with fewer than two votes are ignored).

    ``labeller(vote) -> str`` maps a (status, reason) vote to its label; the default is the
    status with, for a rejection, its reason category (``store.team.votes_agree``'s rule).
    """
    import numpy as np

    labeller = labeller or _label
    shared = {pid: {c: labeller(v) for c, v in vs.items()} for pid, vs in votes.items() if len(vs) >= 2}
    curators = sorted({c for vs in shared.values() for c in vs})
    agreed = sum(1 for vs in shared.values() if len(set(vs.values())) == 1)
    values = sorted({lab for vs in shared.values() for lab in vs.values()})
    code = {v: i for i, v in enumerate(values)}
    alpha = None
    if shared and len(values) > 1:
        import krippendorff

        pids = sorted(shared)
        matrix = np.full((len(curators), len(pids)), np.nan)
        for j, pid in enumerate(pids):
            for i, c in enumerate(curators):
                if c in shared[pid]:
                    matrix[i, j] = code[shared[pid][c]]
        try:
            alpha = _finite(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
        except (ValueError, ZeroDivisionError):
            alpha = None
    kappas = []
    for a, b in itertools.combinations(curators, 2):
        both = [(vs[a], vs[b]) for vs in shared.values() if a in vs and b in vs]
        if not both:
            continue
        kappas.append(PairKappa(a, b, len(both), _kappa([x for x, _ in both], [y for _, y in both])))
    return Agreement(len(shared), agreed, alpha, kappas)


def _kappa(x: list[str], y: list[str]) -> float | None:
    if len(x) < 2 or len(set(x) | set(y)) < 2:
        return None
    from nltk.metrics.agreement import AnnotationTask

    task = AnnotationTask(data=[("a", i, v) for i, v in enumerate(x)] + [("b", i, v) for i, v in enumerate(y)])
    try:
        return _finite(task.kappa_pairwise("a", "b"))
    except ZeroDivisionError:
        return None


def _finite(value: Any) -> float | None:
    v = float(value)
    return v if math.isfinite(v) else None


def per_reason(votes: Votes) -> dict[str, Agreement]:
    """For each rejection reason category R that any curator gave on the overlap: agreement on
    "rejected for R" against anything else."""
    from mtcb_curate.store.team import reason_category

    reasons = sorted({reason_category(r) or "(no reason)" for vs in votes.values() if len(vs) >= 2
                      for s, r in vs.values() if s == Status.REJECTED})
    out = {}
    for reason in reasons:
        def lab(vote, reason=reason):
            return "yes" if vote[0] == Status.REJECTED and (reason_category(vote[1]) or "(no reason)") == reason else "no"
        out[reason] = agreement(votes, lab)
    return out
