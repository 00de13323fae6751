"""Chat completions against any OpenAI-compatible server, with our own retries, cancel and cache.

A thin wrapper over ``openai.OpenAI(base_url=..., api_key=..., max_retries=0, timeout=...)``:
the SDK's own retries are off so that every retry can be shown ("retry 2/5 in 4 s: 429 rate
limited") and cancelled.

Retries. 429 (except ``insufficient_quota``), 408, 409, 5xx and timeouts are retried up to
``LLMConfig.max_retries`` times (the same set the ``openai`` SDK retries). The wait before retry
r (1-based) is :func:`backoff_delay`: exponential backoff with a cap and random jitter (AWS
Architecture Blog, "Exponential Backoff And Jitter", 2015), or the server's ``Retry-After`` /
``retry-after-ms`` when it sent one (RFC 9110 section 10.2.3; ``retry-after-ms`` is OpenAI's).
Other failures are not retried: an unreachable server, a refused key (401/403), an unknown model
(404) and ``insufficient_quota`` raise :class:`LLMUnavailable`; another 4xx raises
:class:`LLMError`. Retries used up raise :class:`LLMGaveUp`.

Cancel. A ``threading.Event`` is checked before every attempt and wakes the backoff sleep at
once. A request already in flight is not interrupted: it ends within ``timeout_s``.

Cache. A request whose key (:func:`mtcb_curate.llm.cache.request_key`) is in the cache is
answered from it without any network call; every successful response is stored before it is
returned (except an answer with no choices at all, a server fault), so nothing generated is
lost and a re-run never pays twice.

Structured output (issue 18). With ``[llm] structured_output = "auto"`` (the default) a request
that carries a JSON schema (:attr:`ChatRequest.schema`) is sent with ``response_format``
``{"type": "json_schema", ...}``, then, if the server refuses it (400, 422, 500 or 501 whose
message names the format, not the context length: llama-cpp-python's server answers 500 to
json_schema), ``{"type": "json_object", "schema": ...}`` (llama.cpp's and llama-cpp-python's
servers turn that schema into a grammar: even a 135M model then writes every field), then
``{"type": "json_object"}``, then none (plain text, parsed by ``parsing.extract_json``). Such a
refusal is not a retry. The first format a server and model accepted is remembered per
``base_url`` + model, in memory and in ``llm-formats.json`` beside the workspace's response
cache, so later calls and later runs start there. The cache key does not depend on the format
sent, so a negotiated run reuses earlier replies.

Streaming (``[llm] stream = true``). The reply is read as server-sent events; the number of
chunks received so far goes to ``on_stream``; the liveness check is ``first_token_timeout_s``
between any two reads (the first token after the prompt has been read, then each next one), not
one fixed wall for the whole reply; a cancel closes the connection at once (a watcher thread
closes the response), so a single-slot server is not left busy with an abandoned request. The
streamed reply is assembled into the same chat completion JSON as a plain one and cached alike.

Refusals and empty replies are not errors here: :class:`ChatResult` reports them
(``problem``) and the caller decides (generation retries with feedback; dedup keeps all).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from mtcb_curate.llm.cache import ResponseCache, request_key
from mtcb_curate.llm.config import LLMConfig, safe_url
from mtcb_curate.llm.errors import LLMCancelled, LLMError, LLMGaveUp, LLMUnavailable, one_line


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion request, before the client adds the model and JSON mode.

    Attributes:
        messages: ``({"role": ..., "content": ...}, ...)``.
        params: extra request parameters sent as is (``temperature`` ...).
        tag: part of the cache key but never sent: tells apart deliberate repeats of the same
            prompt (``sample=2``), which would otherwise be answered from the cache.
        schema: the reply's JSON schema as OpenAI's ``json_schema`` object (``{"name",
            "schema", "strict"}``), or None; sent only when the server accepts it (see the
            module docstring); not part of the cache key.
    """

    messages: tuple[Mapping[str, str], ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    tag: str = ""
    schema: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any] | None = None,
           tag: str = "", schema: Mapping[str, Any] | None = None) -> "ChatRequest":
        """Build from any sequence of messages."""
        return cls(tuple(dict(m) for m in messages), dict(params or {}), tag, schema)


@dataclass(frozen=True)
class ChatResult:
    """What came back for one request.

    Attributes:
        text: the message content ('' when there was none).
        refusal: the model's refusal text (``message.refusal``), or None.
        finish_reason: ``stop``, ``length``, ``content_filter`` ... or None.
        prompt_tokens, completion_tokens: usage as reported (0 when the server reports none).
        cached: True when answered from the cache (nothing was paid).
        key: the cache key of the request.
        model: the model the server says answered.
    """

    text: str
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    key: str
    model: str

    @property
    def problem(self) -> str | None:
        """Why the reply cannot be used at all (a refusal, an empty reply), or None."""
        if self.refusal:
            return f"the model refused: {one_line(self.refusal, limit=120)}"
        if not self.text.strip():
            if self.finish_reason == "content_filter":
                return "the reply was withheld by the server's content filter"
            return "the model returned an empty reply"
        return None


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """One retry about to happen, for the screen.

    Attributes:
        retry: this retry's number, 1-based; max_retries: the most there will be.
        delay_s: seconds until it is sent; reason: the failure, e.g. ``429 rate limited``.
    """

    retry: int
    max_retries: int
    delay_s: float
    reason: str

    def __str__(self) -> str:
        d = self.delay_s
        secs = f"{d:.0f}" if d >= 1 else f"{d:.2g}"
        return f"retry {self.retry}/{self.max_retries} in {secs} s: {self.reason}"


RetryCallback = Callable[[RetryNotice], None]
#: Called with the number of streamed chunks (about one token each) received so far.
StreamCallback = Callable[[int], None]

#: The file, beside the response cache, remembering the structured-output format each server
#: and model accepted: ``{"<base_url> <model>": mode}``, a mode of :data:`FORMAT_MODES`.
FORMATS_NAME = "llm-formats.json"
#: Formats remembered in this process, by ``"<base_url> <model>"`` (shared by all clients).
_FORMATS: dict[str, str] = {}
#: The structured-output formats, in the order ``auto`` tries them (see the module docstring).
FORMAT_MODES = ("json_schema", "json_object_schema", "json_object", "text")
_FORMATS_LOCK = threading.Lock()
_CONTEXT_WORDS = ("context", "too long", "exceed", "n_ctx", "maximum")
_FORMAT_WORDS = ("schema", "json", "grammar", "response_format", "response format")


def response_format(mode: str, schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``response_format`` sent for a structured-output ``mode`` (None for ``text``)."""
    if mode == "json_schema" and schema is not None:
        return {"type": "json_schema", "json_schema": dict(schema)}
    if mode == "json_object_schema" and schema is not None:
        return {"type": "json_object", "schema": dict(schema.get("schema") or {})}
    if mode in ("json_schema", "json_object_schema", "json_object"):
        return {"type": "json_object"}
    return None


def backoff_delay(retry: int, config: LLMConfig, retry_after_s: float | None = None,
                  rng: random.Random | None = None) -> float:
    """Seconds to wait before retry ``retry`` (1-based).

    Without ``retry_after_s``: ``min(cap, base * factor ** (retry - 1))`` times a uniform random
    factor in ``[1 - jitter, 1 + jitter]``, never above the cap (defaults: 1 s, x2, 60 s,
    +-25 %; "Exponential Backoff And Jitter", AWS Architecture Blog, 2015). With the server's
    ``Retry-After``: that many seconds, no jitter, at most ``retry_after_max_s``.
    """
    if retry_after_s is not None:
        return min(max(retry_after_s, 0.0), config.retry_after_max_s)
    delay = min(config.backoff_cap_s, config.backoff_base_s * config.backoff_factor ** max(retry - 1, 0))
    if config.backoff_jitter:
        j = min(config.backoff_jitter, 1.0)
        delay *= (rng or random).uniform(1 - j, 1 + j)
    return max(0.0, min(delay, config.backoff_cap_s))


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms`` (OpenAI), else ``Retry-After`` as
    seconds or an HTTP date (RFC 9110 section 10.2.3); None when absent or unreadable."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


class ChatClient:
    """Chat completions with retries, cancel and the response cache.

    Args:
        config: the resolved configuration (server, model, key, timeouts, backoff).
        cache: where responses are stored and reused, or None for no cache.
        http_client: an ``httpx2.Client`` handed to ``openai.OpenAI`` (tests, proxies), or None.
        rng: the random source of the backoff jitter (seeded in tests), or None.

    Thread-safe: one client may serve several worker threads.

    Attributes:
        streamed_chunks: chunks (about one token each) received by all streamed requests of
            this client so far, for a progress line that polls it (0 without streaming).
    """

    def __init__(self, config: LLMConfig, cache: ResponseCache | None = None, *,
                 http_client: Any = None, rng: random.Random | None = None):
        import openai

        self.config = config
        self.streamed_chunks = 0
        self._count_lock = threading.Lock()
        self.cache = cache
        self._http_client = http_client
        self._rng = rng or random.Random()
        self._openai = openai.OpenAI(base_url=config.base_url, api_key=config.api_key, max_retries=0,
                                     timeout=config.timeout_s, http_client=http_client)
        self._server = safe_url(config.base_url)
        self._format_key = f"{self._server} {config.model}"
        path = getattr(cache, "path", None)
        self._formats_path = None if path is None else Path(path).parent / FORMATS_NAME
        self._load_formats()

    # -- structured output ------------------------------------------------------------------------

    def _load_formats(self) -> None:
        """Read the remembered formats file (a missing or unreadable file is no memory)."""
        if self._formats_path is None or not self._formats_path.is_file():
            return
        try:
            data = json.loads(self._formats_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            with _FORMATS_LOCK:
                for k, v in data.items():
                    if isinstance(k, str) and v in FORMAT_MODES:
                        _FORMATS.setdefault(k, v)

    def known_format(self) -> str | None:
        """The structured-output format this server and model accepted before, or None."""
        with _FORMATS_LOCK:
            return _FORMATS.get(self._format_key)

    def _remember_format(self, mode: str) -> None:
        """Remember that this server and model accepted ``mode`` (in memory and on disk)."""
        with _FORMATS_LOCK:
            if _FORMATS.get(self._format_key) == mode:
                return
            _FORMATS[self._format_key] = mode
            if self._formats_path is None:
                return
            try:
                data = json.loads(self._formats_path.read_text(encoding="utf-8")) if self._formats_path.is_file() else {}
                if not isinstance(data, dict):
                    data = {}
            except (OSError, ValueError):
                data = {}
            data[self._format_key] = mode
            tmp = self._formats_path.with_suffix(".tmp")
            try:
                tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
                os.replace(tmp, self._formats_path)
            except OSError:
                pass  # a read-only workspace: the memory lasts for this process

    def format_chain(self, request: ChatRequest) -> list[str]:
        """The structured-output formats to try for ``request``, in order (see the module
        docstring); ``["as_given"]`` when the request sets its own ``response_format``."""
        cfg = self.config
        if "response_format" in request.params:
            return ["as_given"]
        mode = cfg.structured_output if cfg.json_mode else "text"
        if mode != "auto":
            return [mode]
        chain = (["json_schema", "json_object_schema"] if request.schema is not None else []) + ["json_object", "text"]
        known = self.known_format()
        if known in chain:
            chain = chain[chain.index(known):]
        return chain

    def params_for(self, request: ChatRequest) -> dict[str, Any]:
        """The parameters actually sent: the request's, plus JSON mode when configured."""
        params = dict(request.params)
        if (self.config.json_mode and self.config.structured_output != "text"
                and "response_format" not in params):
            params["response_format"] = {"type": "json_object"}
        return params

    def key_for(self, request: ChatRequest) -> str:
        """The cache key of ``request`` with this client's model and parameters."""
        return request_key(self.config.model, request.messages, self.params_for(request), request.tag)

    def is_cached(self, request: ChatRequest) -> bool:
        """True when ``request`` would be answered from the cache (no call, no cost)."""
        return self.cache is not None and self.key_for(request) in self.cache

    def complete(self, request: ChatRequest, *, cancel: threading.Event | None = None,
                 on_retry: RetryCallback | None = None, on_stream: StreamCallback | None = None) -> ChatResult:
        """Send ``request`` (or answer it from the cache) and return the reply.

        Args:
            request: the messages, parameters and cache tag.
            cancel: set it to stop; checked before each attempt and during backoff sleeps.
            on_retry: called with a :class:`RetryNotice` before each backoff sleep.

        Raises:
            LLMCancelled: ``cancel`` was set.
            LLMGaveUp: 429 / 408 / 409 / 5xx / timeouts on every attempt (1 + max_retries).
            LLMUnavailable: server unreachable, key refused (401/403), model or endpoint not
                found (404), no quota left.
            LLMError: any other rejection (400, 422 ...) or an unreadable response.
        """
        import openai

        cfg = self.config
        params = self.params_for(request)
        messages = [dict(m) for m in request.messages]
        key = request_key(cfg.model, messages, params, request.tag)
        stop = cancel or threading.Event()
        if stop.is_set():
            raise LLMCancelled("cancelled")
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return _result(hit.response, key, cached=True, default_model=cfg.model)
        retry = 0
        chain = self.format_chain(request)
        fmt = 0
        while True:
            if stop.is_set():
                raise LLMCancelled("cancelled")
            sent = dict(params)
            if chain[fmt] != "as_given":
                sent.pop("response_format", None)
                rf = response_format(chain[fmt], request.schema)
                if rf is not None:
                    sent["response_format"] = rf
            try:
                if cfg.stream:
                    completion = self._streamed(messages, sent, stop, on_stream)
                else:
                    completion = self._openai.chat.completions.create(model=cfg.model, messages=messages, **sent)
            except openai.APITimeoutError:
                reason, retry_after = f"timed out after {cfg.timeout_s:g} s", None
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                raise LLMUnavailable(
                    f"cannot reach the LLM server at {self._server}: {one_line(str(cause), cfg.api_key)}"
                ) from None
            except openai.APIStatusError as exc:
                if fmt + 1 < len(chain) and _refuses_format(exc, cfg.api_key):
                    fmt += 1  # the server refuses this response_format: try the next, not a retry
                    continue
                reason = self._fail_or_reason(exc)
                retry_after = parse_retry_after(exc.response.headers)
            except openai.OpenAIError as exc:
                raise LLMError(f"the LLM call failed: {one_line(str(exc), cfg.api_key)}") from None
            except ValueError:  # a 200 whose body is not JSON
                raise LLMError(f"the LLM server at {self._server} answered with something that is not "
                               "a chat completion") from None
            else:
                if not hasattr(completion, "model_dump"):  # e.g. an HTML page with status 200
                    raise LLMError(f"the LLM server at {self._server} answered with something that is not "
                                   "a chat completion")
                response = completion.model_dump(mode="json", exclude_none=True)
                result = _result(response, key, cached=False, default_model=cfg.model)
                if len(chain) > 1:
                    self._remember_format(chain[fmt])
                if self.cache is not None and response.get("choices"):
                    self.cache.put(key, model=cfg.model, server=self._server,
                                   request={"model": cfg.model, "messages": messages, "params": params,
                                            "sent": sent, "tag": request.tag},
                                   response=response, prompt_tokens=result.prompt_tokens,
                                   completion_tokens=result.completion_tokens)
                return result
            if retry >= cfg.max_retries:
                raise LLMGaveUp(f"the LLM server at {self._server} failed {retry + 1} times; "
                                f"gave up: {reason}", attempts=retry + 1, reason=reason)
            retry += 1
            delay = backoff_delay(retry, cfg, retry_after, self._rng)
            if on_retry is not None:
                on_retry(RetryNotice(retry, cfg.max_retries, delay, reason))
            if stop.wait(delay):
                raise LLMCancelled("cancelled")

    def _streamed(self, messages: list[dict[str, Any]], sent: dict[str, Any], stop: threading.Event,
                  on_stream: StreamCallback | None) -> "_Assembled":
        """One streamed request, assembled into a completion; a cancel closes it at once.

        Raises:
            LLMCancelled: ``stop`` was set (the connection is closed).
            openai errors: as for a plain request (a read timeout is ``APITimeoutError``).
        """
        import httpx2

        cfg = self.config
        wait = cfg.first_token_timeout_s or cfg.timeout_s
        timeout = httpx2.Timeout(cfg.timeout_s, read=wait)
        # A connection of its own whose sockets can be shut down from the watcher: that wakes a
        # read blocked before the headers or the first token, and the server sees the close.
        sockets = _Sockets()
        http = None
        if self._http_client is None:
            http = httpx2.Client(transport=sockets.transport(), timeout=timeout)
            client = self._openai.with_options(timeout=timeout, http_client=http)
        else:
            client = self._openai.with_options(timeout=timeout)
        done = threading.Event()

        def watch() -> None:
            # After a cancel, keep shutting sockets down until the request ends: a cancel that
            # comes before the connection is made must still close it.
            while not done.is_set():
                if stop.wait(0.05) and not done.is_set():
                    sockets.shutdown()
                    done.wait(0.05)

        watcher = threading.Thread(target=watch, name="llm-stream-cancel", daemon=True)
        watcher.start()
        try:
            stream = client.chat.completions.create(model=cfg.model, messages=messages, stream=True, **sent)
        except Exception:
            done.set()
            if http is not None:
                http.close()
            if stop.is_set():
                raise LLMCancelled("cancelled") from None
            raise
        parts: list[str] = []
        refusal: list[str] = []
        out: dict[str, Any] = {"model": cfg.model}
        finish = None
        chunks = 0
        try:
            for chunk in stream:
                if stop.is_set():
                    raise LLMCancelled("cancelled")
                chunks += 1
                with self._count_lock:
                    self.streamed_chunks += 1
                out["id"] = getattr(chunk, "id", None) or out.get("id")
                out["model"] = getattr(chunk, "model", None) or out["model"]
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    out["usage"] = usage.model_dump(mode="json", exclude_none=True)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(choice, "delta", None)
                    if delta is not None and getattr(delta, "content", None):
                        parts.append(delta.content)
                    if delta is not None and getattr(delta, "refusal", None):
                        refusal.append(delta.refusal)
                    finish = getattr(choice, "finish_reason", None) or finish
                if on_stream is not None:
                    on_stream(chunks)
        except Exception:
            if stop.is_set():
                raise LLMCancelled("cancelled") from None
            raise
        finally:
            done.set()
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
            if http is not None:
                http.close()
        if stop.is_set():
            raise LLMCancelled("cancelled")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(parts)}
        if refusal:
            message["refusal"] = "".join(refusal)
        choice_out: dict[str, Any] = {"index": 0, "message": message}
        if finish is not None:
            choice_out["finish_reason"] = finish
        out["choices"] = [choice_out] if (chunks or parts) else []
        return _Assembled({k: v for k, v in out.items() if v is not None})

    def _fail_or_reason(self, exc: Any) -> str:
        """The retry reason of a retryable status error; raise for the others."""
        cfg = self.config
        code = exc.status_code
        detail = _detail(exc, cfg.api_key)
        if code == 429 and (exc.code == "insufficient_quota" or "insufficient_quota" in detail):
            raise LLMUnavailable(f"the LLM account has no quota left (429 insufficient_quota) at {self._server}")
        if code == 429:
            return "429 rate limited"
        if code == 408:
            return "408 request timeout"
        if code == 409:
            return "409 conflict"
        if code >= 500:
            return f"{code} server error"
        if code in (401, 403):
            hint = "no key was set: set OPENAI_API_KEY" if cfg.key_is_placeholder else "check the API key"
            raise LLMUnavailable(f"the LLM server at {self._server} refused the request ({code}); {hint}")
        if code == 404:
            raise LLMUnavailable(f"model {cfg.model!r} or the chat completions endpoint was not found "
                                 f"at {self._server} (404)")
        raise LLMError(f"the LLM server rejected the request ({code}): {detail}")

    def probe(self, *, timeout_s: float = 5.0) -> list[str]:
        """Check that the server answers and accepts the key, with ``GET /models``.

        Returns:
            the model ids the server lists ([] when it does not list models).

        Raises:
            LLMUnavailable: unreachable, timed out, or the key was refused (401/403).
        """
        import openai

        try:
            page = self._openai.with_options(timeout=timeout_s).models.list()
        except openai.APITimeoutError:
            raise LLMUnavailable(f"the LLM server at {self._server} did not answer within {timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            raise LLMUnavailable(f"cannot reach the LLM server at {self._server}: "
                                 f"{one_line(str(exc.__cause__ or exc), self.config.api_key)}") from None
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise LLMUnavailable(f"the LLM server at {self._server} refused the request "
                                     f"({exc.status_code}); check the API key") from None
            return []
        except openai.OpenAIError:
            return []
        return [m.id for m in getattr(page, "data", []) or [] if getattr(m, "id", None)]

    def close(self) -> None:
        """Close the HTTP connections (the cache is the caller's to close)."""
        self._openai.close()


class _Sockets:
    """The sockets of one streamed request's connection pool, to shut down on cancel."""

    def __init__(self) -> None:
        self._streams: list[Any] = []
        self._lock = threading.Lock()

    def transport(self) -> Any:
        """An ``httpx2.HTTPTransport`` whose new connections are recorded here."""
        import httpcore2
        import httpx2

        outer = self

        class Backend(httpcore2.SyncBackend):
            def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
                stream = super().connect_tcp(*args, **kwargs)
                with outer._lock:
                    outer._streams.append(stream)
                return stream

        transport = httpx2.HTTPTransport()
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = Backend()
        return transport

    def shutdown(self) -> None:
        """Shut every recorded socket down (wakes a blocked read; the server sees the close)."""
        import socket

        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            try:
                sock = stream.get_extra_info("socket")
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass


class _Assembled:
    """A streamed reply put together, with the one method ``complete`` uses of a completion."""

    def __init__(self, data: dict[str, Any]):
        self._data = data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self._data


def _refuses_format(exc: Any, secret: str) -> bool:
    """True when a status error is a refusal of ``response_format``: 400, 422, 500 or 501
    whose message names the format (schema, json, grammar, response_format) and not the
    context length. Any other error is handled as before: a prompt too long for the model is
    refused with 400 whatever the format, and another 500 is a server fault, retried."""
    if exc.status_code not in (400, 422, 500, 501):
        return False
    detail = _detail(exc, secret).lower()
    return any(w in detail for w in _FORMAT_WORDS) and not any(w in detail for w in _CONTEXT_WORDS)


def _detail(exc: Any, secret: str) -> str:
    """A server's error message, one line, without the key."""
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, dict) else err
    return one_line(str(message if message else getattr(exc, "message", exc)), secret)


def _result(response: Mapping[str, Any], key: str, *, cached: bool, default_model: str) -> ChatResult:
    """A :class:`ChatResult` from a chat completion's JSON (fresh or cached)."""
    choices = response.get("choices") or []
    first = choices[0] if choices and isinstance(choices[0], Mapping) else {}
    message = first.get("message") or {}
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    refusal = message.get("refusal") if isinstance(message, Mapping) else None
    usage = response.get("usage") or {}
    return ChatResult(
        text=content if isinstance(content, str) else "",
        refusal=refusal if isinstance(refusal, str) and refusal.strip() else None,
        finish_reason=first.get("finish_reason"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached=cached,
        key=key,
        model=str(response.get("model") or default_model),
    )


def cached_replies(cache_path, marker: str, system: str) -> dict[str, dict]:
    """The replies in the LLM cache at ``cache_path`` (any model; the latest wins) to requests
    whose text holds ``marker`` and whose system message is ``system``, by the request's user
    message: what a task's earlier run paid for, read without any call ({} without a cache).

    Raises:
        sqlite3.Error: the file is not a database.
    """
    import json
    import sqlite3
    from pathlib import Path

    path = Path(cache_path)
    if not path.is_file():
        return {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT request, response FROM responses WHERE instr(request, ?) > 0 "
                          "ORDER BY created_at", (marker,)).fetchall()
    finally:
        db.close()
    by_user: dict[str, dict] = {}
    for request, response in rows:
        messages = json.loads(request).get("messages") or []
        if len(messages) >= 2 and messages[0].get("content") == system:
            by_user[str(messages[1].get("content"))] = json.loads(response)
    return by_user


def configured_client(workspace_dir=None, *, model: str | None = None, base_url: str | None = None,
                      config_path=None) -> "ChatClient":
    """The ``ChatClient`` the app and the commands use: options, then ``OPENAI_*`` variables,
    then the config file's ``[llm]`` table (``config_path``, default the user's); replies are
    cached in ``<workspace_dir>/llm.sqlite`` when a (writable) workspace folder is given.

    Raises:
        LLMConfigError: no key for OpenAI's API, no model, or a bad setting.
    """
    from mtcb_curate.llm.config import read_llm_table, resolve_config

    config = resolve_config(model=model, base_url=base_url, table=read_llm_table(config_path))
    cache = ResponseCache.in_workspace(workspace_dir) if workspace_dir is not None else None
    return ChatClient(config, cache)
