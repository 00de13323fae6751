"""The shared names of the supporting passage, history kinds and ``via`` values:
one constant, and enum values equal to what existing workspaces store."""

from mtcb_curate.dataset.model import EDITABLE_FIELDS, PASSAGE_FIELD, HistoryKind, Via
from mtcb_curate.neardup import items_from_dataset  # noqa: F401  (the edit field it reads)


def test_passage_field_is_the_mtcb_column_and_an_editable_field():
    assert PASSAGE_FIELD == "supporting_passage" and PASSAGE_FIELD in EDITABLE_FIELDS


def test_history_kinds_and_via_keep_the_stored_strings():
    assert {k.value for k in HistoryKind} == {"decide", "edit", "add", "not_duplicates", "shared_evidence", "note"}
    assert HistoryKind.EDIT == "edit" and Via.REGENERATE == "regenerate" and Via.KEEP_ONE == "keep_one"
    assert {v.value for v in Via} >= {"snap", "trim", "select", "regenerate", "generate", "keep_one"}
