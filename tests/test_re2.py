"""app/re2.py: a Python regular expression searched by RE2 over an Arrow column answers as
Python's ``re`` does, or is refused (None) and left to Python."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings, strategies as st

from support import opened, write_source

from mtcb_curate.app import filters, re2


@pytest.fixture(autouse=True)
def arrow_at_any_size(monkeypatch):
    """The tests' sessions are small: search them the way a large one is searched (RE2)."""
    monkeypatch.setattr(filters, "ARROW_MIN_PAIRS", 0)


def _re2_says(pattern: str, texts: list[str]) -> list[bool]:
    return pc.match_substring_regex(pa.array(texts, pa.large_string()), pattern).to_pylist()


@pytest.mark.parametrize("category", [r"\d", r"\D", r"\w", r"\W", r"\s", r"\S"])
@pytest.mark.parametrize("ascii_only", [False, True])
def test_category_ranges_are_pythons_on_every_code_point(category, ascii_only):
    flags = re.ASCII if ascii_only else 0
    chars = list(re2._all_code_points())
    assert len(chars) == 0x110000 - 0x800 and chars[0xD7FF] == "\ud7ff" and chars[0xD800] == "\ue000"
    t = re2.translate(re.compile(category, flags))
    assert t is not None and not t.boundary
    python = re.compile(category, flags)
    assert _re2_says(t.pattern, chars) == [python.match(c) is not None for c in chars]


#: Characters where the engines' rules part: Unicode digits and letters, the spaces Python counts
#: and RE2 does not (\v, \x1c, \x85, no-break space), combining marks, case pairs, line breaks.
_ALPHABET = list("aZ_09 .-\n\t\v\x1c\x85\xa0é٣２ßİıK\u0301中😀ing")
_TEXTS = st.lists(st.sampled_from(_ALPHABET), max_size=12).map("".join)
#: Texts every run also holds: ends with and without a final line break, the spaces apart.
_EVERY_RUN = ["a\n", "a", "\n", "a\n\n", "Z\n", "ing", "é ing", "\v", "\x1c a", "a\x85", "٣٣", "２0"]
_PATTERNS = [r"\d", r"\d{2}", r"\w+ing", r"\W", r"\s", r"\S\s\S", r"[^\w\s]", r"[\d-]", r"[^\d\s]{2}", r"a$",
             r"^a", r"\Aa", r"a\Z", r"a.Z", r"(?s)a.Z", r"(a|Z)+_", r"[a-f0-9]{2,3}?", r"é\w", r"[é-ı]", r"\x1c",
             r"[^a]", r"ing\b", r"\bing", r"\B\d", r"\b\w+\b", r"(?a)\w\b", r"(?a)\s", r"K", r"", r"中+😀",
             r"a*?Z", r"(?:ab)*c?", r"\n$", r"\u0301"]


@pytest.mark.parametrize("rx", _PATTERNS)
@settings(max_examples=20, deadline=None)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=20))
def test_translation_answers_as_python_does(rx, texts):
    """Property: on every text (those with a word character outside ASCII aside for a \\b
    pattern, which the caller leaves to Python), RE2 finds a match exactly where Python does."""
    p = re.compile(rx)
    t = re2.translate(p)
    assert t is not None, rx
    texts = texts + _EVERY_RUN
    sure = [x for x in texts if not (t.boundary and re2.non_ascii_word(x))]
    assert _re2_says(t.pattern, sure) == [p.search(x) is not None for x in sure]


@pytest.mark.parametrize("rx", [r"(?i)abc", r"(?m)^a", r"a(?=b)", r"(?<!a)b", r"(a)\1", r"a{1001}", r"(?i:a)b",
                                r"a++", r"(?>ab)", r"(a)?(?(1)b|c)", r"a$b", r"(a|b$)", r"0|$", r"\ud800"])
def test_what_could_answer_differently_is_refused(rx):
    assert re2.translate(re.compile(rx)) is None


def test_boundary_is_reported_except_under_ascii():
    assert re2.translate(re.compile(r"\bnet\b")).boundary
    assert not re2.translate(re.compile(r"(?a)\bnet\b")).boundary
    assert not re2.translate(re.compile(r"net")).boundary


# -- through filters.apply: edited and added pairs, \b over non-ASCII words --------------------

CORPUS = [{"ticker": "AAA", "text": "Café revenue grew in 2021. Naïve costs fell."}]
ROWS = [
    {"question": "What did café revenue do in 2021?", "answer": "grew", "supporting_passage": "Café revenue grew",
     "ticker": "AAA", "chunk_index": 0},
    {"question": "Was the naïve costing right?", "answer": "fell", "supporting_passage": "Naïve costs fell.",
     "ticker": "AAA", "chunk_index": 0},
    {"question": "Which year?", "answer": "٢٠٢١", "supporting_passage": "in 2021", "ticker": "AAA",
     "chunk_index": 0},
    {"question": "What grew\v and fell?", "answer": "revenue\n", "supporting_passage": "revenue grew",
     "ticker": "AAA", "chunk_index": 0},
]


def _brute(s, f):
    p = f.pattern()
    return [i for i in range(len(s.pairs)) if any(
        p.search(getattr(s.view(i), "passage" if n == "supporting_passage" else n)) for n in f.fields)]


@pytest.mark.parametrize("rx", [r"\bcaf", r"caf\b", r"\bna", r"ïve\b", r"\d{4}", r"\w+ing\b", r"\s\S", r"e$",
                                r"Café", r"\bWhich\b", r"[^\x00-\x7f]", r"(?=grew)gr", r"ew\n", r"costs?\b"])
def test_apply_equals_python_on_every_current_text(tmp_path, rx):
    s = opened(write_source(tmp_path / "src", CORPUS, ROWS), tmp_path / "ws")
    try:
        filters.warm(s)
        s.edit(0, {"question": "What did the cafe do?"})
        s.edit(2, {"answer": "2021 ing"})
        s.add_pair("AAA", "A naïve café costing?", "yes", "Naïve costs fell.", origin="hand")
        for f in (filters.Filter(text=rx, regex=True), filters.Filter(text=rx)):
            assert filters.apply(s, f) == _brute(s, f), f
    finally:
        s.workspace.close()


def test_warm_builds_every_column_the_first_queries_read(tmp_path):
    s = opened(write_source(tmp_path / "src", CORPUS, ROWS), tmp_path / "ws")
    try:
        filters.warm(s)
        built = dict(filters._COLUMNS[s])
        for f in (filters.Filter(text="revenue"), filters.Filter(text="Revenue"),
                  filters.Filter(text=r"\d{4}", regex=True), filters.Filter(text=r"\bCafé\b", regex=True)):
            filters.apply(s, f)
        assert filters._COLUMNS[s] == built  # the same columns, none built again under another key
    finally:
        s.workspace.close()


@pytest.mark.parametrize("min_pairs, unimported", [(0, ["pandas"]), (None, ["pandas", "pyarrow.compute"])])
def test_warm_and_a_query_leave_pandas_unimported(tmp_path, min_pairs, unimported):
    """pyarrow imports pandas from ``pyarrow.array(list)`` and ``to_numpy``: about a second of
    imports holding the GIL in the start-up worker, which stalled keys. Below ``ARROW_MIN_PAIRS``
    Arrow's compute functions (about 15 MB once used) are not even imported. Run in a fresh
    Python (this one may have imported them already)."""
    import subprocess
    import sys

    src = write_source(tmp_path / "src", CORPUS, ROWS)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mtcb_curate.app import filters\n"
        "from mtcb_curate.app.sources import Options, open_session\n"
        + (f"filters.ARROW_MIN_PAIRS = {min_pairs}\n" if min_pairs is not None else "")
        + f"s = open_session(Options('ficha', source=[{str(src)!r}], workspace=Path({str(tmp_path / 'ws')!r})))\n"
        "filters.warm(s)\n"
        "assert filters.apply(s, filters.Filter(text=r'\\bcaf', regex=True)) == [0]\n"
        "assert filters.apply(s, filters.Filter(text='naïve')) == [1]\n"
        "print(sorted(m for m in sys.modules if m in ('pandas', 'pyarrow.compute')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    imported = eval(out.stdout.strip())
    assert not set(imported) & set(unimported)
    if min_pairs == 0:
        assert imported == ["pyarrow.compute"]  # RE2 did search
