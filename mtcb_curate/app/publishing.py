"""Prepare a publish (the gate, the plan against the Hub, its offline fallback) and perform it.

The command line and the publish screen both go through here:

1. :func:`app.gate.run_gate` runs the checklist (the front end decides what a failing gate
   means: the command line refuses unless ``--force``; the screen refuses);
2. :func:`plan` plans the publish against the Hub's current version of the target. When the
   Hub cannot be read (offline mode, no network) and ``offline_ok``, it plans again without
   the Hub: an offline preview (``plan.hub_read`` False) that cannot be published, with the
   line that says why in ``Prepared.hub_error``;
3. :func:`perform` commits the plan (``hub.publish``), or :func:`write_dry_run` writes its files.

Nothing here writes to the workspace. The Hub modules are imported when first needed (pyarrow
costs about 70 ms).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mtcb_curate.app import gate
from mtcb_curate.checks import ChecklistReport
from mtcb_curate.store.session import ReviewSession

if TYPE_CHECKING:
    from mtcb_curate.hub import PublishPlan, PublishResult

#: ``PublishError`` kinds meaning "the Hub cannot be read now": the offline preview applies.
HUB_UNREACHABLE_KINDS = ("offline", "network")


@dataclass(frozen=True)
class Prepared:
    """A prepared publish.

    Attributes:
        report: the checklist (the gate is ``report.passed``).
        plan: the plan: against the Hub's current version, or an offline preview.
        hub_error: why the Hub could not be read (the plan is then the offline preview), or None.
    """

    report: ChecklistReport
    plan: PublishPlan
    hub_error: str | None = None

    @property
    def offline(self) -> bool:
        """True when the plan is an offline preview (it cannot be published)."""
        return not self.plan.hub_read


def plan(session: ReviewSession, report: ChecklistReport, *, has_workspace: bool = True,
         repo_id: str | None = None, revision: str | None = None, only_linked: bool = False,
         license: str | None = None, offline_ok: bool = True,
         on_retry: Callable[[str], None] | None = None) -> Prepared:
    """Plan the publish of ``session`` against the Hub, with ``report`` on the card.

    Args:
        session: the review session (only read).
        report: the gate's checklist.
        has_workspace: False publishes every pair (there are no decisions).
        repo_id, revision, only_linked, license: as ``hub.plan_publish`` takes them.
        offline_ok: when the Hub cannot be read (``HUB_UNREACHABLE_KINDS``), plan an offline
            preview instead of raising.
        on_retry: one line per request huggingface_hub retries.

    Raises:
        PublishError: the Hub refused (401, 403 ...), bad input, or the Hub cannot be read and
            not ``offline_ok``.
    """
    from mtcb_curate.hub import PublishError, plan_publish

    kw = dict(repo_id=repo_id or None, revision=revision, only_linked=only_linked, license=license,
              checklist=report.for_card(), checklist_passed=report.passed,
              accepted=None if has_workspace else list(range(len(session))), on_retry=on_retry)
    try:
        return Prepared(report, plan_publish(session, read_hub=True, **kw))
    except PublishError as exc:
        if not offline_ok or exc.kind not in HUB_UNREACHABLE_KINDS:
            raise
        return Prepared(report, plan_publish(session, read_hub=False, **kw), str(exc))


def prepare(session: ReviewSession, *, has_workspace: bool = True, config: Path | None = None,
            report: ChecklistReport | None = None, progress: Callable[[str], None] | None = None,
            on_gate: Callable[[ChecklistReport], None] | None = None, **plan_options) -> Prepared:
    """The gate (unless ``report`` is given), then :func:`plan`.

    ``on_gate`` is called with the report as soon as the checklist has run (before the Hub is
    read); ``progress`` with each check id; ``plan_options`` go to :func:`plan`.

    Raises:
        CurateError: the checklist cannot run (bad config); PublishError as :func:`plan`.
    """
    if report is None:
        report = gate.run_gate(session, has_workspace=has_workspace, config=config, progress=progress, cache=False)
        if on_gate is not None:
            on_gate(report)
    return plan(session, report, has_workspace=has_workspace, **plan_options)


def perform(prepared: Prepared, *, force: bool = False, reason: str | None = None, private: bool = False,
            create_pr: bool = False, revision: str | None = None,
            on_retry: Callable[[str], None] | None = None) -> PublishResult:
    """Commit the prepared plan (``hub.publish``: one commit, then both configs are loaded
    back and compared). The gate is ``prepared.report.passed`` (``force`` + ``reason`` pass a
    failing one).

    Raises:
        PublishError: refused (gate, licence, offline preview) or failed; the workspace is
            never changed, so it can simply be run again.
    """
    from mtcb_curate.hub import publish

    return publish(prepared.plan, gate_passed=prepared.report.passed, force=force, reason=reason,
                   private=private, create_pr=create_pr, revision=revision, on_retry=on_retry)


def write_dry_run(prepared: Prepared, folder: Path, *, force: bool = False, reason: str | None = None) -> dict[str, Path]:
    """Write exactly the files a publish would commit to ``folder`` (``hub.dry_run``).

    Raises:
        LicenseRequired: no licence is known.
        PublishError: the folder cannot be used.
    """
    from mtcb_curate.hub import dry_run

    return dry_run(prepared.plan, folder, gate_passed=prepared.report.passed, force=force, reason=reason)
