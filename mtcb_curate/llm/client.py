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

Timeout and cancel. ``timeout_s`` bounds the whole request, connecting and reading the whole
body ("seconds per request"): each request gets a connection of its own, and a watcher thread
shuts its socket down when the deadline passes (a server dripping a valid reply one byte at a
time cannot hold a call past it) or when the ``threading.Event`` is set (a cancel closes the
request in flight at once, and the server sees the close). The event is also checked before
every attempt and wakes the backoff sleep at once.

Not a chat completion. A 200 reply without a ``choices`` list (``{"foo": 1}``, an HTML page)
raises :class:`LLMError` once ("... not a chat completion"): no retry, no feedback round.

Cache. A request whose key (:func:`mtcb_curate.llm.cache.request_key`) is in the cache is
answered from it without any network call. A reply is stored only once its caller has used it
(:meth:`ChatClient.keep`): a refused, unparseable, empty or truncated reply is never stored, so
it is never replayed after the server or the prompt is fixed. A client made without a cache
(``--no-cache``) reads and writes none.

Servers as they are. A server that serves one request at a time (llama-cpp-python's) may cut a
streamed reply short, or answer empty, when another request queues behind it. A reply cut
short (streamed without a ``finish_reason``) or empty while another request of this client was
in flight is taken as that: the client drops to one request at a time for this server and
model (remembered beside the cache, :data:`FORMATS_NAME`) and sends the request again.

Speed. Every reply that came from the server is timed; the prompt and reply tokens per second
of each server and model (:class:`ServerSpeed`) are remembered beside the cache and give the
run estimate its duration (``estimate.estimate_run``) and the run dialog its "reading the
prompt" progress (:meth:`ChatClient.status_line`).

Structured output. With ``[llm] structured_output = "auto"`` (the default) a request
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
from dataclasses import dataclass, field, replace
from enum import StrEnum
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from mtcb_curate.files import read_json as _read_json
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
        stored: what :meth:`ChatClient.keep` writes to the cache (request and response), or None
            for a reply from the cache.
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
    stored: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def truncated(self) -> bool:
        """True when the reply was cut at the token limit (``finish_reason`` ``length``)."""
        return self.finish_reason == "length"

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
#: and model accepted: ``{"<base_url> <model>": mode}``, a mode of :data:`FORMAT_MODES`; and
#: ``{"<base_url> <model> slots": 1}`` for a server found to serve one request at a time.
FORMATS_NAME = "llm-formats.json"
#: The file, beside the response cache, remembering each server's measured speed:
#: ``{"<base_url> <model>": ServerSpeed.to_json()}``.
SPEED_NAME = "llm-speed.json"
#: Calls a server's speed is measured over (the latest are kept).
SPEED_SAMPLES = 20
#: Speeds measured in this process, by ``"<base_url> <model>"`` (shared by all clients).
_SPEEDS: dict[str, "ServerSpeed"] = {}
#: Servers found to serve one request at a time in this process.
_SERIAL: set[str] = set()
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


@dataclass
class ServerSpeed:
    """A server's measured speed for one model, from the calls it answered.

    Attributes:
        samples: ``[prompt_tokens, completion_tokens, seconds, first_token_seconds or None]``
            of the latest :data:`SPEED_SAMPLES` calls (tokens as the server reported them).

    The rates: with streamed calls, prompt tokens per second = prompt tokens / seconds to the
    first token, reply tokens per second = reply tokens / the seconds after it. Without
    streaming one call cannot tell the two apart; both phases are then timed together, as
    (prompt + reply tokens) per second, which is what the estimate needs for calls like the
    ones measured.
    """

    samples: list[list[Any]] = field(default_factory=list)

    def add(self, prompt_tokens: int, completion_tokens: int, seconds: float, first_token_s: float | None) -> None:
        """Record one call (ignored without any token count or time)."""
        if seconds <= 0 or (prompt_tokens + completion_tokens) <= 0:
            return
        self.samples.append([int(prompt_tokens), int(completion_tokens), float(seconds),
                             None if first_token_s is None else float(first_token_s)])
        del self.samples[:-SPEED_SAMPLES]

    def rates(self) -> tuple[float | None, float | None, float | None]:
        """``(prompt tokens/s, reply tokens/s, all tokens/s)``; None where not measured."""
        streamed = [s for s in self.samples if s[3] is not None and s[3] > 0]
        pps = gps = None
        if streamed:
            pps = sum(s[0] for s in streamed) / sum(s[3] for s in streamed)
            gen_s = sum(max(s[2] - s[3], 0.0) for s in streamed)
            gps = sum(s[1] for s in streamed) / gen_s if gen_s > 0 else None
        total_s = sum(s[2] for s in self.samples)
        tps = sum(s[0] + s[1] for s in self.samples) / total_s if total_s > 0 else None
        return pps, gps, tps

    def seconds(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Estimated seconds of one call of these token counts; None when nothing was measured."""
        pps, gps, tps = self.rates()
        if pps and gps:
            return prompt_tokens / pps + completion_tokens / gps
        if tps:
            return (prompt_tokens + completion_tokens) / tps
        return None

    def describe(self) -> str:
        """One line: ``58 prompt tokens/s, 14 reply tokens/s over 6 calls``."""
        pps, gps, tps = self.rates()
        n = len(self.samples)
        if pps and gps:
            return f"{pps:,.0f} prompt tokens/s, {gps:,.1f} reply tokens/s over {n} call{'s' if n != 1 else ''}"
        if tps:
            return f"{tps:,.0f} tokens/s over {n} call{'s' if n != 1 else ''}"
        return "not measured yet"

    def to_json(self) -> list[list[Any]]:
        """JSON-ready samples."""
        return [list(s) for s in self.samples]


class RequestPhase(StrEnum):
    """What a request is doing (``RequestState.phase``). A ``StrEnum``: ``RequestPhase.SENT == "sent"``."""

    QUEUED = "queued"
    SENT = "sent"
    STREAMING = "streaming"


@dataclass
class RequestState:
    """What one request of a client is doing, for the screens (:meth:`ChatClient.status_line`).

    Attributes:
        phase: ``queued`` (waiting for a free slot of a one-at-a-time server), ``sent``
            (the server is reading the prompt or writing a reply that is not streamed),
            ``streaming`` (tokens are arriving).
        started: clock time the request began waiting or was sent; sent_at: when it was sent.
        prompt_tokens: its estimated prompt tokens (cl100k); tokens: streamed chunks so far.
    """

    phase: RequestPhase
    started: float
    sent_at: float | None = None
    prompt_tokens: int = 0
    tokens: int = 0


class _Slots:
    """A counting gate whose limit can be lowered while threads wait (None: no limit)."""

    def __init__(self) -> None:
        self.limit: int | None = None
        self.busy = 0
        self._cond = threading.Condition()

    def acquire(self, stop: threading.Event) -> None:
        """Wait for a free slot (checking ``stop`` every 0.1 s). Raises LLMCancelled."""
        with self._cond:
            while self.limit is not None and self.busy >= self.limit:
                if stop.is_set():
                    raise LLMCancelled("cancelled")
                self._cond.wait(0.1)
            self.busy += 1

    def release(self) -> None:
        """Free a slot."""
        with self._cond:
            self.busy -= 1
            self._cond.notify_all()

    def set_limit(self, limit: int | None) -> None:
        """Change the limit."""
        with self._cond:
            self.limit = limit
            self._cond.notify_all()


class ChatClient:
    """Chat completions with retries, cancel and the response cache.

    Args:
        config: the resolved configuration (server, model, key, timeouts, backoff).
        cache: where responses are stored and reused, or None for no cache.
        http_client: an ``httpx2.Client`` handed to ``openai.OpenAI`` (tests, proxies), or None;
            with it the whole-request deadline and the cancel's close are not applied (the
            client's own transport is used as given).
        rng: the random source of the backoff jitter (seeded in tests), or None.
        clock: the monotonic clock of the deadline and the timings (``time.monotonic``;
            tests inject their own).

    Thread-safe: one client may serve several worker threads.

    Attributes:
        streamed_chunks: chunks (about one token each) received by all streamed requests of
            this client so far, for a progress line that polls it (0 without streaming).
    """

    def __init__(self, config: LLMConfig, cache: ResponseCache | None = None, *,
                 http_client: Any = None, rng: random.Random | None = None,
                 clock: Callable[[], float] | None = None):
        import openai

        self.config = config
        self.clock = clock or time.monotonic
        self.streamed_chunks = 0
        self._slots = _Slots()
        self._states: dict[int, RequestState] = {}
        self._state_ids = iter(range(1 << 62))
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
        self._speed_path = None if path is None else Path(path).parent / SPEED_NAME
        self._load_formats()
        self._load_speed()
        with _FORMATS_LOCK:
            serial = f"{self._format_key} slots" in _FORMATS or self._format_key in _SERIAL
        if serial:
            self._slots.set_limit(1)

    # -- structured output ------------------------------------------------------------------------

    def _load_formats(self) -> None:
        """Read the remembered formats file (a missing or unreadable file is no memory)."""
        data = _read_json(self._formats_path)
        if isinstance(data, dict):
            with _FORMATS_LOCK:
                for k, v in data.items():
                    if isinstance(k, str) and v in FORMAT_MODES:
                        _FORMATS.setdefault(k, v)
                    elif isinstance(k, str) and k.endswith(" slots") and v == 1:
                        _FORMATS.setdefault(k, "1")

    def _load_speed(self) -> None:
        """Read the remembered speeds file (a missing or unreadable file is no memory)."""
        data = _read_json(self._speed_path)
        samples = data.get(self._format_key) if isinstance(data, dict) else None
        if isinstance(samples, list):
            with _FORMATS_LOCK:
                speed = _SPEEDS.setdefault(self._format_key, ServerSpeed())
                if not speed.samples:
                    for smp in samples:
                        if isinstance(smp, list) and len(smp) == 4:
                            try:
                                speed.add(int(smp[0]), int(smp[1]), float(smp[2]),
                                          None if smp[3] is None else float(smp[3]))
                            except (TypeError, ValueError):
                                continue

    def speed(self) -> ServerSpeed:
        """This server and model's measured speed (empty when nothing was measured)."""
        with _FORMATS_LOCK:
            return ServerSpeed([list(x) for x in _SPEEDS.get(self._format_key, ServerSpeed()).samples])

    def _record_speed(self, prompt_tokens: int, completion_tokens: int, seconds: float,
                      first_token_s: float | None) -> None:
        """Add one timed call to the speed memory (in memory and on disk, best effort)."""
        with _FORMATS_LOCK:
            speed = _SPEEDS.setdefault(self._format_key, ServerSpeed())
            speed.add(prompt_tokens, completion_tokens, seconds, first_token_s)
            samples = speed.to_json()
            if self._speed_path is None:
                return
            _merge_json(self._speed_path, {self._format_key: samples})

    @property
    def serial(self) -> bool:
        """True when this server was found to serve one request at a time."""
        return self._slots.limit == 1

    def _go_serial(self) -> None:
        """Serve this server one request at a time from now on (remembered)."""
        self._slots.set_limit(1)
        with _FORMATS_LOCK:
            _SERIAL.add(self._format_key)
            _FORMATS[f"{self._format_key} slots"] = "1"
            if self._formats_path is not None:
                _merge_json(self._formats_path, {f"{self._format_key} slots": 1})

    def status_line(self) -> str:
        """What the server is doing for this client's requests, one line for the screens:
        ``queued: 1 waiting for the server (it serves one request at a time)`` (held back by this
        client), ``sent, no token yet (the server queues it or reads the prompt): 40 s of about
        160 s at this server's measured speed`` (a server's own queue cannot be seen from the
        client), ``writing the reply: 85 tokens so far`` (streaming); '' when nothing is in
        flight."""
        now = self.clock()
        with self._count_lock:
            states = list(self._states.values())
        if not states:
            return ""
        parts = []
        queued = [s for s in states if s.phase == RequestPhase.QUEUED]
        if queued:
            parts.append(f"queued: {len(queued)} waiting for the server"
                         + (" (it serves one request at a time)" if self.serial else ""))
        speed = self.speed()
        for st in states:
            if st.phase == RequestPhase.SENT and st.sent_at is not None:
                elapsed = now - st.sent_at
                if self.config.stream:
                    what = "sent, no token yet (the server queues it or reads the prompt)"
                    est = speed.seconds(st.prompt_tokens, 0)
                else:
                    what = "sent, no reply yet (the server queues it, reads the prompt or writes the reply)"
                    est = speed.seconds(st.prompt_tokens, 250)
                parts.append(f"{what}: {_dur(elapsed)}" + (f" of about {_dur(est)} at this server's measured speed"
                                                          if est else ""))
            elif st.phase == RequestPhase.STREAMING:
                parts.append(f"writing the reply: {st.tokens} tokens so far")
        return "; ".join(dict.fromkeys(parts))

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

    def keep(self, result: ChatResult) -> bool:
        """Store a reply its caller used, so a rerun gets it without a call. A reply from the
        cache, one with a problem (refused, empty) or one cut at the token limit is not stored.

        Returns:
            True when it was stored.
        """
        data = result.stored
        if self.cache is None or result.cached or data is None or result.problem or result.truncated:
            return False
        self.cache.put(result.key, model=self.config.model, server=self._server, request=data["request"],
                       response=data["response"], prompt_tokens=result.prompt_tokens,
                       completion_tokens=result.completion_tokens)
        return True

    def complete(self, request: ChatRequest, *, cancel: threading.Event | None = None,
                 on_retry: RetryCallback | None = None, on_stream: StreamCallback | None = None) -> ChatResult:
        """Send ``request`` (or answer it from the cache) and return the reply. The reply is
        not stored: call :meth:`keep` once it has been used.

        Args:
            request: the messages, parameters and cache tag.
            cancel: set it to stop: checked before each attempt, during backoff sleeps and
                while a request is in flight (its connection is closed at once).
            on_retry: called with a :class:`RetryNotice` before each backoff sleep.
            on_stream: with streaming, called with the chunks received so far.

        Raises:
            LLMCancelled: ``cancel`` was set.
            LLMGaveUp: 429 / 408 / 409 / 5xx / timeouts / streams cut short on every attempt
                (1 + max_retries).
            LLMUnavailable: server unreachable, key refused (401/403), model or endpoint not
                found (404), no quota left.
            LLMError: any other rejection (400, 422 ...), or a 200 reply that is not a chat
                completion (no ``choices``).
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
        prompt_estimate = _prompt_estimate(messages)
        while True:
            if stop.is_set():
                raise LLMCancelled("cancelled")
            sent = dict(params)
            if chain[fmt] != "as_given":
                sent.pop("response_format", None)
                rf = response_format(chain[fmt], request.schema)
                if rf is not None:
                    sent["response_format"] = rf
            state = RequestState(RequestPhase.QUEUED, self.clock(), prompt_tokens=prompt_estimate)
            sid = next(self._state_ids)
            with self._count_lock:
                self._states[sid] = state
            self._slots.acquire(stop)
            others = self._slots.busy - 1
            state.phase, state.sent_at = RequestPhase.SENT, self.clock()
            timing: dict[str, float | None] = {"first": None}
            try:
                completion = self._send(messages, sent, stop, on_stream, state, timing)
            except _DeadlinePassed:
                reason, retry_after = f"timed out after {cfg.timeout_s:g} s", None
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
                cut = isinstance(completion, _Assembled) and completion.cut
                if not isinstance(response.get("choices"), list) or (not response["choices"] and not cut):
                    raise LLMError(f"the LLM server at {self._server} answered with something that is not "
                                   "a chat completion (no \"choices\")")
                result = _result(response, key, cached=False, default_model=cfg.model)
                if self.cache is not None:
                    self.cache.record_paid(key, model=cfg.model, prompt_tokens=result.prompt_tokens,
                                           completion_tokens=result.completion_tokens)
                if len(chain) > 1:
                    self._remember_format(chain[fmt])
                if cut or (others > 0 and not result.text.strip() and not result.refusal):
                    # A reply cut short, or empty while another request was in flight: a server
                    # that serves one request at a time. Never used, never stored; sent again.
                    if others > 0 and not self.serial:
                        self._go_serial()
                    reason = ("the server cut the streamed reply short" if cut
                              else "an empty reply while another request was in flight")
                    retry_after = 0.0 if self.serial and others > 0 else None
                else:
                    elapsed = self.clock() - (state.sent_at or state.started)
                    first = timing["first"]
                    # A stream without usage counts its chunks (about one token each).
                    self._record_speed(result.prompt_tokens or prompt_estimate, result.completion_tokens or state.tokens,
                                       elapsed, None if first is None else first - (state.sent_at or state.started))
                    stored = {"request": {"model": cfg.model, "messages": messages, "params": params, "sent": sent,
                                          "tag": request.tag}, "response": response}
                    return replace(result, stored=stored)
            finally:
                self._slots.release()
                with self._count_lock:
                    self._states.pop(sid, None)
            if retry >= cfg.max_retries:
                raise LLMGaveUp(f"the LLM server at {self._server} failed {retry + 1} times; "
                                f"gave up: {reason}", attempts=retry + 1, reason=reason)
            retry += 1
            delay = backoff_delay(retry, cfg, retry_after, self._rng)
            if on_retry is not None:
                on_retry(RetryNotice(retry, cfg.max_retries, delay, reason))
            if stop.wait(delay):
                raise LLMCancelled("cancelled")

    def _send(self, messages: list[dict[str, Any]], sent: dict[str, Any], stop: threading.Event,
              on_stream: StreamCallback | None, state: RequestState, timing: dict[str, float | None]) -> Any:
        """One request on a connection of its own, closed by a watcher when ``stop`` is set
        or the whole-request deadline (``timeout_s``) passes.

        Raises:
            LLMCancelled: ``stop`` was set (the connection is closed).
            _DeadlinePassed: the deadline passed before the whole reply was read.
            openai errors: as the SDK raises them.
        """
        import httpx2

        cfg = self.config
        wait = (cfg.first_token_timeout_s or cfg.timeout_s) if cfg.stream else cfg.timeout_s
        timeout = httpx2.Timeout(cfg.timeout_s, read=wait)
        sockets = _Sockets()
        http = None
        if self._http_client is None:
            http = httpx2.Client(transport=sockets.transport(cfg.base_url), timeout=timeout)
            client = self._openai.with_options(timeout=timeout, http_client=http)
        else:
            client = self._openai.with_options(timeout=timeout)
        done = threading.Event()
        expired = threading.Event()
        deadline = self.clock() + cfg.timeout_s

        def watch() -> None:
            # After a cancel or the deadline, keep shutting sockets down until the request ends:
            # one that comes before the connection is made must still close it.
            while not done.is_set():
                if self.clock() >= deadline:
                    expired.set()
                if (stop.wait(0.05) or expired.is_set()) and not done.is_set():
                    sockets.shutdown()
                    done.wait(0.05)

        watcher = threading.Thread(target=watch, name="llm-request-watch", daemon=True)
        watcher.start()

        def failed() -> BaseException | None:
            if stop.is_set():
                return LLMCancelled("cancelled")
            if expired.is_set():
                return _DeadlinePassed()
            return None

        try:
            if cfg.stream:
                return self._streamed(client, messages, sent, stop, on_stream, state, timing, failed)
            try:
                return client.chat.completions.create(model=cfg.model, messages=messages, **sent)
            except Exception:
                why = failed()
                if why is not None:
                    raise why from None
                raise
        finally:
            done.set()
            if http is not None:
                http.close()

    def _streamed(self, client: Any, messages: list[dict[str, Any]], sent: dict[str, Any], stop: threading.Event,
                  on_stream: StreamCallback | None, state: RequestState, timing: dict[str, float | None],
                  failed: Callable[[], BaseException | None]) -> "_Assembled":
        """One streamed request, assembled into a completion (``cut`` when the stream ended
        without a ``finish_reason``).

        Raises:
            LLMCancelled, _DeadlinePassed: see :meth:`_send`.
            openai errors: as for a plain request (a read timeout is ``APITimeoutError``).
        """
        cfg = self.config
        try:
            stream = client.chat.completions.create(model=cfg.model, messages=messages, stream=True, **sent)
        except Exception:
            why = failed()
            if why is not None:
                raise why from None
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
                if chunks == 0:
                    timing["first"] = self.clock()
                    state.phase = RequestPhase.STREAMING
                chunks += 1
                state.tokens = chunks
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
        except LLMCancelled:
            raise
        except Exception:
            why = failed()
            if why is not None:
                raise why from None
            raise
        finally:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        why = failed()
        if why is not None:
            raise why
        message: dict[str, Any] = {"role": "assistant", "content": "".join(parts)}
        if refusal:
            message["refusal"] = "".join(refusal)
        choice_out: dict[str, Any] = {"index": 0, "message": message}
        if finish is not None:
            choice_out["finish_reason"] = finish
        out["choices"] = [choice_out] if (chunks or parts) else []
        assembled = _Assembled({k: v for k, v in out.items() if v is not None})
        assembled.cut = finish is None
        return assembled

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

    def transport(self, url: str = "") -> Any:
        """An ``httpx2.HTTPTransport`` whose new connections are recorded here; through the
        proxy the environment names for ``url`` (``HTTPS_PROXY`` ..., ``NO_PROXY``), as
        the ``openai`` client's own transport would be."""
        import httpcore2
        import httpx2

        outer = self

        class Backend(httpcore2.SyncBackend):
            def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
                stream = super().connect_tcp(*args, **kwargs)
                with outer._lock:
                    outer._streams.append(stream)
                return stream

        transport = httpx2.HTTPTransport(proxy=_env_proxy(url))
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


class _DeadlinePassed(Exception):
    """The whole-request deadline passed (the watcher closed the connection)."""


class _Assembled:
    """A streamed reply put together, with the one method ``complete`` uses of a completion.

    Attributes:
        cut: True when the stream ended without a ``finish_reason`` (cut short by the server).
    """

    def __init__(self, data: dict[str, Any]):
        self._data = data
        self.cut = False

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self._data


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``urllib.request.getproxies``), or None
    (none set, or ``NO_PROXY`` covers its host)."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme) or None


def _dur(seconds: float | None) -> str:
    """``45 s`` / ``3 min 05 s``."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


def _prompt_estimate(messages: Sequence[Mapping[str, Any]]) -> int:
    """Prompt tokens of ``messages`` by cl100k (``dataset.tokens``), for the status line."""
    from mtcb_curate.dataset.tokens import count_tokens

    return sum(count_tokens(str(m.get("content") or "")) + 4 for m in messages) + 3


def _merge_json(path: Path, entries: Mapping[str, Any]) -> None:
    """Merge ``entries`` into the JSON object at ``path`` (atomic; best effort: a read-only
    folder keeps the memory for this process only)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data.update(entries)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


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
