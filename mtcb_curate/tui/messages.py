"""What the TUI's thread workers report back: one ``Message`` per result.

A worker posts one of these to its own screen with ``self.post_message(...)`` (safe from any
thread: Textual queues it on the app's loop) and the screen handles it with ``@on(...)`` on the
app's thread. None of them bubble: each is meant for the screen that started the worker. A
message posted to a screen that has closed is dropped (``post_message`` returns False).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from mtcb_curate.neardup import Cluster

# -- the review screen ---------------------------------------------------------------------------


@dataclass(eq=False)
class VerdictCompleted(Message, bubble=False):
    """Pair ``pid``'s full check (fuzzy search, other documents, window, tokens) is done.

    ``passage``: the passage the check ran on; a result for a passage edited since is stale.
    """

    pid: int
    passage: str


@dataclass(eq=False)
class AnalysisMessage(Message, bubble=False):
    """An event of the session's analysis (``app.analysis.AnalysisEvent``: progress, a finished
    ``Analysis``, a note, a failure, a cancel), from the runner's thread to the review screen."""

    event: Any


@dataclass(eq=False)
class WorkspaceReconnected(Message, bubble=False):
    """The shared workspace replaced a broken connection (``PgWorkspace.on_reconnect``, called
    on whichever thread wrote: a decision commits on the session's writer thread while the
    app's thread waits for it, so the notice is posted, never waited for). ``message``: one line."""

    message: str


@dataclass(eq=False)
class HubLoadDone(Message, bubble=False):
    """The Hub load that went on in the background after the app opened the bundled sample
    (``app.sources.HubLoad``) has finished: ``outcome`` is one line (loaded, or why not)."""

    outcome: str
    loaded: bool


@dataclass(eq=False)
class WorkspaceReconnecting(Message, bubble=False):
    """Posted to the app: the shared workspace lost its connection and is replacing it
    (``PgWorkspace.on_reconnecting``, called on the thread that writes): the write waits
    meanwhile. ``message``: one line."""

    message: str


@dataclass(eq=False)
class ChangeReady(Message, bubble=False):
    """Posted to the app: a change waiting on the server (``tui.changes``) can go on, its store
    call being over (``PendingChange.on_ready``, from the change's thread)."""

    pending: Any


@dataclass(eq=False)
class ChangeWaiting(Message, bubble=False):
    """Posted to each screen: what waits on the server changed (``Changes.line``); a screen that
    shows it draws it again."""


@dataclass(eq=False)
class KeysReleased(Message, bubble=False):
    """Posted to the app: the keys its ``KeyGate`` kept are to be handled now, in order."""


@dataclass(eq=False)
class WindowTokenized(Message, bubble=False):
    """The chunk windows of document ``key`` are cached (the window bounds can be shown)."""

    key: str


# -- the dedup screen ----------------------------------------------------------------------------


@dataclass(eq=False)
class ClusterListFound(Message, bubble=False):
    """Every cluster found at ``threshold`` (0-100), resolved ones included."""

    threshold: float
    clusters: list[Cluster]


@dataclass(eq=False)
class ClusterSearchFailed(Message, bubble=False):
    """The near-duplicate search failed; ``threshold`` is the one searched."""

    error: Exception
    threshold: float | None = None


# -- the LLM run dialog ----------------------------------------------------------------------------


@dataclass(eq=False)
class LLMPrepared(Message, bubble=False):
    """The chat client is ready; ``estimate`` is the run's ``RunEstimate`` or None."""

    estimate: Any


@dataclass(eq=False)
class LLMRetry(Message, bubble=False):
    """A retry is about to happen (429, 5xx, timeout): ``notice`` is its one-line text."""

    notice: str


@dataclass(eq=False)
class LLMProgress(Message, bubble=False):
    """``done`` of ``total`` steps of the run finished."""

    done: int
    total: int


@dataclass(eq=False)
class LLMFinished(Message, bubble=False):
    """The job returned ``result`` (None: cancelled before it had anything)."""

    result: Any


@dataclass(eq=False)
class LLMFailed(Message, bubble=False):
    """Preparing or running failed: ``line`` is the one plain line to show."""

    line: str


# -- the checklist screen --------------------------------------------------------------------------


@dataclass(eq=False)
class ChecklistProgress(Message, bubble=False):
    """The gate is about to run check ``check_id``."""

    check_id: str


@dataclass(eq=False)
class ChecklistFailed(Message, bubble=False):
    """The checklist could not run: ``line`` says why (one plain line)."""

    line: str


@dataclass(eq=False)
class ChecklistFinished(Message, bubble=False):
    """The checklist ran: ``report`` is its ``ChecklistReport``."""

    report: Any


# -- the statistics screen -----------------------------------------------------------------------


@dataclass(eq=False)
class StatsComputed(Message, bubble=False):
    """The statistics worker finished: ``stats`` (a ``stats.Stats``), or ``error`` (one line)."""

    stats: Any
    error: str | None = None


# -- the team screen -----------------------------------------------------------------------------


@dataclass(eq=False)
class TeamComputed(Message, bubble=False):
    """The team worker finished: ``report`` (``app.team.report``) and ``conflicts`` (pair id ->
    {curator: (status, reason)}), or ``error`` (one line)."""

    report: Any
    conflicts: Any = None
    error: str | None = None


# -- the review screen's findability line ----------------------------------------------------------


@dataclass(eq=False)
class FindabilityProgress(Message, bubble=False):
    """The findability run (``F``) is at ``what`` (``done`` of ``total``; total 0: no count)."""

    what: str
    done: int
    total: int


@dataclass(eq=False)
class FindabilityLoaded(Message, bubble=False):
    """Every pair's findability (``app.findability.PairLines`` per pair id), or None when no
    preview cache exists yet; ``error``: the run failed or was cancelled (one plain line)."""

    lines: dict[int, Any] | None
    error: str | None = None


@dataclass(eq=False)
class FindabilityPairsScored(Message, bubble=False):
    """The findability of the pairs ``ids`` for their current texts: pid -> ``PairLines`` (a
    pair missing from ``lines``: it could not be scored)."""

    ids: frozenset[int]
    lines: dict[int, Any]
