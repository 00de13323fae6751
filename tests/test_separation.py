"""Can the pairs tell chunkers apart? The paired bootstrap, McNemar's exact test and the pairs
needed against hand-computed cases; per-pair outcome flags; evidence density counts; the queue's
outcome filters; the preview's JSON under a seed; the card's section rendered as Markdown."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from support import opened, write_source

from mtcb_curate.app import filters
from mtcb_curate.app.preview import run_preview
from mtcb_curate.hub.card import separation_markdown
from mtcb_curate.preview.chunkers import parse_spec
from mtcb_curate.preview.separation import (DISCRIMINATING, FLAGS, FOUND_BY_ALL, FOUND_BY_NONE, Comparison,
                                            bootstrap_differences, mcnemar_exact, pair_flags, pairs_needed,
                                            separate)
from mtcb_curate.preview.settings import SeparationSettings
from mtcb_curate.stats.density import count_sentences, count_words, density_summary, evidence_counts


# -- McNemar ---------------------------------------------------------------------------------


def test_mcnemar_all_concordant_is_one():
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_all_discordant_one_way():
    # 5 pairs, all found by A only: two-sided exact p = 2 * (1/2)**5.
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)


def test_mcnemar_hand_computed_small_case():
    # b = 1, c = 9: P(X <= 1 | n = 10) = (1 + 10) / 1024; two-sided doubles it.
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar_exact(5, 5) == pytest.approx(1.0)


def test_mcnemar_textbook_example():
    # Agresti, Categorical Data Analysis: approval of the Prime Minister in two surveys,
    # discordant cells 150 (approve -> disapprove) and 86 (disapprove -> approve). The exact
    # two-sided p from the binomial tail, summed here by hand with math.comb.
    b, c = 150, 86
    n = b + c
    tail = sum(math.comb(n, i) for i in range(0, min(b, c) + 1)) / 2 ** n
    assert mcnemar_exact(b, c) == pytest.approx(2 * tail, rel=1e-9)
    assert mcnemar_exact(b, c) < 1e-4  # the textbook's conclusion: approval fell


# -- the paired bootstrap ----------------------------------------------------------------------


def test_bootstrap_all_concordant_is_zero():
    a = np.array([1, 0, 1, 1, 0] * 20)
    low, high, _ = bootstrap_differences(a, a, resamples=500, seed=1)
    assert (low[0], high[0]) == (0.0, 0.0)


def test_bootstrap_all_discordant_one_way_is_that_difference():
    a, b = np.ones(40, dtype=int), np.zeros(40, dtype=int)
    low, high, _ = bootstrap_differences(a, b, resamples=500, seed=1)
    assert (low[0], high[0]) == (1.0, 1.0)
    low, high, _ = bootstrap_differences(b, a, resamples=500, seed=1)
    assert (low[0], high[0]) == (-1.0, -1.0)


def test_bootstrap_matches_the_normal_interval_of_a_paired_difference():
    # 1,000 pairs: 60 found only by A, 40 only by B. The difference 0.02 has standard error
    # sqrt((psi - delta**2) / n) (psi = 0.1 discordant share): the normal 95 % interval is
    # 0.02 +- 1.96 * 0.00998 = (0.00044, 0.03956). The bootstrap's must be close to it.
    n = 1000
    a, b = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    a[:60] = 1
    b[60:100] = 1
    a[100:700] = b[100:700] = 1
    low, high, method = bootstrap_differences(a, b, resamples=4000, seed=3)
    se = math.sqrt((0.1 - 0.02 ** 2) / n)
    assert method == "BCa"
    assert low[0] == pytest.approx(0.02 - 1.959964 * se, abs=0.003)
    assert high[0] == pytest.approx(0.02 + 1.959964 * se, abs=0.003)
    assert low[0] < 0.02 < high[0]


def test_bootstrap_rows_are_independent_comparisons_on_the_same_resamples():
    rng = np.random.default_rng(5)
    A = (rng.random((3, 300)) < 0.6).astype(int)
    B = A.copy()
    B[1, :30] = 1 - B[1, :30]
    B[2] = 1 - A[2]
    low, high, _ = bootstrap_differences(A, B, resamples=1000, seed=9)
    assert (low[0], high[0]) == (0.0, 0.0)  # row 0: every pair concordant
    one_low, one_high, _ = bootstrap_differences(A[1], B[1], resamples=1000, seed=9)
    assert low[1] == pytest.approx(one_low[0]) and high[1] == pytest.approx(one_high[0])


def test_bootstrap_of_the_differences_is_scipys_paired_bootstrap():
    import warnings

    from scipy.stats import bootstrap

    rng = np.random.default_rng(2)
    a = (rng.random(300) < 0.7).astype(np.int8)
    b = a.copy()
    b[:40] = 1 - b[:40]
    low, high, _ = bootstrap_differences(a, b, resamples=1500, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis), paired=True,
                        vectorized=True, n_resamples=1500, method="BCa", rng=np.random.default_rng(4))
    # The same procedure; scipy's paired=True draws its indices in another order: the bounds
    # agree to within a couple of resampling steps (a step is 1/300 here).
    assert low[0] == pytest.approx(ref.confidence_interval.low, abs=2.5 / 300)
    assert high[0] == pytest.approx(ref.confidence_interval.high, abs=2.5 / 300)


def test_bootstrap_refuses_bad_shapes():
    with pytest.raises(ValueError):
        bootstrap_differences(np.ones(3), np.ones(4))


# -- pairs needed (Connor 1987) --------------------------------------------------------------


def test_pairs_needed_hand_computed():
    # psi = 0.1, delta = 0.03, alpha 0.05, power 0.8: z = 1.959964 and 0.841621;
    # (1.959964 * sqrt(0.1) + 0.841621 * sqrt(0.1 - 0.0009))**2 / 0.0009 = 869.7 -> 870.
    assert pairs_needed(0.1, 0.03) == 870
    assert pairs_needed(0.1, -0.03) == 870  # the sign does not matter
    assert pairs_needed(0.2, 0.03) > pairs_needed(0.1, 0.03)  # more discordance, more pairs
    assert pairs_needed(0.1, 0.03, power=0.9) > 870


def test_pairs_needed_cannot_be_said():
    assert pairs_needed(0.02, 0.03) is None  # fewer discordant pairs than the difference
    assert pairs_needed(0.1, 0.0) is None
    assert pairs_needed(0.0, 0.03) is None


# -- per-pair flags and the whole separation ---------------------------------------------------


def test_pair_flags():
    ks = (1, 5, 10)
    assert pair_flags([1, 1], ks) == {FOUND_BY_ALL}
    assert pair_flags([1, 4], ks) == {DISCRIMINATING, FOUND_BY_ALL}  # differ at k=1, both by 10
    assert pair_flags([None, None], ks) == {FOUND_BY_NONE}
    assert pair_flags([2, None], ks) == {DISCRIMINATING}
    assert pair_flags([11, None], ks) == {FOUND_BY_NONE}  # rank 11 is no hit at k <= 10
    assert pair_flags([3], ks) == {FOUND_BY_ALL}  # one chunker never discriminates
    assert pair_flags([], ks) == frozenset()
    # The flags are the queue's filter words.
    for flag in FLAGS:
        f = filters.parse(f"is:{flag}")
        assert f.describe() == f"is:{flag}"


def _ranks(n=200, seed=4):
    rng = np.random.default_rng(seed)
    a = [int(r) if r <= 10 else None for r in rng.integers(1, 14, n)]
    b = [r if rng.random() < 0.8 else (None if r is not None else 2) for r in a]
    c = [None if rng.random() < 0.3 else r for r in a]
    return {"recursive:512": a, "token:512": b, "sentence:512": c}


def test_separate_is_deterministic_under_a_seed_and_the_interval_holds_the_estimate():
    ranks = _ranks()
    ids = list(range(100, 300))
    one = separate(ranks, ids, (1, 5, 10), retriever="bm25", seed=7, resamples=800)
    two = separate(ranks, ids, (1, 5, 10), retriever="bm25", seed=7, resamples=800)
    other = separate(ranks, ids, (1, 5, 10), retriever="bm25", seed=8, resamples=800)
    j1, j2, j3 = one.to_json(), two.to_json(), other.to_json()
    for j in (j1, j2, j3):
        j.pop("seconds")
    assert j1 == j2
    assert [c["ci"] for c in j1["comparisons"]] != [c["ci"] for c in j3["comparisons"]]
    assert len(one.comparisons) == 3 * 3  # three chunker pairs at three cut-offs
    for c in one.comparisons:
        assert c.ci_low <= c.difference <= c.ci_high
        assert c.both + c.a_only + c.b_only + c.neither == 200
        a = np.array([r is not None and r <= c.k for r in ranks[c.a]])
        b = np.array([r is not None and r <= c.k for r in ranks[c.b]])
        assert c.recall_a == pytest.approx(a.mean()) and c.difference == pytest.approx(a.mean() - b.mean())
        assert c.a_only == int((a & ~b).sum()) and c.b_only == int((~a & b).sum())
        assert c.mcnemar_p == pytest.approx(mcnemar_exact(c.a_only, c.b_only))
    j = j1
    assert j["bootstrap"]["seed"] == 7 and j["bootstrap"]["resamples"] == 800 and j["retriever"] == "bm25"
    assert j["discriminating"]["@5"] == len(one.discriminating_at(5))
    assert set(j["found_by_none"]) == {pid for pid, f in one.flags().items() if FOUND_BY_NONE in f}
    row = j["per_pair"][0]
    assert sorted(row["hit"]["@10"] + row["miss"]["@10"]) == sorted(ranks)


def test_separate_with_one_chunker_compares_nothing():
    sep = separate({"recursive:512": [1, None, 3]}, [0, 1, 2], (1, 5), retriever="bm25")
    assert sep.comparisons == []
    assert sep.with_flag(FOUND_BY_NONE) == [1]


def _comparison(**kw) -> Comparison:
    base = dict(a="recursive:512", b="token:512", k=5, pairs=31, recall_a=0.5, recall_b=0.45, difference=0.05,
                ci_low=-0.02, ci_high=0.12, both=10, a_only=5, b_only=3, neither=13, mcnemar_p=0.72,
                needed=900, needed_observed=400)
    base.update(kw)
    return Comparison(**base)


def test_plain_language_lines():
    assert _comparison(difference=0.061, ci_low=0.012, ci_high=0.11, mcnemar_p=0.004).line() == (
        "recursive:512 beats token:512 by 6.1 points of recall@5 (95 % CI 1.2 to 11.0; McNemar p = 0.004)")
    # B better: the winner first, the interval as a gain.
    assert _comparison(difference=-0.061, ci_low=-0.11, ci_high=-0.012, mcnemar_p=0.0001).line().startswith(
        "token:512 beats recursive:512 by 6.1 points of recall@5 (95 % CI 1.2 to 11.0; McNemar p < 0.001)")
    line = _comparison().line()
    assert line.startswith("recursive:512 vs token:512: not distinguishable with these 31 pairs at recall@5")
    assert "about 900 pairs would resolve 3 points at 80% power" in line
    assert "too few to differ by 3 points" in _comparison(needed=None).line()


# -- evidence density --------------------------------------------------------------------------


def test_word_and_sentence_counts():
    assert count_words("Net sales were $34,229 million in 2022.") == 7
    assert count_words("  two\twords\n") == 2
    assert count_sentences("") == 0 and count_sentences("   ") == 0
    assert count_sentences("Mr. Smith paid $1.5 million in 2020. He left the U.S. company in FY22.") == 2
    assert count_sentences("Revenue rose. Costs fell! Was it enough? Yes.") == 4
    # A table without full stops is one sentence.
    assert count_sentences("Net sales\n$\n34,229 $\n35,355") == 1


def test_density_summary_calls_out_the_sparse_share():
    passages = ["One sentence here.", "First one. Second one.", "A. B c. D e. F g.",
                "Alpha beta. Gamma delta. Epsilon zeta.", ""]
    words, sentences = evidence_counts(passages)
    assert words.tolist() == [3, 4, 7, 6, 0]
    d = density_summary(words, sentences, [("recursive:16", "chars", 16, np.array([len(p) for p in passages]))])
    assert d["sparse"] == sum(1 for n in sentences if 1 <= n <= 2)
    assert d["sparse_share"] == pytest.approx(d["sparse"] / 5)
    assert d["sentence_counts"]["0"] == 1 and sum(d["sentence_counts"].values()) == 5
    row = d["chunkers"][0]
    assert row["over_chunk"] == sum(1 for p in passages if len(p) > 16)
    assert row["over_half"] == sum(1 for p in passages if len(p) > 8)
    assert d["splitter"].startswith("nupunkt ")


# -- the queue's outcome filters ---------------------------------------------------------------


def test_outcome_filters(tmp_path, ws):
    session = opened(write_source(tmp_path / "src"), ws)
    try:
        assert len(session) == 3
        flags = {0: frozenset({DISCRIMINATING, FOUND_BY_NONE}), 1: frozenset({FOUND_BY_ALL})}
        outcomes = flags.get  # pair 2: not scored by every chunker (None): matches no outcome filter
        assert filters.apply(session, filters.parse("is:discriminating"), outcomes_of=outcomes) == [0]
        assert filters.apply(session, filters.parse("-is:discriminating"), outcomes_of=outcomes) == [1]
        assert filters.apply(session, filters.parse("is:found-by-none"), outcomes_of=outcomes) == [0]
        assert filters.apply(session, filters.parse("is:found-by-all"), outcomes_of=outcomes) == [1]
        assert filters.apply(session, filters.parse("is:discriminating -is:found-by-none"),
                             outcomes_of=outcomes) == []
        assert filters.apply(session, filters.parse("-is:found-by-all"), outcomes_of=outcomes) == [0]
        # Without the findability no pair passes.
        assert filters.apply(session, filters.parse("is:discriminating")) == []
        with pytest.raises(filters.FilterError, match="is:discriminating"):
            filters.parse("is:discrimnating")
    finally:
        session.workspace.close()


# -- the preview's JSON, and the card's section ----------------------------------------------


def _corpus_and_questions():
    import random

    rng = random.Random(3)
    words = ("revenue income tax shares fiscal year ended december operating cash flow net loss asset "
             "liability equity dividend segment margin").split()
    corpus, questions = [], []
    for d in range(5):
        sentences = [" ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + "."
                     for _ in range(90)]
        text = " ".join(sentences)
        corpus.append({"ticker": f"T{d}", "text": text})
        for s in rng.sample(range(90), 12):
            passage = " ".join(sentences[s:s + rng.choice([1, 1, 2, 4])])
            questions.append({"question": "What about " + " ".join(passage.split()[:5]) + "?", "answer": "x",
                              "supporting_passage": passage, "ticker": f"T{d}", "chunk_index": None})
    return corpus, questions


def test_preview_json_reports_every_chunker_pair_under_a_seed(tmp_path, ws):
    corpus, questions = _corpus_and_questions()
    src = write_source(tmp_path / "src", corpus, questions)
    specs = [parse_spec(s) for s in ("recursive:2048", "recursive:256", "token:64")]
    session = opened(src, ws)
    try:
        runs = [run_preview(session, specs, all_pairs=True, separation=SeparationSettings(seed=11, resamples=500))
                .to_json() for _ in range(2)]
        quiet = run_preview(session, specs, all_pairs=True, statistics=False).to_json()
    finally:
        session.workspace.close()
    sep = runs[0]["separation"]
    assert sep["bootstrap"] == {"resamples": 500, "seed": 11, "confidence": 0.95, "method": "BCa", "paired": True,
                                "library": "scipy.stats.bootstrap"}
    assert sep["retriever"] == "bm25" and sep["pairs"] == len(questions)
    pairs = {(c["a"], c["b"]) for c in sep["comparisons"]}
    assert pairs == {("recursive:2048", "recursive:256"), ("recursive:2048", "token:64"),
                     ("recursive:256", "token:64")}
    for c in sep["comparisons"]:
        assert c["ci"][0] <= c["difference"] <= c["ci"][1]
        assert 0.0 <= c["mcnemar_p"] <= 1.0
    for r in runs:
        r.pop("seconds")
        r["separation"].pop("seconds")
    assert runs[0] == runs[1]  # the same seed, the same figures
    ev = runs[0]["evidence"]
    assert ev["pairs"] == len(questions) and len(ev["per_pair"]) == len(questions)
    assert {c["chunker"] for c in ev["chunkers"]} == {s.text for s in specs}
    assert quiet["separation"] is None and quiet["evidence"] is None
    json.dumps(runs[0])  # JSON-ready


def test_card_section_renders_as_hub_markdown():
    from markdown_it import MarkdownIt

    ranks = _ranks()
    sep = separate(ranks, list(range(200)), (1, 5, 10), retriever="bm25", resamples=300).to_json()
    words, sentences = evidence_counts(["Form 10-K, Item 1A. Risk factors.", "One (1) line [x] *y* _z_."])
    ev = density_summary(words, sentences, [("recursive:512", "chars", 512, np.array([30, 20]))])
    md = separation_markdown(sep, ev)
    assert md.startswith("### Does this benchmark separate chunkers?")
    assert "\\" not in md  # no escaped characters: our own text, plain names
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert html.count("<table>") == 4  # evidence per chunker, sentences, recall@5, every cut-off
    assert "<td>recursive:512</td>" in html and "10-K" not in md  # no passage text on the card
    assert "Connor" in md and "McNemar" in md and "HiCBench" in md and "Efron" in md
    # A name that is not a plain spec is escaped, never markup.
    sep["comparisons"][0]["a"] = "<b>x|y</b>"
    sep["chunkers"][0] = "<b>x|y</b>"
    md = separation_markdown(sep, None)
    assert "<b>" not in md and "&lt;b&gt;" in md
    assert separation_markdown(None, None) == ""


def test_plan_card_has_the_separation_section(tmp_path, monkeypatch, ws):
    from mtcb_curate.dataset.model import Status
    from mtcb_curate.hub.card import render_section
    from mtcb_curate.hub.plan import build_plan

    config = tmp_path / "config.toml"
    config.write_text('[preview]\nchunkers = ["recursive:2048", "recursive:256"]\nresamples = 200\n', encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(config))
    corpus, questions = _corpus_and_questions()
    session = opened(write_source(tmp_path / "src", corpus, questions), ws)
    try:
        for pid in range(len(session)):
            session.decide(pid, Status.ACCEPTED)
        # No preview yet: the evidence density alone (nothing is chunked for the card).
        content = build_plan(session, None, repo_id="me/ficha", revision="main").content
        assert "Evidence density" in content.separation and "Paired comparisons" not in content.separation
        assert not (ws / "preview-cache").exists()
        run_preview(session, [parse_spec("recursive:2048"), parse_spec("recursive:256")],
                    cache_dir=session.workspace.path)
        text = render_section(build_plan(session, None, repo_id="me/ficha", revision="main").content)
    finally:
        session.workspace.close()
    section = text[text.index("### Does this benchmark separate chunkers?"):text.index("### Checklist")]
    assert f"over the {len(questions):,} published pairs, ranked by the bm25 retriever" in section
    assert "| recursive:2048 | recursive:256 | 5 |" in section
    assert "\\" not in section


def test_statistics_compare_the_chunkers_as_the_preview_did(tmp_path, ws):
    from mtcb_curate.app.stats import session_stats
    from mtcb_curate.stats.render import text_report

    config = tmp_path / "config.toml"
    config.write_text('[preview]\nchunkers = ["recursive:2048", "recursive:256"]\nseed = 5\nresamples = 400\n',
                      encoding="utf-8")
    corpus, questions = _corpus_and_questions()
    session = opened(write_source(tmp_path / "src", corpus, questions), ws)
    try:
        before = session_stats(session, config=config)
        assert before.separation == {"run": False}
        assert before.evidence["pairs"] == len(questions) and before.evidence["sentences"] is not None
        assert [c["chunker"] for c in before.evidence["chunkers"]] == ["recursive:2048", "recursive:256"]
        report = run_preview(session, [parse_spec("recursive:2048"), parse_spec("recursive:256")], all_pairs=True,
                             cache_dir=session.workspace.path, separation=SeparationSettings(seed=5, resamples=400))
        after = session_stats(session, config=config)
    finally:
        session.workspace.close()
    sep = after.separation
    assert sep["run"] and sep["scored"] == sep["of"] == len(questions)
    assert sep["comparisons"] == report.separation.to_json()["comparisons"]  # the same seed, the same figures
    text = text_report(after)
    assert "evidence density (HiCBench):" in text and "does this set separate the chunkers?" in text
    assert "recursive:2048  recursive:256" in text


def test_dense_retriever_runs_offline_and_is_named(tmp_path, ws, monkeypatch):
    pytest.importorskip("wordllama")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    corpus, questions = _corpus_and_questions()
    session = opened(write_source(tmp_path / "src", corpus, questions), ws)
    try:
        report = run_preview(session, [parse_spec("recursive:2048"), parse_spec("token:64")], retriever="dense",
                             all_pairs=True, separation=SeparationSettings(resamples=300))
    finally:
        session.workspace.close()
    j = report.to_json()
    assert j["retriever"] == "dense" and j["separation"]["retriever"] == "dense"
    assert "wordllama" in j["versions"] and all(c["retriever"] == "dense" for c in j["chunkers"])
    assert "ranked by the dense retriever" in report.to_markdown()
    assert any(c["recall"]["@10"] > 0 for c in j["chunkers"])


def test_statistics_cache_the_sentence_counts(tmp_path, ws, monkeypatch):
    from mtcb_curate.app.stats import session_stats
    from mtcb_curate.stats import density

    corpus, questions = _corpus_and_questions()
    session = opened(write_source(tmp_path / "src", corpus, questions), ws)
    try:
        first = session_stats(session)
        calls = []
        real = density.evidence_counts
        monkeypatch.setattr(density, "evidence_counts", lambda passages: calls.append(len(passages)) or real(passages))
        again = session_stats(session)
        session.edit(0, {"supporting_passage": questions[0]["supporting_passage"] + " Extra sentence here."})
        edited = session_stats(session)
    finally:
        session.workspace.close()
    assert again.evidence == first.evidence
    assert calls == [1]  # only the edited pair was split again
    n = len(questions)  # the edit added one sentence of three words to one pair
    assert edited.evidence["sentences"]["mean"] == pytest.approx(first.evidence["sentences"]["mean"] + 1 / n, abs=0.01)
    assert edited.evidence["words"]["mean"] == pytest.approx(first.evidence["words"]["mean"] + 3 / n, abs=0.01)
