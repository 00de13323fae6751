"""Text and JSON forms of a :class:`~mtcb_curate.verify.verdict.VerifyReport`."""

from __future__ import annotations

from typing import Any

from mtcb_curate.verify.verdict import VERDICTS, VerifyReport



_JSON_FIELDS = ("id", "verdict", "score", "doc_key", "start", "end", "occurrences_in_doc",
                "occurrences_elsewhere", "chars", "tokens", "in_chunk")


def report_json(report: VerifyReport) -> dict[str, Any]:
    """The report as JSON-ready data, exactly::

        {"summary": {...}, "pairs": [{"id", "verdict", "score", "doc_key", "start", "end",
          "occurrences_in_doc", "occurrences_elsewhere", "chars", "tokens", "in_chunk"}]}

    ``start``/``end`` are character offsets into the document ``text``, null when the passage
    was not located; ``score`` may be null (``empty``, or ``missing`` with nothing aligned).
    """
    rows = []
    for r in report.results:
        rows.append({
            "id": r.id,
            "verdict": r.verdict,
            "score": None if r.score is None else round(float(r.score), 2),
            "doc_key": r.doc_key,
            "start": r.start,
            "end": r.end,
            "occurrences_in_doc": r.occurrences_in_doc,
            "occurrences_elsewhere": r.occurrences_elsewhere,
            "chars": r.chars,
            "tokens": r.tokens,
            "in_chunk": r.in_chunk,
        })
    return {"summary": dict(report.summary), "pairs": rows}


def format_summary(report: VerifyReport) -> str:
    """Plain-text table of counts per verdict (and the extra counts), for the terminal.

    Example::

        verdict       pairs       %
        exact           799    60.0
        ...
        total          1331   100.0
    """
    s = report.summary
    total = s["pairs"]
    lines = [f"{'verdict':<12}{'pairs':>8}{'%':>8}"]
    for v in VERDICTS:
        pct = 100.0 * s[v] / total if total else 0.0
        lines.append(f"{v:<12}{s[v]:>8}{pct:>8.1f}")
    lines.append(f"{'total':<12}{total:>8}{100.0 if total else 0.0:>8.1f}")
    lines.append("")
    lines.append(f"also in another document: {s['occurring_elsewhere']}")
    lines.append(f"outside their chunk_index window: {s['outside_chunk']}")
    lines.append(f"edge whitespace: {s['edge_whitespace']}")
    if s["no_document"]:
        lines.append(f"document key matches no document: {s['no_document']}")
    lines.append(f"fuzzy verdict needs a score of at least {s['fuzzy_threshold']:g} (0-100)")
    return "\n".join(lines)
