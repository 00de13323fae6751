"""Near-duplicate scoring: the thresholds, the link reasons, and the text compared.

Questions and answers are compared on :func:`scored_text` (their first :data:`SCORED_CHARS`
characters, :func:`normalize`d); two questions' similarity is :func:`question_similarity`
(rapidfuzz ``token_sort_ratio``, 0-100). How the scorer and the thresholds were chosen, with
the measurements: ``docs/neardup.md``.
"""

from __future__ import annotations

import re
import unicodedata

from rapidfuzz import fuzz

#: Characters of a question or an answer that near-duplicate scoring reads (see "Bounded reads"
#: in ``docs/neardup.md``): twice ``question_form.MAX_QUESTION_CHARS``, so every question the
#: checklist does not fail is compared whole.
SCORED_CHARS = 1_000
#: Question similarity (0-100, rapidfuzz token_sort_ratio on normalized text) from which two
#: questions are raised as near-duplicates. Chosen on squad-mtcb: see the module docstring.
DEFAULT_THRESHOLD = 85.0
#: Two pairs of one document with the same answer are raised from ``threshold - ANSWER_MARGIN``
#: (70 by default): see the module docstring.
ANSWER_MARGIN = 15.0
#: Overlapping passages are raised when they share at least this many characters (and at least
#: half of the shorter passage). Shorter shared text is a phrase (a name, an amount), not a
#: shared quote; hojicha's 3-50-character entity passages would otherwise chain unrelated
#: questions of a contract together.
MIN_OVERLAP_CHARS = 32
#: Clusters up to this many members carry the question similarity of every pair of members;
#: larger ones only that of their links (a 100-member cluster would need 4,950 scores).
PAIRWISE_MAX = 32
#: Groups of identical questions or passages up to this size link every pair of members;
#: larger groups link each member to the lowest id (the links grow as the square of the size).
CLIQUE_MAX = 64
#: A pass comparing more question pairs than this uses the word-level screen (see the module
#: docstring). 20 million pairs take about 1 s exactly on the project's 2-core machine.
EXACT_MAX_PAIRS = 20_000_000
#: The word-level screen's cutoff is the pass's cutoff ``t`` minus ``max(PREFILTER_MARGIN,
#: 115 - t)`` points (30 from 85 up, 45 at 70): the word-level score falls further below the
#: character-level one as the similarity drops (see the module docstring).
PREFILTER_MARGIN = 30.0
#: One pair that passed the word-level screen costs about this many pairs of a ``cdist`` block
#: to score (measured: 156 against 56 ns per pair for 100-character questions on the
#: project's machine); above, the whole block is scored instead.
_VERIFY_COST = 3
#: Contained passages are found through windows of this many characters taken every ``_STEP``
#: characters: ``_WINDOW + _STEP - 1`` must not exceed ``MIN_OVERLAP_CHARS``.
_WINDOW, _STEP = 24, 8
#: Passages looked up per step of that search (bounds its memory).
_NEEDLE_CHUNK = 20_000
#: Cells (bytes) of one ``cdist`` result block: 32 MiB.
BLOCK_CELLS = 1 << 25

#: Words that do not say what a question asks about: articles, pronouns, prepositions,
#: auxiliaries, question words and the nouns of interrogative phrases ("in what year", "which
#: person", "for what reason", "what number of"). Every other word of a normalized question is a
#: content word; a rewording keeps the content words, two different questions differ in one.
FUNCTION_WORDS = frozenset("""
a an the this that these those there here it its it's itself they them their theirs he him his she her
hers we us our ours you your yours i me my mine one ones
what whats which who whom whose when where why how whether if than then
is are was were be been being am do does did done doing have has had having will would shall should
can could may might must get gets got
of in on at to for from by with within without into onto upon about above below over under between
among through during before after since until till against along across around as per via
and or but nor so also too not no yes both either neither each every all any some such same other
own more most much many few less least very just only even still yet again ever
year years time times person people place places reason reasons number amount kind type way
""".split())
#: Content words of at least this many characters, starting with the same character and of
#: Indel similarity >= ``WORD_TYPO_RATIO`` count as one word (a typo or an inflection:
#: "charecterized"/"characterized", "revenue"/"revenues"); words with digits never do.
WORD_TYPO_MIN_CHARS = 4
WORD_TYPO_RATIO = 85.0
#: How many content words a question may add to another and still ask the same question (the
#: "similar question" rule; see ``docs/neardup.md``). The shorter question keeps at least
#: ``MIN_SHARED_WORDS`` content words unless both have the same ones.
MAX_EXTRA_WORDS = 2
MIN_SHARED_WORDS = 1

REASON_IDENTICAL = "identical question"
REASON_IDENTICAL_ACROSS = "identical question across documents"
REASON_SIMILAR = "similar question"
REASON_SAME_ANSWER = "same answer, similar question"
REASON_SAME_PASSAGE = "same passage"
REASON_OVERLAP = "overlapping passage"
#: Every reason, in the order clusters list them.
REASON_LLM = "LLM: semantic duplicate"

REASONS: tuple[str, ...] = (
    REASON_IDENTICAL,
    REASON_IDENTICAL_ACROSS,
    REASON_SIMILAR,
    REASON_SAME_ANSWER,
    REASON_SAME_PASSAGE,
    REASON_OVERLAP,
    REASON_LLM,  # only from ``find_clusters(extra_links=...)``: the LLM's semantic dedup
)
#: The reasons that say two pairs ask the same question: the only ones that make a
#: near-duplicate cluster (``find_clusters``'s default) and fail the ``duplicates`` check.
QUESTION_REASONS: tuple[str, ...] = (
    REASON_IDENTICAL, REASON_IDENTICAL_ACROSS, REASON_SIMILAR, REASON_SAME_ANSWER, REASON_LLM)
#: The reasons that say two pairs rest on the same evidence (``find_shared_passages``): a
#: warning (``shared_passage``), never a near-duplicate cluster.
PASSAGE_REASONS: tuple[str, ...] = (REASON_SAME_PASSAGE, REASON_OVERLAP)

_BIT = {r: 1 << k for k, r in enumerate(REASONS)}
_QUESTION_BITS = _BIT[REASON_SIMILAR] | _BIT[REASON_SAME_ANSWER]
_QUESTION_MASK = sum(_BIT[r] for r in QUESTION_REASONS)
_PASSAGE_MASK = sum(_BIT[r] for r in PASSAGE_REASONS)

#: The rejection reason ``keep_one`` gives, ``duplicate of #12``; it starts with the
#: ``duplicate`` of ``model.REJECT_REASONS``.
DUPLICATE_REASON_FORMAT = "duplicate of #{}"

_APOSTROPHES = re.compile(r"['\u2019\u2018\u02bc`\u00b4]")
_NON_WORD = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")
_DUPLICATE_OF = re.compile(r"^duplicate of #(\d+)$")


def normalize(text: str) -> str:
    """The text compared for similarity: NFKC, casefold, apostrophes dropped, every other run
    of non-word characters (Unicode ``\\W`` and ``_``) one space, no leading or trailing space.

    ``"What's  3M's FY-2022 revenue?"`` -> ``"whats 3ms fy 2022 revenue"``. Lone surrogates
    become spaces (rapidfuzz cannot take them).
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text.encode("utf-8", "replace").decode("utf-8"))
    text = _APOSTROPHES.sub("", text.casefold())
    return _NON_WORD.sub(" ", text).strip()


def scored_text(text: str) -> str:
    """What near-duplicate scoring reads of a question or answer: ``normalize`` of its first
    ``SCORED_CHARS`` characters, cut again to ``SCORED_CHARS`` (NFKC can lengthen a text)."""
    return normalize(text[:SCORED_CHARS])[:SCORED_CHARS].strip()


def question_numbers(normalized: str) -> tuple[str, ...]:
    """The numbers of a ``normalize``d question (its runs of digits), sorted: two questions
    "differ in a number" when these differ. Sorted, as the similarity score ignores word order:
    a question reworded with its closing clause moved to the front ("In fiscal 2017, based on
    the 10-K, ...") has the same numbers."""
    return tuple(sorted(_DIGITS.findall(normalized)))


#: Interrogative phrases that ask what one word asks, in ``normalize``d text, and that word:
#: a question reworded with one of them ("How many employees..." / "What number of
#: employees...", 83.6) scores under the threshold otherwise.
SAME_ASKING = {"what number of": "how many", "what amount of": "how much", "for what reason": "why",
               "in what place": "where", "which person": "who"}
_ASKING = re.compile(r"\b(?:" + "|".join(map(re.escape, SAME_ASKING)) + r")\b")


def asked(normalized: str) -> str:
    """A ``normalize``d question with every phrase of ``SAME_ASKING`` written as its one word:
    what the similarity score reads (the "identical question" rule reads the text as it is)."""
    if "what" not in normalized and "which" not in normalized:
        return normalized  # every phrase holds one of the two: no search needed
    return _ASKING.sub(lambda m: SAME_ASKING[m.group(0)], normalized)


#: Interrogative phrases that ask for a time or a place, in ``normalize``d text (after
#: ``asked``): "In what year was X founded?" asks what "When was X founded?" asks.
_WHEN_PHRASE = re.compile(r"\b(?:what|which)\s+(?:year|years|date|day|month|century|decade|time|era|period)\b")
_WHERE_PHRASE = re.compile(r"\b(?:what|which)\s+(?:place|country|city|town|region|location|continent|state|"
                           r"province|area)\b")
_WH = {"what": "what", "which": "what", "who": "who", "whom": "who", "whose": "whose", "when": "when",
       "where": "where", "why": "why", "how": "how"}
_WH.update({w + "s": c for w, c in list(_WH.items()) if w not in ("whose", "which")})  # "what's" normalized
_HOW_MUCH = {"much": "how much", "many": "how much", "long": "how long", "old": "how old", "far": "how far",
             "often": "how often", "large": "how much", "big": "how much"}

#: Words that ask opposite things ("What came before X?" / "What came after X?"): two questions
#: on one subject that differ in them ask different things. Our list; each word maps to its
#: group and side.
OPPOSITES: dict[str, tuple[int, int]] = {}
for _g, (_left, _right) in enumerate((
        ("before", "after"), ("first", "last"), ("earliest", "latest"), ("largest", "smallest"),
        ("biggest", "smallest"), ("highest", "lowest"), ("most", "least"), ("maximum", "minimum"),
        ("increase increased increases rise rose risen grow grew growth gain gained", "decrease decreased decreases "
         "fall fell fallen decline declined loss lost"),
        ("start started begin began beginning", "end ended ending"), ("buy bought", "sell sold"),
        ("import imported imports", "export exported exports"), ("north northern", "south southern"),
        ("east eastern", "west western"), ("oldest older", "youngest younger newest"), ("best", "worst"),
        ("win won wins", "lose lost losses"), ("more", "less fewer"), ("top", "bottom"), ("above", "below"),
        ("upper", "lower"), ("inside", "outside"), ("entered", "left"), ("born", "died death"),
        ("founded", "dissolved"), ("open opened", "close closed"))):
    for _side, _words in enumerate((_left, _right)):
        for _w in _words.split():
            OPPOSITES.setdefault(_w, (_g, _side))


def asked_key(normalized: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """What a ``normalize``d (and ``asked``) question asks, for the rule "different things about
    the same subject are not duplicates": its first wh- word as a class ("in what year" is
    ``when``, "in which country" ``where``, "how many" ``how much``; "" when none) and the sides
    of :data:`OPPOSITES` it uses. Two questions are near-duplicates only when these are equal:
    "When did Kublai move the capital?" and "Where did Kublai move the capital?" share every
    content word and evidence, and ask two things."""
    q = _WHEN_PHRASE.sub("when", normalized)
    q = _WHERE_PHRASE.sub("where", q)
    words = q.split()
    wh = ""
    for k, w in enumerate(words):
        if w in _WH:
            wh = _WH[w]
            if wh == "how" and k + 1 < len(words):
                wh = _HOW_MUCH.get(words[k + 1], "how")
            break
    sides = tuple(sorted({OPPOSITES[w] for w in words if w in OPPOSITES}))
    return wh, sides


def question_similarity(a: str, b: str) -> float:
    """Similarity (0-100) of two questions as this module scores them: rapidfuzz
    ``token_sort_ratio`` of the ``scored_text``s (the first ``SCORED_CHARS`` characters,
    normalized) with their interrogative phrases made one word (``asked``); 0 when either
    normalizes to ''."""
    na, nb = asked(scored_text(a)), asked(scored_text(b))
    if not na or not nb:
        return 0.0
    return float(fuzz.ratio(_sorted_words(na), _sorted_words(nb)))


def _sorted_words(normalized: str) -> str:
    return " ".join(sorted(normalized.split()))


def content_compatible(a: frozenset, b: frozenset) -> bool:
    """The content-word part of the "similar question" rule, on two questions' content-word
    sets (typo classes): the same set, or one contains the other with at most
    ``MAX_EXTRA_WORDS`` more and they share at least ``MIN_SHARED_WORDS``. A content word
    replaced by another ("net income" / "operating income") is a different question."""
    if a == b:
        return True
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    return (len(small) >= MIN_SHARED_WORDS and len(big) - len(small) <= MAX_EXTRA_WORDS
            and small <= big)
