"""LLM configuration, response cache, chat client (retries, cancel, errors), JSON parsing and
the run estimate, against a loopback server that speaks the chat completions API
(``llmfake.FakeChat``; fixtures ``fake_llm`` and ``llm_http_server`` in ``conftest.py``).
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from email.utils import formatdate

import pytest
from conftest import fake_secret
from llmfake import FakeChat, completion, status
from werkzeug import Response

from mtcb_curate.llm import config as llm_config
from mtcb_curate.llm.cache import CACHE_NAME, ResponseCache, request_key
from mtcb_curate.llm.client import (ChatClient, ChatRequest, RetryNotice, backoff_delay,
                                    parse_retry_after)
from mtcb_curate.llm.config import LLMConfig, read_llm_table, resolve_config, safe_url
from mtcb_curate.llm.errors import (LLMCancelled, LLMConfigError, LLMError, LLMGaveUp,
                                    LLMUnavailable)
from mtcb_curate.llm.estimate import (CONFIRM_ABOVE_CALLS, RunEstimate, count_message_tokens,
                                      estimate_run)
from mtcb_curate.llm.parsing import MalformedJSON, extract_json

SECRET = fake_secret("llm-key")


# --- the fake chat completions server -------------------------------------------------------

def make_config(fake: FakeChat, **kw) -> LLMConfig:
    """A config for the fake with tiny backoff (tests stay fast) and no jitter."""
    values = dict(timeout_s=5.0, max_retries=3, backoff_base_s=0.001, backoff_cap_s=0.01, backoff_jitter=0.0)
    values.update(kw)
    model = values.pop("model", "fake-model")
    return resolve_config(base_url=fake.base_url, api_key=SECRET, model=model, env={}, **values)


def user(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- configuration ----------------------------------------------------------------------------

def test_options_win_over_environment_and_config_table():
    env = {"OPENAI_API_KEY": "env-key", "OPENAI_BASE_URL": "http://env-host:1/v1"}
    table = {"base_url": "http://table-host:2/v1", "model": "table-model", "timeout_s": 7}
    cfg = resolve_config(env=env, table=table)
    assert (cfg.base_url, cfg.model, cfg.api_key, cfg.key_source) == (
        "http://env-host:1/v1", "table-model", "env-key", "OPENAI_API_KEY")
    assert cfg.timeout_s == 7
    cfg = resolve_config(env=env, table=table, base_url="http://opt:3/v1/", model="opt-model", api_key="opt-key")
    assert (cfg.base_url, cfg.model, cfg.api_key, cfg.key_source) == ("http://opt:3/v1", "opt-model", "opt-key", "option")
    assert resolve_config(env={"OPENAI_API_KEY": "k"}, table={}).base_url == llm_config.DEFAULT_BASE_URL


def test_missing_key_for_openai_is_one_clear_error_and_local_servers_get_a_placeholder():
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY") as exc:
        resolve_config(env={}, table={})
    assert isinstance(exc.value, LLMUnavailable) and "\n" not in str(exc.value)
    cfg = resolve_config(env={}, table={"base_url": "http://127.0.0.1:8080/v1"})
    assert cfg.key_is_placeholder and cfg.api_key == llm_config.PLACEHOLDER_KEY
    assert "placeholder" in cfg.describe()
    cfg = resolve_config(env={"MY_KEY": SECRET}, table={"api_key_env": "MY_KEY"})
    assert cfg.api_key == SECRET and not cfg.key_is_placeholder and SECRET not in cfg.describe()


def test_the_key_is_never_in_repr_and_never_read_from_the_config_file():
    cfg = resolve_config(env={"OPENAI_API_KEY": SECRET}, table={})
    assert SECRET not in repr(cfg) and SECRET not in str(cfg)
    with pytest.raises(LLMConfigError, match="not read from config.toml") as exc:
        resolve_config(env={}, table={"api_key": SECRET})
    assert SECRET not in str(exc.value)


@pytest.mark.parametrize("table, match", [
    ({"modle": "x"}, "unknown setting 'modle'"),
    ({"timeout_s": "fast"}, "wrong type"),
    ({"json_mode": 1}, "wrong type"),
    ({"max_retries": -1}, "must not be negative"),
    ({"base_url": "127.0.0.1:8080"}, "http"),
])
def test_bad_config_values_are_refused(table, match):
    with pytest.raises(LLMConfigError, match=match):
        resolve_config(env={"OPENAI_API_KEY": "k"}, table=table)


def test_llm_table_is_read_from_the_config_file(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text('[keys]\naccept = "y"\n[llm]\nmodel = "m1"\nprice_input_per_1m = 0.5\n', encoding="utf-8")
    assert read_llm_table(path) == {"model": "m1", "price_input_per_1m": 0.5}
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(path))
    assert read_llm_table() == {"model": "m1", "price_input_per_1m": 0.5}
    assert read_llm_table(tmp_path / "absent.toml") == {}
    path.write_text("[llm\n", encoding="utf-8")
    with pytest.raises(LLMConfigError, match="not a valid config file"):
        read_llm_table(path)


def test_safe_url_drops_credentials():
    assert safe_url("http://user:pw@host:8080/v1") == "http://host:8080/v1"
    assert safe_url("http://host/v1") == "http://host/v1"


# --- backoff ----------------------------------------------------------------------------------

def test_backoff_grows_exponentially_up_to_the_cap():
    cfg = LLMConfig(backoff_base_s=1.0, backoff_factor=2.0, backoff_cap_s=10.0, backoff_jitter=0.0)
    assert [backoff_delay(r, cfg) for r in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_backoff_jitter_stays_within_its_band_and_the_cap():
    cfg = LLMConfig(backoff_base_s=1.0, backoff_factor=2.0, backoff_cap_s=5.0, backoff_jitter=0.25)
    rng = random.Random(7)
    for r in range(1, 8):
        plain = min(5.0, 2.0 ** (r - 1))
        d = backoff_delay(r, cfg, rng=rng)
        assert plain * 0.75 <= d <= min(plain * 1.25, 5.0)


def test_retry_after_is_honoured_and_capped():
    cfg = LLMConfig(backoff_base_s=1.0, retry_after_max_s=30.0)
    assert backoff_delay(1, cfg, retry_after_s=12.5) == 12.5
    assert backoff_delay(1, cfg, retry_after_s=900) == 30.0
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = time.time()
    assert 19 <= parse_retry_after({"retry-after": formatdate(now + 20, usegmt=True)}, now=now) <= 21
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_retry_notice_reads_like_the_screen_line():
    assert str(RetryNotice(2, 5, 4.0, "429 rate limited")) == "retry 2/5 in 4 s: 429 rate limited"
    assert str(RetryNotice(1, 3, 0.25, "500 server error")) == "retry 1/3 in 0.25 s: 500 server error"


# --- parsing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"question": "Q", "answer": "A"}',
    'Here is the pair:\n```json\n{"question": "Q", "answer": "A"}\n```\nHope it helps.',
    '```\n{"question": "Q", "answer": "A"}\n```',
    'Sure! {"question": "Q", "answer": "A"} Anything else?',
    '<think>maybe {"question": "wrong"}</think>\n{"question": "Q", "answer": "A"}',
    '\ufeff  {"question": "Q", "answer": "A"}  ',
])
def test_json_is_found_in_fences_and_prose(text):
    assert extract_json(text) == {"question": "Q", "answer": "A"}


def test_a_list_is_returned_when_no_object_is_there():
    assert extract_json("Keep these: [0, 2, 3].") == [0, 2, 3]


@pytest.mark.parametrize("text", ["", "   ", "no json here", '{"question": "Q", "answer": ', "```json\n{bad}\n```"])
def test_malformed_json_raises(text):
    with pytest.raises(MalformedJSON):
        extract_json(text)


# --- the client -------------------------------------------------------------------------------

def test_a_valid_answer_comes_back_with_usage_and_the_request_is_well_formed(fake_llm):
    fake_llm.script = ['{"ok": true}']
    client = ChatClient(make_config(fake_llm))
    result = client.complete(ChatRequest.of([{"role": "user", "content": "hi"}], {"temperature": 0.5}))
    assert (result.text, result.problem, result.cached) == ('{"ok": true}', None, False)
    assert (result.prompt_tokens, result.completion_tokens) == (11, 7)
    (body,) = fake_llm.requests
    assert body["model"] == "fake-model" and body["temperature"] == 0.5
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["response_format"] == {"type": "json_object"}
    assert fake_llm.headers[0]["Authorization"] == f"Bearer {SECRET}"


def test_json_mode_off_sends_no_response_format(fake_llm):
    fake_llm.script = ["{}"]
    ChatClient(make_config(fake_llm, json_mode=False)).complete(user("hi"))
    assert "response_format" not in fake_llm.requests[0]


def test_429_then_success_is_retried_and_reported(fake_llm):
    fake_llm.script = [status(429, "slow down"), status(429, "slow down"), "{}"]
    notices: list[RetryNotice] = []
    result = ChatClient(make_config(fake_llm, max_retries=5)).complete(user("hi"), on_retry=notices.append)
    assert result.text == "{}"
    assert len(fake_llm.requests) == 3
    assert [(n.retry, n.max_retries, n.reason) for n in notices] == [(1, 5, "429 rate limited"), (2, 5, "429 rate limited")]
    assert notices[1].delay_s > notices[0].delay_s  # exponential (no jitter here)


def test_retry_after_from_the_server_replaces_the_backoff(fake_llm):
    fake_llm.script = [status(429, "slow down", {"Retry-After": "0"}), status(503, "busy", {"retry-after-ms": "20"}), "{}"]
    notices: list[RetryNotice] = []
    # The configured backoff would wait 30 s: the server's 0 s and 20 ms are used instead.
    ChatClient(make_config(fake_llm, backoff_base_s=30.0, backoff_cap_s=60.0)).complete(user("hi"), on_retry=notices.append)
    assert [n.delay_s for n in notices] == [0.0, 0.02]
    assert notices[1].reason == "503 server error"


def test_500_until_giving_up(fake_llm):
    fake_llm.default = status(500, "boom")
    notices: list[RetryNotice] = []
    with pytest.raises(LLMGaveUp) as exc:
        ChatClient(make_config(fake_llm, max_retries=2)).complete(user("hi"), on_retry=notices.append)
    assert len(fake_llm.requests) == 3 and exc.value.attempts == 3
    assert "500 server error" in str(exc.value) and isinstance(exc.value, LLMUnavailable)
    assert [n.retry for n in notices] == [1, 2]


def test_quota_exhausted_429_is_not_retried(fake_llm):
    fake_llm.default = Response(json.dumps({"error": {"message": "You exceeded your current quota",
                                                      "type": "insufficient_quota", "code": "insufficient_quota"}}),
                                status=429, content_type="application/json")
    with pytest.raises(LLMUnavailable, match="no quota"):
        ChatClient(make_config(fake_llm)).complete(user("hi"))
    assert len(fake_llm.requests) == 1


def slow(seconds: float, step):
    def answer(body):
        time.sleep(seconds)
        return step
    return answer


# The timeout leaves a prompt reply time to arrive on a loaded machine; the slow reply comes far
# later than it (a server thread sleeps meanwhile, not the test).
TIMEOUT_S = 2.0


def test_a_timeout_is_retried_then_succeeds(fake_llm):
    fake_llm.script = [slow(5 * TIMEOUT_S, "{}"), '{"second": 1}']
    notices: list[RetryNotice] = []
    result = ChatClient(make_config(fake_llm, timeout_s=TIMEOUT_S)).complete(user("hi"), on_retry=notices.append)
    assert result.text == '{"second": 1}'
    assert [n.reason for n in notices] == ["timed out after 2 s"]


def test_timeouts_until_giving_up(fake_llm):
    fake_llm.default = slow(5 * TIMEOUT_S, "{}")
    with pytest.raises(LLMGaveUp, match="timed out after 2 s"):
        ChatClient(make_config(fake_llm, timeout_s=TIMEOUT_S, max_retries=1)).complete(user("hi"))
    assert len(fake_llm.requests) == 2


def test_cancel_during_a_backoff_stops_at_once(fake_llm):
    fake_llm.default = status(500, "boom")
    cancel = threading.Event()
    # A 60-second backoff: the run must end when cancel is set, not when the wait is over.
    client = ChatClient(make_config(fake_llm, backoff_base_s=60.0, backoff_cap_s=60.0))
    outcome: list[BaseException] = []

    def run():
        try:
            client.complete(user("hi"), cancel=cancel, on_retry=lambda n: cancel.set())
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(20)  # a third of the backoff: still running means the sleep was not woken
    assert not worker.is_alive()
    assert [type(e) for e in outcome] == [LLMCancelled]
    assert len(fake_llm.requests) == 1


def test_a_cancelled_event_sends_nothing(fake_llm):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(LLMCancelled):
        ChatClient(make_config(fake_llm)).complete(user("hi"), cancel=cancel)
    assert fake_llm.requests == []


def test_an_unreachable_server_is_one_clear_error():
    cfg = resolve_config(base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=SECRET, env={},
                         max_retries=3, backoff_base_s=0.001)
    client = ChatClient(cfg)
    with pytest.raises(LLMUnavailable, match="cannot reach the LLM server") as exc:
        client.complete(user("hi"))
    assert "\n" not in str(exc.value) and SECRET not in str(exc.value)
    with pytest.raises(LLMUnavailable, match="cannot reach"):
        client.probe(timeout_s=2)


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_is_unavailable_and_the_key_never_shows(fake_llm, code):
    # A server that echoes the key in its error text must not leak it into the message.
    fake_llm.default = status(code, f"Incorrect API key provided: {SECRET}")
    with pytest.raises(LLMUnavailable) as exc:
        ChatClient(make_config(fake_llm)).complete(user("hi"))
    assert str(code) in str(exc.value) and SECRET not in str(exc.value)
    assert len(fake_llm.requests) == 1


def test_other_rejections_are_llm_errors_without_the_key(fake_llm):
    fake_llm.default = status(400, f"bad request from key {SECRET}\nsecond line")
    with pytest.raises(LLMError) as exc:
        ChatClient(make_config(fake_llm)).complete(user("hi"))
    assert not isinstance(exc.value, LLMUnavailable)
    assert "400" in str(exc.value) and SECRET not in str(exc.value) and "\n" not in str(exc.value)
    fake_llm.default = status(404, "model not found")
    with pytest.raises(LLMUnavailable, match="fake-model"):
        ChatClient(make_config(fake_llm)).complete(user("hi"))


def test_refusals_and_empty_replies_are_reported_not_raised(fake_llm):
    fake_llm.script = [completion(None, refusal="I can't help with that."), completion(""),
                       completion(None, finish="content_filter")]
    client = ChatClient(make_config(fake_llm))
    assert "refused" in client.complete(user("a")).problem
    assert "empty" in client.complete(user("b")).problem
    assert "content filter" in client.complete(user("c")).problem


@pytest.mark.parametrize("body, content_type", [("<html>gateway</html>", "text/html"),
                                                ("not json", "application/json")])
def test_an_answer_that_is_not_a_chat_completion_is_an_llm_error(fake_llm, body, content_type):
    fake_llm.default = Response(body, content_type=content_type)
    with pytest.raises(LLMError, match="not a chat completion"):
        ChatClient(make_config(fake_llm)).complete(user("hi"))


def test_an_answer_without_choices_is_not_a_chat_completion_and_not_cached(fake_llm, tmp_path):
    fake_llm.script = [Response('{"choices": []}', content_type="application/json"),
                       Response('{"foo": 1}', content_type="application/json"), "{}"]
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm), cache)
        for _ in range(2):
            with pytest.raises(LLMError, match="not a chat completion"):
                client.complete(user("hi"))
        assert client.complete(user("hi")).text == "{}"
        assert len(cache) == 0
    assert len(fake_llm.requests) == 3


def test_probe_lists_models_and_tolerates_servers_without_the_endpoint(fake_llm):
    fake_llm.server.expect_request("/v1/models", method="GET").respond_with_json(
        {"object": "list", "data": [{"id": "m1", "object": "model", "created": 0, "owned_by": "x"}]})
    assert ChatClient(make_config(fake_llm)).probe() == ["m1"]


def test_probe_reports_a_refused_key(fake_llm):
    fake_llm.server.expect_request("/v1/models", method="GET").respond_with_response(status(401, SECRET))
    with pytest.raises(LLMUnavailable, match="401") as exc:
        ChatClient(make_config(fake_llm)).probe()
    assert SECRET not in str(exc.value)


# --- the cache --------------------------------------------------------------------------------

def used(client, request):
    """A reply its caller used: completed, then kept in the cache."""
    result = client.complete(request)
    client.keep(result)
    return result


def test_a_rerun_is_answered_from_the_cache_without_reaching_the_server(fake_llm, tmp_path):
    fake_llm.script = ['{"n": 1}']
    cfg = make_config(fake_llm)
    with ResponseCache.in_workspace(tmp_path / "ws") as cache:
        first = used(ChatClient(cfg, cache), user("hi"))
    assert (tmp_path / "ws" / CACHE_NAME).is_file()
    with ResponseCache.in_workspace(tmp_path / "ws") as cache:  # a new session
        second = ChatClient(cfg, cache).complete(user("hi"))
        assert len(cache) == 1 and cache.usage() == (11, 7)
    assert len(fake_llm.requests) == 1
    assert (second.text, second.cached, second.key) == (first.text, True, first.key)


def test_tag_model_and_params_are_part_of_the_key(fake_llm, tmp_path):
    fake_llm.default = "{}"
    cfg = make_config(fake_llm)
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(cfg, cache)
        msgs = [{"role": "user", "content": "hi"}]
        used(client, ChatRequest.of(msgs))
        used(client, ChatRequest.of(msgs, tag="sample=1"))
        used(client, ChatRequest.of(msgs, {"temperature": 0.1}))
        used(ChatClient(make_config(fake_llm, model="other"), cache), ChatRequest.of(msgs))
        used(client, ChatRequest.of(msgs, tag="sample=1"))  # a repeat: cached
        assert len(cache) == 4
    assert len(fake_llm.requests) == 4
    k = request_key("m", msgs, {"a": 1, "b": 2})
    assert k == request_key("m", msgs, {"b": 2, "a": 1}) and k != request_key("m", msgs, {"a": 1, "b": 2}, "t")


def test_errors_are_not_cached(fake_llm, tmp_path):
    fake_llm.script = [status(500), '{"ok": 1}']
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        with pytest.raises(LLMGaveUp):
            ChatClient(make_config(fake_llm, max_retries=0), cache).complete(user("hi"))
        assert len(cache) == 0
        assert ChatClient(make_config(fake_llm, max_retries=0), cache).complete(user("hi")).text == '{"ok": 1}'


def test_the_cache_stores_request_and_response_but_never_the_key(fake_llm, tmp_path):
    fake_llm.script = ['{"answer": "stored"}']
    cfg = resolve_config(base_url=fake_llm.base_url.replace("http://", "http://alice:pw123@"), api_key=SECRET,
                         model="fake-model", env={})
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        result = used(ChatClient(cfg, cache), user("hello"))
        stored = cache.get(result.key)
    assert stored.request["messages"] == [{"role": "user", "content": "hello"}]
    assert stored.response["choices"][0]["message"]["content"] == '{"answer": "stored"}'
    assert stored.model == "fake-model" and "pw123" not in stored.server
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"stored" in blob  # the files were read (WAL included)
    assert SECRET.encode() not in blob and b"pw123" not in blob


# --- the estimate -----------------------------------------------------------------------------

def test_estimate_counts_tokens_calls_and_cost():
    reqs = [ChatRequest.of([{"role": "system", "content": "rules"}, {"role": "user", "content": f"text {i}"}])
            for i in range(12)]
    per_call = count_message_tokens(reqs[0].messages)
    assert per_call > 6  # content plus 3 per message plus 3 for the reply
    cfg = LLMConfig(price_input_per_1m=2.0, price_output_per_1m=8.0)
    est = estimate_run(reqs, cfg, output_tokens=100, retries_per_call=3)
    assert (est.calls, est.max_calls, est.input_tokens, est.output_tokens) == (12, 48, 12 * per_call, 1200)
    assert est.cost_usd == pytest.approx(12 * per_call * 2.0 / 1e6 + 1200 * 8.0 / 1e6)
    assert est.needs_confirmation and "up to 48 with retries" in est.summary()
    unknown = estimate_run(reqs[:CONFIRM_ABOVE_CALLS], LLMConfig(), output_tokens=100)
    assert unknown.cost_usd is None and "unknown" in unknown.summary() and not unknown.needs_confirmation


def test_estimate_counts_cached_requests_as_free(fake_llm, tmp_path):
    fake_llm.default = "{}"
    reqs = [user(f"question {i}") for i in range(12)]
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm), cache)
        for r in reqs[:5]:
            used(client, r)
        est = estimate_run(reqs, client.config, output_tokens=10, client=client)
    assert (est.calls, est.cached_calls, est.paid_calls) == (12, 5, 7)
    assert est.input_tokens == sum(count_message_tokens(r.messages) for r in reqs[5:])
    assert not est.needs_confirmation and "5 more from the cache" in est.summary()
    assert isinstance(est, RunEstimate)


def test_a_reply_with_a_real_line_break_inside_a_string_is_read_as_that_line_break():
    """SmolLM2-135M under llama.cpp's JSON grammar wrote a multi-line quote with a literal
    newline: strict JSON refuses it, but the quote is the window's text."""
    from mtcb_curate.llm.parsing import extract_json

    reply = '{"question": "What were revenues?", "answer": "$5 million",\n "supporting_passage": "Revenues were\n$5 million\tin 2022."}'
    assert extract_json(reply)["supporting_passage"] == "Revenues were\n$5 million\tin 2022."
    assert extract_json("Here: " + reply + " done")["answer"] == "$5 million"
