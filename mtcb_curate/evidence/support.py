"""Does this passage hold what this answer needs? One verdict with the missing parts named.

:func:`support` splits an answer into the parts a passage must hold and looks for each:

1. **figures** (:mod:`~mtcb_curate.evidence.figures`; years excluded): each must be in the
   passage within rounding to the answer's precision (``same_figure``; scale from a scale word,
   else the question's "in USD millions", else unknown), or derivable from the passage's
   figures (:func:`~mtcb_curate.evidence.compute.derive`, ranked against the question; in a
   passage of more than :data:`MANY_FIGURES` figures only from rows the question names);
2. **years** the answer names (2022, FY22): in the passage, or already in the question when the
   answer holds no figure (a figure "in 2019" needs 2019's column in the passage);
3. **content words** (:mod:`~mtcb_curate.evidence.words`, stemmed) that the question does not
   already hold (an answer restating "the effective tax rate of Corning" needs no passage
   for those words): each is held when its stem is in the passage, else when the paraphrase
   measure finds a passage phrase for it (:mod:`~mtcb_curate.evidence.paraphrase`; a name,
   a capitalized word, only by its spelling: the fuzzy measure); when too
   few are held, the question and answer together may still be said by one sentence of the
   passage (``Paraphraser.says``, wordllama only), which clears the word rule.

Verdict (our rule; precision measured in ``benchmarks/bench_checks.py``, rules in
``docs/checks.md``):

- ``UNSUPPORTED`` when a figure is neither in the passage nor computable from it, or when a
  year of the answer is in neither the passage nor the question, or when fewer than
  :data:`MIN_WORD_SHARE` of the answer's content words are held (stem or paraphrase); the word
  rule does not apply to the explanation of a "Yes, ..." / "No, ..." answer (the claim is the
  yes or no; its figures are still looked for), and when every figure of the answer is held it
  needs at least :data:`MIN_LOST_WITH_FIGURES` missing words;
- ``UNKNOWN`` when the answer has nothing to look for ("Yes", "No", or only words the question
  already holds): no warning, nothing to judge;
- ``SUPPORTED`` otherwise.

The question's own years that the passage lacks ("FY2022" with a passage of 2021's figures) are
named in :attr:`Support.notes`: a hint, not a verdict, since a table's year header may be
outside a minimal passage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from mtcb_curate.evidence.compute import Derivation, derive
from mtcb_curate.evidence.figures import Figure, find_figure, parse_figures, stated_scale
from mtcb_curate.evidence.paraphrase import FuzzyParaphraser, Match, Paraphraser, default_paraphraser
from mtcb_curate.evidence.words import Word, content_stems, content_words

#: An answer is unsupported when fewer than this share of its content words (those the question
#: does not hold) are in the passage, by stem or paraphrase. Our threshold (``docs/checks.md``).
MIN_WORD_SHARE = 0.5

#: When every figure of the answer is held, its words make it unsupported only when at least this
#: many are missing ("... has changed/dropped from 24.6% to 21.6%": the figures are the claim,
#: "dropped" the answerer's word). Our rule.
MIN_LOST_WITH_FIGURES = 3

#: In a passage of more than this many figures (a financial table), a derivation counts only when
#: every operand's row label shares a word with the question (``Derivation.related``): with 50
#: figures, thousands of combinations meet a two-decimal answer by chance (FinanceBench's
#: "24.26" turnover = 7,813 retained earnings / 322 software development). Our threshold.
MANY_FIGURES = 20

#: Answer words that carry no claim to look for.
_NO_CLAIM = frozenset({"yes", "no", "none", "true", "false"})


class SupportVerdict(StrEnum):
    """The verdict of :func:`support`."""

    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class FigureSupport:
    """One figure of the answer and where the passage holds it.

    Attributes:
        figure: the answer's figure.
        found: the passage's figure equal to it within rounding, or None.
        derivation: how it is computed from the passage's figures when not found, or None.
    """

    figure: Figure
    found: Figure | None = None
    derivation: Derivation | None = None

    @property
    def held(self) -> bool:
        """Found or computable."""
        return self.found is not None or self.derivation is not None

    def describe(self) -> str:
        """One line: where the figure is, how it is computed, or that it is missing."""
        f = self.figure.describe()
        if self.found is not None:
            return f"figure {f} is in the passage as {self.found.describe()}"
        if self.derivation is not None:
            return f"figure {f} is computed: {self.derivation.describe()}"
        return f"figure {f} not in the passage and not computable from its figures"


@dataclass(frozen=True, slots=True)
class WordSupport:
    """One content word of the answer.

    Attributes:
        word: the answer's word.
        how: ``"stem"`` (its stem is in the passage), ``"paraphrase"`` (a passage phrase says
            it, :attr:`match`), or ``""`` (not held).
        match: the paraphrase measure's best phrase (None when the stem matched or the
            measure was not run).
    """

    word: Word
    how: str
    match: Match | None = None

    @property
    def held(self) -> bool:
        """Held by stem or paraphrase."""
        return bool(self.how)


@dataclass(frozen=True)
class Support:
    """What :func:`support` found.

    Attributes:
        verdict: :class:`SupportVerdict`.
        figures: one :class:`FigureSupport` per figure of the answer (years excluded).
        years: the answer's years the passage and question lack (as written).
        words: one :class:`WordSupport` per answer content word the question does not hold.
        word_share: share (0-1) of ``words`` held; None when there are none.
        missing: the missing parts, one line each ("figure 5.1% not in the passage and not
            computable from its figures").
        notes: hints that do not make the verdict (the question's years the passage lacks).
        method: the measures used: ``"stems"``, ``"stems+wordllama"`` or ``"stems+fuzzy"``.
        derivations: the derivations of the computed figures.
        said: the whole-answer comparison (``Paraphraser.says``) when the word rule asked for
            it, else None.
    """

    verdict: SupportVerdict
    figures: tuple[FigureSupport, ...] = ()
    years: tuple[str, ...] = ()
    words: tuple[WordSupport, ...] = ()
    word_share: float | None = None
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    method: str = "stems"
    derivations: tuple[Derivation, ...] = field(default=())
    said: Match | None = None

    @property
    def supported(self) -> bool:
        """False only for ``UNSUPPORTED`` (``UNKNOWN`` gives no warning)."""
        return self.verdict != SupportVerdict.UNSUPPORTED

    def reason(self) -> str:
        """The missing parts in one line ("" when none)."""
        return "; ".join(self.missing)


def support(answer: str, passage: str, question: str | None = None, *,
            paraphraser: Paraphraser | None = None, paraphrase: bool = True) -> Support:
    """Does ``passage`` hold what ``answer`` needs (module docstring)?

    Args:
        answer: the QA pair's answer.
        passage: the supporting passage.
        question: the question (its words count as given; its "in USD millions" sets the
            answer's scale; derivations are ranked against it), or None.
        paraphraser: the paraphrase measure (default: :func:`default_paraphraser`).
        paraphrase: False compares stems only (``method == "stems"``).

    Returns:
        A :class:`Support`. Never raises on any strings.
    """
    q = question or ""
    figures = parse_figures(passage)
    answer_figs = parse_figures(answer, default_scale=stated_scale(q) if q else None)
    q_years = {f.value for f in parse_figures(q) if f.is_year}
    p_years = {f.value for f in figures if f.is_year}
    missing: list[str] = []
    fsup: list[FigureSupport] = []
    years: list[str] = []
    seen_years = set()
    has_figures = any(not f.is_year for f in answer_figs)
    for f in answer_figs:
        if f.is_year:
            # a year the question names is given, unless the answer ties a figure to it
            given_year = f.value in q_years and not has_figures
            if f.value not in p_years and not given_year and f.value not in seen_years:
                years.append(f.describe())
                missing.append(f"year {f.describe()} not in the passage")
            seen_years.add(f.value)
            continue
        found = find_figure(f, figures)
        d = None if found is not None else derive(f, figures, passage=passage, about=q or answer)
        if d is not None and q and len(figures) > MANY_FIGURES and d.related < len(d.operands):
            d = None  # in a big table, a combination of rows the question does not name is chance
        fs = FigureSupport(f, found, d)
        fsup.append(fs)
    lost = [fs.figure.describe() for fs in fsup if not fs.held]
    if lost:
        missing.insert(0, f"figure{'s' if len(lost) > 1 else ''} {', '.join(lost)} not in the passage and not "
                          "computable from its figures")
    given = content_stems(q)
    have = content_stems(passage)
    words = [w for w in content_words(answer) if w.stem not in given and w.text.lower() not in _NO_CLAIM]
    # one entry per stem
    uniq: dict[str, Word] = {}
    for w in words:
        uniq.setdefault(w.stem, w)
    words = list(uniq.values())
    wsup: list[WordSupport] = [WordSupport(w, "stem") if w.stem in have or _parts_in(w, have) else
                               WordSupport(w, "") for w in words]
    method = "stems"
    unheld = [k for k, ws in enumerate(wsup) if not ws.held]
    if unheld and paraphrase:
        model = paraphraser or default_paraphraser()
        method = f"stems+{model.name}"
        matches = model.best([wsup[k].word.text for k in unheld], passage)
        for k, m in zip(unheld, matches):
            name = _is_name(wsup[k].word)
            # a name is not paraphrased: embeddings put "Israel" near "Egypt"; only spelling
            # variants count for it (the fuzzy measure)
            if name and model.name != "fuzzy":
                m = FuzzyParaphraser().best([wsup[k].word.text], passage)[0]
            wsup[k] = WordSupport(wsup[k].word, "paraphrase" if m.supported else "", m)
    share = None if not wsup else sum(ws.held for ws in wsup) / len(wsup)
    n_lost = sum(1 for ws in wsup if not ws.held)
    judgment = answer.lstrip().lower().split(maxsplit=1)[:1] in (["yes"], ["yes,"], ["yes."], ["no"], ["no,"], ["no."])
    figures_held = bool(fsup) and all(fs.held for fs in fsup)
    # a missing figure is the decisive part: the words are not listed beside it
    word_rule = not judgment and not lost and (n_lost >= MIN_LOST_WITH_FIGURES if figures_held else n_lost >= 1)
    said = None
    if share is not None and share < MIN_WORD_SHARE and word_rule and paraphrase:
        model = paraphraser or default_paraphraser()
        method = f"stems+{model.name}"
        said = model.says(q, answer, passage)
        if said is not None and said.supported:
            word_rule = False  # the answer as a whole is said in other words
    if share is not None and share < MIN_WORD_SHARE and word_rule:
        lost = [ws.word.text for ws in wsup if not ws.held]
        shown = ", ".join(lost[:6]) + (f" and {len(lost) - 6} more" if len(lost) > 6 else "")
        missing.append(f"only {share:.0%} of the answer's words are in the passage or said in other words "
                       f"(not found: {shown})")
    notes = []
    for f in parse_figures(q):
        if f.is_year and f.value not in p_years and f.describe() not in notes:
            notes.append(f.describe())
    notes = [f"the question's {y} is not in the passage" for y in notes]
    if missing:
        verdict = SupportVerdict.UNSUPPORTED
    elif not fsup and not wsup and not seen_years:
        verdict = SupportVerdict.UNKNOWN
    else:
        verdict = SupportVerdict.SUPPORTED
    return Support(verdict, tuple(fsup), tuple(years), tuple(wsup), share, tuple(missing), tuple(notes), method,
                   tuple(fs.derivation for fs in fsup if fs.derivation is not None), said)


def _is_name(w: Word) -> bool:
    """A word written as a name: capitalized or all capitals ("Augsburg", "Ilkhanate", "XIII")."""
    return w.text[:1].isupper()


def _parts_in(w: Word, have: frozenset[str]) -> bool:
    """A hyphenated answer word ("year-over-year") is held when each of its parts is."""
    if "-" not in w.text:
        return False
    parts = content_stems(w.text.replace("-", " "))
    return bool(parts) and parts <= have
