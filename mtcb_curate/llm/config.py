"""Which OpenAI-compatible server, model and key to use, and how patiently to call it.

Each setting is resolved in this order, the first one set wins:

1. an explicit option (the command line's ``--model`` / ``--base-url``);
2. the environment: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (and ``OPENAI_MODEL``);
3. the ``[llm]`` table of ``config.toml`` (see :mod:`mtcb_curate.config` for where it is);
4. the defaults below.

An ``[llm]`` table::

    [llm]
    base_url = "http://127.0.0.1:8080/v1"   # llama.cpp server, vLLM, Ollama (.../v1), OpenAI
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"         # the variable holding the key (never the key itself)
    timeout = 600                          # seconds per request (alias of timeout_s); a 1.5B model on CPU
                                           # needs minutes to read one 8,192-token window
    context_tokens = 8192                  # the model's context: longer windows are cut to fit
    structured_output = "auto"             # auto: json_schema, json_object with a schema, json_object,
                                           # then plain text
    stream = false                         # stream replies: tokens counted, cancel closes the request
    first_token_timeout_s = 900            # streaming: the longest wait for any bytes (the first token
                                           # after reading the prompt, then between tokens)
    max_retries = 5
    backoff_base_s = 1.0                   # first retry after about 1 s, then x2 ...
    backoff_factor = 2.0
    backoff_cap_s = 60.0                   # ... never more than 60 s
    backoff_jitter = 0.25                  # +-25 % random spread
    price_input_per_1m = 0.15              # USD per 1M input tokens, for the estimate only
    price_output_per_1m = 0.60
    json_mode = true                       # send response_format {"type": "json_object"}

The key is never read from ``config.toml``: a config file is easily shared or committed. It comes
from an option or the environment variable named by ``api_key_env``.

Local servers (llama.cpp, Ollama, vLLM) usually need no key. When the base URL is not OpenAI's
own and no key is set, :data:`PLACEHOLDER_KEY` is sent instead (the ``openai`` client refuses an
empty key) and ``LLMConfig.key_is_placeholder`` is True. OpenAI's own API without a key is an
:class:`~mtcb_curate.llm.errors.LLMConfigError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mtcb_curate.llm.errors import LLMConfigError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Our default model (small and cheap; any model the server knows can be named instead).
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: Sent to servers that need no key. Any non-empty string works for llama.cpp, Ollama and vLLM.
PLACEHOLDER_KEY = "no-key-required"

#: Settings the ``[llm]`` table may hold, with their types.
TABLE_KEYS: dict[str, type | tuple[type, ...]] = {
    "base_url": str,
    "model": str,
    "api_key_env": str,
    "timeout_s": (int, float),
    "max_retries": int,
    "backoff_base_s": (int, float),
    "backoff_factor": (int, float),
    "backoff_cap_s": (int, float),
    "backoff_jitter": (int, float),
    "retry_after_max_s": (int, float),
    "price_input_per_1m": (int, float),
    "price_output_per_1m": (int, float),
    "json_mode": bool,
    "concurrency": int,  # read by llm.pool.read_concurrency, not an LLMConfig field
    "timeout": (int, float),
    "context_tokens": int,
    "structured_output": str,
    "stream": bool,
    "first_token_timeout_s": (int, float),
}

#: ``structured_output`` values: ``auto`` negotiates (when the request has a schema:
#: ``json_schema``, then ``json_object_schema``, i.e. ``{"type": "json_object", "schema": ...}``,
#: the llama.cpp servers' form; then ``json_object``, then plain text; the first the server
#: accepts, remembered per server and model); the others are sent as named (``text``: no
#: ``response_format``).
STRUCTURED_OUTPUTS = ("auto", "json_schema", "json_object_schema", "json_object", "text")


@dataclass(frozen=True)
class LLMConfig:
    """A resolved LLM configuration. ``repr`` never shows the key.

    Attributes:
        model: the model name sent with every request.
        base_url: the API root, e.g. ``http://127.0.0.1:8080/v1`` (no trailing slash).
        api_key: the key sent as ``Authorization: Bearer ...`` (:data:`PLACEHOLDER_KEY` when the
            server needs none). Never printed, logged or stored.
        key_is_placeholder: True when no key was set and :data:`PLACEHOLDER_KEY` is sent.
        key_source: where the key came from (``OPENAI_API_KEY``, ``option`` or ``placeholder``).
        timeout_s: seconds one request may take (connect and each read) before it times out.
        max_retries: retries after the first attempt for 429, 5xx and timeouts (0 = none).
        backoff_base_s, backoff_factor, backoff_cap_s, backoff_jitter: the wait before retry r
            (1-based) is ``min(cap, base * factor ** (r - 1))`` times a uniform random factor in
            ``[1 - jitter, 1 + jitter]`` (see :func:`mtcb_curate.llm.client.backoff_delay`).
        retry_after_max_s: the longest ``Retry-After`` (seconds) honoured as given; longer ones
            are cut to this.
        price_input_per_1m, price_output_per_1m: USD per million input / output tokens, or
            None when unknown (the estimate then says the cost is unknown).
        json_mode: ask for JSON with ``response_format`` (turn off for servers that reject it;
            replies are parsed robustly either way). False is ``structured_output = "text"``.
        context_tokens: the model's context window in tokens, or None when unknown: a
            generation window longer than fits (with the prompt and the reply) is cut
            (``generate.fit_window``); the pair still records MTCB's 8,192-token chunk_index.
        structured_output: one of :data:`STRUCTURED_OUTPUTS`.
        stream: stream replies (``stream=True``): the tokens received are reported as they
            come, a cancel closes the request in flight at once, and the liveness check is
            ``first_token_timeout_s`` between any two reads instead of one fixed wall.
        first_token_timeout_s: with ``stream``, the longest wait for the next bytes of the
            reply (the first token comes after the server has read the whole prompt); None
            uses ``timeout_s``.
    """

    model: str = DEFAULT_MODEL
    base_url: str = DEFAULT_BASE_URL
    api_key: str = field(default=PLACEHOLDER_KEY, repr=False)
    key_is_placeholder: bool = True
    key_source: str = "placeholder"
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_factor: float = 2.0
    backoff_cap_s: float = 60.0
    backoff_jitter: float = 0.25
    retry_after_max_s: float = 300.0
    price_input_per_1m: float | None = None
    price_output_per_1m: float | None = None
    json_mode: bool = True
    context_tokens: int | None = None
    structured_output: str = "auto"
    stream: bool = False
    first_token_timeout_s: float | None = None

    def describe(self) -> str:
        """One line for the screen: model, server and where the key came from (never the key)."""
        key = "no key (placeholder)" if self.key_is_placeholder else f"key from {self.key_source}"
        return f"model {self.model} at {self.base_url}, {key}"


def is_openai_host(base_url: str) -> bool:
    """True when ``base_url`` is OpenAI's own API (``api.openai.com``), which needs a key."""
    return (urlsplit(base_url).hostname or "").lower() == "api.openai.com"


def safe_url(base_url: str) -> str:
    """``base_url`` without any ``user:password@`` part, safe to show or store."""
    parts = urlsplit(base_url)
    if parts.username is None and parts.password is None:
        return base_url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def read_llm_table(path: Path | None = None) -> dict[str, Any]:
    """The ``[llm]`` table of the config file (``mtcb_curate.config.default_config_path()`` when
    ``path`` is None); {} when the file or the table is absent.

    Raises:
        LLMConfigError: the file is not valid TOML, or ``llm`` is not a table.
    """
    from mtcb_curate.config import read_table
    from mtcb_curate.errors import CurateError

    try:
        return read_table("llm", path)
    except CurateError as exc:
        raise LLMConfigError(str(exc)) from None


def resolve_config(
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    table: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> LLMConfig:
    """Resolve an :class:`LLMConfig` from options, the environment and the ``[llm]`` table.

    Args:
        model, base_url, api_key: explicit options (win over everything).
        table: the parsed ``[llm]`` table (see :func:`read_llm_table`), or None.
        env: the environment (``os.environ`` when None).
        overrides: explicit values for any other ``LLMConfig`` field (``timeout_s=5`` ...).

    Raises:
        LLMConfigError: OpenAI's API with no key; ``api_key`` written in the table; an unknown
            ``[llm]`` setting or one of the wrong type; a base URL that is not http(s); a
            negative timeout, retry count or price. Messages never contain a key.
    """
    env = os.environ if env is None else env
    table = dict(table or {})
    if "api_key" in table:
        raise LLMConfigError(
            "[llm] api_key: keys are not read from config.toml; set OPENAI_API_KEY "
            "(or name another variable with api_key_env)")
    unknown = sorted(set(table) - set(TABLE_KEYS))
    if unknown:
        raise LLMConfigError(f"[llm] unknown setting {unknown[0]!r}; known: {', '.join(TABLE_KEYS)}")
    for name, value in table.items():
        kind = TABLE_KEYS[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise LLMConfigError(f"[llm] {name} has the wrong type ({type(value).__name__})")

    def pick(option: Any, env_name: str | None, key: str, default: Any) -> Any:
        """The option, else the environment variable, else the table entry, else the default."""
        if option not in (None, ""):
            return option
        if env_name and env.get(env_name):
            return env[env_name]
        if table.get(key) not in (None, ""):
            return table[key]
        return default

    url = str(pick(base_url, "OPENAI_BASE_URL", "base_url", DEFAULT_BASE_URL)).strip().rstrip("/")
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise LLMConfigError(f"LLM base URL must be http(s)://host[:port]/path, not {safe_url(url)!r}")
    name = str(pick(model, "OPENAI_MODEL", "model", DEFAULT_MODEL)).strip()

    key_env = str(table.get("api_key_env") or DEFAULT_KEY_ENV)
    if api_key:
        key, source, placeholder = api_key, "option", False
    elif env.get(key_env):
        key, source, placeholder = env[key_env], key_env, False
    elif is_openai_host(url):
        raise LLMConfigError(
            f"no API key for {safe_url(url)}: set {key_env}, or use --base-url for a local "
            "server that needs none")
    else:
        key, source, placeholder = PLACEHOLDER_KEY, "placeholder", True

    values: dict[str, Any] = {k: v for k, v in table.items() if k not in ("base_url", "model", "api_key_env", "concurrency")}
    if "timeout" in values:  # the short name, "[llm] timeout"
        values.setdefault("timeout_s", values["timeout"])
        del values["timeout"]
    values.update(overrides)
    known = {f.name for f in fields(LLMConfig)}
    bad = sorted(set(values) - known)
    if bad:
        raise LLMConfigError(f"unknown LLM setting {bad[0]!r}")
    cfg = LLMConfig(model=name, base_url=url, api_key=key, key_is_placeholder=placeholder,
                    key_source=source, **values)
    for attr in ("timeout_s", "max_retries", "backoff_base_s", "backoff_factor", "backoff_cap_s",
                 "backoff_jitter", "retry_after_max_s"):
        if getattr(cfg, attr) < 0:
            raise LLMConfigError(f"[llm] {attr} must not be negative")
    for attr in ("price_input_per_1m", "price_output_per_1m"):
        if getattr(cfg, attr) is not None and getattr(cfg, attr) < 0:
            raise LLMConfigError(f"[llm] {attr} must not be negative")
    if cfg.timeout_s == 0:
        raise LLMConfigError("[llm] timeout_s must be more than 0")
    if cfg.context_tokens is not None and cfg.context_tokens < 1024:
        raise LLMConfigError("[llm] context_tokens must be at least 1024")
    if cfg.structured_output not in STRUCTURED_OUTPUTS:
        raise LLMConfigError(f"[llm] structured_output must be one of {', '.join(STRUCTURED_OUTPUTS)}")
    return cfg
