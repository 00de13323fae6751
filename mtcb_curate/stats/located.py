"""Per-pair figures of the statistics, cached on disk so that ``stats`` does not verify and
tokenize every passage again on each run (verifying 1,331 ficha passages costs about 2 s,
100,000 pairs minutes).

One Arrow IPC (Feather) file per workspace (:data:`CACHE_NAME` in the statistics cache folder),
with the corpus digest in its schema metadata and one row per pair text seen: ``key`` (uint64),
``verdict``, ``start``, ``tokens``, ``form``, ``type``, ``sentences``:

- the corpus digest (:func:`corpus_digest`) covers every document's key and text: a verdict
  also depends on the OTHER documents (``elsewhere``), so any change to the corpus drops every
  row;
- ``key`` (:func:`pair_keys`) is a 64-bit hash of the document key, ``chunk_index``, passage,
  question and answer (pandas' ``hash_pandas_object``: SipHash with pandas' fixed key, computed
  for all pairs at once): an edit makes a new row; a key from another pandas version simply
  misses;
- ``verdict`` is ``verify.Verdict``'s value (exact and normalized search, no fuzzy step),
  ``start`` the located passage's character offset (-1: not located), ``tokens`` the
  passage's tokens, ``form`` / ``type`` the question's (``stats.questions``), ``sentences``
  the passage's sentences (``stats.density``). A file with other columns (an older version)
  counts as empty.

A file that cannot be read, or is of another corpus, counts as empty; one that cannot be
written is ignored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mtcb_curate.dataset.model import text_digest

#: File name of the cache inside the statistics cache folder.
CACHE_NAME = "located.arrow"
#: The columns besides ``key``.
COLUMNS = ("verdict", "start", "tokens", "form", "type", "sentences")
_META = b"mtcb_curate.corpus"


def corpus_digest(documents: Mapping[str, Any]) -> str:
    """sha1 hex of every document's key and :func:`text_digest` (``documents``: key -> object
    with ``.text``, or ``.data``: its UTF-8 bytes, read instead when present)."""
    h = hashlib.sha1()
    for key in sorted(documents):
        doc = documents[key]
        data = getattr(doc, "data", None)
        h.update(key.encode("utf-8", "surrogatepass") + b"\0"
                 + text_digest(data if isinstance(data, bytes) else doc.text).encode() + b"\0")
    return h.hexdigest()


def pair_keys(doc_keys: Sequence[str], chunk_indexes: Sequence[int | None], passages: Sequence[str],
              questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """uint64 key per pair (the i-th of each sequence) of what its row depends on besides the
    corpus: each column hashed by ``pandas.util.hash_array`` (SipHash, pandas' fixed key), the
    five combined as ``k = k * 1000003 ^ h`` (wrapping)."""
    columns = (doc_keys, ["" if c is None else str(c) for c in chunk_indexes], passages, questions, answers)
    out = np.zeros(len(doc_keys), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in columns:
            out = out * np.uint64(1000003) ^ pd.util.hash_array(np.asarray(col, dtype=object), categorize=False)
    return out


class Cached:
    """The rows of a cache file: ``keys`` (sorted uint64) and the :data:`COLUMNS` as lists in
    the same order."""

    def __init__(self, keys: np.ndarray | None = None, columns: Mapping[str, list] | None = None):
        self.keys = np.zeros(0, dtype=np.uint64) if keys is None else keys
        self.columns = {c: [] for c in COLUMNS} if columns is None else dict(columns)

    def __len__(self) -> int:
        return len(self.keys)

    def lookup(self, keys: np.ndarray) -> dict[str, list]:
        """Per key of ``keys``: each column's value, or None when not cached."""
        if not len(self.keys):
            return {c: [None] * len(keys) for c in COLUMNS}
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        miss = self.keys[pos] != keys
        out = {}
        for c, col in self.columns.items():
            got = np.asarray(col, dtype=object)[pos]
            got[miss] = None
            out[c] = got.tolist()
        return out


def load(path: Path | None, corpus: str) -> Cached:
    """The rows of the cache file ``path`` made for ``corpus``, or none (no file, unreadable,
    another corpus)."""
    if path is None:
        return Cached()
    try:
        import pyarrow.feather as feather

        table = feather.read_table(str(path))
        if (table.schema.metadata or {}).get(_META) != corpus.encode() or table.column_names != ["key", *COLUMNS]:
            return Cached()
        keys = table["key"].to_numpy()
        order = np.argsort(keys, kind="stable")
        columns = {c: table[c].to_pylist() for c in COLUMNS}
        if not bool((order == np.arange(len(order))).all()):
            columns = {c: [v[i] for i in order.tolist()] for c, v in columns.items()}
        return Cached(keys[order], columns)
    except (OSError, ValueError, TypeError, KeyError, ImportError, AttributeError):
        return Cached()
    except Exception:  # noqa: BLE001 - pyarrow's ArrowInvalid on a damaged file: a cache miss
        return Cached()


def save(path: Path | None, corpus: str, old: Cached, keys: np.ndarray, rows: Mapping[str, list]) -> None:
    """Write ``old``'s rows and the new ``rows`` (``keys`` and the :data:`COLUMNS`; a new row
    replaces an old one of the same key) for ``corpus`` to ``path`` atomically (sorted by key);
    errors are ignored."""
    if path is None:
        return
    path = Path(path)
    try:
        import pyarrow as pa
        import pyarrow.feather as feather

        keep = ~np.isin(old.keys, keys) if len(old) else np.zeros(0, dtype=bool)
        kept = np.flatnonzero(keep).tolist()
        all_keys = np.concatenate([old.keys[keep], np.asarray(keys, dtype=np.uint64)])
        uniq, first = np.unique(all_keys[::-1], return_index=True)  # the last row of a key wins
        pick = (len(all_keys) - 1 - first).tolist()
        data = {"key": pa.array(uniq, pa.uint64())}
        for c in COLUMNS:
            values = [old.columns[c][i] for i in kept] + list(rows[c])
            data[c] = pa.array([values[i] for i in pick])
        table = pa.table(data).replace_schema_metadata({_META: corpus.encode()})
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        feather.write_feather(table, str(tmp))
        os.replace(tmp, path)
    except (OSError, ValueError, TypeError, ImportError):
        pass
