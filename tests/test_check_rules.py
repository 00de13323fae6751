"""Each check's rules on fixture sets of true and false cases drawn from real question styles
(``tests/fixtures/checks/``: SQuAD and FinanceBench questions as written, human questions about
novels in the NarrativeQA/GutenQA manner, LLM-written MTCB questions). ``docs/checks.md`` writes
the rules down; ``benchmarks/bench_checks.py`` reports precision and recall on these sets and on
the shared data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtcb_curate.dataset.question_form import form_problem
from mtcb_curate.evidence import FuzzyParaphraser, support
from mtcb_curate.evidence.paraphrase import default_paraphraser
from mtcb_curate.neardup import find_clusters

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "checks"


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def form_class(question: str) -> str:
    """The class of ``form_problem``'s reason: ok, yes/no, trivial, not a question, typo, empty."""
    p = form_problem(question)
    if p is None:
        return "ok"
    for word in ("empty", "yes/no", "trivial", "not a question", "typo"):
        if word in p[1]:
            return word
    return p[1]


QF = rows("question_form.jsonl")


@pytest.mark.parametrize("row", QF, ids=[f"{r['label']}:{r['question'][:40]}" for r in QF])
def test_question_form_rules(row):
    assert form_class(row["question"]) == row["label"], form_problem(row["question"])


def test_question_form_fixture_has_true_and_false_cases_per_rule():
    labels = [r["label"] for r in QF]
    assert labels.count("ok") >= 20 and all(labels.count(c) >= 4 for c in ("yes/no", "trivial", "not a question"))


def test_question_form_reasons_name_the_real_cause():
    assert "starts with \"is\"" in form_problem("Is the packet header long ")[1]
    assert "unfinished statement" in form_problem("Telnet was sold to ")[1] and '"to"' in form_problem("Telnet was sold to ")[1]
    # a question with a wh- word is never "no question word"
    assert form_problem("The business allowed for private companies to do what ") is None
    assert "first word" in form_problem("What is the first word of the passage?")[1]


def test_a_question_about_which_company_the_text_concerns_is_trivial_but_a_named_role_is_a_fact():
    # Written by a 1.5B model in numbered mode on a Corning filing (docs/llm.md).
    assert "trivial" in form_problem("What is the name of the company mentioned in this document window?")[1]
    assert "trivial" in form_problem("Which company is discussed in this passage?")[1]
    assert "trivial" in form_problem("What is the name of the company in the document?")[1]
    assert "trivial" in form_problem("What is the name of the company in this 10K report?")[1]
    assert form_problem("What is the name of the company in the filing that supplies glass substrates?") is None
    assert form_problem("Which company is mentioned in the filing as a competitor?") is None
    assert form_problem("Which company does the filing name as Corning's largest customer?") is None


ANSWERABLE = rows("answerable_novel.jsonl") + rows("answerable_filings.jsonl")


def _needs_model() -> None:
    if default_paraphraser().name != "wordllama":
        pytest.skip("wordllama (the dense/test extra) is not installed: the fallback is tested below")


@pytest.mark.parametrize("row", ANSWERABLE, ids=[f"{r['label']}:{r['answer'][:30]}" for r in ANSWERABLE])
def test_answerable_rules(row):
    _needs_model()
    s = support(row["answer"], row["supporting_passage"], row["question"])
    assert (not s.supported) == (row["label"] == "unsupported"), s.reason()
    if not s.supported:
        assert s.missing  # the warning names what is missing


@pytest.mark.parametrize("row", [r for r in ANSWERABLE if r["label"] == "unsupported"],
                         ids=lambda r: r["answer"][:30])
def test_the_fallback_still_warns_on_every_unsupported_answer(row):
    s = support(row["answer"], row["supporting_passage"], row["question"], paraphraser=FuzzyParaphraser())
    assert not s.supported and s.method in ("stems", "stems+fuzzy")


DUPS = rows("duplicates.jsonl")


@pytest.mark.parametrize("row", DUPS, ids=[f"{'dup' if r['duplicate'] else 'distinct'}:{r['question_a'][:40]}"
                                           for r in DUPS])
def test_duplicates_rules(row):
    k = DUPS.index(row)
    items = [(0, "D", row["question_a"], row["answer_a"] or f"answer a{k}", "passage one"),
             (1, "D", row["question_b"], row["answer_b"] or f"answer b{k}", "passage two")]
    assert bool(find_clusters(items)) == row["duplicate"]


def test_distinct_questions_on_one_passage_are_a_shared_group_not_a_cluster():
    from mtcb_curate.neardup import find_shared_passages

    passage = "Kublai moved the Mongol capital to Khanbaliq in 1264."
    items = [(0, "D", "Where did Kublai move the Mongol capital to?", "Khanbaliq", passage),
             (1, "D", "When did Kublai move the Mongol capital?", "1264", passage)]
    assert find_clusters(items) == []
    assert [g.ids for g in find_shared_passages(items)] == [(0, 1)]


# -- links ------------------------------------------------------------------------------------------

def _links_source(tmp_path, chunk_index):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from support import write_source

    before = " ".join(f"word{i} filler text about nothing in particular." for i in range(1000))
    after = " ".join(f"word{i} more filler text." for i in range(100))
    doc = before + " The company\u2019s auditor is Smith & Co. of Dayton. " + after  # two windows
    # the passage with a straight apostrophe: located by normalization only, in window 1
    row = {"question": "Who is the company's auditor?", "answer": "Smith & Co.",
           "supporting_passage": "The company's auditor is Smith & Co. of Dayton.", "ticker": "AAA",
           "chunk_index": chunk_index}
    return write_source(tmp_path / f"src{chunk_index}", corpus=[{"ticker": "AAA", "text": doc}], questions=[row])


@pytest.mark.parametrize("chunk_index,expected", [(0, "FAIL  links"), (1, "ok    links"), (None, "WARN  links")])
def test_links_judges_the_window_of_a_passage_located_by_normalization(tmp_path, chunk_index, expected):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from support import call_main

    r = call_main("check", "ficha", "--source", _links_source(tmp_path, chunk_index))
    assert expected in r.stdout, r.stdout
    if chunk_index == 0:
        assert "chunk 0's window does not contain the passage" in r.stdout or "window" in r.stdout
