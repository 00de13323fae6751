"""Computed answers: is the answer's figure derivable from figures a passage holds?

FinanceBench-style answers are often computed ("30.8 %" year-over-year growth, "24.26" fixed
asset turnover) rather than quoted. :func:`derive` searches arithmetic over the passage's figures
(years excluded) for a result equal to the target figure within rounding to the target's
precision (half a unit of its last written digit, :attr:`Figure.tolerance`), and returns the
derivation, so a screen can say "30.8 % = (177,866 - 135,987) / 135,987 x 100".

Operations tried, simplest first (a, b, c are passage figures, signs as written and as
magnitudes; the source of each formula is the usual financial-ratio definition):

==========================  ==========================================  ======================
name                        formula                                      operands
==========================  ==========================================  ======================
``sum``                     a + b                                        any two
``difference``              a - b                                        any two
``ratio``                   a / b                                        any two
``percent of``              a / b x 100                                  any two
``percentage change``       (a - b) / |b| x 100                          two near each other
``average``                 (a + b) / 2                                  two near each other
``ratio to an average``     a / ((b + c) / 2)  (turnover, ROA)           b, c near each other
``average of three``        (a + b + c) / 3                              three near each other
``sum to a ratio``          (a + b) / c  (EBITDA margin: (operating      any three (only
                            income + D&A) / revenue)                     when asked for)
``sum less one``            a + b - c  (EBITDA less capex)               any three (idem)
==========================  ==========================================  ======================

"Near each other" means at most :data:`NEAR` figures apart in the passage (a line item's values
over the years sit side by side in a row). A percentage target is compared with the x 100 forms
and with sums, differences and averages of percentages (percentage points); any other target
with the plain forms. Figures are compared as written (a table's figures share its scale); when
the target's scale and the operands' are both known and differ, the result is also compared in
absolute units.

Chance: a passage with many figures offers many combinations, and a low-precision target can be
met by chance. Three-operand forms are tried only for targets of at least
:data:`MIN_DIGITS_THREE` significant digits and passages of at most :data:`MAX_FIGURES_THREE`
figures; the derivation is returned so a curator can judge it. A derivation shows the answer is
consistent with the passage, not that it is right.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from mtcb_curate.evidence.figures import Figure, FigureKind, significant_digits

#: Figures at most this many places apart count as "near each other" (a row of up to four years).
NEAR = 3
#: At most this many distinct passage figures are combined (the first ones in the passage).
MAX_FIGURES = 400
#: Three-operand forms only for passages of at most this many figures ...
MAX_FIGURES_THREE = 120
#: ... and targets of at least this many significant digits.
MIN_DIGITS_THREE = 3
#: The forms over any three figures, (a + b) / c and a + b - c, only for at most this many
#: figures (the caller narrows them to the rows a question names).
MAX_FIGURES_SUMS = 60


#: Financial abbreviations and the words a table row uses for them (our list), so a question's
#: "COGS" relates to a row "Cost of products sold" when derivations are ranked.
FINANCIAL_TERMS: dict[str, str] = {
    "cogs": "cost goods products sold sales", "capex": "capital expenditures purchases property plant equipment",
    "ppe": "property plant equipment", "pp&e": "property plant equipment", "ppne": "property plant equipment",
    "d&a": "depreciation amortization", "ebitda": "operating income depreciation amortization",
    "ebit": "operating income", "revenue": "revenues sales", "revenues": "revenues sales", "sales": "revenues sales",
    "sg&a": "selling general administrative", "roa": "net income total assets", "roe": "net income equity",
    "dpo": "accounts payable cost sales inventory", "dso": "accounts receivable revenues",
    "inventory": "inventories", "margin": "income revenues sales", "eps": "earnings per share",
    "fcf": "cash operating activities purchases property", "opex": "operating expenses",
    "fixed": "property plant equipment", "working": "current assets liabilities",
}


@dataclass(frozen=True, slots=True)
class Derivation:
    """How a target figure follows from passage figures.

    Attributes:
        operation: the operation's name (module docstring's table).
        operands: the passage figures used, in the formula's order.
        value: the result, in the operands' units (x 100 for percentages).
        formula: the arithmetic written out with the figures as written
            (``"(177,866 - 135,987) / 135,987 x 100 = 30.80"``).
        related: how many operands' row labels share a word with the text the derivation was
            ranked against (the question); 0 when none was given.
        labels: each operand's row label (``figure_label``), "" when unknown.
    """

    operation: str
    operands: tuple[Figure, ...]
    value: float
    formula: str
    related: int = 0
    labels: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for the curator: ``"percentage change: (177,866 - 135,987) / 135,987 x 100 = 30.8"``
        (with the operands' row labels when known)."""
        named = [f"{f.describe()} ({lab})" for f, lab in zip(self.operands, self.labels) if lab]
        return f"{self.operation}: {self.formula}" + (f" from {'; '.join(named)}" if named else "")


def _fmt(v: float) -> str:
    if abs(v) >= 100 or v == int(v):
        return f"{v:,.2f}".rstrip("0").rstrip(".") if v != int(v) else f"{int(v):,}"
    return f"{v:.4g}"


def _w(f: Figure) -> str:
    return f"{f.magnitude:,.{f.decimals}f}"


_TWO = ("sum", "difference", "ratio", "percent of")
_NEAR_TWO = ("percentage change", "average")


#: How each operation is written, its figures as ``{0}``, ``{1}``, ``{2}``.
_FORMULAS = {
    "sum": "{0} + {1}",
    "difference": "{0} - {1}",
    "ratio": "{0} / {1}",
    "percent of": "{0} / {1} x 100",
    "percentage change": "({0} - {1}) / {1} x 100",
    "average": "({0} + {1}) / 2",
    "ratio to an average": "{0} / (({1} + {2}) / 2)",
    "sum to a ratio": "({0} + {1}) / {2}",
    "sum to a percentage": "({0} + {1}) / {2} x 100",
    "sum less one": "{0} + {1} - {2}",
    "average of three": "({0} + {1} + {2}) / 3",
}


def _formula(op: str, fs: tuple[Figure, ...], value: float) -> str:
    return f"{_FORMULAS[op].format(*(_w(f) for f in fs))} = {_fmt(value)}"


def _distinct(figures: list[Figure]) -> list[Figure]:
    seen, out = set(), []
    for f in figures:
        if f.is_year or f.magnitude == 0:
            continue
        key = (f.magnitude, f.kind == FigureKind.PERCENT)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out[:MAX_FIGURES]


def _about_stems(about: str) -> frozenset[str]:
    from mtcb_curate.evidence.words import content_stems

    import re

    tokens = set(re.findall(r"[a-z][a-z&]*", about.lower()))
    extra = " ".join(v for k, v in FINANCIAL_TERMS.items() if k in tokens or f" {k} " in f" {about.lower()} ")
    return content_stems(f"{about} {extra}")


def question_stems(question: str) -> frozenset[str]:
    """The content stems of ``question`` with its financial abbreviations expanded
    (:data:`FINANCIAL_TERMS`: "PP&E" adds property, plant, equipment): what :func:`derive` ranks
    operands' row labels against, and what the shrink takes to name a table's rows."""
    return _about_stems(question)


#: At most this many hits per operation are ranked (the first in passage order).
MAX_HITS = 64


def derive(target: Figure, figures: list[Figure], *, passage: str | None = None,
           about: str | None = None) -> Derivation | None:
    """The most plausible derivation of ``target`` from ``figures`` (module docstring), or None:
    the first of :func:`derivations`.

    Args:
        target: the answer's figure (not a year).
        figures: the passage's figures (``parse_figures``), in passage order.
        passage: the text ``figures`` were parsed from, to read each operand's row label.
        about: the text to rank derivations against (the question): among all derivations
            found, the one with most operands whose row label shares a content word with it
            (financial abbreviations expanded, :data:`FINANCIAL_TERMS`) wins; ties go to the
            simpler operation, then to the earlier operands.

    Returns:
        A :class:`Derivation` whose value equals the target's magnitude within its tolerance, or
        None when no operation of the table gives it. Never raises.
    """
    found = derivations(target, figures, passage=passage, about=about, limit=1)
    return found[0] if found else None


def derivations(target: Figure, figures: list[Figure], *, passage: str | None = None,
                about: str | None = None, limit: int = 50, sums_of_three: bool = False) -> list[Derivation]:
    """Every derivation of ``target`` from ``figures`` found (module docstring), best first as
    :func:`derive` ranks them, at most ``limit``: for a caller that ranks them by more than the
    row labels (the table's columns, the question's wording). Arguments as :func:`derive`;
    ``sums_of_three`` also tries (a + b) / c and a + b - c, which meet a target by chance in any
    table of many figures: only for figures a caller has narrowed to the rows a question names
    (:func:`derive` never tries them). Never raises."""
    if target.is_year:
        return []
    fs = _distinct(figures)
    if len(fs) < 2:
        return []
    t = target.magnitude
    tol = target.tolerance * (1 + 1e-9)
    pct_target = target.kind == FigureKind.PERCENT
    vals = np.array([f.magnitude for f in fs], dtype=np.float64)
    is_pct = np.array([f.kind == FigureKind.PERCENT for f in fs])
    n = len(fs)
    scales = {f.scale for f in fs if f.scale is not None}
    alt = None  # the target in the operands' units, when both scales are known and differ
    if target.scale is not None and len(scales) == 1:
        (s,) = scales
        if s != target.scale:
            alt = (t * target.scale / s, tol * target.scale / s)

    def close(values: np.ndarray) -> np.ndarray:
        ok = np.abs(values - t) <= tol
        if alt is not None:
            ok |= np.abs(values - alt[0]) <= alt[1]
        return ok

    found: list[tuple[int, tuple[int, ...], float, str]] = []  # (op rank, operand indices, value, name)
    a = vals[:, None]
    b = vals[None, :]
    idx = np.arange(n)
    off_diag = idx[:, None] != idx[None, :]
    upper = idx[:, None] < idx[None, :]
    near = (np.abs(idx[:, None] - idx[None, :]) <= NEAR) & off_diag
    both_pct = is_pct[:, None] & is_pct[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if pct_target:
            tables = [("percent of", a / b * 100.0, off_diag),
                      ("percentage change", (a - b) / b * 100.0, near),
                      ("sum", a + b, upper & both_pct),
                      ("difference", a - b, off_diag & both_pct),
                      ("average", (a + b) / 2.0, near & upper & both_pct)]
        else:
            tables = [("sum", a + b, upper), ("difference", a - b, off_diag), ("ratio", a / b, off_diag),
                      ("average", (a + b) / 2.0, near & upper)]
        for rank, (name, values, mask) in enumerate(tables):
            for i, j in np.argwhere(close(values) & mask)[:MAX_HITS]:
                found.append((rank, (int(i), int(j)), float(values[i, j]), name))
        three = significant_digits(target) >= MIN_DIGITS_THREE and n <= MAX_FIGURES_THREE
        if three and not pct_target:
            for j, k in combinations(range(n), 2):
                if k - j > NEAR:
                    continue
                values = vals / ((vals[j] + vals[k]) / 2.0)
                ok = close(values)
                ok[[j, k]] = False
                for i in np.flatnonzero(ok)[:MAX_HITS]:
                    found.append((10, (int(i), j, k), float(values[i]), "ratio to an average"))
        if three:
            for j in range(n - 2):
                for k in range(j + 1, min(n, j + NEAR + 1)):
                    for m in range(k + 1, min(n, j + NEAR + 1)):
                        if pct_target and not (is_pct[j] and is_pct[k] and is_pct[m]):
                            continue
                        v = float((vals[j] + vals[k] + vals[m]) / 3.0)
                        if close(np.array([v]))[0]:
                            found.append((11, (j, k, m), v, "average of three"))
        if sums_of_three and three and n <= MAX_FIGURES_SUMS:
            # (a + b) / c and a + b - c over any three distinct figures (a < b: the sum is symmetric)
            pair_sum = a + b
            for k in range(n):
                if pct_target:
                    values, name = pair_sum / vals[k] * 100.0, "sum to a percentage"
                else:
                    values, name = pair_sum / vals[k], "sum to a ratio"
                for vs, nm, rk in ((values, name, 12), (pair_sum - vals[k], "sum less one", 13)):
                    if pct_target and nm == "sum less one":
                        continue
                    ok = close(vs) & upper
                    ok[k, :] = False
                    ok[:, k] = False
                    for i, j in np.argwhere(ok)[:MAX_HITS]:
                        found.append((rk, (int(i), int(j), k), float(vs[i, j]), nm))
    if not found:
        return []
    labels: dict[int, str] = {}
    stems: dict[int, frozenset[str]] = {}
    want = _about_stems(about) if about else frozenset()
    if passage is not None:
        from mtcb_curate.evidence.figures import figure_label
        from mtcb_curate.evidence.words import content_stems

        for _, ops, _, _ in found:
            for i in ops:
                if i not in labels:
                    labels[i] = figure_label(passage, fs[i])
                    stems[i] = content_stems(labels[i])

    def related(ops: tuple[int, ...]) -> int:
        return sum(1 for i in ops if stems.get(i, frozenset()) & want) if want else 0

    out = []
    for rank, ops, value, name in sorted(found, key=lambda h: (-related(h[1]), h[0], h[1]))[:limit]:
        operands = tuple(fs[i] for i in ops)
        out.append(Derivation(name, operands, value, _formula(name, operands, value), related(ops),
                              tuple(labels.get(i, "") for i in ops)))
    return out


# -- sums of the rows of named blocks (a total the filing does not print) ------------------------


#: Totals a question may name that a filing need not print, and the blocks of a statement whose
#: rows they add, each with the sign its rows take (the usual definitions: working capital =
#: current assets - current liabilities; net debt = debt - cash). A curator's figure may take
#: only some of a block's rows ("operating current assets and current liabilities"): every
#: choice of rows is tried, at least one row of each block.
NAMED_SUMS: dict[str, tuple[tuple[str, int], ...]] = {
    "working capital": (("current assets", 1), ("current liabilities", -1)),
}
#: At most this many rows in all are combined (2 ** 12 choices).
MAX_SUM_ROWS = 12
#: A sum of named rows is taken only when the expected number of choices of rows meeting the
#: target by chance is at most this (our own bound, :func:`sum_chance`): a target of few
#: significant digits over many rows is refused.
MAX_SUM_CHANCE = 0.05
#: ... and only for targets of at least this many significant digits.
MIN_DIGITS_SUMS = 3


def sum_chance(values: list[float], groups: list[int], tolerance: float) -> float:
    """The expected number of choices of rows (at least one of each group) whose signed sum
    meets a target by chance: the choices, times the width of the target's rounding interval
    (2 x ``tolerance``, twice over since a magnitude is compared), over the spread of the sums
    (the sum of the rows' magnitudes). A plain uniform-spread estimate, our own."""
    sizes = [groups.count(g) for g in sorted(set(groups))]
    choices = 1
    for n in sizes:
        choices *= 2 ** n - 1
    spread = sum(abs(v) for v in values) or 1.0
    return choices * 4.0 * tolerance / spread


def signed_sums(target: Figure, blocks: list[tuple[list[Figure], int]], *,
                labels: list[list[str]] | None = None) -> Derivation | None:
    """``target`` as the signed sum of some rows of named blocks (:data:`NAMED_SUMS`): each
    block's figures (one per row, the column the question names) with its sign; every choice
    of at least one row per block is tried, and the one choice whose sum equals the target's
    magnitude within its rounding is the derivation ("sum of named rows": ``1,721 + 2,904 +
    1,157 - 1,804 - 3,147 = 831``).

    Guarded against chance (a big table meets any figure with some choice of rows): None for a
    target of fewer than :data:`MIN_DIGITS_SUMS` significant digits, more than
    :data:`MAX_SUM_ROWS` rows, an expected chance count (:func:`sum_chance`) over
    :data:`MAX_SUM_CHANCE`, or more than one choice meeting the target. ``labels``: each
    block's row labels, for the derivation. Never raises."""
    if target.is_year or significant_digits(target) < MIN_DIGITS_SUMS or len(blocks) < 1:
        return None
    figs: list[Figure] = []
    signs: list[int] = []
    group: list[int] = []
    names: list[str] = []
    for g, (fs, sign) in enumerate(blocks):
        if not fs:
            return None
        for k, f in enumerate(fs):
            figs.append(f)
            signs.append(sign)
            group.append(g)
            names.append(labels[g][k] if labels is not None else "")
    n = len(figs)
    if n > MAX_SUM_ROWS:
        return None
    values = [s * f.value for f, s in zip(figs, signs)]
    tol = target.tolerance * (1 + 1e-9)
    if sum_chance(values, group, target.tolerance) > MAX_SUM_CHANCE:
        return None
    masks = np.arange(1, 2 ** n, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    ok = np.ones(len(masks), dtype=bool)
    for g in set(group):
        ok &= bits[:, [k for k in range(n) if group[k] == g]].any(axis=1)
    sums = bits.astype(np.float64) @ np.array(values)
    hit = ok & (np.abs(np.abs(sums) - target.magnitude) <= tol)
    rows = np.flatnonzero(hit)
    if len(rows) != 1:
        return None
    chosen = [k for k in range(n) if bits[rows[0], k]]
    value = float(sums[rows[0]])
    formula = ""
    for j, k in enumerate(chosen):
        w = _w(figs[k])
        if values[k] < 0:
            formula += f"- {w}" if j == 0 else f" - {w}"
        else:
            formula += w if j == 0 else f" + {w}"
    formula += f" = {_fmt(value)}"
    return Derivation("sum of named rows", tuple(figs[k] for k in chosen), value, formula, len(chosen),
                      tuple(names[k] for k in chosen))
