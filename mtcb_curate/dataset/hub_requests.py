"""How the Hugging Face Hub is asked: a probe with a total deadline, and a patience on every
request huggingface_hub (and ``datasets`` through it) makes.

- ``probe``: one HTTP request to the Hub's endpoint (``HF_ENDPOINT``, through the proxy the
  environment names, as huggingface_hub would go), in a daemon thread, waited for at most
  ``timeout`` seconds in all: a Hub that accepts connections and never answers is unreachable
  after ``timeout``, not after huggingface_hub's minutes of retries. Any HTTP answer (401, 404,
  501 ...) means the Hub answers.
- ``patience``: while active, every request of huggingface_hub's shared client has its connect,
  read, write and pool timeouts cut to the time left before the deadline, and no request starts
  after it (``HubNoAnswer``, which huggingface_hub does not retry). The deadline is ``seconds``
  after the start or the last answer the Hub gave (its response headers), so a long download
  that keeps answering is never cut, and a Hub that stops answering is given up after
  ``seconds`` plus at most one of huggingface_hub's back-off sleeps (8 s at most).

huggingface_hub's own client factory is kept (its request id hook) and extended
(``huggingface_hub.set_client_factory``, its documented way to configure the client).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Seconds the probe waits for the Hub's first answer, name lookup, connection and TLS included.
PROBE_TIMEOUT = 2.0
#: Seconds a load waits for the Hub's next answer before giving up (``patience``).
LOAD_PATIENCE = 20.0


class HubNoAnswer(Exception):
    """The Hub gave no answer within the patience (``patience``): no further request is made.

    Deliberately not an ``httpx2`` error, so huggingface_hub's back-off does not retry it.
    """


def endpoint() -> str:
    """The Hub's endpoint: ``HF_ENDPOINT`` or ``https://huggingface.co``, without a final ``/``."""
    return os.environ.get("HF_ENDPOINT", "").strip().rstrip("/") or "https://huggingface.co"


def probe(url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when ``url`` gives any HTTP answer within ``timeout`` seconds in all, else why not
    (``no answer in 2 s``, ``connection refused``, ``the host name does not resolve`` ...).

    The request (``HEAD``; proxies from the environment, as huggingface_hub's client) runs in
    a daemon thread, so neither a slow resolver nor a server that never answers holds the
    caller longer than ``timeout``.
    """
    outcome: list[str | None] = []

    def attempt() -> None:
        import httpx2

        try:
            with httpx2.Client(timeout=timeout, follow_redirects=False) as client:
                client.head(url)
            outcome.append(None)
        except httpx2.ConnectError as exc:
            outcome.append(_connect_error(exc))
        except httpx2.TimeoutException:
            outcome.append(f"no answer in {timeout:g} s")
        except Exception as exc:  # noqa: BLE001 - any other failure means "no answer", said in one line
            outcome.append(" ".join(str(exc).split())[:120] or type(exc).__name__)

    thread = threading.Thread(target=attempt, name="mtcb-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    return outcome[0] if outcome else f"no answer in {timeout:g} s"


def _connect_error(exc: BaseException) -> str:
    text = str(exc).lower()
    if "name or service not known" in text or "nodename nor servname" in text or "name resolution" in text:
        return "the host name does not resolve"
    if "refused" in text:
        return "connection refused"
    return " ".join(str(exc).split())[:120] or "cannot connect"


# -- patience ---------------------------------------------------------------------------------

_lock = threading.Lock()
_state: dict[str, Any] = {"active": [], "answered": 0.0, "installed": False}


def _now() -> float:
    return time.monotonic()


def _deadline() -> float | None:
    """The current deadline (monotonic seconds), or None while no patience is active."""
    with _lock:
        if not _state["active"]:
            return None
        return _state["answered"] + max(_state["active"])


def silence() -> float:
    """Seconds since the Hub last answered (or since the patience began) while a ``patience``
    is active; 0.0 while none is (nothing is being asked of the Hub)."""
    with _lock:
        if not _state["active"]:
            return 0.0
        return max(0.0, _now() - _state["answered"])


def _on_request(request: Any) -> None:
    deadline = _deadline()
    if deadline is None:
        return
    left = deadline - _now()
    if left <= 0:
        raise HubNoAnswer(f"the Hugging Face Hub gave no answer in {max(_state['active'] or [0]):g} s")
    timeouts = dict(request.extensions.get("timeout") or {})
    for key in ("connect", "read", "write", "pool"):
        value = timeouts.get(key)
        timeouts[key] = left if value is None else min(value, left)
    request.extensions["timeout"] = timeouts


def _on_response(response: Any) -> None:
    with _lock:
        _state["answered"] = _now()


def _client() -> Any:
    """huggingface_hub's default client with the patience hooks added."""
    import httpx2
    from huggingface_hub.utils import _http as hf_http

    factory = getattr(hf_http, "default_client_factory", None)
    client = factory() if factory is not None else httpx2.Client(follow_redirects=True, timeout=None)
    hooks = client.event_hooks
    client.event_hooks = {"request": [*hooks.get("request", []), _on_request],
                          "response": [*hooks.get("response", []), _on_response]}
    return client


def install() -> None:
    """Give huggingface_hub a client with the patience hooks (once per process). Harmless while
    no ``patience`` is active: the hooks then change nothing."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    from huggingface_hub import set_client_factory

    set_client_factory(_client)


@contextmanager
def patience(seconds: float | None = None) -> Iterator[None]:
    """For the duration, give up on the Hub once it has not answered for ``seconds`` (default
    ``LOAD_PATIENCE``; see the module docstring). Re-entrant and usable from several threads:
    while several are active the longest patience applies."""
    seconds = LOAD_PATIENCE if seconds is None else seconds
    install()
    with _lock:
        if not _state["active"]:
            _state["answered"] = _now()
        _state["active"].append(float(seconds))
    try:
        yield
    finally:
        with _lock:
            _state["active"].remove(float(seconds))
