"""The quality checklist: MTCB's pre-publish checklist made executable, the gate of ``publish``.

MTCB's own checklist (chonkie-inc/mtcb, condensed in ``../shared/notes/mtcb.md``): every
supporting passage verbatim in its document; no duplicate questions; minimal passages;
questions answerable from the passage; metadata linking every question to its corpus entry;
both configs load. Each check below has a fixed id and gives ``pass``, ``warn`` or ``fail``
(or ``skip``), with the offending pair ids and one line of reason per pair.

=================  ======  ==================================================================
id                 worst   what fails or warns
=================  ======  ==================================================================
``verbatim``       fail    an accepted pair's passage is empty or not an exact substring of
                           its own document (``verify``)
``unique_passage`` warn    the passage also occurs in another document (that document's
                           chunks would count as hits too)
``duplicates``     fail    identical questions, or an unresolved near-duplicate cluster,
                           among accepted pairs (``neardup``; "not duplicates" marks hold)
``passage_length`` fail    warn below ``min_chars`` or above ``max_chars``; fail above twice
                           ``max_chars`` (also reported in tokens)
``answerable``     warn    the answer's content words are mostly absent from the passage (on
                           demand an LLM judges those pairs again, ``llm.judge``); the answer
                           is longer than ``MAX_ANSWER_CHARS``
``question_form``  fail    fail: empty question, or over twice ``MAX_QUESTION_CHARS``
                           (``question_form``); warn: over-long, yes/no, trivial, not a question
``links``          fail    the document key matches no corpus row or several; chunk_index out
                           of range, or its window does not contain the passage
``corpus``         fail    fail: an empty document; warn: documents without an accepted pair
``reviewed``       fail    a pair is undecided, skipped or flagged (skipped without workspace)
``loads``          fail    the publish layout, written to a temporary folder, does not load
                           with ``datasets.load_dataset`` with the expected rows, columns, types
=================  ======  ==================================================================

Without a workspace every pair counts as accepted and ``reviewed`` is skipped with a warning,
so the checklist runs on any MTCB dataset in CI.

The same bounds (passage length, answer length, question form) decide which LLM candidates
``llm.generate`` refuses: :func:`passage_length_problem`, :func:`answer_length_problem` and
``question_form.form_problem``.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtcb_curate.neardup import similarity as neardup
from mtcb_curate.checks import question_form
from mtcb_curate.hub.card import escape_md
from mtcb_curate.app.clusters import session_items
from mtcb_curate.dataset.model import Status
from mtcb_curate.plaintext import one_line
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.verify.verdict import PairResult, verify_dataset

#: Check ids, in the order they run and are shown.
CHECK_IDS: tuple[str, ...] = ("verbatim", "unique_passage", "duplicates", "passage_length", "answerable",
                              "question_form", "links", "corpus", "reviewed", "loads")

#: Default passage length bounds in characters. MTCB's regenerated sets asked for 150-400
#: (legal) and 200-600 (scientific) characters, and 512-character chunks are a common benchmark
#: setting: a passage over 600 characters rarely survives such chunking (a passage of L
#: characters survives a random boundary of C-character chunks with probability about
#: (C - L) / C; ../shared/notes/mtcb.md). 30 characters is our floor for a quote that can single
#: out its document (hojicha's 3-50-character entity passages gave recall@1 of 6 %).
MIN_PASSAGE_CHARS = 30
MAX_PASSAGE_CHARS = 600

#: ``answerable`` warns when fewer than this share of the answer's content words (lower case,
#: stopwords removed, numbers without separators) occur in the passage. Our own lexical
#: threshold: a supporting passage normally contains the figure or name the answer gives; a
#: paraphrased answer ("It increased") has few content words and is judged on those.
MIN_ANSWER_OVERLAP = 0.5

#: An answer longer than this (characters) is not the concise answer of one or two sentences
#: MTCB asks for: ``answerable`` warns, and a generated candidate is refused. Our bound: the
#: longest answer in the shared data is 609 characters (a FinanceBench answer listing three
#: lawsuits); squad-mtcb's longest is 160.
MAX_ANSWER_CHARS = 1_000

_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but as is are was were be been being it its this "
    "that these those which who whom whose what when where why how do does did has have had not no "
    "than then so such there their they them he she his her we our you your i me my than about into "
    "over under also per".split())
_TOKEN = re.compile(r"[^\W_]+(?:[.,][0-9]+)*")


@dataclass
class CheckResult:
    """One check's outcome.

    Attributes:
        id: the check id (``CHECK_IDS``).
        status: ``pass``, ``warn``, ``fail`` or ``skip``.
        message: one line for the whole check.
        pairs: offending pair ids (ascending), failures and warnings together.
        reasons: pair id -> one line of reason.
        failing: the ids among ``pairs`` that fail (the others warn).
        seconds: how long the check took.
    """

    id: str
    status: str
    message: str
    pairs: list[int] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)
    failing: set[int] = field(default_factory=set)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"id", "status", "pairs", "message", "reasons", "failing"}`` (``failing``:
        the ids among ``pairs`` that fail; the others warn)."""
        return {"id": self.id, "status": self.status, "pairs": list(self.pairs), "message": self.message,
                "reasons": {str(k): v for k, v in sorted(self.reasons.items())}, "failing": sorted(self.failing)}


@dataclass
class ChecklistReport:
    """All checks. ``passed`` is True when no check fails (warnings do not block)."""

    checks: list[CheckResult]
    accepted: list[int]
    has_workspace: bool

    @property
    def passed(self) -> bool:
        """No check has status ``fail``."""
        return all(c.status != "fail" for c in self.checks)

    def get(self, check_id: str) -> CheckResult:
        """The result of one check.

        Raises:
            KeyError: no such check.
        """
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    def to_json(self) -> dict[str, Any]:
        """``{"passed": bool, "checks": [{"id", "status", "pairs", "message", "reasons"}]}``."""
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks]}

    def for_card(self) -> list[dict[str, Any]]:
        """The results as the dataset card takes them: ``[{"id", "status", "message", "pairs"}]``."""
        return [{"id": c.id, "status": c.status, "message": c.message, "pairs": list(c.pairs)} for c in self.checks]

    def to_markdown(self) -> str:
        """A Markdown table of the checks, then the offending pairs of each (at most 50 each)."""
        icon = {"pass": "✅ pass", "warn": "⚠️ warn", "fail": "❌ fail", "skip": "⏭ skip"}
        lines = [f"# Checklist: {'passed' if self.passed else 'FAILED'}", "",
                 "| check | status | pairs | message |", "|---|---|---|---|"]
        for c in self.checks:
            lines.append(f"| `{c.id}` | {icon[c.status]} | {len(c.pairs)} | {escape_md(c.message)} |")
        for c in self.checks:
            if c.reasons:
                lines += ["", f"## `{c.id}`", ""]
                for pid in c.pairs[:50]:
                    lines.append(f"- #{pid}: {escape_md(c.reasons.get(pid, ''))}")
                if len(c.pairs) > 50:
                    lines.append(f"- ... and {len(c.pairs) - 50} more")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Limits:
    """Passage length bounds in characters (``passage_length``): warn outside
    ``[min_chars, max_chars]``, fail above ``2 * max_chars``."""

    min_chars: int = MIN_PASSAGE_CHARS
    max_chars: int = MAX_PASSAGE_CHARS

    @classmethod
    def for_profile(cls, extra: dict[str, str], table: dict[str, Any] | None = None) -> "Limits":
        """Defaults, then the profile's ``min_passage_chars``/``max_passage_chars`` extras, then
        the config file's ``[checklist]`` table (same keys)."""
        out = {"min_chars": MIN_PASSAGE_CHARS, "max_chars": MAX_PASSAGE_CHARS}
        for src in (extra or {}, table or {}):
            for key, name in (("min_passage_chars", "min_chars"), ("max_passage_chars", "max_chars")):
                if key in src:
                    out[name] = int(src[key])
        return cls(**out)

    @classmethod
    def from_config(cls, extra: dict[str, str], config_path: Path | None = None) -> "Limits":
        """``for_profile`` with the ``[checklist]`` table of the config file ``config_path``
        (default: ``$MTCB_CURATE_CONFIG`` or the user's ``config.toml``).

        Raises:
            CurateError: the config file is not valid TOML.
        """
        from mtcb_curate.config import read_table

        return cls.for_profile(extra, read_table("checklist", config_path))


def passage_length_problem(chars: int, limits: Limits, tokens: int | None = None) -> tuple[str, str] | None:
    """The ``passage_length`` verdict on a passage of ``chars`` characters: ``("fail", reason)``
    over twice ``limits.max_chars``, ``("warn", reason)`` over ``max_chars`` or under
    ``min_chars`` (an empty passage is ``verbatim``'s fault, not this one's); None within.
    ``tokens``, when given, is named in the reason."""
    tok = f", {tokens} tokens" if tokens is not None else ""
    if chars > 2 * limits.max_chars:
        return "fail", f"{chars} characters{tok}: over twice the maximum {limits.max_chars}"
    if chars > limits.max_chars:
        return "warn", f"{chars} characters{tok}: over the maximum {limits.max_chars}"
    if 0 < chars < limits.min_chars:
        return "warn", f"{chars} characters{tok}: under the minimum {limits.min_chars}"
    return None


def answer_length_problem(answer: str) -> str | None:
    """Why ``answer`` is too long (one line), or None: more than ``MAX_ANSWER_CHARS`` characters."""
    n = len(answer)
    if n > MAX_ANSWER_CHARS:
        return f"answer of {n:,} characters: over the maximum {MAX_ANSWER_CHARS} (one or two sentences)"
    return None


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` minus stopwords; numbers lose their thousands separators
    (``1,234.5`` -> ``1234.5``)."""
    out = set()
    for w in _TOKEN.findall(text.lower()):
        w = w.replace(",", "") if any(ch.isdigit() for ch in w) else w
        if w and w not in _STOPWORDS:
            out.add(w)
    return out


def answer_overlap(answer: str, passage: str) -> float | None:
    """Share (0-1) of the answer's content words found in the passage; None when the answer
    has none (empty, or stopwords only)."""
    words = content_words(answer)
    if not words:
        return None
    have = content_words(passage)
    # A number in the answer also matches a number in the passage written with a unit glued
    # on ("$10" / "10"): compare digits-only forms too.
    digits = {re.sub(r"[^0-9.]", "", w) for w in have}
    hit = sum(1 for w in words if w in have or (any(c.isdigit() for c in w) and re.sub(r"[^0-9.]", "", w) in digits))
    return hit / len(words)


#: A judge for ``answerable``: given ``[(pair_id, question, answer, passage)]`` (the pairs the
#: lexical check warned about), returns ``{pair_id: (supported or None, reason)}``.
Judge = Callable[[list[tuple[int, str, str, str]]], dict[int, tuple[bool | None, str]]]


def run_checklist(session: ReviewSession, *, has_workspace: bool = True, limits: Limits | None = None,
                  threshold: float = neardup.DEFAULT_THRESHOLD, loads: bool = True,
                  progress: Callable[[str], None] | None = None, judge: Judge | None = None) -> ChecklistReport:
    """Run every check on ``session`` (see the module docstring).

    Args:
        session: the review session (only read).
        has_workspace: False treats every pair as accepted and skips ``reviewed``.
        limits: passage length bounds (default ``Limits.for_profile`` of the dataset's profile).
        threshold: near-duplicate question similarity threshold (``neardup``).
        loads: run the ``loads`` check (writes and loads the publish layout: about 1-2 s).
        progress: called with each check id as it starts.
        judge: the LLM judge on demand (``llm.judge``): the pairs the lexical ``answerable``
            check warns about are judged again, and its verdict replaces the lexical one.

    Returns:
        A ``ChecklistReport``; ``report.passed`` is the gate.
    """
    ds = session.dataset
    limits = limits or Limits.for_profile(ds.profile.extra)
    accepted = (session.ids(Status.ACCEPTED) if has_workspace else list(range(len(session))))
    views = {pid: session.view(pid) for pid in accepted}
    checks: list[CheckResult] = []

    def run(check_id: str, fn: Callable[[], CheckResult]) -> None:
        if progress is not None:
            progress(check_id)
        t0 = time.perf_counter()
        result = fn()
        result.seconds = time.perf_counter() - t0
        result.pairs = sorted(result.reasons) if result.reasons else result.pairs
        checks.append(result)

    index = session.corpus_index
    verified: dict[int, PairResult] = {}

    def verify_accepted() -> None:
        report = verify_dataset(ds, {pid: v.passage for pid, v in views.items()}, fuzzy=False, count_tokens=True,
                                index=index, pairs=[session.pairs[pid] for pid in accepted])
        verified.update({r.id: r for r in report.results})

    def check_verbatim() -> CheckResult:
        verify_accepted()
        reasons = {}
        for pid, r in verified.items():
            if r.verdict == "empty":
                reasons[pid] = "empty passage (a free hit for every retriever)"
            elif not r.has_document:
                reasons[pid] = f"no document has the key '{_key(r.doc_key)}'"
            elif r.verdict != "exact":
                reasons[pid] = (f"{r.verdict}: found only after normalizing; snap it to the source text"
                                if r.verdict == "normalized" else "not found verbatim in its document")
        return _result("verbatim", reasons, set(reasons), f"{len(accepted) - len(reasons)} of {len(accepted)} "
                       "accepted passages are verbatim in their document")

    def check_unique() -> CheckResult:
        reasons = {}
        for pid, r in verified.items():
            if r.elsewhere:
                keys = ", ".join(_key(k) for k, _ in r.elsewhere[:3])
                reasons[pid] = f"also in {len(r.elsewhere)} other document(s): {keys}"
        return _result("unique_passage", reasons, set(), "passages that also occur in another document count "
                       "that document's chunks as hits too")

    def check_duplicates() -> CheckResult:
        clusters = neardup.find_clusters(session_items(session, accepted), threshold=threshold,
                                         not_duplicates=session.not_duplicates())
        reasons = {}
        for c in clusters:
            for pid in c.ids:
                others = ", ".join(f"#{o}" for o in c.ids if o != pid)
                reasons[pid] = f"{c.reason} with {others}"
        return _result("duplicates", reasons, set(reasons),
                       f"{len(clusters)} unresolved near-duplicate cluster(s) among accepted pairs "
                       f"(threshold {threshold:g})" if clusters else "no identical or near-duplicate questions "
                       "among accepted pairs")

    def check_length() -> CheckResult:
        reasons, failing = {}, set()
        for pid, r in verified.items():
            problem = passage_length_problem(r.chars, limits, r.tokens)
            if problem is not None:
                severity, reasons[pid] = problem
                if severity == "fail":
                    failing.add(pid)
        return _result("passage_length", reasons, failing,
                       f"passages of {limits.min_chars}-{limits.max_chars} characters; over "
                       f"{2 * limits.max_chars} fails")

    def check_answerable() -> CheckResult:
        reasons = {}
        for pid, v in views.items():
            share = answer_overlap(v.answer, v.passage)
            if share is not None and share < MIN_ANSWER_OVERLAP:
                reasons[pid] = f"only {share:.0%} of the answer's content words are in the passage"
        too_long = {pid: why for pid, v in views.items() if (why := answer_length_problem(v.answer))}
        message = f"the passage should contain what the answer states (lexical overlap ≥ {MIN_ANSWER_OVERLAP:.0%})"
        if judge is not None and reasons:
            verdicts = judge([(pid, views[pid].question, views[pid].answer, views[pid].passage)
                              for pid in sorted(reasons)])
            cleared = 0
            for pid, (supported, why) in verdicts.items():
                if supported is True:
                    del reasons[pid]
                    cleared += 1
                elif supported is False:
                    reasons[pid] = f"LLM judge: not supported: {why}"
                else:
                    reasons[pid] += f" (LLM judge gave no verdict: {why})"
            message += f"; LLM judge: {len(verdicts)} judged, {cleared} supported after all"
        for pid, why in too_long.items():
            reasons[pid] = f"{reasons[pid]}; {why}" if pid in reasons else why
        message += f"; answers of at most {MAX_ANSWER_CHARS:,} characters"
        return _result("answerable", reasons, set(), message)

    def check_form() -> CheckResult:
        reasons, failing = {}, set()
        for pid, v in views.items():
            problem = question_form.form_problem(v.question)
            if problem is not None:
                severity, why = problem
                reasons[pid] = why
                if severity == "fail":
                    failing.add(pid)
        return _result("question_form", reasons, failing, "no empty, over-long, yes/no, trivial or non-questions")

    def check_links() -> CheckResult:
        reasons = {}
        for pid, v in views.items():
            key = v.pair.doc_key
            if key not in ds.documents:
                reasons[pid] = f"document key '{_key(key)}' matches no corpus row"
            elif key in ds.duplicate_keys:
                reasons[pid] = f"document key '{_key(key)}' matches {len(ds.duplicate_keys[key])} corpus rows"
            elif v.pair.chunk_index is not None:
                n = len(index.windows(key))
                r = verified.get(pid)
                if v.pair.chunk_index >= n:
                    reasons[pid] = f"chunk_index {v.pair.chunk_index} is out of range (the document has {n} windows)"
                elif r is not None and r.verdict == "exact" and r.in_chunk is False:
                    reasons[pid] = f"chunk {v.pair.chunk_index}'s window does not contain the passage"
        return _result("links", reasons, set(reasons), "every pair links to exactly one document and its window")

    def check_corpus() -> CheckResult:
        empty = [d.key for d in ds.documents.values() if not d.text.strip()]
        linked = {views[pid].pair.doc_key for pid in accepted}
        unlinked = [d.key for d in ds.documents.values() if d.key not in linked and d.text.strip()]
        status = "fail" if empty else "warn" if unlinked else "pass"
        parts = []
        if empty:
            parts.append(f"{len(empty)} empty document(s): {', '.join(map(_key, empty[:5]))}"
                         f"{' ...' if len(empty) > 5 else ''}")
        if unlinked:
            parts.append(f"{len(unlinked)} document(s) without an accepted pair: "
                         f"{', '.join(map(_key, unlinked[:5]))}{' ...' if len(unlinked) > 5 else ''}")
        return CheckResult("corpus", status, "; ".join(parts) or f"{len(ds.documents)} documents, none empty")

    def check_reviewed() -> CheckResult:
        if not has_workspace:
            return CheckResult("reviewed", "skip", "no workspace: every pair treated as accepted; "
                                                   "review in the app to pass this check")
        reasons = {}
        for pid in range(len(session)):
            status = session.status(pid)
            if status in (Status.UNDECIDED, Status.SKIPPED, Status.FLAGGED):
                reasons[pid] = status.value
        counts = Counter(reasons.values())
        msg = ("every pair accepted or rejected" if not reasons else
               "not decided: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        return _result("reviewed", reasons, set(reasons), msg)

    def check_loads() -> CheckResult:
        if not loads:
            return CheckResult("loads", "skip", "not run")
        return _check_loads(session, accepted)

    for check_id, fn in (("verbatim", check_verbatim), ("unique_passage", check_unique),
                         ("duplicates", check_duplicates), ("passage_length", check_length),
                         ("answerable", check_answerable), ("question_form", check_form),
                         ("links", check_links), ("corpus", check_corpus), ("reviewed", check_reviewed),
                         ("loads", check_loads)):
        run(check_id, fn)
    return ChecklistReport(checks, accepted, has_workspace)


def _key(text: object) -> str:
    """A document key (or other dataset text) for a one-line reason: printable, at most 40."""
    return one_line(str(text), 40)


def _result(check_id: str, reasons: dict[int, str], failing: set[int], message: str) -> CheckResult:
    status = "fail" if failing else "warn" if reasons else "pass"
    return CheckResult(check_id, status, message, sorted(reasons), reasons, failing)


def _check_loads(session: ReviewSession, accepted: list[int]) -> CheckResult:
    """Write the publish layout (what ``publish`` would commit) and load both configs with
    ``datasets.load_dataset``; compare rows, columns and types."""
    from mtcb_curate.hub.layout import write_hub_layout
    from mtcb_curate.hub.publish import PublishError, build_tables, quiet_datasets

    try:
        corpus, questions, _notes = build_tables(session, accepted=accepted)
    except PublishError as exc:
        return CheckResult("loads", "fail", f"the publish layout cannot be built: {exc}")
    if questions.num_rows == 0:
        return CheckResult("loads", "fail", "no accepted pair: the questions config would be empty and does not "
                                            "load with datasets")
    with tempfile.TemporaryDirectory(prefix="mtcb-curate-loads-") as tmp:
        folder = Path(tmp)
        write_hub_layout(folder, corpus, questions, body="# checklist: loads\n")
        try:
            import datasets

            problems = []
            with quiet_datasets():
                for config, table in (("corpus", corpus), ("questions", questions)):
                    loaded = datasets.load_dataset(str(folder), config, split="train",
                                                   cache_dir=str(folder / ".cache"))
                    if loaded.num_rows != table.num_rows:
                        problems.append(f"{config}: {loaded.num_rows} rows loaded, {table.num_rows} written")
                    if loaded.column_names != table.column_names:
                        problems.append(f"{config}: columns {loaded.column_names} loaded, {table.column_names} written")
                    else:
                        got = loaded.data.table.schema
                        for name in table.column_names:
                            if got.field(name).type != table.schema.field(name).type:
                                problems.append(f"{config}.{name}: type {got.field(name).type}, "
                                                f"expected {table.schema.field(name).type}")
        except Exception as exc:  # noqa: BLE001 - any failure to load is what this check reports
            return CheckResult("loads", "fail", f"datasets.load_dataset failed: {type(exc).__name__}: "
                                                f"{one_line(str(exc), 200)}")
    if problems:
        return CheckResult("loads", "fail", "; ".join(problems))
    return CheckResult("loads", "pass", f"both configs load with datasets: corpus {corpus.num_rows} rows, "
                                        f"questions {questions.num_rows} rows")
