"""A JSON value out of a model's reply, which is not always bare JSON.

Replies seen from chat models, in the order tried:

1. bare JSON (what ``response_format={"type": "json_object"}`` gives);
2. a fenced block, ```` ```json ... ``` ```` or ```` ``` ... ``` ````;
3. JSON after leading prose ("Here is the pair: {...}") or before trailing prose: the first
   ``{`` (or ``[``) from which ``json.JSONDecoder.raw_decode`` reads a whole value.

A reasoning model's ``<think>...</think>`` block is removed first, since it may hold braces.
Control characters inside strings (a quote's line break written as a real newline, as small
models under a llama.cpp JSON grammar do) are read as the characters they are
(``strict=False``), not refused.

A reply longer than :data:`MAX_REPLY_CHARS` is not read at all (:class:`ReplyTooLong`).
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
#: Longest reply read (characters). Our bound: a generated pair is at most a 500-character
#: question, a 1,000-character answer and a passage of a few thousand characters
#: (``checklist``), and a semantic-dedup keep-list of a few thousand indices is some 20,000
#: characters; a reply of megabytes is a runaway model, refused before any parsing.
MAX_REPLY_CHARS = 100_000
#: How many ``{`` / ``[`` positions are tried before giving up (bounds the cost on long prose).
_MAX_STARTS = 64


class MalformedJSON(ValueError):
    """The reply holds no JSON object or list; the message says what was seen, on one line."""


class ReplyTooLong(MalformedJSON):
    """The reply is longer than :data:`MAX_REPLY_CHARS`: it was not parsed.

    Attributes:
        chars: the reply's length in characters.
    """

    def __init__(self, chars: int):
        super().__init__(f"the reply has {chars:,} characters, more than the {MAX_REPLY_CHARS:,} read")
        self.chars = chars


def extract_json(text: str) -> dict[str, Any] | list[Any]:
    """The first JSON object (or, failing that, list) in ``text``, by the rules in the module
    docstring. Objects are preferred: a list is returned only when no object can be read.

    Raises:
        ReplyTooLong: ``text`` is longer than :data:`MAX_REPLY_CHARS` (nothing is parsed).
        MalformedJSON: empty text, or no JSON object or list could be read.
    """
    if text and len(text) > MAX_REPLY_CHARS:
        raise ReplyTooLong(len(text))
    cleaned = _THINK.sub("", text or "").strip().lstrip("\ufeff")
    if not cleaned:
        raise MalformedJSON("the reply was empty")
    candidates = [cleaned] + [m.group(1).strip() for m in _FENCE.finditer(cleaned)]
    first_error: str | None = None
    found_list: list[Any] | None = None
    for c in candidates:
        try:
            value = json.loads(c, strict=False)
        except json.JSONDecodeError as exc:
            first_error = first_error or f"{exc.msg} at character {exc.pos}"
            continue
        if isinstance(value, dict):
            return value
        if isinstance(value, list) and found_list is None:
            found_list = value
    decoder = json.JSONDecoder(strict=False)
    starts = [m.start() for m in re.finditer(r"[{\[]", cleaned)][:_MAX_STARTS]
    for i in starts:
        try:
            value, _ = decoder.raw_decode(cleaned, i)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
        if isinstance(value, list) and found_list is None:
            found_list = value
    if found_list is not None:
        return found_list
    if not starts:
        raise MalformedJSON("the reply holds no JSON object")
    raise MalformedJSON(f"the reply is not valid JSON ({first_error or 'no complete object'})")
