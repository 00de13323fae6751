"""The publish plan: what a publish would commit, its card, and what it changes on the Hub.

Pure: the plan is composed from the session and a Hub state already read (``HubState``;
``hub.client.plan_publish`` reads it, then calls ``build_plan``). Also the gate
(``check_gate``) and the dry run (``dry_run``: the commit's files written to a folder).

What a plan commits (``PublishPlan.files``): the two parquet shards of ``hub.tables`` in Hub
layout (``hub.layout``) and ``README.md``, the repository's current card merged with ours
(``hub.card``). Its ``diff`` compares rows (added, removed, edited) with the Hub's current
version, so the app can show what the publish changes before it is confirmed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from mtcb_curate.dataset.model import Dataset
from mtcb_curate.dataset.profiles import CHUNK_INDEX_COLUMN
from mtcb_curate.hub import card as cardmod
from mtcb_curate.hub.diff import PublishDiff, diff_rows, row_key
from mtcb_curate.hub.errors import LicenseRequired, PublishError, PublishErrorKind as Kind
from mtcb_curate.hub.layout import README, config_entries, content_hash, layout_files, write_files
from mtcb_curate.hub.tables import ColumnNames, accepted_pairs, build_tables, published_columns
from mtcb_curate.store.session import ReviewSession


DEFAULT_REVISION = "main"
COMMIT_MESSAGE = "Publish corpus and questions (mtcb-curate)"


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
            defaults, facts = cardmod.card_metadata(self.dataset_name, self.questions.num_rows)
            return cardmod.merge_card(self.base_card, configs=config_entries((self.corpus_config, self.questions_config)),
                                      section=cardmod.render_section(content), title=self.dataset_name,
                                      license=self.license, metadata=defaults, facts=facts)
        except cardmod.CardError as exc:
            raise PublishError(Kind.CARD, f"{self.repo_id}: {exc}") from None

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



@dataclass
class HubState:
    """What the Hub holds at the target, as ``hub.client`` read it (the input of ``build_plan``).

    Attributes:
        repo_exists, revision_exists: whether the repo and the branch exist.
        base_sha: the head commit read (the branch's, or main's for a branch still to create);
            None for a repo still to create.
        card: the README text at ``base_sha``, or None.
        source_card: the source Hub repo's card (for its licence only), or None.
        rows: config name -> its current rows (only configs that loaded).
        known: config name -> False when the config exists but did not load.
        notes: warnings for the person publishing.
    """

    repo_exists: bool = False
    revision_exists: bool = False
    base_sha: str | None = None
    card: str | None = None
    source_card: str | None = None
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    known: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)



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



def check_branch(revision: str) -> None:
    """Refuse a branch name a publish cannot use.

    Raises:
        PublishError: (kind ``input``) ``revision`` holds other characters than letters,
            digits and ``-_./``, or starts with ``/``.
    """
    if not all(c.isalnum() or c in "-_./" for c in revision) or revision.startswith("/"):
        raise PublishError(Kind.INPUT, f"not a branch name: {revision!r}")


def _statistics(session: ReviewSession, accepted: Sequence[int] | None) -> str | None:
    """The card's statistics section over the published pairs (``stats.render.card_markdown``;
    no token windows are built), or None when they cannot be computed."""
    from mtcb_curate.stats import compute_stats
    from mtcb_curate.stats.render import card_markdown

    ids = [p.source_id for p in accepted_pairs(session, accepted)]
    try:
        return card_markdown(compute_stats(session, ids, build_windows=False))
    except Exception:  # noqa: BLE001 - the card is published without statistics rather than not at all
        return None


def _baseline(session: ReviewSession, accepted: Sequence[int] | None) -> list[dict[str, Any]] | None:
    """The card's optional baseline scores over the published pairs, from an existing preview
    cache in the workspace folder only (``preview.baseline.cached_scores``; the ``[preview]``
    chunkers, retriever and k of the default config file), or None when no preview has scored
    them. Never chunks or indexes the corpus."""
    from mtcb_curate.preview.baseline import cached_scores
    from mtcb_curate.preview.chunkers import DEFAULT_SPECS, parse_spec
    from mtcb_curate.preview.placement import has_cache
    from mtcb_curate.preview.scoring import Item
    from mtcb_curate.preview.settings import PreviewSettings

    folder = getattr(getattr(session, "workspace", None), "path", None)
    if not has_cache(folder):
        return None
    try:
        settings = PreviewSettings.resolve()
    except Exception:  # noqa: BLE001 - a bad [preview] table: the defaults
        settings = PreviewSettings(tuple(parse_spec(x) for x in DEFAULT_SPECS))
    items = [Item(p.source_id, p.question, p.passage, p.doc_key) for p in accepted_pairs(session, accepted)]
    try:
        documents = {k: d.text for k, d in session.dataset.documents.items()}
        scores = cached_scores(documents, items, settings.chunkers, settings.retriever, settings.k, folder,
                               session.corpus_index)
    except Exception:  # noqa: BLE001 - the card is published without baseline scores rather than not at all
        return None
    return [s.to_dict(with_pairs=False) for s in scores] or None


def _separation(session: ReviewSession, accepted: Sequence[int] | None) -> str | None:
    """The card's "Does this benchmark separate chunkers?" section over the published pairs
    (``card.separation_markdown``): their evidence density (``stats.density``, for the
    ``[preview]`` chunkers of the default config file) and, when an existing preview cache has
    scored them under two or more chunkers, the paired comparisons (``preview.separation``).
    Never chunks or indexes the corpus; None when nothing can be computed."""
    import numpy as np

    from mtcb_curate.preview.chunkers import DEFAULT_SPECS, parse_spec, passage_size
    from mtcb_curate.preview.baseline import cached_scores
    from mtcb_curate.preview.placement import has_cache
    from mtcb_curate.preview.scoring import Item
    from mtcb_curate.preview.separation import separate_scores
    from mtcb_curate.preview.settings import PreviewSettings
    from mtcb_curate.stats.density import density_summary, evidence_counts

    try:
        settings = PreviewSettings.resolve()
    except Exception:  # noqa: BLE001 - a bad [preview] table: the defaults
        settings = PreviewSettings(tuple(parse_spec(x) for x in DEFAULT_SPECS))
    try:
        items = [Item(p.source_id, p.question, p.passage, p.doc_key) for p in accepted_pairs(session, accepted)]
        if not items:
            return None
        passages = [it.passage for it in items]
        words, sentences = evidence_counts(passages)
        specs = list(dict.fromkeys(settings.chunkers))
        evidence = density_summary(words, sentences, [
            (s.text, s.unit, s.size, np.array([passage_size(s, p) for p in passages])) for s in specs])
        sep = None
        folder = getattr(getattr(session, "workspace", None), "path", None)
        if has_cache(folder):
            documents = {k: d.text for k, d in session.dataset.documents.items()}
            scores = cached_scores(documents, items, settings.chunkers, settings.retriever, settings.k, folder,
                                   session.corpus_index)
            if len(scores) >= 2:
                st = settings.separation
                sep = separate_scores(scores, settings.k, seed=st.seed, resamples=st.resamples, detect=st.detect,
                                      power=st.power).to_json()
        return cardmod.separation_markdown(sep, evidence)
    except Exception:  # noqa: BLE001 - the card is published without this section rather than not at all
        return None


def build_plan(session: ReviewSession, hub: HubState | None, *, repo_id: str, revision: str,
               tables: tuple[pa.Table, pa.Table, list[str]] | None = None, only_linked: bool = False,
               license: str | None = None, checklist: Sequence[Mapping[str, Any]] | None = None,
               checklist_passed: bool | None = None, regenerated: int | None = None,
               accepted: Sequence[int] | None = None) -> PublishPlan:
    """Compose the plan of a publish of ``session`` to ``repo_id@revision`` over ``hub``.

    Pure: nothing is read from the network (``hub.client.plan_publish`` reads the Hub first).

    Args:
        session: the review session (only read).
        hub: the target's current state, or None when the Hub was not read (an offline
            preview: the card is not merged with the Hub's and the plan cannot be published).
        repo_id, revision: the target, already checked.
        tables: ``build_tables(session, only_linked=..., accepted=...)`` when already built.
        only_linked, license, checklist, checklist_passed, regenerated, accepted: as
            ``plan_publish``'s.

    Raises:
        PublishError: (kind ``input``) a text is not valid Unicode; (``license``) ``license``
            is not a licence id; (``card``) the current card cannot be merged.
    """
    ds = session.dataset
    profile = ds.profile
    names = published_columns(ds, session.pairs)
    corpus, questions, notes = tables if tables is not None else build_tables(
        session, only_linked=only_linked, accepted=accepted)
    notes = list(notes)
    read_hub = hub is not None
    if hub is not None:
        notes += hub.notes
    else:
        hub = HubState()
        notes.append("the Hub was not read: the card is not merged with the repository's current card and this "
                     "plan cannot be published")

    lic, lic_source = None, ""
    if license:
        try:
            lic, lic_source = cardmod.check_license(license), "argument"
        except ValueError as exc:
            raise PublishError(Kind.LICENSE, str(exc)) from None
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
        statistics=_statistics(session, accepted),
        baseline=_baseline(session, accepted),
        separation=_separation(session, accepted),
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
        q_keys = [row_key(names.doc_key, names.question), row_key(names.doc_key, names.passage)]
        plan.diff = PublishDiff(
            corpus=diff_rows(hub.rows.get(profile.corpus_config, []) if hub.known.get(profile.corpus_config, True)
                             else None, corpus.to_pylist(), [row_key(names.corpus_key)]),
            questions=diff_rows(hub.rows.get(profile.questions_config, [])
                                if hub.known.get(profile.questions_config, True) else None,
                                questions.to_pylist(), q_keys),
            card_changed=plan.readme() != (hub.card or ""),
            first_publish=not hub.repo_exists or not hub.rows,
        )
    return plan


def commit_description(plan: PublishPlan, force_reason: str | None) -> str:
    """The commit's description: row counts, the diff, and the ``--force`` reason if any."""
    lines = [f"{plan.corpus_config}: {plan.corpus.num_rows} rows; {plan.questions_config}: {plan.questions.num_rows} rows."]
    if plan.diff is not None:
        for name, d in ((plan.corpus_config, plan.diff.corpus), (plan.questions_config, plan.diff.questions)):
            lines.append(f"{name}: {d.added} added, {d.removed} removed, {d.edited} edited.")
    if force_reason is not None:
        lines.append(f"Published with --force although the checklist failed: {force_reason}")
    return "\n".join(lines)


def check_gate(gate_passed: bool, force: bool = False, reason: str | None = None) -> str | None:
    """The checklist gate. Returns the ``--force`` reason to write in the card, or None.

    Raises:
        PublishError: (kind ``gate``) the checklist failed and ``force`` is off, or ``force``
            came without a non-empty reason.
    """
    if gate_passed:
        return None
    if not force:
        raise PublishError(Kind.GATE, "the checklist failed: fix the failing checks, or publish anyway with "
                                      "--force --reason \"why\"; nothing was published")
    text = " ".join((reason or "").split())
    if not text:
        raise PublishError(Kind.GATE, "--force needs --reason \"why\": the reason is written into the dataset card; "
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
            raise PublishError(Kind.DRY_RUN, f"{folder}: not a folder")
        others = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                        if p.is_file() and p.relative_to(folder).as_posix() not in files)
        if others:
            raise PublishError(Kind.DRY_RUN, f"{folder}: the folder holds other files ({', '.join(others[:3])}"
                                             f"{' ...' if len(others) > 3 else ''}): give an empty or new folder")
    try:
        return write_files(folder, files)
    except OSError as exc:
        raise PublishError(Kind.DRY_RUN, f"{exc.filename or folder}: cannot write ({exc.strerror or exc}); "
                                         f"nothing was left in {folder}") from None

