"""Session -> the Arrow tables a publish commits: pure, no network, no Hub client.

- ``questions``: the ACCEPTED QA pairs with the curator's edits, in pair-id order, in the
  dataset profile's column names (ficha: question, answer, supporting_passage, ticker,
  company, chunk_index); other source columns (``QAPair.meta``) follow the document key.
- ``corpus``: the documents in corpus row order (all by default; ``only_linked`` keeps those
  an accepted pair points at), as key, other columns, text.

The checklist's ``loads`` check builds these same tables (``build_tables``) and loads them
locally; ``hub.plan`` composes them into a ``PublishPlan``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from mtcb_curate.dataset.model import Dataset, QAPair, Status
from mtcb_curate.dataset.profiles import CHUNK_INDEX_COLUMN, PROFILES, Profile
from mtcb_curate.hub.errors import PublishError, PublishErrorKind as Kind
from mtcb_curate.store.session import ReviewSession


@dataclass(frozen=True, slots=True)
class PublishedPair:
    """One row of the published ``questions`` config, before column naming.

    Attributes:
        source_id: the pair id (0-based row in the source ``questions`` config).
        question, answer, passage: the current texts (edits applied).
        doc_key: the document-key value.
        chunk_index: the generation window number, or None.
        meta: the other question columns, as loaded.
        edited: the edited field names (``question``, ``answer``, ``supporting_passage``).
        origin: ``source``; ``generated`` for a pair added by LLM generation; ``regenerated``
            for a source pair whose texts came from an LLM regeneration.
    """

    source_id: int
    question: str
    answer: str
    passage: str
    doc_key: str
    chunk_index: int | None
    meta: Mapping[str, Any]
    edited: frozenset[str]
    origin: str = "source"


def accepted_pairs(session: ReviewSession, ids: Sequence[int] | None = None) -> list[PublishedPair]:
    """The accepted pairs of ``session`` with their edits, in pair-id order (deterministic).

    Every pair the session knows is considered, through ``session.view``, including the pairs
    LLM generation added (``QAPair.origin != "source"``), which count as ``generated``.
    ``ids`` overrides which pairs count as accepted (the checklist without a workspace treats
    every pair so).
    """
    out: list[PublishedPair] = []
    regenerated = session.regenerated_ids()
    for i in (session.ids(Status.ACCEPTED) if ids is None else sorted(ids)):
        v = session.view(i)
        meta = v.pair.meta
        origin = ("generated" if v.pair.origin != "source" else
                  "regenerated" if i in regenerated else "source")
        out.append(PublishedPair(i, v.question, v.answer, v.passage, v.pair.doc_key, v.pair.chunk_index,
                                 meta, v.edited, origin))
    return out



@dataclass(frozen=True, slots=True)
class ColumnNames:
    """The column names a dataset is published with.

    For a built-in MTCB profile (or a column given on the command line) these are the
    profile's first choices (ficha: ``supporting_passage``; macha: ``text``, never ``readme``),
    so a republish also fixes a set published under a variant name. For other datasets they are
    the columns the source really used (``Dataset.columns``).

    Attributes:
        question, passage, doc_key: questions columns; answer: None when the source has none.
        corpus_key, text: corpus columns.
        chunk_index: whether ``chunk_index`` (int64) is published.
    """

    question: str
    answer: str | None
    passage: str
    doc_key: str
    corpus_key: str
    text: str
    chunk_index: bool


def _canonical(profile: Profile, candidates: tuple[str, ...], used: str | None, default: str) -> str:
    known = profile.name.removeprefix("nano-") in PROFILES
    if candidates and (known or len(candidates) == 1):
        return candidates[0]
    return used or (candidates[0] if candidates else default)


def published_columns(dataset: Dataset, pairs: Sequence[QAPair] | None = None) -> ColumnNames:
    """The column names ``dataset`` is published with (see ``ColumnNames``).

    ``pairs``: the pairs as curated (``ReviewSession.pairs``: added pairs included, each with
    its current ``chunk_index``); default the pairs as loaded. A ``chunk_index`` column is
    published when the source has one or any of these pairs has a value (a repaired or a
    generated pair's window is published even when the source had no such column).
    """
    p, cols = dataset.profile, dataset.columns
    pairs = dataset.pairs if pairs is None else pairs
    answer = None
    if "answer" in cols or any(pair.answer for pair in pairs):
        answer = _canonical(p, p.answer_columns, cols.get("answer"), "answer")
    chunk = cols.get("chunk_index") is not None or any(pair.chunk_index is not None for pair in pairs)
    return ColumnNames(
        question=_canonical(p, p.question_columns, cols.get("question"), "question"),
        answer=answer,
        passage=_canonical(p, p.passage_columns, cols.get("passage"), "supporting_passage"),
        doc_key=cols.get("doc_key") or p.question_key or "doc_key",
        corpus_key=cols.get("corpus_key") or p.corpus_key or cols.get("doc_key") or "doc_key",
        text=_canonical(p, p.text_columns, cols.get("text"), "text"),
        chunk_index=chunk,
    )


def _column_type(values: list[Any]) -> tuple[pa.DataType, list[Any], bool]:
    """An arrow type for a free column: inferred; all-null -> string; mixed -> strings (flag)."""
    try:
        arr = pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.string(), [None if v is None else str(v) for v in values], True
    if pa.types.is_null(arr.type):
        return pa.string(), values, False
    return arr.type, values, False


def _check_unicode(values: Iterable[Any], column: str, config: str) -> None:
    for row, v in enumerate(values):
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise PublishError(Kind.INPUT, f"{config} row {row}, field '{column}': not valid Unicode "
                                               f"(a lone surrogate at character {exc.start}); edit or reject it, "
                                               "then publish again") from None


def _text_column(docs: Sequence[Any], column: str) -> pa.Array:
    """The corpus's text column (named ``column``), built from each document's UTF-8 bytes
    (``Document.data``) and validated by Arrow's cast to ``string``: no decoded copy of the
    corpus is made in Python.

    Raises:
        PublishError: (kind ``input``) a text is not valid Unicode (a lone surrogate); the
            message names the row and field, as :func:`_check_unicode` does.
    """
    try:
        return pa.array([d.data for d in docs], type=pa.binary()).cast(pa.string())
    except pa.ArrowInvalid:
        _check_unicode((d.text for d in docs), column, "corpus")  # names the row
        raise


def tables_digest(session: ReviewSession, accepted: Sequence[int] | None = None) -> str:
    """sha256 hex of everything :func:`build_tables` reads for these ``accepted`` ids: the
    profile and column names, every pair of the session as curated (for the columns published),
    the accepted pairs as published, every document's key, row and columns, and the corpus
    fingerprint. Equal digests (with equal code and library versions) build equal tables; a
    value whose ``repr`` is not stable only ever gives a new digest. A cache key for work done
    on the tables (the ``loads`` check's).
    """
    ds = session.dataset
    h = hashlib.sha256()

    def add(value: Any) -> None:
        b = repr(value).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)

    add((ds.profile, sorted(ds.columns.items()), session.corpus_fingerprint))
    for pair in session.pairs:
        add((pair.id, pair.question, pair.answer, pair.passage, pair.doc_key, pair.chunk_index, pair.meta,
             pair.origin))
    for pp in accepted_pairs(session, accepted):
        add((pp.source_id, pp.question, pp.answer, pp.passage, pp.doc_key, pp.chunk_index, pp.meta,
             sorted(pp.edited), pp.origin))
    for d in ds.documents.values():
        add((d.key, d.row, d.meta))
    return h.hexdigest()


def build_tables(session: ReviewSession, *, only_linked: bool = False,
                 accepted: Sequence[int] | None = None) -> tuple[pa.Table, pa.Table, list[str]]:
    """The ``corpus`` and ``questions`` tables to publish, and notes about what was left out.

    Corpus rows are in source corpus order; a document key that repeated in the source keeps
    its first row (the one pairs link to). Question rows are the accepted pairs in id order.
    Document keys are published as strings. A question column the pair lacks but its document
    has (ficha's ``company``, for pairs that generation adds) is filled from the document.
    Stale variant columns (e.g. a ``chunk-must-contain`` next to a published
    ``supporting_passage``) are left out, since they would carry unedited text.

    Raises:
        PublishError: (kind ``input``) a text is not valid Unicode.
    """
    ds = session.dataset
    p = ds.profile
    names = published_columns(ds, session.pairs)
    notes: list[str] = []
    pairs = accepted_pairs(session, accepted)

    # Questions
    skip_q = {*p.question_columns, *p.answer_columns, *p.passage_columns, CHUNK_INDEX_COLUMN, names.doc_key,
              names.question, names.passage, "origin"}
    if names.answer:
        skip_q.add(names.answer)
    meta_cols: dict[str, None] = {}
    for pair in ds.pairs:
        for k in pair.meta:
            if k not in skip_q:
                meta_cols.setdefault(k, None)
    dropped = sorted({k for pair in ds.pairs for k in pair.meta} & (skip_q - {"origin"}))
    if dropped:
        notes.append(f"questions columns not published (variants of published ones): {', '.join(dropped)}")
    q_cols: dict[str, list[Any]] = {names.question: [], **({names.answer: []} if names.answer else {}),
                                    names.passage: [], names.doc_key: []}
    for k in meta_cols:
        q_cols[k] = []
    if names.chunk_index:
        q_cols[CHUNK_INDEX_COLUMN] = []
    for pp in pairs:
        q_cols[names.question].append(pp.question)
        if names.answer:
            q_cols[names.answer].append(pp.answer)
        q_cols[names.passage].append(pp.passage)
        q_cols[names.doc_key].append(pp.doc_key)
        doc = ds.documents.get(pp.doc_key)
        for k in meta_cols:
            q_cols[k].append(pp.meta[k] if k in pp.meta else (doc.meta.get(k) if doc is not None else None))
        if names.chunk_index:
            q_cols[CHUNK_INDEX_COLUMN].append(pp.chunk_index)
    q_fields: list[pa.Field] = []
    for k, values in q_cols.items():
        if k == CHUNK_INDEX_COLUMN:
            q_fields.append(pa.field(k, pa.int64()))
        elif k in meta_cols:
            _check_unicode(values, k, "questions")
            t, q_cols[k], stringified = _column_type(values)
            if stringified:
                notes.append(f"questions column '{k}' mixes types: published as strings")
            q_fields.append(pa.field(k, t))
        else:
            _check_unicode(values, k, "questions")
            q_fields.append(pa.field(k, pa.string()))
    unlinked = sum(1 for pp in pairs if pp.doc_key not in ds.documents)
    if unlinked:
        notes.append(f"{unlinked} accepted pair(s) point at no document of the corpus")

    # Corpus
    linked = {pp.doc_key for pp in pairs}
    docs = sorted(ds.documents.values(), key=lambda d: d.row)
    if only_linked:
        docs = [d for d in docs if d.key in linked]
    skip_c = {*p.text_columns, names.corpus_key, names.text}
    c_meta: dict[str, None] = {}
    for d in ds.documents.values():
        for k in d.meta:
            if k not in skip_c:
                c_meta.setdefault(k, None)
    c_dropped = sorted({k for d in ds.documents.values() for k in d.meta} & skip_c)
    if c_dropped:
        notes.append(f"corpus columns not published (variants of published ones): {', '.join(c_dropped)}")
    c_cols: dict[str, list[Any]] = {names.corpus_key: [d.key for d in docs]}
    for k in c_meta:
        c_cols[k] = [d.meta.get(k) for d in docs]
    c_fields: list[pa.Field] = []
    for k, values in c_cols.items():
        _check_unicode(values, k, "corpus")
        if k in c_meta:
            t, c_cols[k], stringified = _column_type(values)
            if stringified:
                notes.append(f"corpus column '{k}' mixes types: published as strings")
            c_fields.append(pa.field(k, t))
        else:
            c_fields.append(pa.field(k, pa.string()))
    c_cols[names.text] = _text_column(docs, names.text)
    c_fields.append(pa.field(names.text, pa.string()))

    corpus = pa.table(c_cols, schema=pa.schema(c_fields))
    questions = pa.table(q_cols, schema=pa.schema(q_fields))
    return corpus, questions, notes

