"""Evidence: does a passage hold what an answer needs? Plain domain code (no Textual, no I/O),
shared by the ``answerable`` check, the passage shrink and the generation filters.

- :mod:`~mtcb_curate.evidence.figures`: figures parsed as numbers with their spans (currency,
  thousands separators, decimals, negatives in parentheses, percentages, scale words and table
  headings; FY22 / fiscal 2022 as years), and equality within rounding and across scales;
- :mod:`~mtcb_curate.evidence.compute`: an answer's figure derived from a passage's figures
  (sum, difference, ratio, percent of, percentage change, averages), with the derivation;
- :mod:`~mtcb_curate.evidence.words`: content words after Snowball stemming;
- :mod:`~mtcb_curate.evidence.paraphrase`: paraphrase support (wordllama's static embeddings
  when the ``dense`` extra is installed, else a fuzzy fallback; results name the one used);
- :mod:`~mtcb_curate.evidence.support`: :func:`support`, one verdict with the missing parts
  named.
"""

from mtcb_curate.evidence.compute import Derivation, derivations, derive
from mtcb_curate.evidence.figures import (
    Figure,
    FigureKind,
    figure_label,
    find_figure,
    parse_figures,
    same_figure,
    stated_scale,
)
from mtcb_curate.evidence.paraphrase import FuzzyParaphraser, Match, Paraphraser, default_paraphraser
from mtcb_curate.evidence.support import FigureSupport, Support, SupportVerdict, WordSupport, support
from mtcb_curate.evidence.words import Word, content_stems, content_words, stem

__all__ = [
    "Derivation", "Figure", "FigureKind", "FigureSupport", "FuzzyParaphraser", "Match", "Paraphraser",
    "Support", "SupportVerdict", "Word", "WordSupport", "content_stems", "content_words", "default_paraphraser",
    "derivations", "derive", "figure_label", "find_figure", "parse_figures", "same_figure", "stated_scale", "stem", "support",
]
