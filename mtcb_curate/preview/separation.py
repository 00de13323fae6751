"""Can these pairs tell chunkers apart? Per-pair discrimination and paired statistics.

The findability preview scores every pair under every configured chunker with MTCB's rule
(``preview.scoring``). Over the same pairs, this module says:

- per pair, which chunkers hit it and which miss it at each k (a hit at k: the first retrieved
  chunk holding the passage is ranked k or better). A pair is **discriminating** at k when the
  chunkers' outcomes differ there, **found by all** when every chunker hits it at the largest
  k (it only adds to everyone's score) and **found by none** when no chunker does (often a bad
  pair: check it);
- for every two chunkers and every k, the recall@k difference with a **paired bootstrap**
  confidence interval (the pairs resampled with replacement, the same resamples for both
  chunkers: ``scipy.stats.bootstrap`` of the pairs' differences, the procedure of its
  ``paired=True``; BCa interval; Efron 1987, "Better bootstrap
  confidence intervals", JASA 82:171-185; percentile above ``BCA_MAX_PAIRS`` pairs, where
  BCa's jackknife costs n² operations) and an **exact McNemar test** on the discordant pairs
  (pairs one chunker hits and the other misses: under no difference each is equally likely to
  go either way, so the count one way is Binomial(discordant, 1/2): ``scipy.stats.binomtest``,
  two-sided; McNemar 1947, Psychometrika 12:153-157);
- **pairs needed**: how many pairs a set with the observed discordance would need for
  McNemar's test to detect a given difference, by Connor's formula (Connor 1987, "Sample size
  for testing differences in proportions for the paired-sample design", Biometrics 43:207-211):

      n = (z(1 - alpha/2) * sqrt(psi) + z(power) * sqrt(psi - delta**2))**2 / delta**2

  with ``psi`` the share of discordant pairs, ``delta`` the difference in recall (shares of
  pairs) and ``z`` the standard normal quantile (``scipy.stats.norm.ppf``).

Every figure comes with the retriever that produced the ranks, the seed and the number of
resamples: the same seed gives the same figures. Shares are fractions of the pairs (0.061 is
6.1 points of recall). Domain code: imports nothing from Textual.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

#: Per-pair outcome flags (also the review queue's filter words ``is:discriminating`` ...).
DISCRIMINATING, FOUND_BY_ALL, FOUND_BY_NONE = "discriminating", "found-by-all", "found-by-none"
FLAGS = (DISCRIMINATING, FOUND_BY_ALL, FOUND_BY_NONE)

#: Defaults: bootstrap resamples, seed, confidence level, the test's two-sided alpha, the
#: difference "pairs needed" is computed for (points of recall@k) and the power wanted.
RESAMPLES = 2000
SEED = 0
CONFIDENCE = 0.95
ALPHA = 0.05
DETECT_POINTS = 3.0
POWER = 0.8
#: Above this many pairs the bootstrap interval is the percentile one (BCa's jackknife takes
#: pairs² operations per comparison: about 0.7 s for 24 comparisons of 1,299 pairs).
BCA_MAX_PAIRS = 5000
#: The resampled values held at once (comparisons x resamples x pairs), to bound memory (6 MB
#: of int8; larger batches were slower here, 2 cores).
_BATCH_VALUES = 6_000_000


def headline_k(ks: Sequence[int]) -> int:
    """The cut-off the plain-language lines speak of: 5 when configured (the issue's and
    HiCBench's usual one), else the largest."""
    ks = sorted(set(int(k) for k in ks))
    return 5 if 5 in ks else ks[-1]


def hit_at(rank: int | None, k: int) -> bool:
    """MTCB's hit at ``k``: the first retrieved chunk holding the passage is ranked ``k`` or better."""
    return rank is not None and rank <= k


def pair_flags(ranks: Sequence[int | None], ks: Sequence[int]) -> frozenset[str]:
    """The outcome flags of one pair from its hit rank under each chunker (None: no hit within
    the largest k): ``DISCRIMINATING`` when the chunkers' outcomes differ at some k (needs two
    chunkers), ``FOUND_BY_ALL`` / ``FOUND_BY_NONE`` when every / no chunker hits it at the
    largest k. An empty ``ranks`` has no flag."""
    if not ranks:
        return frozenset()
    kmax = max(ks)
    out = set()
    if len(ranks) > 1 and any(len({hit_at(r, k) for r in ranks}) > 1 for k in ks):
        out.add(DISCRIMINATING)
    hits = [hit_at(r, kmax) for r in ranks]
    if all(hits):
        out.add(FOUND_BY_ALL)
    elif not any(hits):
        out.add(FOUND_BY_NONE)
    return frozenset(out)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """The exact two-sided McNemar p-value for ``a_only`` pairs hit only by chunker A and
    ``b_only`` hit only by B: ``scipy.stats.binomtest(a_only, a_only + b_only, 0.5)``; 1.0 when
    no pair is discordant (nothing tells them apart)."""
    from scipy.stats import binomtest

    n = int(a_only) + int(b_only)
    if n == 0:
        return 1.0
    return float(binomtest(int(a_only), n, 0.5).pvalue)


def pairs_needed(discordant: float, difference: float, *, power: float = POWER, alpha: float = ALPHA) -> int | None:
    """Pairs a set needs for McNemar's test (two-sided ``alpha``) to detect a recall difference
    of ``difference`` (a share of pairs, sign ignored) with ``power``, when a share
    ``discordant`` of its pairs is discordant: Connor's formula (module docstring), rounded up.
    None when it cannot be said: no difference, or fewer discordant pairs than the difference
    (a difference of ``difference`` needs at least that share of discordant pairs).
    """
    from scipy.stats import norm

    delta, psi = abs(float(difference)), float(discordant)
    if delta <= 0 or psi < delta or psi <= 0:
        return None
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return int(math.ceil((za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta * delta, 0.0))) ** 2 / delta ** 2))


def _mean(d, axis=-1):
    """The mean along ``axis`` of an int8 array of differences (-1, 0, 1), by an integer sum
    (``mean`` would convert every element to float64 first: about 1.5x slower)."""
    return d.sum(axis=axis, dtype=np.int64) / d.shape[axis]


def bootstrap_differences(a: np.ndarray, b: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED,
                          confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, str]:
    """Paired bootstrap confidence intervals of ``mean(a) - mean(b)`` per row.

    The pairs' differences ``a - b`` are resampled (``scipy.stats.bootstrap`` of their mean):
    the same procedure as ``bootstrap((a, b), mean(a) - mean(b), paired=True)`` (each resample
    draws pairs, and the difference of the two recalls on the drawn pairs is the mean of their
    differences) at half the copying; scipy's ``paired`` draws its indices in another order, so
    the bounds can differ from it by a resampling step (the test suite compares them).

    Args:
        a, b: 0/1 arrays of shape (comparisons, pairs): each row one comparison's hits under
            chunker A and chunker B on the same pairs (column j is pair j under both).
        resamples: bootstrap resamples (the pairs drawn with replacement, the same draws for
            every row); seed: ``numpy.random.default_rng`` seed.

    Returns:
        (low, high, method): arrays of shape (comparisons,), and ``"BCa"`` or ``"percentile"``
        (``BCA_MAX_PAIRS``). A row whose differences are all equal (every pair concordant,
        or every pair discordant the same way) has a degenerate bootstrap distribution: its
        interval is that one value, not computed.

    Raises:
        ValueError: shapes differ, no pair, or fewer than 2 resamples.
    """
    from scipy.stats import bootstrap

    a = np.atleast_2d(np.asarray(a, dtype=np.int8))
    b = np.atleast_2d(np.asarray(b, dtype=np.int8))
    if a.shape != b.shape or a.shape[1] == 0 or resamples < 2:
        raise ValueError(f"bootstrap: need equal shapes with pairs and >= 2 resamples (got {a.shape}, {b.shape}, "
                         f"{resamples})")
    m, n = a.shape
    d = a - b
    point = d.mean(axis=1)
    low, high = point.copy(), point.copy()
    live = np.flatnonzero((d != d[:, :1]).any(axis=1))
    method = "BCa" if n <= BCA_MAX_PAIRS else "percentile"

    def run(rows, how):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BCa's degenerate-data warnings: handled below
            res = bootstrap((d[rows],), _mean, vectorized=True, axis=-1, n_resamples=int(resamples),
                            confidence_level=confidence, method=how, batch=max(1, _BATCH_VALUES // (len(rows) * n)),
                            rng=np.random.default_rng(seed))
        return (np.asarray(res.confidence_interval.low, dtype=float).reshape(-1),
                np.asarray(res.confidence_interval.high, dtype=float).reshape(-1))

    if len(live):
        lo, hi = run(live, method)
        bad = ~(np.isfinite(lo) & np.isfinite(hi))
        if bad.any():  # BCa could not be computed for these rows: their percentile interval
            lo[bad], hi[bad] = run(live[bad], "percentile")
        low[live], high[live] = lo, hi
    return low, high, method


@dataclass
class Comparison:
    """Chunker ``a`` against chunker ``b`` at cut-off ``k`` over ``pairs`` pairs.

    Attributes:
        recall_a, recall_b: recall@k of each (shares of pairs); difference: recall_a - recall_b.
        ci_low, ci_high: the paired bootstrap interval of the difference (``confidence``).
        both, a_only, b_only, neither: pairs hit by both, only by a, only by b, by neither.
        mcnemar_p: exact McNemar p-value on the discordant pairs (``a_only``, ``b_only``).
        needed: pairs needed to detect ``detect`` points with ``power`` (None: cannot be said).
        needed_observed: pairs needed to detect the observed difference (None: no difference).
    """

    a: str
    b: str
    k: int
    pairs: int
    recall_a: float
    recall_b: float
    difference: float
    ci_low: float
    ci_high: float
    both: int
    a_only: int
    b_only: int
    neither: int
    mcnemar_p: float
    needed: int | None
    needed_observed: int | None

    @property
    def discordant(self) -> int:
        """Pairs one chunker hits and the other misses (the discriminating pairs of this two)."""
        return self.a_only + self.b_only

    @property
    def separated(self) -> bool:
        """The interval excludes 0: one chunker is better on these pairs beyond resampling noise."""
        return self.ci_low > 0 or self.ci_high < 0

    def line(self, detect: float = DETECT_POINTS, power: float = POWER) -> str:
        """One plain-language line: ``recursive:512 beats token:512 by 6.1 points of recall@5
        (95 % CI 1.2 to 11.0; McNemar p = 0.004)`` or ``... not distinguishable with these 31
        pairs ...`` with the pairs needed."""
        ci = f"95 % CI {100 * self.ci_low:.1f} to {100 * self.ci_high:.1f}"
        if self.separated:
            win, lose = (self.a, self.b) if self.difference > 0 else (self.b, self.a)
            lo, hi = sorted((abs(100 * self.ci_low), abs(100 * self.ci_high)))
            return (f"{win} beats {lose} by {abs(100 * self.difference):.1f} points of recall@{self.k} "
                    f"(95 % CI {lo:.1f} to {hi:.1f}; McNemar p {_p(self.mcnemar_p)})")
        if self.needed is None:
            need = f"they disagree on {self.discordant:,} pairs, too few to differ by {detect:g} points"
        elif self.needed <= self.pairs:
            need = (f"{self.needed:,} pairs would show a {detect:g}-point difference at {power:.0%} power, "
                    f"so a real difference is likely smaller")
        else:
            need = f"about {self.needed:,} pairs would resolve {detect:g} points at {power:.0%} power"
        if (self.needed_observed is not None and self.needed_observed > self.pairs
                and abs(abs(100 * self.difference) - detect) >= 0.5):  # else the same figure twice
            need += f"; confirming {abs(100 * self.difference):.1f} points would take about {self.needed_observed:,}"
        return (f"{self.a} vs {self.b}: not distinguishable with these {self.pairs:,} pairs at recall@{self.k} "
                f"(difference {100 * self.difference:+.1f} points, {ci}; McNemar p {_p(self.mcnemar_p)}); {need}")

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "k": self.k, "pairs": self.pairs, "recall_a": self.recall_a,
                "recall_b": self.recall_b, "difference": self.difference,
                "ci": [self.ci_low, self.ci_high], "separated": self.separated,
                "both": self.both, "a_only": self.a_only, "b_only": self.b_only, "neither": self.neither,
                "discordant": self.discordant, "mcnemar_p": self.mcnemar_p,
                "pairs_needed": self.needed, "pairs_needed_observed": self.needed_observed}


def _p(p: float) -> str:
    """``"< 0.001"`` or ``"= 0.042"`` (after "McNemar p")."""
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


@dataclass
class Separation:
    """Per-pair discrimination and paired statistics of several chunkers over the same pairs.

    Attributes:
        chunkers: spec texts in the configured order; retriever: the retriever that ranked.
        ks: the cut-offs; pair_ids: the pairs, in order; ranks: spec -> each pair's hit rank
            (None: no hit within the largest k).
        seed, resamples, confidence, method: the bootstrap's (``method``: ``BCa`` or
            ``percentile``); alpha, power, detect: for the pairs needed (``detect`` in points).
        comparisons: every two chunkers (configured order) at every k.
        seconds: time taken by the statistics.
    """

    chunkers: list[str]
    retriever: str
    ks: tuple[int, ...]
    pair_ids: list[int]
    ranks: dict[str, list[int | None]]
    seed: int = SEED
    resamples: int = RESAMPLES
    confidence: float = CONFIDENCE
    method: str = "BCa"
    alpha: float = ALPHA
    power: float = POWER
    detect: float = DETECT_POINTS
    comparisons: list[Comparison] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def pairs(self) -> int:
        return len(self.pair_ids)

    def flags(self) -> dict[int, frozenset[str]]:
        """pair id -> its outcome flags (``pair_flags``; computed once)."""
        got = self.__dict__.get("_flags")
        if got is None:
            cols = [self.ranks[c] for c in self.chunkers]
            got = self.__dict__["_flags"] = {pid: pair_flags([col[j] for col in cols], self.ks)
                                             for j, pid in enumerate(self.pair_ids)}
        return got

    def with_flag(self, flag: str) -> list[int]:
        """The pair ids with ``flag`` (``DISCRIMINATING``, ``FOUND_BY_ALL``, ``FOUND_BY_NONE``), in order."""
        return [pid for pid, f in self.flags().items() if flag in f]

    def discriminating_at(self, k: int) -> list[int]:
        """The pair ids whose outcome at ``k`` differs between the chunkers."""
        cols = [self.ranks[c] for c in self.chunkers]
        return [pid for j, pid in enumerate(self.pair_ids) if len({hit_at(col[j], k) for col in cols}) > 1]

    def per_pair(self) -> list[dict]:
        """Per pair: ``{"pair_id", "hit": {"@k": [specs]}, "miss": {"@k": [specs]}, "flags": [...]}``."""
        out = []
        flags = self.flags()
        for j, pid in enumerate(self.pair_ids):
            hit = {f"@{k}": [c for c in self.chunkers if hit_at(self.ranks[c][j], k)] for k in self.ks}
            miss = {f"@{k}": [c for c in self.chunkers if not hit_at(self.ranks[c][j], k)] for k in self.ks}
            out.append({"pair_id": pid, "hit": hit, "miss": miss, "flags": sorted(flags[pid])})
        return out

    def headline(self) -> list[Comparison]:
        """The comparisons at ``headline_k``."""
        k = headline_k(self.ks)
        return [c for c in self.comparisons if c.k == k]

    def lines(self) -> list[str]:
        """Plain-language lines: one per two chunkers at the headline k, then the counts of
        discriminating pairs and of the pairs every / no chunker finds."""
        k = headline_k(self.ks)
        out = [c.line(self.detect, self.power) for c in self.headline()]
        n = self.pairs
        disc = len(self.discriminating_at(k))
        none = len(self.with_flag(FOUND_BY_NONE))
        out.append(f"{disc:,} of {n:,} pairs discriminate at recall@{k} (outcome differs between chunkers); "
                   f"in the top {max(self.ks)}, {len(self.with_flag(FOUND_BY_ALL)):,} are found by every chunker "
                   f"and {none:,} by none" + (" (check them: often a bad pair)" if none else ""))
        return out

    def to_json(self) -> dict:
        """Every figure (shares of pairs), with the method, seed and number of resamples."""
        k_by = {f"@{k}": {f"{c.a} | {c.b}": c.discordant for c in self.comparisons if c.k == k} for k in self.ks}
        return {"chunkers": list(self.chunkers), "retriever": self.retriever, "k": list(self.ks),
                "pairs": self.pairs,
                "bootstrap": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence,
                              "method": self.method, "paired": True, "library": "scipy.stats.bootstrap"},
                "mcnemar": {"exact": True, "two_sided": True, "library": "scipy.stats.binomtest"},
                "pairs_needed": {"detect_points": self.detect, "power": self.power, "alpha": self.alpha,
                                 "formula": "Connor 1987"},
                "comparisons": [c.to_dict() for c in self.comparisons],
                "discriminating": {f"@{k}": len(self.discriminating_at(k)) for k in self.ks},
                "discriminating_per_chunker_pair": k_by,
                "discriminating_any_k": self.with_flag(DISCRIMINATING),
                "found_by_all": self.with_flag(FOUND_BY_ALL), "found_by_none": self.with_flag(FOUND_BY_NONE),
                "lines": self.lines(), "seconds": self.seconds, "per_pair": self.per_pair()}


def separate(ranks: Mapping[str, Sequence[int | None]], pair_ids: Sequence[int], ks: Sequence[int], *,
             retriever: str, seed: int = SEED, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
             detect: float = DETECT_POINTS, power: float = POWER, alpha: float = ALPHA) -> Separation:
    """The per-pair discrimination and paired statistics (module docstring) of the chunkers in
    ``ranks`` (spec text -> each pair's hit rank, None for a miss within the largest k; every
    list aligned with ``pair_ids``).

    Args:
        ks: the cut-offs; retriever: the retriever that produced the ranks (reported).
        seed, resamples, confidence: the bootstrap's; detect: the difference (points of
            recall@k) the pairs needed are computed for, with ``power`` and two-sided ``alpha``.

    Raises:
        ValueError: a list not aligned with ``pair_ids``, fewer than 2 resamples, or a
            ``confidence``, ``power`` or ``alpha`` outside (0, 1).
    """
    import time

    t0 = time.perf_counter()
    ks = tuple(sorted(set(int(k) for k in ks)))
    names = list(ranks)
    n = len(pair_ids)
    if any(len(ranks[c]) != n for c in names):
        raise ValueError("separate: every chunker's ranks must be aligned with the pairs")
    if not all(0 < x < 1 for x in (confidence, power, alpha)) or resamples < 2:
        raise ValueError("separate: confidence, power and alpha must lie in (0, 1), and resamples be >= 2")
    sep = Separation(names, retriever, ks, list(pair_ids), {c: list(ranks[c]) for c in names}, seed=int(seed),
                     resamples=int(resamples), confidence=confidence, method="BCa" if n <= BCA_MAX_PAIRS else
                     "percentile", alpha=alpha, power=power, detect=float(detect))
    if n == 0 or len(names) < 2:
        sep.seconds = time.perf_counter() - t0
        return sep
    kmax = ks[-1]
    rank_arr = {c: np.array([kmax + 1 if r is None else r for r in ranks[c]], dtype=np.int64) for c in names}
    rows = [(a, b, k) for k in ks for a, b in combinations(names, 2)]
    A = np.stack([rank_arr[a] <= k for a, b, k in rows]).astype(np.int8)
    B = np.stack([rank_arr[b] <= k for a, b, k in rows]).astype(np.int8)
    low, high, _ = bootstrap_differences(A, B, resamples=resamples, seed=seed, confidence=confidence)
    for j, (a, b, k) in enumerate(rows):
        x, y = A[j].astype(bool), B[j].astype(bool)
        both, a_only, b_only = int((x & y).sum()), int((x & ~y).sum()), int((~x & y).sum())
        ra, rb = float(x.mean()), float(y.mean())
        diff = ra - rb
        psi = (a_only + b_only) / n
        sep.comparisons.append(Comparison(
            a, b, k, n, ra, rb, diff, float(low[j]), float(high[j]), both, a_only, b_only, n - both - a_only - b_only,
            mcnemar_exact(a_only, b_only), pairs_needed(psi, detect / 100.0, power=power, alpha=alpha),
            pairs_needed(psi, diff, power=power, alpha=alpha)))
    sep.seconds = time.perf_counter() - t0
    return sep


def separate_scores(scores: Sequence, ks: Sequence[int], **kwargs) -> Separation:
    """``separate`` over ``preview.scoring.ChunkerScore``s of the same pairs in the same order
    (each pair's ``hit_rank``); ``kwargs`` as ``separate``'s (the retriever is the scores').

    Raises:
        ValueError: the scores are not over the same pairs in the same order.
    """
    if not scores:
        return separate({}, [], ks, retriever=kwargs.pop("retriever", ""), **kwargs)
    ids = [p.pair_id for p in scores[0].pairs]
    for s in scores[1:]:
        if [p.pair_id for p in s.pairs] != ids:
            raise ValueError("separate_scores: the chunkers were scored on different pairs")
    ranks = {s.spec: [p.hit_rank for p in s.pairs] for s in scores}
    kwargs.setdefault("retriever", scores[0].retriever)
    return separate(ranks, ids, ks, **kwargs)
