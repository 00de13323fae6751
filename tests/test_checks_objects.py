"""The checklist as a list of ``Check`` objects (``mtcb_curate.checks``): each check run alone,
by id, on a passing and a failing fixture; the list itself (ids unique, ``CHECK_IDS`` derived);
``Limits.resolve``, the one place limits are built from the profile and ``[checklist]``.

The fixtures are ``test_checklist``'s (ficha columns, crafted in ``tmp_path``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_checklist import ALPHA, BETA, open_ws, questions  # noqa: E402,F401 - open_ws: fixture

from mtcb_curate.checks import (  # noqa: E402
    CHECK_IDS,
    CHECKS,
    CHECKS_BY_ID,
    Check,
    CheckContext,
    CheckStatus,
    Limits,
    MAX_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    run_checklist,
)
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.dataset.profiles import PROFILES  # noqa: E402


def run_alone(session, check_id: str, **kw):
    """One check, looked up by id, on a fresh context (no other check ran before it)."""
    kw.setdefault("loads", False)
    return CHECKS_BY_ID[check_id](CheckContext.build(session, **kw))


# -- the list ---------------------------------------------------------------------------------------

def test_ids_are_unique_and_check_ids_is_derived_from_the_list():
    ids = [c.id for c in CHECKS]
    assert len(ids) == len(set(ids)) == 14
    assert list(CHECK_IDS) == ids
    assert CHECK_IDS == ("verbatim", "unique_passage", "duplicates", "shared_passage", "passage_length", "findable",
                         "answerable",
                         "question_form", "links", "corpus", "balance", "reviewed", "conflicts", "loads")
    assert CHECKS_BY_ID == {c.id: c for c in CHECKS}


def test_every_check_is_a_frozen_check_with_a_worst_status_and_a_description():
    for c in CHECKS:
        assert isinstance(c, Check)
        assert c.worst in (CheckStatus.FAIL, CheckStatus.WARN), c.id
        assert c.description and "\n" not in c.description, c.id
        with pytest.raises(dataclasses.FrozenInstanceError):
            c.id = "other"  # type: ignore[misc]
    assert {c.id for c in CHECKS if c.worst == CheckStatus.WARN} == {"unique_passage", "shared_passage",
                                                                     "answerable", "balance"}


def test_check_status_compares_and_serializes_as_the_plain_string():
    assert CheckStatus.PASS == "pass" and "fail" == CheckStatus.FAIL
    assert [str(s) for s in CheckStatus] == ["pass", "warn", "fail", "skip"]
    assert json.dumps({"s": CheckStatus.WARN}) == '{"s": "warn"}'


def test_the_report_is_the_list_run_in_order(open_ws):
    session = open_ws()
    seen = []
    report = run_checklist(session, loads=False, progress=seen.append)
    assert seen == [c.id for c in CHECKS] == [c.id for c in report.checks]
    for c in CHECKS:
        alone = run_alone(session, c.id)
        got = report.get(c.id)
        assert (alone.status, alone.message, alone.pairs) == (got.status, got.message, got.pairs)


# -- each check alone: passing fixture ---------------------------------------------------------------

@pytest.mark.parametrize("check_id", [i for i in CHECK_IDS if i != "loads"])
def test_each_check_alone_passes_on_the_clean_dataset(open_ws, check_id):
    r = run_alone(open_ws(), check_id)
    assert r.id == check_id
    assert (r.status, r.pairs, r.reasons) == ("pass", [], {}), r.message


def test_loads_alone_passes_on_the_clean_dataset(open_ws):
    r = run_alone(open_ws(), "loads", loads=True)
    assert r.status == "pass", r.message
    assert "corpus 2 rows" in r.message and "questions 4 rows" in r.message


# -- each check alone: failing fixture ---------------------------------------------------------------

def _rows(**changes):
    """The clean questions with pair 0's fields replaced."""
    rows = questions()
    rows[0].update(changes)
    return rows


FAILING = {
    # check id -> (corpus rows or None, question rows or None, accepted ids, extra context args)
    "verbatim": (None, _rows(supporting_passage="Alpha Corp makes nothing at all."), "all", {}),
    "unique_passage": ([{"ticker": "AAA", "company": "Alpha", "text": ALPHA},
                        {"ticker": "BBB", "company": "Beta", "text": BETA + ALPHA}], None, "all", {}),
    "duplicates": (None, _rows(question=questions()[1]["question"]), "all", {}),
    "shared_passage": (None, _rows(supporting_passage=questions()[1]["supporting_passage"]), "all", {}),
    "passage_length": (None, None, "all", {"limits": Limits(min_chars=5, max_chars=20)}),
    "findable": ([{"ticker": "AAA", "company": "Alpha", "text": ALPHA + " " + "Alpha sells kettles. " * 100},
                  {"ticker": "BBB", "company": "Beta", "text": BETA}],
                 _rows(supporting_passage="Alpha sells kettles. " * 100), "all", {}),
    "answerable": (None, _rows(answer="Copper kettles from Vermont"), "all", {}),
    "question_form": (None, _rows(question=""), "all", {}),
    "links": (None, _rows(ticker="ZZZ"), "all", {}),
    "corpus": ([{"ticker": "AAA", "company": "Alpha", "text": ALPHA},
                {"ticker": "BBB", "company": "Beta", "text": BETA},
                {"ticker": "CCC", "company": "Gamma", "text": "   "}], None, "all", {}),
    "balance": (None, None, [0], {}),
    "reviewed": (None, None, [1, 2, 3], {}),
    "loads": (None, None, [], {"loads": True}),
}


#: Checks whose failing fixture needs more than one SQLite workspace: test_team.py (a team's
#: shared workspace on a real PostgreSQL server) gives ``conflicts`` its failing case.
FAILING_ELSEWHERE = {"conflicts"}


def test_every_check_has_a_failing_fixture():
    assert set(FAILING) | FAILING_ELSEWHERE == set(CHECK_IDS)


@pytest.mark.parametrize("check_id", list(FAILING))
def test_each_check_alone_gives_its_worst_status_on_its_failing_fixture(open_ws, check_id):
    corpus_rows, question_rows, accept, kw = FAILING[check_id]
    session = open_ws(corpus_rows, question_rows, accept=accept)
    r = run_alone(session, check_id, **kw)
    assert r.id == check_id
    assert r.status == CHECKS_BY_ID[check_id].worst, r.message
    if check_id not in ("corpus", "loads"):  # whole-dataset checks name no pair
        assert 0 in r.pairs and r.reasons[0]


def test_a_check_alone_on_rejected_pairs_ignores_them(open_ws):
    session = open_ws(question_rows=_rows(supporting_passage="Alpha Corp makes nothing at all."))
    session.decide(0, Status.REJECTED, "other")
    assert run_alone(session, "verbatim").status == "pass"


# -- Limits.resolve ----------------------------------------------------------------------------------

def test_limits_resolve_defaults_then_profile_then_config(tmp_path):
    assert Limits.resolve(None, {}) == Limits(MIN_PASSAGE_CHARS, MAX_PASSAGE_CHARS)
    profile = dataclasses.replace(PROFILES["ficha"], extra={"min_passage_chars": "40", "max_passage_chars": "400"})
    assert Limits.resolve(profile, {}) == Limits(40, 400)
    assert Limits.resolve(profile.extra, {}) == Limits(40, 400)
    assert Limits.resolve(profile, {"max_passage_chars": 500}) == Limits(40, 500)
    config = tmp_path / "config.toml"
    config.write_text("[checklist]\nmin_passage_chars = 25\n", encoding="utf-8")
    assert Limits.resolve(profile, config) == Limits(25, 400)
    assert Limits.resolve(None, tmp_path / "absent.toml") == Limits()


def test_limits_resolve_reads_the_default_config_only_when_no_table_is_given(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("[checklist]\nmax_passage_chars = 700\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))
    assert Limits.resolve(None) == Limits(MIN_PASSAGE_CHARS, 700)
    assert Limits.resolve(None, {}) == Limits()
    # the older names are the same resolution
    assert Limits.from_config({}) == Limits(MIN_PASSAGE_CHARS, 700)
    assert Limits.for_profile({"max_passage_chars": "300"}) == Limits(MIN_PASSAGE_CHARS, 300)


def test_the_checklist_defaults_to_the_profile_limits_without_the_config(open_ws, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("[checklist]\nmax_passage_chars = 20\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))
    ctx = CheckContext.build(open_ws(), loads=False)
    assert ctx.limits == Limits.resolve(ctx.session.dataset.profile, {})
