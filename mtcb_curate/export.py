"""Export a session's decisions and current texts as JSON Lines."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from mtcb_curate.session import ReviewSession


def export_rows(session: ReviewSession) -> list[dict[str, object]]:
    """One dict per pair in id order: id, status, reason, and the current (edited) question,
    answer and supporting_passage, plus the document key under the dataset's key column."""
    key_col = session.dataset.columns.get("doc_key", "doc_key")
    rows = []
    for i in range(len(session)):
        v = session.view(i)
        rows.append({
            "id": i,
            "status": v.status.value,
            "reason": v.reason,
            "question": v.question,
            "answer": v.answer,
            "supporting_passage": v.passage,
            key_col: v.pair.doc_key,
            "chunk_index": v.pair.chunk_index,
            "edited": sorted(v.edited),
        })
    return rows


def export_jsonl(session: ReviewSession, out: Path) -> int:
    """Write ``export_rows`` to ``out`` atomically (temporary file, then rename); returns the row count.

    Raises:
        OSError: the folder of ``out`` is not writable.
    """
    out = Path(out)
    rows = export_rows(session)
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".jsonl", dir=out.parent if str(out.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(_json_line(r))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(rows)


def _json_line(row: dict[str, object]) -> str:
    """Readable UTF-8 JSON; rows with lone surrogates fall back to ASCII escapes (still valid JSON)."""
    line = json.dumps(row, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(row)
    return line + "\n"
