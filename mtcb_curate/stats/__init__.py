"""Statistics of a set of QA pairs: coverage of documents and windows, passage lengths,
question forms and types, verdicts, checklist results, rejections, edits, review pace and LLM
usage (``compute``), target distributions and the ``balance`` warning (``targets``), and their
text and Markdown forms (``render``). Pandas, no Textual.
"""

from mtcb_curate.stats.questions import FORMS, TYPES, question_form, question_type
from mtcb_curate.stats.targets import Targets, balance_problems

__all__ = ["CHUNK_SIZES", "FORMS", "TYPES", "Stats", "Targets", "balance_problems", "compute_stats",
           "question_form", "question_type"]


def __getattr__(name: str):
    """``CHUNK_SIZES``, ``Stats`` and ``compute_stats`` load ``compute`` (and pandas, about
    40 MB and 0.3-2 s) on first use, not when the review screen imports the targets."""
    if name in ("CHUNK_SIZES", "Stats", "compute_stats"):
        from mtcb_curate.stats import compute

        return getattr(compute, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
