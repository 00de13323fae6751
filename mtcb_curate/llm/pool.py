"""Up to N LLM calls at once, with results committed in input order.

``[llm] concurrency = N`` (default 1) in the config file sets N. A run with N > 1 sends its
independent calls (generation jobs of different windows or documents, dedup batches, judge
calls) through a ``ThreadPoolExecutor`` of N threads over the same :class:`ChatClient`
(thread-safe; its cache is shared). Retries, backoff notices and the cache work per call as
before; progress is reported as calls finish; a cancel stops the calls not yet started and
the backoff sleeps at once (a request in flight ends within the timeout).

Determinism. Results are returned in the input order, never in the order they finished, and
a run stops at the first failure *in input order*: the results before it are kept. Every
finished call is in the cache, so a rerun after a cancel, a failure or a kill answers them
from it and makes no repeated paid call. With N = 1 nothing runs in a thread: the calls are
made one after another exactly as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from mtcb_curate.llm.errors import LLMCancelled, LLMConfigError

T = TypeVar("T")
R = TypeVar("R")

#: Calls at once when ``[llm] concurrency`` is not set: one.
DEFAULT_CONCURRENCY = 1
#: The most calls at once we accept from the config file (a guard against a typo like 6400).
MAX_CONCURRENCY = 256


def read_concurrency(config_path: Path | str | None = None) -> int:
    """``[llm] concurrency`` of the config file (``config_path``, default the user's), else
    :data:`DEFAULT_CONCURRENCY`.

    Raises:
        LLMConfigError: the file is not valid TOML, or the value is not an integer in
            1..:data:`MAX_CONCURRENCY`.
    """
    from mtcb_curate.llm.config import read_llm_table

    value = read_llm_table(Path(config_path) if config_path is not None else None).get("concurrency",
                                                                                    DEFAULT_CONCURRENCY)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
        raise LLMConfigError(f"[llm] concurrency must be an integer from 1 to {MAX_CONCURRENCY}, not {value!r}")
    return value


@dataclass
class PoolResult(Generic[R]):
    """What a pooled run gave.

    Attributes:
        results: the result of each input, in input order, up to the first one that did not
            finish (cancelled, failed or never started): ``results[i]`` belongs to ``items[i]``.
        cancelled: True when the run stopped on a cancel.
        error: the first exception in input order (not a cancel), or None; the caller re-raises it.
        finished: how many calls finished (including ones after the kept prefix, whose replies
            are in the cache).
    """

    results: list[R] = field(default_factory=list)
    cancelled: bool = False
    error: BaseException | None = None
    finished: int = 0


def run_ordered(fn: Callable[[T], R], items: Sequence[T], *, concurrency: int = 1,
                cancel: threading.Event | None = None,
                on_progress: Callable[[int, int], None] | None = None) -> PoolResult[R]:
    """Run ``fn(item)`` for every item, up to ``concurrency`` at once; results in input order.

    Args:
        fn: one call (it may raise :class:`LLMCancelled` when ``cancel`` is set).
        items: the inputs.
        concurrency: calls at once (1 runs them one after another in this thread).
        cancel: set it to stop: no new call starts; calls in flight see it themselves.
        on_progress: called with ``(finished, len(items))`` after each call (from this thread).

    Returns:
        A :class:`PoolResult`; ``results`` is the longest finished prefix of the input order.
    """
    out: PoolResult[R] = PoolResult()
    stop = cancel or threading.Event()
    total = len(items)
    if concurrency <= 1 or total <= 1:
        for item in items:
            if stop.is_set():
                out.cancelled = True
                break
            try:
                out.results.append(fn(item))
            except LLMCancelled:
                out.cancelled = True
                break
            except Exception as exc:  # noqa: BLE001 - handed to the caller in input order
                out.error = exc
                break
            out.finished += 1
            if on_progress is not None:
                on_progress(out.finished, total)
        return out
    done: dict[int, R] = {}
    failed: dict[int, BaseException] = {}
    halt = threading.Event()  # set on the first failure: start nothing more

    def call(i: int) -> R:
        if stop.is_set() or halt.is_set():
            raise LLMCancelled("cancelled")
        return fn(items[i])

    with ThreadPoolExecutor(max_workers=min(concurrency, total), thread_name_prefix="llm-pool") as pool:
        pending: dict[Future, int] = {pool.submit(call, i): i for i in range(total)}
        while pending:
            finished, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            if stop.is_set() or halt.is_set():
                for f in pending:
                    f.cancel()
            for f in finished:
                i = pending.pop(f)
                try:
                    done[i] = f.result()
                except LLMCancelled as exc:
                    failed[i] = exc
                except Exception as exc:  # noqa: BLE001
                    failed[i] = exc
                    halt.set()
                else:
                    out.finished += 1
                    if on_progress is not None:
                        on_progress(out.finished, total)
            for f in [f for f in pending if f.cancelled()]:
                failed[pending.pop(f)] = LLMCancelled("cancelled")
    for i in range(total):
        if i not in done:
            break
        out.results.append(done[i])
    if len(out.results) < total:
        errors = [failed[j] for j in sorted(failed) if not isinstance(failed[j], LLMCancelled)]
        out.error = errors[0] if errors else None
        out.cancelled = stop.is_set()
    return out
