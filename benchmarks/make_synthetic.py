"""Generate a synthetic MTCB "ficha"-like dataset for benchmarks.

The text imitates PyMuPDF-extracted 10-K filings (cover page, "Item" sections, short lines of
prose, table cells one per line, page headers/footers, dollar amounts with commas,
non-breaking spaces, curly quotes, em dashes and bullets) but is made of random words from a
seeded vocabulary, so it is fast to produce, reproducible and free of any licence.

Presets:

- **ficha-scale** (the defaults): 88 documents averaging 550,000 characters (about 48 MB of
  text, documents between roughly 200 KB and 1.2 MB) and 1,331 QA pairs::

      python benchmarks/make_synthetic.py OUT_DIR

- **20,000-pair variant**: the same corpus (the corpus depends only on ``--docs``,
  ``--mean-chars`` and ``--seed``, so its parquet is byte-identical) with 20,000 pairs::

      python benchmarks/make_synthetic.py OUT_DIR --pairs 20000

Output, in the Hugging Face Hub layout (loadable with ``datasets.load_dataset(OUT_DIR,
"corpus" | "questions", split="train")``)::

    OUT_DIR/README.md                               # front matter registering the configs
    OUT_DIR/corpus/train-00000-of-00001.parquet     # ticker, company, filing_type, filing_date, text
    OUT_DIR/questions/train-00000-of-00001.parquet  # question, answer, supporting_passage, ticker,
                                                    # company, chunk_index (int64, all null)
    OUT_DIR/synthetic.json                          # parameters, counts, per-row passage kinds

Supporting passages (kinds, with their share of the pairs):

- ``exact`` (~60 %): a contiguous substring of the document, 80-500 characters, cut at word
  boundaries.
- ``whitespace`` (~25 %): such a substring with every whitespace run (newlines, NBSP)
  replaced by one space.
- ``edited`` (~10 %): such a substring with its non-ASCII characters dropped (curly quotes,
  em dashes, bullets; NBSP becomes a space), or with one word replaced by another.
- ``foreign`` (~5 %): invented prose that is not taken from the document.

``synthetic.json`` holds ``row_kinds``, one letter per questions row (E exact, W whitespace,
A non-ASCII dropped, C word changed, F foreign), so a benchmark can score a passage locator.

Usable as a module (``benchmarks/`` is not a package; add it to ``sys.path``)::

    from make_synthetic import make_dataset
    make_dataset(Path("out"), docs=88, pairs=1331, mean_chars=550_000, seed=0)
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mtcb_curate.hub.layout import write_hub_layout  # noqa: E402

__all__ = ["make_dataset", "generate_corpus", "generate_questions"]

NBSP = "\u00a0"

CORPUS_SCHEMA = pa.schema(
    [
        ("ticker", pa.string()),
        ("company", pa.string()),
        ("filing_type", pa.string()),
        ("filing_date", pa.string()),
        ("text", pa.string()),
    ]
)
QUESTIONS_SCHEMA = pa.schema(
    [
        ("question", pa.string()),
        ("answer", pa.string()),
        ("supporting_passage", pa.string()),
        ("ticker", pa.string()),
        ("company", pa.string()),
        pa.field("chunk_index", pa.int64(), nullable=True),
    ]
)

# Frequent 10-K words, most frequent first (weights fall off with rank, Zipf-like).
_REAL_WORDS = """
the of and to in or for our we a on by as with is are be that from at which other such not
this may its these any have an will net income our total financial operating tax million
company results including related assets costs value period fair business certain based
December year fiscal revenue sales products under also cash certain interest rate changes
credit risk during debt primarily operations services compared expenses increase decrease
customers market due were share stock billion approximately management capital segment
agreement future significant impact subsidiaries consolidated statements accounting
liabilities equity reporting information respectively prior long-term short-term securities
investment investments amounts recognized adjusted growth performance strategic programs
pension benefit plans obligations notes agreements facility facilities lease leases
goodwill intangible impairment acquisition acquisitions divestiture restructuring charges
expected estimated uncertain regulatory legal proceedings litigation environmental
competition competitive pricing demand supply chain inflation currency foreign exchange
hedging derivative instruments contracts deferred income taxes provision effective
allowance receivables inventory inventories property plant equipment depreciation
amortization dividends repurchases shares outstanding diluted basic earnings per
compensation executive officers directors board committee audit internal control
disclosure controls procedures material weakness reasonable assurance opinion
qualitative quantitative estimates assumptions judgments critical policies recent
pronouncements adoption standard guidance commitments contingencies guarantees
employees human capital technology cybersecurity data privacy intellectual patents
trademarks brands manufacturing distribution retail wholesale international domestic
geographic regions Americas Europe Asia Pacific Latin pandemic economic conditions
volatility liquidity resources borrowings commercial paper revolving senior unsecured
maturity maturities principal issued redeemed covenant compliance rating agencies
""".split()

_SYLLABLES = (
    "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge go la le li lo lu ma me mi "
    "mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi "
    "vo za ze zo tra tre tri pro pre bri cla cor dex fin gen lex mar nor ple qua sta ter ven vor"
).split()

_ITEMS = [
    ("PART I", None),
    ("Item 1.", "Business"),
    ("Item 1A.", "Risk Factors"),
    ("Item 1B.", "Unresolved Staff Comments"),
    ("Item 2.", "Properties"),
    ("Item 3.", "Legal Proceedings"),
    ("Item 4.", "Mine Safety Disclosures"),
    ("PART II", None),
    ("Item 5.", "Market for Registrant’s Common Equity, Related Stockholder Matters and Issuer "
     "Purchases of Equity Securities"),
    ("Item 6.", "[Reserved]"),
    ("Item 7.", "Management’s Discussion and Analysis of Financial Condition and Results of "
     "Operations"),
    ("Item 7A.", "Quantitative and Qualitative Disclosures About Market Risk"),
    ("Item 8.", "Financial Statements and Supplementary Data"),
    ("Item 9.", "Changes in and Disagreements with Accountants on Accounting and Financial "
     "Disclosure"),
    ("Item 9A.", "Controls and Procedures"),
    ("Item 9B.", "Other Information"),
    ("PART III", None),
    ("Item 10.", "Directors, Executive Officers and Corporate Governance"),
    ("Item 11.", "Executive Compensation"),
    ("Item 12.", "Security Ownership of Certain Beneficial Owners and Management and Related "
     "Stockholder Matters"),
    ("Item 13.", "Certain Relationships and Related Transactions, and Director Independence"),
    ("Item 14.", "Principal Accountant Fees and Services"),
    ("PART IV", None),
    ("Item 15.", "Exhibits and Financial Statement Schedules"),
]
# Relative length of each item (PART lines take no budget).
_ITEM_WEIGHTS = [0, 10, 14, 0.2, 1, 1.5, 0.2, 0, 2, 0.2, 22, 3, 40, 0.3, 2, 0.5, 0, 0.6, 0.6, 0.6,
                 0.5, 0.5, 0, 3]

_TABLE_TITLES = [
    "CONSOLIDATED STATEMENTS OF INCOME", "CONSOLIDATED BALANCE SHEETS",
    "CONSOLIDATED STATEMENTS OF CASH FLOWS", "CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME",
    "CONSOLIDATED STATEMENTS OF SHAREHOLDERS’ EQUITY", "Segment Results", "Net Revenue by Region",
    "Selected Financial Data", "Contractual Obligations", "Components of Income Tax Expense",
    "Reconciliation of Non-GAAP Measures", "Summary of Financial Performance",
]
_ROW_LABELS = [
    "Net revenues", "Cost of sales", "Gross profit", "Selling, general and administrative expenses",
    "Research and development", "Operating income", "Interest expense", "Other income (expense), net",
    "Income before income taxes", "Provision for income taxes", "Net income",
    "Net income attributable to noncontrolling interests", "Diluted earnings per share",
    "Cash and cash equivalents", "Accounts receivable, net", "Inventories", "Total current assets",
    "Property, plant and equipment, net", "Goodwill", "Other intangible assets, net", "Total assets",
    "Short-term borrowings", "Accounts payable", "Long-term debt", "Total liabilities",
    "Retained earnings", "Total shareholders’ equity", "Capital expenditures",
    "Depreciation and amortization", "Share repurchases", "Dividends paid",
    "Restructuring and impairment charges", "Operating lease liabilities",
]
_METRICS = [
    "total revenue", "net income", "operating income", "gross margin", "capital expenditures",
    "free cash flow", "diluted earnings per share", "long-term debt", "cash and cash equivalents",
    "effective tax rate", "research and development expense", "SG&A expense", "dividends paid",
    "share repurchases", "inventory", "accounts receivable", "goodwill", "restructuring charges",
    "operating lease liabilities", "depreciation and amortization",
]
_NAME_A = [
    "Apex", "Borealis", "Cinder", "Delta", "Evergreen", "Falcon", "Granite", "Harbor", "Ironwood",
    "Juniper", "Keystone", "Lumen", "Meridian", "Northwind", "Orion", "Pinnacle", "Quarry",
    "Redwood", "Summit", "Tidewater", "Umbra", "Vantage", "Westfield", "Xenon", "Yellowstone",
    "Zenith", "Atlas", "Beacon", "Cobalt", "Dynamo",
]
_NAME_B = [
    "Industries", "Foods", "Health", "Energy", "Systems", "Brands", "Financial", "Semiconductor",
    "Pharmaceuticals", "Entertainment", "Resorts", "Retail", "Technologies", "Materials",
    "Communications", "Logistics",
]
_NAME_C = ["Inc.", "Corporation", "Holdings, Inc.", "Co.", "Group, Inc.", "plc"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DRIVERS = [
    "Higher volume and favorable pricing, partly offset by higher input costs.",
    "Lower demand in the Americas and unfavorable foreign exchange.",
    "Restructuring charges and higher interest expense.",
    "Growth in services revenue and cost discipline.",
    "An impairment charge on goodwill in the fourth quarter.",
]


def _vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """Real 10-K words (Zipf weights) plus invented words; returns words and cumulative weights."""
    seen: dict[str, None] = {}
    for w in _REAL_WORDS:
        seen.setdefault(w, None)
    real = list(seen)
    invented: dict[str, None] = {}
    while len(invented) < 3000:
        w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            invented.setdefault(w, None)
    words = real + list(invented)
    weights = [1.0 / (r + 8) for r in range(len(real))]
    tail = 0.18 * sum(weights) / len(invented)  # invented words: ~15 % of tokens
    weights += [tail] * len(invented)
    return words, list(itertools.accumulate(weights))


def _lengths(rng: random.Random, docs: int, mean_chars: int) -> list[int]:
    """Document lengths between ~0.36x and ~2.2x the mean (200 KB-1.2 MB at 550 KB), mean exact."""
    lo, hi = 0.364, 2.18
    ratios = [min(hi, max(lo, rng.lognormvariate(0.0, 0.42))) for _ in range(docs)]
    for _ in range(20):  # rescale to mean 1 while respecting the bounds
        m = sum(ratios) / docs
        ratios = [min(hi, max(lo, r / m)) for r in ratios]
    lengths = [max(1, round(r * mean_chars)) for r in ratios]
    lengths[-1] = max(1, lengths[-1] + mean_chars * docs - sum(lengths))  # total exact
    return lengths


def _companies(rng: random.Random, docs: int) -> list[tuple[str, str]]:
    """Unique (ticker, company) pairs."""
    tickers: dict[str, None] = {}
    names: dict[str, None] = {}
    out = []
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    while len(out) < docs:
        t = "".join(rng.choice(letters) for _ in range(rng.choice((3, 4))))
        n = f"{rng.choice(_NAME_A)} {rng.choice(_NAME_B)}"
        if t in tickers or n in names:
            continue
        tickers[t] = None
        names[n] = None
        out.append((t, f"{n} {rng.choice(_NAME_C)}" if rng.random() < 0.5 else n))
    return out


class _DocWriter:
    """Builds one filing's text as a list of lines."""

    def __init__(self, rng, words, cum, ticker, company, fy, filing_date):
        self.rng, self.words, self.cum = rng, words, cum
        self.ticker, self.company, self.fy = ticker, company, fy
        self.short = company.split(" ")[0]
        self.filing_date = filing_date
        self.lines: list[str] = []
        self.size = 0
        self.page = 1
        self.page_chars = 0

    # -- low level ---------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.lines.append(line)
        n = len(line) + 1
        self.size += n
        self.page_chars += n
        if self.page_chars > 3800 and self.rng.random() < 0.3:
            self.page_break()

    def page_break(self) -> None:
        rng = self.rng
        footer = [str(self.page)]
        if rng.random() < 0.5:
            footer.insert(0, f"{self.short} {self.fy} Form{NBSP}10-K")
        self.lines.extend(footer)
        self.lines.append("Table of Contents")
        self.size += sum(len(x) + 1 for x in footer) + 18
        self.page += 1
        self.page_chars = 0

    def amount(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            return f"${rng.randint(1, 99_999):,} million"
        if r < 0.5:
            return f"${rng.randint(1, 999)}.{rng.randint(0, 9)}{NBSP}billion"
        if r < 0.7:
            return f"{rng.randint(0, 99)}.{rng.randint(0, 9)}%"
        if r < 0.85:
            return f"{rng.choice(_MONTHS)}{NBSP}{rng.randint(1, 28)}, {self.fy - rng.randint(0, 2)}"
        return f"{rng.randint(1_000, 9_999_999):,}"

    def special(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            return f"{self.short}’s"
        if r < 0.45:
            return rng.choice(["Company’s", "company’s", "year’s", "segment’s", "customers’"])
        if r < 0.6:
            return f"“{rng.choice(self.words[:120])}”"
        if r < 0.75:
            return "—"
        if r < 0.85:
            return f"Item{NBSP}{rng.choice(['1A', '7', '7A', '8'])}"
        return rng.choice(["we’re", "don’t", "it’s", "U.S.", "non-GAAP", "(“GAAP”)"])

    # -- blocks ------------------------------------------------------------------------------
    def sentence_words(self) -> list[str]:
        rng = self.rng
        k = rng.randint(8, 30)
        s = rng.choices(self.words, cum_weights=self.cum, k=k)
        if rng.random() < 0.45:
            s[rng.randrange(k)] = self.amount()
        if rng.random() < 0.35:
            s[rng.randrange(k)] = self.special()
        if rng.random() < 0.15:
            s[rng.randrange(k)] += ","
        s[0] = s[0][:1].upper() + s[0][1:]
        s[-1] += "."
        return s

    def paragraph(self, n_sentences: int | None = None) -> None:
        rng = self.rng
        words: list[str] = []
        for _ in range(n_sentences or rng.randint(2, 7)):
            words.extend(self.sentence_words())
        bullet = rng.random() < 0.08
        if bullet:
            words[0] = "•" + (NBSP if rng.random() < 0.5 else " ") + words[0]
        i = 0
        while i < len(words):
            j = i + rng.randint(8, 16)
            self.emit(" ".join(words[i:j]))
            i = j

    def subheading(self) -> None:
        rng = self.rng
        ws = rng.choices(self.words[:200], k=rng.randint(2, 5))
        line = " ".join(w[:1].upper() + w[1:] for w in ws)
        self.emit(line.upper() if rng.random() < 0.25 else line)

    def table(self) -> None:
        rng = self.rng
        fy = self.fy
        self.emit(rng.choice(_TABLE_TITLES))
        if rng.random() < 0.6:
            self.emit("(in millions, except per share data)")
        ncols = rng.randint(2, 4)
        self.emit(f"Years Ended December{NBSP}31,")
        for c in range(ncols):
            self.emit(str(fy - c))
        if rng.random() < 0.4:
            self.emit("% Change")
            ncols += 1
        for r in range(rng.randint(4, 14)):
            self.emit(rng.choice(_ROW_LABELS))
            dollar = r == 0 or rng.random() < 0.15
            for _ in range(ncols):
                if dollar:
                    self.emit("$")
                x = rng.random()
                if x < 0.07:
                    self.emit("—")
                elif x < 0.2:
                    self.emit(f"({rng.randint(1, 9_999):,})")
                elif x < 0.3:
                    self.emit(f"{rng.randint(0, 99)}.{rng.randint(0, 99):02d}")
                else:
                    self.emit(f"{rng.randint(1, 99_999):,}")
        if rng.random() < 0.3:
            self.emit("See accompanying Notes to Consolidated Financial Statements.")

    def cover(self) -> None:
        for line in [
            "UNITED STATES",
            "SECURITIES AND EXCHANGE COMMISSION",
            "Washington, D.C. 20549",
            "FORM 10-K",
            "☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934",
            f"For the fiscal year ended December{NBSP}31, {self.fy}",
            "or",
            "☐ TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934",
            f"Commission File Number 001-{self.rng.randint(1000, 99999):05d}",
            self.company.upper(),
            "(Exact name of registrant as specified in its charter)",
            "Title of each class",
            "Trading Symbol(s)",
            "Name of each exchange on which registered",
            "Common Stock, par value $0.01 per share",
            self.ticker,
            "New York Stock Exchange",
        ]:
            self.emit(line)
        self.paragraph(3)
        self.page_break()

    def section(self, budget: int) -> None:
        rng = self.rng
        stop = self.size + budget
        while self.size < stop:
            r = rng.random()
            if r < 0.62:
                self.paragraph()
            elif r < 0.82:
                self.table()
            else:
                self.subheading()

    def build(self, target: int) -> str:
        self.cover()
        body = max(0, target - self.size - 400)
        total_w = sum(_ITEM_WEIGHTS)
        for (label, title), w in zip(_ITEMS, _ITEM_WEIGHTS):
            if title is None:
                self.emit(label)
                continue
            self.emit(f"{label.replace(' ', NBSP) if self.rng.random() < 0.5 else label} {title}")
            self.section(int(body * w / total_w))
        self.emit("SIGNATURES")
        self.paragraph(2)
        self.emit(f"Date: {self.filing_date_long()}")
        self.emit(self.company)
        text = "\n".join(self.lines)
        while len(text) < target:  # rounding shortfall: pad with more prose
            self.paragraph()
            text = "\n".join(self.lines)
        cut = text.rfind("\n", 0, target)
        return text[: cut if cut > target * 0.9 else target]

    def filing_date_long(self) -> str:
        y, m, d = self.filing_date.split("-")
        return f"{_MONTHS[int(m) - 1]} {int(d)}, {y}"


def generate_corpus(docs: int = 88, mean_chars: int = 550_000, seed: int = 0) -> list[dict]:
    """Return the corpus rows (dicts with the ficha columns). Depends only on its arguments."""
    rng = random.Random(seed)
    words, cum = _vocabulary(rng)
    lengths = _lengths(rng, docs, mean_chars)
    rows = []
    for (ticker, company), target in zip(_companies(rng, docs), lengths):
        fy = rng.randint(2015, 2023)
        filing_date = f"{fy + 1}-{rng.randint(2, 3):02d}-{rng.randint(1, 28):02d}"
        text = _DocWriter(rng, words, cum, ticker, company, fy, filing_date).build(target)
        rows.append(
            {"ticker": ticker, "company": company, "filing_type": "10-K",
             "filing_date": filing_date, "text": text}
        )
    return rows


# -- questions -------------------------------------------------------------------------------
_WORD = re.compile(r"[A-Za-z]{4,}")
_SPACES = re.compile(r" {2,}")
_YEAR = re.compile(r"(?:19|20)\d\d")
_NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?%?")


def _cut(rng: random.Random, text: str, need=None, tries: int = 40) -> str:
    """A substring of ``text`` of 80-500 characters at word boundaries (satisfying ``need``)."""
    n = len(text)
    best = ""
    for _ in range(tries):
        want = rng.randint(80, 470)
        if n <= want:
            start, end = 0, n
        else:
            start = rng.randrange(0, n - want)
            while 0 < start < n and not text[start - 1].isspace():
                start += 1
            while start < n and text[start].isspace():
                start += 1
            end = min(n, start + want)
            while end < n and not text[end].isspace():
                end += 1
            if end - start > 500:
                cut = max(text.rfind(" ", start, start + 500), text.rfind("\n", start, start + 500))
                end = cut if cut > start else start + 500
        p = text[start:end].strip()
        if len(p) < min(80, n // 2):
            continue
        best = p
        if need is None or need(p):
            return p
    return best


def _has_ws_to_alter(p: str) -> bool:
    return "\n" in p or NBSP in p or "  " in p


def _has_non_ascii(p: str) -> bool:
    """A non-ASCII character other than NBSP, not at either end of the passage."""
    return any(ord(ch) > 127 and ch != NBSP for ch in p[1:-1])


def _drop_non_ascii(p: str) -> str:
    """FinanceBench-style: NBSP -> space, other non-ASCII dropped, runs of spaces collapsed."""
    return _SPACES.sub(" ", "".join(ch for ch in p.replace(NBSP, " ") if ord(ch) < 128)).strip()


def _change_word(rng: random.Random, p: str, words: list[str]) -> str:
    spans = list(_WORD.finditer(p))
    if not spans:
        return p + " " + rng.choice(words)
    m = rng.choice(spans)
    new = m.group()
    while new == m.group():
        new = rng.choice(words)
    return p[: m.start()] + new + p[m.end():]


def _question(rng: random.Random, company: str, fy: int, passage: str) -> tuple[str, str]:
    metric = rng.choice(_METRICS)
    t = rng.random()
    if t < 0.15:
        return f"Did {company}'s {metric} increase in fiscal {fy}?", rng.choice(["Yes", "No"])
    if t < 0.3:
        return (f"What drove the change in {company}'s {metric} between fiscal {fy - 1} and "
                f"fiscal {fy}?", rng.choice(_DRIVERS))
    nums = [m.group() for m in _NUMBER.finditer(passage)
            if len(m.group()) >= 3 and not _YEAR.fullmatch(m.group())]
    answer = rng.choice(nums) if nums and rng.random() < 0.7 else f"${rng.randint(1, 99_999):,} million"
    q = rng.choice([
        "What was {c}'s {m} in fiscal {y}?",
        "How much did {c} report for {m} in FY{y}?",
        "According to its fiscal {y} Form 10-K, what was {c}'s {m}?",
        "What is the FY{y} {m} for {c}? Answer in USD millions.",
    ]).format(c=company, m=metric, y=fy)
    return q, answer


def generate_questions(corpus: list[dict], pairs: int = 1331, seed: int = 0) -> tuple[list[dict], str]:
    """Return the questions rows and the per-row kind letters (E, W, A, C, F)."""
    rng = random.Random(f"{seed}:questions")
    words, _ = _vocabulary(random.Random(f"{seed}:vocab"))
    n_docs = len(corpus)
    weights = [rng.lognormvariate(0.0, 1.0) for _ in range(n_docs)]
    doc_of = sorted(rng.choices(range(n_docs), weights=weights, k=pairs))
    # exact kind counts, shuffled over the rows
    n_exact, n_ws, n_edit = round(0.60 * pairs), round(0.25 * pairs), round(0.10 * pairs)
    n_foreign = pairs - n_exact - n_ws - n_edit
    kinds = ["E"] * n_exact + ["W"] * n_ws + ["X"] * n_edit + ["F"] * n_foreign
    rng.shuffle(kinds)
    foreign_src = random.Random(f"{seed}:foreign")
    fwords, fcum = _vocabulary(foreign_src)

    rows, letters = [], []
    for d, kind in zip(doc_of, kinds):
        doc = corpus[d]
        text = doc["text"]
        fy = int(doc["filing_date"][:4]) - 1
        if kind == "E":
            p = _cut(rng, text)
        elif kind == "W":
            p = " ".join(_cut(rng, text, _has_ws_to_alter).split())
        elif kind == "X":
            src = _cut(rng, text, _has_non_ascii) if rng.random() < 0.5 else None
            if src is not None and _has_non_ascii(src):
                p, kind = _drop_non_ascii(src), "A"
            else:
                p, kind = _change_word(rng, _cut(rng, text), words), "C"
        else:
            w = _DocWriter(foreign_src, fwords, fcum, "ZZZ", "Elsewhere Corp", fy, doc["filing_date"])
            w.paragraph(rng.randint(2, 5))
            p = " ".join(w.lines)
            target = rng.randint(80, 500)
            if len(p) > target:
                cut = p.rfind(" ", 0, target)
                p = p[: cut if cut >= 80 else target]
        q, a = _question(rng, doc["company"], fy, p)
        rows.append({"question": q, "answer": a, "supporting_passage": p, "ticker": doc["ticker"],
                     "company": doc["company"], "chunk_index": None})
        letters.append(kind)
    return rows, "".join(letters)


def make_dataset(out_dir: Path, docs: int = 88, pairs: int = 1331, mean_chars: int = 550_000,
                 seed: int = 0) -> Path:
    """Write a synthetic dataset in Hub layout to ``out_dir`` and return ``out_dir``.

    Raises:
        SystemExit: ``out_dir`` holds files and is not a synthetic set made here (no
            ``synthetic.json``): a real dataset's folder (``--data ../shared/data`` given to a
            benchmark that expects a synthetic one) is never written into.
    """
    out_dir = Path(out_dir)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / "synthetic.json").is_file():
        raise SystemExit(f"{out_dir} holds files and is not a synthetic set made by make_synthetic.py: "
                         f"not writing into it (give an empty or new folder)")
    corpus = generate_corpus(docs, mean_chars, seed)
    questions, kinds = generate_questions(corpus, pairs, seed)
    lengths = [len(r["text"]) for r in corpus]
    body = (f"\n# Synthetic ficha-like dataset\n\nGenerated by `benchmarks/make_synthetic.py` "
            f"(seed {seed}): {docs} random 10-K-like documents ({sum(lengths):,} characters) and "
            f"{pairs} templated QA pairs. Not real data; for benchmarks only.\n")
    write_hub_layout(out_dir, corpus, questions, body=body,
                     corpus_schema=CORPUS_SCHEMA, questions_schema=QUESTIONS_SCHEMA)
    meta = {
        "generator": "benchmarks/make_synthetic.py",
        "params": {"docs": docs, "pairs": pairs, "mean_chars": mean_chars, "seed": seed},
        "corpus": {
            "docs": docs,
            "total_chars": sum(lengths),
            "mean_chars": round(sum(lengths) / max(1, docs), 1),
            "min_chars": min(lengths, default=0),
            "max_chars": max(lengths, default=0),
        },
        "pairs": pairs,
        "passage_kinds": {
            "exact": kinds.count("E"),
            "whitespace": kinds.count("W"),
            "edited_non_ascii_dropped": kinds.count("A"),
            "edited_word_changed": kinds.count("C"),
            "foreign": kinds.count("F"),
        },
        "row_kinds_legend": {"E": "exact", "W": "whitespace", "A": "edited_non_ascii_dropped",
                             "C": "edited_word_changed", "F": "foreign"},
        "row_kinds": kinds,
    }
    (out_dir / "synthetic.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return out_dir


def _du(path: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a synthetic ficha-like MTCB dataset.")
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--docs", type=int, default=88)
    ap.add_argument("--pairs", type=int, default=1331)
    ap.add_argument("--mean-chars", type=int, default=550_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = make_dataset(a.out_dir, a.docs, a.pairs, a.mean_chars, a.seed)
    took = time.perf_counter() - t0
    meta = json.loads((out / "synthetic.json").read_text(encoding="utf-8"))
    c = meta["corpus"]
    print(f"{out}: {c['docs']} docs, mean {c['mean_chars']:,.0f} chars "
          f"(min {c['min_chars']:,}, max {c['max_chars']:,}, total {c['total_chars']:,}), "
          f"{meta['pairs']} pairs {meta['passage_kinds']}, "
          f"{_du(out) / 1e6:.1f} MB on disk, {took:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
