"""Candidate QA pairs from an LLM, kept only when the supporting passage is verbatim.

For one window of a document (MTCB's 8,192-token windows, :mod:`mtcb_curate.dataset.tokens`) the model
is asked for one pair (:func:`mtcb_curate.llm.prompts.generation_messages`). A reply is kept
only when it passes :func:`check_candidate`; above all its passage must be an exact substring
of the window, as in MTCB's pipeline, which also makes it verbatim in the whole document.
Otherwise the model is told precisely what was wrong (passage not verbatim, with the closest
text in the window; empty passage; yes/no question; a repeat of an existing question; malformed
JSON; a refusal) and asked again, up to :data:`RETRIES` times (issue 5: "retry up to 3 times";
MTCB's other sets allowed 3 attempts in all).

A candidate must also stand within the checklist's own bounds, the ones ``mtcb-curate check``
would warn or fail on (``checks.Limits``: the passage length range of the profile and the
config file's ``[checklist]`` table; ``checks.MAX_ANSWER_CHARS``; ``question_form``: an
over-long, yes/no, trivial or non-question), and a reply longer than
``parsing.MAX_REPLY_CHARS`` is refused unread. Every refused reply is kept with its reasons in
the attempts log (:meth:`GenerationResult.refusals`), for the command and the screens to show.

Nothing here touches a dataset or workspace: the results are candidates for the curator, who
replaces a pair, keeps the original, or adds a candidate as a new, undecided pair.
"""

from __future__ import annotations

import heapq
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rapidfuzz import fuzz, process, utils

from mtcb_curate.checks import Limits, answer_length_problem, passage_length_problem
from mtcb_curate.llm.client import ChatClient, ChatRequest, RetryCallback
from mtcb_curate.llm.errors import LLMCancelled
from mtcb_curate.llm.parsing import MAX_REPLY_CHARS, MalformedJSON, ReplyTooLong, extract_json
from mtcb_curate.llm.prompts import DomainHint, domain_hint, feedback_message, generation_messages
from mtcb_curate.dataset.model import Document
from mtcb_curate.neardup.similarity import SCORED_CHARS
from mtcb_curate.dataset.question_form import form_problem, is_yes_no_question
from mtcb_curate.dataset.profiles import Profile
from mtcb_curate.dataset.tokens import Window, windows

#: Retries after the first attempt when a reply is unusable (issue 5).
RETRIES = 3
#: Sampling temperature of generation requests (our choice: some variety between candidates,
#: while quotes stay faithful). None sends no temperature (for models that reject one).
TEMPERATURE: float | None = 0.7
#: A new question whose rapidfuzz ``ratio`` (0-100, after ``utils.default_process``: lower case,
#: no punctuation) with an existing question of the document reaches this, and which holds the
#: same numbers, is a repeat. Our own threshold: it catches near-verbatim copies ("what was
#: Alpha's revenue in 2022" / "What was Alpha's revenue in 2022?") but not questions that differ
#: by a year or a figure (ratio above 90 for "... in 2021?" / "... in 2022?"); semantic repeats are
#: semantic dedup's job.
DUPLICATE_MIN_RATIO = 90.0
#: Most characters of a rejected reply sent back to the model with the feedback.
MAX_ECHO_CHARS = 4000
#: Most characters of the closest window text quoted in "not verbatim" feedback.
MAX_CLOSEST_CHARS = 600

_PASSAGE_KEYS = ("supporting_passage", "passage", "chunk_must_contain", "chunk-must-contain")

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class Candidate:
    """A proposed QA pair whose passage is verbatim in its window.

    Attributes:
        question, answer, passage: the texts (surrounding whitespace stripped).
        doc_key: the document key; chunk_index: the window it was generated from.
        start, end: character offsets of the passage in the whole document (end exclusive);
            ``document.text[start:end] == passage``.
        sample: which sample of this window it is (0 for the first).
        attempts: how many replies it took (1 = first time right).
        warnings: soft problems left on the last attempt (a passage length outside the
            dataset's range), for the curator to judge.
        model: the model that wrote it; cache_key: the request whose reply it is.
    """

    question: str
    answer: str
    passage: str
    doc_key: str
    chunk_index: int
    start: int
    end: int
    sample: int = 0
    attempts: int = 1
    warnings: tuple[str, ...] = ()
    model: str = ""
    cache_key: str = ""

    def fields(self) -> dict[str, Any]:
        """The pair's fields under MTCB's generator names: question, answer,
        supporting_passage, chunk_index (the document key column is the caller's)."""
        return {"question": self.question, "answer": self.answer,
                "supporting_passage": self.passage, "chunk_index": self.chunk_index}


@dataclass(frozen=True)
class Attempt:
    """One reply and its verdict.

    Attributes:
        doc_key, chunk_index, sample: which window and sample it was for.
        number: 1 for the first attempt, up to 1 + RETRIES.
        problems: the faults and warnings found, as told to the model (empty for a clean reply).
        accepted: True when this reply became a candidate.
        reply: the model's reply text (for the log; untrusted; at most ``MAX_REPLY_CHARS``).
        cached: True when answered from the cache.
        prompt_tokens, completion_tokens: usage as reported.
    """

    doc_key: str
    chunk_index: int
    sample: int
    number: int
    problems: tuple[str, ...]
    accepted: bool
    reply: str
    cached: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class GenerationResult:
    """The outcome of a generation run.

    Attributes:
        candidates: the kept candidates, in the order generated.
        attempts: every reply, accepted or not (the attempts log).
        failures: one line per window sample that gave no candidate after all retries.
        cancelled: True when the run was cancelled; what was done before is kept here.
    """

    candidates: list[Candidate] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    cancelled: bool = False

    @property
    def paid_calls(self) -> int:
        """Replies that came from the server (not from the cache)."""
        return sum(1 for a in self.attempts if not a.cached)

    def refusals(self) -> list[dict[str, Any]]:
        """Every reply not used, and why, JSON-ready: ``[{"doc_key", "chunk_index", "sample",
        "attempt", "reasons": [sentence, ...]}]`` in the order received."""
        return [{"doc_key": a.doc_key, "chunk_index": a.chunk_index, "sample": a.sample, "attempt": a.number,
                 "reasons": list(a.problems)} for a in self.attempts if not a.accepted]

    def refusal_lines(self) -> list[str]:
        """One line per reply not used: ``refused: KEY chunk I [sample S] attempt N: reasons``."""
        return [f"refused: {r['doc_key']} chunk {r['chunk_index']}"
                + (f" sample {r['sample']}" if r["sample"] else "")
                + f" attempt {r['attempt']}: " + _short("; ".join(r["reasons"]) or "no reason", 300)
                for r in self.refusals()]

    def refusal_note(self, latest: int = 3) -> str | None:
        """One line for a screen: how many replies were refused, and the reasons of the latest
        ``latest`` (each cut short); None when none was."""
        refused = self.refusals()
        if not refused:
            return None
        reasons = list(dict.fromkeys(_short(p, 100) for r in refused for p in r["reasons"]))[-latest:]
        n = len(refused)
        return f"{n} repl{'y' if n == 1 else 'ies'} refused: " + "; ".join(reasons)


def check_candidate(
    data: Any,
    window_text: str,
    existing_questions: Sequence[str] = (),
    hint: DomainHint | None = None,
    limits: Limits | None = None,
) -> tuple[dict[str, str] | None, list[str], list[str]]:
    """Judge a parsed reply against MTCB's rules and the checklist's bounds.

    Args:
        data: the JSON value read from the reply.
        window_text: the window the passage must come from.
        existing_questions: the document's questions (a repeat is a problem).
        hint: the dataset's domain hint (its passage length range), or None.
        limits: the checklist's passage length bounds (default ``Limits()``, 30-600); a
            passage outside them is a problem, as is an answer over ``MAX_ANSWER_CHARS`` and
            any ``question_form`` problem (over-long, yes/no, trivial, not a question).

    Returns:
        ``(fields, problems, warnings)``: ``fields`` is ``{"question", "answer", "passage"}``
        (stripped) or None when the reply lacks them; ``problems`` are hard faults (the reply
        cannot be kept); ``warnings`` are soft ones (passage length outside the domain hint's
        range, within the checklist's). Each is a sentence addressed to the model.
    """
    limits = limits or Limits()
    if not isinstance(data, dict):
        return None, ["The reply is not one JSON object with question, answer and supporting_passage."], []
    question = data.get("question")
    answer = data.get("answer")
    passage = next((data[k] for k in _PASSAGE_KEYS if k in data), None)
    problems: list[str] = []
    for name, value in (("question", question), ("answer", answer), ("supporting_passage", passage)):
        if value is None:
            problems.append(f'The JSON object has no "{name}".')
        elif not isinstance(value, str):
            problems.append(f'"{name}" must be a string.')
    if problems:
        return None, problems, []
    question, answer, passage = question.strip(), answer.strip(), passage.strip()
    fields = {"question": question, "answer": answer, "passage": passage}
    warnings: list[str] = []
    if not question:
        problems.append("The question is empty.")
    if not answer:
        problems.append("The answer is empty.")
    if not passage:
        problems.append("supporting_passage is empty; an empty passage would match every chunk.")
    elif len(passage) <= limits.max_chars and passage not in window_text:
        problems.append(_not_verbatim(passage, window_text))
    if passage and passage_length_problem(len(passage), limits) is not None:
        problems.append(f"supporting_passage has {len(passage):,} characters; quote between {limits.min_chars} "
                        f"and {limits.max_chars} characters: the shortest block that fully supports the answer.")
    form = form_problem(question) if question else None
    if form is not None and is_yes_no_question(question):
        problems.append(f'"{_short(question)}" is a yes/no question; ask What, When, Where, Which or How.')
    elif form is not None:
        problems.append(f'The question "{_short(question)}" is refused: {form[1]}. Ask one specific question '
                        "about a fact in the window.")
    long_answer = answer_length_problem(answer)
    if long_answer is not None:
        problems.append(f"The answer is refused: {long_answer}. Answer in one or two sentences.")
    repeat = find_repeat(question, existing_questions) if question else None
    if repeat is not None:
        problems.append(f'The question repeats an existing question: "{_short(repeat)}". Ask about another fact.')
    if passage and hint is not None:
        lo, hi = hint.min_passage_chars, hint.max_passage_chars
        if (lo is not None and len(passage) < lo) or (hi is not None and len(passage) > hi):
            warnings.append(f"supporting_passage has {len(passage)} characters; for this dataset quote "
                            f"between {lo or 1} and {hi or 'any number of'} characters.")
    return fields, problems, warnings


def find_repeat(question: str, existing_questions: Sequence[str]) -> str | None:
    """The existing question that ``question`` repeats, or None: rapidfuzz ``ratio`` of at least
    :data:`DUPLICATE_MIN_RATIO` after ``utils.default_process``, with the same numbers (digit
    runs) in both. Questions are compared on their first ``neardup.SCORED_CHARS`` characters
    (pairwise cost grows with both lengths)."""
    question = question[:SCORED_CHARS]
    numbers = re.findall(r"\d+", question)
    existing = list(existing_questions)
    capped = [q[:SCORED_CHARS] for q in existing]
    for _match, _score, i in process.extract_iter(question, capped, scorer=fuzz.ratio,
                                                  processor=utils.default_process,
                                                  score_cutoff=DUPLICATE_MIN_RATIO):
        if re.findall(r"\d+", capped[i]) == numbers:
            return existing[i]
    return None


def _not_verbatim(passage: str, window_text: str) -> str:
    """The feedback for a passage that is not an exact substring of the window."""
    from mtcb_curate.verify.fuzzy import locate_fuzzy
    from mtcb_curate.verify.normalize import SkeletonIndex

    msg = "supporting_passage does not occur verbatim in the document window: it must be an exact substring."
    if "..." in passage or "\u2026" in passage:
        msg += " Do not use ellipses; quote one contiguous block."
    match = locate_fuzzy(SkeletonIndex(window_text), passage)
    if match.matched:
        msg += (f' The closest text in the window is: "{window_text[match.start:match.end][:MAX_CLOSEST_CHARS]}". '
                "Copy the passage exactly as it appears there.")
    else:
        msg += " Nothing like it is in the window; quote text that is there."
    return msg


def _short(text: str, limit: int = 160) -> str:
    """One line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def generate_for_window(
    client: ChatClient,
    *,
    doc_key: str,
    doc_text: str,
    window: Window,
    existing_questions: Sequence[str] = (),
    hint: DomainHint | None = None,
    limits: Limits | None = None,
    sample: int = 0,
    retries: int = RETRIES,
    temperature: float | None = TEMPERATURE,
    cancel: threading.Event | None = None,
    on_retry: RetryCallback | None = None,
) -> tuple[Candidate | None, list[Attempt]]:
    """Ask for one QA pair from ``window`` of a document, retrying unusable replies.

    Args:
        client: the chat client (its cache answers repeats for free).
        doc_key, doc_text: the document key and the whole document text.
        window: the window (``tokens.windows(doc_text)[i]``).
        existing_questions: questions the new one must not repeat (listed in the prompt).
        hint: the dataset's domain hint, or None.
        limits: the checklist's passage length bounds (see :func:`check_candidate`).
        sample: 0 for the first candidate of this prompt; another number asks again (it is
            part of the cache key, not of the prompt).
        retries: retries after the first attempt (default :data:`RETRIES`).
        temperature: sent as ``temperature`` unless None.
        cancel, on_retry: see :meth:`ChatClient.complete`.

    Returns:
        ``(candidate or None, attempts)``; a candidate whose only faults are warnings on the
        last attempt is kept with them.

    Raises:
        LLMCancelled, LLMUnavailable, LLMError: from the client.
    """
    window_text = doc_text[window.start:window.end]
    messages = generation_messages(window_text, doc_key=doc_key, chunk_index=window.index,
                                   existing_questions=existing_questions, hint=hint)
    params = {} if temperature is None else {"temperature": temperature}
    tag = f"sample={sample}" if sample else ""
    attempts: list[Attempt] = []
    # The first reply whose only faults were warnings: kept if no later reply is clean.
    fallback: tuple[int, dict[str, str], list[str], Any] | None = None
    for number in range(1, retries + 2):
        result = client.complete(ChatRequest.of(messages, params, tag), cancel=cancel, on_retry=on_retry)
        fields: dict[str, str] | None = None
        warnings: list[str] = []
        if result.problem:
            problems = [result.problem[0].upper() + result.problem[1:] + "."]
        else:
            try:
                data = extract_json(result.text)
            except ReplyTooLong as exc:
                problems = [f"The reply is refused unread: {exc}. Reply with one short JSON object."]
            except MalformedJSON as exc:
                problems = [f"The reply is not valid JSON: {exc}."]
            else:
                fields, problems, warnings = check_candidate(data, window_text, existing_questions, hint, limits)
        last = number == retries + 1
        accept = fields is not None and not problems and (not warnings or last)
        attempts.append(Attempt(doc_key, window.index, sample, number, tuple(problems + warnings), accept,
                                result.text[:MAX_REPLY_CHARS], result.cached, result.prompt_tokens,
                                result.completion_tokens))
        if accept:
            assert fields is not None
            return _candidate(fields, warnings, doc_key, window, window_text, sample, number, result), attempts
        if fields is not None and not problems and fallback is None:
            fallback = (len(attempts) - 1, fields, warnings, result)
        if last:
            break
        messages = [*messages,
                    {"role": "assistant", "content": result.text[:MAX_ECHO_CHARS] or "(no reply)"},
                    feedback_message(problems + warnings)]
    if fallback is not None:
        i, fields, warnings, result = fallback
        attempts[i] = replace(attempts[i], accepted=True)
        return _candidate(fields, warnings, doc_key, window, window_text, sample, i + 1, result), attempts
    return None, attempts


def _candidate(fields: dict[str, str], warnings: list[str], doc_key: str, window: Window, window_text: str,
               sample: int, number: int, result: Any) -> Candidate:
    """A :class:`Candidate` from checked fields (the passage is in ``window_text``)."""
    start = window.start + window_text.index(fields["passage"])
    return Candidate(fields["question"], fields["answer"], fields["passage"], doc_key, window.index, start,
                     start + len(fields["passage"]), sample, number, tuple(warnings), result.model, result.key)


def pick_windows(doc_text: str, existing_chunk_indices: Sequence[int | None], n: int, *,
                 doc_windows: Sequence[Window] | None = None) -> list[int]:
    """The chunk_index of each of ``n`` new pairs: always the window with the fewest pairs so
    far (counting earlier picks), the lowest index on a tie.

    Args:
        doc_text: the document text (cut into MTCB windows unless ``doc_windows`` is given).
        existing_chunk_indices: the chunk_index of each existing pair of the document; None or
            out-of-range values are ignored.
        n: how many pairs to place (0 or less gives []).

    Returns:
        ``n`` window numbers, in the order to generate (a window recurs once every window has
        as many pairs).
    """
    ws = list(doc_windows) if doc_windows is not None else windows(doc_text)
    counts = [0] * len(ws)
    for c in existing_chunk_indices:
        if c is not None and 0 <= c < len(ws):
            counts[c] += 1
    heap = [(count, i) for i, count in enumerate(counts)]
    heapq.heapify(heap)
    picks = []
    for _ in range(max(n, 0)):
        count, i = heapq.heappop(heap)
        picks.append(i)
        heapq.heappush(heap, (count + 1, i))
    return picks


def pair_window(pair: Any, doc_text: str, doc_windows: Sequence[Window] | None = None) -> Window:
    """The window a pair belongs to: its ``chunk_index`` when valid, else the first window
    holding its whole passage, else the window where the passage starts, else window 0.

    ``pair`` is a :class:`~mtcb_curate.dataset.model.QAPair` or a ``session.PairView`` (its current
    passage is used).
    """
    ws = list(doc_windows) if doc_windows is not None else windows(doc_text)
    chunk_index = getattr(getattr(pair, "pair", pair), "chunk_index", None)
    if isinstance(chunk_index, int) and 0 <= chunk_index < len(ws):
        return ws[chunk_index]
    passage = getattr(pair, "passage", "") or ""
    pos = doc_text.find(passage) if passage.strip() else -1
    if pos >= 0:
        end = pos + len(passage)
        for w in ws:
            if w.start <= pos and end <= w.end:
                return w
        for w in ws:
            if w.start <= pos < w.end:
                return w
    return ws[0]


def _hint(profile: str | Profile | DomainHint | None) -> DomainHint | None:
    """A domain hint from a profile, a profile name or a hint."""
    return profile if isinstance(profile, DomainHint) else domain_hint(profile)


def _limits(profile: str | Profile | DomainHint | None, limits: Limits | None) -> Limits:
    """``limits`` when given, else the profile's (``Limits.resolve`` without the config file),
    else the defaults."""
    if limits is not None:
        return limits
    return Limits.resolve(profile if isinstance(profile, Profile) else None, {})


def plan_generate_more(document: Document, existing: Sequence[Any], n: int, *,
                       profile: str | Profile | DomainHint | None = None,
                       temperature: float | None = TEMPERATURE) -> list[ChatRequest]:
    """The first-attempt request of each of the ``n`` windows :func:`generate_more` would use,
    for the estimate before a run (later requests also list the pairs generated before them,
    so these are a close lower bound on the prompt tokens)."""
    ws = windows(document.text)
    picks = pick_windows(document.text, [pair_window(p, document.text, ws).index for p in existing], n,
                         doc_windows=ws)
    hint = _hint(profile)
    questions = [p.question for p in existing]
    params = {} if temperature is None else {"temperature": temperature}
    return [ChatRequest.of(generation_messages(document.text[ws[i].start:ws[i].end], doc_key=document.key,
                                               chunk_index=i, existing_questions=questions, hint=hint), params)
            for i in picks]


def generate_more(
    client: ChatClient,
    document: Document,
    existing: Sequence[Any],
    n: int,
    *,
    profile: str | Profile | DomainHint | None = None,
    limits: Limits | None = None,
    retries: int = RETRIES,
    temperature: float | None = TEMPERATURE,
    cancel: threading.Event | None = None,
    on_retry: RetryCallback | None = None,
    on_progress: ProgressCallback | None = None,
) -> GenerationResult:
    """Generate up to ``n`` new pairs for ``document``, in the windows with the fewest pairs.

    Args:
        client: the chat client.
        document: the document.
        existing: the document's pairs (``QAPair`` or ``PairView``; their questions are not to
            be repeated, their windows count towards :func:`pick_windows`).
        n: how many pairs to ask for (one window sample each).
        profile: the dataset profile or its name (domain hint), or a ``DomainHint``.
        limits: the checklist's passage length bounds a candidate must meet (default: the
            profile's, without the config file; pass ``Limits.resolve(profile, config_path)``
            to honour the config file's ``[checklist]`` table).
        retries, temperature, cancel, on_retry: see :func:`generate_for_window`.
        on_progress: called with ``(windows done, n)`` after each window.

    Returns:
        The candidates (each new question is also listed to the following requests), the
        attempts log, failures. On cancel the result holds what was done, ``cancelled=True``.

    Raises:
        LLMUnavailable, LLMError: from the client (replies so far stay in the cache, so a
            re-run gets them for free).
    """
    ws = windows(document.text)
    picks = pick_windows(document.text, [pair_window(p, document.text, ws).index for p in existing], n,
                         doc_windows=ws)
    return _generate(client, document, [(ws[i], 0) for i in picks], [p.question for p in existing],
                     _hint(profile), _limits(profile, limits), retries=retries, temperature=temperature, cancel=cancel,
                     on_retry=on_retry, on_progress=on_progress)


def regenerate(
    client: ChatClient,
    pair: Any,
    document: Document,
    *,
    other_questions: Sequence[str] = (),
    n_candidates: int = 1,
    first_sample: int = 0,
    profile: str | Profile | DomainHint | None = None,
    limits: Limits | None = None,
    retries: int = RETRIES,
    temperature: float | None = TEMPERATURE,
    cancel: threading.Event | None = None,
    on_retry: RetryCallback | None = None,
    on_progress: ProgressCallback | None = None,
) -> GenerationResult:
    """Candidates to replace ``pair``, from the pair's window (see :func:`pair_window`).

    Args:
        pair: the pair (``QAPair`` or ``PairView``).
        document: its document.
        other_questions: the document's other questions, not to be repeated (the pair's own
            question is not among them: a fixed version of it is a fine candidate).
        n_candidates: how many candidates to ask for; each later one is also told not to
            repeat the earlier ones.
        first_sample: the sample number of the first candidate; pass the number already
            shown to get fresh candidates instead of the cached ones.
        profile, limits, retries, temperature, cancel, on_retry: see :func:`generate_more`.
        on_progress: called with ``(candidates done, n_candidates)``.

    Returns:
        A :class:`GenerationResult` (``cancelled=True`` with what was done on cancel).

    Raises:
        LLMUnavailable, LLMError: from the client.
    """
    window = pair_window(pair, document.text)
    return _generate(client, document, [(window, first_sample + k) for k in range(n_candidates)],
                     list(other_questions), _hint(profile), _limits(profile, limits), retries=retries,
                     temperature=temperature, cancel=cancel, on_retry=on_retry, on_progress=on_progress)


def _generate(client: ChatClient, document: Document, jobs: list[tuple[Window, int]], questions: list[str],
              hint: DomainHint | None, limits: Limits, *, retries: int, temperature: float | None,
              cancel: threading.Event | None, on_retry: RetryCallback | None,
              on_progress: ProgressCallback | None) -> GenerationResult:
    """One candidate per ``(window, sample)`` job, in order; each new question is added to
    ``questions`` so later requests do not repeat it. Stops at a cancel with what was done."""
    out = GenerationResult()
    for done, (window, sample) in enumerate(jobs, start=1):
        try:
            cand, attempts = generate_for_window(
                client, doc_key=document.key, doc_text=document.text, window=window, existing_questions=questions,
                hint=hint, limits=limits, sample=sample, retries=retries, temperature=temperature, cancel=cancel,
                on_retry=on_retry)
        except LLMCancelled:
            out.cancelled = True
            break
        out.attempts.extend(attempts)
        if cand is None:
            which = f"chunk {window.index}" + (f" sample {sample}" if sample else "")
            problem = "; ".join(attempts[-1].problems)
            out.failures.append(f"{document.key} {which}: no usable pair after {len(attempts)} attempts"
                                + (f" ({_short(problem, 240)})" if problem else ""))
        else:
            out.candidates.append(cand)
            questions.append(cand.question)
        if on_progress is not None:
            on_progress(done, len(jobs))
    return out
