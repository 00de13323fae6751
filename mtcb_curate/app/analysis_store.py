"""The files of the review app's analysis (``app.analysis``): its inputs, written by the app for
the worker process, and its results, written by the worker and kept for the next session.

One folder per workspace (:func:`analysis_folder`), holding::

    corpus-<corpus fingerprint>.bin     the documents (input; written when a run needs them,
                                        deleted as the app closes)
    latest.json                         {"text": KEY, "groups": KEY} of the last finished run
    text-<text key>/pairs.npz           the pairs' current texts (input)
    text-<text key>/job.json            what the worker is asked (input)
    text-<text key>/verdicts.npz        every pair's verification (result)
    text-<text key>/links.npz           every near-duplicate and shared-passage link (result)
    text-<text key>/groups-<key>/       the clusters and shared-passage groups (result)
    text-<text key>/answerable.json     every pair's ``answerable`` support reason (result)
    text-<text key>/worker.log          the worker's error output, for a failure's message

The *text key* (``app.analysis.text_key``) digests the corpus, every pair's current texts and
``chunk_index``, the near-duplicate threshold, the stored LLM links and the code that decides
the results; the *groups key* adds the curator's marks and the rejected pairs. A result is read
only under its own key, so a changed pair, document, setting or verifier never reads an old
answer. Files are raw bytes, ``.npz`` (numpy, ``allow_pickle=False``) and JSON: never pickles,
and no library beyond numpy (``pyarrow.array`` of a list imports pandas, about 40 MB).
Every write goes to a temporary name in the same folder, then is renamed over the target.

Texts travel as UTF-8 bytes with lone surrogates kept (``dataset.model.encode_text``), so any
text round-trips.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mtcb_curate.dataset.model import CorpusFile, Document, document_text, encode_text
from mtcb_curate.verify.verdict import PairResult, Verdict

#: Bump when a file's layout changes: every key holds it.
FORMAT = 1
#: The verdict codes stored in ``verdicts.npz`` (index = code).
VERDICT_CODES: tuple[Verdict, ...] = tuple(Verdict)
#: The agreement levels stored in ``verdicts.npz`` (index + 1 = code; 0 = none).
LEVEL_CODES: tuple[str, ...] = ("whitespace", "typography", "ascii")


def short(key: str) -> str:
    """The first 32 hex digits of a key: how file and folder names carry it."""
    return key[:32]


def text_dir(folder: Path, text_key: str) -> Path:
    """``<folder>/text-<key>``: the inputs and results of one text key."""
    return folder / f"text-{short(text_key)}"


def corpus_path(folder: Path, corpus_fp: str) -> Path:
    """``<folder>/corpus-<fingerprint>.bin``."""
    return folder / f"corpus-{short(corpus_fp)}.bin"


def groups_path(folder: Path, text_key: str, groups_key: str) -> Path:
    """The folder of the clusters and groups of one text key under one groups key."""
    return text_dir(folder, text_key) / f"groups-{short(groups_key)}"


def pair_key(doc_key: str, chunk_index: int | None, passage: str) -> bytes:
    """16 bytes (blake2b) of what a pair's verification depends on: its document key,
    ``chunk_index`` and passage. Equal keys: the same verification."""
    h = hashlib.blake2b(digest_size=16)
    for part in (doc_key, "" if chunk_index is None else str(chunk_index), passage):
        b = encode_text(part)
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.digest()


def _write_atomic(dest: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``dest``, then rename it over ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(dest: Path, value: Any) -> None:
    """``value`` as JSON (ASCII with escapes), atomically."""
    data = json.dumps(value, separators=(",", ":")).encode("ascii")
    _write_atomic(dest, lambda p: p.write_bytes(data))


def _texts_blob(texts: Iterable[str | bytes]) -> tuple[np.ndarray, bytes]:
    """``(offsets, data)``: the texts' UTF-8 bytes (lone surrogates kept) one after another and
    where each starts, ``offsets[i]:offsets[i + 1]`` (int64, one more than the texts)."""
    encoded = [t if isinstance(t, bytes) else encode_text(t) for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return offsets, b"".join(encoded)


def _blob_texts(offsets: np.ndarray, data: bytes) -> list[str]:
    bounds = offsets.tolist()
    return [document_text(data[bounds[i]:bounds[i + 1]]) for i in range(len(bounds) - 1)]


def _save_npz(dest: Path, **arrays: np.ndarray) -> None:
    def write(path: Path) -> None:
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)

    _write_atomic(dest, write)


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


# -- the corpus ---------------------------------------------------------------------------------


def write_corpus(dest: Path, documents: Iterable[tuple[str, bytes]]) -> None:
    """The documents ``(key, UTF-8 bytes)``, atomically: their bytes one after another, then a
    JSON trailer ``[[key, start, end], ...]`` and its length (8 bytes, little-endian), so the
    worker reads one document at a time without a library."""
    def write(path: Path) -> None:
        index = []
        with open(path, "wb") as fh:
            at = 0
            for key, data in documents:
                fh.write(data)
                index.append([key, at, at + len(data)])
                at += len(data)
            trailer = json.dumps(index).encode("ascii")
            fh.write(trailer)
            fh.write(len(trailer).to_bytes(8, "little"))

    _write_atomic(dest, write)


def read_corpus(path: Path) -> dict[str, bytes]:
    """Document key -> UTF-8 bytes, in the file's order, all read (:func:`open_corpus` reads
    them a document at a time).

    Raises:
        OSError, ValueError: a missing or damaged file.
    """
    return {key: doc.data for key, doc in open_corpus(path).items()}


def open_corpus(path: Path) -> dict[str, Document]:
    """Document key -> ``Document`` (row: its place in the file) whose bytes are read from the
    file on access, a document at a time (``dataset.model.CorpusFile``): the worker never holds
    the whole corpus.

    Raises:
        OSError, ValueError: a missing or damaged file.
    """
    with open(path, "rb") as fh:
        end_of_data = fh.seek(-8, os.SEEK_END)
        size = int.from_bytes(fh.read(8), "little")
        if size > end_of_data:
            raise ValueError(f"{path}: cut short")
        end_of_data = fh.seek(-8 - size, os.SEEK_END)
        index = json.loads(fh.read(size))
    file = CorpusFile.open(path)
    out: dict[str, Document] = {}
    for row, (key, start, end) in enumerate(index):
        if not 0 <= start <= end <= end_of_data:
            raise ValueError(f"{path}: cut short")
        out.setdefault(str(key), Document.at(str(key), file, int(start), int(end), row))
    return out


# -- the pairs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairTexts:
    """Every pair's current texts, in pair id order (``ids[i] == i``).

    Attributes:
        doc_keys, questions, answers, passages: one text per pair.
        chunk_index: one value per pair (None: unset).
    """

    doc_keys: Sequence[str]
    questions: Sequence[str]
    answers: Sequence[str]
    passages: Sequence[str]
    chunk_index: Sequence[int | None]

    def __len__(self) -> int:
        return len(self.passages)


_TEXT_FIELDS = ("doc_keys", "questions", "answers", "passages")


def write_pairs(dest: Path, pairs: PairTexts) -> None:
    """``pairs`` as one ``.npz`` (each text field's bytes and offsets; ``chunk_index`` with a
    mask of the set ones), atomically."""
    arrays: dict[str, np.ndarray] = {}
    for name in _TEXT_FIELDS:
        offsets, data = _texts_blob(getattr(pairs, name))
        arrays[f"{name}_offsets"] = offsets
        arrays[f"{name}_data"] = np.frombuffer(data, dtype=np.uint8)
    arrays["chunk_index"] = np.array([0 if c is None else c for c in pairs.chunk_index], dtype=np.int64)
    arrays["chunk_index_set"] = np.array([c is not None for c in pairs.chunk_index], dtype=bool)
    _save_npz(dest, **arrays)


def read_pairs(path: Path) -> PairTexts:
    """The :class:`PairTexts` of :func:`write_pairs`.

    Raises:
        OSError, ValueError, KeyError: a missing or damaged file.
    """
    z = _load_npz(path)
    texts = {name: _blob_texts(z[f"{name}_offsets"], z[f"{name}_data"].tobytes()) for name in _TEXT_FIELDS}
    chunk = [int(c) if ok else None for c, ok in zip(z["chunk_index"].tolist(), z["chunk_index_set"].tolist())]
    return PairTexts(texts["doc_keys"], texts["questions"], texts["answers"], texts["passages"], chunk)


# -- the verdicts -------------------------------------------------------------------------------

#: The ``PairResult`` fields kept as one number per pair: name -> (dtype, value for None).
_NUMBERS: dict[str, tuple[Any, Any]] = {
    "score": (np.float64, np.nan), "start": (np.int64, -1), "end": (np.int64, -1),
    "occurrences_in_doc": (np.int64, 0), "normalized_occurrences": (np.int64, 0), "chars": (np.int64, 0),
    "tokens": (np.int64, -1), "chunk_index": (np.int64, 0),
}
#: The ``PairResult`` fields kept as a flag per pair (None kept in a mask where it can occur).
_FLAGS = ("edge_whitespace", "in_chunk", "has_document", "fuzzy_checked")
#: Fields whose None is kept in a ``<name>_set`` mask.
_MAY_BE_NONE = ("score", "start", "end", "tokens", "chunk_index", "in_chunk")


def write_verdicts(dest: Path, results: Sequence[PairResult], keys: Sequence[bytes], corpus_fp: str,
                   tokens: Sequence[int | None] | None = None) -> None:
    """One row per pair (``results[i].id == i``) in one ``.npz``, with ``keys[i]``
    (:func:`pair_key` of the texts it was verified on), atomically. The passage itself is not
    stored: the reader knows which texts it asked about. ``tokens``: each pair's token count,
    kept instead of its result's ``tokens`` (counted after verifying, without a new result)."""
    code = {v: i for i, v in enumerate(VERDICT_CODES)}
    level = {lv: i + 1 for i, lv in enumerate(LEVEL_CODES)}
    arrays: dict[str, np.ndarray] = {
        "corpus": np.frombuffer(corpus_fp.encode("ascii"), dtype=np.uint8),
        "format": np.array([FORMAT], dtype=np.int64),
        "id": np.array([r.id for r in results], dtype=np.int64),
        "key": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16) if keys else np.zeros((0, 16), np.uint8),
        "verdict": np.array([code[r.verdict] for r in results], dtype=np.int8),
        "level": np.array([level.get(r.level, 0) for r in results], dtype=np.int8),
    }
    for name, (dtype, none) in _NUMBERS.items():
        values = list(tokens) if name == "tokens" and tokens is not None else [getattr(r, name) for r in results]
        arrays[name] = np.array([none if v is None else v for v in values], dtype=dtype)
        if name in _MAY_BE_NONE:
            arrays[f"{name}_set"] = np.array([v is not None for v in values], dtype=bool)
    for name in _FLAGS:
        values = [getattr(r, name) for r in results]
        arrays[name] = np.array([bool(v) for v in values], dtype=bool)
        if name in _MAY_BE_NONE:
            arrays[f"{name}_set"] = np.array([v is not None for v in values], dtype=bool)
    arrays["doc_key_offsets"], doc_keys = _texts_blob(r.doc_key for r in results)
    arrays["doc_key_data"] = np.frombuffer(doc_keys, dtype=np.uint8)
    arrays["offsets_at"] = np.zeros(len(results) + 1, dtype=np.int64)
    np.cumsum([len(r.offsets) for r in results], out=arrays["offsets_at"][1:])
    arrays["offsets"] = np.fromiter((o for r in results for o in r.offsets), dtype=np.int64)
    arrays["elsewhere_at"] = np.zeros(len(results) + 1, dtype=np.int64)
    np.cumsum([len(r.elsewhere) for r in results], out=arrays["elsewhere_at"][1:])
    arrays["elsewhere_counts"] = np.fromiter((n for r in results for _, n in r.elsewhere), dtype=np.int64)
    arrays["elsewhere_key_offsets"], others = _texts_blob(k for r in results for k, _ in r.elsewhere)
    arrays["elsewhere_key_data"] = np.frombuffer(others, dtype=np.uint8)
    _save_npz(dest, **arrays)


class VerdictTable:
    """Every pair's verification as stored in ``verdicts.npz``: compact columns, and a
    ``PairResult`` made on demand (:meth:`result`).

    Attributes:
        corpus: the fingerprint of the corpus verified.
        keys: ``(n, 16)`` uint8, each row's :func:`pair_key`.
        verdicts: ``(n,)`` int8 codes into :data:`VERDICT_CODES`.
    """

    def __init__(self, arrays: dict[str, np.ndarray]):
        if int(arrays["format"][0]) != FORMAT:
            raise ValueError("another format")
        self._a = arrays
        self.corpus = arrays["corpus"].tobytes().decode("ascii")
        self.ids = arrays["id"]
        self.keys = arrays["key"]
        self.verdicts = arrays["verdict"]
        if not len(self.ids) == len(self.keys) == len(self.verdicts) == len(arrays["offsets_at"]) - 1:
            raise ValueError("sizes differ")

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def read(cls, path: Path) -> VerdictTable:
        """The table in ``path``.

        Raises:
            OSError, ValueError, KeyError: a missing or damaged file.
        """
        return cls(_load_npz(path))

    def column(self, name: str) -> np.ndarray:
        """One stored column as a numpy array (``start``, ``score``, ``tokens`` ...)."""
        return self._a[name]

    def verdict(self, row: int) -> Verdict:
        """Row ``row``'s verdict (nothing else is read)."""
        return VERDICT_CODES[int(self.verdicts[row])]

    def result(self, row: int, passage: str) -> PairResult:
        """Row ``row`` as a ``PairResult`` of ``passage`` (the text the row was verified on)."""
        a = self._a

        def value(name: str):
            if name in _MAY_BE_NONE and not a[f"{name}_set"][row]:
                return None
            v = a[name][row]
            return bool(v) if name in _FLAGS else float(v) if name == "score" else int(v)

        def text(prefix: str, k: int) -> str:
            at = a[f"{prefix}_offsets"]
            return document_text(a[f"{prefix}_data"][int(at[k]):int(at[k + 1])].tobytes())

        o0, o1 = int(a["offsets_at"][row]), int(a["offsets_at"][row + 1])
        e0, e1 = int(a["elsewhere_at"][row]), int(a["elsewhere_at"][row + 1])
        level = int(a["level"][row])
        return PairResult(
            id=int(self.ids[row]), doc_key=text("doc_key", row), verdict=self.verdict(row),
            score=value("score"), start=value("start"), end=value("end"),
            level=LEVEL_CODES[level - 1] if level else None, offsets=tuple(a["offsets"][o0:o1].tolist()),
            occurrences_in_doc=value("occurrences_in_doc"),
            elsewhere=tuple((text("elsewhere_key", k), int(a["elsewhere_counts"][k])) for k in range(e0, e1)),
            normalized_occurrences=value("normalized_occurrences"), chars=value("chars"), tokens=value("tokens"),
            edge_whitespace=value("edge_whitespace"), chunk_index=value("chunk_index"), in_chunk=value("in_chunk"),
            has_document=value("has_document"), fuzzy_checked=value("fuzzy_checked"), passage=passage)

    def rows_by_key(self) -> dict[bytes, int]:
        """:func:`pair_key` -> a row holding it (to reuse a verification)."""
        return {bytes(k): i for i, k in enumerate(self.keys)}


# -- links and groups ---------------------------------------------------------------------------


#: Values widened and written at a time by :func:`write_links`.
_WRITE_SLICE = 1 << 18


def write_links(dest: Path, a: np.ndarray, b: np.ndarray, bits: np.ndarray) -> None:
    """A search's links (positions into the pairs, reason bits; any integer types), atomically,
    as the int64 arrays ``a``, ``b``, ``bits`` of an ``.npz`` (what ``np.savez`` writes, each
    array widened a slice at a time as it is written)."""
    import zipfile

    def write(path: Path) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, arr in (("a", a), ("b", b), ("bits", bits)):
                arr = np.asarray(arr)
                with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                    _write_npy(fh, np.dtype(np.int64), (arr[k:k + _WRITE_SLICE] for k in range(0, len(arr), _WRITE_SLICE)),
                               len(arr))

    _write_atomic(dest, write)


def read_links(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a, b, bits)`` of :func:`write_links`.

    Raises:
        OSError, ValueError, KeyError: a missing or damaged file.
    """
    with np.load(path, allow_pickle=False) as z:
        return z["a"], z["b"], z["bits"]


#: The kinds of groups a run keeps: over every pair, and over the pairs not rejected (kept only
#: when some pair is rejected; else the same as the first two).
GROUP_KINDS = ("clusters", "shared_passages", "live_clusters", "live_shared_passages")


def write_groups(dest: Path, groups: dict[str, Sequence[Any]]) -> None:
    """``neardup.Cluster`` lists by kind (:data:`GROUP_KINDS`) into the folder ``dest`` (made
    atomically: written beside it, then renamed): per kind the link tables one after another
    (``<kind>-links.npy``), the member ids likewise (``<kind>-ids.npy``), where each cluster's
    ids and links start (``<kind>-cuts.npy``) and its reason bits (``<kind>-bits.npy``); the
    scored questions of small clusters in ``meta.json``."""
    from mtcb_curate.neardup.clusters import _LINK_DTYPE
    from mtcb_curate.neardup.similarity import _BIT

    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        meta: dict[str, Any] = {"format": FORMAT, "kinds": {}}
        for kind, clusters in groups.items():
            cuts = np.zeros((len(clusters) + 1, 2), dtype=np.int64)
            cuts[1:, 0] = np.cumsum([c.size for c in clusters])
            cuts[1:, 1] = np.cumsum([c.link_count for c in clusters])
            ids = np.fromiter((i for c in clusters for i in c.ids), dtype=np.int64, count=int(cuts[-1, 0]))
            bits = np.array([sum(_BIT[r] for r in c.reasons) for c in clusters], dtype=np.int64)
            _save_tables(tmp / f"{kind}-links.npy", [c.link_table for c in clusters], _LINK_DTYPE)
            for name, arr in (("ids", ids), ("cuts", cuts), ("bits", bits)):
                np.save(tmp / f"{kind}-{name}.npy", arr, allow_pickle=False)
            meta["kinds"][kind] = {"scored": [None if c.scored is None else list(c.scored) for c in clusters]}
        (tmp / "meta.json").write_bytes(json.dumps(meta, separators=(",", ":")).encode("ascii"))
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _save_tables(dest: Path, tables: Sequence[np.ndarray], dtype: np.dtype) -> None:
    """What ``np.save(dest, np.concatenate(tables))`` writes (a 1-d array of ``dtype``), one
    table at a time: the concatenation is never held."""
    with open(dest, "wb") as fh:
        _write_npy(fh, np.dtype(dtype), tables, sum(len(t) for t in tables))


def _write_npy(fh: Any, dtype: np.dtype, parts: Iterable[np.ndarray], length: int) -> None:
    """Write to the binary file ``fh`` what ``np.save`` writes for the 1-d array of ``dtype``
    that is the concatenation of ``parts`` (``length`` values in all), a part at a time: each
    is converted to ``dtype`` (no copy of a part already so) and written as it comes."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(0, dtype))
    header["shape"] = (length,)
    np.lib.format.write_array_header_1_0(fh, header)
    for part in parts:
        fh.write(np.ascontiguousarray(part, dtype=dtype).view(np.uint8))  # its bytes, not copied


def read_groups(folder: Path, doc_keys: Sequence[str]) -> dict[str, list[Any]]:
    """The ``neardup.Cluster`` lists of :func:`write_groups` by kind (the link tables memory-
    mapped: read from disk as they are used); ``doc_keys``: each pair's document key.

    Each cluster's link table is a plain ``ndarray`` view of the mapped file (a ``np.memmap``
    slice carries an attribute dict of its own, one or two slices a cluster), and equal scored
    questions are one ``str`` (members of one cluster often ask the same question; ``json``
    makes a new ``str`` for each).

    Raises:
        OSError, ValueError, KeyError: a missing or damaged folder.
    """
    from mtcb_curate.neardup.clusters import Cluster, _reason_names

    meta = json.loads((folder / "meta.json").read_bytes())
    if meta.get("format") != FORMAT:
        raise ValueError("another format")
    out: dict[str, list[Any]] = {}
    seen: dict[str, str] = {}
    for kind, info in meta["kinds"].items():
        links = np.load(folder / f"{kind}-links.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
        ids = np.load(folder / f"{kind}-ids.npy", allow_pickle=False).tolist()
        cuts = np.load(folder / f"{kind}-cuts.npy", allow_pickle=False).tolist()
        bits = np.load(folder / f"{kind}-bits.npy", allow_pickle=False).tolist()
        scored = info["scored"]
        if not len(cuts) == len(bits) + 1 == len(scored) + 1:
            raise ValueError("sizes differ")
        found = []
        for k, reason_bits in enumerate(bits):
            members = tuple(ids[cuts[k][0]:cuts[k + 1][0]])
            found.append(Cluster(ids=members, reasons=_reason_names(reason_bits),
                                 doc_keys=tuple(sorted({doc_keys[m] for m in members})),
                                 link_table=links[cuts[k][1]:cuts[k + 1][1]],
                                 scored=None if scored[k] is None else tuple(seen.setdefault(q, q) for q in scored[k])))
        out[kind] = found
    return out


def answerable_stamp() -> str:
    """What every ``answerable`` reason depends on besides the pair's texts
    (``checks.cache.answerable_stamp``, the checklist cache's stamp)."""
    from mtcb_curate.checks.cache import answerable_stamp as stamp

    return stamp()


@dataclass(frozen=True)
class AnswerableTable:
    """Every pair's ``answerable`` support reason as the analysis worked it out
    (``checks.questions.overlap_problem``: a reason, or None when the passage supports the
    answer), each for the texts it was worked out on.

    Attributes:
        keys: per pair id, ``checks.cache.answerable_key`` of its question, answer and passage.
        reasons: per pair id, the reason or None.
        stamp: :func:`answerable_stamp` of the process that worked them out.
        paraphraser: the paraphrase measure used (``wordllama`` or ``fuzzy``; "" when the run
            worked no reason out).
    """

    keys: Sequence[str]
    reasons: Sequence[str | None]
    stamp: str
    paraphraser: str

    def __len__(self) -> int:
        return len(self.keys)

    def reason(self, pid: int, question: str, answer: str, passage: str) -> tuple[bool, str | None]:
        """``(known, reason)`` for pair ``pid`` with these texts: known only when the table
        holds the pair with exactly these texts."""
        from mtcb_curate.checks.cache import answerable_key

        if not 0 <= pid < len(self.keys) or self.keys[pid] != answerable_key(question, answer, passage):
            return False, None
        return True, self.reasons[pid]

    def by_key(self) -> dict[str, str | None]:
        """key -> reason, for reuse by a later run."""
        return dict(zip(self.keys, self.reasons))


def write_answerable(dest: Path, table: AnswerableTable) -> None:
    """``table`` as JSON, atomically."""
    write_json(dest, {"stamp": table.stamp, "paraphraser": table.paraphraser, "keys": list(table.keys),
                      "reasons": list(table.reasons)})


def read_answerable(path: Path) -> AnswerableTable | None:
    """The table in ``path``, or None when it is missing, damaged or made under another
    :func:`answerable_stamp` (it is then worked out again)."""
    from mtcb_curate.files import read_json

    raw = read_json(path)
    if not isinstance(raw, dict) or raw.get("stamp") != answerable_stamp():
        return None
    keys, reasons = raw.get("keys"), raw.get("reasons")
    if not isinstance(keys, list) or not isinstance(reasons, list) or len(keys) != len(reasons) \
            or not all(isinstance(k, str) for k in keys) \
            or not all(r is None or isinstance(r, str) for r in reasons):
        return None
    return AnswerableTable(keys, reasons, raw["stamp"], str(raw.get("paraphraser", "")))


def remove_other(folder: Path, keep: Iterable[Path], pattern: str) -> None:
    """Delete the entries of ``folder`` matching ``pattern`` other than ``keep`` (best effort)."""
    kept = {p.name for p in keep}
    for p in folder.glob(pattern):
        if p.name in kept:
            continue
        try:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        except OSError:
            pass
