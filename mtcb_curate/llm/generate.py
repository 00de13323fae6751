"""Candidate QA pairs from an LLM, whose supporting passage is verbatim in the window.

For one window of a document (MTCB's 8,192-token windows, :mod:`mtcb_curate.dataset.tokens`) the model
is asked for one pair (:func:`mtcb_curate.llm.prompts.generation_messages`). A reply is kept
only when it passes :func:`check_candidate`; above all its passage must be an exact substring
of the window, as in MTCB's pipeline, which also makes it verbatim in the whole document.

Repair, don't discard: a quote that is not verbatim but that the verification finds
in the window anyway (its normalized search, ``verify.search.find_normalized``: a space where
the filing has a line break, curly quotes ...; or a fuzzy alignment scoring at least
``verify.fuzzy.FUZZY_MIN_SCORE``) is snapped to the exact window text and kept; the model's
own quote and the verdict (``normalized`` / ``fuzzy``, with the score) are recorded on the
:class:`Candidate` for the curator to see. A quote with an ellipsis is never snapped (it skips
text). Only a quote that cannot be located is sent back: the model is told precisely what was
wrong (passage not found, with the closest text in the window; empty passage; yes/no question;
a repeat of an existing question; malformed JSON; a refusal) and asked again, up to
:data:`RETRIES` times (MTCB's other sets allowed 3 attempts in all).

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
from bisect import bisect_right
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from rapidfuzz import fuzz, process, utils

from mtcb_curate.checks import Limits, answer_length_problem, passage_length_problem
from mtcb_curate.llm.client import ChatClient, ChatRequest, RetryCallback
from mtcb_curate.llm.parsing import MAX_REPLY_CHARS, MalformedJSON, ReplyTooLong, extract_json
from mtcb_curate.llm.numbered import SentenceMap, sentence_map
from mtcb_curate.llm.proposals import Proposal, candidate_ranges, is_boilerplate
from mtcb_curate.llm.prompts import (DENSE_REQUEST, DENSE_REQUEST_QUOTE, GENERATION_SCHEMA, NUMBERED_SCHEMA,
                                     WINDOW_CLOSE, WINDOW_OPEN, DomainHint, Steering, domain_hint,
                                     feedback_message, generation_messages, instruction_texts, numbered_messages)
from mtcb_curate.llm.support import Support, answer_support
from mtcb_curate.dataset.model import Document
from mtcb_curate.neardup.similarity import SCORED_CHARS
from mtcb_curate.dataset.question_form import form_problem, is_yes_no_question
from mtcb_curate.dataset.profiles import Profile
from mtcb_curate.dataset.tokens import Window, windows
from mtcb_curate.dataset.tokens import encoding as tokens_encoding
from mtcb_curate.verify.verdict import Verdict

#: Retries after the first attempt when a reply is unusable.
RETRIES = 3
#: The generation modes (``--mode``, ``[generate] mode``): ``quote`` (the model copies the
#: passage, MTCB's way), ``numbered`` (the model names numbered sentences; the passage is cut
#: from the window: verbatim by construction), ``auto`` (:func:`resolve_mode`).
MODES = ("auto", "quote", "numbered")
#: Evidence-dense questions (``--dense``): at least this many consecutive sentences (HiCBench's
#: evidence-sparse questions have one or two; shared/notes/mtcb.md).
DENSE_MIN_UNITS = 3
#: The seed sent with retry ``n`` (n >= 2) of sample ``s``: ``SEED_BASE * s + n``, so that a
#: retry is never a byte-identical request even when its feedback repeats.
SEED_BASE = 1000
#: Each retry samples a little wider: temperature + ``RETRY_TEMPERATURE_STEP`` x (attempt - 1), at
#: most ``MAX_RETRY_TEMPERATURE``. Our values: Qwen2.5-Coder-1.5B sent the same reply on 3 or 4
#: attempts of one window at 0.7 with a new seed and new feedback each time.
RETRY_TEMPERATURE_STEP = 0.15
MAX_RETRY_TEMPERATURE = 1.2
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
#: Tokens kept free for the reply when a window is cut to ``[llm] context_tokens`` (a pair is a
#: few hundred tokens; feedback rounds add the echoed reply and the feedback: our allowance).
REPLY_TOKENS = 1024
#: Tokens set aside for the listed existing questions when cutting a window: the cut stays the
#: same while the list grows within it, so the prompt prefix (and a server's prefix cache)
#: stays the same across the calls for one window. Our allowance; a longer list takes its size.
QUESTION_TOKENS = 1024
#: Most characters of a rejected reply sent back to the model with the feedback.
MAX_ECHO_CHARS = 4000
#: Most characters of the closest window text quoted in "not verbatim" feedback.
MAX_CLOSEST_CHARS = 600
#: An answer of at least :data:`COPIED_MIN_WORDS` words whose rapidfuzz ``ratio`` (after
#: ``utils.default_process``) with a sentence of the window outside its chosen range reaches
#: this copies that sentence instead of answering from its own evidence. Our threshold, checked
#: on every numbered-mode reply of the 1.5B model's runs (docs/performance.md): the copies scored
#: 87-100; the kept answers it would refuse were none a curator keeps (NFLX, ATVI, PFE).
COPIED_MIN_RATIO = 85.0
COPIED_MIN_WORDS = 8
#: Tokens set aside, when a window is cut, for the proposed evidence repeated near the end of a
#: numbered-mode prompt (``prompts.proposal_request``): the checklist's 600-character maximum
#: passage at about 4 characters a token, and its numbers. Our allowance.
PROPOSAL_TOKENS = 170

_PASSAGE_KEYS = ("supporting_passage", "passage", "chunk_must_contain", "chunk-must-contain")
#: The value a reply check returns (:func:`read_reply`).
_V = TypeVar("_V")

ProgressCallback = Callable[[int, int], None]
#: Called with each :class:`Attempt` as soon as its reply is judged (from the calling thread,
#: which is a pool thread when calls run at once).
AttemptCallback = Callable[["Attempt"], None]


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
        verdict: how the model's quote was found in the window: ``exact``, or ``normalized`` /
            ``fuzzy`` when it was snapped to the window text (see the module docstring).
        score: the fuzzy score (0-100) of a snapped quote; 100.0 for exact and normalized.
        quoted: the model's own quote when it was snapped ('' when exact).
        window_note: which window was used and why (``regenerate``: "window 6: the pair's
            passage (normalized) is there"), or ''.
        mode: ``quote`` or ``numbered``; sentences: the range the model named (numbered mode).
        supported, support_reason: the answer-support verdict (``llm.support``).
        evidence_units: the window's numbered units the passage spans.
        proposed: the range the tool proposed in the prompt (numbered mode, ``llm.proposals``),
            or None when none was proposed; the model may have named another (``sentences``).
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
    verdict: str = "exact"
    score: float = 100.0
    quoted: str = ""
    window_note: str = ""
    mode: str = "quote"
    sentences: tuple[int, int] | None = None
    supported: bool = True
    support_reason: str = ""
    evidence_units: int = 0
    proposed: tuple[int, int] | None = None

    @property
    def snapped(self) -> bool:
        """True when the model's quote was not verbatim and was snapped to the window text."""
        return self.verdict != Verdict.EXACT

    @property
    def model_text(self) -> str:
        """What the model itself gave for the passage: its quote (quote mode), or the sentence
        range it named (numbered mode, ``sentences 12-14``)."""
        if self.mode == "numbered" and self.sentences is not None:
            return f"sentences {self.sentences[0]}-{self.sentences[1]}"
        return self.quoted or self.passage

    @property
    def evidence(self) -> dict[str, int]:
        """The size of the evidence (HiCBench's evidence density): ``{"sentences", "characters",
        "words"}`` (sentences: the window's numbered units the passage spans)."""
        return {"sentences": self.evidence_units, "characters": len(self.passage), "words": len(self.passage.split())}

    def provenance(self) -> dict[str, Any]:
        """How this candidate was made, JSON-ready (``generate --json``, the pair's details):
        mode, verdict (exact / normalized / fuzzy) and score, the model's own text, the sentence
        range (numbered mode) and the range the tool proposed (None when none), attempts, whether
        the answer is supported and why not, warnings, evidence size, model and request key."""
        return {"mode": self.mode, "verdict": self.verdict, "score": self.score, "model_text": self.model_text,
                "sentences": list(self.sentences) if self.sentences is not None else None,
                "proposed": list(self.proposed) if self.proposed is not None else None,
                "attempts": self.attempts, "supported": self.supported, "support_reason": self.support_reason,
                "warnings": list(self.warnings), "evidence": self.evidence, "model": self.model,
                "request": self.cache_key}

    def provenance_line(self) -> str:
        """One line for the command and the screens: ``numbered, sentences 12-14 (3 sentences,
        412 characters), attempt 2`` / ``quote, snapped (fuzzy 91.2), attempt 1``, with ``ANSWER
        NOT SUPPORTED: ...`` when it is not."""
        if self.mode == "numbered":
            how = f"numbered, {self.model_text}"
            if self.proposed is not None:
                how += (" (as proposed)" if self.proposed == self.sentences
                        else f" (proposed {self.proposed[0]}-{self.proposed[1]})")
        elif self.snapped:
            how = f"quote, snapped ({self.verdict} {self.score:g})"
        else:
            how = "quote, exact"
        ev = self.evidence
        line = (f"{how} ({ev['sentences']} sentence{'s' if ev['sentences'] != 1 else ''}, {ev['characters']:,} "
                f"characters), attempt {self.attempts}")
        if not self.supported:
            line += f"; ANSWER NOT SUPPORTED by its passage: {self.support_reason}"
        return line

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

    @property
    def quote(self) -> str:
        """The supporting passage the reply quoted ('' when the reply is not JSON or has none)."""
        try:
            data = extract_json(self.reply)
        except (MalformedJSON, ReplyTooLong):
            return ""
        if not isinstance(data, dict):
            return ""
        value = next((data[k] for k in _PASSAGE_KEYS if k in data), "")
        return value if isinstance(value, str) else ""


class AttemptLog:
    """Every generation attempt of a session, for the curator to read (thread-safe).

    ``add`` is an :data:`AttemptCallback`; the latest :data:`MAX_LOGGED` are kept. ``refused()``
    gives the replies that were not used, oldest first, with their full reasons and quotes.
    """

    #: Attempts kept (the oldest are dropped first).
    MAX_LOGGED = 2000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Attempt] = []

    def add(self, attempt: "Attempt") -> None:
        """Record one attempt (from any thread)."""
        with self._lock:
            self._items.append(attempt)
            if len(self._items) > self.MAX_LOGGED:
                del self._items[: len(self._items) - self.MAX_LOGGED]

    def all(self) -> list["Attempt"]:
        """Every attempt kept, oldest first."""
        with self._lock:
            return list(self._items)

    def refused(self) -> list["Attempt"]:
        """The attempts not used, oldest first."""
        return [a for a in self.all() if not a.accepted]

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


@dataclass
class GenerationResult:
    """The outcome of a generation run.

    Attributes:
        candidates: the kept candidates, in the order generated.
        attempts: every reply, accepted or not (the attempts log).
        failures: one line per window sample that gave no candidate after all retries.
        cancelled: True when the run was cancelled; what was done before is kept here.
        window_notes: which window each job used and why, one line per distinct window
            (regenerate: "window 6: the pair's passage (fuzzy 91) is there").
    """

    candidates: list[Candidate] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    cancelled: bool = False
    window_notes: list[str] = field(default_factory=list)

    @property
    def snapped(self) -> int:
        """Candidates whose quote was snapped to the window text (normalized or fuzzy)."""
        return sum(1 for c in self.candidates if c.snapped)

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
) -> tuple[dict[str, Any] | None, list[str], list[str]]:
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
        range, within the checklist's). Each is a sentence addressed to the model. A passage
        that is not verbatim but is located in the window (:func:`locate_in_window`) is snapped:
        ``fields["passage"]`` is then the window text and ``fields["snap"]`` the :class:`Snap`.
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
        snap = locate_in_window(passage, window_text)
        if snap is None or passage_length_problem(snap.end - snap.start, limits) is not None:
            # Not located, or located as a span the checklist would refuse (a fuzzy match on a
            # few words): sent back, with the closest text.
            problems.append(_not_verbatim(passage, window_text, limits, answer, question))
        else:
            passage = window_text[snap.start:snap.end]
            fields["passage"], fields["snap"] = passage, snap
    if passage and passage_length_problem(len(passage), limits) is not None:
        problems.append(f"supporting_passage has {len(passage):,} characters; quote between {limits.min_chars} "
                        f"and {limits.max_chars} characters: the shortest block that fully supports the answer.")
    _question_rules(question, answer, existing_questions, problems, check_empty=False)
    if passage and hint is not None:
        lo, hi = hint.min_passage_chars, hint.max_passage_chars
        if (lo is not None and len(passage) < lo) or (hi is not None and len(passage) > hi):
            warnings.append(f"supporting_passage has {len(passage)} characters; for this dataset quote "
                            f"between {lo or 1} and {hi or 'any number of'} characters.")
    return fields, problems, warnings


@dataclass(frozen=True, slots=True)
class Snap:
    """Where a non-verbatim quote was located in its window.

    Attributes:
        start, end: character offsets of the exact window text (end exclusive).
        verdict: ``normalized`` or ``fuzzy`` (the verification's verdicts).
        score: 100.0 for normalized; the fuzzy score (at least ``FUZZY_MIN_SCORE``).
        quoted: the model's quote as it was.
    """

    start: int
    end: int
    verdict: str
    score: float
    quoted: str


def locate_in_window(passage: str, window_text: str) -> Snap | None:
    """The window text a non-verbatim ``passage`` stands for, by the verification's own rules:
    the first normalized occurrence (``verify.search.find_normalized``), else a fuzzy alignment
    scoring at least ``verify.fuzzy.FUZZY_MIN_SCORE`` whose numbers (digit runs) are those of
    the quote; None when neither, or when the passage
    holds an ellipsis ("..." or "…": it skips text, so no contiguous span stands for it).

    Cost: building the window's skeleton index, a few ms for an 8,192-token window, plus the
    fuzzy alignment (typically 5-15 ms).
    """
    from mtcb_curate.verify.fuzzy import locate_fuzzy
    from mtcb_curate.verify.normalize import SkeletonIndex
    from mtcb_curate.verify.search import find_normalized

    if not passage.strip() or "..." in passage or "\u2026" in passage:
        return None
    skidx = SkeletonIndex(window_text)
    spans = find_normalized(skidx, passage, limit=1)
    if spans:
        return Snap(spans[0][0], spans[0][1], "normalized", 100.0, passage)
    match = locate_fuzzy(skidx, passage)
    if (match.matched and match.start is not None and match.end is not None and match.end > match.start
            and _numbers(window_text[match.start:match.end]) == _numbers(passage)):
        return Snap(match.start, match.end, "fuzzy", round(match.score, 1), passage)
    return None


def _numbers(text: str) -> list[str]:
    """The digit runs of ``text``: a fuzzy snap must keep them all ("$12 million" is not a
    near-miss quote of "$10 million" but another fact)."""
    return re.findall(r"\d+", text)


def find_repeat(question: str, existing_questions: Sequence[str]) -> str | None:
    """The existing question that ``question`` repeats, or None: rapidfuzz ``ratio`` of at least
    :data:`DUPLICATE_MIN_RATIO` after ``utils.default_process``, with the same numbers (digit
    runs) in both. An existing question is compared whole and, when it goes on after its first
    question mark, by its question alone (FinanceBench's questions add instructions after it:
    "... decimal place)? Calculate what was asked by ..."; a model copying the question without
    them is a repeat). Questions are compared on their first ``neardup.SCORED_CHARS`` characters
    (pairwise cost grows with both lengths)."""
    question = question[:SCORED_CHARS]
    numbers = re.findall(r"\d+", question)
    owners: list[int] = []
    capped: list[str] = []
    for i, q in enumerate(existing_questions):
        whole = q[:SCORED_CHARS]
        owners.append(i)
        capped.append(whole)
        mark = q.find("?")
        if 0 < mark < len(q.rstrip()) - 1:
            owners.append(i)
            capped.append(q[:mark + 1][:SCORED_CHARS])
    existing = list(existing_questions)
    for _match, _score, k in process.extract_iter(question, capped, scorer=fuzz.ratio,
                                                  processor=utils.default_process,
                                                  score_cutoff=DUPLICATE_MIN_RATIO):
        if re.findall(r"\d+", capped[k]) == numbers:
            return existing[owners[k]]
    return None


def _not_verbatim(passage: str, window_text: str, limits: Limits | None = None, answer: str = "",
                  question: str = "") -> str:
    """The feedback for a passage that is not an exact substring of the window.

    It says when the passage was copied from the instructions instead of the window, and it
    proposes the closest window text only when that text would pass the next checks (the
    checklist's length limits and the answer's support): a hint is never a fragment that the
    next attempt would be refused for."""
    from mtcb_curate.verify.fuzzy import locate_fuzzy
    from mtcb_curate.verify.normalize import SkeletonIndex

    limits = limits or Limits()
    if quotes_instructions(passage, window_text):
        return ("supporting_passage is copied from these instructions, not from the document window. Quote the "
                f"document's own text, found between the {WINDOW_OPEN} and {WINDOW_CLOSE.split()[-1]} markers.")
    msg = "supporting_passage does not occur verbatim in the document window: it must be an exact substring."
    if "..." in passage or "\u2026" in passage:
        msg += " Do not use ellipses; quote one contiguous block."
    match = locate_fuzzy(SkeletonIndex(window_text), passage)
    closest = window_text[match.start:match.end].strip() if (match.start is not None and match.end is not None
                                                             and match.score > 0) else ""
    usable = (bool(closest) and len(closest) <= MAX_CLOSEST_CHARS
              and passage_length_problem(len(closest), limits) is None
              and not quotes_instructions(closest, "")
              and (not answer or answer_support(question, answer, closest).supported))
    if usable:
        msg += (f' The closest text in the window is: "{closest}". Quote text that is there, exactly as it '
                "appears.")
    else:
        msg += (" Nothing close enough to it is in the window; quote a whole sentence of the window that states "
                "the answer, exactly as it appears.")
    return msg


def quotes_instructions(passage: str, window_text: str) -> bool:
    """True when ``passage`` is not in ``window_text`` but its words are those of the prompt's
    own instructions (a small model quoting "The document window (chunk 5) follows between the
    markers."): compared with white space and case folded and every digit run read alike, on
    the passage's first 60 characters."""
    def norm(text: str) -> str:
        return re.sub(r"\d+", "#", " ".join(text.split()).lower())

    key = norm(passage)[:60]
    if len(key) < 12 or key in norm(window_text):
        return False
    return any(key in norm(t) for t in instruction_texts())


def _short(text: str, limit: int = 160) -> str:
    """One line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def resolve_mode(mode: str | None, base_url: str) -> str:
    """The generation mode to use: ``quote`` or ``numbered`` as asked; for ``auto`` (or None),
    ``numbered`` when the server is a local one (a loopback, private-network or link-local
    address, ``localhost``, a ``.local`` or dot-less host name: llama.cpp, vLLM or Ollama on a
    workstation, whose small models rarely quote exactly), else ``quote`` (a hosted API model).

    Raises:
        ValueError: an unknown mode.
    """
    import ipaddress
    from urllib.parse import urlsplit

    if mode in ("quote", "numbered"):
        return mode
    if mode not in (None, "", "auto"):
        raise ValueError(f"unknown generation mode {mode!r}; use one of {', '.join(MODES)}")
    host = (urlsplit(base_url).hostname or "").lower()
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        local = host == "localhost" or host.endswith((".local", ".localhost", ".internal", ".lan")) or "." not in host
    else:
        local = ip.is_loopback or ip.is_private or ip.is_link_local
    return "numbered" if local else "quote"


def check_numbered(
    data: Any,
    smap: SentenceMap,
    existing_questions: Sequence[str] = (),
    hint: DomainHint | None = None,
    limits: Limits | None = None,
    min_units: int = 1,
) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """Judge a parsed numbered-mode reply: its sentence range, then the question rules.

    Args:
        data: the JSON value read from the reply (``question``, ``answer``, ``first_sentence``,
            ``last_sentence``; ``sentences`` as ``"12-14"`` or ``[12, 14]`` is read too).
        smap: the window's sentence map.
        existing_questions, hint, limits: as for :func:`check_candidate`.
        min_units: the fewest sentences the range must span (evidence-dense runs).

    Returns:
        ``(fields, problems, warnings)`` as :func:`check_candidate`; ``fields`` holds
        ``"passage"`` cut from the window (``SentenceMap.passage``) and ``"sentences"``
        (first, last), and ``"offset"`` (the passage's window offset).
    """
    limits = limits or Limits()
    if not isinstance(data, dict):
        return None, ["The reply is not one JSON object with question, answer, first_sentence and last_sentence."], []
    question, answer = data.get("question"), data.get("answer")
    first, last = _range_of(data)
    problems: list[str] = []
    for name, value in (("question", question), ("answer", answer)):
        if value is None:
            problems.append(f'The JSON object has no "{name}".')
        elif not isinstance(value, str):
            problems.append(f'"{name}" must be a string.')
    if first is None or last is None:
        problems.append('The JSON object needs "first_sentence" and "last_sentence": the numbers in square '
                        "brackets of the first and last sentence that state the answer.")
    if problems:
        return None, problems, []
    assert first is not None and last is not None
    question, answer = question.strip(), answer.strip()
    why = smap.range_problem(first, last, min_chars=limits.min_chars, max_chars=limits.max_chars,
                             min_units=min_units)
    passage = smap.passage(first, last) if why is None else ""
    fields = {"question": question, "answer": answer, "passage": passage, "sentences": (first, last),
              "offset": smap.units[first - 1].start if why is None else 0}
    if why is not None:
        problems.append(why)
        proposal = (propose_range(smap, question, answer, limits, min_units, near=(min(first, last), max(first, last)))
                    if answer else None)
        if proposal is not None:
            problems.append(f"Sentences {proposal[0]} to {proposal[1]} state the answer: name them, or write an "
                            "answer that your chosen sentences state.")
    _question_rules(question, answer, existing_questions, problems)
    warnings: list[str] = []
    if passage and hint is not None:
        lo, hi = hint.min_passage_chars, hint.max_passage_chars
        if (lo is not None and len(passage) < lo) or (hi is not None and len(passage) > hi):
            warnings.append(f"The chosen sentences hold {len(passage)} characters; for this dataset choose "
                            f"between {lo or 1} and {hi or 'any number of'} characters.")
    return fields, problems, warnings


def _range_of(data: dict[str, Any]) -> tuple[int | None, int | None]:
    """The (first, last) sentence numbers of a numbered-mode reply, or None for each unreadable."""
    def num(v: Any) -> int | None:
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, str):
            m = re.fullmatch(r"\s*\[?\s*(\d+)\s*\]?\s*", v)
            return int(m.group(1)) if m else None
        return None

    first, last = num(data.get("first_sentence")), num(data.get("last_sentence"))
    if first is None and last is None:
        both = data.get("sentences")
        if isinstance(both, str):
            m = re.fullmatch(r"\s*\[?(\d+)\]?\s*(?:-|–|to|\.\.)\s*\[?(\d+)\]?\s*", both)
            if m:
                return int(m.group(1)), int(m.group(2))
            one = num(both)
            return one, one
        if isinstance(both, list) and both:
            return num(both[0]), num(both[-1])
    if first is not None and last is None:
        last = first
    return first, last


def propose_range(smap: SentenceMap, question: str, answer: str, limits: Limits, min_units: int = 1,
                  near: tuple[int, int] | None = None, max_checks: int = 3000) -> tuple[int, int] | None:
    """A sentence range of the window that would pass every check for ``answer``: within the
    checklist's length limits, at least ``min_units`` sentences, and supporting the answer
    (:func:`mtcb_curate.llm.support.answer_support`); the shortest, then the nearest to ``near``;
    None when there is none (at most ``max_checks`` support checks are made)."""
    n = len(smap)
    found: list[tuple[int, int, int, int]] = []
    checks = 0
    for i in range(1, n + 1):
        for j in range(i + max(min_units, 1) - 1, n + 1):
            size = smap.units[j - 1].end - smap.units[i - 1].start
            if size > limits.max_chars:
                break
            if size < limits.min_chars:
                continue
            checks += 1
            if checks > max_checks:
                break
            if answer_support(question, answer, smap.passage(i, j)).supported:
                dist = 0 if near is None else abs(i - near[0]) + abs(j - near[1])
                found.append((j - i, dist, i, j))
                break
        if checks > max_checks:
            break
    if not found:
        return None
    _, _, i, j = min(found)
    return i, j


def _question_rules(question: str, answer: str, existing_questions: Sequence[str], problems: list[str], *,
                    check_empty: bool = True) -> None:
    """The question and answer rules both modes share (empty, form, answer length, repeats)."""
    form = form_problem(question) if question else None
    if check_empty and not question:
        problems.append("The question is empty.")
    if check_empty and not answer:
        problems.append("The answer is empty.")
    if form is not None and is_yes_no_question(question):
        problems.append(f'"{_short(question)}" is a yes/no question; ask What, When, Where, Which or How.')
    elif form is not None:
        problems.append(f'The question "{_short(question)}" is refused: {form[1]}. Ask one specific question '
                        "about a fact in the window.")
    long_answer = answer_length_problem(answer)
    if long_answer is not None:
        problems.append(f"The answer is refused: {long_answer}. Answer in one or two sentences.")
    elif answer.rstrip().endswith(":"):
        # "... are as follows (amounts in millions):" (a 1.5B model, docs/performance.md): the
        # sentence that introduces a table, whose words the passage holds, states nothing.
        problems.append('The answer ends with ":": it introduces the facts instead of stating them. Write the '
                        "figures or facts themselves.")
    repeat = find_repeat(question, existing_questions) if question else None
    if repeat is not None:
        problems.append(f'The question repeats an existing question: "{_short(repeat)}". Ask about another fact.')


#: A long answer (at least this many words) that adds at most one content word to its question
#: restates the question (``answer_repeats_question``; "The specific identification cost method
#: is used to determine realized gains ..." to "What is the specific identification cost method
#: used for realized gains ...?", the 1.5B model, run J).
RESTATING_MIN_WORDS = 8


def answer_repeats_question(question: str, answer: str) -> bool:
    """True when ``answer`` states nothing the question does not: every content word of it
    (``verify.words.content_words``) is a word of ``question`` and it holds no digit, or it
    is :data:`RESTATING_MIN_WORDS` words or longer, adds at most one content word to the
    question's and holds no digit the question lacks."""
    from mtcb_curate.verify.words import content_words

    words, asked = content_words(answer), content_words(question)
    if not words:
        return False
    if not any(c.isdigit() for c in answer) and words <= asked:
        return True
    digits = set(re.findall(r"\d+", answer)) - set(re.findall(r"\d+", question))
    return len(answer.split()) >= RESTATING_MIN_WORDS and len(words - asked) <= 1 and not digits


def years_not_in_passage(answer: str, passage: str) -> list[str]:
    """The years ``answer`` names (``evidence.figures.parse_figures``: 2019, FY22) that
    ``passage`` does not, as written, each once."""
    from mtcb_curate.evidence.figures import parse_figures

    have = {f.value for f in parse_figures(passage) if f.is_year}
    out: list[str] = []
    for f in parse_figures(answer):
        if f.is_year and f.value not in have and f.describe() not in out:
            out.append(f.describe())
    return out


def support_problem(fields: dict[str, Any], mode: str, smap: SentenceMap | None, limits: Limits,
                    min_units: int = 1) -> tuple[Support, str | None]:
    """The answer-support verdict of checked ``fields`` and, when unsupported, the feedback
    sentence: what the answer states that the passage lacks, and (numbered mode) a range
    that does state it, proposed only after it passed every check (:func:`propose_range`)."""
    question, answer, passage = fields["question"], fields["answer"], fields["passage"]
    verdict = answer_support(question, answer, passage)
    if verdict.supported:
        return verdict, None
    lacks = "; ".join(verdict.missing[:4]) if verdict.missing else verdict.reason
    if mode == "numbered" and smap is not None and fields.get("sentences"):
        a, b = fields["sentences"]
        msg = f"The answer states what sentences {a} to {b} do not: {lacks}."
        proposal = propose_range(smap, question, answer, limits, min_units, near=(a, b))
        if proposal is not None and proposal != (a, b):
            msg += f" Sentences {proposal[0]} to {proposal[1]} state it: name them, or answer from sentences {a} to {b}."
        else:
            msg += f" Write an answer that sentences {a} to {b} state (every figure as they write it)."
    else:
        msg = (f"The answer states what supporting_passage does not: {lacks}. Quote the sentence that states the "
               "answer, or answer only what the passage states.")
    return verdict, msg


def request_tag(sample: int, mode: str, dense: bool, extra: str = "", proposed: bool = False) -> str:
    """The cache tag of a generation request: the sample, the mode and the dense option (so
    the two modes' requests never share a cache key, even for an empty window), whether the
    prompt proposes an evidence range (so a reply to the prompt without one is never replayed
    for it), and ``extra``."""
    return ";".join(t for t in (f"sample={sample}" if sample else "", "numbered" if mode == "numbered" else "",
                                "proposed" if proposed else "", "dense" if dense else "", extra) if t)


def proposals_for(smap: SentenceMap, limits: Limits, hint: DomainHint | None = None,
                  min_units: int = 1) -> list[Proposal]:
    """The evidence ranges numbered mode proposes for a window (``proposals.candidate_ranges``),
    within the checklist's passage limits narrowed by the domain hint's range when it has one."""
    lo, hi = limits.min_chars, limits.max_chars
    if hint is not None:
        lo = max(lo, hint.min_passage_chars or 0)
        hi = min(hi, hint.max_passage_chars or hi)
    return candidate_ranges(smap, min_chars=lo, max_chars=hi, min_units=min_units) if lo <= hi else []


def proposal_at(props: Sequence[Proposal], k: int) -> Proposal | None:
    """The range numbered mode proposes at turn ``k`` (sample ``s`` starts at ``s``; a retry
    moves on by one): the ``k``-th of ``props``, wrapping round, or None when there is none."""
    return props[k % len(props)] if props else None


def copied_sentence(answer: str, smap: SentenceMap, first: int, last: int) -> int | None:
    """The number of a window unit outside ``first``..``last`` that ``answer`` copies (see
    :data:`COPIED_MIN_RATIO`), or None (also when it copies one inside the range as closely)."""
    if len(answer.split()) < COPIED_MIN_WORDS:
        return None
    best, where = 0.0, None
    for i in range(1, len(smap) + 1):
        score = fuzz.ratio(answer, smap.display(i), processor=utils.default_process)
        if score > best:
            best, where = score, i
    if where is None or best < COPIED_MIN_RATIO or first <= where <= last:
        return None
    return where


def proposal_tokens(mode: str) -> int:
    """Tokens a window cut gives up for the proposed evidence (:data:`PROPOSAL_TOKENS` in
    numbered mode, else 0)."""
    return PROPOSAL_TOKENS if mode == "numbered" else 0


def prompt_messages(window_text: str, smap: SentenceMap | None = None, *, doc_key: str, chunk_index: int,
                    existing_questions: Sequence[str] = (), hint: DomainHint | None = None, sample: int = 0,
                    steering: Steering | None = None, mode: str = "quote", dense: bool = False,
                    limits: Limits | None = None, proposal: Proposal | None = None) -> list[dict[str, str]]:
    """The first-attempt messages of a generation request in ``mode`` (``prompts``'
    ``generation_messages`` or ``numbered_messages``), with the evidence-dense request when
    ``dense``. ``smap``: the window's sentence map when the caller has it. ``proposal``: the
    evidence range proposed (numbered mode; :func:`proposals_for`), or None."""
    limits = limits or Limits()
    dense_text = None
    if dense:
        dense_text = (DENSE_REQUEST if mode == "numbered" else DENSE_REQUEST_QUOTE).format(
            min_units=DENSE_MIN_UNITS, max_chars=limits.max_chars)
    if mode == "numbered":
        smap = smap if smap is not None else sentence_map(window_text)
        shown = None
        if proposal is not None:
            shown = (proposal.first, proposal.last,
                     [smap.display(k) for k in range(proposal.first, proposal.last + 1)])
        return numbered_messages(smap.numbered_text(), doc_key=doc_key, chunk_index=chunk_index, units=len(smap),
                                 existing_questions=existing_questions, hint=hint, sample=sample,
                                 steering=steering, dense=dense_text, proposal=shown)
    return generation_messages(window_text, doc_key=doc_key, chunk_index=chunk_index,
                               existing_questions=existing_questions, hint=hint, sample=sample,
                               steering=steering, dense=dense_text)


def first_request(window_text: str, *, doc_key: str, chunk_index: int, existing_questions: Sequence[str] = (),
                  hint: DomainHint | None = None, sample: int = 0, steering: Steering | None = None,
                  mode: str = "quote", dense: bool = False, limits: Limits | None = None,
                  temperature: float | None = TEMPERATURE, tag: str = "", client: Any = None) -> ChatRequest:
    """The first-attempt request :func:`generate_for_window` sends for a window, for the
    estimate before a run: byte for byte when the window fits; with ``client`` whose ``[llm]
    context_tokens`` is set, the window is cut to fit first, as the run will (from its start)."""
    if client is not None:
        budget = window_budget(client, prompt_messages("", doc_key=doc_key, chunk_index=chunk_index,
                                                       existing_questions=existing_questions, hint=hint,
                                                       sample=sample, steering=steering, mode=mode, dense=dense,
                                                       limits=limits), extra=proposal_tokens(mode))
        if budget is not None:
            from mtcb_curate.dataset.tokens import Window as _Window

            cut = fit_window(window_text, _Window(chunk_index, 0, 0, 0, len(window_text)), budget)
            window_text = window_text[cut.start:cut.end]
    params = {} if temperature is None else {"temperature": temperature}
    smap = sentence_map(window_text) if mode == "numbered" else None
    props = proposals_for(smap, limits or Limits(), hint, DENSE_MIN_UNITS if dense else 1) if smap is not None else []
    proposal = proposal_at(props, sample)
    return ChatRequest.of(prompt_messages(window_text, smap, doc_key=doc_key, chunk_index=chunk_index,
                                          existing_questions=existing_questions, hint=hint, sample=sample,
                                          steering=steering, mode=mode, dense=dense, limits=limits,
                                          proposal=proposal),
                          params, request_tag(sample, mode, dense, tag, proposal is not None),
                          NUMBERED_SCHEMA if mode == "numbered" else GENERATION_SCHEMA)


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
    focus: tuple[int, int] | None = None,
    steering: Steering | None = None,
    on_attempt: AttemptCallback | None = None,
    mode: str = "quote",
    dense: bool = False,
    tag: str = "",
) -> tuple[Candidate | None, list[Attempt]]:
    """Ask for one QA pair from ``window`` of a document, retrying unusable replies.

    Every reply is checked before it can become a candidate: the passage (quote mode: found in
    the window, exact or snapped; numbered mode: a valid sentence range, cut from the window),
    the checklist's bounds, the question rules, and whether the passage supports the answer
    (:mod:`mtcb_curate.llm.support`). A reply that fails is sent back with feedback naming what
    was wrong; each retry carries the attempt number and its own ``seed`` (never a
    byte-identical request) and only the latest refused reply (the prompt does not grow). A
    reply whose only faults are soft (an unsupported answer, a passage length outside the
    dataset's range) is kept as a fallback: after the last attempt it becomes the candidate
    *with* its warnings (``Candidate.supported`` False and the reason), never as a clean pair.

    Args:
        client: the chat client (only the reply that becomes the candidate is cached:
            ``ChatClient.keep``).
        doc_key, doc_text: the document key and the whole document text.
        window: the window (``tokens.windows(doc_text)[i]``).
        existing_questions: questions the new one must not repeat (listed in the prompt).
        hint: the dataset's domain hint, or None.
        limits: the checklist's passage length bounds (see :func:`check_candidate`).
        sample: 0 for the first candidate of this prompt; another number asks again.
        retries: retries after the first attempt (default :data:`RETRIES`).
        temperature: sent as ``temperature`` unless None.
        cancel, on_retry: see :meth:`ChatClient.complete`.
        focus: document character offsets to keep in the window when it must be cut to the
            client's ``[llm] context_tokens`` (:func:`fit_window`).
        steering: example questions and a question form for the prompt's tail, or None.
        on_attempt: called with each :class:`Attempt` as soon as it is judged.
        mode: ``quote`` or ``numbered`` (:data:`MODES`; resolve ``auto`` with :func:`resolve_mode`).
        dense: ask for evidence-dense questions (:data:`DENSE_MIN_UNITS` or more sentences).
        tag: added to the cache tag (regenerate passes the pair it replaces).

    Returns:
        ``(candidate or None, attempts)``.

    Raises:
        LLMCancelled, LLMUnavailable, LLMError: from the client.
        ValueError: an unknown mode.
    """
    if mode not in ("quote", "numbered"):
        raise ValueError(f"unknown generation mode {mode!r}")
    limits = limits or Limits()
    min_units = DENSE_MIN_UNITS if dense else 1

    def build(text: str, proposal: Proposal | None = None,
              smap: SentenceMap | None = None) -> tuple[list[dict[str, str]], SentenceMap]:
        smap = sentence_map(text) if smap is None else smap
        return prompt_messages(text, smap, doc_key=doc_key, chunk_index=window.index,
                               existing_questions=existing_questions, hint=hint, sample=sample, steering=steering,
                               mode=mode, dense=dense, limits=limits, proposal=proposal), smap

    budget = window_budget(client, build("")[0], extra=proposal_tokens(mode))
    if budget is not None:
        window = fit_window(doc_text, window, budget, focus)
        if mode == "numbered":
            # The numbers take tokens too: cut again by what they add.
            from mtcb_curate.dataset.tokens import count_tokens

            text = doc_text[window.start:window.end]
            extra = count_tokens(sentence_map(text).numbered_text()) - count_tokens(text)
            if extra > 0:
                window = fit_window(doc_text, window, max(budget - extra, 256), focus)
    window_text = doc_text[window.start:window.end]
    smap = sentence_map(window_text)
    # Numbered mode: the tool proposes the evidence (llm.proposals); sample s starts at the s-th
    # range, and a retry after a refused reply that kept the proposed range takes the next one.
    props = proposals_for(smap, limits, hint, min_units) if mode == "numbered" else []
    cursor = sample
    shown: set[tuple[int, int]] = set()  # the ranges proposed to the model so far

    def proposal() -> Proposal | None:
        return proposal_at(props, cursor)

    base, _ = build(window_text, proposal(), smap)
    schema = NUMBERED_SCHEMA if mode == "numbered" else GENERATION_SCHEMA
    params = {} if temperature is None else {"temperature": temperature}
    tag = request_tag(sample, mode, dense, tag, bool(props))
    attempts: list[Attempt] = []
    # The best reply whose only faults were soft: kept if no later reply is clean.
    fallback: tuple[tuple[int, int], int, dict[str, Any], list[str], Support, Any] | None = None
    messages = base
    total = retries + 1
    for number in range(1, total + 1):
        sent = dict(params)
        if number > 1:
            sent["seed"] = SEED_BASE * sample + number
            if temperature is not None:
                # A small model sends the same reply again whatever the feedback: sample wider.
                sent["temperature"] = round(min(MAX_RETRY_TEMPERATURE, temperature + RETRY_TEMPERATURE_STEP * (number - 1)), 2)
        result = client.complete(ChatRequest.of(messages, sent, tag, schema), cancel=cancel, on_retry=on_retry)
        if mode == "numbered":
            fields, problems, warnings = read_reply(
                result, lambda data: check_numbered(data, smap, existing_questions, hint, limits, min_units))
        else:
            fields, problems, warnings = read_reply(
                result, lambda data: check_candidate(data, window_text, existing_questions, hint, limits))
            if fields is not None and not problems and dense:
                s0 = window_text.find(fields["passage"]) if "snap" not in fields else fields["snap"].start
                got = smap.range_of(s0, s0 + len(fields["passage"]))
                if got is None or got[1] - got[0] + 1 < min_units:
                    problems.append(f"supporting_passage spans {0 if got is None else got[1] - got[0] + 1} sentence(s); "
                                    f"this run asks for evidence of at least {min_units} consecutive sentences: quote "
                                    "the whole block the answer needs.")
        proposed = proposal()
        if proposed is not None:
            shown.add((proposed.first, proposed.last))
        if fields is not None and proposed is not None:
            # the range proposed: the one the model named when an attempt of this window proposed it
            named = fields.get("sentences")
            fields["proposed"] = named if named in shown else (proposed.first, proposed.last)
        if mode == "numbered" and fields is not None and fields.get("passage") and fields.get("sentences"):
            a, b = fields["sentences"]
            if all(is_boilerplate(smap.display(i)) for i in range(a, b + 1)):
                problems.append(f"Sentences {a} to {b} are a heading or page furniture (a title, a page header, a "
                                "table of contents line), not evidence: choose sentences that state the facts of "
                                "the answer.")
            if fields["question"] and answer_repeats_question(fields["question"], fields["answer"]):
                # "What is the name of Amazon?" / "Amazon" (a 1.5B model's reply): the answer
                # tells nothing the question does not, so the pair tests no retrieval.
                problems.append(f'The answer "{_short(fields["answer"], 60)}" only repeats words of the question: ask '
                                "for a fact the window states that the question does not already say.")
            if proposed is not None and (a, b) not in shown:
                # The 1.5B model's pairs from a range of its own were not keepable where those
                # from the proposed range mostly were (docs/performance.md, "Generation with a real local model"): it is
                # asked again for the proposed evidence, and kept with this warning only after
                # the last attempt.
                warnings.append(f"Sentences {a} to {b} are not the evidence proposed: write the question and its "
                                f"short answer from sentences {proposed.first} to {proposed.last}, and name them.")
            copied = copied_sentence(fields["answer"], smap, a, b)
            if copied is not None:
                # The 1.5B model answered with another sentence of the window, which the support
                # rules' similarity can pass (docs/performance.md).
                problems.append(f"The answer copies sentence {copied}, which is not among sentences {a} to {b}: "
                                "answer in a few words, the figure, date or name the question asks for, as the "
                                "chosen sentences state it.")
        verdict = Support(True)
        if fields is not None and not problems:
            verdict, unsupported = support_problem(fields, mode, smap, limits, min_units)
            if unsupported is not None:
                warnings = [unsupported, *warnings]
            elif years := years_not_in_passage(fields["answer"], fields["passage"]):
                # The support rules take a year the question names as given (a table's year
                # header may sit outside a minimal passage); a generated answer that states it
                # must find it in its own passage ("in Pfizer's 2019 financial results", run J).
                warnings = [f"The answer names {', '.join(years)}, which the passage does not state: answer with "
                            "what the chosen text states, without what only the question says.", *warnings]
        last = number == total
        accept = fields is not None and not problems and (not warnings or last)
        attempts.append(Attempt(doc_key, window.index, sample, number, tuple(problems + warnings), accept,
                                result.text[:MAX_REPLY_CHARS], result.cached, result.prompt_tokens,
                                result.completion_tokens))
        if on_attempt is not None:
            on_attempt(attempts[-1])
        if accept:
            assert fields is not None
            if fallback is not None and (not verdict.supported) and fallback[0] < (1, 0):
                break  # an earlier reply was supported (only a soft length warning): it is better
            client.keep(result)
            return _candidate(fields, warnings, doc_key, window, window_text, sample, number, result, mode,
                              verdict, smap), attempts
        if fields is not None and not problems:
            rank = (0 if verdict.supported else 1, number)
            if fallback is None or rank < fallback[0]:
                fallback = (rank, len(attempts) - 1, fields, warnings, verdict, result)
        if last:
            break
        if (proposed is not None and len(props) > 1 and fields is not None
                and fields.get("sentences") == (proposed.first, proposed.last)):
            # The model kept the proposed range and the reply was refused: propose the next.
            cursor += 1
            base, _ = build(window_text, proposal(), smap)
        # Numbered mode: the refused reply is not echoed as the model's own turn (a small model
        # sent it again word for word, docs/performance.md, "Generation with a real local model");
        # the feedback names the sentences and figures it refers to.
        messages = retry_messages(base, result.text, feedback_message(problems + warnings, mode=mode,
                                                                       attempt=number + 1, attempts=total),
                                  echo_chars=0 if mode == "numbered" else MAX_ECHO_CHARS)
    if fallback is not None:
        _, i, fields, warnings, verdict, result = fallback
        attempts = [replace(a, accepted=(k == i)) for k, a in enumerate(attempts)]
        client.keep(result)
        return _candidate(fields, warnings, doc_key, window, window_text, sample, i + 1, result, mode, verdict,
                          smap), attempts
    return None, attempts


def read_reply(result: Any, check: Callable[[Any], tuple[_V | None, list[str], list[str]]]
               ) -> tuple[_V | None, list[str], list[str]]:
    """Judge one completion: its ``problem`` (a refusal, a cut-off reply) or its JSON, parsed
    and handed to ``check`` (shared by generation and :mod:`mtcb_curate.llm.shrink`).

    Args:
        result: the client's completion (``problem``, ``text``).
        check: judges the parsed JSON value: ``(value or None, problems, warnings)``.

    Returns:
        ``check``'s triple, or ``(None, [one problem sentence], [])`` when the reply has a
        problem, is over :data:`MAX_REPLY_CHARS` or is not valid JSON.
    """
    if result.problem:
        return None, [result.problem[0].upper() + result.problem[1:] + "."], []
    try:
        data = extract_json(result.text)
    except ReplyTooLong as exc:
        return None, [f"The reply is refused unread: {exc}. Reply with one short JSON object."], []
    except MalformedJSON as exc:
        return None, [f"The reply is not valid JSON: {exc}."], []
    return check(data)


def retry_messages(messages: list[dict[str, str]], reply: str, feedback: dict[str, str], *,
                   echo_chars: int = MAX_ECHO_CHARS) -> list[dict[str, str]]:
    """``messages`` with the rejected ``reply`` (its first ``echo_chars`` characters, "(no reply)"
    when empty) and the ``feedback`` message appended: the stable part stays first. Generation
    passes its first request's messages, so only the latest refused reply is shown (the prompt
    does not grow with each retry). ``echo_chars`` 0: the reply is left out (only the feedback)."""
    if echo_chars <= 0:
        return [*messages, feedback]
    return [*messages, {"role": "assistant", "content": reply[:echo_chars] or "(no reply)"}, feedback]


def fit_window(doc_text: str, window: Window, max_tokens: int, focus: tuple[int, int] | None = None) -> Window:
    """``window`` cut to at most ``max_tokens`` tokens, for a model whose context cannot hold
    MTCB's 8,192-token window; the window itself when it fits.

    The cut keeps the window's ``index`` (the pair still records MTCB's chunk_index) and its
    character offsets stay offsets into the document. It starts at the window's start, or,
    with ``focus`` (document character offsets of a passage, e.g. the pair being
    regenerated), so that the focus is inside it (centred when it can be).
    """
    from dataclasses import replace as _replace

    text = doc_text[window.start:window.end]
    enc = tokens_encoding()
    ids = enc.encode_ordinary(text)
    if len(ids) <= max_tokens or max_tokens <= 0:
        return window
    _, offsets = enc.decode_with_offsets(ids)
    first = 0
    if focus is not None:
        fs = min(max(focus[0] - window.start, 0), len(text))
        fe = min(max(focus[1] - window.start, fs), len(text))
        ts = max(0, bisect_right(offsets, fs) - 1)
        te = bisect_right(offsets, fe)
        first = max(0, min(len(ids) - max_tokens, ts - max(0, (max_tokens - (te - ts)) // 2)))
    last = first + max_tokens
    a = offsets[first]
    b = offsets[last] if last < len(offsets) else len(text)
    return _replace(window, start=window.start + a, end=window.start + b,
                    start_token=window.start_token + first, end_token=window.start_token + min(last, len(ids)))


def window_budget(client: Any, messages_without_window: list[dict[str, str]], extra: int = 0) -> int | None:
    """Tokens a window may take under the client's ``[llm] context_tokens`` (None: no limit):
    the context less the prompt around the window (its tail plus ``extra`` tokens, e.g.
    :func:`proposal_tokens`, at least :data:`QUESTION_TOKENS` for the listed questions),
    :data:`REPLY_TOKENS` and a small per-message margin."""
    context = getattr(getattr(client, "config", None), "context_tokens", None)
    if not context:
        return None
    from mtcb_curate.dataset.tokens import count_tokens

    system, user = messages_without_window[0]["content"], messages_without_window[1]["content"]
    head, _, tail = user.partition(WINDOW_OPEN)
    fixed = count_tokens(system) + count_tokens(head) + 32
    return max(context - fixed - max(count_tokens(tail) + extra, QUESTION_TOKENS) - REPLY_TOKENS, 256)


def _candidate(fields: dict[str, Any], warnings: list[str], doc_key: str, window: Window, window_text: str,
               sample: int, number: int, result: Any, mode: str = "quote", verdict: Any = None,
               smap: SentenceMap | None = None) -> Candidate:
    """A :class:`Candidate` from checked fields (the passage is in ``window_text``)."""
    snap: Snap | None = fields.get("snap")
    if "offset" in fields:
        offset = fields["offset"]
    elif snap is not None:
        offset = snap.start
    else:
        offset = window_text.index(fields["passage"])
    start = window.start + offset
    extra: dict[str, Any] = {} if snap is None else {"verdict": snap.verdict, "score": snap.score, "quoted": snap.quoted}
    units = 0
    if smap is not None:
        got = smap.range_of(offset, offset + len(fields["passage"]))
        units = 0 if got is None else got[1] - got[0] + 1
    supported = True if verdict is None else bool(verdict.supported)
    return Candidate(fields["question"], fields["answer"], fields["passage"], doc_key, window.index, start,
                     start + len(fields["passage"]), sample, number, tuple(warnings), result.model, result.key,
                     mode=mode, sentences=fields.get("sentences"), supported=supported,
                     support_reason="" if supported or verdict is None else verdict.reason,
                     evidence_units=units, proposed=fields.get("proposed"), **extra)


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


@dataclass(frozen=True, slots=True)
class WindowChoice:
    """The window a pair is regenerated from, and why.

    Attributes:
        window: the MTCB window.
        verdict: how the pair's passage was located in the document (``exact``, ``normalized``,
            ``fuzzy``), or None when it was not.
        reason: one line for the curator ("window 6: holds the pair's passage (normalized)").
        span: the located passage's document character offsets, or None.
    """

    window: Window
    verdict: str | None
    reason: str
    span: tuple[int, int] | None = None


def locate_in_document(passage: str, doc_text: str, skeleton: Any = None) -> tuple[int, int, str] | None:
    """Where ``passage`` is in the document by the verification's steps: the first exact
    occurrence, else the first normalized span, else a fuzzy span scoring at least
    ``FUZZY_MIN_SCORE``; ``(start, end, verdict)`` or None.

    Args:
        skeleton: the document's ``SkeletonIndex`` when the caller has one (built here only
            when the passage is not exact: about 0.1-0.3 s for a 1 MB filing).
    """
    from mtcb_curate.verify.fuzzy import locate_fuzzy
    from mtcb_curate.verify.normalize import SkeletonIndex
    from mtcb_curate.verify.search import find_normalized

    if not passage.strip():
        return None
    pos = doc_text.find(passage)
    if pos >= 0:
        return pos, pos + len(passage), "exact"
    skidx = skeleton if skeleton is not None else SkeletonIndex(doc_text)
    spans = find_normalized(skidx, passage, limit=1)
    if spans:
        return spans[0][0], spans[0][1], "normalized"
    match = locate_fuzzy(skidx, passage)
    if match.matched and match.start is not None and match.end is not None:
        return match.start, match.end, "fuzzy"
    return None


def choose_pair_window(pair: Any, doc_text: str, doc_windows: Sequence[Window] | None = None, *,
                       span: tuple[int, int, str] | None = None, skeleton: Any = None) -> WindowChoice:
    """The window to regenerate ``pair`` from: the one holding its located passage (exact,
    normalized or fuzzy), never window 0 by default.

    Rules: when the passage is located (``span``, e.g. from the session's verdicts, else
    :func:`locate_in_document`), the pair's ``chunk_index`` window if it holds the whole span,
    else the first window holding it (``verify.chunk_index.window_of_span``), else the window
    where it starts. When it is not located: the pair's valid ``chunk_index``, else window 0
    (and the reason says so).

    Args:
        pair: a :class:`~mtcb_curate.dataset.model.QAPair` or a ``session.PairView`` (its
            current passage is used).
        doc_text: the document text; doc_windows: its windows when the caller has them.
        span: ``(start, end, verdict)`` of the passage when already located.
        skeleton: the document's ``SkeletonIndex``, reused when given.
    """
    from mtcb_curate.verify.chunk_index import window_of_span

    ws = list(doc_windows) if doc_windows is not None else windows(doc_text)
    chunk_index = getattr(getattr(pair, "pair", pair), "chunk_index", None)
    valid = isinstance(chunk_index, int) and not isinstance(chunk_index, bool) and 0 <= chunk_index < len(ws)
    passage = getattr(pair, "passage", "") or ""
    if valid and span is None and passage.strip():
        pos = doc_text.find(passage, ws[chunk_index].start, ws[chunk_index].end)
        if pos >= 0:
            return WindowChoice(ws[chunk_index], "exact",
                                f"window {chunk_index}: the pair's chunk_index, holding its passage (exact)",
                                (pos, pos + len(passage)))
    located = span if span is not None else locate_in_document(passage, doc_text, skeleton)
    if located is not None:
        s, e, verdict = located
        if valid and ws[chunk_index].start <= s and e <= ws[chunk_index].end:
            return WindowChoice(ws[chunk_index], verdict,
                                f"window {chunk_index}: the pair's chunk_index, holding its passage ({verdict})",
                                (s, e))
        i = window_of_span(ws, s, e)
        if i is None:
            i = next((w.index for w in ws if w.start <= s < w.end), ws[-1].index)
            where = f"holds the start of the pair's passage ({verdict})"
        else:
            where = f"holds the pair's passage ({verdict})"
        if valid:
            where += f"; its chunk_index {chunk_index} does not"
        return WindowChoice(ws[i], verdict, f"window {i}: {where}", (s, e))
    if valid:
        return WindowChoice(ws[chunk_index], None, f"window {chunk_index}: the pair's chunk_index "
                                                   "(its passage is not in the document)")
    return WindowChoice(ws[0], None, "window 0: the pair's passage is not in the document and it has no chunk_index")


def pair_window(pair: Any, doc_text: str, doc_windows: Sequence[Window] | None = None, *,
                skeleton: Any = None) -> Window:
    """The window a pair belongs to (:func:`choose_pair_window`)."""
    return choose_pair_window(pair, doc_text, doc_windows, skeleton=skeleton).window


class _Skeleton:
    """A document's ``SkeletonIndex``, built on first use (for the windows of many pairs)."""

    def __init__(self, text: str):
        self.text = text
        self._index: Any = None

    def windows_of(self, pairs: Sequence[Any], ws: Sequence[Window]) -> list[int]:
        """The window of each pair (:func:`pair_window`), building the skeleton only when a
        passage is not exact."""
        from mtcb_curate.verify.normalize import SkeletonIndex

        out = []
        for p in pairs:
            passage = getattr(p, "passage", "") or ""
            if passage.strip() and passage not in self.text and self._index is None:
                self._index = SkeletonIndex(self.text)
            out.append(pair_window(p, self.text, ws, skeleton=self._index).index)
        return out


def _hint(profile: str | Profile | DomainHint | None) -> DomainHint | None:
    """A domain hint from a profile, a profile name or a hint."""
    return profile if isinstance(profile, DomainHint) else domain_hint(profile)


def _limits(profile: str | Profile | DomainHint | None, limits: Limits | None) -> Limits:
    """``limits`` when given, else the profile's (``Limits.resolve`` without the config file),
    else the defaults."""
    if limits is not None:
        return limits
    return Limits.resolve(profile if isinstance(profile, Profile) else None, {})


def _samples(picks: Sequence[int]) -> list[int]:
    """The sample number of each pick: 0 for a window's first, 1 for its second ..."""
    seen: dict[int, int] = {}
    out = []
    for i in picks:
        out.append(seen.get(i, 0))
        seen[i] = out[-1] + 1
    return out


def _plan_steering(steering: Any, questions: Sequence[str], n: int) -> list[Steering | None]:
    """The steering of each of ``n`` jobs: ``SteeringConfig.plan``; None: nothing asked."""
    return [None] * n if steering is None else list(steering.plan(list(questions), n))


def plan_generate_more(document: Document, existing: Sequence[Any], n: int, *,
                       profile: str | Profile | DomainHint | None = None,
                       temperature: float | None = TEMPERATURE,
                       steering: Any = None, mode: str = "quote", dense: bool = False,
                       limits: Limits | None = None, client: Any = None) -> list[ChatRequest]:
    """The first-attempt request of each of the ``n`` jobs :func:`generate_more` sends (for
    the estimate before a run): the same requests (cut to ``client``'s context when given)."""
    ws = windows(document.text)
    picks = pick_windows(document.text, _Skeleton(document.text).windows_of(existing, ws), n, doc_windows=ws)
    hint = _hint(profile)
    questions = [p.question for p in existing]
    return [first_request(document.text[ws[i].start:ws[i].end], doc_key=document.key, chunk_index=i,
                          existing_questions=questions, hint=hint, sample=k, steering=st, mode=mode, dense=dense,
                          limits=_limits(profile, limits), temperature=temperature, client=client)
            for i, k, st in zip(picks, _samples(picks), _plan_steering(steering, questions, len(picks)))]


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
    concurrency: int = 1,
    steering: Any = None,
    on_attempt: AttemptCallback | None = None,
    mode: str = "quote",
    dense: bool = False,
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
        retries, temperature, cancel, on_retry, on_attempt: see :func:`generate_for_window`.
        on_progress: called with ``(windows done, n)`` as windows finish.
        concurrency: calls at once (``[llm] concurrency``); the result does not depend on it.
        steering: a ``steering.SteeringConfig`` (example questions, target form shares: the
            form of each job is planned from ``existing``'s questions), or None.
        mode, dense: see :func:`generate_for_window`.

    Returns:
        The candidates in window order (a candidate repeating an earlier one of the run is
        dropped and listed in ``failures``), the attempts log, failures. On cancel the result
        holds the finished prefix, ``cancelled=True``.

    Raises:
        LLMUnavailable, LLMError: from the client (replies so far stay in the cache, so a
            re-run gets them for free).
    """
    ws = windows(document.text)
    picks = pick_windows(document.text, _Skeleton(document.text).windows_of(existing, ws), n, doc_windows=ws)
    questions = [p.question for p in existing]
    result = _generate(client, document, list(zip((ws[i] for i in picks), _samples(picks))),
                       questions, _hint(profile), _limits(profile, limits), retries=retries,
                       temperature=temperature, cancel=cancel, on_retry=on_retry, on_progress=on_progress,
                       concurrency=concurrency, steering=_plan_steering(steering, questions, len(picks)),
                       on_attempt=on_attempt, mode=mode, dense=dense)
    if picks:
        used = ", ".join(str(i) for i in dict.fromkeys(picks))
        result.window_notes = [f"window{'s' if len(set(picks)) > 1 else ''} {used} of {len(ws)}: the fewest pairs "
                               "so far (each existing pair counted in the window holding its passage)"]
    return result


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
    span: tuple[int, int, str] | None = None,
    concurrency: int = 1,
    steering: Any = None,
    on_attempt: AttemptCallback | None = None,
    mode: str = "quote",
    dense: bool = False,
) -> GenerationResult:
    """Candidates to replace ``pair``, from the window holding its located passage (see
    :func:`choose_pair_window`; the result's ``window_notes`` and each candidate's
    ``window_note`` say which window and why).

    Args:
        pair: the pair (``QAPair`` or ``PairView``).
        document: its document.
        other_questions: the document's other questions, not to be repeated (the pair's own
            question is not among them: a fixed version of it is a fine candidate).
        n_candidates: how many candidates to ask for (samples ``first_sample`` on; a sample
            after the first is asked for a different fact; a candidate repeating an earlier
            one is dropped).
        first_sample: the sample number of the first candidate; pass the number already
            shown to get fresh candidates instead of the cached ones.
        profile, limits, retries, temperature, cancel, on_retry, concurrency, steering,
            on_attempt: see :func:`generate_more`.
        on_progress: called with ``(candidates done, n_candidates)``.
        span: ``(start, end, verdict)`` of the pair's passage in the document when the caller
            has located it already (the session's verdicts); else it is located here.
        mode, dense: see :func:`generate_for_window`. The requests are tagged with the pair
            they replace, so a pair generated a moment ago is never offered back from the cache
            as its own replacement.

    Returns:
        A :class:`GenerationResult` (``cancelled=True`` with what was done on cancel).

    Raises:
        LLMUnavailable, LLMError: from the client.
    """
    choice = choose_pair_window(pair, document.text, span=span)
    result = _generate(client, document, [(choice.window, first_sample + k) for k in range(n_candidates)],
                       list(other_questions), _hint(profile), _limits(profile, limits), retries=retries,
                       temperature=temperature, cancel=cancel, on_retry=on_retry, on_progress=on_progress,
                       focus=choice.span, concurrency=concurrency,
                       steering=_plan_steering(steering, other_questions, n_candidates), on_attempt=on_attempt,
                       mode=mode, dense=dense, tag="replace=" + _pair_digest(pair))
    result.window_notes = [choice.reason, *result.window_notes]
    result.candidates = [replace(c, window_note=choice.reason) for c in result.candidates]
    return result


def _pair_digest(pair: Any) -> str:
    """12 hex characters of sha256 over a pair's question, answer and passage (its cache tag
    in regenerate)."""
    import hashlib

    view = getattr(pair, "pair", pair)
    text = "\x1f".join(str(getattr(pair, k, None) or getattr(view, k, "") or "")
                       for k in ("question", "answer", "passage"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _generate(client: ChatClient, document: Document, jobs: list[tuple[Window, int]], questions: list[str],
              hint: DomainHint | None, limits: Limits, *, retries: int, temperature: float | None,
              cancel: threading.Event | None, on_retry: RetryCallback | None,
              on_progress: ProgressCallback | None, focus: tuple[int, int] | None = None,
              concurrency: int = 1, steering: Sequence[Steering | None] | None = None,
              on_attempt: AttemptCallback | None = None, mode: str = "quote", dense: bool = False,
              tag: str = "") -> GenerationResult:
    """One candidate per ``(window, sample)`` job, up to ``concurrency`` calls at once
    (:func:`mtcb_curate.llm.pool.run_ordered`), committed in job order.

    Every job lists the same ``questions`` (the document's, as they were at the start), so the
    jobs are independent and a rerun sends byte-identical requests whatever the concurrency;
    a candidate whose question repeats one committed before it in this run is dropped (listed
    in ``failures``). Stops at a cancel with the finished prefix. A window cut to the client's
    ``[llm] context_tokens`` is said in ``window_notes``. ``steering``: one per job, or None.

    Raises:
        LLMUnavailable, LLMError: the first failure in job order (the calls before it are cached).
    """
    from mtcb_curate.llm.pool import run_ordered

    out = GenerationResult()
    fixed = list(questions)
    steer = list(steering) if steering is not None else [None] * len(jobs)
    for (window, sample), st in zip(jobs, steer):
        budget = window_budget(client, prompt_messages("", doc_key=document.key, chunk_index=window.index,
                                                       existing_questions=fixed, hint=hint, sample=sample,
                                                       steering=st, mode=mode, dense=dense, limits=limits),
                               extra=proposal_tokens(mode))
        if budget is not None:
            cut = fit_window(document.text, window, budget, focus)
            note = (f"window {window.index} cut to {cut.end_token - cut.start_token:,} of "
                    f"{window.end_token - window.start_token:,} tokens (characters {cut.start:,}-{cut.end:,}) "
                    f"to fit [llm] context_tokens = {client.config.context_tokens:,}")
            if cut != window and note not in out.window_notes:
                out.window_notes.append(note)

    def one(k: int) -> tuple[Candidate | None, list[Attempt]]:
        window, sample = jobs[k]
        return generate_for_window(
            client, doc_key=document.key, doc_text=document.text, window=window, existing_questions=fixed,
            hint=hint, limits=limits, sample=sample, retries=retries, temperature=temperature, cancel=cancel,
            on_retry=on_retry, focus=focus, steering=steer[k], on_attempt=on_attempt, mode=mode, dense=dense,
            tag=tag)

    pooled = run_ordered(one, list(range(len(jobs))), concurrency=concurrency, cancel=cancel,
                         on_progress=on_progress)
    if pooled.error is not None:
        raise pooled.error
    out.cancelled = pooled.cancelled
    committed = list(questions)
    for (window, sample), (cand, attempts) in zip(jobs, pooled.results):
        out.attempts.extend(attempts)
        which = f"chunk {window.index}" + (f" sample {sample}" if sample else "")
        if cand is None:
            problem = "; ".join(attempts[-1].problems) if attempts else ""
            out.failures.append(f"{document.key} {which}: no usable pair after {len(attempts)} attempts"
                                + (f" ({_short(problem, 240)})" if problem else ""))
            continue
        repeated = find_repeat(cand.question, committed[len(questions):])
        if repeated is not None:
            out.failures.append(f"{document.key} {which}: dropped, its question repeats an earlier candidate of "
                                f"this run ({_short(repeated, 120)})")
            continue
        out.candidates.append(cand)
        committed.append(cand.question)
    return out
