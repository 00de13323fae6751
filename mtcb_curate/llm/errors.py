"""The LLM errors a person can act on. Every message is one line and never contains the key.

- :class:`LLMError`: base class (a :class:`~mtcb_curate.errors.CurateError`, so the command line
  prints it and exits with code 2).
- :class:`LLMUnavailable`: the LLM cannot be used at all (no key, key refused, server
  unreachable, model unknown, or retries used up). The app shows the message once and keeps
  working without the LLM.
- :class:`LLMConfigError`: the configuration is unusable (a missing key, a bad ``[llm]`` value);
  a kind of :class:`LLMUnavailable`.
- :class:`LLMGaveUp`: 429, 5xx or timeouts outlasted the retries; a kind of
  :class:`LLMUnavailable`.
- :class:`LLMCancelled`: the curator cancelled the run.
"""

from __future__ import annotations

from mtcb_curate.errors import CurateError

#: Longest message (characters) an error keeps from a server's own error text.
MAX_DETAIL_CHARS = 200


class LLMError(CurateError):
    """Base class of the LLM errors: a one-line message without any secret."""


class LLMUnavailable(LLMError):
    """The LLM cannot be used: no key, key refused, server unreachable, model unknown, gave up."""


class LLMConfigError(LLMUnavailable):
    """The LLM configuration is unusable: a missing API key or a bad ``[llm]`` value."""


class LLMGaveUp(LLMUnavailable):
    """Retryable failures (429, 5xx, timeouts) outlasted the retries.

    Attributes:
        attempts: how many requests were sent (1 + retries).
        reason: the last failure, e.g. ``500 server error``.
    """

    def __init__(self, message: str, *, attempts: int, reason: str):
        super().__init__(message)
        self.attempts = attempts
        self.reason = reason


class LLMCancelled(LLMError):
    """The run was cancelled (its ``threading.Event`` was set) before it finished."""


def one_line(text: str, secret: str | None = None, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters, with ``secret`` replaced by ``***``.

    Used on every message built from a server's answer or an exception, so that a server echoing
    the ``Authorization`` header cannot leak the key into the app or a log.
    """
    if secret:
        text = text.replace(secret, "***")
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
