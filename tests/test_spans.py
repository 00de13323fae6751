"""Span boundaries for picking a passage by keys (verify/spans.py): word, sentence, line,
paragraph and table-row ends, forwards and back, and the typed-string start."""

from __future__ import annotations

import pytest

from mtcb_curate.verify.spans import (
    extend_end,
    find_next,
    is_figure_line,
    line_end_after,
    line_end_before,
    paragraph_end_after,
    paragraph_end_before,
    row_end_after,
    row_end_before,
    sentence_end_after,
    sentence_end_before,
    shrink_end,
    word_end_after,
    word_end_before,
)

PROSE = ("Revenue rose 5% in 2022. Costs fell in the U.S. market, said Mr. Smith. Net income grew!\n"
         "The board met twice.\n\n"
         "Risk factors follow (see Note 3.5).\n")
TABLE = ("3M Company and Subsidiaries\nConsolidated Statement of Income\n(Millions)\n"
         "Net sales\n$\n34,229 $\n35,355\n"
         "Cost of sales\n19,232\n18,795\n"
         "Operating income\n6,539\n7,369\n")


def upto(text: str, end: int) -> str:
    return text[:end]


def test_words():
    assert upto(PROSE, word_end_after(PROSE, 0)) == "Revenue"
    assert upto(PROSE, word_end_after(PROSE, 7)) == "Revenue rose"
    assert upto(PROSE, word_end_before(PROSE, 12)) == "Revenue"
    assert word_end_after("abc   ", 3) == 6  # only white space follows


def test_sentences_skip_abbreviations_and_end_at_paragraphs():
    e1 = sentence_end_after(PROSE, 0)
    assert upto(PROSE, e1) == "Revenue rose 5% in 2022."
    e2 = sentence_end_after(PROSE, e1)
    assert PROSE[e1:e2] == " Costs fell in the U.S. market, said Mr. Smith."  # neither U.S. nor Mr. ends it
    e3 = sentence_end_after(PROSE, e2)
    assert PROSE[e2:e3].strip() == "Net income grew!"
    e4 = sentence_end_after(PROSE, e3)
    assert PROSE[e3:e4].strip() == "The board met twice."
    e5 = sentence_end_after(PROSE, e4)
    assert PROSE[e4:e5].strip() == "Risk factors follow (see Note 3.5)."  # 3.5 is no stop
    # back again, one sentence at a time
    assert sentence_end_before(PROSE, e5) == e4
    assert sentence_end_before(PROSE, e3) == e2
    assert sentence_end_before(PROSE, e2 + 1) == e1  # trailing white space is set aside
    assert sentence_end_before(PROSE, e1) == 0


def test_a_heading_without_a_stop_ends_at_its_paragraph():
    text = "ITEM 7. MANAGEMENT DISCUSSION\n\nRevenue grew."
    assert upto(text, sentence_end_after(text, 8)) == "ITEM 7. MANAGEMENT DISCUSSION"


def test_lines():
    e = line_end_after(TABLE, 0)
    assert upto(TABLE, e) == "3M Company and Subsidiaries"
    e2 = line_end_after(TABLE, e)
    assert TABLE[e:e2] == "\nConsolidated Statement of Income"
    assert line_end_before(TABLE, e2) == e
    assert line_end_before(TABLE, e) == 0


def test_paragraphs():
    e = paragraph_end_after(PROSE, 0)
    assert upto(PROSE, e).endswith("The board met twice.")
    assert upto(PROSE, paragraph_end_after(PROSE, e)).endswith("(see Note 3.5).")
    assert paragraph_end_before(PROSE, len(PROSE)) == e
    assert paragraph_end_before(PROSE, e) == 0


def test_table_rows_take_the_label_and_its_lines_of_figures():
    assert is_figure_line("34,229 $") and is_figure_line("$") and is_figure_line("(4.2) %")
    assert not is_figure_line("Net sales") and not is_figure_line("")
    start = TABLE.index("Net sales")
    e = row_end_after(TABLE, start)
    assert TABLE[start:e] == "Net sales\n$\n34,229 $\n35,355"
    e2 = row_end_after(TABLE, e)
    assert TABLE[e:e2] == "\nCost of sales\n19,232\n18,795"
    e3 = row_end_after(TABLE, e2)
    assert TABLE[start:e3].endswith("Operating income\n6,539\n7,369")
    assert row_end_before(TABLE, e3) == e2
    assert row_end_before(TABLE, e2) == e
    # inside a row: back to the end of the row before it
    assert row_end_before(TABLE, TABLE.index("34,229")) == start - 1


def test_pipe_table_rows_are_lines():
    text = "| a | b |\n| 1 | 2 |\n| 3 | 4 |\n"
    assert upto(text, row_end_after(text, 0)) == "| a | b |"


def test_extend_and_shrink_by_name_never_empty_the_span():
    start = TABLE.index("Net sales")
    end = extend_end(TABLE, start, start, "row")
    assert TABLE[start:end] == "Net sales\n$\n34,229 $\n35,355"
    bigger = extend_end(TABLE, start, end, "row")
    assert shrink_end(TABLE, start, bigger, "row") == end
    assert shrink_end(TABLE, start, end, "row") == end  # one row left: the end stays
    assert shrink_end(TABLE, start, end, "word") < end
    with pytest.raises(ValueError):
        extend_end(TABLE, 0, 0, "chapter")


def test_typed_string_finds_the_next_occurrence_with_smart_case_and_wraps():
    text = "net sales rose. Net sales fell. NET SALES held."
    assert find_next(text, "Net sales", 0) == 16  # an upper-case letter: exact case
    assert find_next(text, "net sales", 1) == 16  # all lower case: any case
    assert find_next(text, "net sales", 17) == 32
    assert find_next(text, "net sales", 33) == 0  # wraps to the start
    assert find_next(text, "Net sales", 17) == 16  # wraps to the only exact match
    assert find_next(text, "revenue", 0) is None and find_next(text, "", 0) is None
