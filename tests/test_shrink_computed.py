"""The shrink for computed answers and tables (verify/shrink.py with evidence/): the shortest span
holding the rows a computed figure comes from (sum, ratio, percentage change, ratio to an
average, within the answer's rounding), in the columns of the years the question names, with
the table's header when it fits; reaching around the passage only when it cannot hold them;
and "fit in one chunk" against chonkie's own chunk boundaries."""

from __future__ import annotations

import pytest

from mtcb_curate.evidence import derivations, parse_figures
from mtcb_curate.verify.shrink import chunks_holding, plan_evidence, plan_fit, plan_shrink

# An income statement as PyMuPDF extracts a 10-K: one cell a line, the years as a header.
INCOME = ("Consolidated Statements of Operations\n(in millions, except per share data)\n"
          "2017\n2016\n2015\n"
          "Net product sales\n$\n118,573\n$\n94,665\n$\n79,268\n"
          "Net service sales\n59,293\n41,322\n27,738\n"
          "Total net sales\n177,866\n135,987\n107,006\n"
          "Cost of sales\n111,934\n88,265\n71,651\n"
          "Fulfillment\n25,249\n17,619\n13,410\n"
          "Operating income\n4,106\n4,186\n2,233\n"
          "Net income\n$\n3,033\n$\n2,371\n$\n596\n")
# The balance sheet that follows it in the filing.
BALANCE = ("Consolidated Balance Sheets\n(in millions)\n2017\n2016\n"
           "Cash and cash equivalents\n$\n20,522\n$\n19,334\n"
           "Inventories\n16,047\n11,461\n"
           "Property and equipment, net\n48,866\n29,114\n"
           "Total assets\n$\n131,310\n$\n83,402\n"
           "Accounts payable\n$\n34,616\n$\n25,309\n")


def test_percentage_change_takes_the_named_row_and_the_header():
    q = "What is the year-over-year change in revenue from FY2016 to FY2017 (in percents, one decimal place)?"
    out = plan_shrink(INCOME, "30.8%", q)
    p = out.proposal
    assert p is not None and p.computed, out.reason
    assert "percentage change" in p.computed[0] and "(177,866 - 135,987) / 135,987" in p.computed[0]
    assert "Total net sales\n177,866\n135,987\n107,006" in p.text and p.with_header is True
    assert p.text.startswith("Consolidated") and "Cost of sales" not in p.text
    assert INCOME[p.start:p.end] == p.text and "computed:" in p.reason


def test_ratio_and_percent_of_two_rows_of_one_year():
    q = "What is the FY2017 operating margin?"  # operating income / net sales
    p = plan_shrink(INCOME, "2.3%", q).proposal
    assert p is not None and "4,106 / 177,866 x 100" in p.computed[0]
    assert "Operating income\n4,106" in p.text and "Total net sales" in p.text and "Net income" not in p.text
    # the same figures in 2016 give 3.1 %: the 2017 column is the one the question names
    assert plan_shrink(INCOME, "3.1%", q).proposal is None


def test_sum_of_two_rows():
    q = "What were Amazon's FY2017 net product sales plus net service sales?"
    p = plan_shrink(INCOME, "$177,866 million", q).proposal  # written as such: found, not computed
    assert p is not None and not p.computed and "Total net sales\n177,866" in p.text
    p = plan_shrink(INCOME, "$171,227 million", "What were FY2017 net service sales plus cost of sales?").proposal
    assert p is not None and p.computed and "sum: 59,293 + 111,934" in p.computed[0]
    assert p.text.startswith("Consolidated") and p.text.endswith("Cost of sales\n111,934\n88,265\n71,651")


def test_rounding_to_the_answers_precision():
    q = "What is the FY2017 return on assets: net income / total assets?"
    text = INCOME + BALANCE
    # 3,033 / 131,310 = 2.3098 %: "2.31%" and "2.3%" hold, "2.32%" does not
    assert plan_shrink(text, "2.31%", q).proposal is not None
    assert plan_shrink(text, "2.3%", q).proposal is not None
    out = plan_shrink(text, "2.32%", q)
    assert out.proposal is None and "2.32%" in out.reason
    # a one-digit figure is never taken as computed: any table meets "0.02" by chance
    assert plan_shrink(text, "0.02", q).proposal is None


def test_a_computed_figure_reaches_for_the_next_statement_only_when_needed():
    q = ("What is the FY2017 fixed asset turnover ratio? Fixed asset turnover ratio is defined as: FY2017 revenue / "
         "(average PP&E between FY2016 and FY2017). Round to two decimal places.")
    filler = "".join(f"Note line {i} about the statements.\n" for i in range(12))
    document = "Annual report\n" + INCOME + filler + BALANCE + filler
    start = document.index("Consolidated Balance")
    end = start + len(BALANCE.rstrip())
    # the balance sheet alone cannot hold it: revenue is in the income statement above
    assert plan_shrink(document[start:end], "4.56", q).proposal is None
    out = plan_evidence(document, start, end, "4.56", q, reach=2048)
    p = out.proposal
    assert p is not None and p.outside > 0, out.reason
    assert "as the question defines it: 177,866 / ((29,114 + 48,866) / 2)" in p.computed[0]
    assert document[p.doc_start:p.doc_end] == p.text
    assert p.text.startswith("Total net sales") and p.text.endswith("Property and equipment, net\n48,866\n29,114")
    assert "reaches out of the passage" in p.reason
    # the proposal's characters outside the passage: never more than the proposal holds
    overlap = max(0, min(p.doc_end, end) - max(p.doc_start, start))
    assert p.outside == len(p.text) - overlap <= len(p.text)
    # a figure only the statement above holds: all of the proposal is outside, the gap is not
    apart = plan_evidence(document, start, end, "$177,866 million", "What were FY2017 total net sales?",
                          reach=2048).proposal
    assert apart is not None and apart.doc_end < start, apart
    assert apart.outside == len(apart.text)
    # a figure the passage holds: the proposal stays inside it
    inside = plan_evidence(document, start, end, "$16,047 million", "What were FY2017 inventories?",
                           reach=2048).proposal
    assert inside is not None and inside.outside == 0 and inside.text.endswith("Inventories\n16,047\n11,461")


def test_derivations_lists_every_form_and_the_sums_of_three():
    figures = parse_figures("Operating profit\n11,512\nDepreciation and amortization\n2,763\n"
                            "Capital spending\n(5,207)\nNet revenue\n86,392\n")
    target = parse_figures("16.5%")[0]
    assert not any(d.operation == "sum to a percentage" for d in derivations(target, figures))  # only when asked
    got = derivations(target, figures, sums_of_three=True)
    assert any(d.operation == "sum to a percentage" and "(11,512 + 2,763) / 86,392" in d.formula for d in got)
    target = parse_figures("$9068.00")[0]
    assert any(d.operation == "sum less one" and "11,512 + 2,763 - 5,207" in d.formula
               for d in derivations(target, figures, sums_of_three=True))


def test_ebitda_margin_is_computed_only_when_the_question_adds():
    text = ("Income statement\n2022\n2021\nNet Revenue\n86,392\n79,474\nOperating Profit\n11,512\n11,162\n"
            "Cash flows\n2022\n2021\nDepreciation and amortization\n2,763\n2,710\n")
    q = "What is the FY2022 unadjusted EBITDA % margin? EBITDA is operating income plus D&A."
    out = plan_shrink(text, "16.5%", q)
    assert "(11,512 + 2,763) / 86,392 x 100" in out.computed[0]
    assert out.proposal is None and "already minimal" in out.reason  # every row is needed
    # the same figures for a question that adds nothing: a sum of three is not tried
    out = plan_shrink(text, "16.5%", "What is the FY2022 operating margin?")
    assert not out.computed and "not in the passage, nor computable" in out.reason


# -- fit in one chunk, against chonkie's own boundaries ------------------------------------------------


@pytest.fixture(scope="module")
def chunked():
    """A document of paragraphs and a table, cut by chonkie's RecursiveChunker(chunk_size=512)."""
    from mtcb_curate.preview.chunkers import chunk_corpus, parse_spec

    prose = "".join(f"Paragraph {i} says that the company did many ordinary things in year {2000 + i}.\n"
                    for i in range(40))
    document = prose + INCOME + prose
    chunks = chunk_corpus(parse_spec("recursive:512"), {"DOC": document})
    spans = list(zip(chunks.starts, chunks.ends))
    assert all(document[a:b] == t for (a, b), t in zip(spans, chunks.texts))  # chonkie's own offsets
    return document, spans, chunks.texts


def test_fit_proposes_the_largest_part_inside_one_chonkie_chunk_that_holds_the_answer(chunked):
    document, spans, texts = chunked
    # a passage from the prose before the table through the net sales row: cut by a boundary
    start = document.index("Paragraph 30")
    end = document.index("107,006") + len("107,006")
    assert not chunks_holding(spans, start, end)
    q = "What were the total net sales in FY2017?"
    out = plan_fit(document, start, end, "$177,866 million", q, [("recursive:512", spans)])
    p = out.proposal
    assert p is not None, out.reason
    assert "177,866" in p.text and document[p.doc_start:p.doc_end] == p.text
    held_by = chunks_holding(spans, p.doc_start, p.doc_end)
    assert len(held_by) == 1 and p.text in texts[held_by[0]]  # MTCB's own test: a substring of the chunk
    assert f"chunk {held_by[0]} of recursive:512" in p.reason and "counted from 0" in p.reason
    # the largest such part: every whole line of the passage inside that chunk
    a, b = spans[held_by[0]]
    passage = document[start:end]
    assert p.text == passage[passage.index(p.text):][:len(p.text)]
    assert document[max(start, a):min(end, b)].strip().startswith(p.text.split("\n")[0])


def test_fit_says_why_when_no_one_chunk_holds_what_the_answer_needs(chunked):
    document, spans, _ = chunked
    start = document.index("Paragraph 5")
    end = document.index("107,006") + len("107,006")
    # the answer needs a figure of the prose far above and one of the table: never in one chunk
    a_year = "Paragraph 5 says"
    out = plan_fit(document, start, end, "Net sales were 177,866 and the count was 5 and 2005", a_year,
                   [("recursive:512", spans)])
    assert out.proposal is None and "no one chunk of recursive:512 holds" in out.reason
    assert "counted from 0" in out.reason
    # a passage already inside one chunk: nothing to fit
    inside = document.index("Paragraph 31")
    out = plan_fit(document, inside, inside + 40, "ordinary things", "what things?", [("recursive:512", spans)])
    assert out.proposal is None and "already lies inside one chunk" in out.reason


def test_a_figure_computed_as_the_question_defines_it():
    text = INCOME + BALANCE.replace("Accounts payable", "Accounts payable")
    # DPO = 365 * (average AP) / (COGS + change in inventory): 365 * 29,962.5 / (111,934 + 4,586) = 93.86
    q = ("What is the FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
         "between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and FY2017). Round your "
         "answer to two decimal places.")
    out = plan_shrink(text, "93.86", q)
    assert out.computed and "as the question defines it" in out.computed[0]
    assert "365 * ((25,309 + 34,616) / 2) / (111,934 + (16,047 - 11,461))" in out.computed[0].replace("$ ", "")
    # a one-digit answer is taken too: the definition pins every operand to a named row and year
    q = ("What is the FY2017 return on assets (ROA)? ROA is defined as: FY2017 net income / (average total assets "
         "between FY2016 and FY2017). Round your answer to two decimal places.")
    out = plan_shrink(text, "0.03", q)  # 3,033 / 107,356 = 0.0283
    assert out.computed and "3,033 / ((83,402 + 131,310) / 2)" in out.computed[0].replace("$ ", "")
    assert not plan_shrink(text, "0.05", q).computed  # the definition gives 0.03, not 0.05


# -- a total the filing does not print: sums of the rows of named blocks --------------------------

# A balance sheet as PyMuPDF extracts Corning's: one cell a line, "$" cells, a label holding figures
# of its own, a cell ("2,004") that reads like a year.
CURRENT = ("Consolidated Balance Sheets\n(in millions, except share and per share amounts)\n2022\n2021\n"
           "Assets\nCurrent assets:\n"
           "Cash and cash equivalents\n $\n1,671 $\n2,148\n"
           "Trade accounts receivable, net of doubtful accounts - $40 and $42\n\u00a0 \u00a0\n1,721\u00a0 \u00a0\n2,004\u00a0\n"
           "Inventories (Note 5)\n2,904\n2,481\n"
           "Other current assets (Notes 10 and 14)\n1,157\n1,026\n"
           "Total current assets\n7,453\n7,659\n"
           "Property, plant and equipment, net\n15,371\n15,804\n"
           "Total Assets\n $\n29,499 $\n30,154\n"
           "Liabilities and Equity\nCurrent liabilities:\n"
           "Current portion of long-term debt and short-term borrowings (Note 11)\n $\n224 $\n55\n"
           "Accounts payable\n1,804\n1,612\n"
           "Other accrued liabilities (Notes 10 and 13) and other long label words\n3,147\n3,139\n"
           "Total current liabilities\n5,175\n4,806\n"
           "Long-term debt (Note 11)\n6,687\n6,989\n")
WORKING = ("Does Corning have positive working capital based on FY2022 data? If working capital is not a useful "
           "or relevant metric for this company, then please state that and explain why.")


def test_working_capital_as_a_sum_of_some_rows_of_the_blocks_the_question_names():
    answer = ("Yes. Corning had a positive working capital amount of $831 million by FY 2022 close. This answer "
              "considers only operating current assets and current liabilities that were clearly shown.")
    out = plan_shrink(CURRENT, answer, WORKING)
    p = out.proposal
    assert p is not None and p.computed, out.reason
    # receivables + inventories + other current assets - accounts payable - other accrued liabilities
    assert "sum of named rows: 1,721 + 2,904 + 1,157 - 1,804 - 3,147 = 831" in p.computed[0]
    assert p.text.startswith("Trade accounts receivable") and p.text.endswith("3,147\n3,139")
    # the 2021 column gives another total: the year the question names picks the column
    assert "1,721" in p.text and not plan_shrink(CURRENT, "$831 million", WORKING.replace("2022", "2021")).computed
    # the whole difference of the printed totals is an ordinary difference, found first
    out = plan_shrink(CURRENT, "$2,278 million", WORKING)
    assert out.computed and "difference: 7,453 - 5,175" in out.computed[0]


def test_a_sum_of_named_rows_only_when_the_question_names_the_total():
    out = plan_shrink(CURRENT, "$831 million", "What were Corning's FY2022 current assets and liabilities?")
    assert not out.computed and out.proposal is None and "nor computable" in out.reason
    # no block of that name in the text: nothing to sum
    no_blocks = CURRENT.replace("Current assets:\n", "").replace("Current liabilities:\n", "")
    assert not plan_shrink(no_blocks, "$831 million", WORKING).computed


def test_the_signed_sum_guard_refuses_chance_and_ambiguous_matches():
    from mtcb_curate.evidence.compute import MAX_SUM_CHANCE, signed_sums, sum_chance

    def figs(*values: str):
        return [parse_figures(v)[0] for v in values]

    assets, liabilities = figs("1,721", "2,904", "1,157", "1,671"), figs("1,804", "3,147", "224")
    d = signed_sums(parse_figures("$831")[0], [(assets, 1), (liabilities, -1)])
    assert d is not None and d.operation == "sum of named rows" and d.formula.endswith("= 831")
    # few significant digits: "8" or "80" is met by some choice of rows in any balance sheet
    assert signed_sums(parse_figures("$83")[0], [(assets, 1), (liabilities, -1)]) is None
    # many small rows against a coarse target: the expected chance matches exceed the bound
    many = figs(*[str(v) for v in (12, 31, 27, 44, 19, 23, 38, 15)])
    assert sum_chance([f.value for f in many] * 1, [0] * 4 + [1] * 4, 0.5) > MAX_SUM_CHANCE
    assert signed_sums(parse_figures("101")[0], [(many[:4], 1), (many[4:], -1)]) is None
    # two choices of rows give the target: ambiguous, refused
    twice = figs("1,000", "2,000", "3,000", "500")
    assert signed_sums(parse_figures("$2,500")[0], [(twice, 1), (figs("500", "777"), -1)]) is None
    # a sum must take a row of every block
    assert signed_sums(parse_figures("$1,721")[0], [(assets, 1), (liabilities, -1)]) is None


def test_fit_judges_the_answer_as_the_shrink_does_with_the_year_header_outside_the_passage():
    # DPO as the question defines it: the passage holds every operand but not the income
    # statement's year header above it, which tells the FY2017 column
    q = ("What is the FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
         "between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and FY2017). Round your "
         "answer to two decimal places.")
    filler = "".join(f"Note line {i} about the statements.\n" for i in range(12))
    document = "Annual report\n" + filler + INCOME + BALANCE + filler
    start, end = document.index("Total net sales"), document.index("25,309") + len("25,309")
    assert plan_evidence(document, start, end, "93.86", q, reach=2048).computed  # the shrink computes it
    # a boundary before the cost of sales row: the part from there holds every operand
    cut = document.index("Cost of sales")
    out = plan_fit(document, start, end, "93.86", q, [("recursive:512", [(0, cut), (cut, len(document))])],
                   reach=2048)
    p = out.proposal
    assert p is not None, out.reason
    assert p.text.startswith("Cost of sales") and p.text.endswith("25,309") and p.doc_start == cut
    assert "as the question defines it" in p.computed[0] and "chunk 1 of recursive:512" in p.reason
    assert "inventori" not in p.reason  # the rows' names are not listed as what it holds
    # a boundary between the statements: no part can, and the reason says where each figure is
    cut = document.index("Consolidated Balance")
    out = plan_fit(document, start, end, "93.86", q, [("recursive:512", [(0, cut), (cut, len(document))])],
                   reach=2048)
    assert out.proposal is None and "nor computable" not in out.reason
    assert "111,934 in chunk 0" in out.reason and "16,047 in chunk 1" in out.reason
    assert "as the question defines it" in out.computed[0]
