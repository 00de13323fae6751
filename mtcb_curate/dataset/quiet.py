"""Keep the data libraries' own output off the terminal: logging, warnings, progress bars.

``quiet_datasets`` silences ``datasets`` (and the loggers of the Hub client stack, by name,
without importing it) and turns huggingface_hub's retry warnings into ``Retry`` values;
``hub.client.quiet_hub`` adds huggingface_hub's progress bars. The checklist's ``loads``
check uses ``quiet_datasets`` for its local load, so it never imports the Hub client.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Retry:
    """One retry of a request to the Hub by huggingface_hub (its ``http_backoff``).

    Attributes:
        cause: what failed, in our words (``answered 503``, ``did not answer (ReadTimeout)``,
            ``rate-limited the requests (429)``).
        wait: seconds before the next try.
        attempt: the retry's number (1 = the first retry); of: how many retries at most.
    """

    cause: str
    wait: float
    attempt: int
    of: int

    def line(self, step: str) -> str:
        """One line for a person, e.g. ``the Hub answered 503 while uploading to me/x: trying
        again in 1 s (retry 1 of 5)``."""
        return f"the Hub {self.cause} while {step}: trying again in {self.wait:g} s (retry {self.attempt} of {self.of})"


#: Loggers whose records never reach the terminal while ``quiet_datasets`` (or ``quiet_hub``) is active.
QUIET_LOGGERS = ("huggingface_hub", "datasets", "fsspec", "filelock", "httpx2", "httpcore", "urllib3")
_HTTP_ERROR = re.compile(r"HTTP Error (\d{3}) thrown while requesting")
_EXC_ERROR = re.compile(r"'(.*)' thrown while requesting", re.S)
_RETRYING = re.compile(r"Retrying in ([\d.]+)s \[Retry (\d+)/(\d+)\]")
_RATE_LIMITED = re.compile(r"Rate limited\. Waiting ([\d.]+)s before retry \[Retry (\d+)/(\d+)\]")


#: Seconds within which the same retry (cause, attempt) from several threads is one line:
#: ``datasets`` fetches a config's files in parallel, and one failing Hub fails them all alike.
SAME_RETRY_S = 1.0


class _LibraryRecords(logging.Handler):
    """The only handler of ``QUIET_LOGGERS`` while ``quiet_datasets`` is active: huggingface_hub's
    retry warnings become ``Retry`` values for the listeners (the same retry of several parallel
    requests once, ``SAME_RETRY_S``); every other record is dropped."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(logging.DEBUG)
        self.listeners: list[Callable[[Retry], None]] = []
        self._cause: dict[int, str] = {}  # thread id -> the cause of its latest failed request
        self._said: dict[tuple[str, int, int], float] = {}  # (cause, attempt, of) -> when last handed on
        self._clock = clock

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed library record is simply dropped
            return
        if m := _HTTP_ERROR.search(msg):
            self._cause[record.thread or 0] = f"answered {m.group(1)}"
            return
        if m := _EXC_ERROR.search(msg):
            detail = " ".join(m.group(1).split())[:80]
            self._cause[record.thread or 0] = f"did not answer ({detail})" if detail else "did not answer"
            return
        if m := _RATE_LIMITED.search(msg):
            retry = Retry("rate-limited the requests (429)", float(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif m := _RETRYING.search(msg):
            cause = self._cause.pop(record.thread or 0, "failed")
            retry = Retry(cause, float(m.group(1)), int(m.group(2)), int(m.group(3)))
        else:
            return
        with _quiet_lock:
            now, key = self._clock(), (retry.cause, retry.attempt, retry.of)
            if now - self._said.get(key, float("-inf")) < SAME_RETRY_S:
                return  # the same retry of a parallel request: already said
            self._said = {k: t for k, t in self._said.items() if now - t < SAME_RETRY_S}
            self._said[key] = now
            listeners = list(self.listeners)
        for listener in listeners:
            try:
                listener(retry)
            except Exception:  # noqa: BLE001 - a broken progress callback must not break the publish
                pass


_quiet_lock = threading.RLock()
_quiet_handler = _LibraryRecords()
_quiet_state: dict[str, Any] = {"depth": 0}


class quiet_datasets:
    """Keep ``datasets``' own output and the Hub client stack's logging out of the terminal for
    the duration: the loggers of ``QUIET_LOGGERS`` (by name: nothing is imported but
    ``datasets``), ``datasets``' progress bars and Python warnings. Retries that huggingface_hub
    makes are handed to ``on_retry`` (a ``Retry``) instead of being logged.

    Re-entrant and usable from several threads at once: the first entry saves the libraries'
    settings, the last exit restores them. Warnings are ignored process-wide while active
    (``warnings`` has no per-thread filters).

    ``with quiet_datasets(): datasets.load_dataset(folder, "corpus")``
    """

    def __init__(self, on_retry: Callable[[Retry], None] | None = None):
        self.on_retry = on_retry

    def __enter__(self) -> "quiet_datasets":
        import datasets

        with _quiet_lock:
            if _quiet_state["depth"] == 0:
                caught = warnings.catch_warnings()
                caught.__enter__()
                warnings.simplefilter("ignore")
                saved = {}
                for name in QUIET_LOGGERS:
                    lg = logging.getLogger(name)
                    saved[name] = (lg.handlers[:], lg.level, lg.propagate)
                    lg.handlers[:] = [_quiet_handler]
                    lg.propagate = False
                    lg.setLevel(logging.WARNING if name == "huggingface_hub" else logging.CRITICAL + 1)
                ds_bars = datasets.is_progress_bar_enabled()
                datasets.disable_progress_bars()
                _quiet_state.update(caught=caught, loggers=saved, ds_bars=ds_bars)
            _quiet_state["depth"] += 1
            if self.on_retry is not None:
                _quiet_handler.listeners.append(self.on_retry)
        return self

    def __exit__(self, *exc: object) -> None:
        import datasets

        with _quiet_lock:
            if self.on_retry is not None and self.on_retry in _quiet_handler.listeners:
                _quiet_handler.listeners.remove(self.on_retry)
            _quiet_state["depth"] -= 1
            if _quiet_state["depth"] > 0:
                return
            if _quiet_state.pop("ds_bars"):
                datasets.enable_progress_bars()
            for name, (handlers, level, propagate) in _quiet_state.pop("loggers").items():
                lg = logging.getLogger(name)
                lg.handlers[:] = handlers
                lg.setLevel(level)
                lg.propagate = propagate
            _quiet_state.pop("caught").__exit__(None, None, None)
