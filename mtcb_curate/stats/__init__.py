"""Statistics of a set of QA pairs: coverage of documents and windows, passage lengths,
question forms and types, verdicts, checklist results, rejections, edits, review pace and LLM
usage (``compute``), target distributions and the ``balance`` warning (``targets``), and their
text and Markdown forms (``render``). Pandas, no Textual.
"""

from mtcb_curate.stats.compute import CHUNK_SIZES, Stats, compute_stats
from mtcb_curate.stats.questions import FORMS, TYPES, question_form, question_type
from mtcb_curate.stats.targets import Targets, balance_problems

__all__ = ["CHUNK_SIZES", "FORMS", "TYPES", "Stats", "Targets", "balance_problems", "compute_stats",
           "question_form", "question_type"]
