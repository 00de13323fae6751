"""Plain data: documents, QA pairs, the dataset, statuses and load problems.

A ``Dataset`` is what a source becomes after loading; the workspace lays the curator's
decisions and edits over it without ever changing it.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

from mtcb_curate.dataset.profiles import Profile


class Status(str, Enum):
    """A pair's review status. Every pair starts ``undecided``."""

    UNDECIDED = "undecided"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    SKIPPED = "skipped"
    FLAGGED = "flagged"


#: Reasons a curator can give for a rejection (the ``x`` key's short list), in menu order.
REJECT_REASONS: tuple[str, ...] = (
    "not verbatim",
    "duplicate",
    "unanswerable",
    "trivial",
    "yes/no",
    "too long",
    "other",
)

#: The fields of a pair a curator may edit.
EDITABLE_FIELDS: tuple[str, ...] = ("question", "answer", "supporting_passage")
#: The supporting passage's name as an MTCB column, an edit field (``ReviewSession.edit``,
#: ``Workspace.edits()``) and an added pair's field in the workspace.
PASSAGE_FIELD = EDITABLE_FIELDS[2]
#: The edit field of a pair's chunk_index (an int; ``ReviewSession.set_chunk_index``): not typed by
#: hand, so not among ``EDITABLE_FIELDS``.
CHUNK_INDEX_FIELD = "chunk_index"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the input, located precisely.

    Attributes:
        file: the file (or ``repo:config``) it was found in.
        row: 0-based row in that config, or None when it concerns the whole file.
        field: the column concerned, or None.
        message: one line for a person.
        pair_id: the QA pair it affects, when it affects one.
        line: the 1-based line the row starts on, for a line-based file (jsonl, csv), else None.
    """

    file: str
    row: int | None
    field: str | None
    message: str
    pair_id: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f" row {self.row}" + (f" (line {self.line})" if self.line is not None else "")
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


#: How many decoded document texts :func:`document_text` keeps (least recently used first out).
TEXT_CACHE_SIZE = 4


@functools.lru_cache(maxsize=TEXT_CACHE_SIZE)
def document_text(data: bytes) -> str:
    """The text of a document's UTF-8 bytes (lone surrogates kept: ``surrogatepass``), the
    last :data:`TEXT_CACHE_SIZE` decoded ones cached (the same ``str`` object while cached).

    A ``str`` takes 2 or 4 bytes a character once it holds one character past U+00FF (a curly
    quote), so the corpus is kept as UTF-8 bytes, about half the size, and decoded per
    document when asked (about 1 ms per 550,000 characters).
    """
    return data.decode("utf-8", "surrogatepass")


def encode_text(text: str) -> bytes:
    """``text`` as UTF-8 bytes, lone surrogates kept (``surrogatepass``), so that
    ``document_text(encode_text(t)) == t`` for every ``str``."""
    return text.encode("utf-8", "surrogatepass")


#: Document texts (UTF-8 bytes) whose digest :func:`text_digest` remembers; passages and other
#: ``str`` texts: 4096.
DIGESTS_KEPT = 8


@functools.lru_cache(maxsize=4096)
def _str_digest(text: str) -> str:
    return hashlib.sha1(encode_text(text)).hexdigest()


@functools.lru_cache(maxsize=DIGESTS_KEPT)
def _bytes_digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def text_digest(text: str | bytes) -> str:
    """sha1 hex of ``text``'s UTF-8 bytes (lone surrogates kept), or of ``text`` itself when it
    is those bytes (a corpus document's ``Document.data``: the same digest, with no decoding);
    remembered for the last 4096 ``str`` texts and the last :data:`DIGESTS_KEPT` byte texts (a
    remembered text is kept alive by the cache: few documents, so the corpus is not)."""
    return _bytes_digest(text) if isinstance(text, bytes) else _str_digest(text)


class CorpusFile:
    """The corpus documents' UTF-8 bytes in one unnamed temporary file, read a document at a
    time: the app's process keeps the corpus out of its memory (held as ``bytes``, every byte
    of it is a resident page of the process; the file's pages are the kernel's page cache).

    Args:
        folder: where the file is made (default: the user cache folder ``corpus``, else the
            system's temporary folder). The file is unlinked as soon as it is made: it goes
            with the object (or the process, even a killed one), and nothing is left on disk.

    The last documents read are kept (at most :data:`KEEP_BYTES` bytes, the last one always), so
    a document read again and again is the same ``bytes`` object (``document_text`` and
    :func:`text_digest` find it in their caches). Thread-safe.

    Raises:
        OSError: no folder can hold the file (from the constructor).
    """

    #: Bytes of recently read documents kept in memory.
    KEEP_BYTES = 4 << 20

    def __init__(self, folder: str | os.PathLike | None = None):
        self._take(_temporary_file(folder))

    def _take(self, fd: int) -> None:
        """Hold descriptor ``fd`` (closed, so an unlinked file deleted, with the object)."""
        import threading
        import weakref

        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self._size = os.fstat(fd).st_size
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, bytes] = OrderedDict()
        self._kept_bytes = 0

    @classmethod
    def open(cls, path: str | os.PathLike) -> "CorpusFile":
        """An existing file, to read documents from (as :meth:`read` does; nothing is appended).

        Raises:
            OSError: it cannot be opened.
        """
        self = cls.__new__(cls)
        self._take(os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)))
        return self

    @property
    def size(self) -> int:
        """The file's bytes (written so far)."""
        return self._size

    def append(self, data: bytes) -> tuple[int, int]:
        """Write one document's bytes at the end; their ``(start, end)`` byte offsets.

        Raises:
            OSError: the disk is full or the file cannot be written.
        """
        with self._lock:
            start = self._size
            view = memoryview(data)
            while view:
                n = os.pwrite(self._fd, view, self._size)
                self._size += n
                view = view[n:]
            return start, self._size

    def read(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)`` (as :meth:`append` gave them).

        Raises:
            OSError: the file cannot be read (it was cut short).
        """
        with self._lock:
            got = self._kept.get(start)
            if got is not None and len(got) == end - start:
                self._kept.move_to_end(start)
                return got
        data = os.pread(self._fd, end - start, start)
        while len(data) < end - start:
            more = os.pread(self._fd, end - start - len(data), start + len(data))
            if not more:
                raise OSError(f"the corpus file ends at byte {start + len(data)}, before byte {end}")
            data += more
        with self._lock:
            old = self._kept.pop(start, None)
            if old is not None:
                self._kept_bytes -= len(old)
            self._kept[start] = data
            self._kept_bytes += len(data)
            while self._kept_bytes > self.KEEP_BYTES and len(self._kept) > 1:
                _, dropped = self._kept.popitem(last=False)
                self._kept_bytes -= len(dropped)
        return data

    def close(self) -> None:
        """Close (and so delete) the file; it is closed anyway once no object refers to it."""
        self._closer()


def _temporary_file(folder: str | os.PathLike | None) -> int:
    """The descriptor of an unnamed temporary file (made, then unlinked at once) in ``folder``,
    else in the user cache folder ``corpus`` (on disk, not in a RAM-backed ``/tmp``), else in
    the system's temporary folder."""
    import tempfile

    places: list[str | os.PathLike | None] = [folder] if folder is not None else []
    if folder is None:
        try:
            from mtcb_curate.files import user_cache_folder

            places.append(user_cache_folder("corpus"))
        except Exception:  # noqa: BLE001 - no cache folder: the system's temporary folder
            pass
        places.append(None)
    error: OSError | None = None
    for place in places:
        try:
            if place is not None:
                os.makedirs(place, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix="corpus-", suffix=".bin", dir=place)
            try:
                os.unlink(path)
            except OSError:
                os.close(fd)
                raise
            return fd
        except OSError as exc:
            error = exc
    raise error if error is not None else OSError("no folder for the corpus file")


class Document:
    """One corpus document.

    Attributes:
        key: the document-key value (``AAPL`` for ficha).
        text: the full document text, exactly as published (decoded from ``data`` on access
            through :func:`document_text`; equal to the ``text`` given).
        data: the text's UTF-8 bytes (:func:`encode_text`): held in memory, or read from a
            :class:`CorpusFile` on access (:meth:`stored`).
        size: ``len(data)`` (nothing read).
        row: 0-based row in the corpus config.
        meta: the other corpus columns (company, filing_date ...), values as loaded.
    """

    __slots__ = ("key", "_data", "_file", "_start", "_end", "row", "meta")

    def __init__(self, key: str, text: str | bytes, row: int, meta: dict[str, Any] | None = None):
        self.key = key
        self._data: bytes | None = text if isinstance(text, bytes) else encode_text(text)
        self._file: CorpusFile | None = None
        self._start = self._end = 0
        self.row = row
        self.meta = {} if meta is None else meta

    @classmethod
    def stored(cls, key: str, data: bytes, file: CorpusFile, row: int,
               meta: dict[str, Any] | None = None) -> "Document":
        """A document whose bytes ``data`` are written to ``file`` and read from it on access
        (``data`` is not kept).

        Raises:
            OSError: the file cannot be written.
        """
        return cls.at(key, file, *file.append(data), row, meta)

    @classmethod
    def at(cls, key: str, file: CorpusFile, start: int, end: int, row: int,
           meta: dict[str, Any] | None = None) -> "Document":
        """A document whose bytes are ``[start, end)`` of ``file`` (read from it on access)."""
        doc = cls(key, b"", row, meta)
        doc._data = None
        doc._file = file
        doc._start, doc._end = start, end
        return doc

    @property
    def data(self) -> bytes:
        if self._data is not None:
            return self._data
        return self._file.read(self._start, self._end)  # type: ignore[union-attr]

    @property
    def size(self) -> int:
        return len(self._data) if self._data is not None else self._end - self._start

    @property
    def text(self) -> str:
        return document_text(self.data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Document):
            return NotImplemented
        return (self.key, self.row, self.data, self.meta) == (other.key, other.row, other.data, other.meta)

    __hash__ = None  # type: ignore[assignment] - meta is a dict, as with the dataclass before

    def __repr__(self) -> str:
        return f"Document(key={self.key!r}, row={self.row}, chars={len(self.text)}, meta={self.meta!r})"


class DocumentBytes(Mapping):
    """Document key -> ``Document.data``, read on access (a view: nothing is copied or kept,
    so walking it holds one document at a time)."""

    def __init__(self, documents: Mapping[str, Document]):
        self._documents = documents

    def __getitem__(self, key: str) -> bytes:
        return self._documents[key].data

    def __iter__(self):
        return iter(self._documents)

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, key: object) -> bool:
        return key in self._documents


class HistoryKind(StrEnum):
    """The kind of a workspace history entry (the stored ``kind`` column: these exact values)."""

    DECIDE = "decide"
    EDIT = "edit"
    ADD = "add"
    NOT_DUPLICATES = "not_duplicates"
    SHARED_EVIDENCE = "shared_evidence"
    NOTE = "note"


class Via(StrEnum):
    """What made a change when the curator did not type it (the stored ``via`` column; None
    means by hand). Stored values are these strings; unknown values read back as plain str."""

    SNAP = "snap"
    TRIM = "trim"
    SELECT = "select"
    REGENERATE = "regenerate"
    GENERATE = "generate"
    KEEP_ONE = "keep_one"
    CHUNK_INDEX = "chunk_index"
    SHRINK = "shrink"
    #: a pair the curator wrote (question and answer typed, passage selected in the source):
    #: the ``via`` of its ``add`` entry and the added pair's ``origin``.
    HAND = "hand"
    #: a team lead's decision of a conflict between curators' votes (``decide`` entries).
    RESOLVE = "resolve"


@dataclass(slots=True)
class QAPair:
    """One question-answer pair as loaded (never edited in place).

    Attributes:
        id: stable id, the pair's 0-based row in the source ``questions`` config.
        question, answer, passage: the texts. ``passage`` is the supporting passage: the
            MTCB column, the edit field and the workspace field are all named
            :data:`PASSAGE_FIELD` (``supporting_passage``); only this attribute is shorter.
        doc_key: the document-key value, as a string ('' when missing).
        chunk_index: the generation window number, or None.
        meta: the other question columns, values as loaded.
        problems: load problems found on this row (shown as flags).
        origin: ``source`` for a row of the questions config; for a pair added in the
            workspace, what made it (``generate``: LLM generation; ``hand``: written by the
            curator).
    """

    id: int
    question: str
    answer: str
    passage: str
    doc_key: str
    chunk_index: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    origin: str = "source"


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where a dataset came from and why it was chosen.

    Attributes:
        kind: ``folder``, ``files``, ``hub`` or ``sample``.
        location: a path, a ``corpus,questions`` path pair, or a Hub repo id (``owner/name``).
        reason: why this source is open (shown on screen).
        revision: for the Hub, the revision asked for (``owner/name@REVISION``: a branch, tag
            or commit), None for the default branch.
        commit: for the Hub, the 40-hex commit sha the data was read at, when known.
    """

    kind: str
    location: str
    reason: str = ""
    revision: str | None = None
    commit: str | None = None


def corpus_fingerprint(documents: Mapping[str, str | bytes]) -> str:
    """sha256 hex of every ``(document key, text)`` in order, each part prefixed by its length
    in bytes (8 bytes, little-endian). A text may be given as its UTF-8 bytes (``surrogatepass``,
    as ``Document.data``): the same fingerprint."""
    h = hashlib.sha256()
    for key, text in documents.items():
        for part in (key, text):
            b = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    return h.hexdigest()


@dataclass(slots=True)
class Dataset:
    """A loaded MTCB dataset: its documents, its pairs and what was wrong with the input.

    Attributes:
        name: dataset name (``ficha``).
        profile: the profile the columns were read with.
        documents: document key -> Document (the first one when a key repeats).
        pairs: QA pairs in source row order; ``pairs[i].id == i``.
        source: where it was loaded from.
        columns: the column names actually used, e.g. {"doc_key": "ticker", "passage": ...}.
        problems: every load problem, file-level and per pair.
        duplicate_keys: document key -> its corpus rows, for keys on more than one row (the
            first row is the one pairs link to).
    """

    name: str
    profile: Profile
    documents: dict[str, Document]
    pairs: list[QAPair]
    source: SourceInfo
    columns: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    duplicate_keys: dict[str, list[int]] = field(default_factory=dict)

    def document_for(self, pair: QAPair) -> Document | None:
        """The pair's document, or None when its key matches no document."""
        return self.documents.get(pair.doc_key)

    def no_such_document(self, key: str, shown: int = 20) -> str:
        """One line saying that ``key`` names no document, with the closest key (``difflib``)
        and the keys there are (the first ``shown``, then how many more)."""
        import difflib

        keys = list(self.documents)
        column = self.columns.get("doc_key", "document key")
        line = f"no document '{key}' in the corpus ({column})"
        close = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
        if close:
            line += f"; did you mean '{close[0]}'?"
        listed = ", ".join(keys[:shown]) + (f" and {len(keys) - shown:,} more" if len(keys) > shown else "")
        return f"{line}; the {len(keys):,} documents are: {listed}" if keys else f"{line}; the corpus is empty"
