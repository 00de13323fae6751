"""What every check is made of: ``Check`` (id, worst status, function, description), its
``CheckResult``, the ``ChecklistReport`` of all checks, the passage ``Limits`` (resolved from the
profile and the ``[checklist]`` config table in one place, ``Limits.resolve``) and the
``CheckContext`` a check reads (computed once per run, shared by every check).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mtcb_curate.dataset.model import Status
from mtcb_curate.plaintext import escape_md
from mtcb_curate import neardup
from mtcb_curate.plaintext import one_line

if TYPE_CHECKING:
    from mtcb_curate.checks.cache import ChecklistCache
    from mtcb_curate.dataset.profiles import Profile
    from mtcb_curate.stats.targets import Targets
    from mtcb_curate.store.session import PairView, ReviewSession
    from mtcb_curate.verify.verdict import PairResult

#: Default passage length bounds in characters. MTCB's regenerated sets asked for 150-400
#: (legal) and 200-600 (scientific) characters, and 512-character chunks are a common benchmark
#: setting: a passage over 600 characters rarely survives such chunking (a passage of L
#: characters survives a random boundary of C-character chunks with probability about
#: (C - L) / C; ../shared/notes/mtcb.md). 30 characters is our floor for a quote that can single
#: out its document (hojicha's 3-50-character entity passages gave recall@1 of 6 %).
MIN_PASSAGE_CHARS = 30
MAX_PASSAGE_CHARS = 600


class CheckStatus(StrEnum):
    """A check's outcome. A ``StrEnum``: ``CheckStatus.PASS == "pass"``, and it serializes as
    the plain string."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass
class CheckResult:
    """One check's outcome.

    Attributes:
        id: the check id (``CHECK_IDS``).
        status: ``pass``, ``warn``, ``fail`` or ``skip`` (a ``CheckStatus``; plain strings compare equal).
        message: one line for the whole check.
        pairs: offending pair ids (ascending), failures and warnings together.
        reasons: pair id -> one line of reason (a ``dict``, or a :class:`MemberReasons` that
            makes each line when it is read).
        failing: the ids among ``pairs`` that fail (the others warn).
        seconds: how long the check took.
    """

    id: str
    status: CheckStatus | str
    message: str
    pairs: list[int] = field(default_factory=list)
    reasons: Mapping[int, str] = field(default_factory=dict)
    failing: set[int] = field(default_factory=set)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"id", "status", "pairs", "message", "reasons", "failing"}`` (``failing``:
        the ids among ``pairs`` that fail; the others warn)."""
        return {"id": self.id, "status": str(self.status), "pairs": list(self.pairs), "message": self.message,
                "reasons": {str(k): v for k, v in sorted(self.reasons.items())}, "failing": sorted(self.failing)}


class MemberReasons(Mapping):
    """Pair id -> reason for every member of some groups of pairs (near-duplicate clusters,
    shared-passage groups), each reason made from its group when it is read, not kept: a
    reason naming the other members of a group of m takes O(m) characters for each of its m
    members, and the whole set's groups at once would hold them all.

    Args:
        groups: the groups (anything with ``ids``, a tuple of pair ids); a pair in two groups
            takes its reason from the last, in the first one's place (as a ``dict`` filled
            group by group).
        reason: ``reason(group, pid)``: the line of member ``pid`` of ``group``.

    Iterates in that order; equal to the ``dict`` of the same items. :meth:`without` leaves
    some ids out.
    """

    __slots__ = ("_group_of", "_reason")

    def __init__(self, groups: Any, reason: Callable[[Any, int], str]):
        self._group_of: dict[int, Any] = {pid: g for g in groups for pid in g.ids}
        self._reason = reason

    def __getitem__(self, pid: int) -> str:
        return self._reason(self._group_of[pid], pid)

    def __iter__(self):
        return iter(self._group_of)

    def __len__(self) -> int:
        return len(self._group_of)

    def __contains__(self, pid: object) -> bool:
        return pid in self._group_of

    def without(self, ids: set[int] | frozenset[int]) -> "MemberReasons":
        """The same reasons but for the pairs ``ids`` (each still names every member)."""
        out = MemberReasons((), self._reason)
        out._group_of = {pid: g for pid, g in self._group_of.items() if pid not in ids}
        return out

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def without_pairs(reasons: Mapping[int, str], ids: set[int] | frozenset[int]) -> Mapping[int, str]:
    """``reasons`` but for the pairs ``ids``: a :class:`MemberReasons` stays one (nothing made),
    else a new ``dict``."""
    if isinstance(reasons, MemberReasons):
        return reasons.without(ids)
    return {i: r for i, r in reasons.items() if i not in ids}


@dataclass
class ChecklistReport:
    """All checks. ``passed`` is True when no check fails (warnings do not block)."""

    checks: list[CheckResult]
    accepted: list[int]
    has_workspace: bool

    @property
    def passed(self) -> bool:
        """No check has status ``fail``."""
        return all(c.status != CheckStatus.FAIL for c in self.checks)

    def get(self, check_id: str) -> CheckResult:
        """The result of one check.

        Raises:
            KeyError: no such check.
        """
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    def to_json(self) -> dict[str, Any]:
        """``{"passed": bool, "checks": [{"id", "status", "pairs", "message", "reasons"}]}``."""
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks]}

    def for_card(self) -> list[dict[str, Any]]:
        """The results as the dataset card takes them: ``[{"id", "status", "message", "pairs"}]``."""
        return [{"id": c.id, "status": str(c.status), "message": c.message, "pairs": list(c.pairs)}
                for c in self.checks]

    def to_markdown(self) -> str:
        """A Markdown table of the checks, then the offending pairs of each (at most 50 each)."""
        icon = {"pass": "✅ pass", "warn": "⚠️ warn", "fail": "❌ fail", "skip": "⏭ skip"}
        lines = [f"# Checklist: {'passed' if self.passed else 'FAILED'}", "",
                 "| check | status | pairs | message |", "|---|---|---|---|"]
        for c in self.checks:
            lines.append(f"| `{c.id}` | {icon[c.status]} | {len(c.pairs)} | {escape_md(c.message)} |")
        for c in self.checks:
            if c.reasons:
                lines += ["", f"## `{c.id}`", ""]
                for pid in c.pairs[:50]:
                    lines.append(f"- #{pid}: {escape_md(c.reasons.get(pid, ''))}")
                if len(c.pairs) > 50:
                    lines.append(f"- ... and {len(c.pairs) - 50} more")
        return "\n".join(lines) + "\n"


_LIMIT_KEYS = (("min_passage_chars", "min_chars"), ("max_passage_chars", "max_chars"))


@dataclass(frozen=True)
class Limits:
    """Passage length bounds in characters (``passage_length``): warn outside
    ``[min_chars, max_chars]``, fail above ``2 * max_chars``."""

    min_chars: int = MIN_PASSAGE_CHARS
    max_chars: int = MAX_PASSAGE_CHARS

    @classmethod
    def resolve(cls, profile: Profile | Mapping[str, Any] | None = None,
                config: Path | Mapping[str, Any] | None = None) -> Limits:
        """THE place limits are built: the defaults, then the profile's ``min_passage_chars`` /
        ``max_passage_chars`` extras, then the config file's ``[checklist]`` table (same keys).

        Args:
            profile: a ``Profile`` (its ``extra`` is read), its extras as a mapping, or None.
            config: the config file to read ``[checklist]`` from (a path; None: the default,
                ``$MTCB_CURATE_CONFIG`` or the user's ``config.toml``), or the table itself
                as a mapping (``{}``: no config, the file is not read).

        Raises:
            CurateError: the config file is not valid TOML.
            ValueError: a bound is not an integer.
        """
        extra = getattr(profile, "extra", profile) or {}
        if isinstance(config, Mapping):
            table = config
        else:
            from mtcb_curate.config import read_table

            table = read_table("checklist", config)
        out = {"min_chars": MIN_PASSAGE_CHARS, "max_chars": MAX_PASSAGE_CHARS}
        for src in (extra, table or {}):
            for key, name in _LIMIT_KEYS:
                if key in src:
                    out[name] = int(src[key])
        return cls(**out)

    @classmethod
    def for_profile(cls, extra: Mapping[str, Any], table: Mapping[str, Any] | None = None) -> Limits:
        """``resolve(extra, table or {})``: the config table already read (the file is not read)."""
        return cls.resolve(extra, table or {})

    @classmethod
    def from_config(cls, extra: Mapping[str, Any], config_path: Path | None = None) -> Limits:
        """``resolve(extra, config_path)``: reads the ``[checklist]`` table of ``config_path``.

        Raises:
            CurateError: the config file is not valid TOML.
        """
        return cls.resolve(extra, config_path)


#: A judge for ``answerable``: given ``[(pair_id, question, answer, passage)]`` (the pairs the
#: lexical check warned about), returns ``{pair_id: (supported or None, reason)}``.
Judge = Callable[[list[tuple[int, str, str, str]]], dict[int, tuple[bool | None, str]]]


@dataclass
class CheckContext:
    """What the checks read, computed once per run and shared by every check.

    Attributes:
        session: the review session (only read).
        accepted: the pair ids checked (every pair without a workspace).
        views: pair id -> current ``PairView``, for ``accepted``.
        limits: the passage length bounds.
        has_workspace: False: every pair counts as accepted, ``reviewed`` is skipped.
        threshold: the near-duplicate question similarity threshold.
        loads: run the ``loads`` check.
        judge: the LLM judge for ``answerable``, or None.
        include_undecided: "what would fail if accepted": every pair not rejected (undecided,
            skipped, flagged) is checked as if accepted, and ``reviewed`` is skipped.
        targets: the ``[stats]`` target distributions for ``balance`` (``stats.Targets``), or
            None: ``Targets.resolve`` of the dataset's profile and the default config file.
        cache: the work kept between runs (``verified``, ``loads``), or None to keep nothing.
    """

    session: ReviewSession
    accepted: list[int]
    views: dict[int, PairView]
    limits: Limits
    has_workspace: bool = True
    threshold: float = neardup.DEFAULT_THRESHOLD
    loads: bool = True
    judge: Judge | None = None
    include_undecided: bool = False
    targets: Targets | None = None
    cache: ChecklistCache | None = None

    @classmethod
    def build(cls, session: ReviewSession, *, has_workspace: bool = True, limits: Limits | None = None,
              threshold: float = neardup.DEFAULT_THRESHOLD, loads: bool = True,
              judge: Judge | None = None, include_undecided: bool = False,
              targets: Targets | None = None, cache: bool = False) -> CheckContext:
        """The context of one run; ``limits`` default to ``Limits.resolve`` of the dataset's
        profile without the config file. ``include_undecided``: the checked pairs are every
        pair not rejected (see the class). ``targets``: see the class. ``cache``: reuse and keep
        work on disk (a :class:`~mtcb_curate.checks.cache.ChecklistCache` in the user cache
        directory)."""
        if not has_workspace:
            accepted = list(range(len(session)))
        elif include_undecided:
            accepted = [pid for pid in range(len(session)) if session.status(pid) != Status.REJECTED]
        else:
            accepted = session.ids(Status.ACCEPTED)
        return cls(session, accepted, {pid: session.view(pid) for pid in accepted},
                   limits or Limits.resolve(session.dataset.profile, {}), has_workspace, threshold, loads, judge,
                   include_undecided, targets, _new_cache() if cache else None)

    @property
    def dataset(self):
        """The session's dataset."""
        return self.session.dataset

    @property
    def index(self):
        """The session's corpus index (built once by the session)."""
        return self.session.corpus_index

    @functools.cached_property
    def verified(self) -> dict[int, PairResult]:
        """pair id -> ``verify`` result of its current passage (exact search, token counts),
        for ``accepted``; computed on first use (``verbatim``, the first check, pays for it)."""
        from mtcb_curate.verify import verify_dataset

        passages = {pid: v.passage for pid, v in self.views.items()}
        pairs = {pid: self.session.pairs[pid] for pid in self.accepted}
        found: dict[int, PairResult] = {}
        todo = list(pairs)
        if self.cache is not None:
            found, todo = self.cache.verified(self.session.corpus_fingerprint,
                                              ((pairs[pid], passages[pid]) for pid in pairs))
        if todo:
            report = verify_dataset(self.dataset, passages, fuzzy=False, count_tokens=True, index=self.index,
                                    pairs=[pairs[pid] for pid in todo])
            found.update((r.id, r) for r in report.results)
            if self.cache is not None:
                self.cache.put_verified(self.session.corpus_fingerprint,
                                        ((pairs[r.id], r) for r in report.results), keep=len(pairs))
        return {pid: found[pid] for pid in self.accepted}


def _new_cache() -> ChecklistCache:
    from mtcb_curate.checks.cache import ChecklistCache

    return ChecklistCache()


@dataclass(frozen=True)
class Check:
    """One check of the checklist.

    Attributes:
        id: the fixed id (``verbatim``, ``loads``...).
        worst: the worst status it gives (``CheckStatus.FAIL`` or ``CheckStatus.WARN``): what
            failing it means for the gate.
        fn: ``(CheckContext) -> CheckResult``.
        description: what fails or warns, one paragraph (the function's docstring by default).
    """

    id: str
    worst: CheckStatus
    fn: Callable[[CheckContext], CheckResult]
    description: str = ""

    def __call__(self, ctx: CheckContext) -> CheckResult:
        """Run the check alone on ``ctx``; ``pairs`` comes out sorted."""
        result = self.fn(ctx)
        result.pairs = sorted(result.reasons) if result.reasons else result.pairs
        return result


def check(check_id: str, worst: CheckStatus) -> Callable[[Callable[[CheckContext], CheckResult]], Check]:
    """Decorator: the function becomes a ``Check`` with its docstring as description."""
    def wrap(fn: Callable[[CheckContext], CheckResult]) -> Check:
        return Check(check_id, worst, fn, " ".join((fn.__doc__ or "").split()))
    return wrap


def result(check_id: str, reasons: Mapping[int, str], failing: set[int], message: str) -> CheckResult:
    """A result from per-pair reasons: ``fail`` when any pair fails, ``warn`` when any has a
    reason, else ``pass``."""
    status = CheckStatus.FAIL if failing else CheckStatus.WARN if reasons else CheckStatus.PASS
    return CheckResult(check_id, status, message, sorted(reasons), reasons, failing)


def key_text(text: object) -> str:
    """A document key (or other dataset text) for a one-line reason: printable, at most 40."""
    return one_line(str(text), 40)
