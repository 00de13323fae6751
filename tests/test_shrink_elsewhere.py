"""Evidence elsewhere in the document (verify/elsewhere.py): when the passage and the text around
it cannot hold what the answer needs inside one chunk, the smallest span of the whole document
inside one chunk (chonkie's own boundaries) that does; on filings shaped as PyMuPDF extracts
10-Ks (one cell a line, "$" cells, statements that follow each other across a chunk boundary,
a five-year summary far away), with the guards against figures that match by chance."""

from __future__ import annotations

import pytest

from mtcb_curate.preview.chunkers import chunk_corpus, parse_spec
from mtcb_curate.verify.elsewhere import DocumentIndex, plan_elsewhere, section_heading
from mtcb_curate.verify.shrink import chunks_holding, plan_evidence

SPEC = "recursive:512"
INCOME = ("CONSOLIDATED STATEMENTS OF OPERATIONS\n(Amounts in millions)\n2019\n2018\n"
          "Product sales\n$\n1,975\n$\n2,255\n"
          "Subscription, licensing, and other revenues\n4,514\n5,245\n"
          "Total net revenues\n6,489\n7,500\n"
          "Cost of revenues\n1,739\n2,165\n")
BALANCE = ("CONSOLIDATED BALANCE SHEETS\n(Amounts in millions)\nAt December 31, 2019\nAt December 31, 2018\n"
           "Inventories, net\n32\n43\n"
           "Software development\n322\n264\n"
           "Property and equipment, net\n253\n282\n"
           "Goodwill\n9,764\n9,762\n")
# Item 6 restates both rows side by side, far from the statements.
SUMMARY = ("ITEM 6. SELECTED FINANCIAL DATA\n(Amounts in millions)\n2019\n2018\n"
           "Total net revenues\n6,489\n7,500\n"
           "Property and equipment, net\n253\n282\n")
PROSE = "".join(f"The company discussed topic number {i} at some length in this part of the annual report.\n"
                for i in range(14))
TURNOVER = ("What is the FY2019 fixed asset turnover ratio? Fixed asset turnover ratio is defined as: FY2019 "
            "revenue / (average PP&E between FY2018 and FY2019). Round your answer to two decimal places.")


def chunked(document: str) -> list[tuple[int, int]]:
    chunks = chunk_corpus(parse_spec(SPEC), {"D": document})
    spans = list(zip(chunks.starts, chunks.ends))
    assert all(document[a:b] == t for (a, b), t in zip(spans, chunks.texts))  # chonkie's own offsets
    return spans


def inside_one_chunk(document: str, spans, start: int, end: int) -> bool:
    """MTCB's rule: some chunk's text holds the span's text as a substring (here: the span)."""
    return bool(chunks_holding(spans, start, end))


@pytest.fixture(scope="module")
def filing():
    document = "Annual report\n" + PROSE + SUMMARY + PROSE + PROSE + BALANCE + PROSE[:700] + INCOME + PROSE
    return document, chunked(document)


def test_a_computed_answer_is_found_where_its_rows_stand_together_inside_one_chunk(filing):
    document, spans = filing
    start = document.index("CONSOLIDATED BALANCE")
    end = start + len(BALANCE.rstrip())
    near = plan_evidence(document, start, end, "24.26", TURNOVER, reach=2048)
    p = near.proposal
    assert p is not None and "6,489 / ((282 + 253) / 2)" in p.computed[0]
    assert not inside_one_chunk(document, spans, p.doc_start, p.doc_end)  # the statements: cut by a boundary
    out = plan_elsewhere(document, start, end, "24.26", TURNOVER, [(SPEC, spans)], derivations=near.derivations,
                         why="the span near the passage lies across two chunks")
    far = out.proposal
    assert far is not None, out.reason
    assert far.text == document[far.doc_start:far.doc_end]
    assert far.doc_start >= document.index("ITEM 6.") and far.doc_end <= document.index("ITEM 6.") + len(SUMMARY)
    assert "Total net revenues\n6,489" in far.text and "Property and equipment, net\n253\n282" in far.text
    (k,) = chunks_holding(spans, far.doc_start, far.doc_end)
    a, b = spans[k]
    assert far.text in document[a:b]
    assert "as the question defines it: 6,489 / ((282 + 253) / 2)" in far.computed[0]
    # where it is and why it was chosen
    assert f"chunk {k} of {SPEC}" in far.where and "counted from 0" in far.where
    assert "characters before the passage" in far.where and "ITEM 6. SELECTED FINANCIAL DATA" in far.where
    assert "looked for because the span near the passage lies across two chunks" in far.where
    assert far.outside == len(far.text)


def test_elsewhere_takes_only_the_figures_found_near_the_passage(filing):
    """A chunk whose rows give the same target from other figures is a chance: not taken."""
    document, spans = filing
    decoy = SUMMARY.replace("6,489", "6,490").replace("253\n282", "253\n283")  # 6,490 / 268 = 24.22
    document = document.replace(SUMMARY, decoy)
    spans = chunked(document)
    start = document.index("CONSOLIDATED BALANCE")
    end = start + len(BALANCE.rstrip())
    near = plan_evidence(document, start, end, "24.26", TURNOVER, reach=2048)
    out = plan_elsewhere(document, start, end, "24.26", TURNOVER, [(SPEC, spans)], derivations=near.derivations)
    assert out.proposal is None and "anywhere in the document" in out.reason
    assert "the figures the answer is computed from" in out.reason


def test_a_figure_written_elsewhere_needs_a_word_of_the_question_around_it():
    q = "What is the FY2015 depreciation and amortization % margin for AMD?"
    loan = "The Secured Revolving Line of Credit had a loan balance of $230 million at an interest rate of 4.25%.\n"
    restated = "Depreciation and amortization was 4.2% of net revenue in 2015, down from 2014.\n"
    for i in range(3):  # the words must be rare in the document to anchor anything
        loan += PROSE
    document = "Annual report\n" + PROSE + loan + PROSE + "Net loss\n(660)\n" + PROSE
    spans = chunked(document)
    start = document.index("Net loss")
    end = start + len("Net loss\n(660)")
    out = plan_elsewhere(document, start, end, "4.2%", q, [(SPEC, spans)])
    assert out.proposal is None  # "4.25 %" rounds to 4.2 %, but it is a loan's interest rate
    document = document.replace(PROSE + "Net loss", PROSE + restated + PROSE + "Net loss")
    spans = chunked(document)
    start = document.index("Net loss")
    out = plan_elsewhere(document, start, start + len("Net loss\n(660)"), "4.2%", q, [(SPEC, spans)])
    assert out.proposal is not None and out.proposal.text.startswith("Depreciation and amortization was 4.2%")


def test_an_answer_without_figures_finds_its_words_in_one_chunk():
    segments = ("We are organized into seven reportable segments, as follows:\n"
                "1) Frito-Lay North America;\n2) Latin America;\n3) Europe;\n"
                "4) Africa, Middle East and South Asia; and\n5) Asia Pacific, Australia and New Zealand and China.\n")
    cut = segments.replace("3) Europe;\n", "3) Europe;\n" + PROSE[:600] + "Table of Contents\n")
    document = "Annual report\n" + cut + PROSE * 2 + "Our Divisions\n" + segments + PROSE
    spans = chunked(document)
    start = document.index("We are organized")
    end = document.index("and China.") + len("and China.")
    assert not inside_one_chunk(document, spans, start, end)
    q = "What are the geographies that Pepsico primarily operates in?"
    a = "North America, Latin America, Europe, Africa, Middle East, South Asia, Asia Pacific, Australia, New Zealand, China"
    out = plan_elsewhere(document, start, end, a, q, [(SPEC, spans)])
    p = out.proposal
    assert p is not None and "North America" in p.text and "and China." in p.text
    assert p.doc_start > end and inside_one_chunk(document, spans, p.doc_start, p.doc_end)
    assert "“Our Divisions”" in p.where and "after the passage" in p.where
    assert "holding most of the answer's words" in p.where
    # an answer of fewer than three words of its own: any chunk holds them by chance
    out = plan_elsewhere(document, start, end, "Performance is not measured through operating margin",
                         "Does it have an improving operating margin profile?", [(SPEC, spans)])
    assert out.proposal is None and "fewer than 3 to look for" in out.reason
    # a fifth of the answer's words nowhere in the document: no span holds enough of them
    out = plan_elsewhere(document, start, end, a + ", Antarctica, Greenland, Atlantis, Lemuria, Hyperborea", q,
                         [(SPEC, spans)])
    assert out.proposal is None


def test_the_index_and_the_heading():
    text = "ITEM 8. FINANCIAL STATEMENTS\nNet sales\n$\n34,229 $\n35,355\nNote 6. Property\nLand 1 1\n"
    index = DocumentIndex(text)
    assert list(index.values_in(0, len(text))) == [8.0, 34229.0, 35355.0, 6.0, 1.0, 1.0]
    assert section_heading(text, text.index("35,355")) == "ITEM 8. FINANCIAL STATEMENTS"
    assert section_heading(text, text.index("Land")) == "Note 6. Property"
    assert section_heading("plain words only\nmore words", 20) == ""
    with pytest.raises(ValueError):
        plan_elsewhere(text, 5, 2, "1", "q", [])


# -- in the app: z and o propose the span elsewhere, and say where ----------------------------------


@pytest.fixture
def filing_source(tmp_path, filing):
    from support import write_source

    document, _ = filing
    start = document.index("CONSOLIDATED BALANCE")  # both statements: cut by a chunk boundary
    passage = document[start:document.index("Cost of revenues")].rstrip()
    pairs = [{"question": TURNOVER, "answer": "24.26", "supporting_passage": passage, "ticker": "ATVI",
              "chunk_index": 0}]
    config = tmp_path / "config.toml"
    config.write_text(f'[preview]\nchunkers = ["{SPEC}"]\nreference_size = 512\n', encoding="utf-8")
    return write_source(tmp_path / "src", [{"ticker": "ATVI", "text": document}], pairs), config


def test_propose_shrink_searches_the_document_only_with_the_chunkers(filing_source, tmp_path):
    from support import opened

    from mtcb_curate.app.findability import DocumentChunks
    from mtcb_curate.app.review import propose_shrink
    from mtcb_curate.preview.settings import PreviewSettings

    src, config = filing_source
    session = opened(src, tmp_path / "ws")
    try:
        near = propose_shrink(session, 0, config=config)  # no chunks: the span around the passage
        assert near.proposal is not None and not near.proposal.where and "Total net revenues" in near.proposal.text
        chunks = DocumentChunks(PreviewSettings.resolve(config))
        far = propose_shrink(session, 0, config=config, chunks=chunks)
        p = far.proposal
        assert p is not None and p.text.startswith("ITEM 6. SELECTED FINANCIAL DATA") and p.where
        assert "lies across chunks" in p.where and f"of {SPEC}" in p.where
    finally:
        session.workspace.close()


@pytest.mark.usefixtures("review_at_once")
async def test_z_and_o_show_the_span_elsewhere_and_where_it_is(filing_source, tmp_path):
    from support import opened, review_app, settle

    from mtcb_curate.tui.screens.review import ReviewScreen
    from mtcb_curate.tui.screens.shrink import ShrinkScreen

    src, config = filing_source
    session = opened(src, tmp_path / "ws")
    async with review_app(session, size=(120, 30), config_path=config) as (app, pilot):
        for key in ("z", "o"):
            await pilot.press(key)
            for _ in range(300):
                await pilot.pause(0.02)
                if isinstance(app.screen, ShrinkScreen):
                    break
            dialog = app.screen
            assert isinstance(dialog, ShrinkScreen), key
            facts = dialog.shown("facts")
            assert "elsewhere in the document:" in facts and "ITEM 6. SELECTED FINANCIAL DATA" in facts
            assert "6,489 / ((282 + 253) / 2)" in facts and dialog.text.startswith("ITEM 6.")
            await pilot.press("escape")
            await settle(app, pilot)
        await pilot.press("z")
        for _ in range(300):
            await pilot.pause(0.02)
            if isinstance(app.screen, ShrinkScreen):
                break
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert session.view(0).passage.startswith("ITEM 6. SELECTED FINANCIAL DATA")
        assert [e.via for e in session.workspace.history()] == ["shrink"]
