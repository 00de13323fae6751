"""Filters over a review session: which pairs the queue shows.

A :class:`Filter` combines criteria (all must hold; an unset one holds for every pair): status,
verdict, a check's failures or warnings, document key, edited, generated, added by hand, has a
note, question form and question type (``stats.questions``' rules, on the current texts), the
findability preview's outcome across the configured chunkers (``is:discriminating``,
``is:found-by-all``, ``is:found-by-none``: ``preview.separation``), and text in the question, answer or passage (plain or a regular expression, smart case:
case-insensitive unless the query has an upper-case letter). :func:`apply` returns the ids in
queue order; :func:`parse` reads the filter bar's one line (``status:undecided verdict:fuzzy
fails:verbatim doc:AAPL is:edited -is:generated has:note form:what,which type:numeric /regex/
plain words``).

Cost: :func:`apply` reads the session's texts without building a ``PairView`` per pair, and runs
the cheap criteria first. From ``ARROW_MIN_PAIRS`` pairs a text query runs over each field's
loaded texts at once, by RE2 over an Arrow column (``app.re2``, same answers as Python's ``re``);
Python's ``re`` searches only edited and added pairs' texts and those RE2 might answer
differently, and every text when the pattern has no RE2 equivalent (look-arounds,
back-references) or the session is smaller. :func:`warm` builds the caches ahead.
Check problems given as a callable (``checks.pair.pair_problems`` per pair) are evaluated last,
on the pairs the other criteria left. Figures: ``benchmarks/bench_filters.py``.
"""

from __future__ import annotations

import re
import shlex
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from mtcb_curate.app import re2
from mtcb_curate.dataset.model import PASSAGE_FIELD, Status
from mtcb_curate.errors import CurateError
from mtcb_curate.stats.questions import FORMS as _FORMS
from mtcb_curate.stats.questions import TYPES as _TYPES

#: The text fields a text query searches, by their short names in the filter bar.
TEXT_FIELDS: dict[str, str] = {"q": "question", "a": "answer", "p": PASSAGE_FIELD}
#: Verdict names a filter accepts (``unverified``: no cached verdict yet).
VERDICTS = ("exact", "normalized", "fuzzy", "missing", "empty", "unverified")
#: ``origin`` values of pairs written by the curator (the hand-written pairs' origin).
HAND_ORIGINS = frozenset({"hand"})
#: Check levels: ``fail`` (fails the check), ``warn`` (warns only), ``any`` (either).
LEVELS = ("fail", "warn", "any")


class FilterError(CurateError):
    """A filter that cannot be applied (a bad regular expression, an unknown status, verdict or
    word); the message is one line."""


@dataclass(frozen=True)
class Filter:
    """Which pairs to show; every set criterion must hold (see the module docstring).

    Attributes:
        statuses: show pairs with one of these statuses (empty: any).
        verdicts: one of these verdicts of the current passage (``VERDICTS``; empty: any).
        check: a check id (``checks.gate.CHECK_IDS``): pairs it would fail or warn.
        level: ``fail``, ``warn`` or ``any`` for ``check``.
        doc_key: the pair's document key (case-insensitive, whole key).
        edited, generated, by_hand, has_note: True only those, False only the others, None any.
        forms: one of these question forms (``stats.questions.FORMS``; empty: any).
        types: one of these question types (``stats.questions.TYPES``; empty: any).
        text: the text query ('' none); ``regex``: it is a regular expression.
        fields: the text fields searched (``question``, ``answer``, ``supporting_passage``).
        discriminating, found_by_all, found_by_none: True only the pairs with that outcome
            flag (``preview.separation.FLAGS``), False only those without it, None any; a pair
            the preview has not scored under every configured chunker matches neither.
    """

    statuses: frozenset[Status] = frozenset()
    verdicts: frozenset[str] = frozenset()
    check: str | None = None
    level: str = "any"
    doc_key: str | None = None
    edited: bool | None = None
    generated: bool | None = None
    by_hand: bool | None = None
    has_note: bool | None = None
    forms: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    text: str = ""
    regex: bool = False
    fields: tuple[str, ...] = ("question", "answer", PASSAGE_FIELD)
    discriminating: bool | None = None
    found_by_all: bool | None = None
    found_by_none: bool | None = None

    @property
    def empty(self) -> bool:
        """True when every pair passes (no criterion set)."""
        return self == Filter(fields=self.fields)

    def pattern(self) -> re.Pattern[str] | None:
        """The compiled text query (a plain query escaped), smart case; None without a query.

        Raises:
            FilterError: a bad regular expression (one line: where and why).
        """
        if not self.text:
            return None
        flags = 0 if any(c.isupper() for c in self.text) else re.IGNORECASE
        try:
            return re.compile(self.text if self.regex else re.escape(self.text), flags)
        except re.error as exc:
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            raise FilterError(f"bad regular expression {self.text!r}: {exc.msg}{where}") from None

    def describe(self) -> str:
        """The filter as the bar's line (``parse(describe())`` gives it back); '' for none."""
        out = []
        if self.statuses:
            out.append("status:" + ",".join(sorted(s.value for s in self.statuses)))
        if self.verdicts:
            out.append("verdict:" + ",".join(sorted(self.verdicts)))
        if self.check:
            out.append({"fail": "fails:", "warn": "warns:", "any": "check:"}[self.level] + self.check)
        if self.doc_key is not None:
            out.append("doc:" + _quote(self.doc_key))
        for name, value in (("edited", self.edited), ("generated", self.generated), ("hand", self.by_hand),
                            ("note", self.has_note), ("discriminating", self.discriminating),
                            ("found-by-all", self.found_by_all), ("found-by-none", self.found_by_none)):
            if value is not None:
                out.append(("" if value else "-") + ("has:" if name == "note" else "is:") + name)
        if self.forms:
            out.append("form:" + _quote(",".join(f for f in _FORMS if f in self.forms)))
        if self.types:
            out.append("type:" + ",".join(t for t in _TYPES if t in self.types))
        if tuple(self.fields) != Filter.fields:
            out.append("in:" + ",".join(k for k, f in TEXT_FIELDS.items() if f in self.fields))
        if self.text:
            out.append("re:" + _quote(self.text) if self.regex else _quote(self.text))
        return " ".join(out)


def _names(word: str, value: str, known: tuple[str, ...], what: str) -> set[str]:
    """The comma-separated names in ``value`` (``how-much``/``how_much`` for ``how much``)."""
    got = {v.strip().lower().replace("_", " ") for v in value.split(",") if v.strip()}
    got = {"how much" if v == "how-much" else v for v in got}
    bad = got - set(known)
    if bad or not got:
        raise FilterError(f"unknown {what} in {word!r}: use {', '.join(k.replace(' ', '-') for k in known)}")
    return got


def _quote(s: str) -> str:
    return shlex.quote(s) if (not s or any(c.isspace() or c in "'\"\\" for c in s)) else s


def parse(line: str) -> Filter:
    """Read the filter bar's line: space-separated words, ``-`` before a flag negates it:

    - ``status:undecided,flagged`` (or ``is:accepted`` ...), ``verdict:fuzzy,missing``;
    - ``fails:CHECK``, ``warns:CHECK``, ``check:CHECK`` (fails or warns);
    - ``doc:KEY``; ``is:edited``, ``is:generated``, ``is:hand``, ``has:note``;
    - ``is:discriminating`` (the chunkers' outcomes differ at some k), ``is:found-by-all``,
      ``is:found-by-none`` (every / no chunker finds it at the largest k);
    - ``form:what,how-much`` (question forms), ``type:numeric,date`` (question types);
    - ``in:q,a,p`` (which texts a query searches); ``re:PATTERN`` or ``/PATTERN/`` a regular
      expression; any other words: plain text (joined by one space; quotes keep spaces).

    Raises:
        FilterError: unbalanced quotes, an unknown status, verdict, flag or field, or a bad
        regular expression (one line).
    """
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    lexer.escape = ""  # a backslash is the regular expression's (\d, \b), never shell quoting
    try:
        words = list(lexer)
    except ValueError as exc:
        raise FilterError(f"cannot read the filter: {exc}") from None
    f = Filter()
    plain: list[str] = []
    for word in words:
        neg = word.startswith("-") and ":" in word
        body = word[1:] if neg else word
        name, sep, value = body.partition(":")
        name = name.lower()
        if len(word) >= 2 and word.startswith("/") and word.endswith("/"):
            f = replace(f, text=word[1:-1], regex=True)
        elif not sep or name not in ("status", "verdict", "fails", "warns", "check", "doc", "is", "has", "in", "re",
                                                     "form", "type"):
            plain.append(word)
        elif name == "status" or (name == "is" and value.lower() in {s.value for s in Status}):
            try:
                f = replace(f, statuses=f.statuses | {Status(v.strip().lower()) for v in value.split(",") if v.strip()})
            except ValueError:
                raise FilterError(f"unknown status in {word!r}: use {', '.join(s.value for s in Status)}") from None
        elif name == "verdict":
            got = {v.strip().lower() for v in value.split(",") if v.strip()}
            bad = got - set(VERDICTS)
            if bad:
                raise FilterError(f"unknown verdict {', '.join(sorted(bad))}: use {', '.join(VERDICTS)}")
            f = replace(f, verdicts=f.verdicts | got)
        elif name in ("fails", "warns", "check"):
            if not value:
                raise FilterError(f"{name}: needs a check id, e.g. {name}:verbatim")
            f = replace(f, check=value, level={"fails": "fail", "warns": "warn", "check": "any"}[name])
        elif name == "doc":
            f = replace(f, doc_key=value)
        elif name == "form":
            f = replace(f, forms=f.forms | _names(word, value, _FORMS, "question form"))
        elif name == "type":
            f = replace(f, types=f.types | _names(word, value, _TYPES, "question type"))
        elif name in ("is", "has"):
            flag = {"edited": "edited", "generated": "generated", "hand": "by_hand", "note": "has_note",
                    "notes": "has_note", "discriminating": "discriminating", "found-by-all": "found_by_all",
                    "found-by-none": "found_by_none"}.get(value.lower())
            if flag is None:
                raise FilterError(f"unknown flag {word!r}: use is:edited, is:generated, is:hand, has:note, "
                                  "is:discriminating, is:found-by-all, is:found-by-none or a status")
            f = replace(f, **{flag: not neg})
        elif name == "in":
            keys = [v.strip().lower() for v in value.split(",") if v.strip()]
            bad = [k for k in keys if k not in TEXT_FIELDS]
            if bad or not keys:
                raise FilterError(f"unknown field in {word!r}: use in:q,a,p (question, answer, passage)")
            f = replace(f, fields=tuple(TEXT_FIELDS[k] for k in TEXT_FIELDS if k in keys))
        elif name == "re":
            f = replace(f, text=value, regex=True)
    if plain:
        if f.text:
            raise FilterError("one text query at a time: a regular expression and plain words were both given")
        f = replace(f, text=" ".join(plain))
    f.pattern()  # a bad regular expression is reported now, not at apply
    return f


def _origin_hand(origin: str) -> bool:
    return origin in HAND_ORIGINS


def apply(session, f: Filter, *, verdict_of: Callable[[int], str | None] | None = None,
          problems: Callable[[int], Iterable] | Mapping[str, object] | None = None,
          note_of: Callable[[int], str | None] | None = None, ids: Iterable[int] | None = None,
          outcomes_of: Callable[[int], frozenset[str] | None] | None = None) -> list[int]:
    """The ids of ``session``'s pairs that pass ``f``, in queue order (ascending).

    Args:
        session: a ``ReviewSession``.
        f: the filter.
        verdict_of: pid -> the current passage's verdict name, or None when not verified yet
            (the screen's ``Verdicts.cached``); needed by a verdict criterion (without it every
            pair is ``unverified``).
        problems: for a check criterion: either pid -> the pair's ``checks.pair.PairProblem``s
            (``pair_problems``; evaluated only on the pairs the other criteria kept), or a
            checklist's results by check id (``CheckResult``: ``reasons`` and ``failing``).
            Without it a check criterion matches no pair.
        note_of: pid -> the pair's note (None or '' for none); default ``session.note`` when the
            session has notes, else no pair has one.
        ids: limit to these ids (default: every pair).
        outcomes_of: pid -> the pair's outcome flags across the configured chunkers
            (``preview.separation.pair_flags`` of its current texts), or None when the preview
            has not scored it under every one; needed by ``is:discriminating``,
            ``is:found-by-all`` and ``is:found-by-none`` (without it they match no pair).

    Raises:
        FilterError: a bad regular expression.
    """
    pattern = f.pattern()
    pairs = session.pairs
    out = list(range(len(pairs))) if ids is None else sorted(set(ids))
    if f.statuses:
        statuses = f.statuses
        out = [i for i in out if session.status(i) in statuses]
    if f.doc_key is not None:
        key = f.doc_key.casefold()
        out = [i for i in out if pairs[i].doc_key.casefold() == key]
    if f.generated is not None:
        want = f.generated
        out = [i for i in out if (pairs[i].origin != "source" and not _origin_hand(pairs[i].origin)) == want]
    if f.by_hand is not None:
        want = f.by_hand
        out = [i for i in out if _origin_hand(pairs[i].origin) == want]
    if f.edited is not None:
        edited = _edited(session)
        want = f.edited
        out = [i for i in out if (i in edited) == want]
    if f.has_note is not None:
        if note_of is None:
            note_of = getattr(session, "note", None) or (lambda _pid: None)
        want = f.has_note
        out = [i for i in out if bool(note_of(i)) == want]
    if f.verdicts:
        wanted = f.verdicts
        get = verdict_of or (lambda _pid: None)
        out = [i for i in out if (get(i) or "unverified") in wanted]
    wanted = [(flag, want) for flag, want in (("discriminating", f.discriminating), ("found-by-all", f.found_by_all),
                                              ("found-by-none", f.found_by_none)) if want is not None]
    if wanted:
        get = outcomes_of or (lambda _pid: None)
        keep = []
        for i in out:
            flags = get(i)
            if flags is not None and all((flag in flags) == want for flag, want in wanted):
                keep.append(i)
        out = keep
    if f.forms or f.types:
        out = _by_question(session, f, out)
    if pattern is not None:
        out = _by_text(session, f, pattern, out)
    if f.check:
        out = _by_check(out, f.check, f.level, problems)
    return out


#: Per session: field -> the lower-cased loaded texts (plain queries in any case compare
#: against these; edited texts are lowered on the fly), and (query key) -> matching ids for
#: the current texts (a filtered view is applied again after every decision: texts unchanged).
_LOWER: "weakref.WeakKeyDictionary[Any, dict[str, list[str]]]" = weakref.WeakKeyDictionary()
_MATCHES: "weakref.WeakKeyDictionary[Any, dict[tuple, frozenset[int]]]" = weakref.WeakKeyDictionary()
_MATCH_CACHE_SIZE = 16


#: Per session: (field, lower-cased) -> the loaded texts as one Arrow column (None: a text
#: Arrow cannot hold, such as a lone surrogate), and its pairs holding a word character outside
#: ASCII (where RE2's ``\b`` differs from Python's).
_COLUMNS: "weakref.WeakKeyDictionary[Any, dict[tuple[str, bool], _Column | None]]" = weakref.WeakKeyDictionary()
_BUILD = threading.RLock()  # the caches may be built by a thread and by the app's own


@dataclass
class _Column:
    texts: Any  # pyarrow.LargeStringArray, one row per loaded pair
    source: list[str]  # the same texts as Python strings
    non_ascii_word: frozenset[int] | None = None


#: Sessions of at least this many pairs search text queries by RE2 over Arrow columns; smaller
#: ones by Python's ``re`` text by text, which is fast enough there and spares the memory Arrow's
#: compute functions take once used (figures: README, ``benchmarks/bench_filters.py``).
ARROW_MIN_PAIRS = 4000


def warm(session) -> None:
    """Build the caches a text query reads (lower-cased texts; from ``ARROW_MIN_PAIRS`` pairs,
    the Arrow columns), so the first query of a session does not (the review screen calls it in
    a thread when the filter bar opens; thread-safe). At 100,000 pairs about a second of CPU
    and 100 MB: built only for a curator who filters by text."""
    for name in TEXT_FIELDS.values():
        _lowered(session, name)
    if len(session.pairs) < ARROW_MIN_PAIRS:
        return
    import pyarrow.compute  # noqa: F401

    re2.category_ranges(r"\d")  # the six categories are made together
    for name in TEXT_FIELDS.values():
        for lowered in (True, False):
            col = _column(session, name, lowered)
            if col is not None:
                _non_ascii_word(col)


def _non_ascii_word(col: _Column) -> frozenset[int]:
    """The rows of ``col`` holding a word character outside ASCII (cached on the column)."""
    import pyarrow.compute as pc

    with _BUILD:
        if col.non_ascii_word is None:  # Python's \w on the texts outside ASCII only
            wide = _true_rows(pc.invert(pc.string_is_ascii(col.texts)))
            col.non_ascii_word = frozenset(i for i in wide if re2.non_ascii_word(col.source[i]))
        return col.non_ascii_word


def _lowered(session, name: str) -> list[str]:
    """The lower-cased loaded ``name`` texts of every pair (cached; added pairs appended)."""
    with _BUILD:
        per = _LOWER.setdefault(session, {})
        low = per.get(name)
        pairs = session.pairs
        attr = "passage" if name == PASSAGE_FIELD else name
        loaded = len(session.dataset.pairs)  # the source's rows never change; added pairs may
        if low is None or len(low) < loaded:
            low = per[name] = [getattr(p, attr).lower() for p in pairs[:loaded]]
        del low[loaded:]
        low.extend(getattr(p, attr).lower() for p in pairs[loaded:])
        return low


def _column(session, name: str, lowered: bool) -> _Column | None:
    """The loaded pairs' ``name`` texts (lower-cased or as loaded) as an Arrow column (cached)."""
    with _BUILD:
        per = _COLUMNS.setdefault(session, {})
        if (name, lowered) not in per:
            import pyarrow as pa

            loaded = len(session.dataset.pairs)
            attr = "passage" if name == PASSAGE_FIELD else name
            texts = _lowered(session, name)[:loaded] if lowered else [getattr(p, attr) for p in
                                                                      session.pairs[:loaded]]
            try:
                per[(name, lowered)] = _Column(_string_array(texts), texts)
            except (UnicodeError, pa.ArrowException):  # a lone surrogate: Python searches
                per[(name, lowered)] = None
        return per[(name, lowered)]


def _string_array(texts: list[str]) -> Any:
    """``texts`` as one Arrow large-string array, built from their UTF-8 bytes (not
    ``pyarrow.array(list)``: that probes for pandas and so imports it, about 40 MB).

    Raises:
        UnicodeEncodeError: a text holding a lone surrogate.
    """
    import numpy as np
    import pyarrow as pa

    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = b"".join(encoded)
    return pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))


def _true_rows(mask: Any) -> list[int]:
    """The row numbers where a boolean Arrow array is true (without ``to_numpy``, which imports
    pandas)."""
    import numpy as np
    import pyarrow.compute as pc

    rows = pc.indices_nonzero(mask)
    if not len(rows):
        return []
    return np.frombuffer(rows.buffers()[1], dtype=np.uint64, count=len(rows), offset=rows.offset * 8).tolist()


def _column_hits(session, name: str, lowered: bool,
                 translation: re2.Translation) -> tuple[set[int], set[int]] | None:
    """The loaded pairs whose ``name`` text (lower-cased or as loaded) matches ``translation``
    (RE2 over the Arrow column), and the pairs the caller must search
    itself (a ``\b`` pattern over a text with a word character outside ASCII); None where the
    column cannot be searched (the caller searches every text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _column(session, name, lowered)
    if col is None:
        return None
    try:
        mask = pc.match_substring_regex(col.texts, translation.pattern)
    except pa.ArrowException:  # RE2 refused it (too large a program): Python searches
        return None
    hits = set(_true_rows(mask))
    unsure = set(_non_ascii_word(col)) if translation.boundary else set()
    return hits - unsure, unsure


def _by_text(session, f: Filter, pattern: re.Pattern[str], out: list[int]) -> list[int]:
    """``out`` limited to the pairs whose ``f.fields`` texts match ``pattern`` (cached per
    query and texts: the edits and the number of pairs are the texts' signature)."""
    edited = {name: session.edited_texts(name) for name in f.fields}
    added = tuple((p.question, p.answer, p.passage) for p in session.pairs[len(session.dataset.pairs):])
    sig = (pattern.pattern, pattern.flags, tuple(f.fields), len(session.pairs), added,
           tuple(tuple(sorted(e.items())) for e in edited.values()))
    cache = _MATCHES.setdefault(session, {})
    hit = cache.get(sig)
    if hit is None:
        hit = frozenset(_match_all(session, f, pattern, edited))
        if len(cache) >= _MATCH_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[sig] = hit
    return [i for i in out if i in hit]


def _match_all(session, f: Filter, pattern: re.Pattern[str], edited: dict[str, dict[int, str]]) -> set[int]:
    n = len(session.pairs)
    found: set[int] = set()
    plain_lower = not f.regex and bool(pattern.flags & re.IGNORECASE)
    q = f.text.lower()
    folded = None if plain_lower or not pattern.flags & re.IGNORECASE else folded_pattern(pattern)
    searched = folded if folded is not None else pattern
    search, lit = searched.search, ("" if plain_lower else required_literal(searched))  # parsed once, not per field
    # A plain query is a literal: RE2 finds it faster than ``in`` does (no per-text call).
    translation = (re2.translate(re.compile(re.escape(q)) if plain_lower else searched)
                   if n >= ARROW_MIN_PAIRS else None)
    loaded = len(session.dataset.pairs)
    lowered = plain_lower or folded is not None
    test = (lambda t: q in t) if plain_lower else (lambda t: _hit(search, lit, t))  # noqa: E731
    for name in f.fields:
        if len(found) == n:
            break
        ed = edited[name]
        if lowered:  # smart case: the case-sensitive pattern (or the plain query) over lower-cased texts
            low = _lowered(session, name)
            text_of = lambda i, ed=ed, low=low: ed[i].lower() if i in ed else low[i]  # noqa: E731
        else:
            text_of = _texts(session, name)
        got = None if translation is None else _column_hits(session, name, lowered, translation)
        if got is None:
            candidates: Iterable[int] = range(n)
        else:
            # The column holds the loaded texts: edited and added pairs, and those RE2 may
            # answer differently, are searched here one by one.
            hits, unsure = got
            found |= hits - ed.keys()
            candidates = sorted((unsure | ed.keys() | set(range(loaded, n))) - found)
        found.update(i for i in candidates if i < n and i not in found and test(text_of(i)))
    return found


def _hit(search: Callable[[str], object], literal: str, text: str) -> bool:
    """True when ``search`` matches ``text``; ``literal`` (every match holds it) rules out
    texts without it by a plain substring test first."""
    return (not literal or literal in text) and search(text) is not None


def folded_pattern(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` (compiled with ``re.IGNORECASE``) without that flag, to run over lower-cased
    texts, or None where that would match differently: a literal or a class range whose
    characters are not all lower case (``\\x41``, ``[\\x41-\\x5a]``), or a pattern the
    parser of this Python cannot walk. Python's ``re`` searches a case-sensitive pattern much
    faster than an ``IGNORECASE`` one (no literal fast path under that flag).

    Lower-casing can change a text's length (``İ`` becomes two characters), so positions in the
    lower-cased text are not positions in the original: use this for yes/no tests only.
    """
    try:
        tree = _parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - a private parser: any surprise means the slow path
        return None
    if tree is None or not _all_lower(tree):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


def required_literal(pattern: re.Pattern[str]) -> str:
    """The longest run of literal characters every match of ``pattern`` holds ('' when none
    of two or more characters is found, or under ``re.IGNORECASE``): the regex engine runs
    only on texts holding it (the literal prefilter of grep-like tools)."""
    if pattern.flags & re.IGNORECASE:
        return ""
    try:
        tree = _parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001
        return ""
    if tree is None:
        return ""
    best, run = "", []
    for op, av in list(tree) + [(None, None)]:
        if op is not None and str(op) == "LITERAL":
            run.append(chr(av))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best if len(best) >= 2 else ""


def _parse(source: str, flags: int):
    """The top-level parsed sequence of a regular expression (``re._parser``), or None."""
    parser = getattr(re, "_parser", None)
    if parser is None:
        return None
    return parser.parse(source, flags)


def _all_lower(tree) -> bool:
    for op, av in tree:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL"):
            if chr(av) != chr(av).lower():
                return False
        elif name == "RANGE":
            lo, hi = av
            if any(chr(c) != chr(c).lower() for c in range(lo, min(hi, lo + 2048) + 1)):
                return False
        elif name == "IN":
            if not _all_lower(av):
                return False
        elif name in ("BRANCH",):
            if not all(_all_lower(b) for b in av[1]):
                return False
        elif isinstance(av, (tuple, list)):
            for part in av:
                if hasattr(part, "data") and not _all_lower(part):
                    return False
                if isinstance(part, list) and part and isinstance(part[0], tuple) and not _all_lower(part):
                    return False
    return True


def _by_question(session, f: Filter, out: list[int]) -> list[int]:
    """The ids in ``out`` whose question form / type (``stats.questions``, current texts) is
    among ``f.forms`` / ``f.types``."""
    from mtcb_curate.stats.questions import question_form, question_type

    q, a, p = _texts(session, "question"), _texts(session, "answer"), _texts(session, PASSAGE_FIELD)
    keep = []
    for i in out:
        form = question_form(q(i))
        if f.forms and form not in f.forms:
            continue
        if f.types:
            if question_type(q(i), a(i), p(i), form) not in f.types:
                continue
        keep.append(i)
    return keep


def _edited(session) -> set[int]:
    ids: set[int] = set()
    for name in ("question", "answer", PASSAGE_FIELD, "chunk_index"):
        ids |= set(session.edited_texts(name))
    return ids


def _texts(session, name: str) -> Callable[[int], str]:
    """pid -> the pair's current ``name`` text (edits applied), without a ``PairView``."""
    edited = session.edited_texts(name)
    pairs = session.pairs
    attr = "passage" if name == PASSAGE_FIELD else name
    if not edited:
        return lambda i: getattr(pairs[i], attr)
    return lambda i: edited[i] if i in edited else getattr(pairs[i], attr)


def _by_check(out: list[int], check: str, level: str, problems) -> list[int]:
    if problems is None:
        return []
    if isinstance(problems, Mapping):
        r = problems.get(check)
        if r is None:
            return []
        reasons, failing = getattr(r, "reasons", {}), set(getattr(r, "failing", ()))
        if level == "fail":
            return [i for i in out if i in failing]
        if level == "warn":
            return [i for i in out if i in reasons and i not in failing]
        return [i for i in out if i in reasons or i in failing]
    keep = []
    for i in out:
        for p in problems(i):
            if p.check_id == check and (level == "any" or (p.fails if level == "fail" else not p.fails)):
                keep.append(i)
                break
    return keep


def match_spans(f: Filter, text: str, limit: int = 1000) -> list[tuple[int, int]]:
    """Where ``f``'s text query matches ``text``: ``(start, end)`` character offsets, at most
    ``limit``, empty matches left out; [] without a query (a bad regular expression: [])."""
    try:
        pattern = f.pattern()
    except FilterError:
        return []
    if pattern is None:
        return []
    out = []
    for m in pattern.finditer(text):
        if m.end() > m.start():
            out.append((m.start(), m.end()))
            if len(out) >= limit:
                break
    return out
