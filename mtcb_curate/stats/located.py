"""Per-pair figures of the statistics, cached on disk so that ``stats`` does not verify and
tokenize every passage again on each run (verifying 1,331 ficha passages costs about 2 s,
100,000 pairs minutes).

One JSON file per workspace (:data:`CACHE_NAME` in the window cache folder):
``{"corpus": <corpus digest>, "entries": {<pair digest>: [verdict, start, tokens, form, type]}}``:

- the corpus digest is the sha1 of every document's key and text (:func:`corpus_digest`): a
  verdict also depends on the OTHER documents (``elsewhere``), so any change to the corpus
  drops every entry;
- the pair digest is the sha1 of the document key, ``chunk_index``, passage, question and
  answer (:func:`pair_digest`): an edit makes a new entry;
- ``verdict`` is ``verify.Verdict``'s value (exact and normalized search, no fuzzy step),
  ``start`` the located passage's character offset (-1: not located), ``tokens`` the
  passage's tokens, ``form`` / ``type`` the question's (``stats.questions``).

A file that cannot be read, or is of another corpus, counts as empty; one that cannot be
written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: File name of the cache inside the window cache folder.
CACHE_NAME = "located.json"

#: One entry: (verdict, start or -1, tokens, form, type).
Entry = tuple[str, int, int, str, str]


def corpus_digest(documents: Mapping[str, Any]) -> str:
    """sha1 hex of every document's key and text (``documents``: key -> object with ``.text``)."""
    h = hashlib.sha1()
    for key in sorted(documents):
        h.update(key.encode("utf-8", "surrogatepass") + b"\0")
        h.update(documents[key].text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def pair_digest(doc_key: str, chunk_index: int | None, passage: str, question: str, answer: str) -> str:
    """sha1 hex (first 24 digits) of what a pair's entry depends on besides the corpus."""
    blob = "\0".join((doc_key, "" if chunk_index is None else str(chunk_index), passage, question, answer))
    return hashlib.sha1(blob.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def load(path: Path | None, corpus: str) -> dict[str, Entry]:
    """The entries of the cache file ``path`` made for ``corpus``, or {} (no file, unreadable,
    another corpus)."""
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("corpus") != corpus:
            return {}
        return {k: (str(v[0]), int(v[1]), int(v[2]), str(v[3]), str(v[4])) for k, v in data["entries"].items()}
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return {}


def save(path: Path | None, corpus: str, entries: Mapping[str, Entry]) -> None:
    """Write ``entries`` for ``corpus`` to ``path`` atomically; errors are ignored."""
    if path is None:
        return
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"corpus": corpus, "entries": entries}, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
