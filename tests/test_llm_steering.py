"""Steering generation: example questions, target shares of question forms."""

from __future__ import annotations

import pytest

from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.errors import CurateError
from mtcb_curate.llm.prompts import WINDOW_CLOSE, Steering, generation_messages
from mtcb_curate.llm.steering import SteeringConfig, plan_forms, read_examples


def test_forms_are_planned_towards_their_shares():
    existing = ["What is A?", "What is B?", "What is C?", "When did D happen?"]
    # 4 so far: what 3, when 1; targets what 0.5, how much 0.5 -> how much until it catches up.
    assert plan_forms(existing, 4, {"what": 0.5, "how much": 0.5}) == ["how much", "how much", "how much", "what"]
    assert plan_forms([], 3, {"when": 1.0}) == ["when", "when", "when"]
    assert plan_forms(existing, 2, {}) == []


def test_steering_goes_after_the_window_so_the_prefix_is_unchanged():
    plain = generation_messages("Window text.", doc_key="K", chunk_index=0, existing_questions=["Q1?"])
    steered = generation_messages("Window text.", doc_key="K", chunk_index=0, existing_questions=["Q1?"],
                                  steering=Steering(("How many stores were opened?",), "how much"), sample=1)
    cut = plain[1]["content"].index(WINDOW_CLOSE) + len(WINDOW_CLOSE)
    assert steered[0] == plain[0] and steered[1]["content"][:cut] == plain[1]["content"][:cut]
    tail = steered[1]["content"][cut:]
    assert "- How many stores were opened?" in tail and 'a "How much ..." or "How many ..." question' in tail
    assert "This is candidate 2 for this window" in tail


def test_config_profile_table_and_examples_file(tmp_path):
    table = {"examples": ["What is X?"], "forms": {"what": 0.5},
             "ficha": {"examples": ["How much did Y earn?"], "forms": {"how much": 0.7, "when": 0.3}}}
    ficha = SteeringConfig.resolve(get_profile("ficha"), table)
    assert ficha.examples == ("How much did Y earn?",) and ficha.shares == {"how much": 0.7, "when": 0.3}
    other = SteeringConfig.resolve(None, table)
    assert other.examples == ("What is X?",) and other.shares == {"what": 0.5}
    f = tmp_path / "ex.txt"
    f.write_text("# comment\n\nWhich segment grew most?\n", encoding="utf-8")
    assert SteeringConfig.resolve(None, table, f).examples == ("Which segment grew most?",)
    assert read_examples(f) == ("Which segment grew most?",)
    assert SteeringConfig.resolve(None, {}).empty and SteeringConfig.resolve(None, {}).plan([], 2) == [None, None]


@pytest.mark.parametrize("table, message", [
    ({"forms": {"yes-no": 0.2}}, "unknown form 'yes-no'"),
    ({"forms": {"what": 1.5}}, "from 0 to 1"),
    ({"forms": {"what": 0.7, "when": 0.7}}, "more than 1"),
    ({"examples": "What?"}, "list of strings"),
    ({"temperature": 1}, "unknown setting"),
])
def test_bad_settings_are_refused_by_name(table, message):
    with pytest.raises(CurateError, match=message):
        SteeringConfig.resolve(None, table)


def test_an_empty_or_binary_examples_file_is_refused(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(CurateError, match="no example question"):
        read_examples(empty)
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(CurateError, match="not UTF-8"):
        read_examples(binary)
