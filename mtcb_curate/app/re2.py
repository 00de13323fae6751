"""A Python regular expression searched over many texts at once by RE2 (``pyarrow.compute.
match_substring_regex``), with the answers Python's ``re`` gives.

The filter bar's regular expressions are Python's. Searched one text at a time, Python's engine
pays a call per text and tries a pattern such as ``\\d{4}`` at every position; RE2 through Arrow
scans a whole column in C++ (figures: ``benchmarks/bench_filters.py``). :func:`translate`
rewrites a parsed Python pattern (``re._parser``) into RE2 syntax where both engines agree on
which texts match, and says None where they may not:

- ``\\d``, ``\\w``, ``\\s`` (and their negations, in or out of a set) become explicit code point
  ranges computed from Python's own ``re`` at first use (:func:`category_ranges`): RE2's are
  ASCII-only or follow another Unicode table.
- ``\\b`` and ``\\B`` stay RE2's, which look at ASCII word characters only: the translation
  reports it (:attr:`Translation.boundary`), and texts holding a word character outside ASCII
  (:func:`non_ascii_word`) must be searched by Python instead.
- Only existence of a match matters (a filter's yes/no), so greedy and lazy repeats, groups and
  alternation translate directly; ``$`` is translated only as the pattern's last item.
- Not translated (None: search with Python): case-insensitive patterns (the caller runs a
  case-sensitive pattern over lower-cased texts instead, ``filters.folded_pattern``), scoped
  flags, ``MULTILINE``, back-references, look-arounds, conditionals, atomic groups and
  possessive repeats, repeat counts over 1,000 (RE2's limit), surrogate code points.

RE2's syntax: https://github.com/google/re2/wiki/Syntax. Python's: the ``re`` module's docs.
"""

from __future__ import annotations

import array
import functools
import itertools
import re
from dataclasses import dataclass


#: RE2's largest repeat count (``{n,m}``); larger counts are not translated.
RE2_MAX_REPEAT = 1000
_SURROGATES = (0xD800, 0xDFFF)


@dataclass(frozen=True)
class Translation:
    """An RE2 pattern matching the same texts as a Python pattern.

    Attributes:
        pattern: the RE2 pattern (for ``pyarrow.compute.match_substring_regex``).
        boundary: it holds ``\\b`` or ``\\B`` under Unicode rules: exact only on texts without a
            word character outside ASCII (see :func:`non_ascii_word`).
    """

    pattern: str
    boundary: bool


class _Untranslatable(Exception):
    pass


def _all_code_points() -> str:
    """Every code point but the surrogates, in order, as one string (1,112,064 characters)."""
    starts = itertools.chain(range(0, _SURROGATES[0], _BLOCK), range(_SURROGATES[1] + 1, 0x110000, _BLOCK))
    return "".join(array.array("I", range(lo, min(lo + _BLOCK, _SURROGATES[0] if lo < _SURROGATES[0]
                                                  else 0x110000))).tobytes().decode("utf-32-le")
                   for lo in starts)


_BLOCK = 0x4000
_CATEGORY_NAMES = (r"\d", r"\D", r"\w", r"\W", r"\s", r"\S")


def category_ranges(category: str, ascii_only: bool = False) -> tuple[tuple[int, int], ...]:
    """The code point ranges (inclusive) Python's ``re`` matches by ``category``.

    Args:
        category: ``\\d``, ``\\D``, ``\\w``, ``\\W``, ``\\s`` or ``\\S``.
        ascii_only: under ``re.ASCII``.

    Returns:
        Sorted, disjoint ``(first, last)`` code points, surrogates left out. Computed once per
        process for the six categories together from the running Python's ``re`` (its Unicode
        tables are the rule).

    Raises:
        KeyError: another category.
    """
    return _category_table(bool(ascii_only))[category]


@functools.cache
def _category_table(ascii_only: bool) -> dict[str, tuple[tuple[int, int], ...]]:
    text = _all_code_points()  # 4.4 MB, dropped once the table is made
    return {category: _ranges_in(text, category, re.ASCII if ascii_only else 0) for category in _CATEGORY_NAMES}


def _ranges_in(text: str, category: str, flags: int) -> tuple[tuple[int, int], ...]:
    pattern = re.compile(f"{category}+", flags)
    out: list[tuple[int, int]] = []
    # A block at a time (a run may go on from one block into the next: joined below).
    for at in range(0, len(text), _BLOCK):
        block = text[at:at + _BLOCK]
        for m in pattern.finditer(block):
            first, last = ord(block[m.start()]), ord(block[m.end() - 1])
            if out and out[-1][1] + 1 == first:  # the run goes on from the last block
                first = out.pop()[0]
            if first < _SURROGATES[0] <= last:  # the run spans the left-out surrogates
                out += [(first, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, last)]
            else:
                out.append((first, last))
    return tuple(out)


def non_ascii_word(text: str) -> bool:
    """True when ``text`` holds a word character outside ASCII (where RE2's ``\\b`` differs)."""
    return _NON_ASCII_WORD.search(text) is not None


_NON_ASCII_WORD = re.compile(r"[^\W\x00-\x7f]")


def translate(pattern: re.Pattern[str]) -> Translation | None:
    """The RE2 equivalent of a compiled Python ``str`` pattern, or None (see the module
    docstring for what is translated)."""
    flags = pattern.flags
    if not isinstance(pattern.pattern, str) or flags & (re.IGNORECASE | re.MULTILINE):
        return None
    parser = getattr(re, "_parser", None)
    if parser is None:
        return None
    try:
        tree = parser.parse(pattern.pattern, flags)
        state = _State(ascii_only=bool(flags & re.ASCII), dotall=bool(flags & re.DOTALL))
        out = _seq(list(tree), state, top=True)
    except _Untranslatable:
        return None
    except Exception:  # noqa: BLE001 - a private parser: any surprise means Python searches
        return None
    return Translation(out, state.boundary)


@dataclass
class _State:
    ascii_only: bool
    dotall: bool
    boundary: bool = False


def _cp(c: int) -> str:
    if _SURROGATES[0] <= c <= _SURROGATES[1]:
        raise _Untranslatable
    return f"\\x{{{c:X}}}"


def _span(a: int, b: int) -> str:
    return _cp(a) if a == b else f"{_cp(a)}-{_cp(b)}"


def _ranges(lo: int, hi: int) -> list[tuple[int, int]]:
    """``lo``-``hi`` without the surrogates."""
    if hi < _SURROGATES[0] or lo > _SURROGATES[1]:
        return [(lo, hi)]
    out = []
    if lo < _SURROGATES[0]:
        out.append((lo, _SURROGATES[0] - 1))
    if hi > _SURROGATES[1]:
        out.append((_SURROGATES[1] + 1, hi))
    return out


_CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_WORD": r"\w",
               "CATEGORY_NOT_WORD": r"\W", "CATEGORY_SPACE": r"\s", "CATEGORY_NOT_SPACE": r"\S"}


def _set(items, state: _State) -> str:
    negate = False
    spans: list[tuple[int, int]] = []
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            _cp(av)
            spans.append((av, av))
        elif name == "RANGE":
            spans += _ranges(*av)
        elif name == "CATEGORY" and str(av) in _CATEGORIES:
            spans += category_ranges(_CATEGORIES[str(av)], state.ascii_only)
        else:
            raise _Untranslatable
    if not spans:
        raise _Untranslatable
    return "[" + ("^" if negate else "") + "".join(_span(a, b) for a, b in spans) + "]"


def _seq(items, state: _State, top: bool = False) -> str:
    out = []
    for k, (op, av) in enumerate(items):
        name = str(op)
        if name == "LITERAL":
            out.append(_cp(av))
        elif name == "NOT_LITERAL":
            out.append(f"[^{_cp(av)}]")
        elif name == "ANY":
            out.append("(?s:.)" if state.dotall else "(?-s:.)")
        elif name == "IN":
            out.append(_set(av, state))
        elif name == "CATEGORY" and str(av) in _CATEGORIES:
            out.append(_set([(op, av)], state))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, body = av
            if lo > RE2_MAX_REPEAT or (hi != re._constants.MAXREPEAT and hi > RE2_MAX_REPEAT):  # type: ignore[attr-defined]
                raise _Untranslatable
            count = f"{{{lo},}}" if hi == re._constants.MAXREPEAT else f"{{{lo},{hi}}}"  # type: ignore[attr-defined]
            out.append(f"(?:{_seq(list(body), state)}){count}")
        elif name == "SUBPATTERN":
            _group, add, remove, body = av
            if add or remove:
                raise _Untranslatable
            out.append(f"(?:{_seq(list(body), state)})")
        elif name == "BRANCH":
            _, branches = av
            out.append("(?:" + "|".join(_seq(list(b), state) for b in branches) + ")")
        elif name == "AT":
            at = str(av)
            if at in ("AT_BEGINNING", "AT_BEGINNING_STRING"):
                out.append(r"\A")
            elif at == "AT_END_STRING":
                out.append(r"\z")
            elif at == "AT_END" and top and k == len(items) - 1:
                out.append(r"(?:\n?\z)")  # Python's $: the end, or before a final line break
            elif at in ("AT_BOUNDARY", "AT_NON_BOUNDARY"):
                out.append(r"\b" if at == "AT_BOUNDARY" else r"\B")
                state.boundary = state.boundary or not state.ascii_only
            else:
                raise _Untranslatable
        else:
            raise _Untranslatable
    return "".join(out)
