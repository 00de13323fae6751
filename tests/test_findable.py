"""The ``findable`` check: fail when a passage is longer than ``[preview]
reference_size``; warn when every configured chunker cuts it, read from the preview cache only
(not evaluated before a preview has run); its per-pair rule in ``checks.pair``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_checklist import ALPHA, BETA, open_ws, questions  # noqa: E402,F401 - open_ws: fixture

from mtcb_curate.app.preview import run_preview  # noqa: E402
from mtcb_curate.checks import CHECKS_BY_ID, CheckContext  # noqa: E402
from mtcb_curate.checks.findable import findable_problem  # noqa: E402
from mtcb_curate.checks.pair import pair_problems  # noqa: E402
from mtcb_curate.preview.chunkers import parse_spec  # noqa: E402
from mtcb_curate.preview.placement import CUT, FITS  # noqa: E402

LONG = "Alpha sells kettles. " * 100  # 2,100 characters


def run(session):
    return CHECKS_BY_ID["findable"](CheckContext.build(session, loads=False))


@pytest.fixture
def config(tmp_path, monkeypatch):
    def write(text: str) -> Path:
        path = tmp_path / "preview.toml"
        path.write_text(text, encoding="utf-8")
        monkeypatch.setenv("MTCB_CURATE_CONFIG", str(path))
        return path
    return write


def test_passes_on_the_clean_set_and_says_the_cut_part_was_not_evaluated(open_ws):
    r = run(open_ws())
    assert (r.status, r.pairs) == ("pass", [])
    assert "not evaluated" in r.message and "no preview has run" in r.message


def test_fails_a_passage_longer_than_the_reference_size(open_ws):
    rows = questions()
    rows[0]["supporting_passage"] = LONG
    session = open_ws([{"ticker": "AAA", "company": "Alpha", "text": ALPHA + LONG},
                       {"ticker": "BBB", "company": "Beta", "text": BETA}], rows)
    r = run(session)
    assert r.status == "fail" and r.pairs == [0] and r.failing == {0}
    assert "2,100 characters: longer than the reference chunk size 2,048" in r.reasons[0]
    assert [(p.check_id, p.status, p.fix_keys) for p in pair_problems(session, 0) if p.check_id == "findable"] == \
        [("findable", "fail", ("z", "m"))]


def test_reference_size_comes_from_the_preview_table(open_ws, config):
    config("[preview]\nreference_size = 50\n")
    r = run(open_ws())
    # "Total revenue was $10 million in fiscal 2022, up from $8 million." is 65 characters.
    assert r.status == "fail" and 1 in r.failing and "reference chunk size 50" in r.reasons[1]


def test_warns_when_every_configured_chunker_cuts_it_from_the_preview_cache(open_ws, config):
    config('[preview]\nchunkers = ["recursive:40"]\n')
    session = open_ws()
    run_preview(session, [parse_spec("recursive:40")], cache_dir=session.workspace.path)
    r = run(session)
    assert r.status == "warn" and r.failing == set()
    assert r.reasons[0] == "cut across chunks by every configured chunker (recursive:40)"
    assert "from the preview cache" in r.message
    ctx = CheckContext.build(session, loads=False)
    assert [p.reason for p in pair_problems(ctx, 0) if p.check_id == "findable"] == [r.reasons[0]]
    # A passage edited after the preview is placed in the cached chunks (nothing is chunked).
    session.edit(0, {"supporting_passage": "Alpha Corp makes"})
    r = run(session)
    assert 0 not in r.reasons and 1 in r.reasons


def test_per_pair_rule_with_placements_given():
    assert findable_problem("x" * 10, 2048, {"recursive:2048": CUT, "token:512": CUT})[0] == "warn"
    assert findable_problem("x" * 10, 2048, {"recursive:2048": CUT, "token:512": FITS}) is None
    assert findable_problem("x" * 10, 2048, {"recursive:2048": CUT, "token:512": None}) is None
    assert findable_problem("x" * 10, 2048, None) is None
    assert findable_problem("x" * 2049, 2048, None)[0] == "fail"
