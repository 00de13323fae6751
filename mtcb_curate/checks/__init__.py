"""The pre-publish checklist: each check (``base``: what a check is; ``passages``, ``questions``,
``links``, ``loads``: the checks by subject), the gate (``gate``: ``CHECKS`` and
``run_checklist``), and the question-form rules it shares with generation (``dataset.question_form``).

The public names are re-exported here: ``from mtcb_curate.checks import run_checklist, Limits``.
"""

from mtcb_curate.checks.base import (
    MAX_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    Check,
    CheckContext,
    ChecklistReport,
    CheckResult,
    CheckStatus,
    Judge,
    Limits,
)
from mtcb_curate.checks.gate import CHECK_IDS, CHECKS, CHECKS_BY_ID, run_check, run_checklist
from mtcb_curate.checks.passages import passage_length_problem
from mtcb_curate.checks.questions import (
    MAX_ANSWER_CHARS,
    MIN_ANSWER_OVERLAP,
    answer_length_problem,
    answer_overlap,
    content_words,
)

__all__ = [
    "CHECKS", "CHECKS_BY_ID", "CHECK_IDS", "MAX_ANSWER_CHARS", "MAX_PASSAGE_CHARS", "MIN_ANSWER_OVERLAP",
    "MIN_PASSAGE_CHARS", "Check", "CheckContext", "CheckResult", "CheckStatus", "ChecklistReport", "Judge",
    "Limits", "answer_length_problem", "answer_overlap", "content_words", "passage_length_problem",
    "run_check", "run_checklist",
]
