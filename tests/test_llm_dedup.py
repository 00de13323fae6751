"""Semantic dedup by an LLM: batches of 50, a final pass, answers that cannot be used never drop
a batch, clusters for the curator, cancel and the cache; against the loopback chat server."""

from __future__ import annotations

import re
import threading

import pytest

from llmfake import completion
from test_llm_client import make_config

from mtcb_curate.llm import dedup
from mtcb_curate.llm.cache import ResponseCache
from mtcb_curate.llm.client import ChatClient
from mtcb_curate.llm.dedup import DedupItem, InvalidKeepAnswer, parse_keep_answer, semantic_dedup
from mtcb_curate.llm.estimate import estimate_dedup
from mtcb_curate.llm.prompts import dedup_messages


def numbered(body: dict) -> list[tuple[int, str]]:
    """The numbered questions of a dedup request."""
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^\[(\d+)\] (.*)$", body["messages"][1]["content"], re.M)]


def topic_model(groups: bool = True):
    """A fake LLM that knows the truth: questions sharing a 'topic-N' tag are duplicates; it keeps
    the first of each topic."""
    def answer(body):
        first: dict[str, int] = {}
        members: dict[str, list[int]] = {}
        for i, q in numbered(body):
            t = re.search(r"topic-(\d+)", q).group(1)
            first.setdefault(t, i)
            members.setdefault(t, []).append(i)
        out = {"indices": sorted(first.values())}
        if groups:
            out["groups"] = [m for m in members.values() if len(m) > 1]
        return out
    return answer


def items_for(topics: list[int]) -> list[DedupItem]:
    return [DedupItem(100 + i, f"What is the value of topic-{t} in report {i}?", f"answer {i}") for i, t in enumerate(topics)]


def test_an_answer_with_groups_becomes_clusters(fake_llm):
    fake_llm.default = topic_model()
    items = items_for([1, 2, 1, 3, 2, 1])
    res = semantic_dedup(ChatClient(make_config(fake_llm)), items)
    assert res.kept == [100, 101, 103] and res.dropped == [102, 104, 105]
    assert [(c.keep, c.duplicates, c.basis, c.stages) for c in res.clusters] == [
        (100, (102, 105), "llm", ("batch 1/1",)), (101, (104,), "llm", ("batch 1/1",))]
    assert res.clusters[0].members == (100, 102, 105)
    assert res.reports == [] and res.calls == 1 and len(fake_llm.requests) == 1  # no final pass for one batch


def test_without_groups_each_dropped_question_joins_its_nearest_kept_one(fake_llm):
    items = [DedupItem(1, "What was Alpha's revenue in 2022?"), DedupItem(2, "Where is Beta headquartered?"),
             DedupItem(3, "Where is the headquarters of Beta located?"), DedupItem(4, "In 2022, what revenue did Alpha report?")]
    fake_llm.default = {"indices": [0, 1]}
    res = semantic_dedup(ChatClient(make_config(fake_llm)), items)
    assert [(c.keep, c.duplicates, c.basis) for c in res.clusters] == [(1, (4,), "rapidfuzz"), (2, (3,), "rapidfuzz")]


@pytest.mark.parametrize("reply, why", [
    ({"indices": []}, "empty"),
    ({"indices": [0, 1, 9]}, "outside 0-3"),
    ({"indices": ["0", "1"]}, "not a question number"),
    ({"indices": [True, 1]}, "not a question number"),
    ({"indices": 2}, "not a list"),
    ({"keep_these": [0]}, 'no "indices"'),
    ({"groups": [[0, 1]], "unique_indices": [7]}, "outside 0-3"),
    ("I would keep the first two.", "JSON"),
    (completion(None, refusal="No."), "refused"),
    (completion(""), "empty reply"),
])
def test_an_unusable_answer_keeps_the_whole_batch_and_says_so(fake_llm, reply, why):
    fake_llm.default = reply
    items = items_for([1, 1, 2, 2])
    res = semantic_dedup(ChatClient(make_config(fake_llm)), items)
    assert res.kept == [it.id for it in items] and res.dropped == [] and res.clusters == []
    (report,) = res.reports
    assert report.stage == "batch 1/1" and "kept all 4 questions" in report.message and why in report.message


def test_batches_of_50_then_a_final_pass_over_the_survivors(fake_llm):
    # 120 questions: topic-0 appears in every batch (ids 100, 160, 119), so only the final pass can
    # see them together; 105 and 119 also meet in batch 1.
    topics = list(range(1, 121))
    topics[0] = topics[60] = topics[110] = 0
    topics[5] = 0
    fake_llm.default = topic_model()
    items = items_for(topics)
    res = semantic_dedup(ChatClient(make_config(fake_llm)), items)
    sizes = [len(numbered(b)) for b in fake_llm.requests]
    assert sizes == [50, 50, 20, 120 - 1]  # the final pass sees only the 119 survivors
    assert res.calls == 4
    (cluster,) = res.clusters
    assert cluster.keep == 100 and cluster.duplicates == (105, 160, 210)
    assert cluster.stages == ("batch 1/3", "final pass") and cluster.basis == "llm"
    assert res.dropped == [105, 160, 210] and len(res.kept) == 117


def test_a_batch_kept_whole_does_not_stop_the_others(fake_llm):
    topics = [i // 2 for i in range(120)]  # pairs of duplicates everywhere
    model = topic_model()
    fake_llm.script = [model, {"indices": []}, model, model]
    res = semantic_dedup(ChatClient(make_config(fake_llm)), items_for(topics))
    assert [str(r) for r in res.reports] == ["batch 2/3: answer not usable (the keep-list is empty); kept all 50 questions"]
    # Batches 1 and 3 drop their duplicates; batch 2 (ids 150-199) is kept whole, and only the
    # final pass, which sees all its 50 questions among the survivors, finds its duplicates.
    stage_of = {d: c.stages for c in res.clusters for d in c.duplicates}
    assert len(res.dropped) == 25 + 25 + 10
    assert all(stage_of[i] == ("final pass",) for i in res.dropped if 150 <= i < 200)
    assert all(stage_of[i] != ("final pass",) for i in res.dropped if not 150 <= i < 200)


def test_malformed_groups_next_to_valid_indices_are_ignored_with_a_report(fake_llm):
    fake_llm.default = {"indices": [0, 2], "groups": "0 and 1"}
    items = items_for([1, 1, 2])
    res = semantic_dedup(ChatClient(make_config(fake_llm)), items)
    assert res.dropped == [101] and res.clusters[0].basis == "rapidfuzz"
    assert "groups ignored" in res.reports[0].message


def test_cancel_mid_run_keeps_everything_not_yet_judged(fake_llm):
    cancel = threading.Event()
    fake_llm.default = topic_model()
    progress: list[tuple[int, int]] = []

    def cancel_after_first(done, total):
        progress.append((done, total))
        cancel.set()

    res = semantic_dedup(ChatClient(make_config(fake_llm)), items_for([i // 2 for i in range(120)]), cancel=cancel,
                         on_progress=cancel_after_first)
    assert res.cancelled and len(fake_llm.requests) == 1 and progress == [(1, 4)]
    assert len(res.dropped) == 25 and all(i < 150 for i in res.dropped)
    assert "cancelled after 1 of 4 calls" in res.reports[-1].message


def test_a_rerun_is_answered_from_the_cache(fake_llm, tmp_path):
    fake_llm.default = topic_model()
    items = items_for([i // 3 for i in range(75)])
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        first = semantic_dedup(ChatClient(make_config(fake_llm), cache), items)
        n = len(fake_llm.requests)
        second = semantic_dedup(ChatClient(make_config(fake_llm), cache), items)
        assert estimate_dedup(items, make_config(fake_llm), client=ChatClient(make_config(fake_llm), cache)).cached_calls == 2
    assert len(fake_llm.requests) == n == 3
    assert second.cached_calls == second.calls == 3
    assert (second.kept, second.clusters) == (first.kept, first.clusters)


def test_parse_keep_answer_accepts_every_mtcb_form():
    assert parse_keep_answer({"indices": [2, 0, 0]}, 3).keep == (0, 2)
    a = parse_keep_answer({"groups": [[1, 3], [2, 4]], "unique_indices": [0]}, 5)
    assert a.keep == (0, 1, 2) and a.groups == ((1, 3), (2, 4))
    assert parse_keep_answer([0, 1], 2).keep == (0, 1)
    assert parse_keep_answer({"keep": [1]}, 2).keep == (1,)
    for bad in ({"indices": []}, {"indices": [3]}, {"indices": [-1]}, {"indices": [0.0]}, "0,1", None, {"groups": [[5]]}):
        with pytest.raises(InvalidKeepAnswer):
            parse_keep_answer(bad, 3)


def test_repeated_ids_and_tiny_batches_are_refused():
    with pytest.raises(ValueError):
        semantic_dedup(None, [DedupItem(1, "a"), DedupItem(1, "b")])
    with pytest.raises(ValueError):
        semantic_dedup(None, [DedupItem(1, "a")], batch_size=1)


def test_nothing_to_compare_sends_nothing(fake_llm):
    res = semantic_dedup(ChatClient(make_config(fake_llm)), [DedupItem(1, "Only one?")])
    assert (res.kept, res.calls, fake_llm.requests) == ([1], 0, [])


def test_the_dedup_prompt_shows_answers_and_documents_and_asks_for_indices():
    system, user = (m["content"] for m in dedup_messages(["What was revenue?", "What was revenue?"],
                                                          ["$1", "$2"], ["AAA", "BBB"]))
    assert '"indices"' in system and '"groups"' in system
    assert "[0] What was revenue?  (document: AAA)  (answer: $1)" in user
    assert "[1] What was revenue?  (document: BBB)  (answer: $2)" in user
    # One document: its key is left out; no answers: none shown.
    req = dedup._request([DedupItem(1, "Q1?", doc_key="A"), DedupItem(2, "Q2?", doc_key="A")], 0.0)
    assert "document:" not in req.messages[1]["content"] and "answer:" not in req.messages[1]["content"]


def test_estimate_dedup_counts_batches_and_the_final_pass(fake_llm):
    est = estimate_dedup(items_for(list(range(120))), make_config(fake_llm))
    assert est.calls == 4 and est.max_calls == 4 and est.input_tokens > 0 and not est.needs_confirmation
    assert estimate_dedup(items_for(list(range(40))), make_config(fake_llm)).calls == 1
