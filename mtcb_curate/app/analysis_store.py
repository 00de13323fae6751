"""The files of the review app's analysis (``app.analysis``): its inputs, written by the app for
the worker process, and its results, written by the worker and kept for the next session.

One folder per workspace (:func:`analysis_folder`), holding::

    corpus-<corpus fingerprint>.arrow   the documents (input; written when a run needs them,
                                        deleted as the app closes)
    latest.json                         {"text": KEY, "groups": KEY} of the last finished run
    text-<text key>/pairs.arrow         the pairs' current texts (input)
    text-<text key>/job.json            what the worker is asked (input)
    text-<text key>/verdicts.arrow      every pair's verification (result)
    text-<text key>/links.npz           every near-duplicate and shared-passage link (result)
    text-<text key>/groups-<key>/       the clusters and shared-passage groups (result)
    text-<text key>/worker.log          the worker's error output, for a failure's message

The *text key* (``app.analysis.text_key``) digests the corpus, every pair's current texts and
``chunk_index``, the near-duplicate threshold, the stored LLM links and the code that decides
the results; the *groups key* adds the curator's marks and the rejected pairs. A result is read
only under its own key, so a changed pair, document, setting or verifier never reads an old
answer. Files are Arrow IPC, ``.npz`` (numpy, ``allow_pickle=False``) and JSON: never pickles.
Every write goes to a temporary name in the same folder, then is renamed over the target.

Texts travel as UTF-8 bytes with lone surrogates kept (``dataset.model.encode_text``), so a text
Arrow's strings could not hold still round-trips.
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

from mtcb_curate.dataset.model import document_text, encode_text
from mtcb_curate.verify.verdict import PairResult, Verdict

#: Bump when a file's layout changes: every key holds it.
FORMAT = 1
#: The verdict codes stored in ``verdicts.arrow`` (index = code).
VERDICT_CODES: tuple[Verdict, ...] = tuple(Verdict)
#: The agreement levels stored in ``verdicts.arrow`` (index + 1 = code; 0 = none).
LEVEL_CODES: tuple[str, ...] = ("whitespace", "typography", "ascii")


def short(key: str) -> str:
    """The first 32 hex digits of a key: how file and folder names carry it."""
    return key[:32]


def text_dir(folder: Path, text_key: str) -> Path:
    """``<folder>/text-<key>``: the inputs and results of one text key."""
    return folder / f"text-{short(text_key)}"


def corpus_path(folder: Path, corpus_fp: str) -> Path:
    """``<folder>/corpus-<fingerprint>.arrow``."""
    return folder / f"corpus-{short(corpus_fp)}.arrow"


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


def read_json(path: Path) -> Any:
    """The JSON in ``path``, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _binary(values: Iterable[bytes]) -> Any:
    import pyarrow as pa

    return pa.array(list(values), type=pa.large_binary())


# -- the corpus ---------------------------------------------------------------------------------


def write_corpus(dest: Path, documents: Iterable[tuple[str, bytes]]) -> None:
    """The documents ``(key, UTF-8 bytes)`` as an Arrow IPC file, one record batch per
    document (the worker reads one at a time), atomically."""
    import pyarrow as pa

    schema = pa.schema([("key", pa.large_binary()), ("text", pa.large_binary())])

    def write(path: Path) -> None:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for key, data in documents:
                writer.write_batch(pa.record_batch([_binary([encode_text(key)]), _binary([data])], schema=schema))

    _write_atomic(dest, write)


def read_corpus(path: Path) -> dict[str, bytes]:
    """Document key -> UTF-8 bytes, in the file's order.

    Raises:
        OSError, pyarrow.ArrowInvalid: a missing or damaged file.
    """
    import pyarrow as pa

    out: dict[str, bytes] = {}
    with pa.OSFile(str(path), "rb") as source:
        reader = pa.ipc.open_file(source)
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            key = document_text(batch.column(0)[0].as_py())
            out.setdefault(key, batch.column(1)[0].as_py())
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


def write_pairs(dest: Path, pairs: PairTexts) -> None:
    """``pairs`` as an Arrow IPC file (texts as UTF-8 bytes, lone surrogates kept), atomically."""
    import pyarrow as pa

    columns = {name: _binary(encode_text(t) for t in getattr(pairs, name))
               for name in ("doc_keys", "questions", "answers", "passages")}
    columns["chunk_index"] = pa.array(list(pairs.chunk_index), type=pa.int64())
    table = pa.table(columns)

    def write(path: Path) -> None:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)

    _write_atomic(dest, write)


def read_pairs(path: Path) -> PairTexts:
    """The :class:`PairTexts` of :func:`write_pairs`.

    Raises:
        OSError, pyarrow.ArrowInvalid: a missing or damaged file.
    """
    import pyarrow as pa

    with pa.OSFile(str(path), "rb") as source:
        table = pa.ipc.open_file(source).read_all()

    def texts(name: str) -> list[str]:
        return [document_text(b) for b in table.column(name).to_pylist()]

    return PairTexts(texts("doc_keys"), texts("questions"), texts("answers"), texts("passages"),
                     table.column("chunk_index").to_pylist())


# -- the verdicts -------------------------------------------------------------------------------


def write_verdicts(dest: Path, results: Sequence[PairResult], keys: Sequence[bytes], corpus_fp: str) -> None:
    """One row per pair (``results[i].id == i``), with ``keys[i]`` (:func:`pair_key` of the
    texts it was verified on), atomically. The passage itself is not stored: the reader knows
    which texts it asked about."""
    import pyarrow as pa

    code = {v: i for i, v in enumerate(VERDICT_CODES)}
    level = {lv: i + 1 for i, lv in enumerate(LEVEL_CODES)}
    cols: dict[str, Any] = {
        "id": pa.array([r.id for r in results], pa.int64()),
        "key": pa.array(list(keys), pa.binary(16)),
        "doc_key": _binary(encode_text(r.doc_key) for r in results),
        "verdict": pa.array([code[r.verdict] for r in results], pa.int8()),
        "score": pa.array([r.score for r in results], pa.float64()),
        "start": pa.array([r.start for r in results], pa.int64()),
        "end": pa.array([r.end for r in results], pa.int64()),
        "level": pa.array([level.get(r.level, 0) for r in results], pa.int8()),
        "offsets": pa.array([list(r.offsets) for r in results], pa.list_(pa.int64())),
        "occurrences_in_doc": pa.array([r.occurrences_in_doc for r in results], pa.int64()),
        "elsewhere_keys": pa.array([[encode_text(k) for k, _ in r.elsewhere] for r in results],
                                   pa.list_(pa.large_binary())),
        "elsewhere_counts": pa.array([[n for _, n in r.elsewhere] for r in results], pa.list_(pa.int64())),
        "normalized_occurrences": pa.array([r.normalized_occurrences for r in results], pa.int64()),
        "chars": pa.array([r.chars for r in results], pa.int64()),
        "tokens": pa.array([r.tokens for r in results], pa.int64()),
        "edge_whitespace": pa.array([r.edge_whitespace for r in results], pa.bool_()),
        "chunk_index": pa.array([r.chunk_index for r in results], pa.int64()),
        "in_chunk": pa.array([r.in_chunk for r in results], pa.bool_()),
        "has_document": pa.array([r.has_document for r in results], pa.bool_()),
        "fuzzy_checked": pa.array([r.fuzzy_checked for r in results], pa.bool_()),
    }
    table = pa.table(cols).replace_schema_metadata({"corpus": corpus_fp, "format": str(FORMAT)})

    def write(path: Path) -> None:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)

    _write_atomic(dest, write)


class VerdictTable:
    """Every pair's verification as stored in ``verdicts.arrow``: compact columns, and a
    ``PairResult`` made on demand (:meth:`result`).

    Attributes:
        corpus: the fingerprint of the corpus verified.
        keys: ``(n, 16)`` uint8, each row's :func:`pair_key`.
        verdicts: ``(n,)`` int8 codes into :data:`VERDICT_CODES`.
    """

    def __init__(self, table: Any):
        self._table = table
        meta = table.schema.metadata or {}
        self.corpus = meta.get(b"corpus", b"").decode()
        self.ids = table.column("id").to_numpy()
        self.keys = np.frombuffer(table.column("key").combine_chunks().buffers()[1], dtype=np.uint8,
                                  count=16 * len(self.ids)).reshape(-1, 16) if len(self.ids) else \
            np.zeros((0, 16), dtype=np.uint8)
        self.verdicts = table.column("verdict").to_numpy()

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def read(cls, path: Path) -> VerdictTable:
        """The table in ``path``.

        Raises:
            OSError, pyarrow.ArrowInvalid: a missing or damaged file.
        """
        import pyarrow as pa

        with pa.OSFile(str(path), "rb") as source:
            table = pa.ipc.open_file(source).read_all()
        return cls(table)

    def column(self, name: str) -> np.ndarray:
        """One column as a numpy array (nulls as NaN in numeric columns)."""
        return self._table.column(name).to_numpy(zero_copy_only=False)

    def verdict(self, row: int) -> Verdict:
        """Row ``row``'s verdict (nothing else is read)."""
        return VERDICT_CODES[int(self.verdicts[row])]

    def result(self, row: int, passage: str) -> PairResult:
        """Row ``row`` as a ``PairResult`` of ``passage`` (the text the row was verified on)."""
        t = self._table

        def get(name: str):
            return t.column(name)[row].as_py()

        level = get("level")
        keys = [document_text(k) for k in get("elsewhere_keys")]
        return PairResult(
            id=int(self.ids[row]), doc_key=document_text(get("doc_key")), verdict=self.verdict(row),
            score=get("score"), start=get("start"), end=get("end"),
            level=LEVEL_CODES[level - 1] if level else None, offsets=tuple(get("offsets")),
            occurrences_in_doc=get("occurrences_in_doc"), elsewhere=tuple(zip(keys, get("elsewhere_counts"))),
            normalized_occurrences=get("normalized_occurrences"), chars=get("chars"), tokens=get("tokens"),
            edge_whitespace=get("edge_whitespace"), chunk_index=get("chunk_index"), in_chunk=get("in_chunk"),
            has_document=get("has_document"), fuzzy_checked=get("fuzzy_checked"), passage=passage)

    def rows_by_key(self) -> dict[bytes, int]:
        """:func:`pair_key` -> a row holding it (to reuse a verification)."""
        return {bytes(k): i for i, k in enumerate(self.keys)}


# -- links and groups ---------------------------------------------------------------------------


def write_links(dest: Path, a: np.ndarray, b: np.ndarray, bits: np.ndarray) -> None:
    """A search's links (positions into the pairs, reason bits), atomically."""
    def write(path: Path) -> None:
        with open(path, "wb") as fh:
            np.savez(fh, a=a, b=b, bits=bits)

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
            links = np.concatenate([c.link_table for c in clusters]) if clusters else np.zeros(0, _LINK_DTYPE)
            bits = np.array([sum(_BIT[r] for r in c.reasons) for c in clusters], dtype=np.int64)
            for name, arr in (("links", links), ("ids", ids), ("cuts", cuts), ("bits", bits)):
                np.save(tmp / f"{kind}-{name}.npy", arr, allow_pickle=False)
            meta["kinds"][kind] = {"scored": [None if c.scored is None else list(c.scored) for c in clusters]}
        (tmp / "meta.json").write_bytes(json.dumps(meta, separators=(",", ":")).encode("ascii"))
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_groups(folder: Path, doc_keys: Sequence[str]) -> dict[str, list[Any]]:
    """The ``neardup.Cluster`` lists of :func:`write_groups` by kind (the link tables memory-
    mapped: read from disk as they are used); ``doc_keys``: each pair's document key.

    Raises:
        OSError, ValueError, KeyError: a missing or damaged folder.
    """
    from mtcb_curate.neardup.clusters import Cluster, _reason_names

    meta = json.loads((folder / "meta.json").read_bytes())
    if meta.get("format") != FORMAT:
        raise ValueError("another format")
    out: dict[str, list[Any]] = {}
    for kind, info in meta["kinds"].items():
        links = np.load(folder / f"{kind}-links.npy", mmap_mode="r", allow_pickle=False)
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
                                 scored=None if scored[k] is None else tuple(scored[k])))
        out[kind] = found
    return out


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
