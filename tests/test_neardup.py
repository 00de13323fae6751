"""Near-duplicate detection: the rules, clusters, exclusions, thresholds and resolution helpers."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mtcb_curate import neardup  # noqa: E402
from mtcb_curate.dataset.loading import load  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.neardup import (  # noqa: E402
    DEFAULT_THRESHOLD,
    REASON_IDENTICAL,
    REASON_IDENTICAL_ACROSS,
    REASON_OVERLAP,
    REASON_SAME_ANSWER,
    REASON_SAME_PASSAGE,
    REASON_SIMILAR,
    REASONS,
    Item,
    cluster_index,
    clusters_json,
    duplicate_reason,
    find_clusters,
    find_groups,
    find_shared_passages,
    is_resolved,
    items_from_dataset,
    keep_one,
    kept_id_of,
    normalize,
    not_duplicate_pairs,
    passage_spans,
    question_similarity,
    unresolved,
)
from mtcb_curate.dataset.profiles import get_profile  # noqa: E402

# Passages long enough to count as quotes, and all different.
P = [f"Passage number {w} says something quite specific about topic {w} in this filing."
     for w in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")]


def item(i, question, answer="", passage=None, doc="AAA"):
    return Item(i, doc, question, answer, P[i % len(P)] if passage is None else passage)


def links(clusters):
    """{(a, b): reasons} over all clusters."""
    return {(x.a, x.b): set(x.reasons) for c in clusters for x in c.links}


def raised(items, **kwargs):
    """{(a, b): reasons} of every link raised, inside a cluster or between two (star
    clustering keeps a link between members of two stars out of both)."""
    found = neardup.blocking._links(items, kwargs.pop("threshold", DEFAULT_THRESHOLD),
                                    kwargs.pop("reasons", neardup.QUESTION_REASONS), None, None, -1,
                                    kwargs.pop("exact", None), ())
    if found is None:
        return {}
    prep, a, b, bits = found
    ids = prep.ids
    return {(int(ids[x]), int(ids[y])): set(neardup.clusters._reason_names(int(k)))
            for x, y, k in zip(a.tolist(), b.tolist(), bits.tolist())}


def only(clusters):
    assert len(clusters) == 1, clusters
    return clusters[0]


# -- normalization and the scorer ---------------------------------------------------------------


def test_normalize_casefolds_drops_punctuation_and_collapses_whitespace():
    assert normalize("What's  3M\u2019s FY-2022\u00a0revenue?!") == "whats 3ms fy 2022 revenue"
    assert normalize("  ...  ") == ""
    assert normalize("STRASSE") == normalize("straße")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_question_similarity_is_token_sort_ratio_of_normalized_text(a, b):
    na, nb = normalize(a), normalize(b)
    expected = fuzz.token_sort_ratio(na, nb, processor=None) if na and nb else 0.0
    assert question_similarity(a, b) == pytest.approx(expected)
    assert question_similarity(a, b) == pytest.approx(question_similarity(b, a))


# -- crafted sets ---------------------------------------------------------------------------------


def test_empty_and_single_pair_datasets_have_no_cluster():
    assert find_clusters([]) == []
    assert find_clusters([item(0, "What was revenue in fiscal 2022?")]) == []


def test_exact_repeats_differing_in_case_and_punctuation_are_identical_questions():
    c = only(find_clusters([
        item(0, "What was Alpha's revenue in fiscal 2022?", passage=P[0]),
        item(1, "what was ALPHA\u2019S revenue in fiscal 2022", passage=P[1]),
    ]))
    assert c.ids == (0, 1)
    assert c.reasons == (REASON_IDENTICAL,)
    assert c.scores == ((0, 1, 100.0),)
    assert not c.across_documents


@pytest.mark.parametrize("a, b", [
    ("Who was the Norse leader in 911?", "In 911, who was the Norse leader?"),               # clause moved
    ("When were the Normans in Normandy?", "When were Normans in Normandy?"),               # stopword
    ("What is the name of the Norse leader?", "What's the name of the Norse leader?"),      # contraction
    ("How is packet switching characterized?", "How is packet switching charecterized"),    # typo
])
def test_rewordings_are_similar_questions(a, b):
    assert question_similarity(a, b) >= DEFAULT_THRESHOLD
    c = only(find_clusters([item(0, a, "x"), item(1, b, "y")]))
    assert REASON_SIMILAR in c.reasons


def test_a_question_word_synonym_with_the_same_answer_is_raised_by_the_answer_rule():
    a, b = "When was Rollo born?", "In what year was Rollo born?"
    score = question_similarity(a, b)
    assert DEFAULT_THRESHOLD - neardup.ANSWER_MARGIN <= score < DEFAULT_THRESHOLD
    assert find_clusters([item(0, a, "860"), item(1, b, "In 846")]) == []
    c = only(find_clusters([item(0, a, "860"), item(1, b, "860.")]))
    assert c.reasons == (REASON_SAME_ANSWER,)
    # the same answer in two different documents is a coincidence, not a duplicate
    assert find_clusters([item(0, a, "860", doc="AAA"), item(1, b, "860", doc="BBB")]) == []


@pytest.mark.parametrize("phrase", sorted(neardup.SAME_ASKING))
def test_an_interrogative_phrase_asks_what_its_one_word_asks(phrase):
    """"What number of employees..." asks what "How many employees..." asks: a similar question
    whatever the answers, scored as the one word; not an "identical" one."""
    word = neardup.SAME_ASKING[phrase]
    a = f"{word.capitalize()} employees were named in the Norse filing of Rollo?"
    b = f"{phrase.capitalize()} employees were named in the Norse filing of Rollo?"
    assert question_similarity(a, b) == 100
    c = only(find_clusters([item(0, a, "Rollo"), item(1, b, "Julius")]))
    assert c.reasons == (REASON_SIMILAR,)


def test_different_questions_on_one_passage_are_a_shared_group_not_a_cluster():
    quote = "Revenue was $10 million in 2022, up from $8 million in 2021, driven by anvils."
    items = [
        item(0, "What was Alpha's revenue in 2022?", "$10 million", quote),
        item(1, "What drove the growth of Alpha's sales?", "Anvils", quote),
        item(2, "Where is Alpha headquartered?", "Toledo", P[2]),
    ]
    assert find_clusters(items) == []  # shared evidence is not a duplicate question
    c = only(find_shared_passages(items))
    assert c.ids == (0, 1)
    assert c.reasons == (REASON_SAME_PASSAGE,)
    assert c.scores[0][2] < DEFAULT_THRESHOLD  # the questions themselves are not similar


def test_the_same_passage_in_two_documents_is_not_raised():
    quote = "Revenue was $10 million in 2022, up from $8 million in 2021, driven by anvils."
    assert find_clusters([item(0, "What was Alpha's revenue in 2022?", "", quote, "AAA"),
                          item(1, "Where is Beta headquartered?", "", quote, "BBB")]) == []


def test_overlapping_spans_are_raised_and_short_or_slight_overlaps_are_not():
    qs = ["Where is Alpha headquartered?", "How many people does Alpha employ?",
          "What does Alpha make?", "Who audits Alpha's accounts?"]
    items = [item(i, q, passage=P[i]) for i, q in enumerate(qs)]
    spans = {0: (100, 200), 1: (150, 260), 2: (225, 400), 3: (100, 200)}
    assert find_clusters(items, spans=spans) == []
    got = links(find_shared_passages(items, spans=spans))
    assert got[(0, 3)] == {REASON_SAME_PASSAGE}      # the same span
    assert got[(0, 1)] == {REASON_OVERLAP}           # 50 characters, half of the shorter
    assert got[(1, 3)] == {REASON_OVERLAP}
    assert (1, 2) not in got                         # 35 characters, a third of the shorter
    assert (0, 2) not in got                         # apart
    short = {0: (100, 130), 1: (100, 131)}           # 30 shared characters: a phrase
    assert find_shared_passages(items[:2], spans=short) == []


def test_a_passage_without_span_contained_in_another_is_overlapping():
    long = "Net sales rose 8 percent to $394 billion. Services revenue reached a record $78 billion."
    inner = "Services revenue reached a record $78 billion."
    c = only(find_shared_passages([item(0, "What were net sales?", "", long),
                                   item(1, "What was services revenue?", "", inner),
                                   item(2, "Who is the auditor?", "", P[2])]))
    assert c.ids == (0, 1) and c.reasons == (REASON_OVERLAP,)
    # one located passage, one not: still compared as text
    c = only(find_shared_passages([item(0, "What were net sales?", "", long),
                                   item(1, "What was services revenue?", "", inner)], spans={0: (10, 98)}))
    assert c.reasons == (REASON_OVERLAP,)
    # too short to be a quote
    assert find_shared_passages([item(0, "What were net sales?", "", long),
                                 item(1, "What was services revenue?", "", "$78 billion.")]) == []


@pytest.mark.parametrize("seed, located", [(0, False), (1, False), (2, True)])
def test_contained_passages_without_spans_match_a_pairwise_search(seed, located):
    rng = random.Random(seed)
    doc = " ".join(rng.choice(["revenue", "grew", "by", "ten", "percent", "in", "the", "year", "net", "income",
                               "fell", "\u2019s", "\ud800"]) for _ in range(3000))
    items = []
    for i in range(150):
        a = rng.randrange(0, len(doc) - 400)
        items.append(Item(i, rng.choice("AB"), f"Question {i}?", "", doc[a:a + rng.randint(10, 400)]))
    # with ``located``, every other pair gets a span far from all others: only pairs with at
    # least one passage without a span are then compared as text
    spans = {i: (10_000 * i, 10_000 * i + 5) for i in range(0, 150, 2)} if located else None
    got = {k for k, v in links(find_clusters(items, reasons=[REASON_OVERLAP], spans=spans)).items()}
    text = [" ".join(it.passage.split()) for it in items]
    expected = {(i, j) for i in range(150) for j in range(i + 1, 150)
                if items[i].doc_key == items[j].doc_key and text[i] != text[j]
                and not (located and i % 2 == 0 and j % 2 == 0)
                and ((len(text[i]) >= neardup.MIN_OVERLAP_CHARS and text[i] in text[j])
                     or (len(text[j]) >= neardup.MIN_OVERLAP_CHARS and text[j] in text[i]))}
    assert expected and got == expected


def test_unrelated_questions_form_no_cluster():
    qs = ["What was Alpha's revenue in fiscal 2022?", "Who is the chief executive officer of Alpha?",
          "Where is Alpha's headquarters located?", "How many employees did Alpha have?",
          "Which auditor signed Alpha's 2022 report?", "What risks does Alpha see in its supply chain?"]
    assert find_clusters([item(i, q, f"answer {i}") for i, q in enumerate(qs)]) == []


def test_questions_that_differ_only_in_a_number_are_not_similar():
    a, b = "What was Alpha's revenue in fiscal 2021?", "What was Alpha's revenue in fiscal 2022?"
    assert question_similarity(a, b) >= DEFAULT_THRESHOLD
    assert find_clusters([item(0, a, "1"), item(1, b, "2")]) == []


def test_a_question_reworded_with_its_numbers_in_another_order_is_similar():
    """The score ignores word order, and so does the numbers rule: moving "in fiscal 2017" in
    front of "the 10-K" keeps the same question; other numbers still make another one."""
    a = "Based on the 10-K, what was the operating margin of the Retail segment in fiscal 2017?"
    b = "In fiscal 2017, based on the 10-K, what was the operating margin of the Retail segment?"
    c = "In fiscal 2018, based on the 10-K, what was the operating margin of the Retail segment?"
    assert question_similarity(a, b) == 100
    assert [cl.ids for cl in find_clusters([item(0, a, "1"), item(1, b, "2")])] == [(0, 1)]
    assert find_clusters([item(0, a, "1"), item(2, c, "3")]) == []


def test_a_chain_of_similar_questions_is_one_cluster_around_its_centre():
    a = "What was the total revenue of the company?"
    b = "What was the total revenue of the company this year?"
    c_ = "What was the total revenue of the company this fiscal year?"
    assert question_similarity(a, b) >= DEFAULT_THRESHOLD and question_similarity(b, c_) >= DEFAULT_THRESHOLD
    assert question_similarity(a, c_) < DEFAULT_THRESHOLD
    c = only(find_clusters([item(0, a, "x"), item(1, b, "y"), item(2, c_, "z")]))
    assert c.ids == (0, 1, 2)
    assert {(x.a, x.b) for x in c.links} == {(0, 1), (1, 2)}
    assert {(s[0], s[1]) for s in c.scores} == {(0, 1), (0, 2), (1, 2)}  # every pair scored
    assert c.closest(1, k=1)[0][0] in (0, 2)
    assert [i for i, _ in c.closest(0)] == [1, 2]


def test_a_content_word_replaced_by_another_is_a_different_question():
    a = "What was Alpha Corp's net income in fiscal 2022?"
    b = "What was Alpha Corp's operating income in fiscal 2022?"
    assert question_similarity(a, b) >= DEFAULT_THRESHOLD
    assert find_clusters([item(0, a, "1"), item(1, b, "2")]) == []
    # a typo or an inflection is the same word; a word added keeps the question
    c = "What was Alpha Corp's net incomes in fiscal 2022?"
    d = "What was Alpha Corp's total net income in fiscal 2022?"
    assert only(find_clusters([item(0, a, "1"), item(1, c, "2")])).ids == (0, 1)
    assert only(find_clusters([item(0, a, "1"), item(1, d, "2")])).ids == (0, 1)


def test_a_chain_of_links_is_cut_into_stars_around_centres():
    # links only between neighbours (the LLM's, here): 0-1-2-3-4
    items = [item(i, q, str(i)) for i, q in enumerate(
        ["Who founded Alpha?", "Where is Beta based?", "When did Gamma list?", "What does Delta sell?",
         "How large is Epsilon?"])]
    got = [c.ids for c in find_clusters(items, extra_links=[(0, 1), (1, 2), (2, 3), (3, 4)])]
    assert got == [(0, 1, 2), (3, 4)]  # no cluster holds two pairs linked only through others
    for c in find_clusters(items, extra_links=[(0, 1), (1, 2), (2, 3), (3, 4)]):
        centre = max(c.ids, key=lambda i: len(c.linked(i)))
        assert all(i == centre or any(o == centre for o, _, _ in c.linked(i)) for i in c.ids)


def test_a_member_joins_the_star_it_is_most_linked_to():
    # 0 centres the first star (most links) and takes 5; 5 is linked to 1, 6 and 7 of the
    # second star and only to 0 in the first: it moves, and both stars keep their centre
    names = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota"]
    items = [item(i, f"Who audits {w} in {1990 + 7 * i}?", str(i)) for i, w in enumerate(names)]
    links = [(0, 2), (0, 3), (0, 4), (0, 5), (0, 8), (1, 5), (1, 6), (1, 7), (5, 6), (5, 7)]
    clusters = find_clusters(items, extra_links=links)
    assert sorted(c.ids for c in clusters) == [(0, 2, 3, 4, 8), (1, 5, 6, 7)]
    for c in clusters:
        centre = max(c.ids, key=lambda i: len(c.linked(i)))
        assert all(i == centre or any(o == centre for o, _, _ in c.linked(i)) for i in c.ids)


# -- across documents ---------------------------------------------------------------------------


def test_identical_generic_question_in_several_documents_is_raised_at_any_threshold():
    q = "What is the size of the dataset?"
    items = [item(0, q, "10k", doc="paperA"), item(1, q.upper(), "2M", doc="paperB"),
             item(2, q + "  ", "5", doc="paperC"), item(3, "Who wrote paper A?", "Ann", doc="paperA")]
    c = only(find_clusters(items, threshold=100))
    assert c.ids == (0, 1, 2)
    assert c.reasons == (REASON_IDENTICAL_ACROSS,)
    assert c.across_documents and c.doc_keys == ("paperA", "paperB", "paperC")


def test_a_similar_generic_question_across_documents_is_raised():
    items = [item(0, "What is the size of the dataset?", "10k", doc="paperA"),
             item(1, "What is the size of the dataset used?", "2M", doc="paperB")]
    c = only(find_clusters(items))
    assert c.reasons == (REASON_SIMILAR,) and c.across_documents


def test_a_template_naming_each_company_is_not_a_duplicate_across_documents():
    items = []
    for k, (co, ticker) in enumerate([("3M", "MMM"), ("AMD", "AMD"), ("Amazon", "AMZN")]):
        items.append(item(3 * k, f"What was {co}'s total revenue in fiscal 2022?", "x", doc=ticker))
        items.append(item(3 * k + 1, f"Who audits {co}'s financial statements?", "y", doc=ticker))
        items.append(item(3 * k + 2, "What is the main business of the company?", "z", doc=ticker))
    assert question_similarity(items[0].question, items[3].question) >= DEFAULT_THRESHOLD
    c = only(find_clusters(items))  # only the generic question, in all three filings
    assert c.ids == (2, 5, 8) and c.reasons == (REASON_IDENTICAL_ACROSS,)


# -- exclusions, thresholds, ordering -------------------------------------------------------------


def crafted() -> list[Item]:
    """Two clusters (sizes 3 and 2) among unrelated questions."""
    return [
        item(0, "What was the total revenue of the company?", "a"),
        item(1, "Who is the chief executive officer?", "b"),
        item(2, "What was the total revenue of the company this year?", "c"),
        item(3, "Where is the head office?", "d"),
        item(4, "What was the total revenue of the company this fiscal year?", "e"),
        item(5, "Who is the chief executive officer now?", "f"),
        item(6, "How many employees are there?", "g"),
    ]


def test_clusters_are_ordered_largest_first_then_by_lowest_id():
    items = crafted() + [item(7, "How many employees are there in total?", "h")]
    got = [c.ids for c in find_clusters(items)]
    assert got == [(0, 2, 4), (1, 5), (6, 7)]


def test_not_duplicates_are_never_raised_again_even_at_a_lower_threshold():
    first = find_clusters(crafted())
    marked = next(c for c in first if c.ids == (1, 5))
    stored = json.loads(json.dumps(not_duplicate_pairs(marked)))  # as a workspace would keep them
    again = find_clusters(crafted(), not_duplicates=stored)
    assert [c.ids for c in again] == [(0, 2, 4)]
    lower = find_clusters(crafted(), not_duplicates=[tuple(p) for p in stored], threshold=50)
    assert (0, 4) in links(lower)  # the lower threshold does raise more ...
    assert (1, 5) not in links(lower)  # ... but never the pair marked "not duplicates"


def test_excluding_one_link_of_a_chain_keeps_the_rest():
    got = find_clusters(crafted(), not_duplicates=[(2, 0)])  # either order
    assert [c.ids for c in got] == [(1, 5), (2, 4)]  # same size: lowest id first
    got = find_clusters(crafted(), not_duplicates=[(0, 2), (2, 4), (99, 100)])
    assert [c.ids for c in got] == [(1, 5)]


def vocabulary_items(seed: int, n: int = 120) -> list[Item]:
    """Questions from a small vocabulary, so that many pairs are near each other."""
    rng = random.Random(seed)
    words = ["what", "was", "the", "revenue", "income", "of", "alpha", "beta", "in", "fiscal", "year",
             "how", "much", "did", "report", "segment", "total", "net", "operating", "margin"]
    out = []
    for i in range(n):
        q = " ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) + "?"
        out.append(Item(i, rng.choice("AB"), q, rng.choice(["1", "2", "3", ""]), P[i % 10]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_higher_threshold_never_raises_more(seed):
    items = vocabulary_items(seed)
    previous = None
    for t in (50, 60, 70, 80, 85, 90, 95, 100):
        now = raised(items, threshold=t)
        if previous is not None:
            assert set(now) <= set(previous)
            assert all(now[k] <= previous[k] for k in now)
        previous = now
    assert previous is not None


@pytest.mark.parametrize("seed", [0, 3])
def test_the_word_level_screen_never_adds_a_link_and_misses_none_at_the_default(seed):
    items = vocabulary_items(seed, 200)
    exact, screened = links(find_clusters(items, exact=True)), links(find_clusters(items, exact=False))
    assert set(screened) <= set(exact) and all(screened[k] <= exact[k] for k in screened)
    similar = [REASON_SIMILAR]
    assert links(find_clusters(items, exact=False, reasons=similar)) == \
        links(find_clusters(items, exact=True, reasons=similar))


def test_links_agree_with_a_pairwise_loop_for_every_question_rule():
    items = vocabulary_items(5, 80)
    got = links(find_clusters(items, reasons=[REASON_SIMILAR, REASON_IDENTICAL,
                                              REASON_IDENTICAL_ACROSS]))
    expected = set()
    for i, x in enumerate(items):
        for y in items[i + 1:]:
            nx, ny = normalize(x.question), normalize(y.question)
            if nx == ny:
                expected.add((x.id, y.id))
            elif (question_similarity(x.question, y.question) >= DEFAULT_THRESHOLD
                  and neardup.question_numbers(nx) == neardup.question_numbers(ny)
                  and x.doc_key == y.doc_key):
                expected.add((x.id, y.id))
    # vocabulary questions have no document-specific word only by chance: compare within documents
    within = {k for k in got if items[k[0]].doc_key == items[k[1]].doc_key}
    assert within == {k for k in expected if items[k[0]].doc_key == items[k[1]].doc_key}


@pytest.mark.parametrize("threshold", [50, 85, 100])
def test_forcing_the_screen_on_crafted_questions_changes_nothing(threshold):
    assert links(find_clusters(crafted(), threshold=threshold, exact=False)) == \
        links(find_clusters(crafted(), threshold=threshold, exact=True))


def test_large_groups_keep_links_compact():
    q = "What is the size of the dataset?"
    items = [item(i, q, str(i), passage=f"Quote number {i} of the paper, long enough to count as one.")
             for i in range(40)]
    c = only(find_clusters(items))
    assert c.size == 40 > neardup.PAIRWISE_MAX
    assert c.link_count == 40 * 39 // 2 == len(c.scores)   # a clique: every pair is a link
    assert c.closest(7) == [(0, 100.0), (1, 100.0), (2, 100.0)]
    many = [item(i, q, str(i), passage=f"Quote number {i} of the paper, long enough to count as one.")
            for i in range(neardup.CLIQUE_MAX + 6)]
    identical = [REASON_IDENTICAL]  # the similarity pass would link every pair anyway
    c = only(find_clusters(many, reasons=identical))
    assert c.size == len(many) and c.link_count == len(many) - 1  # a star on the lowest id
    assert all(x.a == 0 and x.reasons == (REASON_IDENTICAL,) for x in c.links)
    again = only(find_clusters(list(reversed(many)), reasons=identical))
    assert c == again and hash(c) == hash(again)


def test_reasons_restrict_the_rules_applied():
    quote = "Revenue was $10 million in 2022, up from $8 million in 2021, driven by anvils."
    items = [item(0, "What was the revenue?", "a", quote), item(1, "What drove sales?", "b", quote),
             item(2, "What was the revenue ?", "c")]
    assert [(c.ids, c.reasons) for c in find_clusters(items)] == [((0, 2), (REASON_IDENTICAL,))]
    assert [(c.ids, c.reasons) for c in find_clusters(items, reasons=neardup.REASONS)] == [
        ((0, 1, 2), (REASON_IDENTICAL, REASON_SAME_PASSAGE))]
    assert [c.ids for c in find_clusters(items, reasons=[REASON_SAME_PASSAGE])] == [(0, 1)]
    assert [c.ids for c in find_clusters(items, reasons=[REASON_IDENTICAL])] == [(0, 2)]


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="unique"):
        find_clusters([item(0, "a"), item(0, "b")])
    for t in (0, -5, 100.5):
        with pytest.raises(ValueError, match="threshold"):
            find_clusters([item(0, "a"), item(1, "b")], threshold=t)
    with pytest.raises(ValueError, match="reason"):
        find_clusters([item(0, "a"), item(1, "b")], reasons=["similar answer"])


def test_empty_questions_are_never_similar():
    assert find_clusters([item(0, "?", "x"), item(1, "", "x"), item(2, "...", "x")]) == []


def test_progress_reaches_its_total():
    calls = []
    find_clusters(crafted(), progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] > 0
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


# -- resolving a cluster -------------------------------------------------------------------------


def test_keep_one_rejects_the_others_as_duplicates_of_the_kept_id():
    c = find_clusters(crafted())[0]
    decisions = keep_one(c, 2)
    assert [i for i, _ in decisions] == [0, 4]
    assert all(kept_id_of(r) == 2 and r.startswith("duplicate") for _, r in decisions)
    assert kept_id_of(duplicate_reason(17)) == 17 and kept_id_of("duplicate") is None and kept_id_of(None) is None
    with pytest.raises(KeyError):
        keep_one(c, 1)

    status = {i: Status.UNDECIDED for i in range(7)}
    clusters = find_clusters(crafted())
    assert unresolved(clusters, status.get) == clusters
    for i, _ in decisions:
        status[i] = Status.REJECTED
    assert is_resolved(c, status.get)
    assert unresolved(clusters, status.get) == [clusters[1]]
    assert not is_resolved(clusters[1], lambda i: "accepted")


def test_cluster_index_and_json_report():
    clusters = find_clusters(crafted())
    index = cluster_index(clusters)
    assert index[4].ids == (0, 2, 4) and 3 not in index
    report = json.loads(json.dumps(clusters_json(clusters, {i: Status.UNDECIDED for i in range(7)}.get)))
    first = report["clusters"][0]
    assert first["ids"] == [0, 2, 4] and first["reason"] == REASON_SIMILAR
    assert {tuple(s[:2]) for s in first["scores"]} == {(0, 2), (0, 4), (2, 4)}
    assert all(0 <= s[2] <= 100 for s in first["scores"])
    assert first["resolved"] is False and first["statuses"]["0"] == "undecided"
    assert set(REASONS) >= set(first["reasons"])


# -- from a loaded dataset -----------------------------------------------------------------------


def test_items_and_spans_from_a_dataset_use_the_edited_texts(tiny):
    ds = load("ficha", get_profile("ficha"), [str(tiny)])
    items = items_from_dataset(ds, {2: {"supporting_passage": "Beta sells bells."}, 0: {"question": "Q?"}})
    assert [it.id for it in items] == [0, 1, 2]
    assert items[0].question == "Q?" and items[0].doc_key == "AAA"
    spans = passage_spans(ds, items)
    assert set(spans) == {0, 1, 2}
    text = ds.documents["BBB"].text
    assert text[spans[2][0]:spans[2][1]] == "Beta sells bells."
    assert 2 not in passage_spans(ds)  # unedited, pair 2's passage is not verbatim
    assert find_clusters(items, spans=spans) == []


# -- the calibration set -------------------------------------------------------------------------


def squad_items(shared_data: Path) -> list[Item]:
    rows = [json.loads(line) for line in (shared_data / "squad-mtcb" / "questions.jsonl").open(encoding="utf-8")]
    return [Item(i, r["title"], r["question"], r["answer"], r["supporting_passage"]) for i, r in enumerate(rows)]


def test_on_squad_the_default_raises_few_question_pairs_and_the_screen_loses_none(shared_data):
    items = squad_items(shared_data)
    question_reasons = [REASON_SIMILAR, REASON_SAME_ANSWER, REASON_IDENTICAL, REASON_IDENTICAL_ACROSS]
    exact = find_clusters(items, reasons=question_reasons, exact=True)
    by_similarity = sum(1 for c in exact for x in c.links if {REASON_SIMILAR, REASON_IDENTICAL} & set(x.reasons))
    assert 0 < by_similarity <= math.ceil(len(items) * 0.02)  # the documented calibration: 2 per 100
    screened = find_clusters(items, reasons=question_reasons, exact=False)
    assert links(screened) == links(exact)
    # every same-passage group of SQuAD (several questions per sentence) is found
    by_passage = {}
    for it in items:
        by_passage.setdefault((it.doc_key, " ".join(it.passage.split())), []).append(it.id)
    expected = {tuple(sorted(v)) for v in by_passage.values() if len(v) > 1}
    found = {c.ids for c in find_clusters(items, reasons=[REASON_SAME_PASSAGE])}
    assert found == expected


def test_on_squad_reworded_questions_are_found(shared_data):
    items = squad_items(shared_data)[:400]
    rng = random.Random(7)
    planted = []
    extra = []
    for it in rng.sample(items, 60):
        words = it.question.rstrip("?").split()
        reworded = " ".join(w.upper() if rng.random() < 0.3 else w for w in words if w.lower() != "the") + " ?"
        new = Item(10_000 + len(extra), it.doc_key, reworded, it.answer, it.passage)
        extra.append(new)
        planted.append((it.id, new.id))
    index = cluster_index(find_clusters(items + extra, reasons=[REASON_SIMILAR, REASON_SAME_ANSWER,
                                                                REASON_IDENTICAL]))
    assert all(a in index and b in index[a].ids for a, b in planted)


def _session_with_hard_passages(tiny, tmp_path):
    from mtcb_curate.app.sources import Options, open_session

    session = open_session(Options("ficha", source=[str(tiny)], workspace=str(tmp_path / "ws")))
    session.edit(0, {"supporting_passage": "   "})  # whitespace only: the verdict says empty
    session.edit(2, {"supporting_passage": "Beta sells bells."})  # verbatim once edited
    return session


def _analysis_spans(session, tmp_path):
    """The spans the analysis worker locates passages by: from a verification of every pair."""
    from mtcb_curate.app import analysis_store, analysis_worker
    from mtcb_curate.verify import verify_dataset

    report = verify_dataset(session.dataset, session.edited_texts(), fuzzy=False, count_tokens=False,
                            index=session.corpus_index, pairs=list(session.pairs))
    path = tmp_path / "verdicts.npz"
    analysis_store.write_verdicts(path, report.results, [b"k" * 16] * len(report.results), "corpus")
    passages = [session.view(pid).passage for pid in range(len(session))]
    return analysis_worker.located_spans(analysis_store.VerdictTable.read(path), passages)


def test_the_analysis_s_verbatim_spans_are_what_searching_the_documents_finds(tiny, tmp_path):
    from mtcb_curate.app import clusters as app_clusters

    session = _session_with_hard_passages(tiny, tmp_path)
    located = _analysis_spans(session, tmp_path)
    assert 0 not in located and located[2] is not None
    items = app_clusters.session_items(session)
    assert located == passage_spans(session.dataset, items)
    # A located span is used as given, and a None is "not verbatim": nothing is searched for them.
    assert passage_spans(session.dataset, items, known={1: (7, 9), 2: None}) == {
        **{k: v for k, v in passage_spans(session.dataset, items).items() if k not in (1, 2)}, 1: (7, 9)}


def test_the_analysis_s_verbatim_spans_on_the_real_filings(shared_data, tmp_path):
    from mtcb_curate.app import clusters as app_clusters
    from mtcb_curate.app.sources import Options, open_session

    session = open_session(Options("financebench", source=[str(shared_data)], workspace=str(tmp_path / "ws")))
    items = app_clusters.session_items(session)
    found = passage_spans(session.dataset, items)
    assert found and _analysis_spans(session, tmp_path) == found


def test_a_link_set_groups_again_only_when_the_pairs_or_marks_change(monkeypatch):
    from mtcb_curate.neardup import blocking

    items = [Item(i, "D", q, "a", f"p{i}") for i, q in enumerate(
        ["What was revenue in 2022?", "What was the revenue in 2022?", "Who is the CEO?", "Who is the CEO now?"])]
    search = blocking.search_links(items, threshold=80)
    calls = []
    real = blocking.LinkSet._group
    monkeypatch.setattr(blocking.LinkSet, "_group", lambda self, *a: calls.append(a) or real(self, *a))
    first = search.groups()
    assert [sorted(c.ids) for c in first[0]] and len(calls) == 1
    assert search.groups(keep=range(4)) == first and len(calls) == 1  # every pair is no keep
    assert search.groups(not_duplicates={(0, 1)}) != first and len(calls) == 2
    assert search.groups(not_duplicates={(0, 1)})[0] == search.groups(not_duplicates={(0, 1)})[0]
    assert len(calls) == 2
    assert search.groups(keep=[0, 1, 2]) and len(calls) == 3
    assert search.groups() == first and len(calls) == 4
    # What the caller gets is its own list.
    got = search.groups()
    got[0].clear()
    assert search.groups() == first


def _templated_items(n: int = 60) -> list[Item]:
    """``n`` pairs over three documents asking a few questions again and again (a templated set)."""
    questions = ["What was revenue in 2022?", "What was the revenue in 2022?", "Who is the CEO?",
                 "Who is the CEO now?", "How many employees did it have in 2021?", "What number of employees in 2021?"]
    return [Item(i, f"D{i % 3}", questions[(i * 7) % len(questions)], f"answer {i % 4}",
                 f"passage {i % 9} of document {i % 3} with some words") for i in range(n)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(1, 127)), max_size=60))
def test_links_are_kept_as_one_packed_array_and_merged_to_the_or_of_their_reasons(rows):
    """``_Edges`` keeps 8 bytes a link (one packed int64 array per batch); merging gives each
    pair once (a < b) with the OR of its reason bits, as a dict of the same links does."""
    import numpy as np

    from mtcb_curate.neardup import blocking

    edges = blocking._Edges(31)
    want: dict[tuple[int, int], int] = {}
    for a, b, bits in rows:
        edges.add(np.array([a]), np.array([b]), bits)
        if a != b:
            want[(min(a, b), max(a, b))] = want.get((min(a, b), max(a, b)), 0) | bits
    assert sum(p.nbytes for p in edges.parts) == 8 * len([r for r in rows if r[0] != r[1]])
    a, b, bits = edges.merged(set(REASONS))
    assert {(x, y): z for x, y, z in zip(a.tolist(), b.tolist(), bits.tolist())} == want
    assert list(zip(a.tolist(), b.tolist())) == sorted(want)


def test_a_search_keeps_the_items_it_was_given_not_copies():
    from mtcb_curate.neardup import blocking

    items = _templated_items()
    search = blocking.search_links(items, threshold=80)
    assert all(x is y for x, y in zip(search.items, items))
    assert all(x is y for x, y in zip(search._prep.rows, items))
    again = blocking.LinkSet.from_arrays(items, 80, *search.arrays())
    assert all(x is y for x, y in zip(again.items, items)) and again.groups() == search.groups()


def test_each_distinct_question_and_answer_is_normalized_once(monkeypatch):
    from mtcb_curate.neardup import blocking

    items = _templated_items()
    expected = blocking.search_links(items, threshold=80).groups()
    seen = []
    real = blocking.scored_text
    monkeypatch.setattr(blocking, "scored_text", lambda t: seen.append(t) or real(t))
    got = blocking.search_links(items, threshold=80).groups()
    assert got == expected and got[0]
    assert sorted(seen) == sorted({it.question for it in items} | {it.answer for it in items})


def test_grouping_the_search_s_own_links_gives_what_grouping_read_links_gives():
    from mtcb_curate.neardup import blocking

    items = _templated_items()
    search = blocking.search_links(items, threshold=80, extra_links=[(0, 5)])
    slim = search.for_grouping()
    read = blocking.LinkSet.from_arrays(items, 80, *search.arrays(), extra_links=[(0, 5)])
    for marks in ({}, {"not_duplicates": {(0, 7)}}, {"keep": range(0, 60, 2)}):
        got, want = slim.groups(**marks), read.groups(**marks)
        assert got == want and [c.link_table.tolist() for c in got[0]] == [c.link_table.tolist() for c in want[0]]
    # only what grouping reads is kept of the search's tables
    assert not hasattr(slim._prep, "numbers") and not hasattr(slim._prep, "_content")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(1, 7),
                          st.floats(0, 100, allow_nan=False)), max_size=40))
def test_linked_reads_the_members_links_as_a_scan_of_the_whole_link_table(rows):
    """``Cluster.linked`` (indexed by member once) gives what scanning every link gives."""
    import numpy as np

    from mtcb_curate.neardup.clusters import _LINK_DTYPE, Cluster, _reason_names

    links = {}
    for a, b, bits, score in rows:
        if a != b:
            links[(min(a, b), max(a, b))] = (bits, round(score, 1))
    table = np.array([(a, b, bits, score) for (a, b), (bits, score) in sorted(links.items())], dtype=_LINK_DTYPE)
    ids = tuple(sorted({i for ab in links for i in ab})) or (0, 1)
    cluster = Cluster(ids, ("similar",), ("doc",), table)
    for pid in range(14):
        scan = sorted(((b if a == pid else a, _reason_names(bits), score)
                       for (a, b), (bits, score) in links.items() if pid in (a, b)), key=lambda r: (-r[2], r[0]))
        assert cluster.linked(pid) == scan



def test_the_content_word_keys_looked_up_a_block_at_a_time_find_the_same_links(monkeypatch):
    """``similar_indexed`` looks the keys up ``_KEY_BLOCK`` questions at a time: blocks of a
    few questions find the links one block of all of them finds."""
    import numpy as np

    from mtcb_curate.neardup import blocking

    items = _templated_items(90) + [Item(90 + k, f"D{k % 2}", q, "", "") for k, q in enumerate(
        ["What was the total revenue of the segment in fiscal 2022?", "What was total segment revenue in fiscal 2022?",
         "Which segment had the highest revenue in fiscal 2022?", "What was the revenue of the segment in 2022?"])]
    whole = blocking.search_links(items, threshold=80)
    monkeypatch.setattr(blocking, "_KEY_BLOCK", 7)
    blocks = blocking.search_links(items, threshold=80)
    assert all(np.array_equal(x, y) for x, y in zip(whole.arrays(), blocks.arrays()))
    assert len(whole.arrays()[0]) and whole.groups() == blocks.groups()


def test_grouping_holds_the_links_in_narrow_types_and_no_texts():
    """``for_grouping`` lets the items' texts go and holds positions as int32 and reason bits
    as int8: the groups are those of the same links read back as int64 arrays."""
    import numpy as np

    from mtcb_curate.neardup import blocking

    items = _templated_items()
    search = blocking.search_links(items, threshold=80, extra_links=[(0, 5)])
    slim = search.for_grouping()
    assert slim.items == () and slim._prep.rows == []
    assert [x.dtype for x in slim.arrays()] == [np.int32, np.int32, np.int8]
    wide = [x.astype(np.int64) for x in search.arrays()]
    read = blocking.LinkSet.from_arrays(items, 80, *wide, extra_links=[(0, 5)])
    for marks in ({}, {"not_duplicates": {(0, 7), (3, 9)}}, {"keep": range(1, 60, 3)}):
        got, want = slim.groups(**marks), read.groups(**marks)
        assert got == want and [c.link_table.tolist() for c in got[0]] == [c.link_table.tolist() for c in want[0]]
