"""The shrink repair: the lexical proposal (verify/shrink.py) on the real FinanceBench pairs and
on small fixtures, and the LLM's minimal quote (llm/shrink.py) against the loopback chat server."""

from __future__ import annotations

import json
import threading

import pytest

from test_llm_client import make_config

from mtcb_curate.dataset.loading import load
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.llm.client import ChatClient
from mtcb_curate.llm.shrink import PASSAGE_CLOSE, PASSAGE_OPEN, shrink_messages, shrink_with_llm
from mtcb_curate.verify import CorpusIndex, verify_pair
from mtcb_curate.verify.shrink import (
    answer_figures,
    figure_key,
    plan_shrink,
    shrink_lexical,
    text_figures,
)

# --- figures ----------------------------------------------------------------------------------


def test_figures_compare_as_digit_strings():
    assert figure_key("1,234.50") == figure_key("1234.5") == "1234.5"
    assert figure_key("27.0") == "27" and figure_key("0.36") == "0.36" and figure_key(".5") == "0.5"
    assert set(answer_figures("$1,234.5 in FY2022, (123) and 24.6%")) == {"1234.5", "2022", "123", "24.6"}
    # list markers are not figures
    assert answer_figures("(1) pricing litigation; (2) PBM litigation") == {}
    assert {"1234.5", "123"} <= text_figures("Revenue\n$\n1,234.50 $\n(123)")


# --- lexical: small fixtures ------------------------------------------------------------------

TABLE = ("CONSOLIDATED STATEMENTS OF INCOME\n(Millions)\n2022\n2021\n"
         "Net sales\n$\n34,229 $\n35,355\n"
         "Cost of sales\n19,232\n18,795\n"
         "Operating income\n6,539\n7,369\n"
         "Net income\n$\n5,777 $\n5,921\n")


def test_table_run_keeps_the_row_and_the_adjacent_header():
    p = shrink_lexical(TABLE, "Operating income was $6,539 million in 2022.")
    assert p is not None and p.unit == "table row" and p.with_header is True
    assert TABLE[p.start:p.end] == p.text == p.text.strip()
    assert p.text.startswith("CONSOLIDATED") and p.text.endswith("Operating income\n6,539\n7,369")
    assert "Net income" not in p.text
    assert {"$6,539 million", "2022", "operating", "income"} <= {k.lower() for k in p.keeps}


def test_table_header_far_above_is_left_out_and_said_so():
    rows = "".join(f"Line item {i}\n{1000 + i:,}\n{2000 + i:,}\n" for i in range(80))
    table = "TABLE 1\n(Millions)\n2022\n2021\n" + rows + "Effective tax rate\n21.6 %\n24.6 %\nOther\n5\n6\n"
    p = shrink_lexical(table, "The effective tax rate fell from 24.6% in FY2021 to 21.6% in FY2022.")
    assert p is not None and p.with_header is False
    assert p.text == "Effective tax rate\n21.6 %\n24.6 %"
    assert set(p.dropped) == {"2021", "2022"} and "without the table's header" in p.reason
    assert {"21.6%", "24.6%"} <= set(p.keeps)


def test_prose_keeps_whole_hard_wrapped_sentences():
    prose = ("The Company sells anvils and bells in North America and Europe through its own stores\n"
             "and through distributors. Net sales increased 12% to $4.2 billion in 2022, driven by\n"
             "higher prices and volume. The Company expects growth to slow in 2023 as inventories\n"
             "normalize across its markets and channels.")
    p = shrink_lexical(prose, "Net sales rose 12% to $4.2 billion.")
    assert p is not None and p.unit == "sentence"
    assert p.text == ("Net sales increased 12% to $4.2 billion in 2022, driven by\n"
                      "higher prices and volume.")
    assert prose[p.start:p.end] == p.text


def test_refused_when_the_answers_figure_is_not_in_the_passage():
    out = plan_shrink(TABLE, "24.26")
    assert out.proposal is None and "24.26" in out.reason and "not in the passage" in out.reason
    assert shrink_lexical(TABLE, "24.26") is None


def test_refused_when_already_minimal_or_nothing_to_keep():
    out = plan_shrink("Net sales were $4.2 billion in 2022.", "$4.2 billion")
    assert out.proposal is None and "already minimal" in out.reason
    out = plan_shrink(TABLE, "Yes")
    assert out.proposal is None and "no figure or content word" in out.reason
    assert plan_shrink("", "5").proposal is None


def test_a_short_run_grows_to_min_chars_by_whole_units():
    text = "Our operations span several regions around the world, as follows.\nAPAC\nEMEA\nLACC has a long tail\nmore\n"
    p = shrink_lexical(text, "APAC and EMEA", min_chars=30)
    assert p is not None and p.text == "APAC\nEMEA\nLACC has a long tail"


# --- lexical: the real FinanceBench pairs -----------------------------------------------------


_LOCATED: list = []


@pytest.fixture
def located(shared_data):
    """``[(pair, located span)]`` of ../shared/data: each passage as verification locates it
    (computed once per run)."""
    if _LOCATED:
        return _LOCATED
    ds = load("ficha", get_profile("ficha"), [str(shared_data)])
    index = CorpusIndex.from_dataset(ds)
    out = []
    for pair in ds.pairs:
        r = verify_pair(index, pair, count_tokens=False)
        assert r.start is not None, pair.id
        out.append((pair, ds.document_for(pair).text[r.start:r.end]))
    _LOCATED.extend(out)
    return out


def test_real_pairs_proposals_are_verbatim_shorter_and_keep_the_answers_figures(located):
    proposals = 0
    for pair, span in located:
        out = plan_shrink(span, pair.answer, pair.question)
        p = out.proposal
        if p is None:
            assert out.reason
            continue
        proposals += 1
        assert span[p.start:p.end] == p.text == p.text.strip() and len(p.text) < len(span.strip())
        kept = text_figures(p.text)
        for key, raw in answer_figures(pair.answer).items():
            if key in text_figures(span):
                assert key in kept or raw in p.dropped, (pair.id, raw)
    assert proposals >= 10


def test_real_table_passages_mostly_end_within_600_characters(located):
    tables = [p for pair, span in located
              if (p := shrink_lexical(span, pair.answer, pair.question)) is not None and p.unit == "table row"]
    assert len(tables) >= 5
    assert sum(len(p.text) <= 600 for p in tables) >= 0.8 * len(tables)


def test_real_computed_answer_is_refused(located):
    pair, span = next((pr, s) for pr, s in located if pr.answer.strip() == "24.26")
    out = plan_shrink(span, pair.answer, pair.question)
    assert out.proposal is None and "24.26" in out.reason


def test_real_effective_tax_rate_row(located):
    pair, span = next((pr, s) for pr, s in located if "24.6% in FY 2021" in pr.answer)
    p = shrink_lexical(span, pair.answer, pair.question)
    assert p is not None and len(p.text) <= 600 and len(span) > 1500
    assert p.text.startswith("Effective tax rate") and "21.6" in p.text and "24.6" in p.text


# --- LLM --------------------------------------------------------------------------------------

PASSAGE = ("Dividends\nDuring 2022, 2021 and 2020, the quarterly cash dividend was $0.55, $0.50 and $0.50 "
           "per share, respectively.\nThe Board reviews the dividend every quarter.")
QUOTE = "During 2022, 2021 and 2020, the quarterly cash dividend was $0.55, $0.50 and $0.50 per share, respectively."
Q, A = "What quarterly dividend did CVS pay in 2022?", "$0.55 per share"


def test_prompt_puts_instructions_and_passage_first_and_has_no_placeholder():
    msgs = shrink_messages(PASSAGE, Q, A)
    assert msgs[0]["role"] == "system" and '"..."' not in msgs[0]["content"]
    assert '{"quote": "Net sales were $4.2 million in 2021."}' in msgs[0]["content"]
    assert f"{PASSAGE_OPEN}\n{PASSAGE}\n{PASSAGE_CLOSE}" in msgs[1]["content"]


def test_llm_verbatim_reply_is_accepted(fake_llm):
    fake_llm.script = [{"quote": "  " + QUOTE + "\n"}]
    res = shrink_with_llm(ChatClient(make_config(fake_llm)), PASSAGE, Q, A)
    assert res.accepted and res.quote == QUOTE and PASSAGE[res.start:res.end] == QUOTE
    assert len(res.attempts) == 1 and res.attempts[0].accepted and not res.warnings


def test_llm_non_verbatim_then_verbatim_after_feedback(fake_llm):
    altered = QUOTE.replace("$0.55", "$.55")
    fake_llm.script = [{"quote": altered}, {"quote": QUOTE}]
    res = shrink_with_llm(ChatClient(make_config(fake_llm)), PASSAGE, Q, A)
    assert res.accepted and res.quote == QUOTE and len(res.attempts) == 2
    assert not res.attempts[0].accepted and "verbatim" in res.attempts[0].problems[0]
    second = fake_llm.requests[1]["messages"]
    # the stable part first, unchanged; the reply and the feedback last, with the closest text
    assert second[:2] == fake_llm.requests[0]["messages"][:2]
    assert second[2]["role"] == "assistant" and json.loads(second[2]["content"]) == {"quote": altered}
    assert second[3]["role"] == "user" and "closest text in the passage" in second[3]["content"]
    assert "$0.55" in second[3]["content"]


def test_llm_all_attempts_fail_is_refused_with_reasons(fake_llm):
    fake_llm.script = [{"quote": "The dividend was raised to $1.00 per share in 2022."}, "not json at all",
                       {"text_of_quote": 3}]
    res = shrink_with_llm(ChatClient(make_config(fake_llm)), PASSAGE, Q, A, attempts=3)
    assert not res.accepted and res.quote is None and len(res.attempts) == 3 and len(fake_llm.requests) == 3
    reasons = res.refusal_reasons()
    assert len(reasons) == 3 and "verbatim" in reasons[0] and "JSON" in reasons[1] and '"quote"' in reasons[2]
    assert res.note().startswith("refused")


def test_llm_quote_leaving_out_the_answers_figure_is_sent_back(fake_llm):
    fake_llm.script = [{"quote": "The Board reviews the dividend every quarter."}, {"quote": QUOTE}]
    res = shrink_with_llm(ChatClient(make_config(fake_llm)), PASSAGE, Q, A)
    assert res.quote == QUOTE and "0.55" in res.attempts[0].problems[0]


def test_llm_cancel_stops_and_says_so(fake_llm):
    cancel = threading.Event()

    def cancel_then_bad(body):
        cancel.set()
        return {"quote": "not in the passage"}

    fake_llm.default = cancel_then_bad
    res = shrink_with_llm(ChatClient(make_config(fake_llm)), PASSAGE, Q, A, cancel=cancel)
    # The reply races the cancel: the client either read it (one attempt, refused) or closed the
    # connection first (none). Either way no second request is sent and nothing is accepted.
    assert res.cancelled and not res.accepted and len(fake_llm.requests) == 1 and len(res.attempts) <= 1
    assert res.note() == "cancelled"
