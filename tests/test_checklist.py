"""The quality checklist (``mtcb_curate.checks``): a passing and a failing fixture per check.

Each dataset is crafted in ``tmp_path`` (ficha columns: corpus ``ticker, company, text``;
questions ``question, answer, supporting_passage, ticker, company, chunk_index``) and opened
either with a workspace (``open_session``, pairs decided through the session) or without one
(``command_session`` with ``--source`` only: every pair accepted, ``reviewed`` skipped).
``loads`` writes and reloads the publish layout (about 0.5-1 s), so only the tests about it
run it; the others pass ``loads=False``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_jsonl  # noqa: E402

from mtcb_curate import checks as checklist  # noqa: E402
from mtcb_curate.checks import CHECK_IDS, Limits, answer_overlap, content_words, run_checklist  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.app.sources import Options, command_session, open_session  # noqa: E402
from mtcb_curate.verify import snap, verify_dataset  # noqa: E402

# -- a clean dataset: every check passes on it ---------------------------------------------------

ALPHA = ("Alpha Corp makes industrial anvils in Ohio and Texas.\n"
         "Total revenue was $10 million in fiscal 2022, up from $8 million.\n")
BETA = ("Beta Inc sells brass bells through retail stores.\n"
        "Its best year was 2021, when net income reached $3 million.\n")


def corpus() -> list[dict]:
    return [{"ticker": "AAA", "company": "Alpha", "text": ALPHA},
            {"ticker": "BBB", "company": "Beta", "text": BETA}]


def q(question: str, answer: str, passage: str, ticker: str = "AAA", chunk_index: int | None = None) -> dict:
    company = {"AAA": "Alpha", "BBB": "Beta"}.get(ticker, ticker)
    return {"question": question, "answer": answer, "supporting_passage": passage, "ticker": ticker,
            "company": company, "chunk_index": chunk_index}


def questions() -> list[dict]:
    return [
        q("What does Alpha Corp make in Ohio and Texas?", "Industrial anvils",
          "Alpha Corp makes industrial anvils in Ohio and Texas.", chunk_index=0),
        q("What was Alpha's total revenue in fiscal 2022?", "$10 million",
          "Total revenue was $10 million in fiscal 2022, up from $8 million.", chunk_index=0),
        q("Through which channel does Beta Inc sell its brass bells?", "Retail stores",
          "Beta Inc sells brass bells through retail stores.", "BBB", chunk_index=0),
        q("How much net income did Beta report for 2021?", "$3 million",
          "Its best year was 2021, when net income reached $3 million.", "BBB", chunk_index=0),
    ]


def write_source(folder: Path, corpus_rows: list[dict], question_rows: list[dict]) -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus_rows)
    write_jsonl(folder / "questions.jsonl", question_rows)
    return folder


@pytest.fixture
def open_ws(tmp_path):
    """``open_ws(corpus, questions, accept=...)`` -> a session with a workspace in tmp_path/"ws".

    ``accept`` is "all" (default) or a list of pair ids to accept; the others stay undecided.
    Workspaces are closed at teardown.
    """
    sessions = []

    def make(corpus_rows=None, question_rows=None, accept="all", name="src"):
        src = write_source(tmp_path / name, corpus() if corpus_rows is None else corpus_rows,
                           questions() if question_rows is None else question_rows)
        session = open_session(Options("ficha", source=[str(src)], workspace=tmp_path / f"ws-{name}"))
        sessions.append(session)
        ids = range(len(session)) if accept == "all" else accept
        for pid in ids:
            session.decide(pid, Status.ACCEPTED)
        return session

    yield make
    for s in sessions:
        s.workspace.close()


def check(session, check_id: str, **kw):
    kw.setdefault("loads", False)
    return run_checklist(session, **kw).get(check_id)


def no_workspace_report(tmp_path: Path, corpus_rows, question_rows, **kw):
    """The checklist as ``mtcb-curate check ficha --source DIR`` runs it (no workspace)."""
    src = write_source(tmp_path / "nows", corpus_rows, question_rows)
    kw.setdefault("loads", False)
    with command_session(Options("ficha", source=[str(src)])) as (session, has_ws):
        assert has_ws is False
        return run_checklist(session, has_workspace=has_ws, **kw)


# -- the clean dataset ----------------------------------------------------------------------------

def test_clean_dataset_passes_every_check_with_a_workspace(open_ws):
    report = run_checklist(open_ws(), loads=True)
    assert [c.id for c in report.checks] == list(CHECK_IDS)
    assert {c.id: c.status for c in report.checks} == {i: "pass" for i in CHECK_IDS}, report.to_markdown()
    assert report.passed and report.has_workspace
    assert report.accepted == [0, 1, 2, 3]
    assert all(c.pairs == [] and c.reasons == {} for c in report.checks)


def test_no_workspace_accepts_every_pair_and_skips_reviewed(tmp_path):
    report = no_workspace_report(tmp_path, corpus(), questions())
    assert report.has_workspace is False
    assert report.accepted == [0, 1, 2, 3]
    reviewed = report.get("reviewed")
    assert reviewed.status == "skip" and "no workspace" in reviewed.message
    assert report.get("loads").status == "skip"  # loads=False
    assert report.passed  # skips do not block
    assert all(c.status == "pass" for c in report.checks if c.id not in ("reviewed", "loads"))


def test_progress_is_called_with_every_check_id_in_order(open_ws):
    seen = []
    run_checklist(open_ws(), loads=False, progress=seen.append)
    assert seen == list(CHECK_IDS)


def test_get_unknown_check_raises(open_ws):
    with pytest.raises(KeyError):
        run_checklist(open_ws(), loads=False).get("nope")


# -- verbatim -------------------------------------------------------------------------------------

def test_verbatim_fails_on_normalized_missing_and_empty_passages(open_ws):
    rows = questions()
    rows[1]["supporting_passage"] = "Total revenue was $10 million in  fiscal 2022, up from $8 million."  # 2 spaces
    rows[2]["supporting_passage"] = "Beta Inc rents golden trumpets to orchestras."  # not in the document
    rows[3]["supporting_passage"] = "   "
    session = open_ws(question_rows=rows)
    c = check(session, "verbatim")
    assert c.status == "fail"
    assert c.pairs == [1, 2, 3] and c.failing == {1, 2, 3}
    assert c.reasons[1].startswith("normalized") and "snap" in c.reasons[1]
    assert "not found verbatim" in c.reasons[2]
    assert "empty passage" in c.reasons[3]
    assert "1 of 4" in c.message


def test_verbatim_passes_after_snap_and_reject(open_ws):
    rows = questions()
    rows[1]["supporting_passage"] = "Total revenue was $10 million in  fiscal 2022, up from $8 million."
    rows[2]["supporting_passage"] = "Beta Inc rents golden trumpets to orchestras."
    session = open_ws(question_rows=rows)
    assert check(session, "verbatim").status == "fail"
    ds = session.dataset
    report = verify_dataset(ds, {}, fuzzy=False)
    r1 = next(r for r in report.results if r.id == 1)
    assert session.edit(1, {"supporting_passage": snap(ds.documents["AAA"].text, r1)}, via="snap")
    session.decide(2, Status.REJECTED, "not verbatim")
    c = check(session, "verbatim")
    assert (c.status, c.pairs) == ("pass", [])
    assert "3 of 3" in c.message


def test_an_unknown_document_key_is_one_links_failure(tmp_path):
    rows = questions()
    rows[0]["ticker"] = "ZZZ"
    report = no_workspace_report(tmp_path, corpus(), rows)
    assert report.get("verbatim").pairs == [] and report.get("unique_passage").pairs == []
    c = report.get("links")
    assert c.status == "fail" and c.pairs == [0]
    assert "document key 'ZZZ' matches no corpus row" in c.reasons[0]


def test_a_passage_verbatim_in_another_document_is_one_links_failure(tmp_path):
    rows = questions()
    rows[2]["ticker"], rows[2]["company"] = "AAA", "Alpha"  # Beta's passage linked to Alpha
    report = no_workspace_report(tmp_path, corpus(), rows)
    flagged = {c.id for c in report.checks if 2 in c.reasons}
    assert flagged == {"links"}, flagged
    why = report.get("links").reasons[2]
    assert "not in its linked document 'AAA' but verbatim in 'BBB'" in why
    assert "1 passage(s) in another document than their link" in report.get("verbatim").message


def test_verbatim_only_looks_at_accepted_pairs(open_ws):
    rows = questions()
    rows[3]["supporting_passage"] = "not in the filing at all, anywhere"
    session = open_ws(question_rows=rows, accept=[0, 1, 2])
    session.decide(3, Status.REJECTED, "not verbatim")
    assert check(session, "verbatim").status == "pass"


# -- unique_passage -------------------------------------------------------------------------------

def test_unique_passage_warns_when_the_passage_is_in_another_document(open_ws):
    docs = corpus()
    docs[1]["text"] = BETA + "Total revenue was $10 million in fiscal 2022, up from $8 million.\n"
    session = open_ws(corpus_rows=docs)
    c = check(session, "unique_passage")
    assert c.status == "warn" and c.pairs == [1] and c.failing == set()
    assert "also in 1 other document(s): BBB" in c.reasons[1]


def test_unique_passage_passes_on_distinct_documents(open_ws):
    assert check(open_ws(), "unique_passage").status == "pass"


# -- duplicates -----------------------------------------------------------------------------------

def duplicate_corpus() -> list[dict]:
    docs = corpus()
    docs[0]["text"] = ALPHA + "Alpha also sells forged hammers to builders in Ohio.\n"
    return docs


def duplicate_rows() -> list[dict]:
    rows = questions()
    # Pair 4 asks pair 1's question again (another passage, so only the question links them).
    rows.append(q("What was Alpha's total revenue in fiscal 2022?", "$10 million",
                  "Alpha also sells forged hammers to builders in Ohio.", chunk_index=0))
    return rows


def test_duplicates_fail_on_identical_questions(open_ws):
    session = open_ws(corpus_rows=duplicate_corpus(), question_rows=duplicate_rows())
    c = check(session, "duplicates")
    assert c.status == "fail"
    assert c.pairs == [1, 4] and c.failing == {1, 4}
    assert "identical question" in c.reasons[1] and "#4" in c.reasons[1]
    assert "#1" in c.reasons[4]
    assert "1 unresolved" in c.message


def test_duplicates_cleared_by_not_duplicates_mark(open_ws):
    session = open_ws(corpus_rows=duplicate_corpus(), question_rows=duplicate_rows())
    assert session.mark_not_duplicates([1, 4])
    c = check(session, "duplicates")
    assert (c.status, c.pairs) == ("pass", [])


def test_duplicates_resolved_by_keep_one(open_ws):
    session = open_ws(corpus_rows=duplicate_corpus(), question_rows=duplicate_rows())
    assert session.keep_one(1, [1, 4]) == [4]
    report = run_checklist(session, loads=False)
    assert report.get("duplicates").status == "pass"
    assert 4 not in report.accepted and 1 in report.accepted
    assert report.get("reviewed").status == "pass"  # a rejection is a decision


def test_the_same_passage_with_different_questions_warns_in_shared_passage_not_duplicates(tmp_path):
    # Changed with shared_passage: shared evidence no longer fails ``duplicates``.
    rows = questions()
    rows.append(q("Which products does the Alpha company manufacture?", "Industrial anvils",
                  "Alpha Corp makes industrial anvils in Ohio and Texas."))
    report = no_workspace_report(tmp_path, corpus(), rows)
    assert report.get("duplicates").status == "pass"
    c = report.get("shared_passage")
    assert c.status == "warn" and c.pairs == [0, 4] and not c.failing
    assert "same passage with #4" in c.reasons[0]


# -- passage_length -------------------------------------------------------------------------------

LONG_SENTENCE = ("Gamma Holdings reported that segment revenue from its northern industrial division rose "
                 "because of higher volume and favorable pricing across every region it serves. ")


def test_passage_length_fails_above_twice_the_maximum_and_warns_below_the_minimum(open_ws):
    long_text = LONG_SENTENCE * 9  # about 1,500 characters
    docs = corpus() + [{"ticker": "CCC", "company": "Gamma", "text": long_text}]
    rows = questions()
    rows[2]["supporting_passage"] = "Beta Inc sells brass bells"  # 26 characters
    rows.append(q("Why did Gamma Holdings segment revenue rise in its northern division?",
                  "Higher volume and favorable pricing", long_text.strip(), "CCC"))
    session = open_ws(corpus_rows=docs, question_rows=rows)
    c = check(session, "passage_length")
    assert c.status == "fail"
    assert c.pairs == [2, 4] and c.failing == {4}
    assert "under the minimum 30" in c.reasons[2] and "26 characters" in c.reasons[2]
    assert "over twice the maximum 600" in c.reasons[4] and "tokens" in c.reasons[4]


def test_passage_length_warns_between_max_and_twice_max(open_ws):
    mid_text = LONG_SENTENCE * 4  # about 680 characters
    docs = corpus() + [{"ticker": "CCC", "company": "Gamma", "text": mid_text}]
    rows = questions() + [q("Why did Gamma Holdings segment revenue rise in its northern division?",
                            "Higher volume and favorable pricing", mid_text.strip(), "CCC")]
    c = check(open_ws(corpus_rows=docs, question_rows=rows), "passage_length")
    assert c.status == "warn" and c.pairs == [4] and c.failing == set()
    assert "over the maximum 600" in c.reasons[4]


def test_passage_length_passes_within_bounds_and_honours_limits(open_ws):
    session = open_ws()
    assert check(session, "passage_length").status == "pass"
    # Pair 2's passage has 49 characters: under a minimum of 50.
    c = check(session, "passage_length", limits=Limits(min_chars=50, max_chars=60))
    assert c.status == "warn" and 2 in c.pairs and "under the minimum 50" in c.reasons[2]
    c = check(session, "passage_length", limits=Limits(min_chars=5, max_chars=25))
    assert c.status == "fail" and c.failing == {0, 1, 3}


def test_limits_for_profile_reads_extras_then_table():
    assert Limits.for_profile({}) == Limits(checklist.MIN_PASSAGE_CHARS, checklist.MAX_PASSAGE_CHARS)
    assert Limits.for_profile({"max_passage_chars": "400"}, {"min_passage_chars": 20}) == Limits(20, 400)
    assert Limits.for_profile({"max_passage_chars": "400"}, {"max_passage_chars": 500}).max_chars == 500


# -- answerable -----------------------------------------------------------------------------------

def test_answerable_warns_when_the_answer_is_not_in_the_passage(open_ws):
    rows = questions()
    rows[3]["answer"] = "Forty-two purple elephants"
    c = check(open_ws(question_rows=rows), "answerable")
    assert c.status == "warn" and c.pairs == [3] and c.failing == set()
    assert "0% of the answer's words are in the passage" in c.reasons[3] and "purple" in c.reasons[3]


def test_answerable_passes_on_numbers_and_stopword_answers(open_ws):
    rows = questions()
    rows[1]["answer"] = "10"  # "$10" in the passage counts
    rows[3]["answer"] = "It was"  # stopwords only: nothing to judge
    assert check(open_ws(question_rows=rows), "answerable").status == "pass"
    assert answer_overlap("1,234.5 dollars", "costs were $1234.5 dollars") == 1.0
    assert answer_overlap("the", "anything") is None
    assert content_words("The revenue of 1,000") == {"revenue", "1000"}


# -- question_form --------------------------------------------------------------------------------

def test_question_form_fails_on_empty_and_warns_on_yes_no_trivial_and_non_questions(open_ws):
    rows = questions()
    rows[0]["question"] = "   "
    rows[1]["question"] = "Did Alpha's total revenue exceed $9 million in fiscal 2022?"
    rows[2]["question"] = "What is the first word of the passage?"
    rows[3]["question"] = "Beta net income figure reported for 2021"
    c = check(open_ws(question_rows=rows), "question_form")
    assert c.status == "fail"
    assert c.pairs == [0, 1, 2, 3] and c.failing == {0}
    assert c.reasons[0] == "empty question"
    assert "yes/no" in c.reasons[1] and '"did"' in c.reasons[1]
    assert "trivial" in c.reasons[2] and "first word" in c.reasons[2]
    assert "not a question" in c.reasons[3]


def test_question_form_warns_without_failing(open_ws):
    rows = questions()
    rows[0]["question"] = "What does Alpha make?"  # 4 words is fine
    rows[2]["question"] = "What is revenue?"  # three words, nothing that singles out a fact
    rows[1]["question"] = "Beta's channel?"  # two words, but a name
    c = check(open_ws(question_rows=rows), "question_form")
    assert c.status == "warn" and c.pairs == [2]
    assert "too short" in c.reasons[2]


def test_question_form_uses_the_edited_question(open_ws):
    session = open_ws()
    assert check(session, "question_form").status == "pass"
    session.edit(0, {"question": "Is Alpha an anvil maker?"})
    c = check(session, "question_form")
    assert c.status == "warn" and c.pairs == [0]


# -- links ----------------------------------------------------------------------------------------

def test_links_fail_on_unknown_key_duplicated_key_and_chunk_out_of_range(open_ws):
    docs = corpus() + [{"ticker": "BBB", "company": "Beta again", "text": "A second Beta filing.\n"}]
    rows = questions()
    rows[0]["ticker"] = "ZZZ"
    rows[1]["chunk_index"] = 3  # a tiny document has one window: index 0
    session = open_ws(corpus_rows=docs, question_rows=rows)
    c = check(session, "links")
    assert c.status == "fail"
    assert c.pairs == [0, 1, 2, 3] and c.failing == {0, 1, 2, 3}
    assert "'ZZZ' matches no corpus row" in c.reasons[0]
    assert "chunk_index 3 is out of range (the document has 1 window)" in c.reasons[1]
    assert "'BBB' matches 2 corpus rows" in c.reasons[2] and "'BBB' matches 2 corpus rows" in c.reasons[3]


def test_links_fail_when_the_chunk_window_does_not_hold_the_passage(open_ws):
    # About 20,000 cl100k tokens: three 8,192-token windows (stride 7,680).
    text = "".join(f"Line {i} of the filing reports item number {i} in full.\n" for i in range(1800))
    docs = corpus() + [{"ticker": "DDD", "company": "Delta", "text": text}]
    rows = questions()
    passage = "Line 1790 of the filing reports item number 1790 in full."
    rows.append(q("What does line 1790 of the Delta filing report?", "Item number 1790", passage, "DDD",
                  chunk_index=0))
    session = open_ws(corpus_rows=docs, question_rows=rows)
    c = check(session, "links")
    assert c.status == "fail" and c.pairs == [4]
    assert "chunk 0's window does not contain the passage" in c.reasons[4]
    assert check(session, "verbatim").status == "pass"


def test_links_pass_with_chunk_index_in_range(open_ws):
    c = check(open_ws(), "links")  # pairs 0 and 1 have chunk_index 0
    assert (c.status, c.pairs) == ("pass", [])


# -- corpus ---------------------------------------------------------------------------------------

def test_corpus_fails_on_an_empty_document(open_ws):
    docs = corpus() + [{"ticker": "EEE", "company": "Empty", "text": "  \n"}]
    c = check(open_ws(corpus_rows=docs), "corpus")
    assert c.status == "fail"
    assert "1 empty document(s): EEE" in c.message
    assert "without an accepted pair" not in c.message  # an empty document is not also "unlinked"


def test_corpus_warns_on_a_document_without_an_accepted_pair(open_ws):
    session = open_ws(accept=[0, 1])
    session.decide(2, Status.REJECTED, "other")
    session.decide(3, Status.REJECTED, "other")
    c = check(session, "corpus")
    assert c.status == "warn"
    assert "1 document(s) without an accepted pair: BBB" in c.message


def test_corpus_without_workspace_warns_on_a_document_nobody_asks_about(tmp_path):
    docs = corpus() + [{"ticker": "FFF", "company": "Foxtrot", "text": "Foxtrot has no questions yet.\n"}]
    c = no_workspace_report(tmp_path, docs, questions()).get("corpus")
    assert c.status == "warn" and "FFF" in c.message
    assert no_workspace_report(tmp_path / "b", corpus(), questions()).get("corpus").status == "pass"


# -- reviewed -------------------------------------------------------------------------------------

def test_reviewed_fails_on_undecided_skipped_and_flagged(open_ws):
    session = open_ws(accept=[0])
    session.decide(1, Status.SKIPPED)
    session.decide(2, Status.FLAGGED)
    c = check(session, "reviewed")
    assert c.status == "fail"
    assert c.pairs == [1, 2, 3] and c.failing == {1, 2, 3}
    assert c.reasons == {1: "skipped", 2: "flagged", 3: "undecided"}
    assert "1 flagged" in c.message and "1 skipped" in c.message and "1 undecided" in c.message


def test_reviewed_passes_when_every_pair_is_accepted_or_rejected(open_ws):
    session = open_ws(accept=[0, 1, 2])
    session.decide(3, Status.REJECTED, "trivial")
    c = check(session, "reviewed")
    assert (c.status, c.pairs) == ("pass", [])


# -- loads ----------------------------------------------------------------------------------------

def test_loads_fails_when_no_pair_is_accepted(open_ws):
    session = open_ws(accept=[])
    for pid in range(len(session)):
        session.decide(pid, Status.REJECTED, "other")
    report = run_checklist(session, loads=True)
    c = report.get("loads")
    assert c.status == "fail" and "no accepted pair" in c.message
    assert not report.passed


def test_loads_passes_without_workspace(tmp_path):
    report = no_workspace_report(tmp_path, corpus(), questions(), loads=True)
    c = report.get("loads")
    assert c.status == "pass", c.message
    assert "corpus 2 rows" in c.message and "questions 4 rows" in c.message
    assert report.passed


def test_loads_writes_a_sample_of_a_large_corpus_and_says_so(tmp_path, monkeypatch):
    from mtcb_curate.checks import loads as loads_check

    monkeypatch.setattr(loads_check, "CORPUS_SAMPLE_ROWS", 1)
    c = no_workspace_report(tmp_path, corpus(), questions(), loads=True).get("loads")
    assert c.status == "pass", c.message
    assert "questions 4 rows" in c.message and "1 of its 2 rows" in c.message


def test_loads_still_fails_on_a_layout_datasets_cannot_load(tmp_path, monkeypatch):
    from mtcb_curate.checks import loads as loads_check
    from mtcb_curate.hub import layout

    real = layout.write_hub_layout

    def broken(folder, *args, **kwargs):
        real(folder, *args, **kwargs)
        for f in Path(folder).rglob("*.parquet"):
            f.write_bytes(b"not parquet")

    monkeypatch.setattr(loads_check, "CORPUS_SAMPLE_ROWS", 1)
    monkeypatch.setattr(layout, "write_hub_layout", broken)
    c = no_workspace_report(tmp_path, corpus(), questions(), loads=True).get("loads")
    assert c.status == "fail" and "load_dataset failed" in c.message


def test_loads_runs_datasets_in_a_child_process_not_in_the_callers(tmp_path):
    """The review app's memory after the checklist: ``datasets`` is imported by the check's
    child process only."""
    src = write_source(tmp_path / "src", corpus(), questions())
    script = (
        "import sys\n"
        "from mtcb_curate.app.sources import Options, command_session\n"
        "from mtcb_curate.checks import run_checklist\n"
        f"with command_session(Options('ficha', source=[{str(src)!r}])) as (session, has_ws):\n"
        "    c = run_checklist(session, has_workspace=has_ws, loads=True).get('loads')\n"
        "print(c.status, 'datasets' in sys.modules)\n")
    import subprocess

    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout.split()
    assert out == ["pass", "False"]


def test_loads_reports_a_type_that_does_not_load_back_as_written(tmp_path, monkeypatch):
    from mtcb_curate.checks import loads as loads_check

    real = loads_check.read_back

    def retyped(folder):
        found = real(folder)
        found["questions"]["types"]["question"] = "large_string"
        return found

    monkeypatch.setattr(loads_check, "read_back", retyped)
    c = no_workspace_report(tmp_path, corpus(), questions(), loads=True).get("loads")
    assert c.status == "fail" and "questions.question: type large_string, expected string" in c.message


def test_loads_is_skipped_when_not_asked(open_ws):
    c = check(open_ws(), "loads", loads=False)
    assert (c.status, c.message) == ("skip", "not run")


# -- the report -----------------------------------------------------------------------------------

def failing_session(open_ws):
    rows = questions()
    rows[1]["supporting_passage"] = "Total revenue was $10 million in  fiscal 2022, up from $8 million."
    rows[3]["question"] = ""
    return open_ws(question_rows=rows, accept=[0, 1, 3])


def test_report_json_shape(open_ws):
    report = run_checklist(failing_session(open_ws), loads=False)
    data = report.to_json()
    assert set(data) == {"passed", "checks"} and data["passed"] is False
    assert [c["id"] for c in data["checks"]] == list(CHECK_IDS)
    for c in data["checks"]:
        assert {"id", "status", "pairs", "message"} <= set(c)
        assert c["status"] in ("pass", "warn", "fail", "skip")
        assert isinstance(c["pairs"], list) and isinstance(c["message"], str)
        assert all(isinstance(k, str) for k in c.get("reasons", {}))
    by_id = {c["id"]: c for c in data["checks"]}
    assert by_id["verbatim"]["status"] == "fail" and by_id["verbatim"]["pairs"] == [1]
    assert by_id["question_form"]["pairs"] == [3] and by_id["question_form"]["reasons"] == {"3": "empty question"}
    assert by_id["reviewed"]["pairs"] == [2]
    assert json.loads(json.dumps(data)) == data
    card = report.for_card()
    assert [c["id"] for c in card] == list(CHECK_IDS)
    assert all(set(c) == {"id", "status", "message", "pairs"} for c in card)


def test_report_markdown_names_every_check_and_the_offending_pairs(open_ws):
    report = run_checklist(failing_session(open_ws), loads=False)
    md = report.to_markdown()
    assert md.startswith("# Checklist: FAILED")
    for cid in CHECK_IDS:
        assert f"`{cid}`" in md
    assert "- #1: normalized" in md and "- #3: empty question" in md
    passing = run_checklist(open_ws(name="clean"), loads=False).to_markdown()
    assert passing.startswith("# Checklist: passed")


HOSTILE = "<b>\n# h</b>|**b**`c`[l](x)<script>"


def test_report_never_carries_raw_markup_from_the_dataset(tmp_path):
    docs = corpus() + [{"ticker": HOSTILE + " doc", "company": "Hostile", "text": "Hostile text body.\n"}]
    rows = questions()
    rows[0]["ticker"] = HOSTILE  # an unknown key: verbatim and links quote it
    rows[1]["supporting_passage"] = HOSTILE  # not in the document (its text is not quoted)
    report = no_workspace_report(tmp_path, docs, rows)
    assert report.get("verbatim").status == "fail" and report.get("links").status == "fail"
    assert "<script>" in report.get("links").reasons[0]  # the raw key is quoted in the reason ...
    assert "</b>|**b**" in report.get("corpus").message  # ... and the unlinked document in the message
    md = report.to_markdown()  # ... but never raw in the Markdown
    for raw in ("<script>", "</b>", "<b>", "**b**", "`c`", "[l](", "| **", "\n# h"):
        assert raw not in md, raw
    # Rendered (CommonMark with tables): no heading, link, emphasis or HTML made of the data.
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert all(not h.startswith("h") for h in headings), headings
    inline = {c.type for t in tokens if t.type == "inline" for c in t.children or []}
    assert not {"link_open", "em_open", "strong_open", "html_inline"} & inline, inline
    # Every table row still has exactly its 5 cell borders (pipes from data are escaped).
    table = [line for line in md.splitlines() if line.startswith("| `")]
    assert len(table) == len(CHECK_IDS)
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 5 for line in table)
    # Reasons and messages are one line each (no newline from the data).
    for c in report.checks:
        assert "\n" not in c.message and all("\n" not in r for r in c.reasons.values())
    # The JSON is data: dataset text appears only inside string values (see the next test).
    assert json.loads(json.dumps(report.to_json(), ensure_ascii=False))["passed"] is False


def test_json_report_keeps_dataset_text_inside_json_strings(tmp_path):
    """The JSON report is machine-readable: dataset text (a document key) appears only as the
    value of a JSON string, shortened to one line, never as structure."""
    rows = questions()
    rows[0]["ticker"] = '"}], "passed": true, "x": ["'
    report = no_workspace_report(tmp_path, corpus(), rows)
    data = json.loads(json.dumps(report.to_json()))
    assert data["passed"] is False and set(data) == {"passed", "checks"}


# -- ../shared/data: the gate before and after a scripted repair ---------------------------------

def test_shared_data_gate_fails_verbatim_then_passes_after_snap_or_reject(shared_data, tmp_path):
    opts = Options(name="ficha", source=[str(shared_data / "corpus.jsonl"), str(shared_data / "questions.jsonl")],
                   workspace=tmp_path / "ws")
    session = open_session(opts)
    try:
        ds = session.dataset
        assert len(session) == 33 and len(ds.documents) == 14
        for pid in range(len(session)):
            session.decide(pid, Status.ACCEPTED)
        before = run_checklist(session, loads=False)
        verbatim = before.get("verbatim")
        assert verbatim.status == "fail" and not before.passed
        assert len(verbatim.pairs) == 28  # README: 5 of 33 exact

        # The scripted repair: snap what is located (normalized or fuzzy), reject the rest.
        located = verify_dataset(ds, session.edited_texts(), fuzzy=True)
        snapped, rejected = [], []
        for r in located.results:
            if r.verdict == "exact":
                continue
            new = snap(ds.documents[r.doc_key].text, r) if r.doc_key in ds.documents else None
            if new and new.strip():
                session.edit(r.id, {"supporting_passage": new}, via="snap")
                snapped.append(r.id)
            else:
                session.decide(r.id, Status.REJECTED, "not verbatim")
                rejected.append(r.id)
        assert sorted(snapped + rejected) == verbatim.pairs

        after = run_checklist(session, loads=False)
        fixed = after.get("verbatim")
        assert (fixed.status, fixed.pairs) == ("pass", [])
        assert not set(rejected) & set(after.accepted)
        assert len(after.accepted) == 33 - len(rejected)
    finally:
        session.workspace.close()
