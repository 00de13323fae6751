"""Why a publish failed or was refused: ``PublishError`` and its ``PublishErrorKind``.

Pure: no network, no Hub client. ``hub.client`` translates the client's exceptions into these.
"""

from __future__ import annotations

from enum import StrEnum

from mtcb_curate.errors import CurateError


class PublishErrorKind(StrEnum):
    """The machine-readable cause of a ``PublishError``.

    A ``StrEnum``: each member equals its string value (``PublishErrorKind.GATE == "gate"``),
    so comparisons with plain strings and JSON output keep working.
    """

    GATE = "gate"              #: the checklist failed (or --force came without a reason)
    LICENSE = "license"        #: no licence known, or not a Hub licence id
    OFFLINE = "offline"        #: HF_HUB_OFFLINE is on
    NETWORK = "network"        #: the Hub cannot be reached
    DROPPED = "dropped"        #: the connection dropped mid-request
    AUTH = "auth"              #: no token, or the Hub refused it (401)
    FORBIDDEN = "forbidden"    #: the token may not write there (403)
    NOT_FOUND = "not_found"    #: missing repo or revision that cannot be created (404)
    CONFLICT = "conflict"      #: 409
    CHANGED = "changed"        #: the target moved since the plan (412), or the plan never read the Hub
    VISIBILITY = "visibility"  #: --private asked for an existing public repo
    SERVER = "server"          #: 429 or 5xx
    VERIFY = "verify"          #: committed, but the load-back does not match
    INPUT = "input"            #: bad repo id / branch name, or a text that is not valid Unicode
    DRY_RUN = "dry_run"        #: the dry-run folder cannot be used
    CARD = "card"              #: the current card cannot be merged
    FAILED = "failed"          #: anything else


class PublishError(CurateError):
    """Publishing failed or was refused; the message is one line saying what to do.

    Attributes:
        kind: the cause, a ``PublishErrorKind`` (also equal to its string value: ``gate``,
            ``license``, ``offline``, ``network``, ``dropped``, ``auth``, ``forbidden``,
            ``not_found``, ``conflict``, ``changed``, ``visibility``, ``server``, ``verify``,
            ``input``, ``dry_run``, ``card`` or ``failed``).

    Raises:
        ValueError: (from the constructor) ``kind`` is not one of these values.
    """

    def __init__(self, kind: PublishErrorKind | str, message: str):
        self.kind = PublishErrorKind(kind)
        super().__init__(" ".join(message.split()))


class LicenseRequired(PublishError):
    """No licence is known for the dataset: ask the user and pass ``license=``
    (``plan_publish(..., license=...)`` or ``plan.with_license(...)``)."""

    def __init__(self, name: str):
        super().__init__(PublishErrorKind.LICENSE,
                         f"no licence is known for {name} (not in the profile nor in a dataset card): "
                         "pass license= with a Hub licence id, e.g. cc-by-4.0 or cc-by-nc-4.0")
