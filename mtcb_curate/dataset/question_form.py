"""The form of a question: yes/no, trivial, not a question at all.

MTCB's generation rules (chonkie-inc/mtcb v0.1.0, ``../shared/notes/mtcb.md``) exclude yes/no
questions, subjective ones and trivial ones ("What is the first word?"), and prefer
What/When/Where/Which/How. These are lexical tests, so they are warnings for a curator to
judge, never silent drops. The rules (``docs/checks.md``; fixtures per rule in
``tests/fixtures/checks/question_form.jsonl``):

- a **question** ends with "?", or holds a wh- word anywhere (what, which, who, whom, whose,
  when, where, why, how: so "how much", "how many", "how long", "to what extent", "in which"
  and SQuAD's in-situ "X.25 uses what type") or starts with an imperative that asks
  (:data:`IMPERATIVES`: "Name ...", "List ...", "Calculate ...");
- a **yes/no** question starts with an auxiliary or modal verb and is not a choice question
  ("Is it A or B?": an " or " that is not "or not"); a start of two auxiliaries ("Was was the
  plan ...?") is a typo of a wh- question, said so;
- a **trivial** question asks about the text's form (a form word such as "first word" or
  "last line" together with the text itself: "of the passage", "in this document"; "the final
  word on the matter" and "the first line of defense" ask about facts), or has fewer than
  :data:`MIN_WORDS` words and nothing that singles out a fact (no name, figure or uncommon
  word: "What is revenue?").
"""

from __future__ import annotations

import re

#: First words of a yes/no question (auxiliary and modal verbs).
YES_NO_WORDS = frozenset(
    "is are was were am do does did can could will would should shall may might must has have had "
    "isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't hasn't "
    "haven't hadn't".split())

#: Wh- words: a question that holds one asks for something, wherever it stands.
WH_WORDS = frozenset("what which who whom whose when where why how whither whence".split())

#: First words of an imperative that asks (MTCB's LLMs and FinanceBench write "Name ...",
#: "Calculate ...", "Answer the following question ...").
IMPERATIVES = frozenset(
    "name list describe explain identify give state provide calculate compute find determine define "
    "summarize summarise compare tell mention specify outline indicate answer estimate quantify "
    "discuss enumerate".split())

#: Words a question usually starts with (wh- words, auxiliaries, imperatives, prepositions that
#: open "In which ...", "According to ...").
QUESTION_WORDS = (WH_WORDS | IMPERATIVES | YES_NO_WORDS
                  | frozenset("according in on for by during under to from at as".split()))

_TEXT_ITSELF = (r"(?:of|in|from|on)\s+(?:the|this|that|these|each)\s+"
                r"(?:document|text|passage|chunk|excerpt|paragraph|section|page|article|file|chapter|book|"
                r"story|report|filing|sentence|line)s?\b")

#: Trivial questions: about the text's form rather than its facts (MTCB's own example is
#: "What is the first word?"). Our list, matched case-insensitively anywhere in the question:
#: a form word counts only with the text itself named after it, or as a whole question ("What is
#: the first word?").
TRIVIAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.I) for p in (
    r"\b(?:first|last|second|third|next|final|opening|closing)\s+(?:word|sentence|line|paragraph|character|letter)s?\s+"
    + _TEXT_ITSELF,
    r"^\W*(?:what|which)\s+(?:is|are|was|were)\s+the\s+(?:first|last|second|third|next|final)\s+"
    r"(?:word|sentence|line|paragraph|character|letter)s?\W*$",
    r"\bhow many (?:words|sentences|lines|paragraphs|characters|letters|pages)\b.*" + _TEXT_ITSELF,
    r"\bhow many (?:words|sentences|lines|paragraphs|characters|letters|pages)\s+(?:are|is)\s+there\W*$",
    r"\b(?:title|name|heading) of (?:this|the) (?:document|text|passage|section|page|file|chunk|excerpt)\b",
    r"\bwhat (?:is|are) (?:this|the) (?:document|text|passage|chunk|excerpt) about\b",
    # Which entity the text itself concerns ("What is the name of the company mentioned in this
    # document window?", written by a 1.5B model, docs/llm.md): the whole question, so "Which
    # company is mentioned in the filing as a competitor?" still asks a fact.
    r"\b(?:company|companies|entity|organi[sz]ation|firm|corporation|issuer|registrant)\s+(?:is\s+|are\s+)?"
    r"(?:mentioned|named|discussed|described|referred\s+to|covered)\s+(?:in|by)\s+(?:this|the)\s+"
    r"(?:document|text|passage|chunk|excerpt|section|page|filing|report|window)(?:\s+window)?\W*$",
    r"\bname of the (?:company|entity|organi[sz]ation|firm|corporation|issuer|registrant)\s+(?:in|of)\s+"
    r"(?:this|the)\s+(?:[\w-]+\s+)?(?:document|text|passage|chunk|excerpt|section|page|filing|report|window)"
    r"(?:\s+window)?\W*$",
    r"\bwhat (?:language|format) is (?:this|the) (?:document|text|passage)\b",
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
_STOP = frozenset("a an the of in on at to for from by with and or is are was were be been do does did "
                  "has have had it its this that what which who whom whose when where why how".split())


def words(text: str) -> list[str]:
    """The words of ``text`` (letters and digits, with inner apostrophes), lower-cased."""
    return [w.lower() for w in _WORD.findall(text)]


def _norm(w: str) -> str:
    return w.replace("’", "'")


def is_choice_question(question: str) -> bool:
    """True when ``question`` offers alternatives ("Is X a city or a region?", "Did it rise or
    fall?"): an " or " not followed by "not"."""
    w = words(question)
    return any(x == "or" and (i + 1 < len(w) and w[i + 1] != "not") for i, x in enumerate(w))


def is_yes_no_question(question: str) -> bool:
    """True when ``question`` starts with an auxiliary or modal verb ("Is ...", "Did ...",
    "Can ...") and is not a choice question ("Is it A or B?") nor a doubled auxiliary ("Was
    was ...", a typo)."""
    w = words(question)
    if not w or _norm(w[0]) not in YES_NO_WORDS:
        return False
    if len(w) > 1 and _norm(w[1]) in YES_NO_WORDS and w[1] == w[0]:
        return False
    return not is_choice_question(question)


def _singles_out(question: str) -> bool:
    """Something in a short question that singles out a fact: a name (a capitalized word other
    than a leading question word, an all-caps or mixed-case token, or a word that is no common
    English word: :func:`_rare`) or a figure. "Who sells bells?" and "What is net income?"
    single out nothing in a corpus."""
    tokens = _WORD.findall(question)
    for k, t in enumerate(tokens):
        if any(ch.isdigit() for ch in t):
            return True
        if t[:1].isupper() and (k > 0 or _norm(t.lower()) not in QUESTION_WORDS):
            return True
        if any(ch.isupper() for ch in t[1:]):
            return True
    return any(_rare(t) for t in tokens if t.lower() not in _STOP)


def _rare(word: str) -> bool:
    """A word that is no common English word: more than one ``cl100k_base`` token with its
    leading space (" revenue" is one token; a lower-cased name such as " otachi" or " telenet"
    is several). False when the encoding cannot be loaded."""
    try:
        from mtcb_curate.dataset.tokens import encoding

        return len(encoding().encode(" " + word.lower())) > 1
    except Exception:  # noqa: BLE001 - no tokenizer: the short question is judged without it
        return False


def trivial_reason(question: str) -> str | None:
    """Why ``question`` is trivial (one line), or None: a question about the text's form
    (``TRIVIAL_PATTERNS``) or one of fewer than ``MIN_WORDS`` words that singles out nothing."""
    for pattern in TRIVIAL_PATTERNS:
        m = pattern.search(question)
        if m:
            return f"asks about the text's form (\"{' '.join(m.group(0).split()).strip(' ?')}\")"
    n = len(words(question))
    if 0 < n < MIN_WORDS and not _singles_out(question):
        return f"only {n} word{'s' if n != 1 else ''} and no name or figure: too short to single out a fact"
    return None


def has_wh_word(text: str) -> bool:
    """True when ``text`` holds a wh- word anywhere (:data:`WH_WORDS`)."""
    return any(w in WH_WORDS for w in words(text))


def is_question(text: str) -> bool:
    """True when ``text`` reads as a question: it ends with "?", holds a wh- word anywhere,
    or starts with a question word or an imperative that asks."""
    t = text.strip()
    if not t:
        return False
    w = words(t)
    return t.endswith("?") or has_wh_word(t) or (bool(w) and _norm(w[0]) in QUESTION_WORDS)


def not_question_reason(text: str) -> str:
    """Why ``text`` is not a question, naming what it lacks (call when :func:`is_question` is
    False): an unfinished statement, or a phrase with no question word and no "?"."""
    t = text.rstrip()
    w = words(t)
    last = w[-1] if w else ""
    if last in {"as", "to", "of", "by", "called", "named", "the", "a", "an", "is", "was", "were", "are", "into",
                "with", "for", "from", "in", "on", "at"}:
        return f"not a question: an unfinished statement (ends with \"{last}\", no question word, no question mark)"
    return "not a question: no question word (what, who, how ...), no imperative and no question mark"


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
    yes/no, trivial or non-question (module docstring); None when fine."""
    if not question.strip():
        return "fail", "empty question"
    too_long = length_problem(question)
    if too_long is not None:
        return too_long
    w = words(question)
    if len(w) > 1 and _norm(w[0]) in YES_NO_WORDS and w[1] == w[0]:
        return "warn", f"starts with \"{' '.join(question.split()[:2])}\": a typo (\"What {w[1]} ...\"?)"
    if is_yes_no_question(question):
        return "warn", f"yes/no question (starts with \"{w[0]}\")"
    reason = trivial_reason(question)
    if reason:
        return "warn", f"trivial: {reason}"
    if not is_question(question):
        return "warn", not_question_reason(question)
    return None
