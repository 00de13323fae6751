"""Loading: every source form, the profiles' column variants, and bad input located by file/row/field."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CORPUS, QUESTIONS, write_jsonl  # noqa: E402
from hubfake import HubFake  # noqa: E402

from mtcb_curate.errors import InputError
from mtcb_curate.hub.layout import CORPUS_CONFIG, config_entries, front_matter, write_hub_layout
from mtcb_curate.dataset.loading import load
from mtcb_curate.dataset.model import Dataset
from mtcb_curate.dataset.profiles import Profile, get_profile
from mtcb_curate.app.sources import Options, choose_and_load

FICHA = get_profile("ficha")

#: The front matter of a config split into several shards (a glob data_files path).
HUB_README = front_matter({"configs": config_entries(path="{config}/train-*.parquet")}) + "# tiny ficha\n"


# ---------------------------------------------------------------------------------------------
# helpers


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def write_csv(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=names)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return path


def hub_layout(folder: Path, corpus: list[dict] = CORPUS, questions: list[dict] = QUESTIONS) -> Path:
    write_hub_layout(folder, corpus, questions, body="# tiny ficha\n")
    return folder


def assert_tiny(ds: Dataset) -> None:
    """The dataset is exactly conftest's CORPUS/QUESTIONS, with no problems."""
    assert [p.id for p in ds.pairs] == [0, 1, 2]
    for pair, q in zip(ds.pairs, QUESTIONS, strict=True):
        assert pair.question == q["question"]
        assert pair.answer == q["answer"]
        assert pair.passage == q["supporting_passage"]
        assert pair.doc_key == q["ticker"]
        assert pair.chunk_index == q["chunk_index"]
        assert pair.meta.get("company") == q["company"]
        assert pair.problems == []
    assert ds.pairs[2].chunk_index is None
    assert sorted(ds.documents) == ["AAA", "BBB"]
    for row, c in enumerate(CORPUS):
        doc = ds.documents[c["ticker"]]
        assert doc.text == c["text"]
        assert doc.row == row
        assert doc.meta.get("company") == c["company"]
    assert ds.document_for(ds.pairs[2]).key == "BBB"
    assert ds.columns["doc_key"] == "ticker"
    assert ds.columns["passage"] == "supporting_passage"
    assert ds.problems == []


def load_error(spec: list[str], profile: Profile = FICHA) -> InputError:
    with pytest.raises(InputError) as info:
        load(profile.name, profile, spec)
    err = info.value
    assert "\n" not in str(err) and "\r" not in str(err), f"message is not one line: {str(err)!r}"
    assert str(err).startswith(str(err.file))
    return err


def tiny_variant(folder: Path, corpus: list[dict] | None = None, questions: list[dict] | None = None) -> Path:
    write_jsonl(folder / "corpus.jsonl", CORPUS if corpus is None else corpus)
    write_jsonl(folder / "questions.jsonl", QUESTIONS if questions is None else questions)
    return folder


# ---------------------------------------------------------------------------------------------
# every source form gives the same three pairs


def test_side_by_side_jsonl_folder(tiny):
    ds = load("ficha", FICHA, [str(tiny)], "because")
    assert_tiny(ds)
    assert ds.source.kind == "folder"
    assert ds.source.location == str(tiny)
    assert ds.source.reason == "because"


def test_hub_layout_folder_with_readme_configs(tmp_path):
    ds = load("ficha", FICHA, [str(hub_layout(tmp_path / "hub"))])
    assert_tiny(ds)
    assert ds.source.kind == "folder"


def test_corpus_and_questions_subfolders_without_readme(tmp_path):
    folder = tmp_path / "sub"
    write_parquet(folder / "corpus" / "part-0.parquet", CORPUS[:1])
    write_parquet(folder / "corpus" / "part-1.parquet", CORPUS[1:])
    write_parquet(folder / "questions" / "part-0.parquet", QUESTIONS)
    ds = load("ficha", FICHA, [str(folder)])
    assert_tiny(ds)


def test_csv_pair(tmp_path):
    c = write_csv(tmp_path / "c.csv", CORPUS)
    q = write_csv(tmp_path / "q.csv", QUESTIONS)
    ds = load("ficha", FICHA, [str(c), str(q)])
    assert_tiny(ds)
    assert ds.source.kind == "files"


def test_csv_cells_with_form_feeds_line_separators_and_long_text(tmp_path):
    # PDF-extracted text has form feeds between pages; csv writes such cells unquoted.
    corpus = [{"ticker": "AAA", "company": "Alpha", "text": "page one\x0cpage two\u2028and\x1cmore\x85end"},
              {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells. " * 10_000}]  # 180,000 chars
    questions = [dict(QUESTIONS[0], supporting_passage="page two"),
                 dict(QUESTIONS[2], supporting_passage="Beta sells bells.")]
    c = write_csv(tmp_path / "c.csv", corpus)
    q = write_csv(tmp_path / "q.csv", questions)
    ds = load("ficha", FICHA, [str(c), str(q)])
    assert sorted(ds.documents) == ["AAA", "BBB"]
    assert ds.documents["AAA"].text == corpus[0]["text"]
    assert ds.documents["BBB"].text == corpus[1]["text"]
    assert len(ds.pairs) == 2 and ds.problems == []


def test_parquet_pair(tmp_path):
    c = write_parquet(tmp_path / "c.parquet", CORPUS)
    q = write_parquet(tmp_path / "q.parquet", QUESTIONS)
    ds = load("ficha", FICHA, [str(c), str(q)])
    assert_tiny(ds)
    assert ds.source.kind == "files"


def test_parquet_text_columns_hold_one_str_per_distinct_value(tmp_path):
    """Equal cells of a parquet string column are one ``str`` object (document keys and
    companies repeat over every pair of a document); the values are the file's."""
    rows = [dict(q) for q in QUESTIONS] * 2
    rows[0] = {**rows[0], "company": None}
    c = write_parquet(tmp_path / "c.parquet", CORPUS)
    q = write_parquet(tmp_path / "q.parquet", rows)
    ds = load("ficha", FICHA, [str(c), str(q)])
    n = len(QUESTIONS)
    assert [(p.question, p.answer, p.passage, p.doc_key, p.meta) for p in ds.pairs] == \
        [(r["question"], r["answer"], r["supporting_passage"], r["ticker"], {"company": r["company"]}) for r in rows]
    for a, b in zip(ds.pairs[:n], ds.pairs[n:]):
        assert a.question is b.question and a.passage is b.passage and a.doc_key is b.doc_key
    same_key = [p for p in ds.pairs if p.doc_key == ds.pairs[1].doc_key]
    assert len(same_key) > 2 and all(p.meta["company"] is same_key[-1].meta["company"] for p in same_key[1:])


def test_a_single_file_is_not_a_dataset(tiny):
    err = load_error([str(tiny / "questions.jsonl")])
    assert err.file == str(tiny / "questions.jsonl")


def test_missing_path_that_is_not_a_hub_id(tmp_path):
    missing = str(tmp_path / "nope")
    err = load_error([missing])
    assert err.file == missing
    assert "no such file or folder" in err.message


# ---------------------------------------------------------------------------------------------
# profiles and column variants


@pytest.mark.parametrize("column", ["chunk-must-contain", "chunk_must_contain"])
def test_passage_column_variants(tmp_path, column):
    questions = [{(column if k == "supporting_passage" else k): v for k, v in q.items()} for q in QUESTIONS]
    ds = load("ficha", FICHA, [str(tiny_variant(tmp_path / "d", questions=questions))])
    assert ds.columns["passage"] == column
    assert [p.passage for p in ds.pairs] == [q["supporting_passage"] for q in QUESTIONS]
    assert column not in ds.pairs[0].meta


@pytest.mark.parametrize("column", ["content", "readme"])
def test_macha_text_column_variants(tmp_path, column):
    corpus = [{"repo": "acme/anvil", column: "# Anvil\nDrops on roadrunners."},
              {"repo": "acme/bell", column: "# Bell\nRings."}]
    questions = [{"question": "What does Anvil drop on?", "answer": "roadrunners",
                  "chunk-must-contain": "Drops on roadrunners.", "repo": "acme/anvil"},
                 {"question": "What does Bell do?", "answer": "rings", "chunk-must-contain": "Rings.",
                  "repo": "acme/bell"}]
    ds = load("macha", get_profile("macha"), [str(tiny_variant(tmp_path / "m", corpus, questions))])
    assert ds.columns["text"] == column
    assert ds.columns["doc_key"] == "repo"
    assert ds.documents["acme/anvil"].text == "# Anvil\nDrops on roadrunners."
    assert [p.doc_key for p in ds.pairs] == ["acme/anvil", "acme/bell"]
    assert ds.problems == []


def test_sencha_paper_id_links_to_corpus_id(tmp_path):
    corpus = [{"id": "1909.00001", "title": "A", "text": "We use BERT. Results improve."},
              {"id": "1909.00002", "title": "B", "text": "We use LSTMs."}]
    questions = [{"question": "Which model?", "answer": "LSTMs", "chunk-must-contain": "We use LSTMs.",
                  "paper_id": "1909.00002"}]
    ds = load("sencha", get_profile("sencha"), [str(tiny_variant(tmp_path / "s", corpus, questions))])
    assert ds.columns["doc_key"] == "paper_id"
    assert ds.columns["corpus_key"] == "id"
    pair = ds.pairs[0]
    assert pair.doc_key == "1909.00002"
    assert ds.document_for(pair).text == "We use LSTMs."
    assert pair.problems == [] and ds.problems == []


def test_hojicha_without_an_answer_column(tmp_path):
    corpus = [{"title": "Lease A", "text": "The tenant shall pay rent monthly."}]
    questions = [{"question": "When is rent due?", "chunk-must-contain": "The tenant shall pay rent monthly.",
                  "document_title": "Lease A"}]
    ds = load("hojicha", get_profile("hojicha"), [str(tiny_variant(tmp_path / "h", corpus, questions))])
    assert "answer" not in ds.columns
    assert ds.pairs[0].answer == ""
    assert ds.pairs[0].doc_key == "Lease A"
    assert ds.document_for(ds.pairs[0]).key == "Lease A"
    assert ds.problems == []


def test_unknown_dataset_detects_the_key_from_shared_columns(tmp_path):
    profile = get_profile("my-own-set")
    assert profile.question_key is None
    corpus = [{"slug": "one", "text": "First document."}, {"slug": "two", "text": "Second document."}]
    questions = [{"query": "Which is second?", "answers": ["two"], "supporting_passage": "Second document.",
                  "slug": "two", "chunk_index": 3}]
    ds = load("my-own-set", profile, [str(tiny_variant(tmp_path / "g", corpus, questions))])
    assert ds.columns["doc_key"] == "slug"
    assert ds.columns["question"] == "query"
    pair = ds.pairs[0]
    assert (pair.question, pair.answer, pair.doc_key, pair.chunk_index) == ("Which is second?", "two", "two", 3)
    assert ds.document_for(pair).text == "Second document."


def test_unknown_dataset_prefers_a_key_like_column(tmp_path):
    corpus = [{"source": "web", "doc_id": "d1", "text": "Alpha."}, {"source": "web", "doc_id": "d2", "text": "Beta."}]
    questions = [{"source": "web", "doc_id": "d2", "question": "?", "answer": "!", "supporting_passage": "Beta."}]
    ds = load("other", get_profile("other"), [str(tiny_variant(tmp_path / "k", corpus, questions))])
    assert ds.columns["doc_key"] == "doc_id"
    assert ds.pairs[0].doc_key == "d2"


def test_unknown_dataset_with_no_shared_column_is_an_error(tmp_path):
    corpus = [{"name_a": "x", "text": "Alpha."}]
    questions = [{"name_b": "x", "question": "?", "answer": "!", "supporting_passage": "Alpha."}]
    folder = tiny_variant(tmp_path / "n", corpus, questions)
    err = load_error([str(folder)], get_profile("other"))
    assert err.file == str(folder / "questions.jsonl")
    assert err.field == "document key"
    assert "--doc-key" in err.message


def test_explicit_overrides(tmp_path):
    questions = [{("evidence" if k == "supporting_passage" else k): v for k, v in q.items()} for q in QUESTIONS]
    folder = tiny_variant(tmp_path / "o", questions=questions)
    profile = FICHA.with_overrides(doc_key="company", passage_column="evidence")
    ds = load("ficha", profile, [str(folder)])
    assert ds.columns["doc_key"] == "company" and ds.columns["corpus_key"] == "company"
    assert ds.columns["passage"] == "evidence"
    assert sorted(ds.documents) == ["Alpha", "Beta"]
    assert [p.doc_key for p in ds.pairs] == ["Alpha", "Alpha", "Beta"]
    assert [p.passage for p in ds.pairs] == [q["supporting_passage"] for q in QUESTIONS]
    assert ds.problems == []
    # without the override the ficha profile finds no passage column
    err = load_error([str(folder)])
    assert err.field == "supporting_passage"


# ---------------------------------------------------------------------------------------------
# fatal bad input: InputError names file, row and field, in one line


def test_readme_configs_without_questions(tmp_path):
    folder = hub_layout(tmp_path / "hub")
    readme = folder / "README.md"
    readme.write_text(front_matter({"configs": config_entries([CORPUS_CONFIG])}), encoding="utf-8")
    err = load_error([str(folder)])
    assert err.file == str(readme)
    assert err.row is None
    assert err.field == "configs"
    assert "'questions'" in err.message and "corpus" in err.message


def test_folder_with_only_a_corpus_file(tmp_path):
    folder = tmp_path / "only"
    write_jsonl(folder / "corpus.jsonl", CORPUS)
    err = load_error([str(folder)])
    assert err.file == str(folder)
    assert err.row is None and err.field is None
    assert "'questions'" in err.message


def test_missing_supporting_passage_column(tmp_path):
    questions = [{k: v for k, v in q.items() if k != "supporting_passage"} for q in QUESTIONS]
    folder = tiny_variant(tmp_path / "p", questions=questions)
    err = load_error([str(folder)])
    assert err.file == str(folder / "questions.jsonl")
    assert err.row is None
    assert err.field == "supporting_passage"
    assert "supporting passage" in err.message


def test_missing_text_column(tmp_path):
    corpus = [{k: v for k, v in c.items() if k != "text"} for c in CORPUS]
    folder = tiny_variant(tmp_path / "t", corpus=corpus)
    err = load_error([str(folder)])
    assert err.file == str(folder / "corpus.jsonl")
    assert err.row is None
    assert err.field == "text"


def test_mistyped_question_column_in_parquet(tmp_path):
    questions = [dict(q, question=i) for i, q in enumerate(QUESTIONS)]
    c = write_parquet(tmp_path / "c.parquet", CORPUS)
    q = write_parquet(tmp_path / "q.parquet", questions)
    assert pq.read_schema(q).field("question").type == pa.int64()
    err = load_error([str(c), str(q)])
    assert err.file == str(q)
    assert err.row is None
    assert err.field == "question"
    assert "int64" in err.message


@pytest.mark.parametrize("content", [b"", b"  \n\n \t\n"], ids=["zero-bytes", "whitespace-only"])
def test_empty_questions_file(tiny, content):
    q = tiny / "questions.jsonl"
    q.write_bytes(content)
    err = load_error([str(tiny)])
    assert err.file == str(q)
    assert err.row is None and err.field is None
    assert "empty" in err.message


def test_empty_parquet_file(tmp_path):
    c = write_parquet(tmp_path / "c.parquet", CORPUS)
    q = tmp_path / "q.parquet"
    q.write_bytes(b"")
    err = load_error([str(c), str(q)])
    assert err.file == str(q)
    assert "empty" in err.message


def test_non_utf8_row_is_named(tiny):
    q = tiny / "questions.jsonl"
    lines = q.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"Beta", b"B\xffta")
    q.write_bytes(b"\n".join(lines))
    err = load_error([str(tiny)])
    assert err.file == str(q)
    assert err.row == 2
    assert "UTF-8" in err.message and "0xff" in err.message


def test_invalid_json_row_is_named(tiny):
    q = tiny / "questions.jsonl"
    lines = q.read_text(encoding="utf-8").split("\n")
    lines[1] = lines[1][:-1]  # drop the closing brace
    q.write_text("\n".join(lines), encoding="utf-8")
    err = load_error([str(tiny)])
    assert err.file == str(q)
    assert err.row == 1
    assert "not valid JSON" in err.message


def test_non_object_jsonl_row_is_named(tiny):
    q = tiny / "questions.jsonl"
    q.write_text(q.read_text(encoding="utf-8") + "[1, 2]\n", encoding="utf-8")
    err = load_error([str(tiny)])
    assert err.file == str(q)
    assert err.row == 3


def test_unparseable_parquet(tmp_path):
    c = write_parquet(tmp_path / "c.parquet", CORPUS)
    q = tmp_path / "q.parquet"
    q.write_bytes(b"this is not parquet\nat all\n")
    err = load_error([str(c), str(q)])
    assert err.file == str(q)
    assert "parquet" in err.message


# ---------------------------------------------------------------------------------------------
# row-level problems: recorded, and the pairs flagged, without raising


def test_document_key_matching_no_document(tmp_path):
    questions = [dict(q) for q in QUESTIONS]
    questions[1]["ticker"] = "ZZZ"
    folder = tiny_variant(tmp_path / "u", questions=questions)
    ds = load("ficha", FICHA, [str(folder)])
    assert ds.pairs[1].problems and "ZZZ" in ds.pairs[1].problems[0]
    assert ds.pairs[0].problems == [] and ds.pairs[2].problems == []
    assert ds.document_for(ds.pairs[1]) is None
    [p] = ds.problems
    assert (p.file, p.row, p.field, p.pair_id) == (str(folder / "questions.jsonl"), 1, "ticker", 1)
    assert "ZZZ" in p.message


def test_duplicate_document_keys(tmp_path):
    corpus = [*CORPUS, {"ticker": "AAA", "company": "Alpha again", "text": "A second Alpha."}]
    folder = tiny_variant(tmp_path / "dup", corpus=corpus)
    ds = load("ficha", FICHA, [str(folder)])
    [p] = ds.problems
    assert p.file == str(folder / "corpus.jsonl")
    assert p.field == "ticker"
    assert p.row == 2
    assert "'AAA'" in p.message and "0" in p.message and "2" in p.message
    assert "rows 0, 2" in p.message
    assert ds.pairs[0].problems and ds.pairs[1].problems
    assert "AAA" in ds.pairs[0].problems[0]
    assert ds.pairs[2].problems == []
    assert ds.documents["AAA"].row == 0  # pairs link to the first one


def test_question_that_is_a_number_in_jsonl(tmp_path):
    questions = [dict(q) for q in QUESTIONS]
    questions[2]["question"] = 42
    folder = tiny_variant(tmp_path / "n", questions=questions)
    ds = load("ficha", FICHA, [str(folder)])
    pair = ds.pairs[2]
    assert pair.problems and "question" in pair.problems[0]
    assert pair.question == "42"
    assert ds.pairs[0].problems == [] and ds.pairs[1].problems == []
    [p] = ds.problems
    assert (p.row, p.field, p.pair_id) == (2, "question", 2)


def test_chunk_index_that_is_not_a_number(tmp_path):
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["chunk_index"] = "abc"
    folder = tiny_variant(tmp_path / "ci", questions=questions)
    ds = load("ficha", FICHA, [str(folder)])
    pair = ds.pairs[0]
    assert pair.chunk_index is None
    assert pair.problems and "chunk_index" in pair.problems[0]
    [p] = ds.problems
    assert (p.row, p.field, p.pair_id) == (0, "chunk_index", 0)
    assert "abc" in p.message


@pytest.mark.parametrize("field", ["supporting_passage", "question"])
def test_a_text_field_given_as_a_list_is_a_row_problem(tmp_path, field):
    questions = [dict(q) for q in QUESTIONS]
    questions[1][field] = ["first part", "second part"]
    folder = tiny_variant(tmp_path / "lst", questions=questions)
    ds = load("ficha", FICHA, [str(folder)])
    [p] = ds.problems
    assert (p.file, p.row, p.field, p.pair_id) == (str(folder / "questions.jsonl"), 1, field, 1)
    assert "list" in p.message
    assert ds.pairs[1].problems and field in ds.pairs[1].problems[0]
    assert ds.pairs[0].problems == [] and ds.pairs[2].problems == []


def test_a_squad_style_answers_list_is_still_read(tmp_path):
    questions = [{("answers" if k == "answer" else k): ([v] if k == "answer" else v) for k, v in q.items()}
                 for q in QUESTIONS]
    ds = load("ficha", FICHA, [str(tiny_variant(tmp_path / "sq", questions=questions))])
    assert [p.answer for p in ds.pairs] == [q["answer"] for q in QUESTIONS]
    assert ds.problems == []


def test_chunk_index_given_as_a_string_is_a_row_problem(tmp_path):
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["chunk_index"] = "0"
    folder = tiny_variant(tmp_path / "cs", questions=questions)
    ds = load("ficha", FICHA, [str(folder)])
    [p] = ds.problems
    assert (p.file, p.row, p.field, p.pair_id) == (str(folder / "questions.jsonl"), 0, "chunk_index", 0)
    assert "'0'" in p.message and "string" in p.message
    assert ds.pairs[0].problems


def test_csv_with_an_unterminated_quote_is_a_row_problem(tmp_path):
    c = write_csv(tmp_path / "c.csv", CORPUS)
    q = write_csv(tmp_path / "q.csv", QUESTIONS)
    lines = q.read_bytes().decode("utf-8").split("\r\n")
    # row 1 (the second data row): its question opens a quote that never closes
    lines[2] = lines[2].replace("What was", '"What was', 1)
    q.write_bytes("\r\n".join(lines).encode("utf-8"))
    ds = load("ficha", FICHA, [str(c), str(q)])
    [p] = [p for p in ds.problems if "quote" in p.message]
    assert (p.file, p.row, p.field) == (str(q), 1, "question")
    assert "unterminated" in p.message
    assert ds.pairs[1].problems


def test_csv_with_a_quote_left_open_until_the_next_quoted_cell_is_a_row_problem(tmp_path):
    # The usual shape: the stray quote "closes" at the next quoted cell, and csv shifts cells silently.
    questions = [dict(q) for q in QUESTIONS]
    questions[2]["answer"] = 'Bells, "big" ones'  # written quoted
    c = write_csv(tmp_path / "c.csv", CORPUS)
    q = write_csv(tmp_path / "q.csv", questions)
    text = q.read_bytes().decode("utf-8")
    text = text.replace("\r\nWhat was", '\r\n"What was', 1)  # row 1's question opens a quote
    q.write_bytes(text.encode("utf-8"))
    ds = load("ficha", FICHA, [str(c), str(q)])
    [p] = [p for p in ds.problems if "quote" in p.message]
    assert (p.file, p.row, p.field) == (str(q), 1, "question")
    assert "malformed quote" in p.message


def test_csv_quotes_that_close_are_no_problem(tmp_path):
    corpus = [dict(CORPUS[0], text='He said "yes", then\n"no"'), CORPUS[1]]
    questions = [dict(QUESTIONS[0], question='A "quoted" word?'), *QUESTIONS[1:]]
    c = write_csv(tmp_path / "c.csv", corpus)
    q = write_csv(tmp_path / "q.csv", questions)
    ds = load("ficha", FICHA, [str(c), str(q)])
    assert ds.problems == []
    assert ds.documents["AAA"].text == corpus[0]["text"]


@pytest.mark.parametrize("name", ["questions.jsonl", "corpus.jsonl"])
def test_utf8_bom_at_the_start_of_a_jsonl_file_is_accepted(tiny, name):
    f = tiny / name
    f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    assert_tiny(load("ficha", FICHA, [str(tiny)]))


def test_utf8_bom_at_the_start_of_a_json_array_file_is_accepted(tmp_path):
    c = tmp_path / "c.json"
    q = tmp_path / "q.json"
    c.write_bytes(b"\xef\xbb\xbf" + json.dumps(CORPUS).encode("utf-8"))
    q.write_bytes(b"\xef\xbb\xbf" + json.dumps(QUESTIONS).encode("utf-8"))
    assert_tiny(load("ficha", FICHA, [str(c), str(q)]))


def test_row_problem_in_a_second_shard_names_that_file_and_its_row(tmp_path):
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "README.md").write_text(HUB_README, encoding="utf-8")
    write_parquet(folder / "corpus" / "train-00000-of-00001.parquet", CORPUS)
    questions = [dict(q) for q in QUESTIONS]
    questions[2]["ticker"] = "ZZZ"
    write_parquet(folder / "questions" / "train-00000-of-00002.parquet", questions[:2])
    second = write_parquet(folder / "questions" / "train-00001-of-00002.parquet", questions[2:])
    ds = load("ficha", FICHA, [str(folder)])
    assert [p.id for p in ds.pairs] == [0, 1, 2]
    [p] = ds.problems
    assert (p.file, p.row, p.pair_id) == (str(second), 0, 2)
    assert ds.pairs[2].problems


# ---------------------------------------------------------------------------------------------
# a Hub repo id, through the loopback Hub fake (client code in a subprocess)


def test_hub_repo_id_and_default_source(tmp_path):
    folder = hub_layout(tmp_path / "src")
    code = textwrap.dedent("""
        import json
        from mtcb_curate.dataset.loading import load
        from mtcb_curate.dataset.profiles import get_profile
        from mtcb_curate.app.sources import Options, choose_and_load
        ds = load('ficha', get_profile('ficha'), ['chonkie-ai/ficha'])
        chosen, spec = choose_and_load(Options('ficha'), None)
        print(json.dumps({
            "pairs": len(ds.pairs), "documents": len(ds.documents), "passage2": ds.pairs[2].passage,
            "kind": ds.source.kind, "keys": [p.doc_key for p in ds.pairs],
            "chunk": [p.chunk_index for p in ds.pairs], "problems": [str(p) for p in ds.problems],
            "chosen_kind": chosen.source.kind, "chosen_pairs": len(chosen.pairs),
            "reason": chosen.source.reason, "spec": spec,
        }))
    """)
    with HubFake() as fake:
        fake.add_dataset_from_folder("chonkie-ai/ficha", folder)
        proc = subprocess.run([sys.executable, "-c", code], env=fake.env(tmp_path / "hf"),
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pairs"] == 3 and out["documents"] == 2
    assert out["passage2"] == QUESTIONS[2]["supporting_passage"]
    assert out["kind"] == "hub"
    assert out["keys"] == ["AAA", "AAA", "BBB"]
    assert out["chunk"] == [0, 0, None]
    assert out["problems"] == []
    assert out["chosen_kind"] == "hub" and out["chosen_pairs"] == 3
    assert "chonkie-ai/ficha" in out["reason"]
    assert out["spec"] == ["chonkie-ai/ficha"]


def test_default_source_offline_falls_back_to_the_sample(sample_dir):
    ds, spec = choose_and_load(Options("ficha"), None)
    assert spec == ["sample:ficha"]
    assert ds.source.kind == "sample"
    assert ds.source.location == str(sample_dir)
    assert "chonkie-ai/ficha" in ds.source.reason and "bundled sample" in ds.source.reason
    assert len(ds.pairs) == 23 and len(ds.documents) == 6


def test_default_source_offline_without_a_sample_is_an_error():
    with pytest.raises(InputError) as info:
        choose_and_load(Options("gacha"), None)
    err = info.value
    assert err.file == "feyninc/gacha, chonkie-ai/gacha"  # every name tried, in order
    assert "unreachable" in err.message and "HF_HUB_OFFLINE" in err.message
    assert "\n" not in str(err)


def test_stored_source_wins_over_the_hub(tiny):
    ds, spec = choose_and_load(Options("ficha"), [str(tiny)])
    assert spec == [str(tiny)]
    assert "resumed" in ds.source.reason
    assert_tiny(ds)


# ---------------------------------------------------------------------------------------------
# the real data in ../shared/data


def test_shared_financial_data(shared_data):
    ds = load("ficha", FICHA, [str(shared_data)])
    assert len(ds.documents) == 14
    assert len(ds.pairs) == 33
    assert ds.problems == []
    assert all(p.problems == [] for p in ds.pairs)
    assert all(ds.document_for(p) is not None for p in ds.pairs)
    assert all(p.chunk_index is None for p in ds.pairs)


def test_shared_squad_data(shared_data):
    ds = load("squad-mtcb", get_profile("squad-mtcb"), [str(shared_data / "squad-mtcb")])
    assert ds.columns["doc_key"] == "title"
    assert len(ds.documents) == 8
    assert len(ds.pairs) == 1299
    assert ds.problems == []
    assert all(ds.document_for(p) is not None for p in ds.pairs)
    assert all(isinstance(p.chunk_index, int) for p in ds.pairs)


def test_row_messages_name_the_line_an_editor_shows(tmp_path):
    """jsonl with a blank line, and csv with a quoted multi-line cell: the row (0-based, the
    pair id) and the 1-based line it starts on."""
    from mtcb_curate.dataset.loading import read_file

    j = tmp_path / "q.jsonl"
    j.write_text('{"a": 1}\n\n{"a": 2}\n{"a": \n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_file(j)
    assert f"{j} row 2 (line 4):" in str(err.value)
    j.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert read_file(j).lines == [1, 3]
    c = tmp_path / "q.csv"
    c.write_text('a,b\n1,"two\nlines"\n3,x\n', encoding="utf-8")
    t = read_file(c)
    assert t.lines == [2, 4] and t.line_of(1) == 4
