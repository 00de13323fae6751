"""Text and JSON forms of a :class:`~mtcb_curate.verify.verdict.VerifyReport`."""

from __future__ import annotations

from typing import Any

from mtcb_curate.verify.verdict import VERDICTS, VerifyReport



#: How many pair ids the plain-text reports list before "+N more".
IDS_SHOWN = 10


def id_list(ids, first: int = IDS_SHOWN) -> str:
    """Pair ids for a terminal line: ``#3, #7, #12 +5 more`` (the first ``first``, ascending as
    given); '' for none."""
    ids = list(ids)
    if not ids:
        return ""
    out = ", ".join(f"#{i}" for i in ids[:first])
    return out + (f" +{len(ids) - first} more" if len(ids) > first else "")


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
    """Plain-text table of counts per verdict (and the extra counts), for the terminal; every
    count but ``exact`` names its pairs (:func:`id_list`: the first ``IDS_SHOWN`` ids, then
    ``+N more``).

    Example::

        verdict       pairs       %
        exact           799    60.0
        normalized       12     0.9  #4, #17, #80 ... +2 more
        ...
        total          1331   100.0
    """
    s = report.summary
    total = s["pairs"]
    by_verdict: dict[str, list[int]] = {v: [] for v in VERDICTS}
    for r in report.results:
        by_verdict.setdefault(str(r.verdict), []).append(r.id)

    def ids(test) -> str:
        found = id_list(r.id for r in report.results if test(r))
        return f"  {found}" if found else ""

    lines = [f"{'verdict':<12}{'pairs':>8}{'%':>8}"]
    for v in VERDICTS:
        pct = 100.0 * s[v] / total if total else 0.0
        named = "" if v == VERDICTS[0] or not by_verdict.get(v) else "  " + id_list(by_verdict[v])
        lines.append(f"{v:<12}{s[v]:>8}{pct:>8.1f}{named}")
    lines.append(f"{'total':<12}{total:>8}{100.0 if total else 0.0:>8.1f}")
    lines.append("")
    lines.append(f"also in another document: {s['occurring_elsewhere']}"
                 f"{ids(lambda r: r.elsewhere and not r.in_other_document)}")
    if s.get("wrong_document"):
        lines.append(f"verbatim only in another document than their link: {s['wrong_document']}"
                     f"{ids(lambda r: r.in_other_document)}")
    lines.append(f"outside their chunk_index window: {s['outside_chunk']}{ids(lambda r: r.in_chunk is False)}")
    lines.append(f"edge whitespace: {s['edge_whitespace']}{ids(lambda r: r.edge_whitespace)}")
    if s["no_document"]:
        lines.append(f"document key matches no document: {s['no_document']}{ids(lambda r: not r.has_document)}")
    lines.append(f"fuzzy verdict needs a score of at least {s['fuzzy_threshold']:g} (0-100)")
    return "\n".join(lines)
