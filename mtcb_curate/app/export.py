"""Export a session's decisions and current texts as JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

from mtcb_curate.dataset.model import Status
from mtcb_curate.errors import CurateError
from mtcb_curate.files import atomic_write_bytes, write_folder
from mtcb_curate.store.session import ReviewSession


def export_rows(session: ReviewSession, extra: dict[int, dict[str, object]] | None = None) -> list[dict[str, object]]:
    """One dict per pair in id order: id, status, reason, and the current (edited) question,
    answer and supporting_passage, plus the document key under the dataset's key column, the
    pair's origin (``source``, ``generate``, ``hand``) and the curator's note (None: none);
    ``extra`` adds columns per pair id (:func:`quality_columns`)."""
    key_col = session.dataset.columns.get("doc_key", "doc_key")
    note_of = getattr(session, "note", None) or (lambda _pid: None)
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
            "origin": v.pair.origin,
            "note": note_of(i),
            **(extra or {}).get(i, {}),
        })
    return rows


def quality_columns(session: ReviewSession, *, config: Path | None = None,
                    llm_cache: Path | None = None) -> dict[int, dict[str, object]]:
    """The verdict, check and score columns of every pair:

    - ``verdict``: the passage's verification verdict (``exact``, ``normalized``, ``missing``,
      ``empty``; exact and normalized search, as the queue's marks);
    - ``checks``: ``{check_id: "fail" | "warn"}`` of the checklist run as if every pair not
      rejected were accepted (``include_undecided``; the ``loads`` check is not run);
    - ``scores``: the LLM judge's ``{criterion: score or None}`` and ``judge_keep``, for the
      pairs ``check --llm-judge`` judged with their current texts (read from the LLM cache
      ``llm_cache``, no call), else None.

    Raises:
        CurateError: the config file is not valid TOML.
    """
    from mtcb_curate.app.gate import run_gate
    from mtcb_curate.app.verdicts import Verdicts
    from mtcb_curate.llm.judge import cached_judgements

    verdicts = Verdicts(session)
    verdicts.scan()
    report = run_gate(session, config=config, loads=False, include_undecided=True)
    flags: dict[int, dict[str, str]] = {}
    for c in report.checks:
        for pid in c.pairs:
            flags.setdefault(pid, {})[c.id] = "fail" if pid in set(c.failing) else "warn"
    judged = {}
    if llm_cache is not None:
        views = [session.view(i) for i in range(len(session))]
        judged = cached_judgements(llm_cache, [(v_id, v.question, v.answer, v.passage)
                                               for v_id, v in enumerate(views)])
    out: dict[int, dict[str, object]] = {}
    for i in range(len(session)):
        j = judged.get(i)
        out[i] = {"verdict": str(verdicts.quick(i).verdict.value), "checks": flags.get(i, {}),
                  "scores": None if j is None else {k: v for k, v, _ in j.scores} or None,
                  "judge_keep": None if j is None else j.keep}
    return out


class NothingToExport(CurateError):
    """A BEIR export with no pair to write (none accepted): BEIR's own loader fails on an empty
    query set, so nothing is written."""


def export_beir(session: ReviewSession, out_dir: Path, *, include_undecided: bool = False) -> tuple[int, int]:
    """Write the BEIR layout (Thakur et al., 2021) to ``out_dir``: ``corpus.jsonl``
    (``{"_id": document key, "title", "text"}``, every document), ``queries.jsonl``
    (``{"_id": "q<pair id>", "text": question, "metadata": {answer, supporting_passage}}``) and
    ``qrels/test.tsv`` (``query-id, corpus-id, score`` with a header; the document is the
    relevant unit, score 1), as BEIR's ``GenericDataLoader(out_dir).load(split="test")`` reads
    them. Pairs: the accepted ones (and undecided with ``include_undecided``), with their
    current texts. All or nothing (``files.write_folder``): a failure leaves no partial folder.

    Returns:
        ``(documents, queries)`` written; ``queries`` is the number of lines of
        ``queries.jsonl`` and of data rows of ``qrels/test.tsv``.

    Raises:
        NothingToExport: no pair qualifies (nothing is written).
        OSError: ``out_dir`` cannot be written (``filename`` names the file).
    """
    out_dir = Path(out_dir)
    docs = session.dataset.documents
    corpus = "".join(_json_line({"_id": d.key, "title": str(d.meta.get("title") or d.meta.get("company") or ""),
                                 "text": d.text}) for d in docs.values())
    wanted = {Status.ACCEPTED} | ({Status.UNDECIDED} if include_undecided else set())
    queries, qrels = [], ["query-id\tcorpus-id\tscore\n"]
    counts: dict[str, int] = {}
    for i in range(len(session)):
        v = session.view(i)
        counts[v.status.value] = counts.get(v.status.value, 0) + 1
        if v.status not in wanted or v.pair.doc_key not in docs:
            continue
        queries.append(_json_line({"_id": f"q{i}", "text": v.question,
                                   "metadata": {"answer": v.answer, "supporting_passage": v.passage}}))
        qrels.append(f"q{i}\t{_tsv(v.pair.doc_key)}\t1\n")
    if not queries:
        seen = ", ".join(f"{n:,} {status}" for status, n in sorted(counts.items())) or "no pairs"
        hint = ("review in the app and accept pairs, or pass --include-undecided to export the undecided ones too"
                if not include_undecided else "every pair is rejected, skipped or flagged, or its document is missing")
        raise NothingToExport(f"{out_dir}: nothing to export as BEIR: no accepted pair ({seen}); {hint}; "
                              f"nothing was written")
    write_folder(out_dir, {"corpus.jsonl": corpus.encode("utf-8"),
                           "queries.jsonl": "".join(queries).encode("utf-8"),
                           "qrels/test.tsv": "".join(qrels).encode("utf-8", "replace")})
    return len(docs), len(queries)


def _tsv(value: str) -> str:
    """A TSV field: tabs and line breaks become spaces."""
    return " ".join(str(value).replace("\t", " ").splitlines()) if value else ""


def export_jsonl(session: ReviewSession, out: Path, extra: dict[int, dict[str, object]] | None = None) -> int:
    """Write ``export_rows`` to ``out`` atomically (temporary file, then rename); returns the row count.

    Raises:
        OSError: the folder of ``out`` is not writable.
    """
    out = Path(out)
    rows = export_rows(session, extra)
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
