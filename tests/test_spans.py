"""Span boundaries for picking a passage by keys (verify/spans.py): word, sentence, line,
paragraph and table-row ends, forwards and back, and the typed-string start."""

from __future__ import annotations

import pytest

from mtcb_curate.verify.spans import (
    extend_end,
    find,
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
    # one row left: a row cannot move back, so a line does (the key always moves) ...
    assert TABLE[start:shrink_end(TABLE, start, end, "row")] == "Net sales\n$\n34,229 $"
    assert shrink_end(TABLE, start, end, "word") < end
    # ... until one word is left: then the end stays (a span is never emptied)
    assert shrink_end(TABLE, start, start + len("Net"), "paragraph") == start + len("Net")
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


# A balance sheet as PyMuPDF extracts a 10-K: every cell on its own line, white-space-only
# lines (NBSP too) between cells, labels that wrap, headings ending in ":", a page join.
SHEET = ("CONSOLIDATED BALANCE SHEETS\n(Amounts in millions)\n \nAt December 31, 2019\n \n"
         "At December 31, 2018\nCurrent assets:\n \n  \n"
         "Cash and cash equivalents\n$\n5,794\n $\n4,225\n"
         "Accounts receivable, net of allowances of $132 and $190, at December 31, 2019 and December\n"
         "31, 2018, respectively\n848\n \n1,035\n"
         "Inventories, net\n32\n\u00a0\u00a0\n43\n"
         "Total current assets\n7,292\n \n6,106\n"
         "27\n\nTable of Contents\nThe accompanying notes are an integral part of these statements.\n")


def test_rows_of_a_table_with_one_cell_per_line_and_blank_cells():
    start = SHEET.index("Cash and cash")
    ends = []
    e = start
    for _ in range(4):
        e = row_end_after(SHEET, e)
        ends.append(e)
    rows = [SHEET[a:b].strip() for a, b in zip([start] + ends, ends)]
    assert rows == ["Cash and cash equivalents\n$\n5,794\n $\n4,225",
                    # a long label wrapped over two lines is one row with its cells
                    "Accounts receivable, net of allowances of $132 and $190, at December 31, 2019 and December\n"
                    "31, 2018, respectively\n848\n \n1,035",
                    "Inventories, net\n32\n\u00a0\u00a0\n43",  # NBSP-only lines are inside the row
                    # the page number is a line of figures; the page join (an empty line) ends the row
                    "Total current assets\n7,292\n \n6,106\n27"]
    # back again, row by row
    assert [row_end_before(SHEET, b) for b in ends[1:]] == ends[:-1]
    # from inside a row's cells: the rest of its cells, then back to the row before it
    inside = SHEET.index("848")
    assert SHEET[:row_end_after(SHEET, inside)].endswith("848\n \n1,035")
    assert row_end_before(SHEET, inside) == ends[0]
    # a heading ending in ":" is a row of its own; the header's years are the cells of its label
    heading = SHEET.index("Current assets:")
    assert SHEET[heading:row_end_after(SHEET, heading)] == "Current assets:"
    top = SHEET.index("(Amounts")
    assert SHEET[top:row_end_after(SHEET, top)] == "(Amounts in millions)"


def test_sentences_in_a_table_end_at_short_lines_and_always_move():
    start = SHEET.index("Cash and cash")
    e = sentence_end_after(SHEET, start)
    assert SHEET[start:e] == "Cash and cash equivalents"
    e2 = sentence_end_after(SHEET, e)
    assert SHEET[e:e2].strip() == "$"
    # shrinking by a sentence or a paragraph inside one table still moves the end back
    end = SHEET.index("4,225") + len("4,225")
    assert start < shrink_end(SHEET, start, end, "sentence") < end
    assert start < shrink_end(SHEET, start, end, "paragraph") < end
    # a paragraph with no boundary before the end of the text: the end grows anyway
    tail = SHEET.index("The accompanying")
    assert extend_end(SHEET, tail, tail, "paragraph") > tail


def test_paragraphs_of_hard_wrapped_prose_end_at_a_short_last_line_or_before_a_heading():
    text = ("Revenue grew in every segment this year, led by the consumer business and by services,\n"
            "while costs rose with inflation in most markets where the company operates.\n"
            "Margins fell.\n"
            "Liquidity\n"
            "Cash flows from operations were strong and the company repaid some of its debt during\n"
            "the year, as described below in more detail in the section that follows this one.\n")
    e = paragraph_end_after(text, 0)
    assert text[:e].endswith("Margins fell.")  # the short last line
    e2 = paragraph_end_after(text, e)
    assert text[e:e2].strip().startswith("Liquidity\nCash flows")  # a heading opens the next one
    assert text[:e2].endswith("this one.")
    # a full-width line that happens to end with a stop does not end the paragraph
    assert text[:e].count("\n") == 2
    assert paragraph_end_before(text, e2) == e and paragraph_end_before(text, e) == 0


def test_typed_string_is_found_as_verification_compares_text():
    text = ("Net\u00a0cash provided by operating activities rose.\nNet cash\nprovided by investing fell.\n"
            "Shareholders\u2019 equity \u2014 total\n")
    a, b = find(text, "Net cash provided", 0)
    assert (a, b) == (0, len("Net\u00a0cash provided"))  # NBSP in the filing, a space typed
    a2, b2 = find(text, "net cash provided", 1)  # lower case: any case; a line break matches a space
    assert text[a2:b2] == "Net cash\nprovided"
    a3, b3 = find(text, "shareholders' equity - total", 0)  # straight quote and hyphen typed
    assert text[a3:b3] == "Shareholders\u2019 equity \u2014 total"
    assert find(text, "NET CASH", 0) is None  # an upper-case letter: exact case
    assert find(text, "   ", 0) is None and find(text, "", 0) is None
    assert find(text, "Net cash", 5) == (text.index("Net cash\n"), text.index("Net cash\n") + 8)
    assert find(text, "Net", len(text) - 3) == (0, 3)  # wraps to the start
    assert find(text, "Net", len(text) - 3, wrap=False) is None


def test_table_rows_for_reading_a_table_extracted_one_cell_a_line():
    from mtcb_curate.verify.spans import table_rows

    rows = table_rows(SHEET, min_lines=5)
    assert rows is not None
    assert "Cash and cash equivalents  $  5,794  $  4,225" in rows
    assert "Inventories, net  32  43" in rows  # NBSP-only lines dropped
    assert table_rows(PROSE) is None  # prose: nothing to gather
