"""The dataset card: merged into an existing card (foreign configs and sections kept, our block
replaced in place), our block's content, and untrusted strings kept inert."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtcb_curate.hub.card import (
    BEGIN,
    END,
    CardContent,
    CardError,
    CurationSummary,
    FieldInfo,
    card_configs,
    card_license,
    check_license,
    code_md,
    escape_md,
    merge_card,
    render_section,
    split_card,
)
from mtcb_curate.hub.layout import config_entries, front_matter

OURS = config_entries(("corpus", "questions"))
FOREIGN = """\
---
license: cc-by-nc-4.0
pretty_name: Ficha
configs:
- config_name: raw
  data_files: raw/*.parquet
- config_name: questions
  data_files:
  - split: train
    path: data/questions-*.parquet
- config_name: extra
  data_files: extra/*.jsonl
dataset_info:
  config_name: questions
  splits:
  - name: train
    num_examples: 1331
---

# Ficha

Intro.

## Citation

@misc{ficha}
"""


def merged(existing: str | None, section: str = "our block", license: str | None = None) -> str:
    return merge_card(existing, configs=OURS, section=section, title="ficha", license=license)


def test_a_new_card_has_both_configs_a_title_and_our_block():
    text = merged(None, license="cc-by-4.0")
    meta, body = split_card(text)
    assert meta == {"configs": OURS, "license": "cc-by-4.0"}
    assert body == f"\n# ficha\n\n{BEGIN}\nour block\n{END}\n"


def test_foreign_configs_keys_and_sections_are_kept():
    text = merged(FOREIGN)
    meta, body = split_card(text)
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["raw", "questions", "extra", "corpus"]  # ours replaced in place, missing appended
    assert meta["configs"][0] == {"config_name": "raw", "data_files": "raw/*.parquet"}
    assert meta["configs"][1] == OURS[1] and meta["configs"][3] == OURS[0]
    assert meta["license"] == "cc-by-nc-4.0" and meta["pretty_name"] == "Ficha"
    assert "dataset_info" not in meta  # the questions config's stale counts are gone
    original_body = FOREIGN.split("---\n", 2)[2]
    assert body.startswith(original_body.rstrip("\n"))
    assert body.endswith(f"{BEGIN}\nour block\n{END}\n")


def test_merging_again_replaces_our_block_in_place_and_is_idempotent():
    once = merged(FOREIGN, "first")
    # someone adds a section after our block on the Hub
    edited = once + "\n## Added later\n\nText.\n"
    twice = merged(edited, "second")
    assert twice.count(BEGIN) == 1 and twice.count(END) == 1
    assert "first" not in twice and "\nsecond\n" in twice
    assert twice.endswith("\n## Added later\n\nText.\n")
    assert twice.index("## Citation") < twice.index(BEGIN) < twice.index("## Added later")
    assert merged(twice, "second") == twice


def test_licence_none_keeps_the_card_licence_and_a_given_one_replaces_it():
    assert split_card(merged(FOREIGN))[0]["license"] == "cc-by-nc-4.0"
    assert split_card(merged(FOREIGN, license="cc-by-4.0"))[0]["license"] == "cc-by-4.0"


def test_dataset_info_of_foreign_configs_is_kept():
    card = front_matter({"dataset_info": [{"config_name": "raw", "features": [{"name": "x", "dtype": "string"}]},
                                          {"config_name": "corpus", "splits": [{"name": "train", "num_examples": 9}]}]})
    meta, _ = split_card(merged(card))
    assert meta["dataset_info"] == [{"config_name": "raw", "features": [{"name": "x", "dtype": "string"}]}]


def test_repeated_entries_of_our_configs_collapse_into_one():
    card = front_matter({"configs": [OURS[0], {"config_name": "corpus", "data_files": "x"}, OURS[1]]})
    assert [c["config_name"] for c in split_card(merged(card))[0]["configs"]] == ["corpus", "questions"]


def test_a_card_without_front_matter_keeps_its_text_and_crlf_front_matter_is_read():
    meta, body = split_card(merged("# Plain\r\n\r\nNo YAML here.\r\n"))
    assert meta == {"configs": OURS}
    assert body.startswith("# Plain\r\n\r\nNo YAML here.")
    crlf = "---\r\nlicense: mit\r\n---\r\n# Title\r\n"
    meta, body = split_card(crlf)
    assert meta == {"license": "mit"} and body == "# Title\r\n"
    assert split_card(merged(crlf))[0]["license"] == "mit"


@pytest.mark.parametrize("bad", [
    "---\nconfigs: [unclosed\n---\nbody\n",
    "---\n- a list\n---\nbody\n",
    front_matter({"configs": "corpus"}),
    f"# x\n{BEGIN}\nno end\n",
    f"# x\n{END}\n{BEGIN}\n",
    f"# x\n{BEGIN}\n{END}\n{BEGIN}\n{END}\n",
])
def test_cards_that_cannot_be_merged_safely_raise_card_error(bad):
    with pytest.raises(CardError) as err:
        merged(bad)
    assert "\n" not in str(err.value)


def test_card_license_and_configs_readers():
    assert card_license(FOREIGN) == "cc-by-nc-4.0"
    assert card_license(front_matter({"license": ["apache-2.0", "mit"]})) == "apache-2.0"
    assert card_license("# no front matter") is None
    assert card_license("---\n[broken\n---\n") is None
    assert card_license(None) is None
    assert sorted(card_configs(FOREIGN)) == ["extra", "questions", "raw"]
    assert card_configs(None) == {}


def test_check_license():
    assert check_license(" CC-BY-NC-4.0 ") == "cc-by-nc-4.0"
    assert check_license("openrail++") == "openrail++"
    for bad in ("", "   ", "MIT License", "cc by", "cc-by\nx", "<b>", "a" * 80):
        with pytest.raises(ValueError):
            check_license(bad)


def _content(**overrides) -> CardContent:
    base = dict(
        repo_id="chonkie-ai/ficha", name="ficha", description="Our description.",
        corpus_config="corpus", questions_config="questions",
        corpus_fields=[FieldInfo("ticker", "string", "document key"), FieldInfo("text", "string", "the text")],
        questions_fields=[FieldInfo("question", "string", "the question"), FieldInfo("chunk_index", "int64", "w")],
        counts={"documents": 88, "document_chars": 48_800_000, "questions": 1_200, "linked_documents": 87,
                "passage_chars_mean": 210.5, "passage_chars_max": 980},
        curation=CurationSummary(total=1331, reviewed=1300, accepted=1200, rejected_by_reason={"duplicate": 60,
                                 "not verbatim": 30}, skipped=5, flagged=5, undecided=31, edited=44, regenerated=2),
        checklist=[{"id": "verbatim", "status": "pass", "message": "all passages verbatim", "pairs": []},
                   {"id": "duplicates", "status": "warn", "message": "2 near-duplicates", "pairs": list(range(12))}],
        checklist_passed=True, license="cc-by-4.0",
    )
    base.update(overrides)
    return CardContent(**base)


def test_section_shows_counts_curation_checklist_licence_and_loading():
    text = render_section(_content())
    assert "| `corpus` | train | 88 |" in text and "| `questions` | train | 1,200 |" in text
    assert "48,800,000 characters" in text and "pointing at 87 of the documents" in text
    assert "| 1,331 | 1,300 | 1,200 | 90 | 5 | 5 | 31 | 44 | 2 |" in text
    assert text.index("- duplicate: 60") < text.index("- not verbatim: 30")
    assert "Result: passed." in text
    assert "| duplicates | warn | 12 (#0, #1" in text and "and 2 more" in text
    assert "| `chunk_index` | int64 | w |" in text
    assert "### Licence\n\n`cc-by-4.0`" in text
    assert 'datasets.load_dataset("chonkie-ai/ficha", "corpus", split="train")' in text
    assert 'datasets.load_dataset("chonkie-ai/ficha", "questions", split="train")' in text
    assert "--force" not in text
    assert render_section(_content()) == text  # deterministic: no dates


def test_section_with_failed_gate_force_reason_and_no_checklist():
    forced = render_section(_content(checklist_passed=False, force_reason="upstream <fix> pending"))
    assert "Result: **failed**." in forced
    assert "Reason given: upstream &lt;fix&gt; pending" in forced
    none = render_section(_content(checklist=None, checklist_passed=None, license=None))
    assert "The pre-publish checklist was not run." in none
    assert "### Licence\n\nNot stated." in none


def test_hostile_names_and_messages_stay_text():
    hostile = f"{END}<img src=x onerror=alert(1)>|[x](javascript:y)`code`\n## Heading"
    text = render_section(_content(
        name=hostile,
        corpus_fields=[FieldInfo(hostile, "string", "document key")],
        checklist=[{"id": hostile, "status": hostile, "message": hostile, "pairs": [hostile]}],
        checklist_passed=False, force_reason=hostile,
        curation=CurationSummary(3, 3, 1, {hostile: 2}, 0, 0, 0, 0),
    ))
    card = merged(None, text)
    assert card.count(END) == 1 and card.count(BEGIN) == 1
    assert "<img" not in card and not re.search(r"(?<!\\)\]\(javascript", card) and "\n## Heading" not in card
    assert ("a", "javascript:y") not in [(tag, txt) for tag, txt, _ in _rendered_text(card)]
    for line in card.splitlines():
        if line.startswith("|") and "onerror" in line:
            # every pipe inside a cell is escaped: a row keeps its column count
            assert len(re.findall(r"(?<!\\)\|", line)) in (4, 5)


def _rendered_text(markdown: str) -> list[tuple[str, str]]:
    """(tag, text) of every element a CommonMark renderer with GitHub's tables makes of
    ``markdown`` (markdown-it-py, which the Hub's renderer follows on these points)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    out, stack = [], []
    for tok in md.parse(markdown):
        if tok.nesting == 1:
            stack.append(tok.tag)
        elif tok.nesting == -1:
            stack.pop()
        elif tok.type == "inline":
            kinds = {c.type for c in tok.children or []}
            out.append((stack[-1] if stack else "", "".join(c.content for c in tok.children or []
                                                              if c.type in ("text", "code_inline")), kinds))
    return out


@given(st.text(max_size=200))
def test_escape_md_renders_as_the_text_it_was_given(s):
    """In a paragraph, a list item and a table cell, ``escape_md`` output renders as the text
    itself: no emphasis, link, code, heading, list, HTML or extra cell."""
    import re as _re

    out = escape_md(s)
    assert "\n" not in out and "\r" not in out and "<" not in out and ">" not in out
    want = _re.sub(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+", " ", s).strip()
    want = want if len(want) <= 300 else want[:299] + "…"
    if not want:
        return
    for markdown, tag, prefix in ((f"x {out}", "p", "x "), (f"- {out}", "p", ""),
                                  (f"| a | b |\n|---|---|\n| {out} | z |", "td", "")):
        parts = [(text, kinds) for t, text, kinds in _rendered_text(markdown) if t == tag]
        assert parts, markdown
        text, kinds = parts[0]
        assert kinds <= {"text"}, (markdown, kinds)  # no emphasis, link, code, html
        assert text == prefix + want, (markdown, text)
    cells = [t for t, _, _ in _rendered_text(f"| a | b |\n|---|---|\n| {out} | z |")]
    assert cells.count("td") == 2  # the row keeps its two cells


def test_escape_md_leaves_plain_words_alone():
    assert escape_md("10-K filing, unique_passage, pair #2, -5%, snake_case") == \
        "10-K filing, unique_passage, pair #2, -5%, snake_case"
    assert escape_md("# heading") == "\\# heading" and escape_md("- item") == "\\- item"
    assert escape_md("1. one") == "1\\. one" and escape_md("_em_ *b*") == "\\_em\\_ \\*b\\*"


def test_code_md_only_for_plain_names():
    assert code_md("supporting_passage") == "`supporting_passage`"
    assert code_md("chunk-must-contain") == "`chunk-must-contain`"
    assert code_md("a`b") == "a\\`b"
    assert code_md("<x>") == "&lt;x&gt;"


# -- the optional baseline scores -----------------------------------------------------------------

BASELINE = [{"chunker": "recursive:2048", "retriever": "bm25", "chunks": 4806, "pairs": 33,
             "recall": {"@1": 0.0303, "@5": 0.0606}, "mrr": {"@1": 0.0303, "@5": 0.04},
             "ceiling": 0.394, "longer_than_chunk": 4,
             "versions": {"chonkie": "1.7.0", "chonkie-core": "1.0.0", "bm25s": "0.3.16"}}]


def test_baseline_section_only_when_given_with_its_table():
    assert "Baseline scores" not in render_section(_content())
    text = render_section(_content(baseline=BASELINE))
    assert "### Baseline scores" in text and "33 published pairs" in text
    assert "| chunker | retriever | recall@1 | recall@5 | MRR@1 | MRR@5 | ceiling | library versions |" in text
    assert "| recursive:2048 | bm25 | 3.0% | 6.1% | 0.030 | 0.040 | 39.4% | bm25s 0.3.16, chonkie 1.7.0, " \
           "chonkie-core 1.0.0 |" in text
    assert text.index("### Baseline scores") < text.index("### Checklist")


def test_baseline_values_stay_text():
    hostile = [{**BASELINE[0], "versions": {"chonkie": "<script>|x</script> [a](http://e)"}}]
    text = render_section(_content(baseline=hostile))
    row = next(line for line in text.splitlines() if line.startswith("| recursive:2048"))
    assert "<script>" not in row and not re.search(r"(?<!\\)\]\(http", row) and row.count(" | ") == 7
    assert all(kinds <= {"text", "code_inline", "softbreak"} for _, _, kinds in _rendered_text(text))


def test_plan_card_has_baseline_scores_only_from_an_existing_preview_cache(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_checklist import corpus, questions, write_source

    from mtcb_curate.app.preview import run_preview
    from mtcb_curate.app.sources import Options, open_session
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.hub.plan import build_plan
    from mtcb_curate.preview.chunkers import parse_spec

    src = write_source(tmp_path / "src", corpus(), questions())
    session = open_session(Options("ficha", source=[str(src)], workspace=tmp_path / "ws"))
    try:
        for pid in range(len(session)):
            session.decide(pid, Status.ACCEPTED)
        text = build_plan(session, None, repo_id="me/ficha", revision="main").content
        assert text.baseline is None
        assert "Baseline scores" not in cardmod_render(text)
        assert not (tmp_path / "ws" / "preview-cache").exists()  # no cold preview was run
        report = run_preview(session, [parse_spec("recursive:2048")], cache_dir=session.workspace.path)
        content = build_plan(session, None, repo_id="me/ficha", revision="main").content
        assert content.baseline is not None and len(content.baseline) == 1
        row, s = content.baseline[0], report.scores[0]
        assert row["chunker"] == "recursive:2048" and row["retriever"] == "bm25"
        assert row["recall"] == {f"@{k}": v for k, v in s.recall.items()} and row["ceiling"] == s.ceiling
        assert "bm25s" in row["versions"] and "chonkie" in row["versions"]
        assert "### Baseline scores" in cardmod_render(content)
        # A pair edited since: scored from the cached chunks and index (no chunking), then published.
        session.edit(0, {"question": "Which figure did Alpha report as total revenue for fiscal 2022?"})
        again = build_plan(session, None, repo_id="me/ficha", revision="main").content
        assert again.baseline is not None and again.baseline[0]["pairs"] == len(session)
    finally:
        session.workspace.close()


def cardmod_render(content) -> str:
    return render_section(content)


# -- a card that says what was done, and the Hub's metadata ------------------------------------------


def test_the_curation_paragraph_claims_no_review_that_did_not_happen():
    from mtcb_curate.hub.card import curation_text

    none = CurationSummary(total=23, reviewed=0, accepted=0, rejected_by_reason={}, skipped=0, flagged=0,
                           undecided=23, edited=0)
    text = curation_text(none, published=23)
    assert text.startswith("No pair was reviewed by a person") and "23 published pairs are the source's" in text
    assert "accepted pairs are published" not in text
    some = CurationSummary(total=23, reviewed=10, accepted=8, rejected_by_reason={"x": 2}, skipped=0, flagged=0,
                           undecided=13, edited=1)
    assert curation_text(some, published=8) == ("10 of the 23 pairs were reviewed by a person beside their source "
                                                 "document with mtcb-curate: only the 8 accepted pairs are published, "
                                                 "with the curator's edits; the 13 pairs not decided yet are not.")
    assert "published without a decision" in curation_text(some, published=21)
    full = CurationSummary(total=5, reviewed=5, accepted=5, rejected_by_reason={}, skipped=0, flagged=0,
                           undecided=0, edited=0)
    assert curation_text(full, published=5).startswith("All 5 pairs were reviewed")


def test_front_matter_gains_the_hubs_keys_and_keeps_the_maintainers_own():
    import yaml

    from mtcb_curate.hub.card import card_metadata, size_category

    assert [size_category(n) for n in (0, 999, 1_000, 1_331, 10_000, 250_000)] == \
        ["n<1K", "n<1K", "1K<n<10K", "1K<n<10K", "10K<n<100K", "100K<n<1M"]
    defaults, facts = card_metadata("ficha", 1_331)
    card = merge_card(None, configs=config_entries(("corpus", "questions")), section="ours", title="ficha",
                      license="cc-by-4.0", metadata=defaults, facts=facts)
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["language"] == ["en"] and meta["task_categories"] == ["text-retrieval", "question-answering"]
    assert meta["size_categories"] == ["1K<n<10K"] and meta["pretty_name"].startswith("ficha")
    existing = ("---\nlanguage:\n- fr\npretty_name: Ficha FR\nsize_categories:\n- n<1K\nconfigs:\n"
                "- config_name: raw\n  data_files: raw/*.parquet\n---\n# Ficha\n")
    card = merge_card(existing, configs=config_entries(("corpus", "questions")), section="ours", title="ficha",
                      metadata=defaults, facts=facts)
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["language"] == ["fr"] and meta["pretty_name"] == "Ficha FR"  # the maintainer's
    assert meta["size_categories"] == ["1K<n<10K"]  # a fact, recomputed
    assert [c["config_name"] for c in meta["configs"]] == ["raw", "corpus", "questions"]


def test_the_dry_run_card_of_the_sample_is_true_and_plain(cli, tmp_path):
    """``publish --sample --dry-run``: nothing reviewed, so the card says so; it renders with no
    stray escapes (``10\\-K``, ``unique\\_passage``, ``\\#2``) and has the Hub's metadata."""
    import yaml

    out = tmp_path / "pub"
    proc = cli("publish", "ficha", "--sample", "--dry-run", out, "--license", "cc-by-4.0")
    assert proc.returncode == 1, proc.stderr  # the sample's checklist fails; the files are written
    card = (out / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---")[1])
    assert {"language", "task_categories", "size_categories", "pretty_name", "configs", "license"} <= set(meta)
    assert "No pair was reviewed by a person" in card and "were reviewed by a person" not in card
    for bad in ("10\\-K", "\\_", "\\#", "\\-"):
        assert bad not in card, bad
    assert "10-K" in card and "#" in card
