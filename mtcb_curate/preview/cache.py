"""Chunks and fitted retrievers cached in the workspace folder, so a second preview is instant.

Files live in ``<workspace>/preview-cache/`` as pickles named by a key: the corpus fingerprint
(sha256 of every document key and text), the chunker spec and the chonkie versions, plus the
retriever's name and library version for an index. A change to any of them is a new key; an
unreadable or stale file is ignored and rebuilt. Writing is best effort (a read-only folder
just means no cache). The files are our own, written by this code: loading them with pickle
trusts the workspace folder as the workspace database itself is trusted.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

FOLDER = "preview-cache"
#: Bump when the pickled layout changes.
FORMAT = 1


def key(*parts: object) -> str:
    """A file-name-safe key for the parts (their repr, hashed)."""
    return hashlib.sha256(repr((FORMAT,) + parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


class PreviewCache:
    """Get and put pickled objects under ``folder`` (None: a cache that keeps nothing)."""

    def __init__(self, folder: Path | None):
        self.folder = Path(folder) / FOLDER if folder is not None else None

    def get(self, name: str):
        if self.folder is None:
            return None
        path = self.folder / f"{name}.pkl"
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception:  # a stale or truncated file: rebuild
            return None

    def put(self, name: str, value) -> bool:
        """Store ``value``; False when the folder cannot be written."""
        if self.folder is None:
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f"{name}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.folder / f"{name}.pkl")
            return True
        except OSError:
            return False
