"""Numbered mode: the window's sentence map and its inverse, generation that cuts the passage from
the window, answers checked for support, feedback, and the modes' cache keys, against the loopback
chat server."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmfake import completion
from test_llm_client import make_config

from mtcb_curate.checks import Limits
from mtcb_curate.dataset.tokens import Window
from mtcb_curate.llm import generate as gen
from mtcb_curate.llm.cache import ResponseCache
from mtcb_curate.llm.client import ChatClient
from mtcb_curate.llm.numbered import MAX_UNIT_CHARS, sentence_map

FILING = (
    "Alpha Corp makes anvils and hammers. Revenue was $10.5 million in fiscal 2022, up from $9.1 million.\n"
    "The company was founded in 1931 by J. Smith in Springfield.\n"
    "\n"
    "Segment | 2022 | 2021\n"
    "Anvils | $6.2 | $5.8\n"
    "Hammers | $4.3 | $3.3\n"
    "\n"
    "Risks include:\n"
    "•\n"
    "Steel prices, which rose 12% in 2022.\n"
    "- Competition from Beta Inc. in Europe.\n"
)


def units(text: str) -> list[str]:
    m = sentence_map(text)
    return [m.unit_text(i) for i in range(1, len(m) + 1)]


# -- the sentence map -------------------------------------------------------------------------------


def test_prose_sentences_table_rows_and_list_items_are_units_of_their_own():
    got = units(FILING)
    assert got[:3] == ["Alpha Corp makes anvils and hammers.",
                       "Revenue was $10.5 million in fiscal 2022, up from $9.1 million.",
                       "The company was founded in 1931 by J. Smith in Springfield."]  # "J." is an initial
    assert "Segment | 2022 | 2021" in got and "Anvils | $6.2 | $5.8" in got and "Hammers | $4.3 | $3.3" in got
    # A bullet alone on its line joins the line after it; a dash item is a unit; "Inc." ends no sentence.
    assert "•\nSteel prices, which rose 12% in 2022." in got
    assert got[-1] == "- Competition from Beta Inc. in Europe."


def test_wrapped_paragraph_lines_are_read_as_running_text():
    text = ("We seek to grow our business by focusing on four strategic imperatives and by investing in our brand\n"
            "and our network. Our customer care professionals treat servicing interactions as an opportunity\n"
            "to bring the brand to life.\nShort heading\n")
    got = units(text)
    assert got[0].startswith("We seek") and got[0].endswith("and our network.") and "\n" in got[0]
    assert got[1].startswith("Our customer care") and got[1].endswith("to bring the brand to life.")
    assert got[2] == "Short heading"
    m = sentence_map(text)
    assert "\n" not in m.numbered_text().split("\n")[0]  # the display puts each unit on one line
    assert m.numbered_text().startswith("[1] We seek to grow") and "\n[3] Short heading" in m.numbered_text()


def test_crlf_and_tabs():
    text = "Net sales rose 4%.\r\nCost of sales fell.\r\nRegion\tSales\r\nEurope\t12\r\n"
    got = units(text)
    assert got == ["Net sales rose 4%.", "Cost of sales fell.", "Region\tSales", "Europe\t12"]
    m = sentence_map(text)
    assert m.passage(1, 2) == "Net sales rose 4%.\r\nCost of sales fell."  # the window's own bytes


def test_a_very_long_line_is_cut_into_units_of_at_most_the_bound():
    line = "; ".join(f"clause {i} says the figure was {i * 3} million" for i in range(200)) + "."
    m = sentence_map(line)
    assert len(m) > 10 and all(u.end - u.start <= MAX_UNIT_CHARS for u in m.units)
    assert m.passage(1, len(m)) == line  # nothing lost between the pieces


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?|\t\r\n•-1$,AZ")), max_size=400))
def test_every_range_is_a_substring_of_the_window_and_units_never_overlap(text):
    m = sentence_map(text)
    prev = 0
    for u in m.units:
        assert prev <= u.start < u.end <= len(text)
        assert text[u.start:u.end] == text[u.start:u.end].strip()
        prev = u.end
    for i in range(1, len(m) + 1):
        for j in range(i, min(len(m), i + 3) + 1):
            assert m.passage(i, j) in text and m.passage(i, j) == text[m.units[i - 1].start:m.units[j - 1].end]


# -- the inverse: ranges to exact text, bad ranges refused with feedback ------------------------------


def test_ranges_give_the_exact_text_and_bad_ranges_say_what_is_wrong():
    m = sentence_map(FILING)
    assert m.passage(2, 3) == FILING[FILING.index("Revenue"):FILING.index("Springfield.") + len("Springfield.")]
    n = len(m)
    out = m.range_problem(n + 5, n + 6, min_chars=30, max_chars=600)
    assert f"Sentence {n + 5} does not exist" in out and f"numbered 1 to {n}" in out
    assert "comes after" in m.range_problem(3, 2, min_chars=30, max_chars=600)
    assert "fewer than the 30" in m.range_problem(4, 4, min_chars=30, max_chars=600)  # a table heading alone
    assert "more than the 100" in m.range_problem(1, 3, min_chars=30, max_chars=100)
    assert "at least 3 consecutive" in m.range_problem(2, 2, min_chars=30, max_chars=600, min_units=3)
    assert m.range_problem(2, 3, min_chars=30, max_chars=600) is None
    with pytest.raises(IndexError):
        m.passage(3, 2)


# -- generation in numbered mode ---------------------------------------------------------------------

DOC_TEXT = FILING * 3


def window() -> Window:
    return Window(0, 0, 100, 0, len(DOC_TEXT))


def numbered(question, answer, first, last) -> dict:
    return {"question": question, "answer": answer, "first_sentence": first, "last_sentence": last}


def run_on(doc: str, client, **kw):
    """Numbered-mode generation on the whole of ``doc`` as one window (the tests' limits)."""
    return gen.generate_for_window(client, doc_key="ALP", doc_text=doc, window=Window(0, 0, 100, 0, len(doc)),
                                   mode="numbered", limits=Limits(30, 600), **kw)


def run(client, **kw):
    return run_on(DOC_TEXT, client, **kw)


def test_the_passage_is_cut_from_the_window_by_the_named_range(fake_llm):
    fake_llm.script = [numbered("What revenue did Alpha Corp report for fiscal 2022?", "$10.5 million", 2, 2)]
    cand, attempts = run(ChatClient(make_config(fake_llm)))
    assert cand.passage == "Revenue was $10.5 million in fiscal 2022, up from $9.1 million."
    assert DOC_TEXT[cand.start:cand.end] == cand.passage
    assert (cand.mode, cand.sentences, cand.supported, cand.attempts) == ("numbered", (2, 2), True, 1)
    assert cand.provenance()["model_text"] == "sentences 2-2" and cand.evidence["sentences"] == 1
    user = fake_llm.requests[0]["messages"][1]["content"]
    assert "[2] Revenue was $10.5 million" in user and "first_sentence" in fake_llm.requests[0]["messages"][0]["content"]


def test_out_of_range_then_reversed_ranges_are_refused_with_feedback_and_every_retry_differs(fake_llm):
    q, a = "What revenue did Alpha Corp report for fiscal 2022?", "$10.5 million"
    fake_llm.script = [numbered(q, a, 900, 901), numbered(q, a, 3, 2), numbered(q, a, 2, 2)]
    cand, attempts = run(ChatClient(make_config(fake_llm)))
    assert cand is not None and cand.attempts == 3
    first_feedback = fake_llm.requests[1]["messages"][-1]["content"]
    assert "Sentence 900 does not exist" in first_feedback and "(attempt 1 of 4)" in first_feedback
    second_feedback = fake_llm.requests[2]["messages"][-1]["content"]
    assert "comes after last_sentence" in second_feedback and "Sentence 900" not in second_feedback
    bodies = [json.dumps(r, sort_keys=True) for r in fake_llm.requests]
    assert len(set(bodies)) == 3  # never a byte-identical request
    assert [r.get("seed") for r in fake_llm.requests] == [None, 2, 3]
    assert [r.get("temperature") for r in fake_llm.requests] == [0.7, 0.85, 1.0]  # each retry samples wider
    # The refused reply is not echoed as the model's turn (a small model sends it again word for
    # word); only the latest feedback follows the first request: the prompt does not grow.
    assert [m["role"] for m in fake_llm.requests[1]["messages"]] == ["system", "user", "user"]
    assert [m["role"] for m in fake_llm.requests[2]["messages"]] == ["system", "user", "user"]


def test_an_unsupported_answer_is_retried_with_what_is_missing_then_shown_with_the_warning(fake_llm):
    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.default = numbered(q, "Revenue was $77.7 billion from robots", 3, 3)  # line 3 is the founding
    cand, attempts = run(ChatClient(make_config(fake_llm)), retries=2)
    assert cand is not None and len(attempts) == 3 and not cand.supported
    assert "$77.7 billion not in the passage" in cand.support_reason and any("The answer states" in w for w in cand.warnings)
    feedback = fake_llm.requests[1]["messages"][-1]["content"]
    assert "The answer states" in feedback and "$77.7 billion" in feedback and "sentences 3 to 3" in feedback
    assert "ANSWER NOT SUPPORTED" in cand.provenance_line()
    assert [x.accepted for x in attempts] == [False, False, True]  # the last, made after the most feedback


def test_a_supported_range_is_proposed_only_when_it_passes_every_check(fake_llm):
    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.script = [numbered(q, "$10.5 million in fiscal 2022", 3, 3), numbered(q, "$10.5 million in fiscal 2022", 2, 2)]
    cand, _ = run(ChatClient(make_config(fake_llm)))
    feedback = fake_llm.requests[1]["messages"][-1]["content"]
    proposed = re.search(r"Sentences (\d+) to (\d+) state it", feedback)
    assert proposed is not None
    m = sentence_map(DOC_TEXT)
    i, j = int(proposed.group(1)), int(proposed.group(2))
    assert "$10.5 million" in m.passage(i, j) and m.range_problem(i, j, min_chars=30, max_chars=600) is None
    assert cand.supported and cand.attempts == 2


def test_an_answer_that_only_introduces_a_table_is_refused(fake_llm):
    q = "Which segments did Alpha Corp report for 2022?"
    fake_llm.script = [numbered(q, "Alpha Corp's segments for 2022 are as follows:", 4, 6),
                       numbered(q, "Anvils ($6.2) and Hammers ($4.3)", 4, 6)]
    cand, attempts = run(ChatClient(make_config(fake_llm)), retries=1)  # a table of the model's own choice
    assert 'The answer ends with ":"' in attempts[0].problems[0] and not attempts[0].accepted
    assert 'ends with ":"' in fake_llm.requests[1]["messages"][-1]["content"]
    assert cand is not None and cand.answer == "Anvils ($6.2) and Hammers ($4.3)" and cand.attempts == 2


def test_a_too_short_range_is_never_answered_with_a_too_short_proposal(fake_llm):
    q = "Which segments does Alpha Corp report?"
    fake_llm.script = [numbered(q, "Segment", 4, 4), numbered(q, "Anvils and hammers", 4, 6)]
    cand, _ = run(ChatClient(make_config(fake_llm)), retries=1)  # a table of the model's own choice
    feedback = fake_llm.requests[1]["messages"][-1]["content"]
    assert "fewer than the 30 a supporting passage needs" in feedback
    for i, j in re.findall(r"Sentences (\d+) to (\d+) state the answer", feedback):
        assert len(sentence_map(DOC_TEXT).passage(int(i), int(j))) >= 30
    assert cand.passage.startswith("Segment | 2022") and cand.passage.endswith("Hammers | $4.3 | $3.3")


def test_dense_mode_asks_for_several_sentences_and_refuses_one(fake_llm):
    q = "What does Alpha Corp say about its revenue and founding?"
    fake_llm.script = [numbered(q, "$10.5 million", 2, 2),
                       numbered(q, "Revenue was $10.5 million; founded in 1931 in Springfield", 1, 3)]
    cand, _ = run(ChatClient(make_config(fake_llm)), dense=True)
    assert "evidence-dense" in fake_llm.requests[0]["messages"][1]["content"]
    assert "at least 3 consecutive sentences" in fake_llm.requests[1]["messages"][-1]["content"]
    assert cand.sentences == (1, 3) and cand.evidence["sentences"] == 3


def test_the_two_modes_never_share_a_cache_key(fake_llm, tmp_path):
    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.script = [numbered(q, "$10.5 million", 2, 2),
                       {"question": q, "answer": "$10.5 million",
                        "supporting_passage": "Revenue was $10.5 million in fiscal 2022, up from $9.1 million."}]
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm), cache)
        a, _ = run(client)
        b, _ = gen.generate_for_window(client, doc_key="ALP", doc_text=DOC_TEXT, window=window(), mode="quote",
                                       limits=Limits(30, 600))
        assert a.cache_key != b.cache_key and len(cache) == 2 and (a.mode, b.mode) == ("numbered", "quote")
    for text in ("", DOC_TEXT):
        keys = {client.key_for(gen.first_request(text, doc_key="ALP", chunk_index=0, mode=m)) for m in ("quote", "numbered")}
        assert len(keys) == 2


def test_auto_mode_is_numbered_for_local_servers_and_quote_for_hosted_apis():
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://192.168.1.20:8000/v1",
                "http://gpu-box:8000/v1", "http://[::1]:8080/v1"):
        assert gen.resolve_mode("auto", url) == "numbered", url
    for url in ("https://api.openai.com/v1", "https://api.together.xyz/v1"):
        assert gen.resolve_mode(None, url) == "quote", url
    assert gen.resolve_mode("quote", "http://127.0.0.1/v1") == "quote"
    with pytest.raises(ValueError):
        gen.resolve_mode("verbatim", "http://127.0.0.1/v1")


# -- quote mode's feedback ----------------------------------------------------------------------------


def test_a_quote_of_the_instructions_is_recognised_whatever_the_chunk_number():
    assert gen.quotes_instructions("The document window (chunk 17) follows between the markers.", DOC_TEXT)
    assert not gen.quotes_instructions("Revenue was $10.5 million in fiscal 2022", DOC_TEXT)


def test_a_quote_of_the_instructions_is_named_as_such(fake_llm):
    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.script = [{"question": q, "answer": "$10.5 million",
                        "supporting_passage": "The document window (chunk 0) follows between the markers."},
                       {"question": q, "answer": "$10.5 million",
                        "supporting_passage": "Revenue was $10.5 million in fiscal 2022, up from $9.1 million."}]
    cand, _ = gen.generate_for_window(ChatClient(make_config(fake_llm)), doc_key="ALP", doc_text=DOC_TEXT,
                                      window=window(), mode="quote", limits=Limits(30, 600))
    feedback = fake_llm.requests[1]["messages"][-1]["content"]
    assert "copied from these instructions" in feedback and "closest text" not in feedback
    assert cand.attempts == 2


def test_an_unsupported_answer_in_quote_mode_is_retried_then_warned(fake_llm):
    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.default = {"question": q, "answer": "$99 billion from lasers",
                        "supporting_passage": "Revenue was $10.5 million in fiscal 2022, up from $9.1 million."}
    cand, attempts = gen.generate_for_window(ChatClient(make_config(fake_llm)), doc_key="ALP", doc_text=DOC_TEXT,
                                             window=window(), mode="quote", limits=Limits(30, 600), retries=1)
    assert len(attempts) == 2 and cand is not None and not cand.supported
    assert "The answer states" in fake_llm.requests[1]["messages"][-1]["content"]


def test_a_reply_without_choices_is_said_once_with_no_feedback_retry(fake_llm):
    from werkzeug import Response

    from mtcb_curate.llm.errors import LLMError

    fake_llm.default = Response('{"foo": 1}', content_type="application/json")
    with pytest.raises(LLMError, match="not a chat completion"):
        run(ChatClient(make_config(fake_llm)))
    assert len(fake_llm.requests) == 1


def test_refused_replies_are_not_cached_and_a_rerun_after_the_fix_asks_again(fake_llm, tmp_path):
    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.default = numbered(q, "$10.5 million", 900, 900)  # always out of range
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        cand, _ = run(ChatClient(make_config(fake_llm), cache), retries=1)
        assert cand is None and len(cache) == 0
        assert cache.calls() == 2 and cache.usage() == (22, 14)  # never replayed, still counted as paid
        fake_llm.default = numbered(q, "$10.5 million", 2, 2)  # the server is fixed
        before = len(fake_llm.requests)
        cand, attempts = run(ChatClient(make_config(fake_llm), cache), retries=1)
        assert cand is not None and len(fake_llm.requests) == before + 1 and not attempts[0].cached
        assert len(cache) == 1  # the reply used is kept: a third run pays nothing
        cand, attempts = run(ChatClient(make_config(fake_llm), cache), retries=1)
        assert attempts[0].cached and len(fake_llm.requests) == before + 1


def test_a_reply_cut_at_the_token_limit_is_never_cached(fake_llm, tmp_path):
    half = json.dumps(numbered("What revenue did Alpha Corp report?", "$10.5 million", 2, 2))[:30]
    fake_llm.script = [completion(half, finish="length"), numbered("What revenue did Alpha Corp report for 2022?",
                                                                   "$10.5 million", 2, 2)]
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        cand, attempts = run(ChatClient(make_config(fake_llm), cache))
        assert cand is not None and len(attempts) == 2 and len(cache) == 1
        assert cache.get(cand.cache_key) is not None  # only the reply used was stored


def test_regenerate_never_offers_a_pair_just_generated_back_from_the_cache(fake_llm, tmp_path):
    from mtcb_curate.dataset.model import Document, QAPair

    q = "What revenue did Alpha Corp report for fiscal 2022?"
    fake_llm.script = [numbered(q, "$10.5 million", 2, 2), numbered(q + " (again)", "$10.5 million", 2, 2)]
    doc = Document("ALP", DOC_TEXT, 0)
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm), cache)
        made = gen.generate_more(client, doc, [], 1, mode="numbered", limits=Limits(30, 600))
        c = made.candidates[0]
        pair = QAPair(0, c.question, c.answer, c.passage, "ALP", c.chunk_index)
        again = gen.regenerate(client, pair, doc, mode="numbered", limits=Limits(30, 600))
    assert len(fake_llm.requests) == 2 and not again.attempts[0].cached
    assert again.candidates[0].question != c.question
