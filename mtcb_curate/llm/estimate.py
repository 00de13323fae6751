"""Calls, tokens and cost of an LLM run, shown before any run of more than 10 calls.

Input tokens are counted with tiktoken ``cl100k_base`` (:func:`mtcb_curate.dataset.tokens.count_tokens`)
plus OpenAI's per-message overhead for chat models: 3 tokens per message and 3 to prime the
reply (OpenAI Cookbook, "How to count tokens with tiktoken"). Other models and tokenizers differ
by a few per cent; the figure is an estimate. Output tokens are an assumption per call
(:data:`GENERATION_OUTPUT_TOKENS`, :data:`DEDUP_OUTPUT_TOKENS_PER_QUESTION`). The cost uses the
prices of the ``[llm]`` table; with no price it is unknown (None), never a guess. The duration
uses the speed measured on this server and model by earlier calls (``client.ServerSpeed``,
remembered per base URL and model beside the workspace's cache); before any call it is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mtcb_curate.llm.client import ChatClient, ChatRequest
from mtcb_curate.llm.config import LLMConfig

#: Runs of more than this many calls are confirmed first.
CONFIRM_ABOVE_CALLS = 10
#: Tokens added per chat message and to prime the reply (OpenAI Cookbook).
TOKENS_PER_MESSAGE = 3
TOKENS_REPLY_PRIMING = 3
#: Assumed output tokens of one generation reply: a JSON object with a question, a 1-2 sentence
#: answer and a passage of up to about 600 characters (our estimate).
GENERATION_OUTPUT_TOKENS = 250
#: Assumed output tokens per question of a dedup batch (its number in "indices", a share of
#: "groups"; our estimate).
DEDUP_OUTPUT_TOKENS_PER_QUESTION = 4


@dataclass(frozen=True, slots=True)
class RunEstimate:
    """What a run will cost, before it starts.

    Attributes:
        calls: planned requests; cached_calls: how many of them the cache answers for free.
        max_calls: the most requests there can be, counting content retries (generation's
            resent replies), not counting 429/5xx retries.
        input_tokens: prompt tokens of the planned requests not in the cache.
        output_tokens: assumed completion tokens of those requests.
        cost_usd: estimated cost in USD of ``input_tokens`` and ``output_tokens``, or None when
            a price is not configured.
        seconds: estimated seconds of the first attempts at this server's measured speed, one
            call after another, or None when its speed was never measured.
        speed: the measured speed it is based on, one line ('' when none).
    """

    calls: int
    cached_calls: int
    max_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    seconds: float | None = None
    speed: str = ""

    @property
    def paid_calls(self) -> int:
        """Planned requests that go to the server."""
        return self.calls - self.cached_calls

    @property
    def needs_confirmation(self) -> bool:
        """True for a run of more than :data:`CONFIRM_ABOVE_CALLS` paid calls."""
        return self.paid_calls > CONFIRM_ABOVE_CALLS

    def summary(self) -> str:
        """One line, e.g. ``12 calls (up to 48 with retries), 98,304 input tokens, about 3,000
        output tokens, estimated cost $0.0166`` (``cost unknown`` without prices)."""
        calls = f"{self.paid_calls:,} call{'s' if self.paid_calls != 1 else ''}"
        if self.max_calls > self.calls:
            calls += f" (up to {self.max_calls - self.cached_calls:,} with retries)"
        if self.cached_calls:
            calls += f", {self.cached_calls:,} more from the cache"
        cost = "cost unknown (no price set)" if self.cost_usd is None else f"estimated cost ${self.cost_usd:,.4f}"
        line = (f"{calls}, {self.input_tokens:,} input tokens, about {self.output_tokens:,} output tokens, "
                f"{cost}")
        if self.seconds is not None:
            line += f"; about {_duration(self.seconds)} at this server's measured speed ({self.speed})"
        elif self.paid_calls:
            line += "; duration unknown (this server's speed is measured on its first call)"
        return line


def _duration(seconds: float) -> str:
    """``40 s``, ``12 min``, ``2 h 05 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def count_message_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """Prompt tokens of a chat request: ``cl100k_base`` tokens of each role and content, plus 3
    per message and 3 for the reply (OpenAI Cookbook)."""
    from mtcb_curate.dataset.tokens import count_tokens

    return TOKENS_REPLY_PRIMING + sum(
        TOKENS_PER_MESSAGE + count_tokens(m.get("role", "")) + count_tokens(m.get("content", "") or "")
        for m in messages)


def cost_usd(input_tokens: int, output_tokens: int, config: LLMConfig) -> float | None:
    """``input_tokens / 1e6 * price_input_per_1m + output_tokens / 1e6 * price_output_per_1m``
    in USD, or None when either price is unknown."""
    if config.price_input_per_1m is None or config.price_output_per_1m is None:
        return None
    return input_tokens / 1e6 * config.price_input_per_1m + output_tokens / 1e6 * config.price_output_per_1m


def estimate_run(
    requests: Sequence[ChatRequest],
    config: LLMConfig,
    *,
    output_tokens: Sequence[int] | int,
    retries_per_call: int = 0,
    client: ChatClient | None = None,
) -> RunEstimate:
    """Estimate a run of ``requests`` (e.g. ``generate.plan_generate_more`` or
    ``dedup.plan_dedup``).

    Args:
        requests: the planned requests.
        config: for the prices.
        output_tokens: assumed completion tokens, per request or one figure for all.
        retries_per_call: content retries each call may need (generation: ``generate.RETRIES``).
        client: when given, requests its cache already holds are counted as free.

    Returns:
        A :class:`RunEstimate`; tokens and cost count only the requests not in the cache.
    """
    outs = [output_tokens] * len(requests) if isinstance(output_tokens, int) else list(output_tokens)
    if len(outs) != len(requests):
        raise ValueError("output_tokens must give one figure per request")
    cached = 0
    tin = tout = 0
    speed = client.speed() if client is not None and hasattr(client, "speed") else None
    seconds: float | None = 0.0 if speed is not None and speed.samples else None
    for req, out in zip(requests, outs):
        if client is not None and client.is_cached(req):
            cached += 1
            continue
        t = count_message_tokens(req.messages)
        tin += t
        tout += out
        if seconds is not None and speed is not None:
            seconds += speed.seconds(t, out) or 0.0
    calls = len(requests)
    return RunEstimate(calls, cached, calls * (1 + retries_per_call), tin, tout, cost_usd(tin, tout, config),
                       seconds, speed.describe() if seconds is not None and speed is not None else "")


def estimate_generate_more(document: Any, existing: Sequence[Any], n: int, config: LLMConfig, *,
                           profile: Any = None, client: ChatClient | None = None,
                           steering: Any = None, mode: str = "quote", dense: bool = False) -> RunEstimate:
    """Estimate ``generate.generate_more(client, document, existing, n, profile=...)``: n first
    attempts of :data:`GENERATION_OUTPUT_TOKENS` each, up to ``generate.RETRIES`` resends each."""
    from mtcb_curate.llm.generate import RETRIES, plan_generate_more

    reqs = plan_generate_more(document, existing, n, profile=profile, steering=steering, mode=mode, dense=dense,
                              client=client)
    return estimate_run(reqs, config, output_tokens=GENERATION_OUTPUT_TOKENS, retries_per_call=RETRIES,
                        client=client)


def estimate_dedup(items: Sequence[Any], config: LLMConfig, *, batch_size: int | None = None,
                   client: ChatClient | None = None) -> RunEstimate:
    """Estimate ``dedup.semantic_dedup(client, items)``: one call per batch and the final pass
    (counted over all items, an upper bound), :data:`DEDUP_OUTPUT_TOKENS_PER_QUESTION` output
    tokens per question shown."""
    from mtcb_curate.llm.dedup import BATCH_SIZE, plan_dedup

    size = batch_size or BATCH_SIZE
    reqs = plan_dedup(items, size)
    shown = [len(items[i:i + size]) for i in range(0, len(items), size) if len(items[i:i + size]) > 1]
    if len(reqs) > len(shown):
        shown.append(len(items))
    return estimate_run(reqs, config, output_tokens=[DEDUP_OUTPUT_TOKENS_PER_QUESTION * k for k in shown],
                        client=client)
