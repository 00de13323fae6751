"""Text normalization with an offset map back to the original, and the alphanumeric skeleton.

MTCB's evaluator needs a supporting passage verbatim (``passage in chunk.text``). When it is
not, the curator wants to know whether only the *rendering* differs (whitespace, quotes, dashes,
characters a PDF extractor dropped) and where the passage really is, in the ORIGINAL document
text. This module normalizes both sides the same way and keeps, for every change, where it came
from, so a span found in normalized text maps back to original character offsets.

Levels (each includes the previous one):

``whitespace``
    Every run of whitespace (``str.isspace``: spaces, tabs, newlines, NBSP, thin spaces ...)
    becomes one space, and a word hyphenated at a line break is joined (``exam-\\nple`` ->
    ``example``: a hyphen, soft hyphen or U+2010/U+2011 between two letters, followed by a
    newline, with optional spaces around it).
``typography``
    Also per character: Unicode NFKC for letters and decimal digits (ligatures, full-width and
    other compatibility forms: ``ﬁ`` -> ``fi``), curly quotes and apostrophes to ASCII (``'``
    and ``"``), every dash (category Pd, and the minus sign) to ``-``, and invisible format
    characters (category Cf: soft hyphen, zero-width space, BOM) dropped.
``ascii`` (the level used for matching)
    As ``typography``, but quotes, apostrophes and dashes are *dropped*, ASCII ones included,
    and so is every remaining non-ASCII character; the result is pure ASCII.

Why ``ascii`` drops quotes and dashes instead of mapping them (what the sample data shows):
``docs/verification.md``.

The normalization is *per character* apart from whitespace runs and hyphenation, so the
``ascii`` level has an exact alphanumeric **skeleton**: the ASCII letters and digits of the
normalized text are the original's ASCII letters and digits plus the NFKC letters of a few
compatibility characters, in order. :func:`skeleton` computes it for a string;
:class:`SkeletonIndex` computes it for a whole document at C speed (``bytes.translate``) with
a block map back to character offsets. A normalized passage can only occur where its skeleton
occurs, so searching the skeleton first is both fast and complete.

Offsets are Python ``str`` indices (code points) everywhere. Lone surrogates and control
characters are data like any other character (surrogates are dropped at the ``ascii`` level).
"""

from __future__ import annotations

import bisect
from array import array
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

LEVELS: tuple[str, ...] = ("whitespace", "typography", "ascii")

#: Hyphen characters that may split a word at a line break.
HYPHENS = "-\u00ad\u2010\u2011"

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035\u00b4\u02bc\u02b9\u2039\u203a\u0060"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\u02ba\u301d\u301e\u301f"
#: ASCII characters the ``ascii`` level drops (quotes, apostrophe, backtick, hyphen-minus).
_ASCII_DROPPED = "'\"`-"

# ASCII whitespace other than ' ' (str.isspace is True for \x1c-\x1f).
_ASCII_WS_NOT_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f"
_NON_ASCII = "\\u0080-\\U0010FFFF"

# Per level: the characters that can change (a "gap" class for runs). A run is a maximal
# sequence of such characters; a lone ' ' never changes and is not matched. The ``ascii``
# level is the ``typography`` result passed through ``_ASCII_SITES`` (drop quotes, dashes and
# non-ASCII; a run with a space becomes one space).
_GAP = {
    "whitespace": "\\s",
    "typography": f"\\s{_NON_ASCII}",
}
_SINGLE = {
    "whitespace": "[^\\S ]",
    "typography": f"[{_ASCII_WS_NOT_SPACE}{_NON_ASCII}]",
}
# A run never swallows a hyphen that starts a line-break hyphenation ("signiﬁ\u00ad\ncant"):
# the hyphenation alternative must get to see it at every level, or the levels disagree.
#
# The sites are the leftmost-first matches of
#     hyphenation | (a gap character that is not a hyphenation's hyphen){2,} | single
# (``tests/test_normalize.py`` keeps that form as the reference and checks these against it).
# They are written so that the pattern starts with one character class, the characters a site
# can start with: ``re`` then skips every other character at C speed, where an alternation whose
# first branch opens with a look-behind is tried in full at every position (about 3x slower over
# a filing). After that first character, look-behinds say which branch it started.
_LETTER = "[^\\W\\d_]"
_NA_HYPHENS = "\u00ad\u2010\u2011"
_BREAK_AHEAD = f"[^\\S\\n]*\\n\\s*(?={_LETTER})"


def _sites_pattern(level: str) -> re.Pattern:
    gap = _GAP[level]
    hyphenation = f"(?<=[-{_NA_HYPHENS}])(?<={_LETTER}.){_BREAK_AHEAD}(?P<h>)"
    # A run's first character is not a hyphenation's hyphen: that branch was tried first.
    if level == "whitespace":  # no hyphen is a gap character
        runs = f"(?<=[{gap}])[{gap}]+"
    else:  # the non-ASCII hyphens are gap characters, except where they start a hyphenation
        not_break = f"(?:(?<!{_LETTER}.)|(?!{_BREAK_AHEAD}))"
        runs = f"(?<=[{gap}])(?:[{gap}](?<![{_NA_HYPHENS}])|[{_NA_HYPHENS}]{not_break})+"
    return re.compile(f"[-{_NA_HYPHENS}{gap}](?:{hyphenation}|{runs}|(?<={_SINGLE[level]}))")


_SITES = {level: _sites_pattern(level) for level in ("whitespace", "typography")}
# ``[ '"`\-NA]{2,}|['"`\-NA]`` (NA: non-ASCII), first character first, as above.
_ASCII_SITES = re.compile(f"[ '\"`\\-{_NON_ASCII}](?:[ '\"`\\-{_NON_ASCII}]+|(?<=['\"`\\-{_NON_ASCII}]))")

# Where a hyphenation could be (its hyphen and line break), and the fast path's patterns.
_HYPHEN_BEFORE_BREAK = re.compile(f"[-{_NA_HYPHENS}][^\\S\\n]*\\n")
_SPACE_RUN = re.compile(" {2,}")
_ASCII_DROP_TABLE = str.maketrans("", "", _ASCII_DROPPED)

_ALNUM_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: Every byte that is not an ASCII letter or digit (for ``bytes.translate(None, ...)``).
NON_ALNUM_BYTES = bytes(b for b in range(256) if b not in _ALNUM_BYTES)
_ASCII_BYTES = bytes(range(128))
_NON_ALNUM_RE = re.compile(r"[^A-Za-z0-9]+")


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown normalization level {level!r} (one of {', '.join(LEVELS)})")


def _collapse(s: str) -> str:
    """Whitespace runs of a fold result -> one space, edges stripped; a result that was only
    whitespace -> ' '."""
    if not s or not any(ch.isspace() for ch in s):
        return s
    inner = " ".join(s.split())
    return inner if inner else " "


@functools.lru_cache(maxsize=65536)
def _fold_typography(c: str) -> str:
    """Per-character part of the ``typography`` level (module docstring)."""
    if c.isspace():
        return " "
    if c.isascii():
        return c
    cat = unicodedata.category(c)
    if c in _SINGLE_QUOTES or c in _DOUBLE_QUOTES or cat in ("Pi", "Pf"):
        double = c in _DOUBLE_QUOTES or "DOUBLE" in unicodedata.name(c, "")
        return '"' if double else "'"
    if cat == "Pd" or c == "\u2212":
        return "-"
    if cat == "Cf":
        return ""
    if cat[0] == "L" or cat == "Nd":
        return _collapse(unicodedata.normalize("NFKC", c))
    return c


def _ascii_pass(s: str) -> str:
    """The ``ascii`` level's second pass on a typography result (no runs collapsed)."""
    return "".join(" " if ch == " " else ch for ch in s if ch.isascii() and ch not in _ASCII_DROPPED)


@functools.lru_cache(maxsize=65536)
def fold_char(c: str, level: str = "ascii") -> str:
    """What one character becomes at ``level`` on its own: itself, ``' '`` (whitespace),
    ``''`` (dropped) or a replacement string.

    Whitespace runs and hyphenation are handled by :func:`normalize`; this is the
    per-character part (see the module docstring for the rules). Cached.

    Raises:
        ValueError: unknown level.
    """
    _check_level(level)
    if c.isspace():
        return " "
    if level == "whitespace":
        return c
    out = _fold_typography(c)
    if level == "ascii":
        out = _collapse(_ascii_pass(out))
    return out


def _run_edits(run: str, at: int, fold, edits: list[tuple[int, int, str]]) -> None:
    """Append the edits for one maximal run of changeable characters starting at ``at``.

    ``fold`` gives each character's replacement; consecutive characters folding to ``''`` or
    ``' '`` form a gap that becomes one space if any of them was whitespace, else nothing.
    """
    if run.isspace():
        if run != " ":
            edits.append((at, at + len(run), " "))
        return
    gap_start = -1
    space = False
    for k, ch in enumerate(run):
        f = fold(ch)
        if f == "" or f == " ":
            if gap_start < 0:
                gap_start, space = k, False
            if f == " ":
                space = True
            continue
        if gap_start >= 0:
            _flush_gap(run, at, gap_start, k, space, edits)
            gap_start = -1
        if f != ch:
            edits.append((at + k, at + k + 1, f))
    if gap_start >= 0:
        _flush_gap(run, at, gap_start, len(run), space, edits)


def _flush_gap(run: str, at: int, a: int, b: int, space: bool, edits: list[tuple[int, int, str]]) -> None:
    if space:
        if b - a == 1 and run[a] == " ":
            return
        edits.append((at + a, at + b, " "))
    else:
        edits.append((at + a, at + b, ""))


def _ascii_fold(ch: str) -> str:
    return " " if ch == " " else ""


def _stage_edits(text: str, level: str) -> list[tuple[int, int, str]]:
    """Edits of one pass over all of ``text`` (offsets into ``text``)."""
    out: list[tuple[int, int, str]] = []
    if level == "ascii":  # second pass, on a typography result: drop quotes, dashes, non-ASCII
        for m in _ASCII_SITES.finditer(text):
            _run_edits(m.group(), m.start(), _ascii_fold, out)
        return out
    fold = _fold_typography if level == "typography" else _fold_whitespace
    for m in _SITES[level].finditer(text):
        if m.lastgroup == "h":
            out.append((m.start(), m.end(), ""))
        else:
            _run_edits(m.group(), m.start(), fold, out)
    return out


def _fold_whitespace(c: str) -> str:
    return " " if c.isspace() else c


def _apply(text: str, eds: list[tuple[int, int, str]]) -> str:
    if not eds:
        return text
    pieces: list[str] = []
    prev = 0
    for a, b, rep in eds:
        pieces.append(text[prev:a])
        pieces.append(rep)
        prev = b
    pieces.append(text[prev:])
    return "".join(pieces)


@dataclass(frozen=True, slots=True)
class Normalized:
    """A normalized text and its map back to the original.

    Attributes:
        text: the normalized text (not stripped: a leading or trailing whitespace run of the
            source stays one space).
        offset: original character offset of the normalized region's start (non-zero when only
            ``original[offset:offset + length]`` was normalized).
        length: length in characters of the normalized region.
        level: the normalization level.

    Internally every change is an *edit* ``source[o_start:o_end] -> replacement`` located at
    ``text[n_start:n_end]``; outside edits, characters map one to one. The ``ascii`` level is
    a second pass over the ``typography`` result, so its edits refer to ``parent.text`` and
    offsets go through ``parent`` on their way back.
    """

    text: str
    offset: int
    length: int
    level: str
    _o_start: list[int] = field(repr=False)
    _o_end: list[int] = field(repr=False)
    _n_start: list[int] = field(repr=False)
    _n_end: list[int] = field(repr=False)
    _parent: "Normalized | None" = field(default=None, repr=False)

    def _local_origin(self, k: int) -> tuple[int, int, bool]:
        i = bisect.bisect_right(self._n_end, k)
        if i < len(self._n_start) and self._n_start[i] <= k:
            return self._o_start[i], self._o_end[i], True
        pos = k if i == 0 else self._o_end[i - 1] + (k - self._n_end[i - 1])
        return pos, pos + 1, False

    def char_origin(self, k: int) -> tuple[int, int, bool]:
        """Original span of normalized character ``k`` (0 <= k < len(text)).

        Returns ``(start, end, changed)`` in original character offsets: one character for
        an unchanged one; the whole source of an edit (a whitespace run, a folded character, a
        joined hyphenation) for a character an edit produced.

        Raises:
            IndexError: ``k`` out of range.
        """
        if not 0 <= k < len(self.text):
            raise IndexError(k)
        s, e, changed = self._local_origin(k)
        if self._parent is None:
            return self.offset + s, self.offset + e, changed
        ps, _, pc = self._parent.char_origin(s)
        _, pe, pc2 = self._parent.char_origin(e - 1)
        return ps, pe, changed or pc or pc2

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The original character span ``[s, e)`` that ``text[start:end]`` came from.

        The span is minimal: characters the normalization dropped just outside the first or
        last normalized character (a closing curly quote, an NBSP) are not included. For a
        non-empty span whose ends are not spaces and do not cut a multi-character replacement,
        ``normalize(original[s:e], level).text == text[start:end]``. An empty span maps to an
        empty span at the original position of ``start``.

        Raises:
            IndexError: when not ``0 <= start <= end <= len(text)``.
        """
        if not 0 <= start <= end <= len(self.text):
            raise IndexError((start, end))
        if start == end:
            if start < len(self.text):
                pos = self.char_origin(start)[0]
            else:
                root = self
                while root._parent is not None:
                    root = root._parent
                pos = root.offset + root.length
            return pos, pos
        return self.char_origin(start)[0], self.char_origin(end - 1)[1]

    def find_all(self, needle: str, limit: int = 1000) -> list[int]:
        """Start offsets (in ``text``) of every occurrence of ``needle``, overlapping ones too,
        at most ``limit``. An empty needle gives ``[]``."""
        out: list[int] = []
        if not needle:
            return out
        i = self.text.find(needle)
        while i >= 0 and len(out) < limit:
            out.append(i)
            i = self.text.find(needle, i + 1)
        return out


def _build(text: str, eds: list[tuple[int, int, str]], offset: int, level: str,
           parent: Normalized | None) -> Normalized:
    pieces: list[str] = []
    o_start: list[int] = []
    o_end: list[int] = []
    n_start: list[int] = []
    n_end: list[int] = []
    prev = 0
    npos = 0
    for a, b, rep in eds:
        if a > prev:
            pieces.append(text[prev:a])
            npos += a - prev
        pieces.append(rep)
        o_start.append(a)
        o_end.append(b)
        n_start.append(npos)
        npos += len(rep)
        n_end.append(npos)
        prev = b
    if prev < len(text):
        pieces.append(text[prev:])
    return Normalized("".join(pieces), offset, len(text), level, o_start, o_end, n_start, n_end, parent)


def _collapse_whitespace(text: str) -> str:
    """Every whitespace run -> one space (``re.sub(r"\\s+", " ", text)``, by ``str.split``:
    the same whitespace, about 5x faster on a filing's text)."""
    inner = " ".join(text.split())
    if not inner:
        return " " if text else ""
    return (" " if text[0].isspace() else "") + inner + (" " if text[-1].isspace() else "")


_NON_ASCII_CHAR = re.compile(f"[{_NON_ASCII}]")
# A run of characters the one pass changes: two or more of whitespace, ASCII quotes and dashes
# and non-ASCII characters, or one that is not a plain space (first character first, as above).
_ONE_PASS_RUN = re.compile(f"[\\s'\"`\\-{_NON_ASCII}](?:[\\s'\"`\\-{_NON_ASCII}]+|(?<=[^ ]))")
_WHITESPACE_CHAR = re.compile("\\s")


@functools.lru_cache(maxsize=65536)
def _one_pass_ok(c: str) -> bool:
    """A non-ASCII character :func:`_ascii_in_one_pass` can take: whitespace, or one character
    at the ``typography`` level that the ``ascii`` pass drops (accented letters, curly quotes,
    dashes, symbols). Not: format characters the ``typography`` level drops, replacements such
    as ``ﬁ`` -> ``fi``; those need the two passes."""
    return c.isspace() or (len(_fold_typography(c)) == 1 and fold_char(c, "ascii") == "")


def _ascii_in_one_pass(region: str, offset: int) -> Normalized:
    """The ``ascii`` level of a region :func:`_one_pass_applies` to, in one pass.

    Without hyphenation, format characters and replacements, the two passes (``typography``,
    then ``ascii``) come to this: every maximal run of whitespace and dropped characters (ASCII
    quotes and dashes, non-ASCII characters) becomes one space if it holds whitespace, else
    nothing; a lone ``' '`` stays as it is; every other character is kept. The map is the same
    as the two passes' (``tests/test_normalize.py`` compares text and origin of every
    character); the text is made by ``re`` and ``str`` at C speed, with Python work only per
    changed run.
    """
    o_start: list[int] = []
    o_end: list[int] = []
    n_start: list[int] = []
    n_end: list[int] = []
    removed = 0
    has_space = _WHITESPACE_CHAR.search
    for m in _ONE_PASS_RUN.finditer(region):
        a, b = m.span()
        rep = 1 if has_space(region, a, b) else 0
        o_start.append(a)
        o_end.append(b)
        n_start.append(a - removed)
        n_end.append(a - removed + rep)
        removed += b - a - rep
    return Normalized(_one_pass_text(region), offset, len(region), "ascii", o_start, o_end, n_start, n_end, None)


def _one_pass_text(region: str) -> str:
    """The text of :func:`_ascii_in_one_pass`."""
    return _ascii_pass_text(_collapse_whitespace(region))


def _ascii_pass_text(text: str) -> str:
    """The ``ascii`` pass over a ``typography`` result, text only: quotes, dashes and non-ASCII
    dropped, which leaves a run's spaces side by side, and those become one."""
    if not text.isascii():
        text = text.encode("ascii", "ignore").decode("ascii")
    return _SPACE_RUN.sub(" ", text.translate(_ASCII_DROP_TABLE))


def _one_pass_applies(text: str) -> bool:
    """True when :func:`_ascii_in_one_pass` applies to ``text``: no hyphen before a line break,
    and only characters :func:`_one_pass_ok` takes."""
    return _HYPHEN_BEFORE_BREAK.search(text) is None and (
        text.isascii() or all(_one_pass_ok(c) for c in set(_NON_ASCII_CHAR.findall(text))))


def normalize(text: str, level: str = "ascii", start: int = 0, end: int | None = None) -> Normalized:
    """Normalize ``text[start:end]`` at ``level`` and keep the map back (see :class:`Normalized`).

    Args:
        text: the original text (a document, or a passage).
        level: ``whitespace``, ``typography`` or ``ascii`` (module docstring).
        start, end: the region to normalize, in characters (default: all of ``text``).
            Nothing outside it is looked at; offsets returned are into ``text``.

    Cost: linear, with Python work per changed run (about 1 µs each; a 10-K filing has one
    every 30-60 characters): roughly 50-150 ms per MB, so hot paths normalize regions.

    Raises:
        ValueError: unknown level or a bad region.
    """
    _check_level(level)
    end = len(text) if end is None else end
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"bad region [{start}, {end}) for a text of {len(text)} characters")
    region = text[start:end] if (start or end != len(text)) else text
    if level == "ascii" and _one_pass_applies(region):
        return _ascii_in_one_pass(region, start)
    first = "whitespace" if level == "whitespace" else "typography"
    norm = _build(region, _stage_edits(region, first), start, first, None)
    if level != "ascii":
        return norm
    return _build(norm.text, _stage_edits(norm.text, "ascii"), 0, "ascii", norm)


def normalize_text(text: str, level: str = "ascii") -> str:
    """``normalize(text, level).text`` without building the map.

    Raises:
        ValueError: unknown level.
    """
    _check_level(level)
    if level == "ascii":
        if _one_pass_applies(text):
            return _one_pass_text(text)
        return _ascii_pass_text(_apply(text, _stage_edits(text, "typography")))
    # Without a hyphen before a line break there is no hyphenation, and then the whitespace
    # level (and the typography level of an ASCII text) is every whitespace run -> one space.
    if (level == "whitespace" or text.isascii()) and _HYPHEN_BEFORE_BREAK.search(text) is None:
        return _collapse_whitespace(text)
    return _apply(text, _stage_edits(text, level))


def normalize_passage(passage: str, level: str = "ascii") -> str:
    """A supporting passage normalized for matching: :func:`normalize_text`, then edge spaces
    stripped (a passage is matched as a contiguous block of its non-space content).

    Raises:
        ValueError: unknown level.
    """
    return normalize_text(passage, level).strip(" ")


def skeleton(text: str) -> bytes:
    """The ASCII letters and digits of ``normalize_text(text, 'ascii')``, as bytes.

    Equal to ``SkeletonIndex(text).skeleton``; a passage whose ``ascii`` normalization occurs in
    a document's has its skeleton in the document's skeleton.
    """
    return _NON_ALNUM_RE.sub("", normalize_text(text, "ascii")).encode("ascii")


def skeleton_of_normalized(text: str) -> bytes:
    """:func:`skeleton` of a text that is already ``ascii``-normalized (a
    :func:`normalize_passage` result): its ASCII letters and digits, without normalizing it
    again (the ``ascii`` level is idempotent)."""
    return _NON_ALNUM_RE.sub("", text).encode("ascii")


@functools.lru_cache(maxsize=65536)
def _skeleton_of_char(c: str) -> bytes:
    """Skeleton bytes a non-ASCII character contributes (empty for almost all)."""
    return _NON_ALNUM_RE.sub("", fold_char(c, "ascii")).encode("ascii")


#: :func:`encode` encodes longer texts this many characters at a time: CPython's encoder
#: first reserves 3 bytes per character of a non-Latin-1 text (171 MB for a 57 MB filing).
ENCODE_PIECE = 1 << 20


def encode(text: str) -> bytes:
    """UTF-8 bytes of ``text``; lone surrogates are kept (``surrogatepass``), so a substring
    of the text is a substring of the bytes and back."""
    if len(text) <= ENCODE_PIECE:
        return text.encode("utf-8", "surrogatepass")
    # Pieces end on character boundaries, and ``surrogatepass`` encodes each lone surrogate
    # on its own, so the pieces' bytes are the whole text's.
    return b"".join(text[i:i + ENCODE_PIECE].encode("utf-8", "surrogatepass")
                    for i in range(0, len(text), ENCODE_PIECE))


#: Block size (bytes, moved forward to a character boundary) of :class:`SkeletonIndex`'s map
#: from skeleton to text offsets. Smaller blocks mean smaller regions to normalize.
BLOCK_BYTES = 256

#: ``ALNUM_TABLE[b]`` is True for the bytes of ASCII letters and digits (numpy lookup table).
ALNUM_TABLE = np.zeros(256, dtype=bool)
ALNUM_TABLE[np.frombuffer(_ALNUM_BYTES, dtype=np.uint8)] = True


def _block_sums(values, starts: np.ndarray, n: int) -> np.ndarray:
    """Per block ``[starts[k], starts[k + 1])`` (the last one to ``n``) the sum of the uint8
    array ``values(lo, hi)`` gives for bytes ``[lo, hi)``. Done 1,024 blocks at a time,
    summed as uint16 (a block has at most ``BLOCK_BYTES + 3`` bytes):
    ``np.add.reduceat(..., dtype=int64)`` on the whole text first made an int64 copy of it
    (460 MB for a 57 MB filing)."""
    out = np.empty(len(starts), dtype=np.int64)
    step = 1024
    for k in range(0, len(starts), step):
        lo = int(starts[k])
        hi = int(starts[k + step]) if k + step < len(starts) else n
        out[k:k + step] = np.add.reduceat(values(lo, hi), starts[k:k + step] - lo, dtype=np.uint16)
    return out


def _int_array(values) -> array:
    """``values`` (int64) as an ``array('q')``: searchable with ``bisect`` like a list."""
    out = array("q")
    out.frombytes(np.asarray(values, dtype=np.int64).tobytes())
    return out


#: Window length (bytes) of a skeleton's n-gram index (``SkeletonIndex.find_all``): the fuzzy
#: search's anchors (``verify.fuzzy.ANCHOR_CHARS``) are this long.
GRAM = 12
#: Searches for needles of at least ``GRAM`` bytes on one skeleton before it builds its index
#: (a document with one passage to place is scanned; the second passage's anchors build it).
#: Our threshold: building the index costs about as much as 60-130 scans of the skeleton
#: (measured in docs/performance.md, the 100,000-pair analysis).
INDEX_AFTER = 64
#: The multiplier of the windows' polynomial hash (FNV-1a's 64-bit prime), modulo 2**64.
_GRAM_PRIME = 1099511628211


def _gram_hash(window: bytes) -> int:
    """The hash :func:`_gram_index` gives a ``GRAM``-byte window."""
    h = 0
    for b in window:
        h = (h * _GRAM_PRIME + b) & 0xFFFFFFFFFFFFFFFF
    return h


def _gram_hashes(columns: Iterable[np.ndarray], n: int) -> np.ndarray:
    """:func:`_gram_hash` of ``n`` windows at once (``uint64``): ``columns`` gives, in order,
    the windows' first bytes, their second bytes ... (``GRAM`` arrays of ``n`` bytes each)."""
    h = np.zeros(n, dtype=np.uint64)
    prime = np.uint64(_GRAM_PRIME)
    with np.errstate(over="ignore"):
        for column in columns:
            h *= prime
            h += column
    return h


def _gram_index(sk: bytes) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Every ``GRAM``-byte window of ``sk`` as 64-bit keys grouped by bucket:
    ``(keys, starts, bits, bucket_bits)``. A key is the window's hash with its low ``bits`` bits
    replaced by the window's offset (``bits`` = the offsets' width), 8 bytes a window; its top
    ``bucket_bits`` bits (at most 16; about 8 windows a bucket) are its bucket, and the keys
    of bucket ``b`` are ``keys[starts[b]:starts[b + 1]]``, in offset order. Grouping by a
    16-bit bucket is a stable radix sort (numpy's ``argsort(kind="stable")`` of ``uint16``),
    faster than sorting the 64-bit keys (docs/performance.md). A hash prefix shared by two windows
    only means both are compared with the needle (:meth:`SkeletonIndex.find_all`)."""
    arr = np.frombuffer(sk, dtype=np.uint8)
    n = len(arr) - GRAM + 1
    h = _gram_hashes((arr[k:k + n] for k in range(GRAM)), n)
    bits = max(1, (n - 1).bit_length())
    h >>= np.uint64(bits)
    h <<= np.uint64(bits)
    h |= np.arange(n, dtype=np.uint64)
    bucket_bits = max(1, min(16, bits - 3))
    bucket = (h >> np.uint64(64 - bucket_bits)).astype(np.uint16)
    starts = np.zeros((1 << bucket_bits) + 1, dtype=np.int64)
    np.cumsum(np.bincount(bucket, minlength=1 << bucket_bits), out=starts[1:])
    keys = h[np.argsort(bucket, kind="stable")]
    return keys, starts, bits, bucket_bits


class SkeletonIndex:
    """A document's ``ascii`` skeleton (:func:`skeleton`) with a block map back to characters.

    Built at C speed, with no Python loop over the text: numpy keeps the ASCII letters and
    digits of the UTF-8 bytes (``np.compress``; ``bytes.translate`` when one of the few
    non-ASCII characters whose NFKC form has ASCII letters, such as ``ﬁ``, must be replaced
    first) and counts skeleton characters and characters per block of :data:`BLOCK_BYTES`
    bytes. About 3-5 ms per MB. The block map gives,
    for a skeleton range, a character region of the text that contains every original span
    whose skeleton is that range (see :meth:`region`).

    Args:
        text: the document text; or None when ``data`` is given.
        data: the text's UTF-8 bytes (:func:`encode`) when the caller keeps them (a corpus
            document's ``Document.data``): they are used as they are, not copied, and the text
            is decoded from them when asked (``dataset.model.document_text``, cached).

    Attributes:
        text: the document text.
        skeleton: the skeleton bytes.
        data: the whole text's UTF-8 bytes (:func:`encode`), reused for exact byte search.

    The block maps are ``array('q')`` (8 bytes an entry, not a Python ``int`` each).
    """

    __slots__ = ("_text", "_chars", "skeleton", "data", "_ascii", "_char_starts", "_skel_starts", "_byte_starts",
                 "_grams", "_finds")

    def __init__(self, text: str | None = None, data: bytes | None = None):
        if data is None:
            if text is None:
                raise TypeError("SkeletonIndex needs text or data")
            data = text.encode("ascii") if text.isascii() else encode(text)
        self._text = text
        self._ascii = data.isascii()
        self.data = data
        n = len(data)
        arr = np.frombuffer(data, dtype=np.uint8)
        self._chars = len(text) if text is not None else (
            n if self._ascii else n - int(np.count_nonzero((arr & 0xC0) == 0x80)))
        starts = np.arange(0, n, BLOCK_BYTES, dtype=np.int64)
        if not self._ascii and n:
            for _ in range(3):  # a UTF-8 character has at most 3 continuation bytes
                cont = (starts < n) & ((arr[np.minimum(starts, n - 1)] & 0xC0) == 0x80)
                if not cont.any():
                    break
                starts = starts + cont
            starts = starts[starts < n]
        mask = ALNUM_TABLE[arr]
        if n:
            skel_counts = _block_sums(lambda lo, hi: mask[lo:hi].view(np.uint8), starts, n)
        else:
            skel_counts = np.zeros(0, dtype=np.int64)
        skel_data = None
        if not self._ascii:
            for ch in set(data.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")):
                sk = _skeleton_of_char(ch)
                if not sk:
                    continue
                src = encode(ch)
                pos = [m.start() for m in re.finditer(re.escape(src), data)]
                blocks = np.searchsorted(starts, np.array(pos, dtype=np.int64), side="right") - 1
                np.add.at(skel_counts, blocks, len(sk))
                skel_data = (data if skel_data is None else skel_data).replace(src, sk)
            if n:
                char_counts = _block_sums(lambda lo, hi: ((arr[lo:hi] & 0xC0) != 0x80).view(np.uint8), starts, n)
                char_starts = np.concatenate(([0], np.cumsum(char_counts)[:-1]))
            else:
                char_starts = starts
        else:
            char_starts = starts
        if skel_data is None:  # the usual case: keep the ASCII letters and digits as they are
            self.skeleton = np.compress(mask, arr).tobytes()
        else:
            self.skeleton = skel_data.translate(None, NON_ALNUM_BYTES)
        self._grams: tuple[np.ndarray, np.ndarray, int, int] | None = None
        self._finds = 0
        self._byte_starts = _int_array(starts)
        self._char_starts = _int_array(char_starts)
        self._skel_starts = _int_array(np.concatenate(([0], np.cumsum(skel_counts)[:-1])) if n else [])

    @property
    def text(self) -> str:
        """The document text (decoded from ``data`` when built from bytes)."""
        if self._text is not None:
            return self._text
        from mtcb_curate.dataset.model import document_text

        return document_text(self.data)

    def _block_of_skel(self, i: int) -> int:
        """Index of the block holding skeleton character ``i``."""
        return max(0, bisect.bisect_right(self._skel_starts, i) - 1)

    def region(self, skel_start: int, skel_end: int) -> tuple[int, int]:
        """A character region ``[a, b)`` containing every original span whose skeleton is
        ``skeleton[skel_start:skel_end]`` at that position.

        Such a span lies strictly between the characters that produced skeleton characters
        ``skel_start - 1`` and ``skel_end`` (its own non-alphanumeric edges produce none); the
        region runs from the start of the block holding the first to the end of the block
        holding the second, so those two alphanumeric characters are inside it, and whitespace
        runs and hyphenation inside it normalize exactly as in the whole text.
        """
        n = self._chars
        if not self._char_starts:
            return 0, n
        a = 0 if skel_start <= 0 else self._char_starts[self._block_of_skel(skel_start - 1)]
        if skel_end >= len(self.skeleton):
            b = n
        else:
            blk = self._block_of_skel(skel_end)
            b = self._char_starts[blk + 1] if blk + 1 < len(self._char_starts) else n
        return a, b

    def region_base(self, skel_start: int) -> int:
        """Skeleton offset of the first skeleton character at or after ``region(skel_start,
        ...)[0]`` (the region's own skeleton starts there)."""
        if skel_start <= 0 or not self._skel_starts:
            return 0
        return self._skel_starts[self._block_of_skel(skel_start - 1)]

    def find_all(self, needle: bytes, limit: int = 1000) -> list[int]:
        """Skeleton offsets of every occurrence of ``needle`` (overlapping too), ascending, at
        most ``limit``; ``[]`` for an empty needle.

        A needle of at least :data:`GRAM` bytes is looked up in the skeleton's index of its
        :data:`GRAM`-byte windows once :data:`INDEX_AFTER` such searches were made on this
        skeleton (the index is then built: a hash per window with its offset, grouped by a
        16-bit bucket; 8 bytes a window); before, and for shorter needles, ``bytes.find`` scans it.
        The same offsets either way: each indexed candidate is compared with the needle."""
        out: list[int] = []
        if not needle:
            return out
        sk = self.skeleton
        if len(needle) >= GRAM and len(sk) >= GRAM:
            if self._grams is None:
                self._finds += 1
                if self._finds >= INDEX_AFTER:
                    self._grams = _gram_index(sk)
            if self._grams is not None:
                keys, starts, bits, bucket_bits = self._grams
                mask = (1 << bits) - 1
                prefix = _gram_hash(needle[:GRAM]) & ~mask
                b = prefix >> (64 - bucket_bits)
                seg = keys[starts[b]:starts[b + 1]]
                seg = seg[(seg & np.uint64(0xFFFFFFFFFFFFFFFF ^ mask)) == np.uint64(prefix)]
                for pos in (seg & np.uint64(mask)).tolist():
                    if sk.startswith(needle, pos):
                        out.append(pos)
                        if len(out) >= limit:
                            break
                return out
        i = sk.find(needle)
        while i >= 0 and len(out) < limit:
            out.append(i)
            i = sk.find(needle, i + 1)
        return out

    def find_each(self, needles: Sequence[bytes], limit: int = 1000) -> list[list[int]]:
        """``[self.find_all(x, limit) for x in needles]``: once the window index is built, the
        needles of at least :data:`GRAM` bytes are looked up together (their hashes, buckets
        and candidates in a few numpy passes, each candidate then compared with its needle);
        the same offsets, in the same order."""
        sk = self.skeleton
        long = [k for k, x in enumerate(needles) if len(x) >= GRAM] if len(sk) >= GRAM else []
        if self._grams is None or len(long) < 2:
            return [self.find_all(x, limit) for x in needles]
        out: list[list[int]] = [[] if len(x) >= GRAM and len(sk) >= GRAM else self.find_all(x, limit)
                                for x in needles]
        keys, starts, bits, bucket_bits = self._grams
        mask = (1 << bits) - 1
        heads = np.frombuffer(b"".join(needles[k][:GRAM] for k in long), dtype=np.uint8).reshape(-1, GRAM)
        prefix = _gram_hashes((heads[:, j] for j in range(GRAM)), len(long)) & np.uint64(0xFFFFFFFFFFFFFFFF ^ mask)
        bucket = (prefix >> np.uint64(64 - bucket_bits)).astype(np.int64)
        lo = starts[bucket]
        counts = starts[bucket + 1] - lo
        total = int(counts.sum())
        owner = np.repeat(np.arange(len(long)), counts)
        cand = keys[np.repeat(lo, counts) + (np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts))]
        ok = (cand & np.uint64(0xFFFFFFFFFFFFFFFF ^ mask)) == prefix[owner]
        for o, pos in zip(owner[ok].tolist(), (cand[ok] & np.uint64(mask)).tolist()):
            k = long[o]
            found = out[k]
            if len(found) < limit and sk.startswith(needles[k], pos):
                found.append(pos)
        return out

    def char_offset(self, byte_offset: int) -> int:
        """Character offset of a byte offset of ``data`` that starts a character."""
        if self._ascii:
            return byte_offset
        blk = max(0, bisect.bisect_right(self._byte_starts, byte_offset) - 1)
        b0 = self._byte_starts[blk]
        return self._char_starts[blk] + len(self.data[b0:byte_offset].decode("utf-8", "surrogatepass"))
