"""The checklist's work kept on disk between runs, keyed by content hash, so checking again
after a fix costs only what changed.

Three kinds of entry, JSON files under ``<user cache dir>/mtcb-curate/checklist/``
(:func:`default_cache_dir`):

``verified-<corpus>.json``
    One file per corpus (its ``corpus_fingerprint``): per passage, its exact-search verification
    (``verify.PairResult`` without the pair id and the passage), keyed by sha256 of the document
    key, ``chunk_index`` and the passage. A changed passage is a new key; a changed document is
    a new file. Old entries are kept up to three times a run's passages, then dropped.
``answerable.json``
    The ``answerable`` rule's reason (or null: supported) per pair text, keyed by sha256 of the
    question, the answer and the passage; the LLM judge's verdicts are never kept here. Old
    entries are kept up to three times a run's pairs, then dropped.
``loads-<layout>.json``
    A publish layout that loaded with ``datasets.load_dataset``, keyed by the digest of every
    input the tables are built from (``hub.tables.tables_digest``) with the ``datasets`` and
    ``pyarrow`` versions: a hit is not built, written or loaded again. Only passes are kept; a
    failure is loaded again, so its error is always fresh.

Both keys also hold :func:`code_digest` of the modules whose code decides the result (and the
tokenizer's version for token counts), so a changed verifier or check never reads an old
answer. An unreadable, stale or foreign file is ignored and rebuilt; writing is best effort
(a read-only folder means no cache) and atomic (a temporary file renamed over the old one).
The files hold JSON only, never pickles.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, fields
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mtcb_curate
from mtcb_curate.files import atomic_write_bytes, read_json as _read_json, user_cache_folder

if TYPE_CHECKING:
    from mtcb_curate.dataset.model import QAPair
    from mtcb_curate.verify.verdict import PairResult

#: Folder name under the user cache directory.
CACHE_FOLDER = "checklist"
#: Bump when the files' layout changes.
FORMAT = 1
#: The code a pair's verification depends on (paths relative to the package).
VERIFY_CODE = ("verify", "dataset/tokens.py", "dataset/model.py")
#: The code the ``answerable`` rule depends on (with the versions of wordllama and snowballstemmer).
ANSWERABLE_CODE = ("evidence", "checks/questions.py")
#: The code a ``loads`` verdict depends on.
LOADS_CODE = ("hub", "dataset", "checks/loads.py")


def default_cache_dir() -> Path:
    """``<user cache dir>/mtcb-curate/checklist`` (``files.user_cache_folder``)."""
    return user_cache_folder(CACHE_FOLDER)


_CODE: dict[tuple[str, ...], str] = {}


def code_digest(parts: Iterable[str]) -> str:
    """sha256 hex of the source of the given package parts (a folder's ``*.py`` files, or one
    file, relative to the ``mtcb_curate`` package) with the package version and ``FORMAT``;
    computed once per process."""
    parts = tuple(parts)
    got = _CODE.get(parts)
    if got is None:
        root = Path(mtcb_curate.__file__).resolve().parent
        h = hashlib.sha256(f"{FORMAT}\0{mtcb_curate.__version__}".encode())
        for part in parts:
            path = root / part
            for f in sorted(path.glob("*.py")) if path.is_dir() else [path]:
                h.update(f.relative_to(root).as_posix().encode() + b"\0")
                try:
                    h.update(f.read_bytes())
                except OSError:  # no source: never reuse an answer
                    h.update(os.urandom(16))
        got = _CODE[parts] = h.hexdigest()
    return got


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def answerable_stamp() -> str:
    """What every ``answerable`` reason depends on besides the pair's texts: the digest of the
    rule's code (:data:`ANSWERABLE_CODE`) and the installed wordllama and snowballstemmer versions. Reads
    no model (the review app compares it without loading one)."""
    return f"{code_digest(ANSWERABLE_CODE)}:{_version('wordllama')}:{_version('snowballstemmer')}"


def _merged(old: Any, new: dict, keep: int) -> dict:
    """The entries to write: ``old`` (a file's entries, or anything unreadable) with ``new``
    over it while they number at most ``3 * keep + 1000``, else ``new`` alone."""
    return {**old, **new} if isinstance(old, dict) and len(old) + len(new) <= 3 * keep + 1000 else dict(new)


def answerable_key(question: str, answer: str, passage: str) -> str:
    """The key of one pair's texts in ``answerable.json``: sha256 hex (40 characters) of the
    question, the answer and the passage, each length-prefixed."""
    h = hashlib.sha256()
    for part in (question, answer, passage):
        b = part.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()[:40]


def _passage_key(pair: QAPair, passage: str) -> str:
    h = hashlib.sha256()
    for part in (pair.doc_key, "" if pair.chunk_index is None else str(pair.chunk_index), passage):
        b = part.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()[:40]


def _to_json(r: PairResult) -> dict[str, Any]:
    d = asdict(r)
    del d["id"], d["passage"]
    return d


def _from_json(pid: int, passage: str, d: dict[str, Any]) -> PairResult:
    from mtcb_curate.verify.verdict import PairResult, Verdict

    names = {f.name for f in fields(PairResult)} - {"id", "passage"}
    if set(d) != names:
        raise ValueError("fields differ")
    d = dict(d, verdict=Verdict(d["verdict"]), offsets=tuple(d["offsets"]),
             elsewhere=tuple((str(k), int(n)) for k, n in d["elsewhere"]))
    return PairResult(id=pid, passage=passage, **d)


def _write_json(path: Path, value: Any) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # ASCII with escapes: a passage holding a lone surrogate round-trips as well
        atomic_write_bytes(path, json.dumps(value, separators=(",", ":")).encode("ascii"))
        return True
    except OSError:
        return False


class ChecklistCache:
    """Get and put the checklist's reusable work under ``folder`` (see the module docstring).

    Args:
        folder: the cache folder (default :func:`default_cache_dir`).
    """

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else default_cache_dir()

    # -- verify -------------------------------------------------------------------------------

    def _verified_path(self, corpus: str) -> Path:
        return self.folder / f"verified-{corpus[:40]}.json"

    def _verify_stamp(self) -> str:
        return f"{code_digest(VERIFY_CODE)}:{_version('tiktoken')}"

    def verified(self, corpus: str, items: Iterable[tuple[QAPair, str]]) -> tuple[dict[int, PairResult], list[int]]:
        """The cached verification of each ``(pair, passage)`` over the corpus whose fingerprint
        is ``corpus``.

        Returns:
            ``(found, missing)``: pair id -> result (with that pair's id and passage) for the
            passages cached, and the ids of the others, in the order given.
        """
        items = list(items)
        raw = _read_json(self._verified_path(corpus))
        entries = raw.get("entries") if isinstance(raw, dict) and raw.get("stamp") == self._verify_stamp() \
            and raw.get("corpus") == corpus else None
        found: dict[int, PairResult] = {}
        missing: list[int] = []
        for pair, passage in items:
            d = entries.get(_passage_key(pair, passage)) if isinstance(entries, dict) else None
            if d is not None:
                try:
                    found[pair.id] = _from_json(pair.id, passage, d)
                    continue
                except (ValueError, TypeError, KeyError):
                    pass
            missing.append(pair.id)
        return found, missing

    def put_verified(self, corpus: str, items: Iterable[tuple[QAPair, PairResult]], keep: int = 0) -> bool:
        """Add these results (each for its pair's own passage, ``r.passage``) to the corpus's
        file. The entries already there are kept while the file holds at most
        ``3 * keep + 1000`` entries (``keep``: the passages of this run), else only these are.
        False when it could not be written."""
        path = self._verified_path(corpus)
        stamp = self._verify_stamp()
        new = {_passage_key(pair, r.passage): _to_json(r) for pair, r in items}
        raw = _read_json(path)
        old = raw.get("entries") if isinstance(raw, dict) and raw.get("stamp") == stamp \
            and raw.get("corpus") == corpus else None
        return _write_json(path, {"stamp": stamp, "corpus": corpus, "entries": _merged(old, new, keep)})

    # -- answerable ---------------------------------------------------------------------------

    def answerable(self, keys: Iterable[str]) -> dict[str, str | None]:
        """The kept ``answerable`` reasons of these texts (:func:`answerable_key`): key -> the
        reason, or None when the passage supports the answer; keys not kept are left out."""
        raw = _read_json(self.folder / "answerable.json")
        entries = raw.get("entries") if isinstance(raw, dict) and raw.get("stamp") == answerable_stamp() else None
        if not isinstance(entries, dict):
            return {}
        return {k: entries[k] for k in keys if k in entries and (entries[k] is None or isinstance(entries[k], str))}

    def put_answerable(self, reasons: dict[str, str | None], keep: int = 0) -> bool:
        """Add these reasons (key -> reason or None) to the file; the entries already there are
        kept while it holds at most ``3 * keep + 1000`` (``keep``: this run's pairs). False when
        it could not be written."""
        path = self.folder / "answerable.json"
        stamp = answerable_stamp()
        raw = _read_json(path)
        old = raw.get("entries") if isinstance(raw, dict) and raw.get("stamp") == stamp else None
        return _write_json(path, {"stamp": stamp, "entries": _merged(old, reasons, keep)})

    # -- loads --------------------------------------------------------------------------------

    def loads_key(self, tables: str) -> str:
        """The ``loads`` key of a publish layout built from tables whose inputs digest to
        ``tables`` (``hub.tables.tables_digest``): that digest with the code that builds, writes
        and checks the layout (``hub``, ``dataset``, ``checks/loads.py``), the corpus sample's
        size and the ``datasets`` and ``pyarrow`` versions; sha256 hex."""
        from mtcb_curate.checks.loads import CORPUS_SAMPLE_ROWS

        return hashlib.sha256(f"{tables}:{code_digest(LOADS_CODE)}:{CORPUS_SAMPLE_ROWS}:{_version('datasets')}:"
                              f"{_version('pyarrow')}".encode()).hexdigest()

    def loaded(self, key: str) -> dict[str, str] | None:
        """What was kept when the layout ``key`` (:meth:`loads_key`) loaded: ``{"message",
        "datasets", "when"}`` (the check's message, the ``datasets`` version, local time as
        ``YYYY-MM-DD HH:MM``), or None."""
        raw = _read_json(self.folder / f"loads-{key[:40]}.json")
        if not isinstance(raw, dict) or raw.get("key") != key:
            return None
        if not all(isinstance(raw.get(k), str) for k in ("message", "datasets", "when")):
            return None
        return {k: raw[k] for k in ("message", "datasets", "when")}

    def put_loaded(self, key: str, message: str) -> bool:
        """Keep that the layout ``key`` loaded, with the check's ``message``; False when it
        could not be written."""
        return _write_json(self.folder / f"loads-{key[:40]}.json",
                           {"key": key, "message": message, "datasets": _version("datasets"),
                            "when": time.strftime("%Y-%m-%d %H:%M", time.localtime())})
