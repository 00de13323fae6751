"""Verification of supporting passages: normalization, fuzzy alignment, search, verdicts,
repairs and reports.

The public names are re-exported here: ``from mtcb_curate.verify import verify_dataset``.
"""

from mtcb_curate.verify.repair import select_span, snap, trim_passage
from mtcb_curate.verify.report import format_summary, report_json
from mtcb_curate.verify.search import MAX_OFFSETS, CorpusIndex, find_normalized
from mtcb_curate.verify.verdict import (
    VERDICTS,
    PairResult,
    Verdict,
    VerifyReport,
    agreement_level,
    complete_chunk,
    complete_elsewhere,
    complete_fuzzy,
    summarize,
    verify_dataset,
    verify_pair,
)

__all__ = [
    "MAX_OFFSETS", "VERDICTS", "CorpusIndex", "PairResult", "Verdict", "VerifyReport",
    "agreement_level", "complete_chunk", "complete_elsewhere", "complete_fuzzy", "find_normalized",
    "format_summary", "report_json", "select_span", "snap", "summarize", "trim_passage",
    "verify_dataset", "verify_pair",
]
