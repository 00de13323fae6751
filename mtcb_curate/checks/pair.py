"""Problems before acceptance: which checks one pair would fail or warn, as if accepted, and the
key that fixes each.

The rules are the checks' own per-pair functions (``passages.verbatim_problem``,
``elsewhere_problem``, ``passage_length_problem``; ``findable.findable_problem``;
``questions.answerable_problem``,
``question_form_problem``; ``links.link_problem``), so a pair's problems here are the reasons the
whole-set checks give it (``tests/test_pair_problems.py`` holds them equal on the sample and on
a fixture). Two kinds of evaluation:

- per pair, cheap enough for every key on the app's thread: ``passage_length``,
  ``question_form``, ``answerable`` (the lexical rule, no LLM judge) are pure text; ``verbatim``,
  ``unique_passage`` and ``links`` read the verification result they are given (the review
  screen's cached verdict: a quick one has no other documents and no window yet, so those rules
  say nothing until the full verdict arrives) and never tokenize (``links``' range test uses the
  index's cached windows only);
- set-wide (``duplicates``, ``shared_passage`` when that check exists): a pair's problem depends
  on the others, so :func:`set_check_results` runs those checks once (in a worker) over every
  pair not rejected, and :func:`pair_problems` reads that cached result (``set_results``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mtcb_curate.checks import findable, links, passages, questions
from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, Limits
from mtcb_curate import neardup

if TYPE_CHECKING:
    from mtcb_curate.store.session import ReviewSession
    from mtcb_curate.verify.verdict import PairResult

#: The keys of the review screen that fix each check's problem, most direct first (default
#: bindings; the screen shows them as rebound).
FIX_KEYS: dict[str, tuple[str, ...]] = {
    "verbatim": ("s", "m"),
    "unique_passage": ("m", "e"),
    "duplicates": ("d",),
    "shared_passage": ("S",),
    "passage_length": ("z", "m"),
    "findable": ("z", "m"),
    "answerable": ("e", "z"),
    "question_form": ("e", "r", "x"),
    "links": ("i",),
}

#: What each fix key does, in a word or two (for the panel's problems line).
FIX_WORDS: dict[str, str] = {
    "s": "snap", "m": "select", "e": "edit", "d": "duplicates", "S": "shared passage", "z": "shrink",
    "r": "regenerate", "x": "reject", "i": "repair chunk_index",
}

#: Checks evaluated per pair (see the module docstring), in the checklist's order.
PER_PAIR_CHECKS: tuple[str, ...] = ("verbatim", "unique_passage", "passage_length", "findable", "answerable",
                                    "question_form", "links")

#: ``pair_problems``' ``support_reason``: work the ``answerable`` support reason out now
#: (``questions.overlap_problem``; the stemmer and, for most answers, the paraphrase model).
WORK_OUT = object()
#: ``pair_problems``' ``support_reason``: not known yet (the analysis works it out): the
#: ``answerable`` rule reports the answer's length only, as the verdict's rules say nothing
#: until the verdict is known.
NOT_KNOWN = object()

#: Checks whose per-pair problem depends on the other pairs: read from ``set_results``.
SET_CHECKS: tuple[str, ...] = ("duplicates", "shared_passage")


@dataclass(frozen=True)
class PairProblem:
    """One check one pair would fail or warn.

    Attributes:
        check_id: the check (``CHECK_IDS``).
        status: ``CheckStatus.FAIL`` or ``CheckStatus.WARN``.
        reason: the check's one line of reason for this pair.
        fix_keys: the review screen's default keys that fix it (``FIX_KEYS``).
    """

    check_id: str
    status: CheckStatus
    reason: str
    fix_keys: tuple[str, ...]

    @property
    def fails(self) -> bool:
        """True when the problem fails its check (a warning does not)."""
        return self.status == CheckStatus.FAIL


def _problem(check_id: str, status: CheckStatus | str, reason: str) -> PairProblem:
    return PairProblem(check_id, CheckStatus(status), reason, FIX_KEYS.get(check_id, ()))


def pair_problems(source: CheckContext | ReviewSession, pid: int, limits: Limits | None = None, *,
                  result: PairResult | None = None, n_windows: Callable[[str], int | None] | None = None,
                  set_results: Mapping[str, CheckResult] | None = None,
                  placements: Mapping[str, str | None] | None = None,
                  reference_size: int | None = None, support_reason: object = WORK_OUT) -> list[PairProblem]:
    """Every check pair ``pid`` would fail or warn if it were accepted, in the checklist's order.

    Args:
        source: a ``CheckContext`` (its limits, its verification result of ``pid`` and its
            tokenized windows: exactly what the whole-set checks read) or a ``ReviewSession``
            (the review screen, on a key: nothing is tokenized).
        pid: the pair id.
        limits: passage length bounds (default: the context's, or ``Limits.resolve`` of the
            profile without the config file).
        result: the pair's verification result of its CURRENT passage (default: the context's;
            with a session, a quick exact/normalized search). A result for another passage is
            ignored. None for a pair not verified yet: ``verbatim``, ``unique_passage`` and the
            window test say nothing.
        n_windows: document key -> number of windows, or None when unknown (default: the
            context tokenizes; a session reads the index's cache only).
        set_results: check id -> the result of a set-wide check (``set_check_results``) whose
            reasons for ``pid`` are reported as they are.
        placements: with a session, the pair's current passage under each configured chunker
            (spec text -> ``preview.placement`` state; the app's findability worker) for
            ``findable``'s warning; a context reads the preview cache (``findable.placements``).
        reference_size: ``[preview] reference_size`` in characters, as the caller resolved it
            from its config file (default: ``findable.settings``, the default config file's).
        support_reason: the ``answerable`` support reason of the pair's CURRENT texts as
            worked out elsewhere (``questions.overlap_problem``: a reason, or None when
            supported; the review app's analysis), :data:`WORK_OUT` (default: work it out
            now) or :data:`NOT_KNOWN` (only the answer's length is reported).

    Returns:
        ``PairProblem``s; empty when the pair would pass every check evaluated.
    """
    windows: Callable[[str], list] | None
    if isinstance(source, CheckContext):
        session = source.session
        limits = limits or source.limits
        if result is None:
            result = source.verified.get(pid)
        index = source.index
        windows = index.windows
        if n_windows is None:
            n_windows = lambda key: len(index.windows(key))  # noqa: E731
    else:
        session = source
        limits = limits or Limits.resolve(session.dataset.profile, {})
        index = session.corpus_index
        if n_windows is None:
            n_windows = lambda key: None if (w := index.cached_windows(key)) is None else len(w)  # noqa: E731
        # The repair named in the reason needs the windows: only when already tokenized.
        windows = index.cached_windows if index.cached_windows(session.pairs[pid].doc_key) is not None else None
    view = session.view(pid)
    if result is not None and result.passage != view.passage:
        result = None
    out: list[PairProblem] = []
    if result is not None:
        why = passages.verbatim_problem(result)
        if why is not None:
            out.append(_problem("verbatim", CheckStatus.FAIL, why))
        why = passages.elsewhere_problem(result)
        if why is not None:
            out.append(_problem("unique_passage", CheckStatus.WARN, why))
    out += _from_set(set_results, ("duplicates",), pid)
    chars = result.chars if result is not None else len(view.passage)
    length = passages.passage_length_problem(chars, limits, result.tokens if result is not None else None)
    if length is not None:
        out.append(_problem("passage_length", *length))
    if isinstance(source, CheckContext):
        placements = (findable.placements(source) or {}).get(pid)
    if reference_size is None:
        reference_size = findable.settings(source).reference_size
    found = findable.findable_problem(view.passage, reference_size, placements)
    if found is not None:
        out.append(_problem("findable", *found))
    if support_reason is WORK_OUT:
        why = questions.answerable_problem(view.answer, view.passage, view.question)
    elif support_reason is NOT_KNOWN:
        why = questions.answer_length_problem(view.answer)
    else:
        why = questions.join_reasons(support_reason, questions.answer_length_problem(view.answer)) or None
    if why is not None:
        out.append(_problem("answerable", CheckStatus.WARN, why))
    form = questions.question_form_problem(view.question)
    if form is not None:
        out.append(_problem("question_form", *form))
    link = links.link_problem(session.dataset, view.pair, n_windows, result,
                              meaning=getattr(session, "chunk_index_meaning", None), windows=windows)
    if link is not None:
        out.append(_problem("links", *link))
    out += _from_set(set_results, tuple(c for c in SET_CHECKS if c != "duplicates"), pid)
    from mtcb_curate.checks.gate import CHECK_IDS

    order = {cid: i for i, cid in enumerate(CHECK_IDS)}
    return sorted(out, key=lambda p: order.get(p.check_id, len(order)))


def _from_set(set_results: Mapping[str, CheckResult] | None, ids: tuple[str, ...], pid: int) -> list[PairProblem]:
    out = []
    for check_id in ids:
        r = (set_results or {}).get(check_id)
        if r is not None and pid in r.reasons:
            out.append(_problem(check_id, CheckStatus.FAIL if pid in r.failing else CheckStatus.WARN,
                                r.reasons[pid]))
    return out


def failing(problems: list[PairProblem]) -> list[PairProblem]:
    """The problems that fail their check (the ones accepting asks about)."""
    return [p for p in problems if p.fails]


def set_check_results(session: ReviewSession, *, threshold: float = neardup.DEFAULT_THRESHOLD,
                      limits: Limits | None = None, search: neardup.LinkSet | None = None
                      ) -> dict[str, CheckResult]:
    """Run the set-wide checks (``SET_CHECKS`` that exist) over every pair not rejected, as if
    accepted: check id -> result, for :func:`pair_problems`' ``set_results``. Near-duplicate
    search over the whole set (about a second at thousands of pairs): call it in a worker.

    ``search``: the links of a search over every pair of the session at ``threshold`` (e.g.
    ``app.clusters.search``). When its texts are the session's current ones, ``duplicates``
    and ``shared_passage`` are grouped from its links over the pairs not rejected, with the
    current marks, and nothing is searched again (see ``neardup.LinkSet`` for how that can
    differ from a search over those pairs alone); otherwise both checks run as usual.
    """
    from mtcb_curate.checks.gate import CHECKS_BY_ID, run_check

    if search is not None and search.threshold == threshold:
        items = [neardup.Item(pid, v.pair.doc_key, v.question, v.answer, v.passage)
                 for pid, v in ((pid, session.view(pid)) for pid in range(len(session)))]
        same = items == search.items
        if same:
            from mtcb_curate.dataset.model import Status

            live = [pid for pid in range(len(session)) if session.status(pid) is not Status.REJECTED]
            extra = neardup.llm_links(session.workspace.get_meta(neardup.LLM_CLUSTERS_KEY), len(session))
            if tuple(extra) == search.extra_links:  # the LLM links it ran with are still the stored ones
                clusters, shared = search.groups(keep=live, not_duplicates=session.not_duplicates(),
                                                 shared_marks=session.shared_evidence())
                out = {"duplicates": questions.duplicates_result(clusters, threshold),
                       "shared_passage": passages.shared_passage_result(shared)}
                return {cid: r for cid, r in out.items() if cid in SET_CHECKS and cid in CHECKS_BY_ID}

    ctx = CheckContext.build(session, limits=limits, threshold=threshold, loads=False, include_undecided=True)
    return {cid: run_check(CHECKS_BY_ID[cid], ctx) for cid in SET_CHECKS if cid in CHECKS_BY_ID}
