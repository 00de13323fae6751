"""Problems before acceptance (``checks.pair``): one pair's failing and warning checks, as if
accepted, equal the whole-set checks' verdicts for that pair; the keys that fix each."""

from __future__ import annotations

import pytest

from conftest import write_jsonl
from support import opened

from mtcb_curate.checks import CHECKS_BY_ID, CheckContext, CheckStatus, Limits, run_checklist
from mtcb_curate.checks.pair import (FIX_KEYS, PER_PAIR_CHECKS, SET_CHECKS, failing, pair_problems,
                                     set_check_results)
from mtcb_curate.dataset.model import Status

DOC_A = ("Alpha Corp makes industrial anvils in Ohio and Texas.\n"
         "Total revenue was $10 million in fiscal 2022, up from $8 million.\n" + "Filler sentence here. " * 80)
DOC_B = "Beta Inc sells brass bells through retail stores.\nIts best year was 2021, when net income reached $3 million.\n"
LONG = DOC_A[:1300]


def _q(question, answer, passage, ticker="AAA", chunk_index=None):
    return {"question": question, "answer": answer, "supporting_passage": passage, "ticker": ticker,
            "company": {"AAA": "Alpha", "BBB": "Beta"}[ticker], "chunk_index": chunk_index}


QUESTIONS = [
    _q("What does Alpha Corp make in Ohio and Texas?", "Industrial anvils",
       "Alpha Corp makes industrial anvils in Ohio and Texas.", chunk_index=0),            # 0 clean
    _q("Is Alpha's revenue growing?", "It grew", LONG),                                     # 1 yes/no, length fail
    _q("Through which channel does Beta Inc sell its brass bells?", "Retail stores",
       "Beta Inc sells brass bells through retail stores worldwide.", "BBB"),               # 2 not verbatim
    _q("How much net income did Beta report for 2021?", "$3 million",
       "Its best year was 2021, when net income reached $3 million.", "BBB", chunk_index=7),  # 3 out of range
    _q("How much net income did Beta report for 2021?", "Seventeen purple elephants",
       "Its best year was 2021, when net income reached $3 million.", "BBB"),               # 4 duplicate, answerable
    _q("", "$10 million", "Total revenue was $10 million in fiscal 2022"),                     # 5 empty question
    _q("Who sells bells?", "Beta", "bells"),                                                # 6 trivial, too short
]


@pytest.fixture
def fixture_session(tmp_path):
    src = tmp_path / "src"
    write_jsonl(src / "corpus.jsonl", [{"ticker": "AAA", "company": "Alpha", "text": DOC_A},
                                       {"ticker": "BBB", "company": "Beta", "text": DOC_B}])
    write_jsonl(src / "questions.jsonl", QUESTIONS)
    session = opened(src, tmp_path / "ws")
    yield session
    session.workspace.close()


def _expected(report, pid):
    """The whole-set report's verdicts on ``pid`` for the checks evaluated per pair."""
    return {(c.id, CheckStatus.FAIL if pid in c.failing else CheckStatus.WARN, c.reasons[pid])
            for c in report.checks if c.id in PER_PAIR_CHECKS + SET_CHECKS and pid in c.reasons}


def _got(problems):
    return {(p.check_id, p.status, p.reason) for p in problems}


def _accept_all(session):
    for pid in range(len(session)):
        session.decide(pid, Status.ACCEPTED)


def _assert_equal_to_checklist(session):
    report = run_checklist(session, loads=False)
    ctx = CheckContext.build(session, loads=False)
    sets = {c.id: c for c in report.checks if c.id in SET_CHECKS}
    assert ctx.accepted == report.accepted and report.accepted
    for pid in ctx.accepted:
        # From the context: what the whole-set checks read.
        assert _got(pair_problems(ctx, pid, set_results=sets)) == _expected(report, pid), pid
        # From the session with the same verification result (the review screen's path).
        assert _got(pair_problems(session, pid, ctx.limits, result=ctx.verified[pid], set_results=sets)) \
            == _expected(report, pid), pid
    return report


def test_per_pair_equals_the_whole_set_checks_on_a_fixture(fixture_session):
    _accept_all(fixture_session)
    report = _assert_equal_to_checklist(fixture_session)
    got = {pid: {p.check_id for p in pair_problems(fixture_session, pid, result=CheckContext.build(
        fixture_session, loads=False).verified[pid], set_results={c.id: c for c in report.checks})}
        for pid in range(len(QUESTIONS))}
    # Pair 1's long passage holds pair 0's: shared evidence (its own warning where that check
    # exists; before it, the duplicates check linked shared passages too).
    shared = "shared_passage" if "shared_passage" in CHECKS_BY_ID else "duplicates"
    assert got[0] == {shared}
    assert {"passage_length", "question_form", shared} <= got[1]
    assert "verbatim" in got[2]
    assert "links" in got[3]
    assert {"answerable", "duplicates"} <= got[4] and "duplicates" in got[3]
    assert "question_form" in got[5] and "question_form" in got[6] and "passage_length" in got[6]


def test_per_pair_equals_the_whole_set_checks_on_the_sample(sample_dir, tmp_path):
    session = opened(None, tmp_path / "ws", sample=True)
    try:
        _accept_all(session)
        report = _assert_equal_to_checklist(session)
        # The sample has problems to compare: not every pair passes.
        assert any(_expected(report, pid) for pid in report.accepted)
    finally:
        session.workspace.close()


def test_undecided_pairs_are_evaluated_as_if_accepted(fixture_session):
    # Nothing accepted: the checklist sees no pair, the per-pair evaluation still sees each.
    sets = set_check_results(fixture_session)
    problems = pair_problems(fixture_session, 1, set_results=sets)
    assert ("passage_length", CheckStatus.FAIL) in [(p.check_id, p.status) for p in failing(problems)]
    assert ("question_form", CheckStatus.WARN) in {(p.check_id, p.status) for p in problems}
    assert "duplicates" in {p.check_id for p in pair_problems(fixture_session, 4, set_results=sets)}
    fixture_session.decide(3, Status.REJECTED)  # its duplicate no longer counts
    assert "duplicates" not in {p.check_id for p in pair_problems(fixture_session, 4,
                                                                   set_results=set_check_results(fixture_session))}


def test_set_checks_grouped_from_a_search_match_a_fresh_run(fixture_session, monkeypatch):
    from mtcb_curate.app import clusters as app_clusters
    from mtcb_curate.neardup import blocking

    search = app_clusters.search(fixture_session)
    calls = []
    real = blocking._links
    monkeypatch.setattr(blocking, "_links", lambda *a, **k: calls.append(1) or real(*a, **k))

    def same(a, b):
        return {k: (r.status, r.reasons, r.message) for k, r in a.items()} == \
            {k: (r.status, r.reasons, r.message) for k, r in b.items()}

    derived = set_check_results(fixture_session, search=search)
    assert calls == []  # grouped from the search's links: nothing searched again
    assert "duplicates" in derived and same(derived, set_check_results(fixture_session))
    fixture_session.decide(3, Status.REJECTED)  # a decision: the same links, grouped again
    calls.clear()
    derived = set_check_results(fixture_session, search=search)
    assert calls == [] and same(derived, set_check_results(fixture_session))
    assert 4 not in derived["duplicates"].reasons
    fixture_session.edit_many({4: {"question": "A question edited since the search?"}})  # stale: searched again
    calls.clear()
    set_check_results(fixture_session, search=search)
    assert calls


def test_fix_keys_name_the_repair(fixture_session):
    ctx = CheckContext.build(fixture_session, loads=False, include_undecided=True)
    by_check = {p.check_id: p.fix_keys for pid in ctx.accepted for p in pair_problems(ctx, pid)}
    assert by_check["passage_length"] == ("z", "m")
    assert by_check["verbatim"][0] == "s"
    assert by_check["question_form"] == ("e", "r", "x")
    assert by_check["answerable"] == ("e", "z")
    assert by_check["links"] == ("i",)
    assert FIX_KEYS["duplicates"] == ("d",) and FIX_KEYS["shared_passage"] == ("S",)


def test_a_clean_pair_and_limits(fixture_session):
    assert pair_problems(fixture_session, 0) == []
    # Tighter limits make the same passage too long (a warning, not a failure).
    problems = pair_problems(fixture_session, 0, Limits(min_chars=10, max_chars=40))
    assert [(p.check_id, p.status) for p in problems] == [("passage_length", CheckStatus.WARN)]


def test_a_stale_result_is_ignored(fixture_session):
    ctx = CheckContext.build(fixture_session, loads=False, include_undecided=True)
    stale = ctx.verified[2]
    fixture_session.edit(2, {"supporting_passage": "Beta Inc sells brass bells through retail stores."})
    assert "verbatim" not in {p.check_id for p in pair_problems(fixture_session, 2, result=stale)}


def test_checklist_include_undecided(fixture_session):
    plain = run_checklist(fixture_session, loads=False)
    assert plain.accepted == [] and plain.get("reviewed").status == CheckStatus.FAIL
    fixture_session.decide(5, Status.REJECTED)
    what_if = run_checklist(fixture_session, loads=False, include_undecided=True)
    assert what_if.accepted == [0, 1, 2, 3, 4, 6]
    assert what_if.get("reviewed").status == CheckStatus.SKIP
    assert 1 in what_if.get("passage_length").failing and 2 in what_if.get("verbatim").failing
