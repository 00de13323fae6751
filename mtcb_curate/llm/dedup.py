"""Semantic dedup of questions by an LLM, as near-duplicate clusters for the curator.

MTCB's procedure (shared/notes/mtcb.md, "Semantic dedup"): the LLM sees numbered questions in
batches of 50 (:data:`BATCH_SIZE`) and returns the indices to keep, ``{"indices": [...]}`` or
``{"groups": [[...]], "unique_indices": [...]}``; then a final pass runs over the survivors of
all batches, so duplicates in different batches meet. Our prompt
(:func:`mtcb_curate.llm.prompts.dedup_messages`) asks for ``{"indices": [...], "groups":
[[kept, duplicate, ...]]}`` and every form is accepted (:func:`parse_keep_answer`).

Two known faults of the public implementation are avoided:

- an empty keep-list dropped the whole batch. Here an empty, invalid (numbers out of range, not
  integers, not a list) or unreadable answer, a refusal or an empty reply NEVER drops anything:
  the batch is kept whole and a :class:`DedupReport` says so;
- only the question text was shown: the answer and the document key are shown too.

The model's answer is read as given: when it has groups of duplicates (our prompt asks for
``groups``, even empty), a question is a duplicate only when a group puts it beside a kept one,
and a question left out of both the keep-list and the groups (a model that lists 0-30 of 0-31)
is *not judged*: it is kept, listed in :attr:`DedupResult.not_judged` and reported, never made a
false duplicate. Only an answer in MTCB's bare form (a keep-list with no ``groups`` at all), where
leaving a question out is the only way to drop it, drops what it leaves out.

Nothing is deleted: each dropped question becomes a member of a :class:`DedupCluster` around the
kept question it duplicates: the one the LLM grouped it with when its groups say, else the kept
question of the same batch that rapidfuzz ``token_sort_ratio`` finds closest. A question kept
in its batch but dropped in the final pass brings its own cluster along. The curator resolves
each cluster on the near-duplicate screen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process, utils

from mtcb_curate.llm.client import ChatClient, ChatRequest, RetryCallback
from mtcb_curate.llm.errors import LLMCancelled
from mtcb_curate.llm.parsing import MalformedJSON, extract_json
from mtcb_curate.llm.prompts import dedup_messages
from mtcb_curate.neardup.similarity import SCORED_CHARS

#: Questions per LLM call in the first stage (MTCB's batch size).
BATCH_SIZE = 50
#: Sampling temperature of dedup requests: 0, the same answer for the same batch.
TEMPERATURE: float | None = 0.0

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class DedupItem:
    """A question to deduplicate.

    Attributes:
        id: the pair id (any unique int). question: the question text.
        answer, doc_key: shown to the LLM when given ('' to leave out).
    """

    id: int
    question: str
    answer: str = ""
    doc_key: str = ""


@dataclass(frozen=True, slots=True)
class DedupCluster:
    """A kept question and the questions judged its duplicates (a near-duplicate cluster).

    Attributes:
        keep: the id the LLM kept; duplicates: the ids it dropped, in input order.
        basis: how each duplicate was attached to ``keep``: ``llm`` (the LLM's groups),
            ``rapidfuzz`` (nearest kept question in the batch), or ``llm+rapidfuzz``.
        stages: the stages that dropped them (``batch 2/5``, ``final pass``).
    """

    keep: int
    duplicates: tuple[int, ...]
    basis: str
    stages: tuple[str, ...]

    @property
    def members(self) -> tuple[int, ...]:
        """``keep`` followed by the duplicates."""
        return (self.keep, *self.duplicates)


@dataclass(frozen=True, slots=True)
class DedupReport:
    """Something the curator should know about one stage (an answer that could not be used).

    Attributes:
        stage: ``batch 2/5`` or ``final pass``; message: one line.
    """

    stage: str
    message: str

    def __str__(self) -> str:
        """``stage: message``."""
        return f"{self.stage}: {self.message}"


@dataclass
class DedupResult:
    """The outcome of a dedup run (proposals only; nothing is removed).

    Attributes:
        clusters: near-duplicate clusters, ordered by their kept id's input position.
        kept, dropped: ids the LLM would keep / drop, in input order.
        reports: answers that could not be used, and a cancel.
        calls: LLM requests made; cached_calls: how many of them came from the cache.
        cancelled: True when cancelled; batches not judged are kept whole, no final pass.
        not_judged: ids the model's answer left out (neither kept nor grouped): kept.
    """

    clusters: list[DedupCluster] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    reports: list[DedupReport] = field(default_factory=list)
    calls: int = 0
    cached_calls: int = 0
    cancelled: bool = False
    not_judged: list[int] = field(default_factory=list)


class InvalidKeepAnswer(ValueError):
    """An LLM dedup answer that cannot be used; the message says why, on one line."""


@dataclass(frozen=True, slots=True)
class KeepAnswer:
    """A valid dedup answer for n numbered questions.

    Attributes:
        keep: the numbers to keep (0 <= i < n, sorted, no repeats, never empty).
        groups: duplicate groups as given (each of valid numbers), possibly empty.
        grouped: True when the answer had ``groups`` (or ``unique_indices``): what it leaves out
            is then not judged.
        note: why groups were ignored, or None.
    """

    keep: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    note: str | None = None
    grouped: bool = False


def _valid_numbers(value: Any, n: int, what: str) -> list[int]:
    """``value`` as a list of question numbers in [0, n); raise InvalidKeepAnswer otherwise."""
    if not isinstance(value, list):
        raise InvalidKeepAnswer(f"{what} is not a list")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidKeepAnswer(f"{what} holds {v!r}, not a question number")
        if not 0 <= v < n:
            raise InvalidKeepAnswer(f"{what} holds {v}, outside 0-{n - 1}")
    return value


def parse_keep_answer(data: Any, n: int) -> KeepAnswer:
    """Read a dedup answer about ``n`` questions numbered 0 to n-1.

    Accepted forms: ``{"indices": [...]}`` (also ``"keep"``), optionally with ``"groups"``;
    ``{"groups": [[...]], "unique_indices": [...]}`` (keep = unique indices plus the first of
    each group); a bare list of numbers.

    Raises:
        InvalidKeepAnswer: no keep-list, a keep-list that is empty or holds anything but
            numbers 0 to n-1. Malformed ``groups`` next to a valid ``indices`` are ignored
            (``note`` says so) rather than rejected.
    """
    groups: list[list[int]] = []
    note = None
    grouped = isinstance(data, dict) and ("groups" in data or "unique_indices" in data)
    if isinstance(data, list):
        keep = _valid_numbers(data, n, "the list")
    elif isinstance(data, dict):
        raw_groups = data.get("groups")
        indices = data.get("indices", data.get("keep"))
        if indices is not None:
            keep = _valid_numbers(indices, n, '"indices"')
            if raw_groups not in (None, []):
                try:
                    groups = _groups(raw_groups, n)
                except InvalidKeepAnswer as exc:
                    note = f"groups ignored: {exc}"
                    grouped = False  # read as MTCB's bare keep-list
        elif raw_groups is not None or "unique_indices" in data:
            groups = _groups(raw_groups or [], n)
            unique = _valid_numbers(data.get("unique_indices", []), n, '"unique_indices"')
            keep = unique + [g[0] for g in groups if g]
        else:
            raise InvalidKeepAnswer('no "indices" in the answer')
    else:
        raise InvalidKeepAnswer("the answer is not a JSON object or list")
    if not keep:
        raise InvalidKeepAnswer("the keep-list is empty")
    return KeepAnswer(tuple(sorted(set(keep))), tuple(tuple(g) for g in groups if g), note, grouped)


def _groups(value: Any, n: int) -> list[list[int]]:
    """``value`` as a list of groups of valid question numbers."""
    if not isinstance(value, list):
        raise InvalidKeepAnswer('"groups" is not a list of lists')
    return [_valid_numbers(g, n, "a group") for g in value]


def _request(items: Sequence[DedupItem], temperature: float | None) -> ChatRequest:
    """The dedup request for ``items`` (answers shown when any; document keys when they differ)."""
    answers = [it.answer for it in items] if any(it.answer for it in items) else None
    keys = [it.doc_key for it in items] if len({it.doc_key for it in items}) > 1 else None
    params = {} if temperature is None else {"temperature": temperature}
    return ChatRequest.of(dedup_messages([it.question for it in items], answers, keys), params)


def plan_dedup(items: Sequence[DedupItem], batch_size: int = BATCH_SIZE,
               temperature: float | None = TEMPERATURE) -> list[ChatRequest]:
    """The requests :func:`semantic_dedup` would send, for the estimate before a run: one per
    batch of more than one question, and, when there is more than one batch, a final pass over
    all items (an upper bound: the real one sees only the survivors)."""
    batches = [items[i:i + batch_size] for i in range(0, len(items), batch_size)]
    reqs = [_request(b, temperature) for b in batches if len(b) > 1]
    if len(batches) > 1:
        reqs.append(_request(items, temperature))
    return reqs


def semantic_dedup(
    client: ChatClient,
    items: Sequence[DedupItem],
    *,
    batch_size: int = BATCH_SIZE,
    temperature: float | None = TEMPERATURE,
    cancel: threading.Event | None = None,
    on_retry: RetryCallback | None = None,
    on_progress: ProgressCallback | None = None,
    concurrency: int = 1,
) -> DedupResult:
    """Find duplicate questions among ``items``: batches of ``batch_size``, then a final pass.

    Args:
        client: the chat client (a re-run with the same items is answered from its cache).
        items: the questions, with unique ids; the scope (one document, the whole dataset) is
            the caller's choice.
        batch_size: questions per first-stage call (MTCB: 50).
        temperature: sent unless None (default 0).
        cancel, on_retry: see :meth:`ChatClient.complete`.
        on_progress: called with ``(calls done, calls planned)``; the final pass counts as one.
        concurrency: first-stage batches sent at once (``[llm] concurrency``,
            :mod:`mtcb_curate.llm.pool`); they are read in batch order whatever order the
            replies come in, so the result is the same as with 1.

    Returns:
        A :class:`DedupResult`. On cancel: ``cancelled=True``, the clusters found so far, and the
        questions of batches not judged kept.

    Raises:
        ValueError: repeated ids or ``batch_size`` < 2.
        LLMUnavailable, LLMError: from the client.
    """
    if batch_size < 2:
        raise ValueError("batch_size must be at least 2")
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise ValueError("dedup items must have unique ids")
    batches = [list(items[i:i + batch_size]) for i in range(0, len(items), batch_size)]
    planned = sum(1 for b in batches if len(b) > 1) + (1 if len(batches) > 1 else 0)
    out = DedupResult()
    # dropped id -> (kept id it duplicates, basis, stage)
    links: dict[int, tuple[int, str, str]] = {}
    survivors: list[DedupItem] = []
    done = 0
    fetched: dict[int, Any] = {}  # batch number -> ChatResult sent ahead, concurrently
    if concurrency > 1:
        from mtcb_curate.llm.pool import run_ordered

        multi = [b for b, batch in enumerate(batches, start=1) if len(batch) > 1]
        ahead = run_ordered(lambda b: client.complete(_request(batches[b - 1], temperature), cancel=cancel,
                                                      on_retry=on_retry),
                            multi, concurrency=concurrency, cancel=cancel,
                            on_progress=None if on_progress is None else lambda k, _: on_progress(k, planned))
        if ahead.error is not None:
            raise ahead.error
        fetched = dict(zip(multi, ahead.results))

    def judge(batch: list[DedupItem], stage: str, b: int = 0) -> list[DedupItem]:
        """Judge one batch, count the call, report progress; return the kept items."""
        nonlocal done
        kept = _judge(client, batch, stage, temperature, out, links, cancel, on_retry, fetched.get(b))
        done += 1
        if on_progress is not None and b not in fetched:
            on_progress(done, planned)
        return kept

    try:
        for b, batch in enumerate(batches, start=1):
            if len(batch) < 2:
                survivors.extend(batch)
                continue
            survivors.extend(judge(batch, f"batch {b}/{len(batches)}", b))
        if len(batches) > 1 and len(survivors) > 1:
            survivors = judge(survivors, "final pass")
    except LLMCancelled:
        out.cancelled = True
        out.reports.append(DedupReport("run", f"cancelled after {done} of {planned} calls; questions not yet "
                                              "judged are kept, and the final pass was not run"))
    out.dropped = [i for i in ids if i in links]
    out.kept = [i for i in ids if i not in links]
    out.clusters = _clusters(ids, links)
    return out


def _judge(client: ChatClient, batch: list[DedupItem], stage: str, temperature: float | None, out: DedupResult,
           links: dict[int, tuple[int, str, str]], cancel: threading.Event | None,
           on_retry: RetryCallback | None, result: Any = None) -> list[DedupItem]:
    """Ask about one batch (unless its ``result`` was fetched ahead); record links of dropped
    ids; return the kept items (all of them when the answer cannot be used, with a report)."""
    if result is None:
        result = client.complete(_request(batch, temperature), cancel=cancel, on_retry=on_retry)
    out.calls += 1
    out.cached_calls += int(result.cached)
    n = len(batch)
    try:
        if result.problem:
            raise InvalidKeepAnswer(result.problem)
        answer = parse_keep_answer(extract_json(result.text), n)
    except (MalformedJSON, InvalidKeepAnswer) as exc:
        out.reports.append(DedupReport(stage, f"answer not usable ({exc}); kept all {n} questions"))
        return batch
    client.keep(result)
    if answer.note:
        out.reports.append(DedupReport(stage, answer.note))
    keep = set(answer.keep)
    grouped = {m for g in answer.groups for m in g}
    left_out = [d for d in range(n) if d not in keep and d not in grouped] if answer.grouped else []
    if left_out:
        out.not_judged.extend(batch[d].id for d in left_out)
        out.reports.append(DedupReport(stage, f"{len(left_out)} question(s) left out of the model's answer: not "
                                              "judged, kept (" + ", ".join(f"#{batch[d].id}" for d in left_out[:10])
                                              + (" ..." if len(left_out) > 10 else "") + ")"))
        keep |= set(left_out)
    # Scored on their first SCORED_CHARS characters: pairwise cost grows with both lengths.
    kept_questions = {k: batch[k].question[:SCORED_CHARS] for k in answer.keep}
    for d in range(n):
        if d in keep:
            continue
        target = next((next((m for m in g if m in keep), None) for g in answer.groups if d in g), None)
        basis = "llm"
        if target is None:
            best = process.extractOne(batch[d].question[:SCORED_CHARS], kept_questions, scorer=fuzz.token_sort_ratio,
                                      processor=utils.default_process)
            target = best[2] if best is not None else answer.keep[0]
            basis = "rapidfuzz"
        links[batch[d].id] = (batch[target].id, basis, stage)
    return [batch[k] for k in sorted(keep)]


def _clusters(ids: list[int], links: dict[int, tuple[int, str, str]]) -> list[DedupCluster]:
    """Group each dropped id under the id that was finally kept (following final-pass links)."""
    def root(i: int) -> int:
        """The id that ``i`` finally belongs to."""
        while i in links:
            i = links[i][0]
        return i

    members: dict[int, list[int]] = {}
    for i in ids:
        if i in links:
            members.setdefault(root(i), []).append(i)
    order = {i: pos for pos, i in enumerate(ids)}
    clusters = []
    for keep in sorted(members, key=order.__getitem__):
        dups = members[keep]
        bases = {links[d][1] for d in dups}
        basis = "llm+rapidfuzz" if len(bases) > 1 else bases.pop()
        stages = tuple(dict.fromkeys(links[d][2] for d in dups))
        clusters.append(DedupCluster(keep, tuple(dups), basis, stages))
    return clusters
