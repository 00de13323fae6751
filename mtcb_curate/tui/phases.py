"""The phases of the screens that run slow work (the LLM's screens, shrink): which keys apply and
what the screen shows follow the phase."""

from __future__ import annotations

from enum import StrEnum


class RunPhase(StrEnum):
    """Where a screen's run stands. A ``StrEnum``: ``RunPhase.RUNNING == "running"``.

    ``PREPARING``: the client and the estimate are being made; ``CONFIRM``: the estimate waits
    for a yes; ``ASK``: the screen waits for the curator's input (how many pairs); ``ASKING``: a
    request is out; ``RUNNING``: calls are running; ``CANCELLING``: a cancel was asked, the calls
    in flight are finishing; ``PICK``: candidates wait to be chosen; ``SHOWN``: a proposal is
    shown; ``REFUSED``: every reply was refused; ``FAILED``: the run failed; ``DONE``: finished.
    """

    PREPARING = "preparing"
    CONFIRM = "confirm"
    ASK = "ask"
    ASKING = "asking"
    RUNNING = "running"
    CANCELLING = "cancelling"
    PICK = "pick"
    SHOWN = "shown"
    REFUSED = "refused"
    FAILED = "failed"
    DONE = "done"
