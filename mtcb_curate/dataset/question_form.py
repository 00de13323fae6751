"""The form of a question: yes/no, trivial, not a question at all.

MTCB's generation rules (chonkie-inc/mtcb v0.1.0, ``../shared/notes/mtcb.md``) exclude yes/no
questions, subjective ones and trivial ones ("What is the first word?"), and prefer
What/When/Where/Which/How. These are lexical tests, so they are warnings for a curator to
judge, never silent drops.
"""

from __future__ import annotations

import re

#: First words of a yes/no question (auxiliary and modal verbs).
YES_NO_WORDS = frozenset(
    "is are was were am do does did can could will would should shall may might must has have had "
    "isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't hasn't "
    "haven't hadn't".split())

#: Words a question usually starts with (wh-words, auxiliaries, imperatives MTCB's LLMs use).
QUESTION_WORDS = frozenset(
    "what when where which who whom whose why how name list describe explain identify according "
    "in on for by during under to from at as".split()) | YES_NO_WORDS

#: Trivial questions: about the text's form rather than its facts (MTCB's own example is
#: "What is the first word?"). Our list, matched case-insensitively anywhere in the question.
TRIVIAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.I) for p in (
    r"\b(first|last|second|third|next|final)\s+(word|sentence|line|paragraph|character|letter)\b",
    r"\bhow many (words|sentences|lines|paragraphs|characters|letters|pages)\b",
    r"\b(title|name|heading) of (this|the) (document|text|passage|section|page|file|chunk)\b",
    r"\bwhat (is|are) (this|the) (document|text|passage|chunk) about\b",
    r"\bwhat (language|format) is (this|the) (document|text|passage)\b",
))

#: A question longer than this (characters) is over-long: the ``question_form`` check warns,
#: and fails above twice this; a generated candidate is refused. Our bound: the longest question
#: in the shared data is 377 characters (a FinanceBench question with calculation instructions),
#: squad-mtcb's longest is 147, and MTCB asks for one specific fact.
MAX_QUESTION_CHARS = 500

#: Fewer words than this is too short to single out a fact in a corpus (our threshold: "What
#: is revenue?" has three words and fits every 10-K).
MIN_WORDS = 4

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def words(text: str) -> list[str]:
    """The words of ``text`` (letters and digits, with inner apostrophes), lower-cased."""
    return [w.lower() for w in _WORD.findall(text)]


def is_yes_no_question(question: str) -> bool:
    """True when ``question`` starts with an auxiliary or modal verb ("Is ...", "Did ...",
    "Can ..."), the form of a yes/no question."""
    w = words(question)
    return bool(w) and w[0].replace("’", "'") in YES_NO_WORDS


def trivial_reason(question: str) -> str | None:
    """Why ``question`` is trivial (one line), or None: a question about the text's form
    (``TRIVIAL_PATTERNS``) or one of fewer than ``MIN_WORDS`` words."""
    for pattern in TRIVIAL_PATTERNS:
        m = pattern.search(question)
        if m:
            return f"asks about the text's form (\"{m.group(0)}\")"
    n = len(words(question))
    if 0 < n < MIN_WORDS:
        return f"only {n} word{'s' if n != 1 else ''}: too short to single out a fact"
    return None


def is_question(text: str) -> bool:
    """True when ``text`` reads as a question: it ends with "?" or starts with a question word."""
    t = text.strip()
    if not t:
        return False
    w = words(t)
    return t.endswith("?") or (bool(w) and w[0] in QUESTION_WORDS)


def length_problem(question: str) -> tuple[str, str] | None:
    """``("warn", reason)`` when ``question`` has more than ``MAX_QUESTION_CHARS`` characters,
    ``("fail", reason)`` above twice that; None otherwise."""
    n = len(question)
    if n > 2 * MAX_QUESTION_CHARS:
        return "fail", f"over-long question: {n:,} characters, over twice the maximum {MAX_QUESTION_CHARS}"
    if n > MAX_QUESTION_CHARS:
        return "warn", f"over-long question: {n:,} characters, over the maximum {MAX_QUESTION_CHARS}"
    return None


def form_problem(question: str) -> tuple[str, str] | None:
    """The first form problem of ``question`` as ``(severity, reason)``: ``("fail", ...)`` when
    it is empty or over twice ``MAX_QUESTION_CHARS``, ``("warn", ...)`` for an over-long,
    yes/no, trivial or non-question; None when fine."""
    if not question.strip():
        return "fail", "empty question"
    too_long = length_problem(question)
    if too_long is not None:
        return too_long
    if is_yes_no_question(question):
        return "warn", f"yes/no question (starts with \"{words(question)[0]}\")"
    reason = trivial_reason(question)
    if reason:
        return "warn", f"trivial: {reason}"
    if not is_question(question):
        return "warn", "not a question (no question word, no question mark)"
    return None
