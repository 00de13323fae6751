"""The Hub layout writer: loads with `datasets` and with our own loader, deterministic bytes,
and a content hash that survives a parquet / `datasets` round trip."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CORPUS, QUESTIONS  # noqa: E402

from mtcb_curate.hub.layout import (  # noqa: E402
    config_entries,
    content_hash,
    data_file,
    front_matter,
    parquet_bytes,
    write_hub_layout,
)
from mtcb_curate.dataset.loading import load  # noqa: E402
from mtcb_curate.dataset.profiles import get_profile  # noqa: E402

CORPUS_SCHEMA = pa.schema([("ticker", pa.string()), ("company", pa.string()), ("text", pa.string())])
QUESTIONS_SCHEMA = pa.schema([("question", pa.string()), ("answer", pa.string()), ("supporting_passage", pa.string()),
                              ("ticker", pa.string()), ("company", pa.string()), ("chunk_index", pa.int64())])


def _all_null_chunks() -> list[dict]:
    return [{**q, "chunk_index": None} for q in QUESTIONS]


def test_layout_loads_with_datasets_with_counts_columns_and_types(tmp_path):
    written = write_hub_layout(tmp_path / "hub", CORPUS, _all_null_chunks(), body="# tiny\n",
                               corpus_schema=CORPUS_SCHEMA, questions_schema=QUESTIONS_SCHEMA,
                               metadata={"license": "cc-by-4.0"})
    assert sorted(written) == ["README.md", "corpus/train-00000-of-00001.parquet",
                               "questions/train-00000-of-00001.parquet"]
    import datasets

    corpus = datasets.load_dataset(str(tmp_path / "hub"), "corpus", split="train")
    questions = datasets.load_dataset(str(tmp_path / "hub"), "questions", split="train")
    assert corpus.num_rows == len(CORPUS) and questions.num_rows == len(QUESTIONS)
    assert corpus.column_names == CORPUS_SCHEMA.names
    assert questions.column_names == QUESTIONS_SCHEMA.names
    assert {k: str(v) for k, v in questions.features.items()} == {
        "question": "Value('string')", "answer": "Value('string')", "supporting_passage": "Value('string')",
        "ticker": "Value('string')", "company": "Value('string')", "chunk_index": "Value('int64')"}
    assert list(corpus["ticker"]) == [c["ticker"] for c in CORPUS]  # row order kept
    assert content_hash(questions.data.table) == content_hash(pa.Table.from_pylist(_all_null_chunks(),
                                                                                    schema=QUESTIONS_SCHEMA))
    readme = (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(readme.split("---\n")[1])
    assert meta == {"configs": config_entries(), "license": "cc-by-4.0"}
    assert readme.endswith("---\n# tiny\n")


def test_layout_loads_with_our_loader(tmp_path):
    folder = tmp_path / "hub"
    write_hub_layout(folder, CORPUS, QUESTIONS, questions_schema=QUESTIONS_SCHEMA)
    ds = load("ficha", get_profile("ficha"), [str(folder)])
    assert [p.question for p in ds.pairs] == [q["question"] for q in QUESTIONS]
    assert [p.chunk_index for p in ds.pairs] == [q["chunk_index"] for q in QUESTIONS]
    assert sorted(ds.documents) == ["AAA", "BBB"]
    assert ds.problems == []


def test_same_input_same_bytes_and_other_files_are_left_alone(tmp_path):
    a = write_hub_layout(tmp_path / "a", CORPUS, QUESTIONS, questions_schema=QUESTIONS_SCHEMA, body="x")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "synthetic.json").write_text("{}", encoding="utf-8")
    b = write_hub_layout(tmp_path / "b", pa.Table.from_pylist(CORPUS), QUESTIONS,
                         questions_schema=QUESTIONS_SCHEMA, body="x")
    for rel in a:
        assert a[rel].read_bytes() == b[rel].read_bytes(), rel
    assert (tmp_path / "b" / "synthetic.json").read_text(encoding="utf-8") == "{}"
    changed = [dict(q) for q in QUESTIONS]
    changed[1]["answer"] = "$11 million"
    c = write_hub_layout(tmp_path / "c", CORPUS, changed, questions_schema=QUESTIONS_SCHEMA, body="x")
    assert c[data_file("questions")].read_bytes() != a[data_file("questions")].read_bytes()
    assert c[data_file("corpus")].read_bytes() == a[data_file("corpus")].read_bytes()


def test_a_glob_layout_with_two_shards_loads(tmp_path):
    folder = tmp_path / "shards"
    write_hub_layout(folder, CORPUS, QUESTIONS[:2], questions_schema=QUESTIONS_SCHEMA,
                     readme=front_matter({"configs": config_entries(path="{config}/train-*.parquet")}))
    pq.write_table(pa.Table.from_pylist(QUESTIONS[2:], schema=QUESTIONS_SCHEMA),
                   folder / "questions" / "train-00001-of-00002.parquet")
    ds = load("ficha", get_profile("ficha"), [str(folder)])
    assert [p.question for p in ds.pairs] == [q["question"] for q in QUESTIONS]
    assert config_entries(("corpus",), path="{config}/train-*.parquet") == [
        {"config_name": "corpus", "data_files": [{"split": "train", "path": "corpus/train-*.parquet"}]}]


def test_readme_given_is_written_as_is_and_metadata_may_not_set_configs(tmp_path):
    card = front_matter({"configs": config_entries(), "pretty_name": "X"}) + "body\n"
    out = write_hub_layout(tmp_path / "r", CORPUS, QUESTIONS, readme=card)
    assert out["README.md"].read_text(encoding="utf-8") == card
    with pytest.raises(ValueError, match="configs"):
        write_hub_layout(tmp_path / "bad", CORPUS, QUESTIONS, metadata={"configs": []})


def test_rows_that_do_not_fit_the_schema_raise_value_error(tmp_path):
    rows = [{**QUESTIONS[0], "chunk_index": "zero"}]
    with pytest.raises(ValueError, match="cannot build a table"):
        write_hub_layout(tmp_path / "x", CORPUS, rows, questions_schema=QUESTIONS_SCHEMA)
    assert not (tmp_path / "x" / "README.md").exists()


def test_front_matter_values_cannot_break_out_of_the_block():
    hostile = "x\n---\nconfigs: []\n# heading"
    block = front_matter({"license": "mit", "pretty_name": hostile})
    assert block.startswith("---\n") and block.endswith("---\n")
    inner = block[len("---\n"):-len("---\n")]
    assert "\n---\n" not in inner
    assert yaml.safe_load(inner) == {"license": "mit", "pretty_name": hostile}


def test_content_hash_ignores_string_width_but_not_content_or_column_names():
    t = pa.table({"a": pa.array(["x", None, "é"], pa.string()), "n": pa.array([1, None, 3], pa.int64())})
    large = t.cast(pa.schema([("a", pa.large_string()), ("n", pa.int64())]))
    assert content_hash(t) == content_hash(large)
    assert content_hash(t) == content_hash(pa.concat_tables([t.slice(0, 1), t.slice(1)]))  # chunking
    assert content_hash(t) != content_hash(t.rename_columns(["b", "n"]))
    assert content_hash(t) != content_hash(pa.table({"a": ["x", "", "é"], "n": [1, None, 3]}))
    assert content_hash(t) != content_hash(t.slice(0, 2))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(st.characters(exclude_categories=("Cs",)), max_size=50),
                          st.one_of(st.none(), st.integers(min_value=0, max_value=2**40))), max_size=20))
def test_content_hash_survives_a_parquet_round_trip(rows):
    table = pa.table({"text": pa.array([r[0] for r in rows], pa.string()),
                      "chunk_index": pa.array([r[1] for r in rows], pa.int64())})
    data = parquet_bytes(table)
    back = pq.read_table(pa.BufferReader(data))
    assert back.num_rows == table.num_rows
    assert content_hash(back) == content_hash(table)
    assert parquet_bytes(table) == data
