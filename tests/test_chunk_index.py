"""chunk_index repair (verify/chunk_index.py): the window of a span equals the one computed
independently from token offsets; refusals; proposals over a dataset and a session; the
chunk_index_meaning setting; squad-mtcb end to end."""

from __future__ import annotations

import random
from bisect import bisect_right
from collections import Counter
from dataclasses import replace

import pytest
from support import opened, write_source

from mtcb_curate.dataset import tokens as tok
from mtcb_curate.dataset.loading import load
from mtcb_curate.dataset.model import QAPair
from mtcb_curate.dataset.profiles import get_profile
from mtcb_curate.verify import CorpusIndex, verify_dataset, verify_pair
from mtcb_curate.verify.chunk_index import (
    MEANING_IGNORE,
    MEANING_KEY,
    ChunkIndexFix,
    checks_chunk_index,
    chunk_index_meaning,
    chunk_index_problem,
    propose_chunk_indexes,
    propose_fix,
    window_of_span,
)

STRIDE, SIZE = 7680, 8192


def _document(words: int = 24_000, seed: int = 3) -> str:
    """An English-like ASCII document of about 4.5 windows (34,449 tokens)."""
    rng = random.Random(seed)
    vocab = ("revenue market the of and company fiscal year increased net income segment "
             "operating cash flow assets million billion December quarter growth").split()
    out = []
    for n in range(words):
        out.append(rng.choice(vocab) if rng.random() < 0.8 else str(rng.randrange(10_000)))
        out.append(".\n" if n % 17 == 16 else " ")
    return "".join(out)


TEXT = _document()


class Independent:
    """The window of a span derived by arithmetic from the token offsets alone (no
    ``tokens.windows``): token offsets from ``decode_with_offsets`` of the whole text's
    encoding, then window i covers tokens [7680 i, 7680 i + 8192)."""

    def __init__(self, text: str):
        enc = tok.encoding()
        self.tokens = enc.encode_ordinary(text)
        _, self.offsets = enc.decode_with_offsets(self.tokens)
        self.n = len(self.tokens)

    def token_of(self, char: int) -> int:
        """The token holding character ``char``."""
        return bisect_right(self.offsets, char) - 1

    def window(self, start: int, end: int) -> int | None:
        t0, t1 = self.token_of(start), self.token_of(end - 1)  # first and last token of the span
        i = max(0, (t1 - SIZE) // STRIDE + 1)  # the first window whose end passes t1
        n_windows = len(range(0, max(self.n - 512, 1), STRIDE))
        return i if i * STRIDE <= t0 and i < n_windows else None

    def char_of(self, token: int) -> int:
        return self.offsets[token]


@pytest.fixture(scope="module")
def ind() -> Independent:
    return Independent(TEXT)


def test_the_synthetic_document_spans_several_windows(ind):
    assert ind.n > 4 * STRIDE
    assert len(tok.windows(TEXT)) == 5


def test_window_of_span_equals_the_window_computed_from_token_offsets(ind):
    ws = tok.windows(TEXT)
    rng = random.Random(5)
    checked = Counter()
    for _ in range(3000):
        start = rng.randrange(len(TEXT) - 1)
        end = min(len(TEXT), start + rng.choice((1, 20, 300, 1500, 2500, 4000)))
        want = ind.window(start, end)
        assert window_of_span(ws, start, end) == want, (start, end)
        checked[want] += 1
    # Spans near the boundaries: inside the overlap (both windows hold it: the first is chosen)
    # and straddling it.
    for b in (1, 2, 3, 4):
        for t0, t1 in ((b * STRIDE + 10, b * STRIDE + 400), (b * STRIDE - 50, b * STRIDE + 100),
                       (b * STRIDE - 300, (b - 1) * STRIDE + SIZE + 300)):
            t1 = min(t1, ind.n - 1)
            start, end = ind.char_of(t0), ind.char_of(t1)
            assert window_of_span(ws, start, end) == ind.window(start, end), (t0, t1)
    assert set(checked) == {None, 0, 1, 2, 3, 4}, checked  # every window, and straddling spans
    # The text and the CorpusIndex forms give the same answer.
    index = CorpusIndex({"d": TEXT})
    assert window_of_span(TEXT, 100, 200) == window_of_span(index, 100, 200, key="d") == 0


def test_a_span_in_the_overlap_gets_the_first_window(ind):
    start, end = ind.char_of(STRIDE + 20), ind.char_of(STRIDE + 300)  # tokens shared by windows 0 and 1
    ws = tok.windows(TEXT)
    assert ws[0].start <= start and end <= ws[0].end and ws[1].start <= start and end <= ws[1].end
    assert window_of_span(ws, start, end) == 0
    start, end = ind.char_of(STRIDE + SIZE - STRIDE + 5), ind.char_of(STRIDE + 600)  # past window 0's end
    assert window_of_span(ws, start, end) == 1 == ind.window(start, end)


def test_a_span_straddling_two_windows_beyond_the_overlap_has_no_window(ind):
    start, end = ind.char_of(STRIDE - 200), ind.char_of(SIZE + 200)  # 912 tokens across tokens 7,680-8,192
    assert ind.window(start, end) is None
    assert window_of_span(TEXT, start, end) is None


def test_window_of_span_edges():
    assert window_of_span("", 0, 0) == 0  # an empty document has one empty window
    assert window_of_span("short text", 0, 10) == 0
    assert window_of_span("short text", 3, 99) is None  # past the end
    with pytest.raises(ValueError):
        window_of_span("short text", 5, 2)
    with pytest.raises(ValueError):
        window_of_span("short text", -1, 2)
    with pytest.raises(TypeError):
        window_of_span(CorpusIndex({"d": "x"}), 0, 1)


def _pair(pid: int, passage: str, chunk_index: int | None, key: str = "d") -> QAPair:
    return QAPair(pid, f"question {pid}?", "answer", passage, key, chunk_index)


def test_proposals_passing_and_refused(ind):
    index = CorpusIndex({"d": TEXT, "other": "Nothing to see here."})
    a, b = ind.char_of(2 * STRIDE + 1000), ind.char_of(2 * STRIDE + 1100)  # only in window 2
    c, d = ind.char_of(STRIDE - 200), ind.char_of(SIZE + 200)  # straddles 0|1
    o0, o1 = ind.char_of(STRIDE + 10), ind.char_of(STRIDE + 200)  # in the overlap of 0 and 1
    pairs = [
        _pair(0, TEXT[a:b], 0),  # wrong window -> 2
        _pair(1, TEXT[a:b], 2),  # right: no fix
        _pair(2, TEXT[a:b], None),  # none -> 2
        _pair(3, TEXT[a:b], 9),  # out of range -> 2
        _pair(4, TEXT[c:d], 3),  # refused
        _pair(5, TEXT[o0:o1], 1),  # the overlap's second window holds it: right as it is
        _pair(6, TEXT[o0:o1], 3),  # -> 0, the first window holding it
        _pair(7, "a passage that is nowhere in the document at all", 0),  # not located: nothing
        _pair(8, "Nothing to see here.", 5, key="other"),  # one window -> 0
        _pair(9, " ".join(TEXT[a:b].split(" ")[:3]) + "   " + " ".join(TEXT[a:b].split(" ")[3:]), 0),  # normalized
    ]
    results = [verify_pair(index, p, elsewhere=False, count_tokens=False) for p in pairs]
    assert results[9].verdict == "normalized"
    fixes = {f.pair_id: f for f in propose_chunk_indexes(index, results)}
    assert sorted(fixes) == [0, 2, 3, 4, 6, 8, 9]
    assert (fixes[0].old, fixes[0].new) == (0, 2)
    assert "chunk_index 0's window does not hold the passage" in fixes[0].reason
    assert "window 2" in fixes[0].reason
    assert (fixes[2].old, fixes[2].new) == (None, 2) and "no chunk_index" in fixes[2].reason
    assert (fixes[3].old, fixes[3].new) == (9, 2) and "out of range (5 windows)" in fixes[3].reason
    assert fixes[4].refused and fixes[4].new is None and fixes[4].old == 3
    assert "no single window holds the passage" in fixes[4].reason and "shorten" in fixes[4].reason
    assert (fixes[6].old, fixes[6].new) == (3, 0)
    assert (fixes[8].old, fixes[8].new) == (5, 0)
    assert fixes[9].new == 2
    # Applying the fixes makes every repaired pair's window hold its passage (verification's rule).
    for pid, fix in fixes.items():
        if not fix.refused:
            assert fix.new == ind.window(fix.start, fix.end) or pairs[pid].doc_key == "other"
            again = verify_pair(index, replace(pairs[pid], chunk_index=fix.new), elsewhere=False, count_tokens=False)
            assert again.in_chunk is True
    assert propose_fix(index.windows("d"), results[1]) is None
    with pytest.raises(TypeError):
        propose_chunk_indexes(index)


def test_an_exact_passage_occurring_twice_keeps_a_window_holding_either(ind):
    line = "A sentence that occurs twice in the document, once per window."
    s1, s2 = ind.char_of(1000), ind.char_of(3 * STRIDE + 1000)
    text = TEXT[:s1] + line + TEXT[s1:s2] + line + TEXT[s2:]
    index = CorpusIndex({"d": text})
    second = window_of_span(index, s2 + len(line), s2 + 2 * len(line), key="d")
    assert second == 3
    kept = verify_pair(index, _pair(0, line, second), elsewhere=False, count_tokens=False)
    moved = verify_pair(index, _pair(1, line, 1), elsewhere=False, count_tokens=False)
    fixes = propose_chunk_indexes(index, [kept, moved])
    assert [(f.pair_id, f.new) for f in fixes] == [(1, 0)]  # the first occurrence's window


def test_propose_on_a_session_uses_the_edited_passage(tmp_path):
    ws_texts = TEXT
    corpus = [{"ticker": "AAA", "company": "Alpha", "text": ws_texts}]
    ind = Independent(ws_texts)
    a, b = ind.char_of(100), ind.char_of(160)
    c, d = ind.char_of(2 * STRIDE + 1000), ind.char_of(2 * STRIDE + 1060)
    questions = [{"question": "What?", "answer": "x", "supporting_passage": ws_texts[a:b], "ticker": "AAA",
                  "company": "Alpha", "chunk_index": 0}]
    session = opened(write_source(tmp_path / "src", corpus, questions), tmp_path / "ws")
    try:
        assert propose_chunk_indexes(session) == []
        assert propose_chunk_indexes(session.dataset) == []
        session.edit(0, {"supporting_passage": ws_texts[c:d]})
        fixes = propose_chunk_indexes(session)
        assert [(f.pair_id, f.old, f.new) for f in fixes] == [(0, 0, 2)]
        assert session.corpus_index.cached_windows("AAA") is not None  # the session's cache is used
    finally:
        session.workspace.close()


def test_chunk_index_meaning_setting():
    assert MEANING_KEY == "chunk_index_meaning"
    assert chunk_index_meaning(None) == chunk_index_meaning("") == "mtcb"
    assert chunk_index_meaning(" Ignore ") == MEANING_IGNORE
    with pytest.raises(ValueError):
        chunk_index_meaning("paragraph")
    assert checks_chunk_index(None) and checks_chunk_index("mtcb") and not checks_chunk_index("ignore")


def test_chunk_index_problem_says_how_to_fix():
    fix = ChunkIndexFix(0, 3, 1, "why")
    msg = chunk_index_problem(None, 3, 4, False, fix)
    assert msg.startswith("chunk 3's window does not contain the passage")
    assert "set it to 1" in msg and "chunk_index_meaning = ignore" in msg
    assert "out of range (the document has 1 window)" in chunk_index_problem("mtcb", 7, 1, None)
    refused = chunk_index_problem("mtcb", 3, 4, False, ChunkIndexFix(0, 3, None, "why"))
    assert "shorten" in refused
    assert chunk_index_problem("ignore", 3, 4, False, fix) is None
    assert chunk_index_problem("ignore", 7, 1, None) is None
    assert chunk_index_problem("mtcb", 3, 4, True) is None
    assert chunk_index_problem("mtcb", None, 4, None) is None
    with pytest.raises(ValueError):
        chunk_index_problem("bogus", 3, 4, False)


def test_squad_bulk_repair(shared_data):
    ds = load("squad", get_profile("gacha"), [str(shared_data / "squad-mtcb")])
    assert len(ds.pairs) == 1299
    index = CorpusIndex.from_dataset(ds)
    before = verify_dataset(ds, count_tokens=False, index=index).results
    wrong = {r.id for r in before if r.in_chunk is False}
    fixes = propose_chunk_indexes(index, before)
    assert not any(f.refused for f in fixes)
    changed = {f.pair_id for f in fixes if f.new != f.old}
    assert changed == wrong and len(changed) == 1259  # chunk_index numbers paragraphs here
    # Each new window equals the one computed independently from the token offsets.
    independent = {key: Independent(d.text) for key, d in ds.documents.items()}
    for f in fixes:
        assert f.new == independent[ds.pairs[f.pair_id].doc_key].window(f.start, f.end), f
    assert {f.new for f in fixes} == {0, 1}  # Yuan_dynasty has two windows
    # Afterwards every located pair's window holds its passage, and nothing more is proposed.
    new = {f.pair_id: f.new for f in fixes}
    ds.pairs[:] = [replace(p, chunk_index=new.get(p.id, p.chunk_index)) for p in ds.pairs]
    after = verify_dataset(ds, count_tokens=False, index=index).results
    assert all(r.in_chunk is True for r in after if r.start is not None)
    assert sum(r.start is not None for r in after) == 1299
    assert propose_chunk_indexes(index, after) == []
