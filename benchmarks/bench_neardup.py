"""Benchmark and calibrate near-duplicate detection (``mtcb_curate.neardup``).

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_neardup.py                 # calibration, baseline and speed (a few minutes)
    python benchmarks/bench_neardup.py --calibrate     # only the scorer/threshold table on squad-mtcb
    python benchmarks/bench_neardup.py --speed --sizes 10000,100000 --no-worst
    python benchmarks/bench_neardup.py --hostile       # one 1,000,000-character question (a second)

Three parts:

1. **Calibration** (``--calibrate``): the figures the module docstring quotes. Negatives are
   all pairs of the 1,299 SQuAD questions in ``../shared/data/squad-mtcb`` (``--squad DIR``);
   positives are rewordings of each question made here (seed 1): case and punctuation,
   a stopword dropped or added, a question-word synonym, a trailing clause moved to the front,
   and two of those at once. For rapidfuzz's ``ratio``, ``token_sort_ratio``,
   ``token_set_ratio`` and ``WRatio`` on normalized text, it prints the pairs raised among the
   negatives and the recall of each kind of rewording per threshold; then the same-answer
   pairs, the cross-company template scores on the FinanceBench companies of
   ``../shared/data/questions.jsonl``, and how far the word-level screen falls below the
   character-level score.
2. **Baseline**: a pure-Python loop over every pair of 2,000 synthetic questions (normalize,
   sort words, ``fuzz.ratio`` per pair), against ``find_clusters`` on the same questions; it
   also checks that both raise the same within-document pairs.
3. **Speed** (run first): ``find_clusters`` on synthetic 10-K questions, each case in a fresh
   process (wall time of the call; peak RSS of the process from ``resource.getrusage``, before
   and after the call, which Linux carries over from the parent: hence this part runs while
   the parent is still small). The questions are made by a grammar of 34 templates over 88 companies
   (documents weighted log-normally, as in ``make_synthetic.py``), 90 % naming their company
   and 10 % saying "the company" (generic questions), a quarter with an opening such as
   "According to its annual report," and a quarter with a closing instruction such as "Answer
   in USD millions."; 2 % are planted rewordings of another question of the same
   document (the recall of those is printed). 95 % of the passages get a located span, the
   rest are compared as text. Two worst cases follow unless ``--no-worst``: every question in
   one document, and no question naming its company (every question compared across the
   corpus).

4. **Hostile sizes** (``--hostile``, also run by default): ``find_clusters`` on 11 pairs of one
   document, one of them with a 1,000,000-character question, and on 1,299 squad-mtcb pairs
   with one such question; then the same with the uncapped scoring of before (``SCORED_CHARS``
   raised past the question's length) on the 11 pairs. 25-35 s before the cap.

The machine is shared: timings vary from run to run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data"
#: The targets: seconds per (questions, case); peak RSS in MB.
TARGETS = {(100_000, "realistic"): 8.0, (100_000, "one-document"): 15.0, (100_000, "no-names"): 15.0}
MEMORY_TARGET_MB = 1024

# -- rewordings (calibration positives, and the planted duplicates) ------------------------------

STOPWORDS = ("the", "a", "an", "of", "did", "does", "do", "was", "is", "that", "in")
QUESTION_WORDS = (("what is", "what's"), ("what was", "what's"), ("what", "which"), ("when", "in what year"),
                  ("who", "which person"), ("how many", "what number of"), ("where", "in what place"),
                  ("why", "for what reason"), ("which", "what"), ("in what year", "when"),
                  ("how much", "what amount of"))
_PREPOSITION = re.compile(r"\b(in|during|after|before|by|from|for|at|on|to|with|since|between)\b")


def reword_case(q: str, rng: random.Random) -> str | None:
    """Upper or lower case, '?' dropped or doubled, curly apostrophes."""
    q = q.upper() if rng.random() < 0.3 else q.lower()
    q = q.replace("?", "") if rng.random() < 0.5 else q.replace("?", " ?!")
    return q.replace("'", "\u2019")


def reword_stopword(q: str, rng: random.Random) -> str | None:
    """One stopword dropped, or 'the' added."""
    w = q.split()
    idx = [i for i, x in enumerate(w) if x.lower() in STOPWORDS]
    if idx and rng.random() < 0.6:
        del w[rng.choice(idx)]
    else:
        w.insert(rng.randrange(1, max(2, len(w))), "the")
    return " ".join(w)


def reword_question_word(q: str, rng: random.Random) -> str | None:
    """The leading question word swapped for a synonym (None when none applies)."""
    low = q[0].lower() + q[1:]
    for a, b in rng.sample(QUESTION_WORDS, len(QUESTION_WORDS)):
        if low.startswith(a + " "):
            return b.capitalize() + low[len(a):]
    return None


def reword_reorder(q: str, rng: random.Random) -> str | None:
    """A trailing prepositional clause moved to the front (None when there is none)."""
    body = q.rstrip("?").rstrip()
    ms = [m for m in _PREPOSITION.finditer(body) if m.start() > len(body) * 0.4]
    if not ms:
        return None
    tail, head = body[ms[0].start():], body[:ms[0].start()].rstrip().rstrip(",")
    if len(head.split()) < 2:
        return None
    return tail[0].upper() + tail[1:] + ", " + head[0].lower() + head[1:] + "?"


def reword_two(q: str, rng: random.Random) -> str | None:
    """Two of the other edits."""
    out = q
    for f in rng.sample([reword_stopword, reword_question_word, reword_reorder, reword_case], 2):
        x = f(out, rng)
        if x:
            out = x
    return out if out != q else None


#: Content words and a synonym each, for the "synonym" check (not among the positives above:
#: character similarity cannot tell a synonym from an antonym).
SYNONYMS = {"located": "situated", "begin": "start", "began": "started", "founded": "established",
            "leader": "head", "country": "nation", "largest": "biggest", "city": "town", "built": "constructed",
            "company": "firm", "revenue": "sales", "increase": "rise", "important": "significant",
            "main": "primary", "people": "persons", "known": "recognized", "used": "utilized",
            "called": "named", "created": "made", "end": "finish", "ended": "finished", "war": "conflict",
            "king": "monarch", "area": "region", "type": "kind", "name": "title", "part": "portion",
            "group": "faction", "major": "principal", "first": "earliest", "help": "assist",
            "allowed": "permitted", "received": "got", "caused": "led to", "said": "stated",
            "needed": "required", "role": "function", "goal": "aim", "size": "extent",
            "government": "administration"}


def synonym_rewordings(questions: list[str], seed: int = 3) -> list[tuple[str, str]]:
    """One content word replaced by a synonym, for every question that has one in ``SYNONYMS``."""
    rng = random.Random(seed)
    out = []
    for q in questions:
        w = q.split()
        idx = [i for i, x in enumerate(w) if x.lower().strip("?,") in SYNONYMS]
        if idx:
            i = rng.choice(idx)
            key = w[i].lower().strip("?,")
            w[i] = w[i].lower().replace(key, SYNONYMS[key])
            out.append((q, " ".join(w)))
    return out


REWORDINGS = {"case/punct": reword_case, "stopword": reword_stopword, "qword": reword_question_word,
              "reorder": reword_reorder, "two edits": reword_two}


def rewordings(questions: list[str], seed: int = 1) -> dict[str, list[tuple[str, str]]]:
    """kind -> [(question, reworded)], every kind tried on every question (seeded)."""
    from mtcb_curate.neardup import normalize

    rng = random.Random(seed)
    out: dict[str, list[tuple[str, str]]] = {k: [] for k in REWORDINGS}
    for q in questions:
        for kind, f in REWORDINGS.items():
            x = f(q, rng)
            if x and (kind == "case/punct" or normalize(x) != normalize(q)):
                out[kind].append((q, x))
    return out


# -- calibration ---------------------------------------------------------------------------------


def calibrate(squad: Path) -> None:
    import numpy as np
    from rapidfuzz import fuzz, process

    from mtcb_curate import neardup
    from mtcb_curate.neardup import Item, find_clusters, normalize

    rows = [json.loads(line) for line in (squad / "questions.jsonl").open(encoding="utf-8")]
    qs = [r["question"] for r in rows]
    pos = rewordings(qs)
    print(f"Calibration on {squad}: {len(qs)} questions, {len(qs) * (len(qs) - 1) // 2:,} pairs (negatives)")
    print("positives: " + ", ".join(f"{k} {len(v)}" for k, v in pos.items()))
    norm = [normalize(q) for q in qs]

    def tsort(s: str) -> str:
        return " ".join(sorted(s.split()))

    scorers = {
        "ratio": (fuzz.ratio, False),
        "token_sort_ratio": (fuzz.ratio, True),  # ratio of word-sorted strings == token_sort_ratio
        "token_set_ratio": (fuzz.token_set_ratio, False),
        "WRatio": (fuzz.WRatio, False),
    }
    iu = np.triu_indices(len(qs), 1)
    kinds = list(pos)
    print(f"\n{'scorer':18} {'t':>4} {'raised':>8} " + " ".join(f"{k:>10}" for k in kinds) + f" {'all':>6}")
    sort_matrix = None
    for name, (scorer, sort_words) in scorers.items():
        x = [tsort(s) for s in norm] if sort_words else norm
        t0 = time.perf_counter()
        m = process.cdist(x, x, scorer=scorer, workers=-1, dtype=np.float32)
        dt = time.perf_counter() - t0
        if name == "token_sort_ratio":
            sort_matrix = m
        neg = m[iu]
        rec = {}
        for k, pl in pos.items():
            a = [normalize(p[0]) for p in pl]
            b = [normalize(p[1]) for p in pl]
            if sort_words:
                a, b = [tsort(s) for s in a], [tsort(s) for s in b]
            rec[k] = process.cpdist(a, b, scorer=scorer, dtype=np.float32)
        allrec = np.concatenate(list(rec.values()))
        for t in (70, 75, 80, 85, 90, 95):
            print(f"{name:18} {t:>4} {int((neg >= t).sum()):>8,} "
                  + " ".join(f"{(rec[k] >= t).mean():>10.3f}" for k in kinds) + f" {(allrec >= t).mean():>6.3f}")
        print(f"{'':18} ({dt / len(neg) * 1e9:.0f} ns per pair in cdist on all cores)")

    # the chosen scorer: what the default raises, and what the same-answer rule adds
    assert sort_matrix is not None
    v = sort_matrix[iu]
    answers = [normalize(r["answer"]) for r in rows]
    titles = [r["title"] for r in rows]
    same_answer = np.array([answers[i] == answers[j] and answers[i] != "" for i, j in zip(*iu)])
    same_doc = np.array([titles[i] == titles[j] for i, j in zip(*iu)])
    t = neardup.DEFAULT_THRESHOLD
    print(f"\nDefault threshold {t:g}: the pairs it raises among the negatives, highest first")
    for k in np.argsort(-v)[: int((v >= t).sum())]:
        i, j = iu[0][k], iu[1][k]
        print(f"  {v[k]:5.1f}  {qs[i].strip()!r} / {qs[j].strip()!r}")
    sel = same_answer & same_doc
    print(f"\nPairs of one document sharing an answer: {int(sel.sum())}; their best scores:")
    for k in np.flatnonzero(sel)[np.argsort(-v[sel])][:6]:
        i, j = iu[0][k], iu[1][k]
        print(f"  {v[k]:5.1f}  {qs[i].strip()!r} / {qs[j].strip()!r}  ({rows[i]['answer']!r})")
    ta = t - neardup.ANSWER_MARGIN
    allpos = np.concatenate([process.cpdist([tsort(normalize(a)) for a, _ in pl], [tsort(normalize(b)) for _, b in pl],
                                            scorer=fuzz.ratio, dtype=np.float32) for pl in pos.values()])
    print(f"  same-answer pairs raised at {ta:g}: {int((sel & (v >= ta)).sum())}; "
          f"recall of the rewordings (same answer) at {ta:g}: {(allpos >= ta).mean():.3f}")
    syn = synonym_rewordings(qs)
    syn_scores = process.cpdist([tsort(normalize(a)) for a, _ in syn], [tsort(normalize(b)) for _, b in syn],
                                scorer=fuzz.ratio, dtype=np.float32)
    print(f"Content-word synonyms ({len(syn)}, e.g. {syn[0][0]!r} -> {syn[0][1]!r}): scores "
          f"{np.percentile(syn_scores, 10):.1f} / {np.percentile(syn_scores, 50):.1f} / "
          f"{np.percentile(syn_scores, 90):.1f} (10th / 50th / 90th percentile); found at {t:g}: "
          f"{(syn_scores >= t).mean():.3f}, at {ta:g} with the same answer: {(syn_scores >= ta).mean():.3f}")

    items = [Item(i, r["title"], r["question"], r["answer"], r["supporting_passage"]) for i, r in enumerate(rows)]
    for exact in (True, False):
        t0 = time.perf_counter()
        cl = find_clusters(items, exact=exact, reasons=[neardup.REASON_SIMILAR, neardup.REASON_SAME_ANSWER,
                                                         neardup.REASON_IDENTICAL, neardup.REASON_IDENTICAL_ACROSS])
        dt = time.perf_counter() - t0
        print(f"find_clusters (question rules, exact={exact}): {len(cl)} clusters, "
              f"{sum(len(c.links) for c in cl)} links, {dt:.2f} s")
    cl = find_clusters(items)
    print(f"find_clusters (all rules): {len(cl)} clusters; by reason: "
          + ", ".join(f"{r} {sum(r in c.reasons for c in cl)}" for r in neardup.REASONS))

    # the word-level screen: how far below the character-level score can it fall?
    p = neardup._Prepared(items)
    cm = process.cdist(p.word_codes, p.word_codes, scorer=fuzz.ratio, workers=-1, dtype=np.float32)[iu]
    pairs = [pr for pl in pos.values() for pr in pl]
    pp = neardup._Prepared([Item(2 * k + e, "d", q, "", "") for k, pr in enumerate(pairs) for e, q in enumerate(pr)])
    pos_chars = process.cpdist(pp.sortq[0::2], pp.sortq[1::2], scorer=fuzz.ratio, dtype=np.float32)
    pos_words = process.cpdist(pp.word_codes[0::2], pp.word_codes[1::2], scorer=fuzz.ratio, dtype=np.float32)
    syn, _, _, _ = synthetic_questions(4000)
    sp = neardup._Prepared(syn)
    siu = np.triu_indices(len(syn), 1)
    s_chars = process.cdist(sp.sortq, sp.sortq, scorer=fuzz.ratio, workers=-1, dtype=np.float32)[siu]
    s_words = process.cdist(sp.word_codes, sp.word_codes, scorer=fuzz.ratio, workers=-1, dtype=np.float32)[siu]
    print("\nWord-level screen: largest shortfall below the character-level score, among the pairs scoring >= t")
    print(f"{'t':>4} {'squad pairs':>12} {'rewordings':>11} {'synthetic 10-K':>15} {'screen margin':>14}")
    for t_ in (70, 75, 80, 85, 90):
        def gap(ch, wd):
            sel = ch >= t_
            return f"{float(np.max(ch[sel] - wd[sel])):.1f}" if sel.any() else "-"
        print(f"{t_:>4} {gap(v, cm):>12} {gap(pos_chars, pos_words):>11} {gap(s_chars, s_words):>15} "
              f"{t_ - neardup.screen_cutoff_for(t_):>14.0f}")

    fin = SHARED / "questions.jsonl"
    if fin.is_file():
        companies = sorted({json.loads(line)["company"] for line in fin.open(encoding="utf-8")})
        import itertools
        template = "What was {c}'s total revenue in fiscal 2022?"
        sc = [(neardup.question_similarity(template.format(c=a), template.format(c=b)), a, b)
              for a, b in itertools.combinations(companies, 2)]
        sc.sort(reverse=True)
        print(f"\nOne template over the {len(companies)} FinanceBench companies ({template!r}): "
              f"median {float(np.median([s for s, _, _ in sc])):.1f}, highest {sc[0][0]:.1f} ({sc[0][1]} / {sc[0][2]})")


# -- synthetic 10-K questions ------------------------------------------------------------------------

_SYLLABLES = ["al", "be", "cor", "dex", "el", "fa", "gen", "hal", "ion", "jun", "kel", "lum", "mar", "nov",
              "or", "pra", "quin", "ros", "sol", "tri", "ul", "ver", "wes", "xan", "yor", "zen"]
_KINDS = ["Corporation", "Inc.", "Holdings", "Group", "Technologies", "Industries", "Pharmaceuticals",
          "Energy", "Financial", "Brands", "Systems", "Resorts", "Health", "Foods"]
METRICS = ["total revenue", "net income", "operating income", "gross margin", "free cash flow",
           "capital expenditures", "research and development expense", "selling, general and administrative expense",
           "effective tax rate", "diluted earnings per share", "long-term debt", "goodwill impairment",
           "inventory", "accounts receivable", "dividends per share", "share repurchases",
           "operating lease liabilities", "backlog", "restructuring charges", "interest expense",
           "depreciation and amortization", "cash and cash equivalents", "deferred revenue",
           "stock-based compensation", "pension obligations", "foreign currency translation losses",
           "cost of sales", "operating cash flow", "adjusted EBITDA", "working capital",
           "net sales", "comparable store sales", "average revenue per user", "subscriber count",
           "loan loss provision", "net interest margin", "book value per share", "return on equity",
           "unrecognized tax benefits", "contract liabilities", "warranty reserves", "advertising expense",
           "rent expense", "goodwill", "intangible assets", "accrued liabilities", "income tax expense",
           "other comprehensive income", "minority interest", "revolving credit facility balance"]
SEGMENTS = ["North America", "International", "Europe", "Asia Pacific", "Latin America", "Consumer",
            "Enterprise", "Healthcare", "Industrial", "Cloud Services", "Retail", "Wholesale", "Beverages",
            "Snacks", "Medical Devices", "Pharmaceuticals", "Gaming", "Media", "Credit Cards", "Travel",
            "Semiconductors", "Display Technologies", "Optical Communications", "Automotive", "Energy"]
DEBTS = ["senior notes due {y2}", "term loan", "convertible notes", "commercial paper program",
         "revolving credit facility", "{r}% notes due {y2}"]
OFFICERS = ["chief executive officer", "chief financial officer", "chief operating officer", "general counsel",
            "chair of the board", "chief accounting officer", "head of the audit committee"]
TOPICS = ["leases", "revenue recognition", "credit losses", "income taxes", "goodwill impairment testing",
          "hedging activities", "pension accounting", "stock compensation", "business combinations",
          "segment reporting", "cloud computing arrangements", "reference rate reform"]
PRODUCTS = ["software licenses", "subscriptions", "hardware sales", "maintenance contracts", "advertising",
            "franchise fees", "membership fees", "gift cards", "loyalty programs", "extended warranties"]
FACILITIES = ["manufacturing plants", "distribution centers", "data centers", "research facilities",
              "retail stores", "corporate offices"]
QUALIFIERS = ["on a GAAP basis", "excluding foreign currency effects", "net of tax", "in constant currency",
              "as restated", "before special items"]
TEMPLATES = [
    "What was {ref_s} {metric} in {period}?",
    "How much {metric} did {ref} report for {period}?",
    "By how much did {ref_s} {metric} change between {period0} and {period}?",
    "What drove the change in {metric} for the {segment} segment in {period}?",
    "What percentage of {ref_s} total revenue came from the {segment} segment in {period}?",
    "Which factors does {ref} cite as risks to its {segment} business?",
    "When does {ref_s} {debt} mature?",
    "What is the interest rate on {ref_s} {debt}?",
    "How many employees did {ref} have at the end of {period}?",
    "Who served as the {officer} of {ref} during {period}?",
    "What {metric} did the {segment} segment report in {period}, {qualifier}?",
    "Where are {ref_s} principal {facility} located?",
    "What accounting standard related to {topic} did {ref} adopt in {period}?",
    "How does {ref} recognize revenue from {product}?",
    "What was the operating margin of the {segment} segment in {period}?",
    "Which customers accounted for more than 10% of {ref_s} {metric} in {period}?",
    "What amount of {metric} was recorded for {topic} in {period}?",
    "How did {ref_s} {metric} in the {segment} segment compare with {period0}?",
    "What was the year-over-year growth rate of {ref_s} {metric} in {period}?",
    "What ratio of {metric} to {metric2} did {ref} report for {period}?",
    "Why did {ref_s} {metric} decline in {period}?",
    "What portion of {ref_s} {metric} is denominated in foreign currencies as of {period}?",
    "How much cash did {ref} return to shareholders through {metric} in {period}?",
    "What were the main components of {ref_s} {metric} at the end of {period}?",
    "Which {segment} products contributed most to the increase in {metric} in {period}?",
    "What impairment did {ref} record on its {segment} assets in {period}?",
    "How many {facility} did {ref} operate at the end of {period}?",
    "What is {ref_s} policy on {topic}?",
    "What litigation related to {topic} is disclosed in {ref_s} {period} report?",
    "What is the maturity profile of {ref_s} {debt}?",
    "How much did {ref} spend on acquisitions in the {segment} segment during {period}?",
    "What guidance did {ref} give for {metric} beyond {period}?",
    "What share of {ref_s} {metric} was attributable to the {segment} segment in {period}?",
    "How sensitive is {ref_s} {metric} to a one percent change in interest rates?",
]


def _company_names(docs: int, rng: random.Random) -> list[tuple[str, str]]:
    names, seen = [], set()
    while len(names) < docs:
        stem = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        if stem in seen:
            continue
        seen.add(stem)
        ticker = re.sub(r"[^A-Z]", "", stem.upper())[:4].ljust(3, "X")
        names.append((f"{stem} {rng.choice(_KINDS)}", f"{ticker}{len(names)}"))
    return names


def _period(rng: random.Random, fy: int) -> tuple[str, str]:
    y = fy - rng.choice([0, 0, 0, 1])
    forms = [(f"fiscal {y}", f"fiscal {y - 1}"), (f"FY{y}", f"FY{y - 1}"),
             (f"the fourth quarter of {y}", f"the fourth quarter of {y - 1}"),
             (f"the year ended December 31, {y}", f"the year ended December 31, {y - 1}")]
    return rng.choice(forms)


OPENINGS = ["According to its annual report, ", "Based on the 10-K, ", "In the MD&A, ", "Per the filing, "]
CLOSINGS = [" Answer in USD millions.", " Give the figure as reported.", " Round to one decimal place.",
            " Cite the relevant note."]


def synthetic_questions(n: int, docs: int = 88, seed: int = 0, name_share: float = 0.9,
                        one_document: bool = False):
    """``n`` synthetic 10-K QA pairs: (items, spans, planted pairs, keys). 2 % are planted
    rewordings of an earlier question of the same document (same answer 70 % of the time, same
    passage 50 %). ``keys[i]`` says what question ``i`` asks (template, the slots it fills, the
    document, whether it names its company): see ``same_question``."""
    from mtcb_curate.neardup import Item

    rng = random.Random(f"{seed}:neardup")
    companies = _company_names(docs, rng)
    weights = [rng.lognormvariate(0.0, 1.0) for _ in range(docs)]
    doc_of = rng.choices(range(docs), weights=weights, k=n) if not one_document else [0] * n
    fy = {d: rng.randint(2015, 2023) for d in range(docs)}
    # Passages as dense as in ficha (1,331 passages in 88 filings of 550,000 characters: one per
    # 36,000 characters), so that documents grow with their questions.
    per_doc = [doc_of.count(d) for d in range(docs)] if not one_document else [n] + [0] * (docs - 1)
    doc_chars = [max(550_000, 36_000 * k) for k in per_doc]
    # passage text: 4,000 pseudo-words with Zipf-like frequencies, plus the grammar's words
    vocab = sorted({w for t in METRICS + SEGMENTS + TOPICS + PRODUCTS for w in t.split()})
    vocab += ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(4000)]
    weights_w = [1.0 / (k + 1) for k in range(len(vocab))]
    word_pool = rng.choices(vocab, weights=weights_w, k=200_000)
    n_planted = n // 50
    items, spans, planted, keys = [], {}, [], []
    by_doc: dict[int, list[int]] = {}
    reworders = list(REWORDINGS.values())
    for i in range(n - n_planted):
        d = doc_of[i]
        company, ticker = companies[d]
        named = rng.random() < name_share
        ref = company if named else rng.choice(["the company", "the Company", "the registrant"])
        period, period0 = _period(rng, fy[d])
        y2 = fy[d] + rng.randint(1, 12)
        template = rng.choice(TEMPLATES)
        fills = dict(
            metric=rng.choice(METRICS), metric2=rng.choice(METRICS),
            segment=rng.choice(SEGMENTS), period=period, period0=period0, officer=rng.choice(OFFICERS),
            debt=rng.choice(DEBTS).format(y2=y2, r=rng.choice(["2.5", "3.125", "4.75", "5.0"])),
            qualifier=rng.choice(QUALIFIERS), topic=rng.choice(TOPICS), product=rng.choice(PRODUCTS),
            facility=rng.choice(FACILITIES))
        q = template.format(ref=ref, ref_s=ref + "'s", **fills)
        # what the question asks: its template with the slots it uses (openings, closings and
        # the way it names the company are framing); a generic question fits every document
        used = tuple(sorted((k, v) for k, v in fills.items() if "{" + k + "}" in template))
        keys.append((template, used, d, named and "{ref" in template))
        if rng.random() < 0.25:
            q = rng.choice(OPENINGS) + q[0].lower() + q[1:]
        if rng.random() < 0.25:
            q += rng.choice(CLOSINGS)
        answer = rng.choice([f"${rng.randint(1, 99_999):,} million", f"{rng.uniform(0, 60):.1f}%",
                             f"{rng.choice(SEGMENTS)} demand", f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{y2}"])
        start = rng.randrange(0, doc_chars[d])
        length = rng.randint(80, 500)
        at = rng.randrange(0, len(word_pool) - 80)
        passage = f"{company} {start}: " + " ".join(word_pool[at:at + length // 7])
        items.append(Item(i, ticker, q, answer, passage))
        if rng.random() < 0.95:
            spans[i] = (start, start + length)
        by_doc.setdefault(d, []).append(i)
    for k in range(n_planted):
        i = len(items)
        src = items[rng.randrange(len(items))]
        new_q = None
        while not new_q:
            new_q = rng.choice(reworders)(src.question, rng)
        answer = src.answer if rng.random() < 0.7 else src.answer + " (restated)"
        if rng.random() < 0.5:
            passage = src.passage
            if src.id in spans:
                spans[i] = spans[src.id]
        else:
            at = rng.randrange(0, len(word_pool) - 80)
            passage = f"planted {i}: " + " ".join(word_pool[at:at + 30])
        items.append(Item(i, src.doc_key, new_q, answer, passage))
        planted.append((src.id, i))
        keys.append(keys[src.id])
    return items, spans, planted, keys


def same_question(k1: tuple, k2: tuple) -> bool:
    """Whether two synthetic questions ask the same thing: same template and slots, and the same
    document or two generic questions (which fit every document)."""
    return k1[:2] == k2[:2] and (k1[2] == k2[2] or not (k1[3] or k2[3]))


# -- baseline -----------------------------------------------------------------------------------------


def baseline(n: int = 2000) -> None:
    from rapidfuzz import fuzz

    from mtcb_curate import neardup
    from mtcb_curate.neardup import find_clusters, normalize

    items, spans, _, _ = synthetic_questions(n, seed=1)
    t0 = time.perf_counter()
    sortq = [" ".join(sorted(normalize(it.question).split())) for it in items]
    found = set()
    t = neardup.DEFAULT_THRESHOLD
    for i in range(n):
        for j in range(i + 1, n):
            if fuzz.ratio(sortq[i], sortq[j]) >= t:
                found.add((i, j))
    py = time.perf_counter() - t0
    t0 = time.perf_counter()
    clusters = find_clusters(items, reasons=[neardup.REASON_SIMILAR, neardup.REASON_IDENTICAL], exact=True)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    find_clusters(items, spans=spans)
    ours_all = time.perf_counter() - t0
    within = {(x.a, x.b) for c in clusters for x in c.links if items[x.a].doc_key == items[x.b].doc_key}
    expected = {(i, j) for i, j in found if items[i].doc_key == items[j].doc_key
                and neardup.question_numbers(normalize(items[i].question))
                == neardup.question_numbers(normalize(items[j].question))}
    pairs = n * (n - 1) // 2
    print(f"\nBaseline: pure-Python loop over the {pairs:,} pairs of {n:,} questions: {py:.2f} s "
          f"({py / pairs * 1e9:.0f} ns per pair)")
    print(f"  find_clusters, question similarity only: {ours:.3f} s ({py / ours:.0f}x faster); "
          f"all rules: {ours_all:.3f} s ({py / ours_all:.0f}x)")
    print(f"  same within-document pairs as the loop: {within == expected} ({len(within)} pairs)")
    for size in (10_000, 100_000):
        print(f"  the loop extrapolated to {size:,} questions: {py * (size / n) ** 2:,.0f} s")


# -- speed (one child process per case) ---------------------------------------------------------------


#: MinHash LSH, the anchor: datasketch's MinHash of each normalized question's set of words
#: (128 permutations, built with ``MinHash.bulk``), ``MinHashLSH`` at this Jaccard threshold;
#: every pair that shares a band is raised (no re-scoring), within or across documents.
LSH_THRESHOLD = 0.7
LSH_PERMUTATIONS = 128


def _quality(pairs, planted, keys) -> dict:
    """Raised pairs against the generator's truth: how many ask the same question (true) or
    not (false), and how many planted rewordings were raised (as a pair)."""
    true = sum(1 for a, b in pairs if same_question(keys[a], keys[b]))
    found = {tuple(sorted(p)) for p in pairs}
    return {"pairs": len(pairs), "true_pairs": true, "false_pairs": len(pairs) - true,
            "planted_found": sum(1 for a, b in planted if (min(a, b), max(a, b)) in found)}


def minhash_pairs(items) -> set:
    """The pairs MinHash LSH raises (positions, a < b)."""
    from datasketch import MinHash, MinHashLSH

    from mtcb_curate.neardup import normalize

    tokens = [[w.encode("utf-8") for w in set(normalize(it.question).split())] or [b""] for it in items]
    hashes = MinHash.bulk(tokens, num_perm=LSH_PERMUTATIONS)
    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=LSH_PERMUTATIONS)
    with lsh.insertion_session() as session:
        for k, m in enumerate(hashes):
            session.insert(k, m, check_duplication=False)
    pairs = set()
    for k, m in enumerate(hashes):
        for j in lsh.query(m):
            if j != k:
                pairs.add((min(j, k), max(j, k)))
    return pairs


def child(n: int, mode: str, method: str = "ours") -> None:
    from mtcb_curate.neardup import find_clusters

    items, spans, planted, keys = synthetic_questions(n, name_share=0.0 if mode == "no-names" else 0.9,
                                                      one_document=mode == "one-document")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    if method == "minhash":
        pairs = minhash_pairs(items)
        clusters = []
    else:
        clusters = find_clusters(items, spans=spans)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if method != "minhash":
        # the pairs a curator is shown: every link inside a cluster, and every pair of members
        pairs = {(x.a, x.b) for c in clusters for x in c.links}
        members = {(a, b) for c in clusters for k, a in enumerate(c.ids) for b in c.ids[k + 1:]}
        in_cluster = sum(1 for a, b in planted if (min(a, b), max(a, b)) in members)
    else:
        in_cluster = None
    q = _quality(pairs, planted, keys)
    print(json.dumps({"n": n, "mode": mode, "method": method, "seconds": dt, "cpu": cpu, "rss_before_mb": rss_before,
                      "peak_rss_mb": peak, "clusters": len(clusters),
                      "largest": max((c.size for c in clusters), default=0),
                      "planted": len(planted), "planted_in_cluster": in_cluster, **q}))


def speed(sizes: list[int], worst: bool, minhash: bool = True) -> None:
    cases = [(n, "realistic") for n in sizes]
    if worst:
        cases += [(n, m) for n in sizes for m in ("one-document", "no-names")]
    print(f"\nSpeed on {os.cpu_count()} cores (wall time of find_clusters, or of MinHash LSH (datasketch, "
          f"{LSH_PERMUTATIONS} permutations, threshold {LSH_THRESHOLD}) on the same questions; peak RSS of the "
          "whole process; CPU: process time, all threads, less sensitive to a loaded machine). 'true'/'false': raised pairs (links) that ask the same question or not, by the "
          "generator's templates; 'planted': planted rewordings raised as a link.")
    print(f"{'questions':>10} {'case':>13} {'method':>8} {'time':>8} {'x LSH':>6} {'CPU':>8} {'x LSH':>6} "
          f"{'target':>7} {'peak RSS':>9} "
          f"{'clusters':>9} {'largest':>8} {'true':>8} {'false':>8} {'precision':>9} {'planted':>13}")
    for n, mode in cases:
        rows = {}
        for method in (("minhash", "ours") if minhash else ("ours",)):
            out = subprocess.run([sys.executable, __file__, "--child", str(n), mode, method], capture_output=True,
                                 text=True, check=True)
            rows[method] = json.loads(out.stdout.strip().splitlines()[-1])
        for method, r in rows.items():
            sys.stdout.flush()
            target = TARGETS.get((n, mode)) if method == "ours" else None
            ok = "" if target is None else ("ok" if r["seconds"] <= target and r["peak_rss_mb"] <= MEMORY_TARGET_MB
                                            else "MISSED")
            ratio = r["seconds"] / rows["minhash"]["seconds"] if "minhash" in rows else float("nan")
            cratio = r["cpu"] / rows["minhash"]["cpu"] if "minhash" in rows else float("nan")
            prec = r["true_pairs"] / r["pairs"] if r["pairs"] else float("nan")
            print(f"{n:>10,} {mode:>13} {method:>8} {r['seconds']:>7.2f}s {ratio:>5.2f}x {r['cpu']:>7.2f}s {cratio:>5.2f}x "
                  f"{'' if target is None else f'{target:g}s':>7} {r['peak_rss_mb']:>7.0f}MB "
                  f"{r['clusters']:>9,} {r['largest']:>8} {r['true_pairs']:>8,} {r['false_pairs']:>8,} "
                  f"{prec:>9.3f} {r['planted_found']:>6}/{r['planted']:<6} {ok}")


# -- hostile sizes ------------------------------------------------------------------------------------


def hostile(squad: Path, uncapped: bool = True) -> None:
    from mtcb_curate import neardup

    words = " ".join(["segment", "figure", "reported", "fiscal"] * 40_000)
    huge = ("What was the figure reported for segment alpha in fiscal 2022? " + words)[:1_000_000]
    qs = [f"What was the figure reported for segment {w} in fiscal 2022?"
          for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "mu")]
    qs[4] = huge
    items = [neardup.Item(i, "AAA", q, f"answer {i}", f"Passage {i} quotes a distinct part of the filing.")
             for i, q in enumerate(qs)]
    print(f"\nHostile sizes: one question of {len(huge):,} characters (scoring reads "
          f"{neardup.SCORED_CHARS:,} characters of a question)")
    t0 = time.perf_counter()
    neardup.find_clusters(items)
    print(f"  11 pairs: find_clusters {time.perf_counter() - t0:.3f} s")
    if (squad / "questions.jsonl").is_file():
        rows = [json.loads(line) for line in (squad / "questions.jsonl").open(encoding="utf-8")]
        sq = [neardup.Item(i, r.get("title", ""), r["question"], r.get("answer", ""), r.get("supporting_passage", ""))
              for i, r in enumerate(rows)]
        sq[5] = sq[5]._replace(question=huge)
        t0 = time.perf_counter()
        neardup.find_clusters(sq)
        print(f"  {len(sq):,} squad-mtcb pairs: find_clusters {time.perf_counter() - t0:.3f} s")
    if uncapped:
        cap = neardup.SCORED_CHARS
        neardup.SCORED_CHARS = len(huge) + 1
        try:
            t0 = time.perf_counter()
            neardup.find_clusters(items)
            print(f"  11 pairs without the cap (as before the fix): {time.perf_counter() - t0:.1f} s")
        finally:
            neardup.SCORED_CHARS = cap


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calibrate", action="store_true", help="only the calibration on squad-mtcb")
    ap.add_argument("--speed", action="store_true", help="only the speed cases")
    ap.add_argument("--baseline", action="store_true", help="only the pure-Python baseline")
    ap.add_argument("--hostile", action="store_true", help="only the hostile-size case (1,000,000-character question)")
    ap.add_argument("--no-uncapped", action="store_true", help="with --hostile: skip the slow uncapped run")
    ap.add_argument("--squad", type=Path, default=SHARED / "squad-mtcb", help="the squad-mtcb folder")
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated question counts")
    ap.add_argument("--no-worst", action="store_true", help="skip the worst cases")
    ap.add_argument("--no-minhash", action="store_true", help="skip the MinHash LSH anchor")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(int(args.child[0]), args.child[1], args.child[2])
        return
    everything = not (args.calibrate or args.speed or args.baseline or args.hostile)
    # Speed first: Linux keeps ru_maxrss across fork and exec, so the children must be started
    # while this process is still small.
    if args.speed or everything:
        speed([int(s) for s in args.sizes.split(",")], worst=not args.no_worst, minhash=not args.no_minhash)
    if args.hostile or everything:
        hostile(args.squad, uncapped=not args.no_uncapped)
    if args.baseline or everything:
        baseline()
    if args.calibrate or everything:
        if (args.squad / "questions.jsonl").is_file():
            calibrate(args.squad)
        else:
            print(f"no squad-mtcb at {args.squad}: calibration skipped")


if __name__ == "__main__":
    main()
