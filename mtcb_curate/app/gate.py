"""The gate before publishing: the quality checklist with its limits resolved in one place.

``mtcb-curate check``, ``mtcb-curate publish``, the checklist screen and the publish screen all
run the checklist through :func:`run_gate`; the passage length limits come from
``checks.Limits.resolve`` (the profile's, then the config file's ``[checklist]`` table), the
``balance`` targets from ``stats.Targets.resolve`` (the same file's ``[stats]`` table).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mtcb_curate.checks import CHECK_IDS, ChecklistReport, Judge, Limits, run_checklist
from mtcb_curate.stats.targets import Targets
from mtcb_curate.store.session import ReviewSession


def resolve_limits(session: ReviewSession, config: Path | None = None) -> Limits:
    """The passage length limits for ``session``: its profile's, then ``config``'s
    ``[checklist]`` table (None: the default config file).

    Raises:
        CurateError: the config file is not valid TOML.
    """
    return Limits.resolve(session.dataset.profile, config)


def run_gate(session: ReviewSession, *, has_workspace: bool = True, config: Path | None = None,
             limits: Limits | None = None, loads: bool = True, progress: Callable[[str], None] | None = None,
             judge: Judge | None = None, include_undecided: bool = False,
             targets: Targets | None = None, cache: bool = True) -> ChecklistReport:
    """Run the checklist on ``session``; ``report.passed`` is the gate.

    Args:
        session: the review session (only read).
        has_workspace: False treats every pair as accepted and skips ``reviewed``.
        config: the config file for the limits and targets (None: the default one); unused
            for what is given already.
        limits: limits already resolved (default: :func:`resolve_limits`).
        loads: run the ``loads`` check (writes and loads the publish layout: about 1-2 s).
        progress: called with each check id as it starts (see :func:`step`).
        judge: the LLM judge for ``answerable``, or None.
        include_undecided: "what would fail if accepted": every pair not rejected is checked
            as if accepted, ``reviewed`` is skipped (never a gate for publishing).
        targets: the ``balance`` targets already resolved (default: ``Targets.resolve`` of the
            profile and ``config``'s ``[stats]`` table).
        cache: reuse and keep work between runs, keyed by content hash (``checks.cache``, in
            the user cache directory); publishing passes False and checks everything afresh.

    Raises:
        CurateError: the config file is not valid TOML, a ``[stats]`` value is invalid, or the
            judge failed.
    """
    if limits is None:
        limits = resolve_limits(session, config)
    if targets is None:
        targets = Targets.resolve(session.dataset.profile, config)
    return run_checklist(session, has_workspace=has_workspace, limits=limits, loads=loads, progress=progress,
                         judge=judge, include_undecided=include_undecided, targets=targets, cache=cache)


def step(check_id: str) -> tuple[int, int]:
    """(0-based index of ``check_id`` in the checklist, number of checks), for a progress bar;
    an unknown id is index 0."""
    return (CHECK_IDS.index(check_id) if check_id in CHECK_IDS else 0), len(CHECK_IDS)
