"""``llm.pool``: up to N calls at once against the loopback fake, results in input order."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llmfake import InFlight, status  # noqa: E402
from test_llm_client import make_config, user  # noqa: E402

from mtcb_curate.llm.cache import ResponseCache  # noqa: E402
from mtcb_curate.llm.client import ChatClient  # noqa: E402
from mtcb_curate.llm.errors import LLMConfigError, LLMError  # noqa: E402
from mtcb_curate.llm.pool import read_concurrency, run_ordered  # noqa: E402


class Slow:
    """A fake step: answers ``echo N`` after a delay that makes later requests finish first,
    and records the most requests in flight at once."""

    def __init__(self, n: int, unit: float = 0.04, together: int = 1):
        self.n, self.unit = n, unit
        self.in_flight = InFlight(together)  # the delays start once ``together`` requests are in

    @property
    def most(self) -> int:
        return self.in_flight.most

    def __call__(self, body):
        i = int(body["messages"][-1]["content"].split()[-1])
        with self.in_flight:
            time.sleep((self.n - i) * self.unit)
        return f"echo {i}"


def test_out_of_order_replies_come_back_in_input_order(fake_llm):
    slow = Slow(8, together=8)
    fake_llm.default = slow
    client = ChatClient(make_config(fake_llm))
    finish_order: list[str] = []
    lock = threading.Lock()

    def call(i):
        text = client.complete(user(f"ask {i}")).text
        with lock:
            finish_order.append(text)
        return text

    out = run_ordered(call, list(range(8)), concurrency=8)
    assert out.error is None and not out.cancelled and out.finished == 8
    assert out.results == [f"echo {i}" for i in range(8)]
    # The server really answered out of order, several at once.
    assert finish_order != sorted(finish_order) and slow.most > 1


def test_concurrency_one_runs_one_at_a_time(fake_llm):
    slow = Slow(4, unit=0.01)
    fake_llm.default = slow
    client = ChatClient(make_config(fake_llm))
    out = run_ordered(lambda i: client.complete(user(f"ask {i}")).text, list(range(4)), concurrency=1)
    assert out.results == [f"echo {i}" for i in range(4)] and slow.most == 1
    assert [r["messages"][0]["content"] for r in fake_llm.requests] == [f"ask {i}" for i in range(4)]


def test_cancel_then_rerun_pays_no_finished_call_twice(fake_llm, tmp_path):
    fake_llm.default = Slow(12, unit=0.01)
    cache = ResponseCache(tmp_path / "llm.sqlite")
    client = ChatClient(make_config(fake_llm), cache)
    cancel = threading.Event()

    def progress(done, total):
        if done >= 3:
            cancel.set()

    items = list(range(12))
    def used(i, cancel=None):
        result = client.complete(user(f"ask {i}"), cancel=cancel)
        client.keep(result)
        return result.text

    first = run_ordered(lambda i: used(i, cancel), items, concurrency=4, cancel=cancel, on_progress=progress)
    assert first.cancelled and len(first.results) < 12
    assert first.results == [f"echo {i}" for i in range(len(first.results))]
    paid_before = len(fake_llm.requests)
    second = run_ordered(used, items, concurrency=4)
    assert second.results == [f"echo {i}" for i in items]
    sent = [r["messages"][0]["content"] for r in fake_llm.requests]
    # A finished call is never paid twice; a call in flight at the cancel was closed at once
    # (its reply never came) and is sent again.
    assert all(sent.count(f"ask {i}") == 1 for i in range(len(first.results)))
    assert set(sent) == {f"ask {i}" for i in items}
    assert paid_before < 12


def test_first_failure_in_input_order_is_reported_with_the_results_before_it(fake_llm):
    def step(body):
        i = int(body["messages"][-1]["content"].split()[-1])
        if i == 2:
            time.sleep(0.1)
            return status(400, "bad request 2")
        return f"echo {i}"

    fake_llm.default = step
    client = ChatClient(make_config(fake_llm))
    out = run_ordered(lambda i: client.complete(user(f"ask {i}")).text, list(range(6)), concurrency=3)
    assert out.results == ["echo 0", "echo 1"]
    assert isinstance(out.error, LLMError) and "bad request 2" in str(out.error)
    assert not out.cancelled


def test_read_concurrency(tmp_path):
    path = tmp_path / "c.toml"
    assert read_concurrency(path) == 1
    path.write_text('[llm]\nconcurrency = 16\n', encoding="utf-8")
    assert read_concurrency(path) == 16
    for bad in ("0", '"8"', "true", "100000"):
        path.write_text(f"[llm]\nconcurrency = {bad}\n", encoding="utf-8")
        with pytest.raises(LLMConfigError, match="concurrency"):
            read_concurrency(path)


def test_concurrency_is_a_known_llm_setting(tmp_path):
    from mtcb_curate.llm.config import read_llm_table, resolve_config

    path = tmp_path / "c.toml"
    path.write_text('[llm]\nconcurrency = 4\nbase_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    cfg = resolve_config(table=read_llm_table(path), env={})
    assert cfg.base_url == "http://127.0.0.1:9/v1"


def test_dedup_batches_run_concurrently_with_the_same_result(fake_llm):
    import time as _time

    from test_llm_dedup import items_for, numbered, topic_model

    topics = [i // 2 for i in range(200)]
    model = topic_model()
    in_flight = InFlight(together=2)

    def slow(body):
        with in_flight:
            # Earlier batches answer last: replies arrive out of order.
            first = numbered(body)[0][1]
            _time.sleep(0.1 if "topic-0 " in first or first.endswith("topic-0") else 0.01)
        return model(body)

    from mtcb_curate.llm.dedup import semantic_dedup

    fake_llm.default = model
    serial = semantic_dedup(ChatClient(make_config(fake_llm)), items_for(topics))
    fake_llm.requests.clear()
    fake_llm.default = slow
    steps = []
    parallel = semantic_dedup(ChatClient(make_config(fake_llm)), items_for(topics), concurrency=4,
                              on_progress=lambda d, t: steps.append((d, t)))
    assert parallel.clusters == serial.clusters and parallel.kept == serial.kept and parallel.calls == serial.calls
    assert in_flight.most > 1 and len(fake_llm.requests) == serial.calls
    assert [d for d, _ in steps] == sorted(d for d, _ in steps) and steps[-1] == (5, 5)
