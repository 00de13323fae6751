"""LLM generation of candidate QA pairs: prompts, the verbatim rule with retries and feedback,
window choice, regenerate, cancel and the cache, against the loopback chat server."""

from __future__ import annotations

import json
import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS
from llmfake import completion, status
from test_llm_client import SECRET, make_config

from mtcb_curate.dataset import tokens
from mtcb_curate.llm import generate as gen
from mtcb_curate.llm.cache import ResponseCache
from mtcb_curate.llm.client import ChatClient
from mtcb_curate.llm.config import resolve_config
from mtcb_curate.llm.errors import LLMUnavailable
from mtcb_curate.llm.estimate import estimate_generate_more
from mtcb_curate.llm.prompts import DOMAIN_HINTS, WINDOW_CLOSE, WINDOW_OPEN, domain_hint, generation_messages
from mtcb_curate.dataset.model import Document, QAPair
from mtcb_curate.dataset.profiles import get_profile

ALPHA = Document("AAA", CORPUS[0]["text"], 0)  # "Alpha makes anvils.\nRevenue was $10 million in 2022.\n"


def pair_json(question: str, answer: str, passage: str) -> dict:
    return {"question": question, "answer": answer, "supporting_passage": passage}


GOOD = pair_json("What was Alpha's revenue in 2022?", "$10 million.", "Revenue was $10 million in 2022.")


def window_of_request(body: dict) -> str:
    user = body["messages"][1]["content"]
    return user.split(WINDOW_OPEN + "\n", 1)[1].rsplit("\n" + WINDOW_CLOSE, 1)[0]


def chunk_of_request(body: dict) -> int:
    return int(re.search(r"The document window \(chunk (\d+)\)", body["messages"][1]["content"]).group(1))


def listed_questions(body: dict) -> list[str]:
    user = body["messages"][1]["content"]
    if "Existing questions for this document (" not in user:
        return []
    block = user.split("Existing questions for this document (", 1)[1].split("\n\n", 1)[0]
    return [line[2:] for line in block.splitlines()[1:]]


def sample_of_request(body: dict) -> int:
    """The sample number the prompt asks for (0 when it does not say)."""
    m = re.search(r"This is candidate (\d+) for this window", body["messages"][1]["content"])
    return int(m.group(1)) - 1 if m else 0


def quoting_model(body: dict) -> dict:
    """A well-behaved fake model: quotes the (k+s+1)-th line of its window, k = questions
    listed, s = the sample asked for."""
    lines = [ln for ln in window_of_request(body).splitlines() if ln.startswith("Line ")] or \
        [ln for ln in window_of_request(body).splitlines() if ln.strip()]  # whole lines, not a window's cut edge
    line = lines[(len(listed_questions(body)) + sample_of_request(body)) % len(lines)]
    return pair_json(f"What does the filing state in line {line[:24]}?", "It states a figure.", line)


def long_document(key: str = "ZZZ", lines: int = 1400) -> Document:
    """A document of about 3 MTCB windows with distinct lines."""
    text = "".join(f"Line {i}: Zeta Corp reported segment figure {i} of {i * 7} dollars.\n" for i in range(lines))
    return Document(key, text, 0)


# --- prompts ----------------------------------------------------------------------------------

def test_generation_prompt_follows_the_mtcb_rules_and_lists_existing_questions():
    msgs = generation_messages("Window text.", doc_key="AAA", chunk_index=3,
                               existing_questions=["What does Alpha make?", "Who?\nsecond line"],
                               hint=domain_hint("hojicha"))
    system, user = msgs[0]["content"], msgs[1]["content"]
    for rule in ("solely from the document window", "What, When, Where, Which or How", "yes/no",
                 "exact, contiguous quote", "No ellipses", "shortest passage", "one or two sentences",
                 '"supporting_passage"'):
        assert rule in system
    assert "- What does Alpha make?" in user and "- Who? second line" in user
    assert "150 to 400 characters" in user and "chunk 3" in user
    assert f"{WINDOW_OPEN}\nWindow text.\n{WINDOW_CLOSE}" in user
    assert "none" in generation_messages("w", doc_key="A", chunk_index=0)[1]["content"]


def test_domain_hints_follow_the_profiles():
    assert domain_hint("hojicha").min_passage_chars == 150 and domain_hint("hojicha").max_passage_chars == 400
    assert (domain_hint("sencha").min_passage_chars, domain_hint("sencha").max_passage_chars) == (200, 600)
    assert domain_hint("chonkie-ai/nano-ficha") is DOMAIN_HINTS["ficha"]
    assert domain_hint(get_profile("cocha")) is domain_hint("macha") is DOMAIN_HINTS["cocha"]
    assert domain_hint("gacha") is None and domain_hint(None) is None


# --- checks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("q, expected", [
    ("Is revenue up?", True), ("Did Alpha sell anvils in 2022?", True), ("Can't they?", True),
    ("What was revenue?", False), ("How much did Alpha earn?", False), ("Island count?", False), ("", False),
])
def test_yes_no_questions_are_recognised(q, expected):
    assert gen.is_yes_no_question(q) is expected


def test_calls_for_one_window_share_a_byte_identical_prefix_through_the_window():
    # The window after the changing existing questions made servers re-read ~9k
    # tokens on every call; now everything up to and including the window is stable.
    window = "Alpha makes anvils.\nRevenue was $10 million in 2022.\n" * 50
    a = generation_messages(window, doc_key="AAA", chunk_index=3, existing_questions=[],
                            hint=domain_hint("ficha"))
    b = generation_messages(window, doc_key="AAA", chunk_index=3, hint=domain_hint("ficha"),
                            existing_questions=["What does Alpha make?", "When was revenue $10 million?"])
    flat = lambda msgs: "".join(f"<{m['role']}>{m['content']}" for m in msgs).encode()  # noqa: E731
    fa, fb = flat(a), flat(b)
    end = fa.index(WINDOW_CLOSE.encode()) + len(WINDOW_CLOSE)
    assert window.encode() in fa[:end] and fa[:end] == fb[:end] and fa != fb
    assert fb.index(b"What does Alpha make?") > end


def test_the_prompts_hold_no_placeholder_values_to_copy():
    from mtcb_curate.llm.prompts import feedback_message

    msgs = generation_messages("w", doc_key="A", chunk_index=0)
    text = "".join(m["content"] for m in msgs) + feedback_message(["x"])["content"]
    assert '"..."' not in text and "supporting_passage" in text


def test_check_candidate_names_every_fault():
    window = ALPHA.text
    fields, problems, warnings = gen.check_candidate(
        pair_json(" What was Alpha's revenue in 2022? ", "A", " Revenue was $10 million in 2022. "), window)
    assert fields == {"question": "What was Alpha's revenue in 2022?", "answer": "A",
                      "passage": "Revenue was $10 million in 2022."} and not problems
    _, problems, _ = gen.check_candidate(pair_json("What?", "A", "Revenue was $12 million in 2023."), window)
    assert "does not occur verbatim" in problems[0] and "closest text in the window is: \"Revenue was" in problems[0]
    # The closest text is not proposed when the next check would refuse it (19 characters < 30).
    _, problems, _ = gen.check_candidate(pair_json("What?", "A", "Alpha makes hammers."), window)
    assert "does not occur verbatim" in problems[0] and "closest text" not in problems[0]
    _, problems, _ = gen.check_candidate(pair_json("What?", "A", "Alpha makes ... 2022."), window)
    assert "ellipses" in problems[0]
    _, problems, _ = gen.check_candidate(pair_json("What?", "A", "  "), window)
    assert "empty" in problems[0]
    _, problems, _ = gen.check_candidate(pair_json("Does Alpha make anvils?", "Yes", "Alpha makes anvils."), window)
    assert any("yes/no" in p for p in problems)
    _, problems, _ = gen.check_candidate(pair_json("what does Alpha make", "A", "Alpha makes anvils."), window,
                                         ["What does Alpha make?"])
    assert any("repeats an existing question" in p for p in problems)
    _, problems, _ = gen.check_candidate(pair_json("What was Alpha's revenue in 2022?", "A", GOOD["supporting_passage"]),
                                         window, ["What was Alpha's revenue in 2021?"])
    assert not problems  # a different year is a different fact
    fields, problems, _ = gen.check_candidate({"question": "Q"}, window)
    assert fields is None and len(problems) == 2
    fields, problems, _ = gen.check_candidate(["not", "an", "object"], window)
    assert fields is None and problems
    _, problems, warnings = gen.check_candidate(GOOD, window, hint=domain_hint("hojicha"))
    assert not problems and "32 characters" in warnings[0]  # within the checklist's 30-600, not hojicha's 150-400


def test_check_candidate_applies_the_checklists_bounds():
    from mtcb_curate.checks import MAX_ANSWER_CHARS, Limits
    from mtcb_curate.dataset.question_form import MAX_QUESTION_CHARS

    window = ALPHA.text
    _, problems, _ = gen.check_candidate({**GOOD, "supporting_passage": "R"}, window)
    assert problems == ["supporting_passage has 1 characters; quote between 30 and 600 characters: the shortest "
                        "block that fully supports the answer."]
    _, problems, _ = gen.check_candidate({**GOOD, "answer": "x" * (MAX_ANSWER_CHARS + 1)}, window)
    assert len(problems) == 1 and "answer of 1,001 characters: over the maximum 1000" in problems[0]
    _, problems, _ = gen.check_candidate({**GOOD, "question": "What " + "x" * MAX_QUESTION_CHARS + "?"}, window)
    assert len(problems) == 1 and "over-long question: 506 characters" in problems[0]
    _, problems, _ = gen.check_candidate({**GOOD, "question": "What revenue?"}, window)
    assert len(problems) == 1 and "too short to single out a fact" in problems[0]
    # The bounds are the checklist's: a profile or the [checklist] table moves them.
    short = {**GOOD, "supporting_passage": "Alpha makes anvils."}
    assert gen.check_candidate(short, window)[1] and not gen.check_candidate(short, window, limits=Limits(10, 600))[1]
    assert gen.check_candidate(GOOD, window, limits=Limits(40, 600))[1]


def test_a_reply_over_the_bound_is_not_parsed():
    from mtcb_curate.llm.parsing import MAX_REPLY_CHARS, ReplyTooLong, extract_json

    assert extract_json(json.dumps({"answer": "x" * (MAX_REPLY_CHARS - 100)}))
    with pytest.raises(ReplyTooLong, match="more than the 100,000 read"):
        extract_json(json.dumps({"answer": "x" * MAX_REPLY_CHARS}))


def test_a_five_megabyte_reply_is_refused_unread_and_not_kept_whole(fake_llm):
    fake_llm.script = [{**GOOD, "answer": "ten million " * 420_000}, GOOD]
    cand, attempts = run_window(fake_llm)
    assert cand is not None and cand.attempts == 2
    assert "refused unread: the reply has 5,040," in attempts[0].problems[0]
    assert len(attempts[0].reply) <= 100_000
    assert len(fake_llm.requests[1]["messages"][2]["content"]) <= gen.MAX_ECHO_CHARS


def test_generate_more_reports_every_refused_reply(fake_llm):
    fake_llm.script = [{**GOOD, "supporting_passage": "R"}, pair_json("Is it?", "Yes", "nowhere"), GOOD]
    res = gen.generate_more(ChatClient(make_config(fake_llm)), ALPHA, [], 1)
    assert len(res.candidates) == 1 and [r["attempt"] for r in res.refusals()] == [1, 2]
    assert "yes/no" in " ".join(res.refusals()[1]["reasons"])
    assert res.refusal_lines()[0].startswith("refused: AAA chunk 0 attempt 1: supporting_passage has 1 characters")
    assert res.refusal_note().startswith("2 replies refused: ")
    assert gen.GenerationResult().refusal_note() is None


# --- one window ---------------------------------------------------------------------------------

def run_window(fake, doc=ALPHA, existing=(), hint=None, **kw):
    client = ChatClient(make_config(fake))
    (window,) = tokens.windows(doc.text)
    return gen.generate_for_window(client, doc_key=doc.key, doc_text=doc.text, window=window,
                                   existing_questions=list(existing), hint=hint, **kw)


def test_a_valid_answer_becomes_a_candidate_at_once(fake_llm):
    fake_llm.script = [GOOD]
    cand, attempts = run_window(fake_llm, existing=["What does Alpha make?"])
    assert cand is not None and (cand.question, cand.answer) == (GOOD["question"], GOOD["answer"])
    assert ALPHA.text[cand.start:cand.end] == cand.passage == GOOD["supporting_passage"]
    assert (cand.doc_key, cand.chunk_index, cand.attempts, cand.warnings) == ("AAA", 0, 1, ())
    assert [a.accepted for a in attempts] == [True]
    (body,) = fake_llm.requests
    assert window_of_request(body) == ALPHA.text and listed_questions(body) == ["What does Alpha make?"]
    assert cand.fields() == {"question": GOOD["question"], "answer": GOOD["answer"],
                             "supporting_passage": GOOD["supporting_passage"], "chunk_index": 0}


def test_a_hallucinated_passage_is_sent_back_then_the_valid_one_is_kept(fake_llm):
    bad = pair_json(GOOD["question"], GOOD["answer"], "Revenue was high: 99 billion dollars in 1999 alone.")
    fake_llm.script = [bad, GOOD]
    cand, attempts = run_window(fake_llm)
    assert cand is not None and cand.passage == GOOD["supporting_passage"] and cand.attempts == 2
    assert [a.accepted for a in attempts] == [False, True]
    assert "does not occur verbatim" in attempts[0].problems[0]
    second = fake_llm.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert json.loads(second[2]["content"]) == bad
    assert "does not occur verbatim" in second[3]["content"]
    assert "Revenue was $10 million in 2022." in second[3]["content"]  # the closest text is quoted


def test_a_whitespace_normalized_quote_is_snapped_and_kept(fake_llm):
    # A space where the filing has a line break; found by the verification's
    # normalized search, so it is kept as the exact window text, not sent back.
    quoted = "Alpha makes anvils. Revenue was $10 million in 2022."
    fake_llm.script = [pair_json(GOOD["question"], GOOD["answer"], quoted)]
    cand, attempts = run_window(fake_llm)
    assert cand is not None and cand.attempts == 1 and len(fake_llm.requests) == 1
    assert cand.passage == "Alpha makes anvils.\nRevenue was $10 million in 2022." == ALPHA.text[cand.start:cand.end]
    assert (cand.verdict, cand.score, cand.quoted, cand.snapped) == ("normalized", 100.0, quoted, True)
    assert cand.fields()["supporting_passage"] == cand.passage
    assert [a.accepted for a in attempts] == [True]


def test_a_fuzzy_quote_is_snapped_to_the_window_text(fake_llm):
    from mtcb_curate.checks import Limits

    quoted = "Revenue was USD 10 million in 2022."
    fake_llm.script = [pair_json(GOOD["question"], GOOD["answer"], quoted)]
    result = gen._generate(ChatClient(make_config(fake_llm)), ALPHA, [(tokens.windows(ALPHA.text)[0], 0)], [],
                           None, Limits(), retries=gen.RETRIES, temperature=None, cancel=None,
                           on_retry=None, on_progress=None)
    (cand,) = result.candidates
    assert cand.passage == GOOD["supporting_passage"] == ALPHA.text[cand.start:cand.end]
    assert cand.verdict == "fuzzy" and 75 <= cand.score < 100 and cand.quoted == quoted
    assert result.snapped == 1 and len(fake_llm.requests) == 1


def test_a_snap_the_checklist_would_refuse_is_sent_back():
    # "Alpha makes hammers." aligns with "Alpha makes a" (13 characters): too short to keep.
    _, problems, _ = gen.check_candidate(pair_json("What?", "A", "Alpha makes hammers."), ALPHA.text)
    assert "does not occur verbatim" in problems[0]
    # A fuzzy match with other numbers is another fact, not a near miss.
    _, problems, _ = gen.check_candidate(pair_json("What?", "A", "Revenue was $12 million in 2022."), ALPHA.text)
    assert "does not occur verbatim" in problems[0]


@pytest.mark.parametrize("first, problem", [
    ('{"question": "What was revenue?", "answer": ', "not valid JSON"),
    ("I think the answer is revenue.", "not valid JSON"),
    (completion(None, refusal="I cannot do that."), "refused"),
    (completion(""), "empty reply"),
    (pair_json("Did Alpha report revenue of $10 million in 2022?", "Yes.", GOOD["supporting_passage"]), "yes/no"),
])
def test_unusable_replies_are_retried_with_what_was_wrong(fake_llm, first, problem):
    fake_llm.script = [first, GOOD]
    cand, attempts = run_window(fake_llm)
    assert cand is not None and cand.attempts == 2
    assert problem in attempts[0].problems[0]
    assert problem in fake_llm.requests[1]["messages"][-1]["content"]


def test_a_repeat_of_an_existing_question_is_refused(fake_llm):
    fake_llm.script = [pair_json("What was Alpha's revenue in 2022", "$10 million.", "Revenue was $10 million in 2022."),
                       pair_json("What does Alpha make?", "Anvils.", ALPHA.text.strip())]
    cand, attempts = run_window(fake_llm, existing=["What was Alpha's revenue in 2022?"])
    assert cand is not None and cand.question == "What does Alpha make?"
    assert "repeats an existing question" in attempts[0].problems[0]


def test_a_copy_of_an_existing_question_without_its_trailing_instructions_is_a_repeat():
    # FinanceBench's questions go on after the question; a small model copied only the question.
    existing = ["What is Amazon's year-over-year change in revenue from FY2016 to FY2017 (in units of percents and "
                "round to one decimal place)? Calculate what was asked by utilizing the line items clearly shown "
                "in the statement of income."]
    copy = ("What is the year-over-year change in revenue from FY2016 to FY2017 (in units of percents and round to "
            "one decimal place)?")
    assert gen.find_repeat(copy, existing) == existing[0]
    # Another year is another question, and a question ending at its mark is compared whole.
    assert gen.find_repeat(copy.replace("FY2016 to FY2017", "FY2015 to FY2016"), existing) is None
    assert gen.find_repeat("What was Alpha's revenue in 2022", ["What was Alpha's revenue in 2022?"]) is not None


def test_after_three_retries_the_window_gives_nothing(fake_llm):
    fake_llm.default = pair_json("What?", "x", "Not in the window at all.")
    cand, attempts = run_window(fake_llm)
    assert cand is None and len(attempts) == 1 + gen.RETRIES == len(fake_llm.requests)
    assert not any(a.accepted for a in attempts)


def test_a_passage_outside_the_length_range_is_kept_with_a_warning_when_nothing_better_comes(fake_llm):
    # 32 characters: within the checklist's 30-600, outside hojicha's 150-400.
    fake_llm.script = [GOOD] + [pair_json("What?", "x", "not there")] * gen.RETRIES
    cand, attempts = run_window(fake_llm, hint=domain_hint("hojicha"))
    assert cand is not None and cand.passage == GOOD["supporting_passage"] and cand.attempts == 1
    assert "between 150 and 400" in cand.warnings[0]
    assert [a.accepted for a in attempts] == [True] + [False] * gen.RETRIES


def test_a_clean_retry_beats_a_warned_first_reply(fake_llm):
    hint = gen.DomainHint("quote 20 to 40 characters", 20, 40)
    fake_llm.script = [pair_json("What does Alpha make?", "Anvils.", "Alpha makes anvils."), GOOD]
    cand, _ = run_window(fake_llm, hint=hint)
    assert cand.passage == GOOD["supporting_passage"] and cand.warnings == () and cand.attempts == 2
    assert "between 20 and 40" in fake_llm.requests[1]["messages"][-1]["content"]


# --- windows ----------------------------------------------------------------------------------

def fake_windows(n: int) -> list[tokens.Window]:
    return [tokens.Window(i, i * 10, i * 10 + 12, i * 100, i * 100 + 120) for i in range(n)]


def test_pick_windows_prefers_the_windows_with_fewest_pairs():
    assert gen.pick_windows("", [0, 0, 1], 4, doc_windows=fake_windows(3)) == [2, 1, 2, 0]
    assert gen.pick_windows("", [None, 7, -1], 3, doc_windows=fake_windows(2)) == [0, 1, 0]
    assert gen.pick_windows("", [], 0, doc_windows=fake_windows(2)) == []


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8).flatmap(lambda w: st.tuples(st.just(w), st.lists(st.integers(0, w - 1), max_size=20),
                                                      st.integers(0, 20))))
def test_every_pick_is_a_window_with_the_fewest_pairs_at_that_moment(case):
    n_windows, existing, n = case
    picks = gen.pick_windows("", existing, n, doc_windows=fake_windows(n_windows))
    assert len(picks) == n
    counts = [existing.count(i) for i in range(n_windows)]
    for p in picks:
        assert counts[p] == min(counts)
        counts[p] += 1


def test_pair_window_uses_chunk_index_else_the_passage_else_window_0():
    doc = long_document()
    ws = tokens.windows(doc.text)
    assert len(ws) >= 3
    inside_1 = doc.text[ws[1].start + 5000: ws[1].start + 5060]
    assert not (ws[0].start <= doc.text.find(inside_1) < ws[0].end)
    make = lambda ci, passage: QAPair(0, "Q?", "A", passage, doc.key, ci)  # noqa: E731
    assert gen.pair_window(make(2, inside_1), doc.text).index == 1  # window 2 does not hold the passage
    assert gen.pair_window(make(None, inside_1), doc.text).index == 1
    assert gen.pair_window(make(99, inside_1), doc.text).index == 1
    assert gen.pair_window(make(None, "not in the document"), doc.text).index == 0


def test_regenerate_of_a_non_exact_pair_without_chunk_index_uses_its_located_window(fake_llm):
    # Pair #3 of the sample has its passage in window 6, but it is not exact and has
    # no chunk_index; regenerate used to send window 0.
    doc = long_document()
    ws = tokens.windows(doc.text)
    exact = doc.text[ws[2].start + 3000: ws[2].start + 3200]
    normalized = exact.replace("\n", " ")
    fuzzy = exact.replace("Zeta Corp", "Zeta Corporation", 1)
    assert normalized not in doc.text and fuzzy not in doc.text
    client = ChatClient(make_config(fake_llm))
    fake_llm.default = quoting_model
    for passage, verdict in ((normalized, "normalized"), (fuzzy, "fuzzy")):
        pair = QAPair(0, "What?", "A", passage, doc.key, None)
        before = len(fake_llm.requests)
        result = gen.regenerate(client, pair, doc, n_candidates=1, first_sample=before)
        assert chunk_of_request(fake_llm.requests[before]) == 2
        assert result.window_notes == [f"window 2: holds the pair's passage ({verdict})"]
        assert result.candidates and result.candidates[0].chunk_index == 2
        assert result.candidates[0].window_note == result.window_notes[0]
    choice = gen.choose_pair_window(QAPair(0, "Q?", "A", "nowhere at all in it", doc.key, None), doc.text, ws)
    assert choice.window.index == 0 and "not in the document" in choice.reason


# --- runs -------------------------------------------------------------------------------------

def test_generate_more_fills_the_windows_with_fewest_pairs_and_does_not_repeat(fake_llm):
    doc = long_document()
    ws = tokens.windows(doc.text)
    existing = [QAPair(0, "What is line zero?", "x", "Line 0:", doc.key, 0),
                QAPair(1, "What is line one?", "x", "Line 1:", doc.key, 0),
                QAPair(2, "What is in window one?", "x", "p", doc.key, 1),
                QAPair(3, "What is in the last window?", "x", "p", doc.key, len(ws) - 1)]
    assert len(ws) == 4
    fake_llm.default = quoting_model
    progress: list[tuple[int, int]] = []
    res = gen.generate_more(ChatClient(make_config(fake_llm)), doc, existing, 2, profile="ficha",
                            on_progress=lambda d, t: progress.append((d, t)))
    assert [chunk_of_request(b) for b in fake_llm.requests] == [2, 1]
    assert [c.chunk_index for c in res.candidates] == [2, 1] and not res.cancelled and not res.failures
    for c in res.candidates:
        assert ws[c.chunk_index].start <= c.start and c.end <= ws[c.chunk_index].end
        assert doc.text[c.start:c.end] == c.passage
    # Every request lists the questions of the start (the jobs are independent), and the ficha hint.
    assert all(listed_questions(b) == [p.question for p in existing] for b in fake_llm.requests)
    assert "financial filing" in fake_llm.requests[0]["messages"][1]["content"]
    assert progress == [(1, 2), (2, 2)] and res.paid_calls == 2


def test_generate_more_reports_windows_that_gave_nothing(fake_llm):
    fake_llm.default = pair_json("What?", "x", "never in the text")
    res = gen.generate_more(ChatClient(make_config(fake_llm)), ALPHA, [], 1)
    assert res.candidates == [] and len(res.failures) == 1 and "AAA chunk 0" in res.failures[0]
    assert len(res.attempts) == 1 + gen.RETRIES


def test_cancel_mid_run_keeps_what_was_generated(fake_llm):
    doc = long_document()
    cancel = threading.Event()

    def cancel_on_second(done, total):
        if done == 2:
            cancel.set()

    fake_llm.default = quoting_model
    res = gen.generate_more(ChatClient(make_config(fake_llm)), doc, [], 5, cancel=cancel, on_progress=cancel_on_second)
    assert res.cancelled and len(res.candidates) == 2 and len(fake_llm.requests) == 2


def test_an_unavailable_server_stops_the_run_with_one_clear_error(fake_llm):
    fake_llm.default = status(401, f"bad key {SECRET}")
    with pytest.raises(LLMUnavailable) as exc:
        gen.generate_more(ChatClient(make_config(fake_llm)), ALPHA, [], 3)
    assert SECRET not in str(exc.value) and len(fake_llm.requests) == 1


def test_regenerate_uses_the_pairs_window_and_the_cache_until_fresh_samples_are_asked(fake_llm, tmp_path):
    doc = long_document()
    ws = tokens.windows(doc.text)
    passage = doc.text[ws[1].start + 5000: ws[1].start + 5060]
    pair = QAPair(5, "What is the bad question?", "x", passage, doc.key, None)
    fake_llm.default = quoting_model
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm), cache)
        res = gen.regenerate(client, pair, doc, other_questions=["What is another?"], n_candidates=2)
        assert [chunk_of_request(b) for b in fake_llm.requests] == [1, 1]
        assert len(res.candidates) == 2 and res.candidates[0].question != res.candidates[1].question
        assert listed_questions(fake_llm.requests[0]) == ["What is another?"]  # not the pair's own
        assert listed_questions(fake_llm.requests[1]) == ["What is another?"]
        assert [sample_of_request(b) for b in fake_llm.requests] == [0, 1]  # the second asks for another fact
        again = gen.regenerate(client, pair, doc, other_questions=["What is another?"], n_candidates=2)
        assert len(fake_llm.requests) == 2 and again.paid_calls == 0
        assert [c.question for c in again.candidates] == [c.question for c in res.candidates]
        gen.regenerate(client, pair, doc, other_questions=["What is another?"], n_candidates=1, first_sample=2)
        assert len(fake_llm.requests) == 3


def test_estimate_before_generate_more_counts_calls_tokens_and_retries():
    doc = long_document()
    cfg = resolve_config(base_url="http://127.0.0.1:9/v1", env={})  # a local server: no key needed
    est = estimate_generate_more(doc, [], 12, cfg, profile="ficha")
    assert est.calls == 12 and est.max_calls == 12 * (1 + gen.RETRIES) and est.needs_confirmation
    assert est.input_tokens > 12 * 7000  # each request carries a window of up to 8,192 tokens
    assert est.cost_usd is None


# --- concurrency (regenerate and generate more at [llm] concurrency) -----------------

def test_generate_more_at_concurrency_4_matches_a_serial_run_with_replies_out_of_order(fake_llm, tmp_path):
    import time

    from llmfake import InFlight

    doc = long_document(lines=2400)  # 6 windows
    in_flight = InFlight()

    def slow_first_windows(body):
        # Earlier windows answer later: the replies arrive out of order.
        with in_flight:
            time.sleep(0.05 * (6 - chunk_of_request(body)))
        return quoting_model(body)

    fake_llm.default = slow_first_windows
    serial = gen.generate_more(ChatClient(make_config(fake_llm)), doc, [], 6, concurrency=1)
    assert in_flight.most == 1
    in_flight = InFlight(together=2)  # the pooled run: the first two calls wait for each other
    serial_requests = list(fake_llm.requests)
    fake_llm.requests.clear()
    progress: list[tuple[int, int]] = []
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        pooled = gen.generate_more(ChatClient(make_config(fake_llm), cache), doc, [], 6, concurrency=4,
                                   on_progress=lambda d, t: progress.append((d, t)))
        assert in_flight.most > 1  # calls really overlapped
        # Same requests (as a set: they were sent in another order), same candidates in window order.
        assert sorted(json.dumps(b, sort_keys=True) for b in fake_llm.requests) == \
            sorted(json.dumps(b, sort_keys=True) for b in serial_requests)
        assert [c.fields() for c in pooled.candidates] == [c.fields() for c in serial.candidates]
        assert [c.chunk_index for c in pooled.candidates] == [0, 1, 2, 3, 4, 5]
        assert progress[-1] == (6, 6) and len(progress) == 6
        # A rerun is answered by the cache: no paid call.
        sent = len(fake_llm.requests)
        again = gen.generate_more(ChatClient(make_config(fake_llm), cache), doc, [], 6, concurrency=4)
        assert len(fake_llm.requests) == sent and again.paid_calls == 0
        assert [c.fields() for c in again.candidates] == [c.fields() for c in pooled.candidates]


def test_regenerate_at_concurrency_drops_a_candidate_repeating_an_earlier_one(fake_llm):
    doc = long_document()
    pair = QAPair(5, "What is the bad question?", "x", doc.text[100:160], doc.key, None)
    fake_llm.default = pair_json("What does the filing state in line 3?", "It states a figure.",
                                 doc.text.splitlines()[0])
    attempts: list = []
    res = gen.regenerate(ChatClient(make_config(fake_llm)), pair, doc, n_candidates=3, concurrency=3,
                         on_attempt=attempts.append)
    assert len(fake_llm.requests) == 3 and len(res.candidates) == 1
    assert len(res.failures) == 2 and all("repeats an earlier candidate" in f for f in res.failures)
    assert sorted(a.sample for a in attempts) == [0, 1, 2] and all(a.accepted for a in attempts)


def test_attempt_quote_is_the_passage_the_reply_quoted():
    a = gen.Attempt("K", 0, 0, 1, ("not verbatim",), False, json.dumps({"question": "Q?", "answer": "A",
                                                                       "supporting_passage": "the quote"}), False)
    assert a.quote == "the quote"
    assert gen.Attempt("K", 0, 0, 1, (), False, "not json at all", False).quote == ""
