"""Publish a curated dataset to the Hugging Face Hub: both configs in one atomic, verified commit.

What is published (``plan_publish``):

- ``questions``: the ACCEPTED QA pairs with the curator's edits, in source row order, in the
  dataset profile's column names (ficha: question, answer, supporting_passage, ticker,
  company, chunk_index); other source columns (``QAPair.meta``) follow the document key.
- ``corpus``: the documents in corpus row order (all by default; ``only_linked`` keeps those
  an accepted pair points at), as key, other columns, text.
- ``README.md``: the repository's current card merged with ours (``mtcb_curate.hub.card``).

The plan also reads the Hub's current version of the target and compares rows (added,
removed, edited) so the app can show what the publish changes before it is confirmed.

How it is published (``publish``):

1. the gate: refused when the checklist failed, unless forced with a non-empty reason, which
   then goes into the card;
2. the token from ``token=``, else ``HF_TOKEN`` or huggingface_hub's login (``get_token``). It
   is only handed to ``HfApi``/``datasets``: never printed, logged, stored, or put in a message;
3. the repo is created when missing (``repo_type="dataset"``, ``private``), the branch when
   ``revision`` names a missing one;
4. ONE ``HfApi.create_commit`` with the two parquet shards and the card, with
   ``parent_commit`` = the revision's head read just before (a concurrent change gives 412
   instead of being overwritten; a head that moved since the plan is refused before upload,
   since the merged card was based on the planned head);
5. the committed card and the files it names for both configs are downloaded from the Hub at
   the commit's sha (an explicit revision: a local folder named like the repo id is never
   read), loaded with ``datasets``, and their row counts and content hashes
   (``hub_layout.content_hash``) compared. The plan reads the current version the same way.

While the Hub is read or written, huggingface_hub's and datasets' own logging, warnings and
progress bars are kept off the terminal (``quiet_hub``); each request the client retries is
reported through ``on_retry`` as one line in our words (``Retry.line``).

Every failure (offline mode, no network, 401, 403, a missing repo that cannot be created,
409, 412, a connection dropped mid-upload) raises ``PublishError`` with one line that says
what to do. Nothing here writes to the workspace, so a failed publish can simply be retried.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
import threading
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from mtcb_curate.hub import card as cardmod
from mtcb_curate.errors import CurateError
from mtcb_curate.hub.layout import (
    README,
    config_entries,
    content_hash,
    data_file,
    layout_files,
    write_files,
)
from mtcb_curate.dataset.model import Dataset, Status
from mtcb_curate.dataset.profiles import CHUNK_INDEX_COLUMN, PROFILES, Profile
from mtcb_curate.store.session import ReviewSession

DEFAULT_REVISION = "main"
COMMIT_MESSAGE = "Publish corpus and questions (mtcb-curate)"


class PublishError(CurateError):
    """Publishing failed or was refused; the message is one line saying what to do.

    Attributes:
        kind: a short machine-readable cause: ``gate``, ``license``, ``offline``, ``network``,
            ``dropped``, ``auth``, ``forbidden``, ``not_found``, ``conflict``, ``changed``,
            ``visibility``, ``server``, ``verify``, ``input``, ``dry_run``, ``card`` or ``failed``.
    """

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(" ".join(message.split()))


class LicenseRequired(PublishError):
    """No licence is known for the dataset: ask the user and pass ``license=``
    (``plan_publish(..., license=...)`` or ``plan.with_license(...)``)."""

    def __init__(self, name: str):
        super().__init__("license", f"no licence is known for {name} (not in the profile nor in a dataset card): "
                                    "pass license= with a Hub licence id, e.g. cc-by-4.0 or cc-by-nc-4.0")


# ---------------------------------------------------------------------------------------------
# What is published


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


def curation_summary(session: ReviewSession, *, regenerated: int | None = None) -> cardmod.CurationSummary:
    """Counts of the curator's work for the card (see ``card.CurationSummary``): the session's
    own ``ReviewSession.curation_summary``, except that ``edited`` and ``regenerated`` count
    only the accepted (published) pairs; ``regenerated`` may be given instead.
    """
    summary = session.curation_summary()
    pairs = accepted_pairs(session)
    return cardmod.CurationSummary(
        total=summary["pairs"],
        reviewed=summary["reviewed"],
        accepted=summary["accepted"],
        rejected_by_reason=summary["rejected_by_reason"],
        skipped=summary["skipped"],
        flagged=summary["flagged"],
        undecided=summary["undecided"],
        edited=sum(1 for p in pairs if p.edited),
        regenerated=sum(1 for p in pairs if p.origin == "regenerated") if regenerated is None else regenerated,
        generated=summary["added"],
    )


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


def published_columns(dataset: Dataset) -> ColumnNames:
    """The column names ``dataset`` is published with (see ``ColumnNames``)."""
    p, cols = dataset.profile, dataset.columns
    answer = None
    if "answer" in cols or any(pair.answer for pair in dataset.pairs):
        answer = _canonical(p, p.answer_columns, cols.get("answer"), "answer")
    chunk = cols.get("chunk_index") is not None or any(pair.chunk_index is not None for pair in dataset.pairs)
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
                raise PublishError("input", f"{config} row {row}, field '{column}': not valid Unicode "
                                            f"(a lone surrogate at character {exc.start}); edit or reject it, "
                                            "then publish again") from None


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
    names = published_columns(ds)
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
    c_cols[names.text] = [d.text for d in docs]
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

    corpus = pa.table(c_cols, schema=pa.schema(c_fields))
    questions = pa.table(q_cols, schema=pa.schema(q_fields))
    return corpus, questions, notes


# ---------------------------------------------------------------------------------------------
# Diff against the Hub's current version


@dataclass(frozen=True, slots=True)
class RowDiff:
    """How one config's rows change against the Hub's current version.

    Attributes:
        added, removed, edited, unchanged: row counts. A row is ``edited`` when it matches an
            old row by key but differs in some column (see ``diff_rows``).
        edited_columns: column name -> edited rows where that column changed.
        known: False when the current version could not be read (then everything counts as added).
    """

    added: int
    removed: int
    edited: int
    unchanged: int
    edited_columns: dict[str, int] = field(default_factory=dict)
    known: bool = True


@dataclass(frozen=True, slots=True)
class PublishDiff:
    """What a publish changes: per config, and whether the card text changes.

    ``first_publish`` is True when the repository (or both configs) did not exist yet.
    """

    corpus: RowDiff
    questions: RowDiff
    card_changed: bool
    first_publish: bool


def _canon(row: Mapping[str, Any]) -> str:
    text = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def diff_rows(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]],
              keys: Sequence[Callable[[Mapping[str, Any]], Hashable | None]]) -> RowDiff:
    """Compare rows as multisets: identical rows are ``unchanged``; then, key by key in order,
    a new row whose key matches a still-unmatched old row is ``edited``; the rest are
    ``added`` / ``removed``. A key function returning None never matches.

    For questions the keys are (document key, question) then (document key, supporting
    passage), so editing the question or the passage still counts as one edit; for the corpus
    the document key. ``old`` None means the current version is unknown (all added, not known).
    """
    if old is None:
        return RowDiff(len(new), 0, 0, 0, {}, known=False)
    pool: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(old):
        pool[_canon(r)].append(i)
    used: set[int] = set()
    rest: list[Mapping[str, Any]] = []
    unchanged = 0
    for r in new:
        bucket = pool.get(_canon(r))
        if bucket:
            used.add(bucket.pop())
            unchanged += 1
        else:
            rest.append(r)
    edited = 0
    cols: Counter[str] = Counter()
    for keyf in keys:
        index: dict[Hashable, list[int]] = defaultdict(list)
        for i, r in enumerate(old):
            if i not in used:
                k = keyf(r)
                if k is not None:
                    index[k].append(i)
        still: list[Mapping[str, Any]] = []
        for r in rest:
            k = keyf(r)
            bucket = index.get(k) if k is not None else None
            if bucket:
                i = bucket.pop(0)
                used.add(i)
                edited += 1
                o = old[i]
                for c in sorted(set(o) | set(r)):
                    if o.get(c) != r.get(c):
                        cols[c] += 1
            else:
                still.append(r)
        rest = still
    return RowDiff(len(rest), len(old) - len(used), edited, unchanged, dict(sorted(cols.items())))


def _key(*columns: str) -> Callable[[Mapping[str, Any]], Hashable | None]:
    def f(row: Mapping[str, Any]) -> Hashable | None:
        values = tuple(row.get(c) for c in columns)
        if any(v is None for v in values):
            return None
        return tuple(str(v) for v in values)

    return f


# ---------------------------------------------------------------------------------------------
# The plan


@dataclass
class PublishPlan:
    """What a publish would commit, and what it changes on the Hub.

    Attributes:
        repo_id, revision: the target (``revision`` is a branch; ``main`` by default).
        dataset_name: the dataset's name (``ficha``).
        corpus, questions: the tables to publish; corpus_hash, questions_hash: their
            ``hub_layout.content_hash``.
        content: the card's content (the gate verdict and ``--force`` reason are set at publish).
        checklist_passed: the checklist verdict given to ``plan_publish`` (None when not run).
        license: the Hub licence id, or None (then ``publish`` raises ``LicenseRequired``);
            license_source: where it came from (``argument``, ``profile``, ``hub card``,
            ``source card``).
        hub_read: whether the Hub's current version was read (``read_hub``).
        repo_exists, revision_exists: what the Hub said (None when not read).
        base_sha: the commit the card was merged over (the revision's head, or main's head
            for a branch still to create); None for a repo still to create.
        base_card: the current README text at ``base_sha``, or None.
        diff: the change against the current version (None when the Hub was not read).
        notes: warnings for the person publishing (columns left out, unreadable configs ...).
        corpus_config, questions_config: config names (the profile's).
    """

    repo_id: str
    revision: str
    dataset_name: str
    corpus: pa.Table
    questions: pa.Table
    corpus_hash: str
    questions_hash: str
    content: cardmod.CardContent
    checklist_passed: bool | None
    license: str | None
    license_source: str
    hub_read: bool
    repo_exists: bool | None
    revision_exists: bool | None
    base_sha: str | None
    base_card: str | None
    diff: PublishDiff | None
    notes: list[str]
    corpus_config: str = "corpus"
    questions_config: str = "questions"
    _parquet: dict[str, bytes] = field(default_factory=dict, repr=False)

    def with_license(self, license_id: str) -> "PublishPlan":
        """A copy with the licence set (``card.check_license``); raises ValueError when invalid."""
        lid = cardmod.check_license(license_id)
        return replace(self, license=lid, license_source="argument",
                       content=replace(self.content, license=lid), _parquet=self._parquet)

    def readme(self, *, gate_passed: bool | None = None, force_reason: str | None = None) -> str:
        """The merged card text. ``gate_passed`` defaults to ``checklist_passed``.

        Raises:
            PublishError: (kind ``card``) the current card cannot be merged.
        """
        passed = self.checklist_passed if gate_passed is None else gate_passed
        content = replace(self.content, checklist_passed=passed, force_reason=force_reason, license=self.license)
        try:
            return cardmod.merge_card(self.base_card, configs=config_entries((self.corpus_config, self.questions_config)),
                                      section=cardmod.render_section(content), title=self.dataset_name,
                                      license=self.license)
        except cardmod.CardError as exc:
            raise PublishError("card", f"{self.repo_id}: {exc}") from None

    def files(self, *, gate_passed: bool | None = None, force_reason: str | None = None) -> dict[str, bytes]:
        """``{repository path: bytes}`` of the commit: the two parquet shards, then README.md."""
        if not self._parquet:
            files = layout_files(self.corpus, self.questions, readme="", corpus_config=self.corpus_config,
                                 questions_config=self.questions_config)
            self._parquet.update({k: v for k, v in files.items() if k != README})
        out = dict(self._parquet)
        out[README] = self.readme(gate_passed=gate_passed, force_reason=force_reason).encode("utf-8")
        return out

    def describe(self) -> list[str]:
        """Plain lines for a person: target, rows, changes against the Hub, licence, notes."""
        target = f"{self.repo_id}@{self.revision}"
        if self.hub_read:
            state = ("new repository" if not self.repo_exists else
                     "existing repository" if self.revision_exists else "new branch from main")
            target += f" ({state})"
        lines = [f"target: {target}",
                 f"{self.corpus_config}: {self.corpus.num_rows:,} rows; {self.questions_config}: "
                 f"{self.questions.num_rows:,} rows"]
        if self.diff is not None:
            for name, d in ((self.corpus_config, self.diff.corpus), (self.questions_config, self.diff.questions)):
                s = f"{name}: +{d.added:,} added, -{d.removed:,} removed, ~{d.edited:,} edited, {d.unchanged:,} unchanged"
                lines.append(s if d.known else s + " (current version unreadable)")
            lines.append("card: " + ("changes" if self.diff.card_changed else "unchanged"))
        else:
            lines.append("changes against the Hub: not read")
        lines.append(f"licence: {self.license} (from the {self.license_source})" if self.license
                     else "licence: unknown (needed to publish)")
        lines += [f"note: {n}" for n in self.notes]
        return lines


def _describe_dataset(dataset: Dataset, names: ColumnNames) -> str:
    domain = dataset.profile.domain or "documents"
    return (f"An MTCB retrieval benchmark over {cardmod.escape_md(domain, 120)}. The `corpus` config holds the "
            f"documents; the `questions` config holds question-answer pairs, each with a supporting passage "
            f"({cardmod.code_md(names.passage)}) and the document key "
            f"({cardmod.code_md(names.doc_key)}) of the document it comes from. MTCB puts every chunk of "
            "every document in one index and counts a retrieved chunk as a hit when it contains the supporting "
            "passage as a plain, case-sensitive substring, so each passage must be verbatim in its document's "
            "text; the checklist below says whether that held at publish time.")


def _fields(table: pa.Table, meanings: Mapping[str, str]) -> list[cardmod.FieldInfo]:
    return [cardmod.FieldInfo(f.name, str(f.type), meanings.get(f.name, "as in the source")) for f in table.schema]


def _counts(corpus: pa.Table, questions: pa.Table, names: ColumnNames) -> dict[str, int | float]:
    texts = corpus.column(names.text).to_pylist() if corpus.num_rows else []
    passages = questions.column(names.passage).to_pylist() if questions.num_rows else []
    keys = set(corpus.column(names.corpus_key).to_pylist()) if corpus.num_rows else set()
    qkeys = set(questions.column(names.doc_key).to_pylist()) if questions.num_rows else set()
    lengths = [len(p or "") for p in passages]
    return {
        "documents": corpus.num_rows,
        "document_chars": sum(len(t or "") for t in texts),
        "questions": questions.num_rows,
        "linked_documents": len(keys & qkeys),
        "passage_chars_mean": round(sum(lengths) / len(lengths), 1) if lengths else 0,
        "passage_chars_max": max(lengths, default=0),
    }


def _source_card(dataset: Dataset) -> str | None:
    if dataset.source.kind in ("folder", "sample"):
        readme = Path(dataset.source.location) / README
        if readme.is_file():
            try:
                return readme.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
    return None


def plan_publish(session: ReviewSession, *, repo_id: str | None = None, revision: str | None = None,
                 only_linked: bool = False, license: str | None = None,
                 checklist: Sequence[Mapping[str, Any]] | None = None, checklist_passed: bool | None = None,
                 regenerated: int | None = None, token: str | None = None, read_hub: bool = True,
                 accepted: Sequence[int] | None = None, on_retry: Callable[[str], None] | None = None) -> PublishPlan:
    """Build what a publish of ``session`` would commit to ``repo_id``, and its diff.

    Args:
        session: the review session (only read; the workspace is never written).
        repo_id: target dataset repo; default the profile's Hub id (``chonkie-ai/ficha``).
        revision: target branch; default ``main``. A missing branch is created from main at publish.
        only_linked: publish only the documents an accepted pair points at.
        license: a Hub licence id; else the profile's (``Profile.extra["license"]``), the target
            card's, or the source folder's card's. None found: ``plan.license`` is None and
            ``publish`` raises ``LicenseRequired``.
        checklist: the checklist results ``[{"id", "status", "message", "pairs"}]`` for the card.
        checklist_passed: the checklist's verdict (the gate; ``publish`` takes it again).
        regenerated: the number of regenerated pairs for the card (default: counted from origins).
        token: a Hub token for reading a private target; default ``HF_TOKEN`` / the login, or none.
        read_hub: read the target's current card and configs (needs the network). False gives
            an offline preview whose card is not merged with the Hub's; it cannot be published.
            The configs are downloaded at the head's commit and loaded from there, never from
            a local folder named like the repo id.
        accepted: the pair ids that count as accepted (default: the session's accepted pairs).
        on_retry: called with one line (``Retry.line``) each time huggingface_hub retries a
            request; the libraries' own logging, warnings and progress bars stay off meanwhile.

    Raises:
        PublishError: the Hub cannot be read (offline, network, 401, 403 ...), a text is not
            valid Unicode, or ``license`` is not a licence id.
    """
    from huggingface_hub.utils import validate_repo_id

    ds = session.dataset
    profile = ds.profile
    repo_id = repo_id or profile.hub_id
    revision = revision or DEFAULT_REVISION
    try:
        validate_repo_id(repo_id)
    except ValueError as exc:
        raise PublishError("input", f"not a Hub repo id: {repo_id!r} ({' '.join(str(exc).split())[:120]})") from None
    if not all(c.isalnum() or c in "-_./" for c in revision) or revision.startswith("/"):
        raise PublishError("input", f"not a branch name: {revision!r}")
    names = published_columns(ds)
    corpus, questions, notes = build_tables(session, only_linked=only_linked, accepted=accepted)

    hub = _HubState()
    if read_hub:
        hub = _read_hub(repo_id, revision, token, names, profile, ds, on_retry)
        notes += hub.notes
    else:
        notes.append("the Hub was not read: the card is not merged with the repository's current card and this "
                      "plan cannot be published")

    lic, lic_source = None, ""
    if license:
        try:
            lic, lic_source = cardmod.check_license(license), "argument"
        except ValueError as exc:
            raise PublishError("license", str(exc)) from None
    else:
        for src, value in (("profile", profile.extra.get("license")), ("hub card", cardmod.card_license(hub.card)),
                           ("source card", cardmod.card_license(_source_card(ds))
                            or cardmod.card_license(hub.source_card))):
            if value:
                try:
                    lic, lic_source = cardmod.check_license(value), src
                    break
                except ValueError:
                    notes.append(f"the {src} names a licence that is not a Hub licence id: {value!r}")

    meanings_q = {names.question: "the question", names.passage:
                  "supporting passage: the text a retrieved chunk must contain (plain, case-sensitive substring)",
                  names.doc_key: f"document key: equals {cardmod.code_md(names.corpus_key)} of one corpus row",
                  CHUNK_INDEX_COLUMN: "generation window: 8,192-token cl100k_base windows with 512 overlap "
                                      "(null when unknown)"}
    if names.answer:
        meanings_q[names.answer] = "the reference answer"
    meanings_c = {names.corpus_key: "document key", names.text: "the full document text, as evaluated"}
    content = cardmod.CardContent(
        repo_id=repo_id, name=ds.name, description=_describe_dataset(ds, names),
        corpus_config=profile.corpus_config, questions_config=profile.questions_config,
        corpus_fields=_fields(corpus, meanings_c), questions_fields=_fields(questions, meanings_q),
        counts=_counts(corpus, questions, names), curation=curation_summary(session, regenerated=regenerated),
        checklist=[dict(item) for item in checklist] if checklist is not None else None,
        checklist_passed=checklist_passed, license=lic, source=ds.source,
        notes=["The corpus holds only the documents at least one question points at, so retrieval has fewer "
               "distractors than over the full corpus."] if only_linked else [],
    )
    plan = PublishPlan(
        repo_id=repo_id, revision=revision, dataset_name=ds.name, corpus=corpus, questions=questions,
        corpus_hash=content_hash(corpus), questions_hash=content_hash(questions), content=content,
        checklist_passed=checklist_passed, license=lic, license_source=lic_source, hub_read=read_hub,
        repo_exists=hub.repo_exists if read_hub else None, revision_exists=hub.revision_exists if read_hub else None,
        base_sha=hub.base_sha, base_card=hub.card, diff=None, notes=notes,
        corpus_config=profile.corpus_config, questions_config=profile.questions_config,
    )
    if read_hub:
        q_keys = [_key(names.doc_key, names.question), _key(names.doc_key, names.passage)]
        plan.diff = PublishDiff(
            corpus=diff_rows(hub.rows.get(profile.corpus_config, []) if hub.known.get(profile.corpus_config, True)
                             else None, corpus.to_pylist(), [_key(names.corpus_key)]),
            questions=diff_rows(hub.rows.get(profile.questions_config, [])
                                if hub.known.get(profile.questions_config, True) else None,
                                questions.to_pylist(), q_keys),
            card_changed=plan.readme() != (hub.card or ""),
            first_publish=not hub.repo_exists or not hub.rows,
        )
    return plan


# ---------------------------------------------------------------------------------------------
# Talking to the Hub


@dataclass
class _HubState:
    repo_exists: bool = False
    revision_exists: bool = False
    base_sha: str | None = None
    card: str | None = None
    source_card: str | None = None
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    known: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _ensure_online() -> None:
    from huggingface_hub import constants

    if constants.is_offline_mode():
        raise PublishError("offline", "offline mode is on (HF_HUB_OFFLINE=1): unset HF_HUB_OFFLINE to reach the "
                                      "Hugging Face Hub, then publish again; nothing was changed")


def _status(exc: BaseException) -> int | None:
    resp = getattr(exc, "response", None)
    return getattr(resp, "status_code", None)


def _is_missing_repo(exc: BaseException) -> bool:
    """A RepositoryNotFoundError that means "no such repo (visible to you)", not a bad token."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    if not isinstance(exc, RepositoryNotFoundError) or isinstance(exc, GatedRepoError):
        return False
    return _status(exc) == 404 or (_status(exc) == 401 and "Invalid credentials" not in (exc.server_message or ""))


def _read_hub(repo_id: str, revision: str, token: str | None, names: ColumnNames, profile: Profile,
              dataset: Dataset, on_retry: Callable[[str], None] | None = None) -> _HubState:
    _ensure_online()
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import RevisionNotFoundError

    state = _HubState()
    token = token or get_token() or None
    api = HfApi(token=token)
    step = f"reading {repo_id}"

    def retried(retry: Retry) -> None:
        if on_retry is not None:
            on_retry(retry.line(step))

    try:
        with quiet_hub(retried):
            try:
                info = api.repo_info(repo_id, repo_type="dataset", revision=revision)
                state.repo_exists = state.revision_exists = True
            except RevisionNotFoundError:
                info = api.repo_info(repo_id, repo_type="dataset")
                state.repo_exists = True
            except Exception as exc:
                if not _is_missing_repo(exc):
                    raise
                info = None
            with tempfile.TemporaryDirectory(prefix="mtcb-publish-") as tmp:
                if info is not None:
                    state.base_sha = info.sha
                    files = {s.rfilename for s in (info.siblings or [])}
                    if README in files:
                        step = f"reading {repo_id}/README.md"
                        path = api.hf_hub_download(repo_id, README, repo_type="dataset", revision=info.sha,
                                                   cache_dir=tmp)
                        state.card = Path(path).read_text(encoding="utf-8", errors="replace")
                    try:
                        configs = cardmod.card_configs(state.card)
                    except cardmod.CardError as exc:
                        raise PublishError("card", f"{repo_id}: {exc}") from None
                    present = [c for c in (profile.corpus_config, profile.questions_config) if c in configs]
                    if present:
                        step = f"reading the current {' and '.join(present)} configs of {repo_id}"
                        folder = _download_revision(repo_id, info.sha, state.card, present, token, tmp)
                    for config in present:
                        rows = _load_rows(folder, config, tmp)
                        if rows is None:
                            state.known[config] = False
                            state.notes.append(f"the current '{config}' config of {repo_id} could not be "
                                               "loaded: its rows count as added")
                        else:
                            state.rows[config] = rows
                    for config in (profile.corpus_config, profile.questions_config):
                        old = configs.get(config, {}).get("data_files")
                        new = config_entries((config,))[0]["data_files"]
                        if old is not None and old != new:
                            state.notes.append(f"the '{config}' config's earlier data files stay in the "
                                               f"repository but are no longer loaded (now {data_file(config)})")
                src = dataset.source
                if src.kind == "hub" and src.location != repo_id:
                    try:  # the source repo's card, for its licence only; best effort
                        path = api.hf_hub_download(src.location, README, repo_type="dataset", cache_dir=tmp)
                        state.source_card = Path(path).read_text(encoding="utf-8", errors="replace")
                    except Exception:  # noqa: BLE001 - a missing source card only means no licence from it
                        state.source_card = None
    except PublishError:
        raise
    except Exception as exc:
        raise _explain(exc, step=step, repo_id=repo_id, revision=revision) from exc
    return state


def _data_file_patterns(data_files: Any) -> list[str]:
    """The path patterns of one card ``configs`` entry's ``data_files`` (a string, a list of
    strings or of ``{split, path}``, or ``{split: path(s)}``), without a leading ``./``."""
    out: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str):
            out.append(value.removeprefix("./"))
        elif isinstance(value, Mapping):
            add(value.get("path") if "path" in value else list(value.values()))
        elif isinstance(value, (list, tuple)):
            for v in value:
                add(v)

    add(data_files)
    return out


def _download_revision(repo_id: str, sha: str, card: str | None, configs: Sequence[str], token: str | None,
                       tmp: str | Path) -> Path:
    """Download ``README.md`` and every file the ``configs`` entries of ``card`` name, from the
    Hub at commit ``sha`` (an explicit revision, never a path lookup: a local folder named like
    the repo id is never read), into a new folder under ``tmp``; return that folder, which
    loads with ``datasets.load_dataset(folder, config)`` as the repo loads at ``sha``.

    The downloaded card is the Hub's; its ``configs`` are cut down to ``configs`` (the other
    configs' files, e.g. gacha's ``raw``, are not downloaded, and ``datasets`` refuses a local
    folder whose card names missing files).

    Raises:
        whatever huggingface_hub raises (network, HTTP, offline mode); the caller explains it.
        CardError: a card's front matter is invalid.
    """
    from huggingface_hub import snapshot_download

    from mtcb_curate.hub.layout import front_matter

    entries = cardmod.card_configs(card)
    patterns = [README]
    for config in configs:
        patterns += _data_file_patterns(entries.get(config, {}).get("data_files"))
    folder = Path(tmp).resolve() / "revision"
    snapshot_download(repo_id, repo_type="dataset", revision=sha, allow_patterns=patterns, local_dir=str(folder),
                      token=token)
    readme = folder / README
    hub_card = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else None
    meta, body = cardmod.split_card(hub_card)
    hub_entries = cardmod.card_configs(hub_card)
    meta["configs"] = [hub_entries[c] for c in configs if c in hub_entries]
    readme.write_text(front_matter(meta) + body, encoding="utf-8")
    return folder


def _load_local(folder: Path, config: str, cache_dir: str | Path) -> Any:
    """``datasets.load_dataset(folder, config, split="train")`` on a downloaded revision (an
    absolute path, so nothing is looked up relative to the current directory)."""
    import datasets

    with quiet_datasets():
        return datasets.load_dataset(str(Path(folder).resolve()), config, split="train",
                                     cache_dir=str(Path(cache_dir) / "datasets"))


def _load_rows(folder: Path, config: str, cache_dir: str | Path) -> list[dict[str, Any]] | None:
    """A config's train rows of a downloaded revision (``_download_revision``) through
    ``datasets``, as MTCB loads it; None when it does not load."""
    try:
        ds = _load_local(folder, config, cache_dir)
    except Exception:  # noqa: BLE001 - a config that does not load counts as unreadable
        return None
    return ds.data.table.to_pylist()


@dataclass(frozen=True, slots=True)
class Retry:
    """One retry of a request to the Hub by huggingface_hub (its ``http_backoff``).

    Attributes:
        cause: what failed, in our words (``answered 503``, ``did not answer (ReadTimeout)``,
            ``rate-limited the requests (429)``).
        wait: seconds before the next try.
        attempt: the retry's number (1 = the first retry); of: how many retries at most.
    """

    cause: str
    wait: float
    attempt: int
    of: int

    def line(self, step: str) -> str:
        """One line for a person, e.g. ``the Hub answered 503 while uploading to me/x: trying
        again in 1 s (retry 1 of 5)``."""
        return f"the Hub {self.cause} while {step}: trying again in {self.wait:g} s (retry {self.attempt} of {self.of})"


#: Loggers whose records never reach the terminal while ``quiet_hub`` is active.
QUIET_LOGGERS = ("huggingface_hub", "datasets", "fsspec", "filelock", "httpx2", "httpcore", "urllib3")
_HTTP_ERROR = re.compile(r"HTTP Error (\d{3}) thrown while requesting")
_EXC_ERROR = re.compile(r"'(.*)' thrown while requesting", re.S)
_RETRYING = re.compile(r"Retrying in ([\d.]+)s \[Retry (\d+)/(\d+)\]")
_RATE_LIMITED = re.compile(r"Rate limited\. Waiting ([\d.]+)s before retry \[Retry (\d+)/(\d+)\]")


class _LibraryRecords(logging.Handler):
    """The only handler of ``QUIET_LOGGERS`` while ``quiet_hub`` is active: huggingface_hub's
    retry warnings become ``Retry`` values for the listeners; every other record is dropped."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.listeners: list[Callable[[Retry], None]] = []
        self._cause: dict[int, str] = {}  # thread id -> the cause of its latest failed request

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed library record is simply dropped
            return
        if m := _HTTP_ERROR.search(msg):
            self._cause[record.thread or 0] = f"answered {m.group(1)}"
            return
        if m := _EXC_ERROR.search(msg):
            detail = " ".join(m.group(1).split())[:80]
            self._cause[record.thread or 0] = f"did not answer ({detail})" if detail else "did not answer"
            return
        if m := _RATE_LIMITED.search(msg):
            retry = Retry("rate-limited the requests (429)", float(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif m := _RETRYING.search(msg):
            cause = self._cause.pop(record.thread or 0, "failed")
            retry = Retry(cause, float(m.group(1)), int(m.group(2)), int(m.group(3)))
        else:
            return
        with _quiet_lock:
            listeners = list(self.listeners)
        for listener in listeners:
            try:
                listener(retry)
            except Exception:  # noqa: BLE001 - a broken progress callback must not break the publish
                pass


_quiet_lock = threading.RLock()
_quiet_handler = _LibraryRecords()
_quiet_state: dict[str, Any] = {"depth": 0}


class quiet_hub:
    """Keep huggingface_hub's and datasets' own output out of the terminal for the duration:
    their loggers (``QUIET_LOGGERS``), progress bars and Python warnings. Retries that
    huggingface_hub makes are handed to ``on_retry`` (a ``Retry``) instead of being logged.

    Re-entrant and usable from several threads at once: the first entry saves the libraries'
    settings, the last exit restores them. Warnings are ignored process-wide while active
    (``warnings`` has no per-thread filters).

    ``with quiet_hub(on_retry=lambda r: print(r.line("uploading"))): ...``
    """

    def __init__(self, on_retry: Callable[[Retry], None] | None = None):
        self.on_retry = on_retry

    def __enter__(self) -> "quiet_hub":
        import datasets
        import huggingface_hub.utils as hf_utils

        with _quiet_lock:
            if _quiet_state["depth"] == 0:
                caught = warnings.catch_warnings()
                caught.__enter__()
                warnings.simplefilter("ignore")
                saved = {}
                for name in QUIET_LOGGERS:
                    lg = logging.getLogger(name)
                    saved[name] = (lg.handlers[:], lg.level, lg.propagate)
                    lg.handlers[:] = [_quiet_handler]
                    lg.propagate = False
                    lg.setLevel(logging.WARNING if name == "huggingface_hub" else logging.CRITICAL + 1)
                hf_bars = hf_utils.disable_progress_bars()
                ds_bars = datasets.is_progress_bar_enabled()
                datasets.disable_progress_bars()
                _quiet_state.update(caught=caught, loggers=saved, hf_bars=hf_bars, ds_bars=ds_bars)
            _quiet_state["depth"] += 1
            if self.on_retry is not None:
                _quiet_handler.listeners.append(self.on_retry)
        return self

    def __exit__(self, *exc: object) -> None:
        import datasets

        with _quiet_lock:
            if self.on_retry is not None and self.on_retry in _quiet_handler.listeners:
                _quiet_handler.listeners.remove(self.on_retry)
            _quiet_state["depth"] -= 1
            if _quiet_state["depth"] > 0:
                return
            if _quiet_state.pop("ds_bars"):
                datasets.enable_progress_bars()
            _quiet_state.pop("hf_bars").__exit__(None, None, None)
            for name, (handlers, level, propagate) in _quiet_state.pop("loggers").items():
                lg = logging.getLogger(name)
                lg.handlers[:] = handlers
                lg.setLevel(level)
                lg.propagate = propagate
            _quiet_state.pop("caught").__exit__(None, None, None)


class quiet_datasets(quiet_hub):
    """``quiet_hub`` without a retry callback (``with quiet_datasets(): ...``; the checklist's
    ``loads`` check uses it)."""

    def __init__(self) -> None:
        super().__init__(None)


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out and len(out) < 20:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _network_or_http(exc: BaseException) -> bool:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    return any(isinstance(e, (httpx2.TransportError, HfHubHTTPError, OfflineModeIsEnabled, ConnectionError))
               for e in _chain(exc))


def _server_message(exc: BaseException) -> str:
    msg = getattr(exc, "server_message", None) or ""
    msg = " ".join(str(msg).split())
    return f": {msg[:160]}" if msg else ""


def _explain(exc: BaseException, *, step: str, repo_id: str, revision: str, done: Sequence[str] = ()) -> PublishError:
    """One actionable ``PublishError`` for a failure of the Hub client (never naming the token)."""
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    namespace = repo_id.split("/")[0]
    nothing = "nothing was committed" + (f" ({'; '.join(done)})" if done else "")
    chain = _chain(exc)
    if any(isinstance(e, OfflineModeIsEnabled) for e in chain):
        return PublishError("offline", f"offline mode is on (HF_HUB_OFFLINE=1) while {step}: unset HF_HUB_OFFLINE, "
                                       f"then publish again; {nothing}")
    http = next((e for e in chain if isinstance(e, HfHubHTTPError) and _status(e) is not None), None)
    if http is not None:
        status, srv = _status(http), _server_message(http)
        if step.startswith("creating ") and status in (403, 404):
            return PublishError("not_found", f"dataset repo {repo_id} does not exist and could not be created "
                                             f"({status}{srv}): create it on the Hub, or check the repo id and your "
                                             f"token's rights on '{namespace}'; {nothing}")
        if status == 401:
            return PublishError("auth", f"the Hub refused the token (401{srv}) while {step}: set HF_TOKEN to a valid "
                                        f"token or run `hf auth login`, then publish again; {nothing}")
        if status == 403:
            return PublishError("forbidden", f"the token may not write to {repo_id} (403{srv}) while {step}: use a "
                                             f"token with write access to '{namespace}', then publish again; {nothing}")
        if status == 404:
            return PublishError("not_found", f"dataset repo {repo_id} (revision {revision}) was not found (404{srv}) "
                                             f"while {step}: check the repo id and your rights on '{namespace}'; "
                                             f"{nothing}")
        if status == 409:
            return PublishError("conflict", f"the Hub reported a conflict on {repo_id} (409{srv}) while {step}: "
                                            f"another operation is under way; wait, then publish again; {nothing}")
        if status == 412:
            return PublishError("changed", f"{repo_id}@{revision} changed on the Hub since it was read (412{srv}): "
                                           f"plan again to merge the new version, then publish; {nothing}")
        if status is not None and (status == 429 or status >= 500):
            return PublishError("server", f"the Hub answered {status}{srv} while {step}: try again later; {nothing}")
        return PublishError("failed", f"the Hub answered {status}{srv} while {step}; {nothing}")
    for e in chain:
        if isinstance(e, (httpx2.ConnectError, httpx2.ConnectTimeout)):
            return PublishError("network", f"cannot reach the Hugging Face Hub at {constants.ENDPOINT} while {step} "
                                           f"(no network?): check the connection or HF_ENDPOINT, then publish again; "
                                           f"{nothing}")
    for e in chain:
        if isinstance(e, (httpx2.TransportError, ConnectionError)):
            detail = " ".join(str(e).split())[:120] or type(e).__name__
            return PublishError("dropped", f"the connection to the Hub dropped while {step} ({detail}): run publish "
                                           f"again (if the commit did land, the retry says the Hub changed: plan "
                                           f"again then); the workspace is unchanged")
    detail = " ".join(str(exc).split())[:200]
    return PublishError("failed", f"publishing to {repo_id} failed while {step}: {type(exc).__name__}: {detail}")


def check_gate(gate_passed: bool, force: bool = False, reason: str | None = None) -> str | None:
    """The checklist gate. Returns the ``--force`` reason to write in the card, or None.

    Raises:
        PublishError: (kind ``gate``) the checklist failed and ``force`` is off, or ``force``
            came without a non-empty reason.
    """
    if gate_passed:
        return None
    if not force:
        raise PublishError("gate", "the checklist failed: fix the failing checks, or publish anyway with "
                                   "--force --reason \"why\"; nothing was published")
    text = " ".join((reason or "").split())
    if not text:
        raise PublishError("gate", "--force needs --reason \"why\": the reason is written into the dataset card; "
                                   "nothing was published")
    return text


def dry_run(plan: PublishPlan, folder: Path, *, gate_passed: bool | None = None, force: bool = False,
            reason: str | None = None) -> dict[str, Path]:
    """Write exactly the files ``publish`` would commit to ``folder`` (Hub layout; loads with
    ``datasets.load_dataset(folder, "corpus")`` and ``(folder, "questions")``).

    The gate is not enforced (a failing checklist still shows its card); with ``force`` the
    reason is checked as ``publish`` does and written into the card.

    Returns:
        ``{repository path: written path}``.

    Raises:
        LicenseRequired: the plan has no licence.
        PublishError: (kind ``dry_run``) ``folder`` holds other files; (``gate``) force
            without a reason; (``card``) the current card cannot be merged.
    """
    if plan.license is None:
        raise LicenseRequired(plan.dataset_name)
    passed = plan.checklist_passed if gate_passed is None else gate_passed
    force_reason = check_gate(bool(passed), force, reason) if force else None
    files = plan.files(gate_passed=passed, force_reason=force_reason)
    folder = Path(folder)
    if folder.exists():
        if not folder.is_dir():
            raise PublishError("dry_run", f"{folder}: not a folder")
        others = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                        if p.is_file() and p.relative_to(folder).as_posix() not in files)
        if others:
            raise PublishError("dry_run", f"{folder}: the folder holds other files ({', '.join(others[:3])}"
                                          f"{' ...' if len(others) > 3 else ''}): give an empty or new folder")
    try:
        return write_files(folder, files)
    except OSError as exc:
        raise PublishError("dry_run", f"{folder}: cannot write ({exc.strerror or exc})") from None


@dataclass(frozen=True, slots=True)
class PublishResult:
    """A verified publish.

    Attributes:
        commit_url: the commit's URL on the Hub (print this).
        commit_sha: the commit id (40 hex) both configs were loaded back from.
        pr_url: the pull request's URL with ``create_pr``, else None.
        repo_id, revision: the target.
        created_repo, created_branch: what the publish created before committing.
        corpus_rows, question_rows: row counts, equal locally and as loaded back.
    """

    commit_url: str
    commit_sha: str
    pr_url: str | None
    repo_id: str
    revision: str
    created_repo: bool
    created_branch: bool
    corpus_rows: int
    question_rows: int


def _token(token: str | None) -> str:
    if token:
        return token
    from huggingface_hub import get_token

    found = get_token()
    if not found:
        raise PublishError("auth", "no Hugging Face token: set HF_TOKEN or run `hf auth login`, then publish again; "
                                   "nothing was changed")
    return found


def publish(plan: PublishPlan, *, gate_passed: bool, force: bool = False, reason: str | None = None,
            private: bool = False, create_pr: bool = False, revision: str | None = None,
            token: str | None = None, on_retry: Callable[[str], None] | None = None) -> PublishResult:
    """Commit ``plan`` to the Hub in one commit, then load both configs back and compare.

    Args:
        plan: from ``plan_publish`` with ``read_hub=True``.
        gate_passed: the checklist's verdict.
        force, reason: publish although the gate failed; the reason goes into the card.
        private: create the repo private when it does not exist. An existing PUBLIC repo is
            refused rather than published to, since private data was asked for.
        create_pr: open a pull request instead of committing to the branch.
        revision: must equal ``plan.revision`` when given (the card was merged over that branch).
        token: a Hub token; default ``HF_TOKEN`` or huggingface_hub's login. Never printed,
            logged or stored.
        on_retry: called with one line (``Retry.line``, e.g. "the Hub answered 503 while
            uploading to me/x: trying again in 1 s (retry 1 of 5)") each time huggingface_hub
            retries a request. The libraries' own logging, warnings and progress bars are kept
            out of the terminal for the whole publish (``quiet_hub``).

    Returns:
        ``PublishResult`` with the commit URL.

    Raises:
        PublishError: refused by the gate, no licence (``LicenseRequired``), offline, no
            network, 401, 403, missing repo, 409 (also when creating a repo answers 409 and the
            repo still cannot be read), 412 or a head moved since the plan, a
            connection dropped mid-upload, or a load-back that does not match. The message is
            one line; the workspace is never written, so the publish can be retried.
        ValueError: ``revision`` differs from the plan's.
    """
    force_reason = check_gate(gate_passed, force, reason)
    if revision is not None and revision != plan.revision:
        raise ValueError(f"the plan was made for revision {plan.revision!r}, not {revision!r}: plan again")
    if plan.license is None:
        raise LicenseRequired(plan.dataset_name)
    if not plan.hub_read:
        raise PublishError("changed", "this plan was made without reading the Hub (read_hub=False): plan again "
                                      "with the Hub reachable, then publish")
    files = plan.files(gate_passed=gate_passed, force_reason=force_reason)
    _ensure_online()
    token = _token(token)

    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import RevisionNotFoundError

    api = HfApi(token=token)
    repo_id, rev = plan.repo_id, plan.revision
    done: list[str] = []
    created_repo = created_branch = False
    step = "checking the token"

    def retried(retry: Retry) -> None:
        if on_retry is not None:
            on_retry(retry.line(step))

    with quiet_hub(retried):
        try:
            api.whoami()
            step = f"reading {repo_id}"
            try:
                info = api.repo_info(repo_id, repo_type="dataset")
            except Exception as exc:
                if not _is_missing_repo(exc):
                    raise
                info = None
            if info is None:
                step = f"creating {repo_id}"
                created_repo = _create_repo(api, repo_id, private)
                if created_repo:
                    done.append(f"the empty repo {repo_id} was created")
                step = f"reading {repo_id}"
                info = api.repo_info(repo_id, repo_type="dataset")
            if private and not info.private and not created_repo:
                raise PublishError("visibility", f"{repo_id} exists and is public; --private only applies to a new "
                                                 "repo: make it private on the Hub or drop --private; nothing was changed")
            if rev != DEFAULT_REVISION:
                try:
                    api.repo_info(repo_id, repo_type="dataset", revision=rev)
                except RevisionNotFoundError:
                    step = f"creating branch {rev} of {repo_id}"
                    api.create_branch(repo_id, repo_type="dataset", branch=rev, exist_ok=True)
                    created_branch = True
                    done.append(f"branch {rev} was created")
            step = f"reading the head of {repo_id}@{rev}"
            head_info = api.repo_info(repo_id, repo_type="dataset", revision=rev)
            head = head_info.sha
            moved = (head != plan.base_sha) if plan.base_sha is not None else any(
                s.rfilename != ".gitattributes" for s in (head_info.siblings or []))
            if moved:
                raise PublishError("changed", f"{repo_id}@{rev} changed on the Hub since the plan (now at "
                                              f"{str(head)[:12]}): plan again to merge the new version, then "
                                              "publish; nothing was committed")
            step = f"uploading to {repo_id}"
            operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
            info_commit = api.create_commit(
                repo_id, operations, commit_message=COMMIT_MESSAGE,
                commit_description=_commit_description(plan, force_reason), repo_type="dataset", revision=rev,
                create_pr=create_pr, parent_commit=head,
            )
        except PublishError:
            raise
        except Exception as exc:
            raise _explain(exc, step=step, repo_id=repo_id, revision=rev, done=done) from exc

        sha = info_commit.oid
        step = f"loading {repo_id}@{sha[:12]} back"
        _verify(plan, sha, token, files[README])
    return PublishResult(commit_url=info_commit.commit_url, commit_sha=sha, pr_url=info_commit.pr_url,
                         repo_id=repo_id, revision=rev, created_repo=created_repo, created_branch=created_branch,
                         corpus_rows=plan.corpus.num_rows, question_rows=plan.questions.num_rows)


def _create_repo(api: Any, repo_id: str, private: bool) -> bool:
    """Create the dataset repo ``repo_id``; True when this call created it, False when the Hub
    answered 409 (it exists: created meanwhile by someone else) and the repo can be read.

    A 409 is handled here rather than by ``create_repo(exist_ok=True)``, which reads a ``url``
    from the answer and fails with ``KeyError: 'url'`` when the Hub sends none.

    Raises:
        PublishError: (kind ``conflict``) 409 and the repo cannot be read (hidden from the
            token, or another operation is under way); the other errors propagate.
    """
    from huggingface_hub.errors import HfHubHTTPError

    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=False)
        return True
    except HfHubHTTPError as exc:
        if _status(exc) != 409:
            raise
        conflict = exc
    try:
        api.repo_info(repo_id, repo_type="dataset")
    except Exception as exc:
        if not _is_missing_repo(exc):
            raise
        namespace = repo_id.split("/")[0]
        raise PublishError("conflict", f"the Hub refused to create {repo_id} (409{_server_message(conflict)}): it "
                                       f"may exist but be hidden from your token, or another operation on it is "
                                       f"under way; check the repo id and your token's rights on '{namespace}', "
                                       "wait, then publish again; nothing was committed") from None
    return False


def _commit_description(plan: PublishPlan, force_reason: str | None) -> str:
    lines = [f"{plan.corpus_config}: {plan.corpus.num_rows} rows; {plan.questions_config}: {plan.questions.num_rows} rows."]
    if plan.diff is not None:
        for name, d in ((plan.corpus_config, plan.diff.corpus), (plan.questions_config, plan.diff.questions)):
            lines.append(f"{name}: {d.added} added, {d.removed} removed, {d.edited} edited.")
    if force_reason is not None:
        lines.append(f"Published with --force although the checklist failed: {force_reason}")
    return "\n".join(lines)


def _verify(plan: PublishPlan, sha: str, token: str, readme: bytes) -> None:
    """Load both configs back from commit ``sha`` on the Hub and compare row counts and
    content hashes.

    The files the committed card (``readme``) names for the two configs are downloaded at the
    revision ``sha`` (``_download_revision``: an explicit revision, never a path lookup, so a
    local folder named like the repo id is never read), then loaded with ``datasets``.

    Raises:
        PublishError: (kind ``verify``) they do not download, do not load or do not match;
            the commit exists.
    """
    where = f"{plan.repo_id}@{sha[:12]}"
    configs = (plan.corpus_config, plan.questions_config)
    with tempfile.TemporaryDirectory(prefix="mtcb-verify-") as tmp:
        try:
            folder = _download_revision(plan.repo_id, sha, readme.decode("utf-8", "replace"), configs, token, tmp)
        except Exception as exc:
            http = next((e for e in _chain(exc) if _status(e) is not None), None)
            cause = (f"the Hub answered {_status(http)}{_server_message(http)}" if http is not None else
                     f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
            raise PublishError("verify", f"committed {where}, but it could not be downloaded back to verify it "
                                         f"({cause}): check the repository, then publish again") from exc
        for config, table, expected in ((plan.corpus_config, plan.corpus, plan.corpus_hash),
                                        (plan.questions_config, plan.questions, plan.questions_hash)):
            try:
                ds = _load_local(folder, config, tmp)
            except Exception as exc:
                detail = " ".join(str(exc).split())[:160]
                raise PublishError("verify", f"committed {where}, but the '{config}' config does not load back "
                                             f"({type(exc).__name__}: {detail}): check the repository, then publish "
                                             "again") from exc
            got = ds.data.table
            if ds.num_rows != table.num_rows or content_hash(got) != expected:
                raise PublishError("verify", f"committed {where}, but the '{config}' config loads back with "
                                             f"{ds.num_rows:,} rows (expected {table.num_rows:,}) or other content: "
                                             "check the repository, then publish again")
