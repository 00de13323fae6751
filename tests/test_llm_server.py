"""Real servers: structured output negotiated and remembered per server and model,
the [llm] timeout and context_tokens settings, windows cut to fit the model's context."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS
from llmfake import status
from test_llm_client import make_config

from mtcb_curate.dataset import tokens
from mtcb_curate.dataset.model import Document
from mtcb_curate.llm import client as clientmod
from mtcb_curate.llm import generate as gen
from mtcb_curate.llm.cache import ResponseCache
from mtcb_curate.llm.client import ChatClient
from mtcb_curate.llm.config import resolve_config
from mtcb_curate.llm.errors import LLMConfigError

ALPHA = Document("AAA", CORPUS[0]["text"], 0)
GOOD = {"question": "What was Alpha's revenue in 2022?", "answer": "$10 million.",
        "supporting_passage": "Revenue was $10 million in 2022."}


@pytest.fixture(autouse=True)
def no_remembered_formats(monkeypatch):
    monkeypatch.setattr(clientmod, "_FORMATS", {})


def llama_cpp_like(body: dict):
    """Answers 500 to json_schema (as llama.cpp's server does), accepts the rest."""
    if body.get("response_format", {}).get("type") == "json_schema":
        return status(500, "JSON schema conversion failed: unsupported")
    return GOOD


def run(client) -> gen.Candidate | None:
    (window,) = tokens.windows(ALPHA.text)
    cand, _ = gen.generate_for_window(client, doc_key="AAA", doc_text=ALPHA.text, window=window)
    return cand


def test_a_server_refusing_json_schema_with_500_gets_json_object_with_the_schema_and_it_is_remembered(fake_llm, tmp_path):
    fake_llm.default = llama_cpp_like
    with ResponseCache(tmp_path / "ws" / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm, max_retries=0), cache)
        cand = run(client)
        assert cand is not None and cand.passage == GOOD["supporting_passage"]
        sent = [b.get("response_format", {}).get("type") for b in fake_llm.requests]
        assert sent == ["json_schema", "json_object"]  # the refusal was not a retry (max_retries=0)
        assert fake_llm.requests[0]["response_format"]["json_schema"]["schema"]["required"] == [
            "question", "answer", "supporting_passage"]
        # llama.cpp's form: the same schema inside json_object (the server makes it a grammar)
        assert fake_llm.requests[1]["response_format"]["schema"] == fake_llm.requests[0]["response_format"]["json_schema"]["schema"]
        assert client.known_format() == "json_object_schema"
    saved = json.loads((tmp_path / "ws" / clientmod.FORMATS_NAME).read_text())
    assert saved == {f"{fake_llm.base_url} fake-model": "json_object_schema"}
    # A later run (a new process: nothing in memory) starts from the file: no json_schema again.
    clientmod._FORMATS.clear()
    with ResponseCache(tmp_path / "ws" / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm, max_retries=0), cache)
        client.complete(gen.ChatRequest.of([{"role": "user", "content": "another"}],
                                           schema={"name": "x", "schema": {"type": "object"}}))
    assert fake_llm.requests[-1]["response_format"] == {"type": "json_object", "schema": {"type": "object"}}


def test_a_server_refusing_a_schema_inside_json_object_gets_plain_json_object(fake_llm):
    def strict(body):  # knows only OpenAI's json_object: an unknown "schema" field is a 400
        rf = body.get("response_format", {})
        if rf.get("type") == "json_schema" or "schema" in rf:
            return status(400, "Invalid response_format: unrecognized field 'schema'")
        return GOOD

    fake_llm.default = strict
    client = ChatClient(make_config(fake_llm, model="strict-model", max_retries=0))
    assert run(client) is not None
    assert [b["response_format"] for b in fake_llm.requests][1:] == [
        {"type": "json_object", "schema": fake_llm.requests[0]["response_format"]["json_schema"]["schema"]},
        {"type": "json_object"}]
    assert client.known_format() == "json_object"


def test_a_server_that_accepts_json_schema_keeps_it(fake_llm):
    fake_llm.default = GOOD
    client = ChatClient(make_config(fake_llm, model="schema-model"))
    assert run(client) is not None
    assert [b["response_format"]["type"] for b in fake_llm.requests] == ["json_schema"]
    assert client.known_format() == "json_schema"


def test_plain_text_is_the_last_resort_and_a_fixed_format_is_sent_as_named(fake_llm):
    def picky(body):
        if "response_format" in body:
            return status(400, "response_format is not supported by this model")
        return "Here it is: " + json.dumps(GOOD)

    fake_llm.default = picky
    assert run(ChatClient(make_config(fake_llm, model="text-model", max_retries=0))) is not None
    assert ["response_format" in b for b in fake_llm.requests] == [True, True, True, False]
    fake_llm.requests.clear()
    fake_llm.default = GOOD
    run(ChatClient(make_config(fake_llm, model="fixed-model", structured_output="json_object")))
    assert [b["response_format"] for b in fake_llm.requests] == [{"type": "json_object"}]


def test_a_context_length_400_is_not_taken_for_a_format_refusal(fake_llm):
    from mtcb_curate.llm.errors import LLMError

    fake_llm.default = status(400, "the request exceeds the available context size (8192 tokens), "
                                   "response_format json_schema")
    with pytest.raises(LLMError):
        run(ChatClient(make_config(fake_llm, model="small-model", max_retries=0)))
    assert len(fake_llm.requests) == 1


def test_the_llm_table_takes_timeout_context_tokens_and_structured_output():
    cfg = resolve_config(base_url="http://127.0.0.1:1/v1", env={},
                         table={"timeout": 600, "context_tokens": 8192, "structured_output": "text"})
    assert (cfg.timeout_s, cfg.context_tokens, cfg.structured_output) == (600, 8192, "text")
    with pytest.raises(LLMConfigError, match="structured_output"):
        resolve_config(base_url="http://127.0.0.1:1/v1", env={}, table={"structured_output": "xml"})
    with pytest.raises(LLMConfigError, match="context_tokens"):
        resolve_config(base_url="http://127.0.0.1:1/v1", env={}, table={"context_tokens": 10})


def test_a_window_longer_than_the_context_is_cut_to_fit_and_keeps_mtcbs_chunk_index(fake_llm):
    # A model with an 8,192-token context refuses an 8,192-token window plus the prompt.
    text = "".join(f"Line {i}: Zeta Corp reported segment figure {i} of {i * 7} dollars.\n" for i in range(1400))
    doc = Document("ZZZ", text, 0)
    ws = tokens.windows(text)
    seen = []

    def model(body):
        user = body["messages"][1]["content"]
        window = user.split("<<<DOCUMENT WINDOW\n", 1)[1].rsplit("\nDOCUMENT WINDOW>>>", 1)[0]
        seen.append(tokens.count_tokens(window))
        line = [ln for ln in window.splitlines() if ln.startswith("Line ")][1]
        return {"question": f"What figure does {line[:12]} of Zeta Corp report?", "answer": "A figure.",
                "supporting_passage": line}

    fake_llm.default = model
    client = ChatClient(make_config(fake_llm, model="ctx-model", context_tokens=4096))
    target = text[ws[1].end - 3000: ws[1].end - 2900]  # near the end of window 1, past a plain cut
    from mtcb_curate.dataset.model import QAPair

    result = gen.regenerate(client, QAPair(0, "Q?", "A", target, "ZZZ", None), doc, n_candidates=1)
    assert seen and max(seen) <= 4096 - gen.REPLY_TOKENS
    (cand,) = result.candidates
    assert cand.chunk_index == ws[1].index == 1 and text[cand.start:cand.end] == cand.passage
    assert any("cut to" in n and "context_tokens = 4,096" in n for n in result.window_notes)
    cut = gen.fit_window(text, ws[1], 2000, (text.find(target), text.find(target) + len(target)))
    assert cut.index == 1 and cut.start <= text.find(target) and text.find(target) + len(target) <= cut.end
    assert tokens.count_tokens(text[cut.start:cut.end]) <= 2001
    assert gen.fit_window(text, ws[1], 9000) == ws[1]


# -- streaming --------------------------------------------------------------------------------


def sse(pieces, state: dict, *, first_delay: float = 0.0, delay: float = 0.0):
    """A werkzeug streamed chat completion sending ``pieces`` as deltas; ``state`` records
    how many were sent, when the first was, and when the generator was closed."""
    import time

    from werkzeug import Response

    def events():
        try:
            if first_delay:
                time.sleep(first_delay)
            for i, piece in enumerate(pieces):
                chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "stream-model",
                         "choices": [{"index": 0, "delta": {"content": piece},
                                      "finish_reason": "stop" if i == len(pieces) - 1 else None}]}
                yield f"data: {json.dumps(chunk)}\n\n"
                state["sent"] = state.get("sent", 0) + 1
                if delay:
                    time.sleep(delay)
            yield "data: [DONE]\n\n"
        finally:
            state["closed"] = True

    return Response(events(), status=200, mimetype="text/event-stream")


def test_a_streamed_reply_is_assembled_counted_and_cached(fake_llm, tmp_path):
    text = json.dumps(GOOD)
    pieces = [text[i:i + 7] for i in range(0, len(text), 7)]
    state: dict = {}
    fake_llm.script = [lambda body: sse(pieces, state)]
    counts: list[int] = []
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = ChatClient(make_config(fake_llm, model="stream-model", stream=True), cache)
        req = gen.ChatRequest.of([{"role": "user", "content": "a pair"}])
        result = client.complete(req, on_stream=counts.append)
        assert json.loads(result.text) == GOOD and result.finish_reason == "stop" and not result.cached
        assert counts == list(range(1, len(pieces) + 1)) and fake_llm.requests[0]["stream"] is True
        assert client.keep(result)
        again = client.complete(req)
        assert again.cached and again.text == result.text and len(fake_llm.requests) == 1


def test_a_streamed_reply_cancelled_midway_closes_the_request(fake_llm):
    import threading

    from mtcb_curate.llm.errors import LLMCancelled

    state: dict = {}
    fake_llm.script = [lambda body: sse(["x"] * 400, state, delay=0.01)]
    cancel = threading.Event()
    client = ChatClient(make_config(fake_llm, model="stream-model", stream=True))
    with pytest.raises(LLMCancelled):
        client.complete(gen.ChatRequest.of([{"role": "user", "content": "hi"}]), cancel=cancel,
                        on_stream=lambda n: cancel.set() if n >= 3 else None)
    for _ in range(500):  # the server notices the closed connection at its next write
        if state.get("closed"):
            break
        threading.Event().wait(0.01)
    assert state.get("closed") and state["sent"] < 400


def test_a_cancel_before_the_connection_is_made_still_closes_it(fake_llm, monkeypatch):
    import threading

    from mtcb_curate.llm.errors import LLMCancelled

    state: dict = {}
    fake_llm.script = [lambda body: sse(["x"] * 3, state, first_delay=1.5)]
    cancel = threading.Event()
    real = clientmod._Sockets.transport

    def late(self, url=""):  # the cancel arrives while the connection is being set up
        cancel.set()
        return real(self, url)

    monkeypatch.setattr(clientmod._Sockets, "transport", late)
    client = ChatClient(make_config(fake_llm, model="stream-model", stream=True, timeout_s=30.0))
    with pytest.raises(LLMCancelled):
        client.complete(gen.ChatRequest.of([{"role": "user", "content": "hi"}]), cancel=cancel)
    assert "sent" not in state


def test_a_cancel_while_waiting_for_the_first_token_closes_the_request(fake_llm):
    import threading

    from mtcb_curate.llm.errors import LLMCancelled

    state: dict = {}
    fake_llm.script = [lambda body: sse(["x"] * 3, state, first_delay=1.5)]
    cancel = threading.Event()
    client = ChatClient(make_config(fake_llm, model="stream-model", stream=True, timeout_s=30.0))
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(LLMCancelled):
        client.complete(gen.ChatRequest.of([{"role": "user", "content": "hi"}]), cancel=cancel)
    assert "sent" not in state  # returned before the server's first token
