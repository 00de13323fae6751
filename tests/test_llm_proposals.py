"""Numbered mode with the evidence the tool proposes: the candidate ranges chosen from a window's
sentence map (facts with figures first, labelled table rows, boilerplate skipped, length limits),
the proposed range in the prompt, the next range on the next sample and after a refused reply that
kept it, the provenance, and the cache key, against the loopback chat server."""

from __future__ import annotations

import json

from test_llm_client import make_config
from test_llm_numbered import numbered, run_on

from mtcb_curate.checks import Limits
from mtcb_curate.llm import generate as gen
from mtcb_curate.llm.cache import ResponseCache
from mtcb_curate.llm.client import ChatClient, ChatRequest
from mtcb_curate.llm.numbered import sentence_map
from mtcb_curate.llm.prompts import NUMBERED_SCHEMA
from mtcb_curate.llm.proposals import candidate_ranges, fact_score, is_boilerplate

# A window as the filings give them: a page header, a table of contents line, a forward-looking
# notice, prose with figures, a sentence introducing a table, a table with a years heading and
# labelled rows (cells on lines of their own), a sentence wrapped across two units, a page number.
WINDOW = (
    "Table of Contents\n"
    "ALPHA CORP\n"
    "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS\n"
    "This report contains forward-looking statements that involve risks and uncertainties, and actual results may differ.\n"
    "\n"
    "Alpha Corp makes anvils and hammers for builders in North America and Europe through its two segments.\n"
    "Net revenue of Alpha Corp was $10.5 million in fiscal 2022, up 15% from fiscal 2021.\n"
    "The company opened a second plant in Springfield during fiscal 2022.\n"
    "\n"
    "The components of cost of sales were as follows (in millions):\n"
    "Year ended December 31,\n"
    "2022\n"
    "2021\n"
    "Raw materials and components\n"
    "$\n"
    "4,100\n"
    "$\n"
    "3,650\n"
    "Balance at December 31, 2022\n"
    "$\n"
    "1,203\n"
    "\n"
    "27\n"
    "Alpha Corp repaid $2.0 million of its term loan in fiscal 2022, leaving $3.5 million outstanding at the end of the\n"
    "year, which matures in 2026.\n"
)


def texts(smap, p):
    return " ".join(smap.passage(p.first, p.last).split())


def test_facts_with_figures_come_first_and_boilerplate_headings_and_table_intros_are_never_proposed():
    smap = sentence_map(WINDOW)
    props = candidate_ranges(smap, min_chars=30, max_chars=600)
    shown = [texts(smap, p) for p in props]
    assert shown[0].startswith("Net revenue of Alpha Corp was $10.5 million")  # a figure, a year, a sentence
    for bad in ("Table of Contents", "ALPHA CORP", "NOTES TO", "forward-looking", "as follows (in millions):"):
        assert not any(bad in t for t in shown), bad
    assert not any(t.strip() in ("27", "Year ended December 31, 2022 2021") for t in shown)
    # A sentence wrapped across two units is proposed whole (its second unit starts in lower case).
    assert any(t.startswith("Alpha Corp repaid $2.0 million") and t.endswith("matures in 2026.") for t in shown)
    # Labelled table rows are proposed (after prose), the one carrying its date before the other.
    rows = [t for p, t in zip(props, shown) if p.kind == "table"]
    assert rows == ["Balance at December 31, 2022 $ 1,203", "Raw materials and components $ 4,100 $ 3,650"]
    # A table row ranks after the prose facts of as high a score (a small model reads prose better).
    assert [p.kind for p in props[:3]] == ["prose"] * 3
    # Ranges never overlap, and each passes the checks' own range rules.
    covered = [k for p in props for k in range(p.first, p.last + 1)]
    assert len(covered) == len(set(covered))
    assert all(smap.range_problem(p.first, p.last, min_chars=30, max_chars=600) is None for p in props)


def test_the_length_limits_the_checks_use_bound_every_proposal():
    smap = sentence_map(WINDOW)
    for lo, hi in ((30, 600), (30, 80), (70, 120)):
        for p in candidate_ranges(smap, min_chars=lo, max_chars=hi):
            assert lo <= len(smap.passage(p.first, p.last)) <= hi
    # The 101-character revenue sentence is not proposed under an 80-character maximum.
    assert not any("Net revenue" in texts(smap, p) for p in candidate_ranges(smap, min_chars=30, max_chars=80))


def test_boilerplate_and_fact_scores():
    assert is_boilerplate("Table of Contents") and is_boilerplate("See Note 4, Acquisitions, for more.")
    assert is_boilerplate("AMAZON.COM, INC.") and is_boilerplate("F-28") and is_boilerplate("41")
    assert not is_boilerplate("Net revenue was $10.5 million in fiscal 2022.")
    assert fact_score("Net revenue was $10.5 million in fiscal 2022.") > fact_score(
        "The company opened a second plant in Springfield, Illinois, to make hammers for its European customers.") > 0
    # One or two figures rank above a sentence comparing several; a short plain sentence says nothing.
    assert fact_score("Net revenue was $10.5 million in fiscal 2022, up 15%.") > fact_score(
        "Net revenue was $10.5 million in fiscal 2022, up 15% from $9.1 million.")
    assert fact_score("We regularly evaluate all of our financial assets for impairment.") == 0
    assert fact_score("The components of cost of sales were as follows (in millions):") == 0


def test_dense_runs_propose_blocks_of_several_fact_sentences():
    smap = sentence_map(WINDOW)
    props = candidate_ranges(smap, min_chars=30, max_chars=600, min_units=3)
    assert props and all(p.last - p.first + 1 >= 3 and p.kind == "block" for p in props)
    assert "Net revenue of Alpha Corp" in texts(smap, props[0])


# -- generation with a proposal, against the loopback server ------------------------------------------

DOC = WINDOW


def run(client, **kw):
    return run_on(DOC, client, **kw)


def props():
    return gen.proposals_for(sentence_map(DOC), Limits(30, 600))


def test_the_proposed_range_is_in_the_prompt_with_its_text_and_recorded_in_the_provenance(fake_llm):
    p = props()[0]
    q = "What was Alpha Corp's net revenue in fiscal 2022?"
    fake_llm.script = [numbered(q, "$10.5 million", p.first, p.last)]
    cand, _ = run(ChatClient(make_config(fake_llm)))
    user = fake_llm.requests[0]["messages"][1]["content"]
    smap = sentence_map(DOC)
    assert f"Ask your question about sentences [{p.first}] to [{p.last}]" in user
    ask = user[user.index("Ask your question about"):]
    assert f"[{p.first}] {smap.display(p.first)}" in ask  # repeated near the end, with its number
    assert user.index("Ask your question") > user.index("DOCUMENT WINDOW>>>")
    assert "This is candidate" not in user
    assert cand.proposed == (p.first, p.last) == cand.sentences and cand.supported
    assert cand.provenance()["proposed"] == [p.first, p.last]
    assert "(as proposed)" in cand.provenance_line()


def test_the_next_sample_takes_the_next_range(fake_llm):
    first, second = props()[:2]
    fake_llm.default = numbered("What did Alpha Corp repay in fiscal 2022?", "$2.0 million", second.first, second.last)
    cand, _ = run(ChatClient(make_config(fake_llm)), sample=1)
    user = fake_llm.requests[0]["messages"][1]["content"]
    assert f"about sentences [{second.first}] to [{second.last}]" in user
    assert f"about sentences [{first.first}] to [{first.last}]" not in user
    assert cand.proposed == (second.first, second.last)


def test_a_refused_reply_that_kept_the_range_moves_to_the_next_range_and_one_that_did_not_keeps_it(fake_llm):
    p0, p1 = props()[:2]
    q = "What was Alpha Corp's net revenue in fiscal 2022?"
    fake_llm.script = [numbered(q, "Is it large?", 1, 1),  # another range (too short): the proposal stays
                       numbered("Is the revenue of Alpha Corp large?", "Yes", p0.first, p0.last),  # kept, refused
                       numbered("What did Alpha Corp repay in fiscal 2022?", "$2.0 million", p1.first, p1.last)]
    cand, attempts = run(ChatClient(make_config(fake_llm)))
    asks = [r["messages"][1]["content"] for r in fake_llm.requests]
    assert f"about sentences [{p0.first}] to [{p0.last}]" in asks[0] and f"about sentences [{p0.first}]" in asks[1]
    assert f"about sentences [{p1.first}] to [{p1.last}]" in asks[2]
    assert "yes/no question" in fake_llm.requests[2]["messages"][-1]["content"]  # the feedback still says why
    assert cand is not None and cand.attempts == 3 and cand.proposed == (p1.first, p1.last)
    bodies = [json.dumps(r, sort_keys=True) for r in fake_llm.requests]
    assert len(set(bodies)) == 3


def test_a_model_that_names_another_range_is_asked_for_the_proposed_one_and_warned_if_it_insists(fake_llm):
    p = props()[0]
    smap = sentence_map(DOC)
    other = next(i for i in range(1, len(smap) + 1) if smap.unit_text(i).startswith("The company opened"))
    elsewhere = numbered("Where did Alpha Corp open a second plant in fiscal 2022?", "Springfield", other, other)
    fake_llm.script = [elsewhere, numbered("What was Alpha Corp's net revenue in fiscal 2022?", "$10.5 million",
                                           p.first, p.last)]
    cand, attempts = run(ChatClient(make_config(fake_llm)))
    feedback = fake_llm.requests[1]["messages"][-1]["content"]
    assert f"Sentences {other} to {other} are not the evidence proposed" in feedback
    assert f"from sentences {p.first} to {p.last}" in feedback
    assert not attempts[0].accepted and cand.attempts == 2
    assert cand.sentences == cand.proposed == (p.first, p.last) and not cand.warnings

    # A model that keeps its own range to the last attempt: its pair is shown with the warning
    fake_llm.requests.clear()
    fake_llm.script = []
    fake_llm.default = elsewhere
    cand, attempts = run(ChatClient(make_config(fake_llm)), sample=0, retries=2)
    assert len(attempts) == 3 and cand.sentences == (other, other) and cand.proposed == (p.first, p.last)
    assert any("not the evidence proposed" in w for w in cand.warnings)
    assert f"(proposed {p.first}-{p.last})" in cand.provenance_line()


def test_the_proposing_prompt_has_its_own_cache_key_and_first_request_is_the_request_sent(fake_llm, tmp_path):
    p = props()[0]
    fake_llm.script = [numbered("What was Alpha Corp's net revenue in fiscal 2022?", "$10.5 million", p.first, p.last)]
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm), cache)
        cand, _ = run(client)
        new = gen.first_request(DOC, doc_key="ALP", chunk_index=0, mode="numbered", limits=Limits(30, 600))
        assert "proposed" in new.tag and client.key_for(new) == cand.cache_key
        old = ChatRequest.of(gen.prompt_messages(DOC, doc_key="ALP", chunk_index=0, mode="numbered",
                                                 limits=Limits(30, 600)),
                             {"temperature": gen.TEMPERATURE}, gen.request_tag(0, "numbered", False), NUMBERED_SCHEMA)
        assert client.key_for(old) != cand.cache_key
    # A window with no fact to propose is asked as before, without a proposal.
    bare = "Table of Contents\n27\nF-28\n"
    req = gen.first_request(bare, doc_key="ALP", chunk_index=0, mode="numbered")
    assert "proposed" not in req.tag and "Ask your question about" not in req.messages[1]["content"]


def test_an_answer_copying_another_sentence_of_the_window_is_refused_with_feedback(fake_llm):
    smap = sentence_map(DOC)
    p = props()[0]
    other = next(i for i in range(1, len(smap) + 1) if smap.unit_text(i).startswith("Alpha Corp makes anvils"))
    q = "What was Alpha Corp's net revenue in fiscal 2022?"
    fake_llm.script = [numbered(q, smap.display(other), p.first, p.last),  # another sentence, copied
                       numbered(q, smap.display(p.first), p.first, p.last),  # its own sentence, whole: not this rule
                       ]
    cand, attempts = run(ChatClient(make_config(fake_llm)))
    assert f"The answer copies sentence {other}, which is not among sentences {p.first} to {p.first}" in attempts[0].problems[0]
    assert "copies sentence" in fake_llm.requests[1]["messages"][-1]["content"]
    assert cand is not None and cand.attempts == 2
    assert gen.copied_sentence("$10.5 million", smap, p.first, p.last) is None  # a short answer is never a copy


def test_a_heading_for_evidence_and_an_answer_that_only_repeats_the_question_are_refused(fake_llm):
    smap = sentence_map(DOC)
    p = props()[0]
    heading = next(i for i in range(1, len(smap) + 1) if smap.unit_text(i).startswith("NOTES TO"))
    assert len(smap.passage(heading, heading)) >= 30  # long enough: refused for what it is, not its length
    fake_llm.script = [numbered("What is the name of Alpha Corp?", "Alpha Corp", p.first, p.last),
                       numbered("What is the title of Alpha Corp's notes?", "Notes to consolidated financial statements",
                                heading, heading),
                       numbered("What was Alpha Corp's net revenue in fiscal 2022?", "$10.5 million", p.first, p.last)]
    cand, attempts = run(ChatClient(make_config(fake_llm)))
    assert any("only repeats words of the question" in x for x in attempts[0].problems)
    assert any(f"Sentences {heading} to {heading} are a heading or page furniture" in x for x in attempts[1].problems)
    assert "heading or page furniture" in fake_llm.requests[2]["messages"][-1]["content"]
    assert cand is not None and cand.attempts == 3 and cand.answer == "$10.5 million"
    assert not gen.answer_repeats_question("What was Alpha Corp's net revenue in fiscal 2022?", "$10.5 million")
    assert gen.answer_repeats_question("What is the name of Amazon?", "Amazon")


def test_an_answer_that_restates_its_question_is_refused_and_a_year_its_passage_lacks_is_warned(fake_llm):
    smap = sentence_map(DOC)
    plant = next(p for p in props() if smap.unit_text(p.first).startswith("The company opened"))
    sample = props().index(plant)
    q = "What is the second plant that the company opened in Springfield during fiscal 2022?"
    fake_llm.script = [numbered(q, "The company opened a second plant in Springfield during fiscal 2022.",
                                plant.first, plant.last),
                       numbered("Where did Alpha Corp open a second plant in fiscal 2022?", "Springfield",
                                plant.first, plant.last)]
    cand, attempts = run(ChatClient(make_config(fake_llm)), sample=sample)
    assert any("only repeats words of the question" in x for x in attempts[0].problems)
    assert cand.answer == "Springfield" and cand.attempts == 2

    makes = next(p for p in props() if smap.unit_text(p.first).startswith("Alpha Corp makes"))
    fake_llm.requests.clear()
    q = "What did Alpha Corp make for builders in fiscal 2022?"
    fake_llm.script = [numbered(q, "Anvils and hammers in fiscal 2022", makes.first, makes.last),
                       numbered(q, "Anvils and hammers", makes.first, makes.last)]
    cand, attempts = run(ChatClient(make_config(fake_llm)), sample=props().index(makes))
    assert any("The answer names fiscal 2022, which the passage does not state" in x for x in attempts[0].problems)
    assert "names fiscal 2022" in fake_llm.requests[1]["messages"][-1]["content"]
    assert cand.answer == "Anvils and hammers" and not cand.warnings
    assert gen.years_not_in_passage("In fiscal 2022 and FY2021", "revenue in 2022") == ["FY2021"]
    # a long answer that adds its own figure or words to the question is not a restatement
    assert not gen.answer_repeats_question("What was the carrying amount of Kraft Heinz's brands at December 28, "
                                           "2019?", "The carrying amount of Kraft Heinz's brands at December 28, 2019 "
                                                    "was $43.4 billion.")
