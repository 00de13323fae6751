"""The review queue's rows: one line per pair, its status, verdict and problem marks, its id,
document key and question; and the legend of every mark for the help screen."""

from __future__ import annotations

from mtcb_curate.app.controller import ReviewController
from mtcb_curate.dataset.model import Status, Via
from mtcb_curate.plaintext import one_line
from mtcb_curate.verify.verdict import Verdict

#: Queue mark of a pair that would fail a check if accepted (not shown on rejected pairs).
FAIL_MARK = "▲"
#: Queue mark of a passage no configured chunker holds wholly (``F``'s findability; shown when
#: the pair would fail no check, in the same column as ``FAIL_MARK``).
UNFINDABLE_MARK = "⊄"
#: Queue and head-line mark of a pair the curator wrote (``H``), before its question.
HAND_MARK = "✎"
#: The ``origin`` of a hand-written pair.
HAND_ORIGIN = Via.HAND
#: Every mark the queue and the QA panel show: (mark, where, meaning), for the help screen.
MARK_LEGEND: list[tuple[str, str, str]] = [
    ("·", "queue", "undecided"),
    ("✓", "queue", "accepted"),
    ("✗", "queue", "rejected"),
    ("»", "queue", "skipped"),
    ("⚑", "queue", "flagged"),
    ("≈", "queue", "passage found after normalizing (whitespace, typography or ASCII)"),
    ("~", "queue", "passage found only as a fuzzy match"),
    ("≠", "queue", "passage missing from its document"),
    ("∅", "queue", "empty passage"),
    ("(none)", "queue", "exact passage, or not verified yet since the last change"),
    ("!", "queue", "an input problem on the row (a load problem)"),
    ("▲", "queue", "the pair would fail a check if accepted (not on rejected pairs)"),
    ("⊄", "queue", "no configured chunker holds the passage wholly (after F)"),
    ("✎", "queue, head line", "a pair added by hand (H)"),
    ("≈N similar", "head line", "near-duplicates of this pair (d opens the cluster)"),
    ("shares its passage", "head line", "a shared-passage group (S): a warning, not duplicates"),
    ("note:", "head line", "the curator's note on the pair (N)"),
    ("✗", "panel problems", "a check the pair would fail if accepted, with the key that fixes it"),
    ("!", "panel problems", "a check the pair would warn about if accepted"),
    ("◇", "panel findability", "per chunker: the chunk holding the passage and BM25's rank (F)"),
]
#: Queue mark per verdict (exact passages have none).
VERDICT_MARK = {Verdict.EXACT: " ", Verdict.NORMALIZED: "≈", Verdict.FUZZY: "~", Verdict.MISSING: "≠",
                Verdict.EMPTY: "∅"}

GLYPH = {Status.UNDECIDED: "·", Status.ACCEPTED: "✓", Status.REJECTED: "✗", Status.SKIPPED: "»",
         Status.FLAGGED: "⚑"}


class QueueRows:
    """The text and class of each queue row (``PairList``'s callbacks), read from the review
    controller: plain text, one line, never markup."""

    def __init__(self, controller: ReviewController) -> None:
        self.controller = controller
        session = controller.session
        self._key_width = min(10, max((len(p.doc_key) for p in session.pairs), default=4))
        self.resized()

    def resized(self) -> None:
        """The number of pairs changed: the id column's width follows."""
        self._id_width = len(str(max(0, len(self.controller.session) - 1)))

    def text(self, pid: int, width: int) -> str:
        """Row ``pid`` as plain text, cut to ``width`` characters (``PairList`` fits it to cells)."""
        c = self.controller
        session = c.session
        pair = session.pairs[pid]
        status = session.status(pid)
        r = c.verdicts.cached(pid)  # the CURRENT passage's verdict, when known: never a stale one
        mark = "!" if pair.problems else (VERDICT_MARK[r.verdict] if r is not None else " ")
        fails = FAIL_MARK if status != Status.REJECTED and c.pair_fails(pid) else " "
        if fails == " " and c.find_lines:
            lines = c.current_find_lines(pid)
            fails = UNFINDABLE_MARK if lines is not None and lines.fits_nowhere() else " "
        key = one_line(pair.doc_key, self._key_width)
        head = f"{GLYPH[status]}{mark}{fails}{pid:>{self._id_width}} {key:<{self._key_width}} "
        if pair.origin == HAND_ORIGIN:
            head += HAND_MARK + " "
        return head + one_line(session.view(pid).question, max(0, width - len(head)))

    def css_class(self, pid: int) -> str:
        """Row ``pid``'s component class suffix: its status."""
        return self.controller.session.status(pid).value
