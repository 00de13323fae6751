"""The evidence package: figures as numbers, computed answers, stems, paraphrase, and the support
verdict with the missing parts named. Cases drawn from the shared filings (FinanceBench answers),
SQuAD and novel-style human answers."""

from __future__ import annotations

import pytest

from mtcb_curate.evidence import (
    FigureKind,
    FuzzyParaphraser,
    Match,
    SupportVerdict,
    content_stems,
    derive,
    figure_label,
    find_figure,
    parse_figures,
    same_figure,
    stated_scale,
    support,
)


def one(text: str, **kw):
    figs = parse_figures(text, **kw)
    assert len(figs) == 1, figs
    return figs[0]


@pytest.mark.parametrize("text,value,kind", [
    ("$12345.00", 12345, FigureKind.CURRENCY),
    ("12,345", 12345, FigureKind.NUMBER),
    ("(4.2) %", -4.2, FigureKind.PERCENT),
    ("-5.1%", -5.1, FigureKind.PERCENT),
    ("($1,234)", -1234, FigureKind.CURRENCY),
    ("17 percent", 17, FigureKind.PERCENT),
    ("FY22", 2022, FigureKind.YEAR),
    ("FY 2021", 2021, FigureKind.YEAR),
    ("fiscal year 2020", 2020, FigureKind.YEAR),
    ("fiscal 2022", 2022, FigureKind.YEAR),
    ("2019", 2019, FigureKind.YEAR),
])
def test_figures_parse_as_numbers(text, value, kind):
    f = one(text)
    assert (f.value, f.kind) == (value, kind)
    assert text[f.start:f.end] == f.text


def test_scale_words_and_table_headings():
    assert one("$1.2 billion").scale == 1e9
    assert one("$450M").scale == 1e6
    figs = parse_figures("(in millions, except per share data)\nNet sales\n$\n34,229 $\n35,355")
    assert [(f.value, f.scale, f.scale_source) for f in figs] == [(34229, 1e6, "context"), (35355, 1e6, "context")]
    assert stated_scale("What is the FY2022 capex (in USD millions) for 3M?") == 1e6
    assert stated_scale("Answer in USD thousands.") == 1e3


@pytest.mark.parametrize("text", ["Note 16", "Item 8.", "(1) see below", "December 31", "3M", "Q2", "10th", "cl100k"])
def test_references_markers_days_and_glued_words_are_not_figures(text):
    assert parse_figures(text, years=False) == []


def test_fiscal_year_is_a_year_never_the_figure_22():
    a = one("FY22")
    assert a.is_year and not same_figure(one("22"), a)
    assert not find_figure(one("22"), parse_figures("Revenue in FY22 rose"))


def test_equal_within_rounding_and_across_scales():
    assert same_figure(one("$12345.00"), one("12,345"))
    assert same_figure(one("$1.2 billion"), parse_figures("(in millions)\n1,200")[0])
    assert same_figure(one("$1.2 billion"), parse_figures("(in millions)\n1,234")[0])
    assert not same_figure(one("$1.2 billion"), parse_figures("(in millions)\n1,300")[0])
    assert same_figure(one("0.9%"), one("(0.9)"))
    # the passage must not be coarser than the answer
    assert not same_figure(one("24.6%"), one("25 %"))
    assert not same_figure(one("5%"), one("$5"))
    # "$5466.00" in USD millions is a thousands table's 5,466,312
    netflix = parse_figures("(in thousands, except share data)\nTotal current liabilities\n5,466,312")[0]
    assert same_figure(one("$5466.00", default_scale=1e6), netflix)
    assert not same_figure(one("$5466.00"), netflix)


def test_derivation_of_a_percentage_change_names_its_operands():
    passage = "(in millions)\nTotal net sales\n107,006\n135,987\n177,866\nOperating expenses"
    d = derive(one("30.8%"), parse_figures(passage), passage=passage, about="year-over-year change in revenue")
    assert d is not None and d.operation == "percentage change"
    assert [f.text for f in d.operands] == ["177,866", "135,987"]
    assert d.labels == ("Total net sales", "Total net sales") and d.related == 2
    assert "(177,866 - 135,987) / 135,987" in d.describe()


def test_derivations_sum_ratio_average():
    figs = parse_figures("Operating income 7,679 and depreciation 1,389")
    assert derive(one("$9068.00"), figs).operation == "sum"
    figs = parse_figures("Cost 16,830; inventory 2,721 and 2,667")
    d = derive(one("6.25"), figs)
    assert d.operation == "ratio to an average" and d.operands[0].value == 16830
    assert derive(one("93.86"), parse_figures("Cost 16,830; inventory 2,721 and 2,667")) is None


def test_figure_label_reads_the_row_above_one_cell_per_line():
    text = "Cash and cash equivalents\n $\n1,671 $\n2,148\nInventories (Note 5)\n \n2,904"
    figs = parse_figures(text)
    assert figure_label(text, figs[0]) == "Cash and cash equivalents"
    assert figure_label(text, figs[-1]) == "Inventories (Note 5)"


def test_stems_meet_word_forms():
    assert content_stems("Who founded the companies?") == content_stems("founding company")


class StubParaphraser:
    """A paraphrase measure that knows one synonym pair: isolates the verdict's rules."""

    name = "stub"

    def __init__(self, pairs):
        self.pairs = pairs

    def best(self, words, passage):
        return [Match(w, self.pairs.get(w, ""), 1.0 if w in self.pairs else 0.0, w in self.pairs) for w in words]

    def says(self, question, answer, passage):
        return None


def test_support_finds_figures_as_numbers():
    s = support("$12345.00", "Total revenue was 12,345 in 2022.", "What was total revenue?")
    assert s.verdict == SupportVerdict.SUPPORTED and s.figures[0].found.text == "12,345"


def test_support_names_a_missing_figure():
    s = support("Revenue grew 5.1%.", "Revenue was 100 in 2021 and 120 in 2022.", "How much did revenue grow?",
                paraphrase=False)
    assert s.verdict == SupportVerdict.UNSUPPORTED
    assert "figure 5.1% not in the passage and not computable from its figures" in s.missing


def test_support_accepts_a_computed_answer_and_says_how():
    s = support("20%", "Revenue was 100 in 2021 and 120 in 2022.", "By how much did revenue grow?")
    assert s.supported and s.figures[0].derivation.operation == "percentage change"


def test_support_paraphrase_clears_only_through_the_measure():
    passage = "The physician was sent for at once."
    s = support("a doctor", passage, "Who was called?", paraphraser=StubParaphraser({"doctor": "physician"}))
    assert s.verdict == SupportVerdict.SUPPORTED and s.words[0].how == "paraphrase" and s.method == "stems+stub"
    s = support("a doctor", passage, "Who was called?", paraphraser=StubParaphraser({}))
    assert s.verdict == SupportVerdict.UNSUPPORTED and "doctor" in s.reason()


def test_support_words_the_question_holds_are_given():
    s = support("The effective tax rate of Corning changed from 20% in FY2021 to 23% in FY 2022.",
                "2022 2021\nEffective tax rate 23% 20%", "How much has the effective tax rate of Corning changed between "
                "FY2021 and FY2022?", paraphrase=False)
    assert s.verdict == SupportVerdict.SUPPORTED


def test_yes_no_answers_are_judged_on_their_figures_only():
    assert support("Yes", "anything", "Did it?").verdict == SupportVerdict.UNKNOWN
    s = support("Yes, change in PPNE was positive year over year", "PP&E 13,745 13,900", "Did Pfizer grow PPNE?",
                paraphrase=False)
    assert s.supported
    s = support("No, CAPEX/Revenue Ratio: 5.1%", "Net sales 34,229", "Is 3M capital-intensive?", paraphrase=False)
    assert not s.supported


def test_question_years_missing_are_notes_not_the_verdict():
    s = support("$1,749", "Purchases of PP&E (1,749)", "What is the FY2022 capital expenditure?")
    assert s.supported and s.notes == ("the question's FY2022 is not in the passage",)


def test_fuzzy_fallback_is_named():
    s = support("its colour", "The color of the sky", None, paraphraser=FuzzyParaphraser())
    assert s.method == "stems+fuzzy" and s.supported and s.words[0].how == "paraphrase"
    s = support("its colour", "The weight of the stone", None, paraphraser=FuzzyParaphraser())
    assert not s.supported


class SaysParaphraser(StubParaphraser):
    """Knows no word, but says the whole answer is in the passage's sentence."""

    def says(self, question, answer, passage):
        return Match(answer, passage, 0.9, True)


def test_a_whole_answer_said_in_other_words_clears_the_word_rule():
    passage = "Captain Ahab flew into a terrible rage when the mate refused."
    q = "How did Ahab react to the refusal?"
    assert not support("He became furious.", passage, q, paraphraser=StubParaphraser({})).supported
    s = support("He became furious.", passage, q, paraphraser=SaysParaphraser({}))
    assert s.supported and s.said.phrase == passage
    # never a missing figure
    assert not support("He paid $40.", passage, q, paraphraser=SaysParaphraser({})).supported


def test_a_figure_tied_to_a_year_needs_that_year_in_the_passage():
    table = "(in millions)\n2022\n2021\nNet sales\n14,189\n14,082"
    q = "What were net sales in FY2019?"
    s = support("$14,189 million in 2019", table, q, paraphrase=False)
    assert not s.supported and "year 2019 not in the passage" in s.missing
    assert support("$14,189 million in 2022", table, "What were net sales in FY2022?", paraphrase=False).supported


def test_names_are_matched_by_spelling_not_by_embedding():
    class Everything(StubParaphraser):
        def best(self, words, passage):  # an embedding that finds every word
            return [Match(w, "Egypt", 0.9, True) for w in words]

    s = support("Israel", "Egypt and Syria attacked on Yom Kippur.", "Who received American aid?",
                paraphraser=Everything({}))
    assert not s.supported
