"""Filters (app/filters.py): each criterion, combinations, the bar's line, a bad regex."""

from __future__ import annotations

import pytest

from support import opened, write_source

from mtcb_curate.app import filters
from mtcb_curate.app.filters import Filter, FilterError, apply, match_spans, parse
from mtcb_curate.checks.base import CheckResult
from mtcb_curate.checks.pair import PairProblem
from mtcb_curate.checks.base import CheckStatus
from mtcb_curate.dataset.model import Status

CORPUS = [{"ticker": "AAA", "text": "Alpha revenue was 10 million. Alpha costs were 4 million. Other words here."},
          {"ticker": "BBB", "text": "Beta holds the Needle in its haystack. Beta sold 7 units."}]
QUESTIONS = [
    {"question": "What was Alpha revenue?", "answer": "10 million", "supporting_passage": "Alpha revenue was 10 million.",
     "ticker": "AAA", "chunk_index": 0},
    {"question": "What were Alpha costs?", "answer": "4 million", "supporting_passage": "Alpha costs were 4 million.",
     "ticker": "AAA", "chunk_index": 0},
    {"question": "Where is the needle?", "answer": "In the haystack",
     "supporting_passage": "Beta holds the Needle in its haystack.", "ticker": "BBB", "chunk_index": 0},
    {"question": "How many units did Beta sell?", "answer": "7 units", "supporting_passage": "Beta sold 7 units.",
     "ticker": "BBB", "chunk_index": 0},
]


@pytest.fixture
def s(tmp_path):
    session = opened(write_source(tmp_path / "src", CORPUS, QUESTIONS), tmp_path / "ws")
    yield session
    session.workspace.close()


def test_no_criterion_keeps_every_pair(s):
    assert Filter().empty and apply(s, Filter()) == [0, 1, 2, 3]


def test_status(s):
    s.decide(1, Status.ACCEPTED)
    s.decide(3, Status.FLAGGED)
    assert apply(s, Filter(statuses=frozenset({Status.ACCEPTED}))) == [1]
    assert apply(s, Filter(statuses=frozenset({Status.UNDECIDED, Status.FLAGGED}))) == [0, 2, 3]


def test_verdict_from_the_given_lookup_unverified_without(s):
    verdicts = {0: "exact", 1: "fuzzy", 2: "missing"}
    assert apply(s, Filter(verdicts=frozenset({"fuzzy", "missing"})), verdict_of=verdicts.get) == [1, 2]
    assert apply(s, Filter(verdicts=frozenset({"unverified"})), verdict_of=verdicts.get) == [3]
    assert apply(s, Filter(verdicts=frozenset({"exact"}))) == []


def test_check_from_pair_problems_or_a_checklist_result(s):
    probs = {1: [PairProblem("verbatim", CheckStatus.FAIL, "x", ())],
             2: [PairProblem("answerable", CheckStatus.WARN, "y", ())]}
    get = lambda pid: probs.get(pid, [])  # noqa: E731
    assert apply(s, Filter(check="verbatim", level="fail"), problems=get) == [1]
    assert apply(s, Filter(check="answerable", level="fail"), problems=get) == []
    assert apply(s, Filter(check="answerable", level="warn"), problems=get) == [2]
    report = {"links": CheckResult("links", "fail", "m", pairs=[0, 3], reasons={0: "a", 3: "b"}, failing={3})}
    assert apply(s, Filter(check="links"), problems=report) == [0, 3]
    assert apply(s, Filter(check="links", level="fail"), problems=report) == [3]
    assert apply(s, Filter(check="links", level="warn"), problems=report) == [0]
    assert apply(s, Filter(check="links")) == []  # no problems given: nothing known to fail


def test_document_key_is_case_insensitive_and_whole(s):
    assert apply(s, Filter(doc_key="bbb")) == [2, 3]
    assert apply(s, Filter(doc_key="BB")) == []


def test_edited_generated_by_hand(s):
    s.edit(2, {"answer": "In its haystack"})
    s.set_chunk_index(3, 5)
    assert apply(s, Filter(edited=True)) == [2, 3]
    assert apply(s, Filter(edited=False)) == [0, 1]
    gen = s.add_pair("AAA", "Q generated?", "A", "Alpha costs were 4 million.", origin="generate")
    hand = s.add_pair("BBB", "Q by hand?", "A", "Beta sold 7 units.", origin="hand")
    assert apply(s, Filter(generated=True)) == [gen]
    assert apply(s, Filter(by_hand=True)) == [hand]
    assert apply(s, Filter(generated=False, by_hand=False)) == [0, 1, 2, 3]


def test_has_note_through_a_callable_or_the_session(s, monkeypatch):
    notes = {1: "check the figure", 2: ""}
    assert apply(s, Filter(has_note=True), note_of=notes.get) == [1]
    assert apply(s, Filter(has_note=False), note_of=notes.get) == [0, 2, 3]
    monkeypatch.setattr(s, "note", lambda pid: "n" if pid == 3 else None, raising=False)
    assert apply(s, Filter(has_note=True)) == [3]


def test_text_plain_smart_case_and_fields(s):
    assert apply(s, Filter(text="needle")) == [2]  # lower case: any case
    assert apply(s, Filter(text="Needle")) == [2]  # passage has "Needle"
    assert apply(s, Filter(text="NEEDLE")) == []  # upper case: exact case
    assert apply(s, Filter(text="million", fields=("question",))) == []
    assert apply(s, Filter(text="million", fields=("answer",))) == [0, 1]
    assert apply(s, Filter(text="a.pha")) == []  # plain text: the dot is a dot


def test_text_sees_edits(s):
    s.edit(0, {"question": "Totally different wording?"})
    assert apply(s, Filter(text="wording")) == [0]
    assert apply(s, Filter(text="Alpha revenue", fields=("question",))) == []


def test_regex(s):
    assert apply(s, Filter(text=r"\d+ units", regex=True)) == [3]
    assert apply(s, Filter(text=r"^what w", regex=True, fields=("question",))) == [0, 1]


def test_backslashes_reach_the_regex(s):
    assert parse(r"re:\d+").text == r"\d+" and parse(r"'/\bBeta \w+/'").text == r"\bBeta \w+"
    assert apply(s, parse(r"re:\d\sunits")) == [3]


def test_bad_regex_is_one_clear_line(s):
    with pytest.raises(FilterError) as err:
        apply(s, Filter(text="(unclosed", regex=True))
    msg = str(err.value)
    assert "\n" not in msg and "(unclosed" in msg and "regular expression" in msg
    with pytest.raises(FilterError):
        parse("/[a-/")


def test_combination_every_criterion_must_hold(s):
    s.decide(0, Status.ACCEPTED)
    s.decide(1, Status.ACCEPTED)
    s.decide(3, Status.ACCEPTED)
    f = Filter(statuses=frozenset({Status.ACCEPTED}), doc_key="AAA", text="costs")
    assert apply(s, f) == [1]
    assert apply(s, parse("status:accepted doc:AAA costs")) == [1]
    assert apply(s, parse("is:accepted doc:bbb")) == [3]


def test_parse_reads_every_word_and_describe_round_trips():
    f = parse("status:undecided,flagged verdict:fuzzy fails:verbatim doc:'A B' is:edited -is:generated "
              "is:hand has:note in:q,p re:fo+")
    assert f.statuses == {Status.UNDECIDED, Status.FLAGGED} and f.verdicts == {"fuzzy"}
    assert (f.check, f.level, f.doc_key) == ("verbatim", "fail", "A B")
    assert (f.edited, f.generated, f.by_hand, f.has_note) == (True, False, True, True)
    assert f.fields == ("question", "supporting_passage") and f.text == "fo+" and f.regex
    assert parse(f.describe()) == f
    assert parse("two words").text == "two words" and not parse("two words").regex
    assert parse("'/a b/'").text == "a b" and parse("'/a b/'").regex  # quoted: a regex with a space
    assert parse("").empty


@pytest.mark.parametrize("line", ["status:nope", "verdict:odd", "is:weird", "in:x", "fails:", "'unbalanced",
                                  "re:x plain"])
def test_parse_errors_are_one_line(line):
    with pytest.raises(FilterError) as err:
        parse(line)
    assert "\n" not in str(err.value)


def test_match_spans(s):
    f = Filter(text="beta")
    assert match_spans(f, "Beta holds. beta too") == [(0, 4), (12, 16)]
    assert match_spans(Filter(text="x*", regex=True), "abc") == []  # empty matches left out
    assert match_spans(Filter(text="(", regex=True), "(") == []
    assert match_spans(Filter(), "abc") == []


def test_limit_to_ids(s):
    assert apply(s, Filter(doc_key="AAA"), ids=[1, 2, 3]) == [1]
    assert filters.LEVELS == ("fail", "warn", "any")


# -- a new regular expression: smart case over lower-cased texts, literal prefilter ---------

def _brute(s, f):
    """The filter's text criterion computed the slow, obvious way: the compiled pattern
    searched in every current text of every field."""
    p = f.pattern()
    out = []
    for i in range(len(s.pairs)):
        view = s.view(i)
        if any(p.search(getattr(view, "passage" if n == "supporting_passage" else n)) for n in f.fields):
            out.append(i)
    return out


@pytest.mark.parametrize("rx", [r"alpha\s+\w+", r"[a-c]eta", r"\d+ (units|million)", r"needle",
                                r"(?:alpha|beta) (revenue|sold)", r"\x42eta", r"[\x41-\x43]lpha",
                                r"Needle", r"^what", r"million\.$", r"(?i)BETA sold", r"haystack\b"])
def test_new_regex_equals_a_plain_search(s, rx):
    s.edit(1, {"question": "What were ALPHA COSTS in 2021?"})
    f = Filter(text=rx, regex=True)
    assert apply(s, f) == _brute(s, f)


def test_folded_pattern_refuses_upper_case_escapes():
    import re
    assert filters.folded_pattern(re.compile(r"net income", re.I)).flags & re.I == 0
    assert filters.folded_pattern(re.compile(r"\x41bc", re.I)) is None
    assert filters.folded_pattern(re.compile(r"(foo|b\x41r)", re.I)) is None
    assert filters.folded_pattern(re.compile(r"[\x41-\x5a]", re.I)) is None


def test_required_literal_is_held_by_every_match():
    import re
    assert filters.required_literal(re.compile(r"revenue.*2021")) == "revenue"
    assert filters.required_literal(re.compile(r"\d{4}")) == ""
    assert filters.required_literal(re.compile(r"(a|b)cd")) == "cd"
    assert filters.required_literal(re.compile(r"ab?c")) == ""  # 'b' optional: no run of two
    assert filters.required_literal(re.compile(r"revenue", re.I)) == ""


from hypothesis import given, settings, strategies as st  # noqa: E402

_WORDS = st.sampled_from(["Alpha", "alpha", "BETA", "beta", "İstanbul", "straße", "STRASSE", "10", "2021",
                          "net", "Income", "K", "\u212a", "ǅ", "units", "million."])
_PATTERNS = st.sampled_from([r"alpha", r"beta\s\d+", r"net income", r"i̇stanbul", r"stra(ss|ß)e", r"k",
                             r"[a-z]+ \d", r"ǆ", r"\bunits\b", r"(alpha|beta) \w+", r"million\.",
                             r"[^a-z ]", r"n.t"])


@settings(max_examples=25, deadline=None)
@given(texts=st.lists(st.lists(_WORDS, min_size=1, max_size=6).map(" ".join), min_size=4, max_size=4),
       rx=_PATTERNS)
def test_smart_case_regex_matches_like_ignorecase(tmp_path_factory, texts, rx):
    """Property: a lower-case regex over the lower-cased texts selects the same pairs as the
    same regex with re.IGNORECASE over the original texts."""
    import re
    tmp = tmp_path_factory.mktemp("fold")
    rows = [dict(q, question=t) for q, t in zip(QUESTIONS, texts)]
    session = opened(write_source(tmp / "src", CORPUS, rows), tmp / "ws")
    try:
        f = Filter(text=rx, regex=True, fields=("question",))
        p = re.compile(rx, re.IGNORECASE)
        want = [i for i, t in enumerate(texts) if p.search(t)]
        assert apply(session, f) == want
    finally:
        session.workspace.close()


def test_question_form_and_type_criteria_follow_the_rules_on_current_texts(tmp_path):
    """``form:`` and ``type:`` (stats.questions' rules), parsed, described and applied to the
    CURRENT question (an edit changes the form)."""
    from support import opened, write_source

    corpus = [{"ticker": "AAA", "company": "A", "text": "Revenue was $10 million. Bob Smith is CEO.\n"}]
    qs = [{"question": "What was revenue?", "answer": "$10 million", "supporting_passage": "Revenue was $10 million.",
           "ticker": "AAA", "company": "A", "chunk_index": 0},
          {"question": "Who is the CEO?", "answer": "Bob Smith", "supporting_passage": "Bob Smith is CEO.",
           "ticker": "AAA", "company": "A", "chunk_index": 0},
          {"question": "How much was revenue?", "answer": "$10 million", "supporting_passage": "Revenue was $10 million.",
           "ticker": "AAA", "company": "A", "chunk_index": 0}]
    s = opened(write_source(tmp_path / "src", corpus, qs), tmp_path / "ws")
    try:
        f = filters.parse("form:what,how-much")
        assert f.forms == {"what", "how much"} and filters.parse(f.describe()) == f
        assert filters.apply(s, f) == [0, 2]
        assert filters.apply(s, filters.parse("type:entity")) == [1]
        assert filters.apply(s, filters.parse("form:what type:numeric")) == [0]
        s.edit(0, {"question": "Who reported revenue?"})
        assert filters.apply(s, filters.parse("form:who")) == [0, 1]
        with pytest.raises(filters.FilterError, match="unknown question form"):
            filters.parse("form:whence")
        with pytest.raises(filters.FilterError, match="unknown question type"):
            filters.parse("type:")
    finally:
        s.workspace.close()


def test_arrow_column_of_many_texts_matches_pyarrows_own():
    """``_string_array`` builds the same column as ``pyarrow.array`` (without importing pandas)."""
    import pyarrow as pa

    from mtcb_curate.app import filters

    texts = [f"passage {i}: net revenue €{i:,} — “quoted” " * (i % 5) for i in range(3 * 1024 + 7)]
    got = filters._string_array(texts)
    assert got.equals(pa.array(texts, type=pa.large_string()))
    assert filters._string_array([]).equals(pa.array([], type=pa.large_string()))
