"""Input found by trial: dictionary-encoded text columns, non-UTF-8 bytes in a CSV file, and
the JSON reader's messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtcb_curate.dataset import loading
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.errors import InputError

PROFILE = get_profile("ficha")


def test_dictionary_encoded_text_columns_are_read_as_their_values(tmp_path):
    """pandas writes a ``category`` column to parquet dictionary-encoded: valid text."""
    import pandas as pd

    corpus = pd.DataFrame({"ticker": pd.Categorical(["AAA", "BBB"]),
                           "text": pd.Categorical(["Alpha makes anvils.", "Beta sells bells."])})
    questions = pd.DataFrame({"question": ["What does Alpha make?", "What does Beta sell?"],
                              "answer": pd.Categorical(["anvils", "bells"]),
                              "supporting_passage": pd.Categorical(["Alpha makes anvils.", "Beta sells bells."]),
                              "ticker": pd.Categorical(["AAA", "BBB"])})
    corpus.to_parquet(tmp_path / "c.parquet")
    questions.to_parquet(tmp_path / "q.parquet")
    ds = loading.load("ficha", PROFILE, [str(tmp_path / "c.parquet"), str(tmp_path / "q.parquet")])
    assert [d.text for d in ds.documents.values()] == ["Alpha makes anvils.", "Beta sells bells."]
    assert [(p.doc_key, p.passage) for p in ds.pairs] == [("AAA", "Alpha makes anvils."), ("BBB", "Beta sells bells.")]
    assert not ds.problems


def test_a_dictionary_of_numbers_is_still_refused_as_text(tmp_path):
    import pandas as pd

    pd.DataFrame({"ticker": ["AAA"], "text": pd.Categorical([3.5])}).to_parquet(tmp_path / "c.parquet")
    pd.DataFrame({"question": ["q"], "answer": ["a"], "supporting_passage": ["p"],
                  "ticker": ["AAA"]}).to_parquet(tmp_path / "q.parquet")
    with pytest.raises(InputError, match="field 'text': column has type double, expected string"):
        loading.load("ficha", PROFILE, [str(tmp_path / "c.parquet"), str(tmp_path / "q.parquet")])


def test_a_csv_byte_that_is_not_utf8_names_its_row_field_and_line(tmp_path):
    path = tmp_path / "corpus.csv"
    path.write_bytes(b'ticker,text\nAAA,Alpha makes anvils.\nBBB,"Beta\nsells \xe9 bells"\n')
    with pytest.raises(InputError) as info:
        loading.read_file(path)
    assert str(info.value) == f"{path} row 1 (line 4), field 'text': not valid UTF-8 (byte 0xe9 at column 7)"
    path.write_bytes(b"\xef\xbb\xbfticker,te\xffxt\nAAA,x\n")  # after a BOM, in the header
    with pytest.raises(InputError) as info:
        loading.read_file(path)
    assert str(info.value) == f"{path} line 1: not valid UTF-8 (byte 0xff at column 10) in the header"


@pytest.mark.parametrize("name,data,expected", [
    ("q.jsonl", b'{"a": "x\n', "row 0 (line 1): not valid JSON (Unterminated string starting at column 7)"),
    ("q.jsonl", b'{"a": 1}\n{"a": }\n', "row 1 (line 2): not valid JSON (Expecting value at column 7)"),
    ("q.json", b'[{"a": "x]', "not valid JSON (Unterminated string starting at line 1)"),
])
def test_json_messages_say_at_once(name, data, expected, tmp_path):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        loading.read_file(path)
    assert str(info.value) == f"{path} {expected}" if expected.startswith("row") else f"{path}: {expected}"
    assert " at at " not in str(info.value)


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_a_null_text_on_a_row_with_a_repeated_document_key_is_reported(tmp_path, suffix):
    """The repeated key is said once; the row's own null text is said too, by file, row and field."""
    import pandas as pd

    corpus = pd.DataFrame({"ticker": ["AAA", "BBB", "AAA"], "text": ["Alpha makes anvils.", "Beta sells bells.", None]})
    questions = pd.DataFrame({"question": ["What does Alpha make?"], "answer": ["anvils"],
                              "supporting_passage": ["Alpha makes anvils."], "ticker": ["AAA"]})
    c, q = tmp_path / f"corpus.{suffix}", tmp_path / f"questions.{suffix}"
    if suffix == "jsonl":
        corpus.to_json(c, orient="records", lines=True)
        questions.to_json(q, orient="records", lines=True)
    else:
        corpus.to_parquet(c)
        questions.to_parquet(q)
    ds = loading.load("ficha", PROFILE, [str(c), str(q)])
    said = {(Path(p.file).name, p.row, p.field): p.message for p in ds.problems}
    assert said[(c.name, 2, "text")] == "document text is missing (null)"
    assert "document key 'AAA' repeats (rows 0, 2)" in said[(c.name, 2, "ticker")]
    assert ds.documents["AAA"].text == "Alpha makes anvils."  # the pairs still link to the first row
