"""Question forms and question types, tagged by rules (ours; lexical, so a curator's guide,
never a filter that drops pairs).

**Form** (:func:`question_form`, one of :data:`FORMS`), the first rule that holds:

1. ``yes-no``: the question starts with an auxiliary or modal verb ("Is ...", "Did ...";
   ``dataset.question_form.is_yes_no_question``);
2. ``list``: its first word is "list", "enumerate" or "name" ("Name the three segments");
3. the first wh-word among its words: "what" -> ``what``, "which" -> ``which``, "how much" /
   "how many" -> ``how much``, "when" -> ``when``, "who" / "whom" / "whose" -> ``who``, "why"
   -> ``why`` ("In which year ..." is ``which``); "where" and any other "how" fall through;
4. ``other``.

**Type** (:func:`question_type`, one of :data:`TYPES`), the first rule that holds:

1. ``table``: the passage reads as a table: at least 3 non-empty lines of which at least half
   are figures (digits with ``$ % , . ( ) -`` only), or at least 2 lines holding ``|`` or a tab;
2. ``definition``: the question says "define", "definition", "meaning of", "mean?", "refer to",
   "meant by", or starts "what is a/an ...";
3. ``list``: the form is ``list``, or the answer has at least 3 items separated by commas,
   semicolons, "and" or lines, none of them a bare number;
4. ``date``: the form is ``when``, the question asks "what/which year|date|month|quarter", or
   the answer (at most 40 characters) holds a date: a month name, a ``YYYY-MM-DD`` or
   ``MM/DD/YYYY`` date, or is only a year;
5. ``numeric``: the form is ``how much``, or the answer (at most 80 characters) holds a number;
6. ``entity``: the form is ``who`` or ``which``, or the answer is at most 6 words and starts
   with a capital letter or a digit;
7. ``other``.
"""

from __future__ import annotations

import re

from mtcb_curate.dataset.question_form import _WORD, YES_NO_WORDS, words

#: Question forms, in display order.
FORMS: tuple[str, ...] = ("what", "which", "how much", "when", "who", "why", "list", "yes-no", "other")
#: Question types, in display order.
TYPES: tuple[str, ...] = ("numeric", "date", "entity", "definition", "list", "table", "other")

_WH = {"what": "what", "which": "which", "when": "when", "who": "who", "whom": "who", "whose": "who",
       "why": "why"}
_LIST_FIRST = frozenset({"list", "enumerate", "name"})
_FIGURE_LINE = re.compile(r"^[\s$€£%,.()\-–—0-9]*[0-9][\s$€£%,.()\-–—0-9]*$")
_NUMBER = re.compile(r"\d")
_MONTH = re.compile(r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
                    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?\s+\d", re.I)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
_YEAR_ONLY = re.compile(r"^\s*(fiscal\s+(year\s+)?)?(19|20)\d{2}\s*\.?\s*$", re.I)
_DATE_Q = re.compile(r"\b(what|which)\s+(year|date|month|quarter|day)\b", re.I)
_DEFINITION = re.compile(r"\b(define|definition|meaning of|meant by|refers? to)\b|\bmean\s*\?|^\s*what\s+(is|are)\s+an?\s",
                         re.I)
_ITEM_SPLIT = re.compile(r"[,;\n]|\band\b")
# _DEFINITION in two parts (the unanchored one is the slow one), and the words an ASCII question
# must hold (lower-cased) for each unanchored pattern to match: a quick test that skips the search.
_DEFINITION_ANYWHERE = re.compile(r"\b(define|definition|meaning of|meant by|refers? to)\b|\bmean\s*\?", re.I)
_DEFINITION_START = re.compile(r"\s*what\s+(is|are)\s+an?\s", re.I)
_DEFINITION_NEEDS = ("defin", "mean", "refer")
_DATE_Q_NEEDS = ("year", "date", "month", "quarter", "day")


def _needs(question: str, needed: tuple[str, ...]) -> bool:
    """False only when ``question`` is ASCII and holds none of ``needed`` in any case (a
    case-insensitive pattern needing one of them cannot match; non-ASCII text is not judged:
    ``re.I`` folds a few non-ASCII letters to ASCII ones)."""
    if not question.isascii():
        return True
    low = question.lower()
    return any(w in low for w in needed)


def _is_definition(question: str) -> bool:
    """``_DEFINITION.search(question)`` is not None, faster."""
    return ((_needs(question, _DEFINITION_NEEDS) and _DEFINITION_ANYWHERE.search(question) is not None)
            or _DEFINITION_START.match(question) is not None)


def _words(text: str) -> list[str]:
    """``dataset.question_form.words(text)``, faster on ASCII text (lower-cased before the
    words are found: the same words there)."""
    return _WORD.findall(text.lower()) if text.isascii() else words(text)


def question_form(question: str) -> str:
    """The form of ``question`` (one of :data:`FORMS`; rules in the module docstring)."""
    w = _words(question)
    if not w:
        return "other"
    if w[0].replace("’", "'") in YES_NO_WORDS:  # dataset.question_form.is_yes_no_question
        return "yes-no"
    if w[0] in _LIST_FIRST:
        return "list"
    for i, word in enumerate(w):
        if word == "how" and i + 1 < len(w) and w[i + 1] in ("much", "many"):
            return "how much"
        if word in _WH:
            return _WH[word]
    return "other"


def _is_table(passage: str) -> bool:
    lines = [ln for ln in passage.splitlines() if ln.strip()]
    if sum(1 for ln in lines if "|" in ln or "\t" in ln) >= 2:
        return True
    return len(lines) >= 3 and sum(1 for ln in lines if _FIGURE_LINE.match(ln)) * 2 >= len(lines)


def _is_list(answer: str) -> bool:
    items = [s.strip() for s in _ITEM_SPLIT.split(answer) if s.strip()]
    return len(items) >= 3 and not any(_FIGURE_LINE.match(s) for s in items)


def question_type(question: str, answer: str, passage: str = "", form: str | None = None) -> str:
    """The type of a pair's question (one of :data:`TYPES`; rules in the module docstring).

    Args:
        question, answer, passage: the pair's current texts.
        form: ``question_form(question)`` when already known.
    """
    form = question_form(question) if form is None else form
    if _is_table(passage):
        return "table"
    if _is_definition(question):
        return "definition"
    if form == "list" or _is_list(answer):
        return "list"
    short = answer.strip()
    if (form == "when" or (_needs(question, _DATE_Q_NEEDS) and _DATE_Q.search(question))
            or (len(short) <= 40 and (_MONTH.search(short) or _ISO_DATE.search(short) or _YEAR_ONLY.match(short)))):
        return "date"
    if form == "how much" or (len(short) <= 80 and _NUMBER.search(short)):
        return "numeric"
    aw = short.split()
    if form in ("who", "which") or (0 < len(aw) <= 6 and (aw[0][:1].isupper() or aw[0][:1].isdigit())):
        return "entity"
    return "other"
