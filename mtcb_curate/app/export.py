"""Export a session's decisions and current texts as JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

from mtcb_curate.files import atomic_write_bytes
from mtcb_curate.store.session import ReviewSession


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
    atomic_write_bytes(out, "".join(_json_line(r) for r in rows).encode("utf-8"))
    return len(rows)


def _json_line(row: dict[str, object]) -> str:
    """Readable UTF-8 JSON; rows with lone surrogates fall back to ASCII escapes (still valid JSON)."""
    line = json.dumps(row, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(row)
    return line + "\n"
