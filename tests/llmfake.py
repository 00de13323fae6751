"""A loopback server that speaks the chat completions API, for the LLM tests.

openai 3.x sends through httpx2, which respx does not see, so the fake is a real HTTP server
on 127.0.0.1 (pytest-httpserver) and the real ``openai`` client talks to it. The fixtures
``llm_http_server`` and ``fake_llm`` (in ``conftest.py``) hand out a :class:`FakeChat`.
"""

from __future__ import annotations

import json
import re
import threading

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response


def completion(content: str | None, *, refusal: str | None = None, finish: str = "stop",
               usage: tuple[int, int] = (11, 7)) -> Response:
    """A 200 chat completion whose message content is ``content``."""
    message: dict = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": usage[0] + usage[1]}}
    return Response(json.dumps(body), status=200, content_type="application/json")


def status(code: int, message: str = "error", headers: dict | None = None) -> Response:
    """An error answer in OpenAI's shape."""
    return Response(json.dumps({"error": {"message": message, "type": "error"}}), status=code,
                    headers=headers or {}, content_type="application/json")


class InFlight:
    """Counts the requests in flight in a fake reply (``with in_flight: ...``) and holds each one
    until ``together`` are in flight at once, so a test of concurrent calls sees them overlap on
    a loaded machine too. ``most`` is the most requests in flight at once. The hold gives up after
    ``wait_s`` seconds (a guard against a hang when the calls do not overlap: the request then
    goes on and ``most`` says so)."""

    def __init__(self, together: int = 1, wait_s: float = 30.0):
        self.together, self.wait_s = together, wait_s
        self.now = self.most = 0
        self._lock = threading.Lock()
        self._enough = threading.Event()

    def __enter__(self) -> "InFlight":
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
            if self.now >= self.together:
                self._enough.set()
        self._enough.wait(self.wait_s)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.now -= 1


class FakeChat:
    """A scripted ``POST /v1/chat/completions`` on a threaded loopback server.

    ``script`` is consumed one step per request; a step is a content string, a dict (sent as
    JSON content), a werkzeug ``Response``, or a callable ``(body) -> step``. When the script
    is empty, ``default`` answers (a 500 when None). Every request body and its headers are
    recorded in ``requests`` / ``headers``.
    """

    def __init__(self, server: HTTPServer):
        self.server = server
        self.script: list = []
        self.default = None
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self)

    @property
    def base_url(self) -> str:
        return self.server.url_for("/v1")

    def __call__(self, request: Request) -> Response:
        body = request.get_json(force=True)
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            step = self.script.pop(0) if self.script else self.default
        while callable(step) and not isinstance(step, Response):
            step = step(body)
        if step is None:
            return status(500, "no scripted reply")
        if isinstance(step, Response):
            return step
        if isinstance(step, dict):
            return completion(json.dumps(as_numbered(body, step)))
        return completion(step)


_NUMBERED_LINE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def as_numbered(body: dict, step: dict) -> dict:
    """A scripted quote-mode pair answered in the request's own mode: for a numbered-mode
    request (its system prompt asks for ``first_sentence``), the quote becomes the range of
    the numbered sentences that hold it (an out-of-range 9999 when none does), so one script
    serves both generation modes. Other steps are returned as they are."""
    messages = body.get("messages") or []
    if ("supporting_passage" not in step or not messages
            or "first_sentence" not in str(messages[0].get("content", ""))):
        return step
    user = str(messages[1].get("content", "")) if len(messages) > 1 else ""
    lines = [(int(n), text) for n, text in _NUMBERED_LINE.findall(user)]
    quote = " ".join(str(step["supporting_passage"]).split())
    first = last = 9999
    best = None
    for i in range(len(lines)):
        joined = ""
        for j in range(i, len(lines)):
            joined = (joined + " " + lines[j][1]).strip()
            if quote and quote in joined:
                if best is None or j - i < best[1] - best[0]:
                    best = (i, j)
                break
            if len(joined) > len(quote) + 2000:
                break
    if best is not None:
        first, last = lines[best[0]][0], lines[best[1]][0]
    out = {k: v for k, v in step.items() if k != "supporting_passage"}
    out.update(first_sentence=first, last_sentence=last)
    return out
