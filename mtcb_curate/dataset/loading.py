"""Sources -> ``Dataset``, with bad input reported by file, row and field.

A source is one of:

- a folder in Hub layout: a ``README.md`` whose YAML front matter lists ``configs:`` with
  ``data_files``, or ``corpus/`` and ``questions/`` subfolders of parquet/jsonl/csv files, or
  ``corpus.*`` and ``questions.*`` files side by side;
- a corpus file plus a questions file (parquet, jsonl, csv), given in that order;
- a Hugging Face Hub repo id (``owner/name``, or ``owner/name@REVISION`` for a branch, tag or
  commit), read with ``datasets.load_dataset`` so that ``HF_HUB_OFFLINE`` and the local cache
  are honoured. Whether the Hub answers is decided first (``hub_unreachable``: at once under
  ``HF_HUB_OFFLINE``, else one HTTP request answered within 2 s in all, so a Hub that accepts
  connections and never answers counts as unreachable); an unreachable Hub is read from the
  cache only, instead of huggingface_hub's minutes of retries. A reachable Hub is given up once
  it has not answered for 20 s (``hub_requests.patience``). The libraries' own logging and
  progress bars never reach the terminal (``quiet.quiet_datasets``).

The source is only ever read. Problems that make the data unusable raise ``InputError``;
problems confined to some rows (a document key that matches no document, a value of the wrong
type, a text field given as a list, a repeated document key, a CSV quote that never closes) are
recorded as ``Problem``s and flag the pairs they touch.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mtcb_curate.collector import collection_paused
from mtcb_curate.errors import InputError
from mtcb_curate.dataset import hub_requests
from mtcb_curate.dataset.model import (
    CorpusFile,
    Dataset,
    Document,
    Problem,
    QAPair,
    SourceInfo,
    document_text,
    encode_text,
)
from mtcb_curate.dataset.profiles import CHUNK_INDEX_COLUMN, Profile, detect_document_key, first_present
from mtcb_curate.dataset.quiet import quiet_datasets

DATA_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv")
#: ``owner/name`` with an optional ``@REVISION`` (a branch, tag, ``refs/pr/N`` or commit sha).
HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<rev>[\w.-]+(?:/[\w.-]+)*))?$")
#: Seconds the reachability probe waits for the Hub's first answer (``hub_requests.probe``).
HUB_PROBE_TIMEOUT = hub_requests.PROBE_TIMEOUT
_UTF8_BOM = b"\xef\xbb\xbf"
#: ``hub_unreachable_why`` value meaning "the Hub answered the probe just now": no second probe.
HUB_ANSWERS = "\x00the Hub answers"


class HubSilent(InputError):
    """A Hub dataset could not be loaded because the Hub stopped answering
    (``hub_requests.patience``): another repo of the same Hub would fare no better."""


@dataclass(slots=True)
class Table:
    """One config read into columns.

    Attributes:
        label: what to call it in messages (a file path, or ``repo:config``).
        columns: column name -> list of Python values, all of length ``nrows``.
        types: column name -> a type name when the format declares one (parquet, Hub), else {}.
        nrows: number of rows.
        row_files: for a config spread over several files, (first row, file) per file, so a
            message can name the file a row came from.
        problems: row problems found while reading (a CSV quote that never closes), with
            global rows; ``build_dataset`` records them and flags the pairs.
        lines: for line-based files (jsonl, csv), the 1-based line each global row starts on
            in its file (what an editor shows), so a message can name it; None for parquet
            and the Hub.
    """

    label: str
    columns: dict[str, list[Any]]
    types: dict[str, str]
    nrows: int
    row_files: list[tuple[int, str]]
    problems: list[tuple[int, str | None, str]] = field(default_factory=list)
    lines: list[int] | None = None

    def line_of(self, row: int) -> int | None:
        """The 1-based line a global row starts on in its file, or None (not a line-based file)."""
        if self.lines is None or not 0 <= row < len(self.lines):
            return None
        return self.lines[row]

    def where(self, row: int) -> tuple[str, int]:
        """The file a global row comes from and the row's 0-based index within that file."""
        current = (0, self.label)
        for start, f in self.row_files:
            if start <= row:
                current = (start, f)
        return current[1], row - current[0]


# ---------------------------------------------------------------------------------------------
# Reading files


def read_file(path: Path) -> Table:
    """Read one parquet, jsonl/json or csv file into a ``Table``.

    Raises:
        InputError: the file is missing, empty, not UTF-8, or not parseable; the message names
            the row (0-based data row) where that is known.
    """
    label = str(path)
    if not path.is_file():
        raise InputError(label, "no such file")
    if path.stat().st_size == 0:
        raise InputError(label, "the file is empty")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _read_parquet(path)
    if suffix in (".jsonl", ".json"):
        return _read_jsonl(path)
    if suffix == ".csv":
        return _read_csv(path)
    raise InputError(label, f"unsupported file type '{suffix}': use parquet, jsonl or csv")


def _read_parquet(path: Path) -> Table:
    # ``ParquetFile.read`` rather than ``pq.read_table``: the latter goes through
    # ``pyarrow.dataset``, whose import pulls in pandas (about 0.3 s of start-up).
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path) as f:
            long = _long_text_columns(f)
            store = corpus_file() if long else None
            if store is None:
                table = f.read(use_threads=False)  # one thread: a pool's freed heaps stay resident
                out = _arrow_to_table(table, str(path))
            else:
                # The long texts a few rows at a time, straight to the corpus file: the whole
                # column is never held (read at once, it left the process far larger:
                # docs/performance.md), nor turned into Python strings.
                others = [n for n in f.schema_arrow.names if n not in long]
                table = f.read(columns=others, use_threads=False)
                out = _arrow_to_table(table, str(path))
                rows = f.metadata.num_rows
                texts = {n: StoredTexts([]) for n in long}
                per_batch = _rows_per_spill(_column_bytes(f, long), rows)
                for batch in f.iter_batches(batch_size=per_batch, columns=long, use_threads=False):
                    for n in long:
                        texts[n].spill(batch.column(n), store)
                    del batch
                columns = {n: texts[n] if n in texts else out.columns[n] for n in f.schema_arrow.names}
                types = {fld.name: _type_name(fld) for fld in f.schema_arrow}
                out = Table(out.label, columns, types, rows, out.row_files)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise InputError(str(path), f"not a readable parquet file ({_one_line(exc)})") from None
    del table
    _release_arrow_memory()
    return out


#: A string column whose values average more UTF-8 bytes than this (document texts) is written
#: to the corpus file as it is read (:class:`StoredTexts`), not turned into Python ``str``.
LONG_TEXT_BYTES = 4096
#: Bytes of long texts read from a parquet file per step.
SPILL_BYTES = 4 << 20


class StoredTexts(Sequence):
    """A column of long texts kept in corpus files (``dataset.model.CorpusFile``), not in
    memory: ``[row]`` is the value as ``str`` (or None), :meth:`data` its UTF-8 bytes and
    :meth:`entry` where they are, so a document refers to them without a copy (a document's
    text is never decoded to be encoded again)."""

    def __init__(self, entries: list[tuple[CorpusFile, int, int] | None]):
        self.entries = entries

    def spill(self, column: Any, store: CorpusFile) -> None:
        """Write the values of an Arrow string column to ``store`` and add them."""
        import pyarrow as pa

        binary = column.cast(pa.large_binary() if pa.types.is_large_string(column.type) else pa.binary())
        for value in binary:  # a cast of the same buffers: no str made
            data = value.as_py()
            self.entries.append(None if data is None else (store, *store.append(data)))

    def __getitem__(self, row):  # type: ignore[override]
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        data = self.data(row)
        return None if data is None else document_text(data)

    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, row: int) -> tuple[CorpusFile, int, int] | None:
        """``(file, start, end)`` of row ``row``'s bytes, or None for a null."""
        return self.entries[row]

    def data(self, row: int) -> bytes | None:
        """Row ``row``'s UTF-8 bytes, or None for a null."""
        e = self.entries[row]
        return None if e is None else e[0].read(e[1], e[2])


def _long_text_columns(f: Any) -> list[str]:
    """The string columns of a parquet file whose values average over :data:`LONG_TEXT_BYTES`
    (from the file's metadata: nothing read)."""
    rows = f.metadata.num_rows
    if not rows:
        return []
    names = [fld.name for fld in f.schema_arrow if _is_text(fld.type)]
    return [n for n in names if _column_bytes(f, [n]) > LONG_TEXT_BYTES * rows]


def _is_text(arrow_type: Any) -> bool:
    """True for Arrow's ``string`` and ``large_string``."""
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _rows_per_spill(nbytes: int, rows: int) -> int:
    """Rows of a long-text column (``nbytes`` over ``rows``) written to the corpus file per step:
    about :data:`SPILL_BYTES` of texts, at least one row."""
    return max(1, SPILL_BYTES // max(1, nbytes // max(1, rows)))


def _column_bytes(f: Any, names: list[str]) -> int:
    """Uncompressed bytes of the named top-level columns of a parquet file (its metadata)."""
    meta = f.metadata
    wanted = set(names)
    total = 0
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            if col.path_in_schema.split(".")[0] in wanted:
                total += col.total_uncompressed_size
    return total


def _type_name(fld: Any) -> str:
    import pyarrow as pa

    return str(fld.type.value_type if pa.types.is_dictionary(fld.type) else fld.type)


def _arrow_to_table(table: Any, label: str) -> Table:
    """Columns as Python values and their arrow type names. A dictionary-encoded column (what
    pandas writes for a ``category``) holds its values: it gets the values' type name. A string
    column of long texts (:data:`LONG_TEXT_BYTES`) is written to a corpus file a few rows at a
    time (:class:`StoredTexts`) when one can be made."""
    columns: dict[str, Any] = {}
    store: CorpusFile | None = None
    rows = table.num_rows
    for name in table.column_names:
        column = table.column(name)
        if rows and _is_text(column.type) and column.nbytes > LONG_TEXT_BYTES * rows:
            store = store or corpus_file()
            if store is not None:
                texts = StoredTexts([])
                step = _rows_per_spill(column.nbytes, rows)
                for first in range(0, rows, step):
                    texts.spill(column.slice(first, step), store)
                columns[name] = texts
                continue
        columns[name] = _text_values(column) if _is_text(column.type) else column.to_pylist()
    types = {f.name: _type_name(f) for f in table.schema}
    return Table(label, columns, types, table.num_rows, [(0, label)])


def _text_values(column: Any) -> list[str | None]:
    """An Arrow string column's values as ``column.to_pylist()`` gives them (``str`` or None),
    equal values as one ``str`` object: a column of document keys or company names repeats a
    few values over every pair, and a ``str`` per row would hold each again (about 50 bytes
    plus the characters a row). (Arrow's dictionary encoding makes fewer ``str`` but leaves
    its pool larger by more than it saves.)"""
    seen: dict[str, str] = {}
    return [v if v is None else seen.setdefault(v, v) for v in column.to_pylist()]


def _release_arrow_memory() -> None:
    """Hand the memory of dropped Arrow tables back to the system: pyarrow's default pool
    (mimalloc or jemalloc) keeps freed pages, about 110 MB after a 48 MB corpus is read."""
    import pyarrow

    pyarrow.default_memory_pool().release_unused()


def _read_jsonl(path: Path) -> Table:
    label = str(path)
    data = path.read_bytes()
    if data.startswith(_UTF8_BOM):  # as CSV: a BOM some editors write is not part of the data
        data = data[len(_UTF8_BOM):]
    if not data.strip():
        raise InputError(label, "the file is empty")
    if path.suffix.lower() == ".json" and data.lstrip()[:1] == b"[":
        try:
            rows = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(label, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise InputError(label, f"not valid JSON ({_json_msg(exc)} line {exc.lineno})") from None
        return _rows_to_table(rows, label)
    rows: list[Any] = []
    lines: list[int] = []
    row = 0
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(label, f"not valid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})",
                             row=row, line=number) from None
        try:
            rows.append(json.loads(text))
        except json.JSONDecodeError as exc:
            raise InputError(label, f"not valid JSON ({_json_msg(exc)} column {exc.colno})", row=row,
                             line=number) from None
        lines.append(number)
        row += 1
    return _rows_to_table(rows, label, lines)


def _json_msg(exc: json.JSONDecodeError) -> str:
    """``json``'s message ready for a position: ``Expecting value at`` (its messages that end in
    "at" already have it: ``Unterminated string starting at``)."""
    return exc.msg if exc.msg.rstrip().endswith(" at") else f"{exc.msg} at"


def _rows_to_table(rows: list[Any], label: str, lines: list[int] | None = None) -> Table:
    if not rows:
        raise InputError(label, "the file has no rows")
    names: dict[str, None] = {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise InputError(label, f"each row must be a JSON object, found {type(r).__name__}", row=i,
                             line=lines[i] if lines else None)
        for k in r:
            names.setdefault(k, None)
    columns = {n: [r.get(n) for r in rows] for n in names}
    return Table(label, columns, {}, len(rows), [(0, label)], lines=lines)


def _read_csv(path: Path) -> Table:
    import csv
    import io

    label = str(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _csv_bad_utf8(label, data, exc) from None
    # newline='': records end only at \r, \n or \r\n (str.splitlines would also cut a row at a
    # form feed or U+2028 inside an unquoted cell, as in PDF-extracted text).
    reader = csv.DictReader(io.StringIO(text, newline=""))
    # The csv module refuses cells over 131,072 characters by default; a 10-K is up to ~1.2 M.
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    rows, lines = [], []
    try:
        start = 2  # the header is line 1
        for r in reader:
            rows.append(dict(r))
            lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(label, f"not valid CSV ({exc})", row=max(0, reader.line_num - 2),
                         line=reader.line_num) from None
    if reader.fieldnames is None:
        raise InputError(label, "the file is empty")
    for r in rows:
        r.pop(None, None)  # extra unnamed cells
        # CSV has no types: a chunk_index cell is text, so digits are the number they spell.
        ci = r.get(CHUNK_INDEX_COLUMN)
        if ci == "":
            r[CHUNK_INDEX_COLUMN] = None
        elif isinstance(ci, str) and ci.strip().isdigit():
            r[CHUNK_INDEX_COLUMN] = int(ci)
    if not rows:
        raise InputError(label, "the file has no rows")
    table = _rows_to_table(rows, label, lines)
    bad = _bad_quote(text)
    if bad is not None:
        opened, closed = bad
        row, col = _csv_position(text, opened, reader.fieldnames)
        line = text.count("\n", 0, opened) + 1
        if closed is None:
            msg = f"an unterminated quote (opened on line {line}): the rest of the file was read into this cell"
        else:
            msg = (f"a malformed quote (opened on line {line}, closed on line {text.count(chr(10), 0, closed) + 1} "
                   f"in the middle of a field): the cells from here on may be merged or shifted")
        table.problems.append((min(row, table.nrows - 1), col, msg))
    return table


def _csv_bad_utf8(label: str, data: bytes, exc: UnicodeDecodeError) -> InputError:
    """The error for a CSV file with a byte that is not UTF-8: the row, field and line it is in
    (as the JSON Lines reader names them), and the byte."""
    import csv
    import io

    start = exc.start + (len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0)
    prefix = data[:start].decode("utf-8-sig")
    line = prefix.count("\n") + 1
    line_start = data.rfind(b"\n", 0, start) + 1 or (len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0)
    column = start - line_start + 1  # 1-based, in bytes
    what = f"not valid UTF-8 (byte 0x{data[start]:02x} at column {column})"
    header = next(csv.reader(io.StringIO(prefix, newline="")), None) if "\n" in prefix else None
    if header is None:
        return InputError(label, what + " in the header", line=line)
    row, field = _csv_position(prefix, len(prefix), header)
    return InputError(label, what, row=row, field=field, line=line)


def _bad_quote(text: str) -> tuple[int, int | None] | None:
    """The first quoted CSV field whose quote never closes, or closes before the field ends:
    (offset of the opening quote, offset of the closing one or None), or None when all is well.

    Follows the ``csv`` module's default dialect (``"`` quotes a field only at its start, ``""``
    inside is a literal quote). The module itself reads an unclosed quote to the end of the
    file, and text after a closing quote into the same cell, without complaint: a quote left
    open in one cell typically "closes" at the next quoted cell and shifts everything between.
    """
    opened: int | None = None
    skip = -1
    for m in re.finditer('"', text):
        i = m.start()
        if i == skip:
            continue
        if opened is None:
            if i == 0 or text[i - 1] in ",\r\n":
                opened = i
        elif i + 1 < len(text) and text[i + 1] == '"':
            skip = i + 1  # an escaped quote
        elif i + 1 < len(text) and text[i + 1] not in ",\r\n":
            return opened, i
        else:
            opened = None
    return None if opened is None else (opened, None)


def _csv_position(text: str, offset: int, fieldnames: Any) -> tuple[int, str | None]:
    """The 0-based data row and the column of the field starting at ``offset``."""
    import csv
    import io

    marker = "\x00mtcb-curate\x00"
    records = [r for r in csv.reader(io.StringIO(text[:offset] + marker, newline="")) if r]  # as DictReader
    last = records[-1] if records else []
    col = len(last) - 1
    names = list(fieldnames or [])
    return max(0, len(records) - 2), names[col] if 0 <= col < len(names) else None


def _concat(tables: list[Table], label: str) -> Table:
    if len(tables) == 1:
        return tables[0]
    names: dict[str, None] = {}
    for t in tables:
        for n in t.columns:
            names.setdefault(n, None)
    # long texts in corpus files stay there (``StoredTexts``): the others become one list
    columns: dict[str, Any] = {n: StoredTexts([]) if all(isinstance(t.columns.get(n), StoredTexts) for t in tables)
                               else [] for n in names}
    row_files: list[tuple[int, str]] = []
    problems: list[tuple[int, str | None, str]] = []
    lines: list[int] | None = [] if all(t.lines is not None for t in tables) else None
    total = 0
    for t in tables:
        row_files.append((total, t.label))
        if lines is not None:
            lines.extend(t.lines)
        for n in names:
            got = columns[n]
            if isinstance(got, StoredTexts):
                got.entries.extend(t.columns[n].entries)
            else:
                got.extend(t.columns.get(n, [None] * t.nrows))
        problems.extend((total + row, fld, msg) for row, fld, msg in t.problems)
        total += t.nrows
    types = {}
    for t in tables:
        types.update(t.types)
    return Table(label, columns, types, total, row_files, problems, lines)


# ---------------------------------------------------------------------------------------------
# Locating the two configs


def _front_matter(readme: Path) -> dict[str, Any] | None:
    import yaml

    text = readme.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    try:
        meta = yaml.safe_load(text[3:end])
    except yaml.YAMLError as exc:
        raise InputError(str(readme), f"invalid YAML front matter ({_one_line(exc)})") from None
    return meta if isinstance(meta, dict) else None


def _config_files(folder: Path, config: dict[str, Any], readme: Path) -> list[Path]:
    spec = config.get("data_files")
    patterns: list[str] = []
    if isinstance(spec, str):
        patterns = [spec]
    elif isinstance(spec, list):
        splits = [s for s in spec if isinstance(s, dict)]
        chosen = [s for s in splits if s.get("split") == "train"] or splits[:1]
        for s in chosen:
            p = s.get("path")
            patterns.extend([p] if isinstance(p, str) else list(p or []))
        patterns.extend(s for s in spec if isinstance(s, str))
    elif isinstance(spec, dict):
        p = spec.get("train") or next(iter(spec.values()), None)
        patterns = [p] if isinstance(p, str) else list(p or [])
    files: list[Path] = []
    for pattern in patterns:
        files.extend(Path(p) for p in sorted(glob.glob(str(folder / pattern), recursive=True)))
    if not files:
        raise InputError(str(readme), f"config '{config.get('config_name')}' lists data_files that match no file",
                         field="configs")
    return files


def _folder_configs(folder: Path, profile: Profile) -> tuple[list[Path], list[Path]]:
    """Find the corpus and questions files of a folder, in Hub layout or side by side."""
    readme = folder / "README.md"
    wanted = (profile.corpus_config, profile.questions_config)
    if readme.is_file():
        meta = _front_matter(readme)
        configs = meta.get("configs") if meta else None
        if isinstance(configs, list):
            by_name = {c.get("config_name"): c for c in configs if isinstance(c, dict)}
            missing = [w for w in wanted if w not in by_name]
            if missing:
                raise InputError(str(readme), f"no '{missing[0]}' config (found: {', '.join(map(str, by_name)) or 'none'})",
                                 field="configs")
            return (_config_files(folder, by_name[wanted[0]], readme),
                    _config_files(folder, by_name[wanted[1]], readme))
    found: list[list[Path]] = []
    for name in wanted:
        sub = folder / name
        if sub.is_dir():
            files = sorted(p for p in sub.rglob("*") if p.suffix.lower() in DATA_SUFFIXES and p.is_file())
            if not files:
                raise InputError(str(sub), f"the '{name}' folder holds no parquet, jsonl or csv file")
            found.append(files)
            continue
        side = sorted(p for p in folder.glob(f"{name}.*") if p.suffix.lower() in DATA_SUFFIXES)
        if side:
            found.append(side[:1])
            continue
        raise InputError(str(folder), f"no '{name}' config: expected README.md configs, a '{name}/' folder "
                                      f"or a '{name}.jsonl' / '{name}.parquet' file")
    return found[0], found[1]


def _read_config(files: list[Path], label: str) -> Table:
    return _concat([read_file(f) for f in files], label)


# ---------------------------------------------------------------------------------------------
# The Hugging Face Hub


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _probe(url: str, timeout: float) -> str | None:
    """None when ``url`` answers within ``timeout`` seconds in all, else why not
    (``hub_requests.probe``)."""
    return hub_requests.probe(url, timeout)


def hub_unreachable(timeout: float = HUB_PROBE_TIMEOUT) -> str | None:
    """Why the Hugging Face Hub cannot be reached, or None when it answers.

    ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) set means unreachable at once. Otherwise
    one HTTP request to ``HF_ENDPOINT`` (default ``https://huggingface.co``), through the proxy
    the environment names, must be answered within ``timeout`` seconds in all (default 2):
    a Hub that accepts connections and never answers is unreachable. A Hub that answers is no
    promise that a dataset loads; it only tells the real loading path from the cache-only one.
    """
    if _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"):
        return "HF_HUB_OFFLINE is set"
    import urllib.parse

    url = hub_requests.endpoint()
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or "huggingface.co"
    where = f"{host}:{parts.port or (80 if parts.scheme == 'http' else 443)}"
    why = _probe(url + "/", timeout)
    return None if why is None else f"{where}: {why}"


@contextmanager
def _hub_offline() -> Iterator[None]:
    """huggingface_hub's and datasets' offline mode for the duration: the cache only, no request.

    Both read ``HF_HUB_OFFLINE`` at import; their module constants are what the code consults.
    """
    import datasets.config as datasets_config
    from huggingface_hub import constants

    saved = constants.HF_HUB_OFFLINE, datasets_config.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = datasets_config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets_config.HF_HUB_OFFLINE = saved


_SHA = re.compile(r"^[0-9a-f]{40}$")


def _maybe_cached(repo_id: str) -> bool:
    """False only when neither cache can hold ``repo_id``: no ``datasets--OWNER--NAME`` in
    huggingface_hub's cache and no ``OWNER___*`` folder in ``datasets``' cache.

    Importing ``datasets`` takes about 2 s; with the Hub unreachable and nothing cached, this
    check spares it. Folder names as in huggingface_hub 2.4 (``constants.HF_HUB_CACHE``) and
    datasets 5.2 (``config.HF_DATASETS_CACHE``, ``namespace___name``); when in doubt, True.
    """
    owner, _, name = repo_id.partition("/")
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    hub_cache = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
    datasets_cache = os.environ.get("HF_DATASETS_CACHE") or os.path.join(home, "datasets")
    if os.path.isdir(os.path.join(hub_cache, f"datasets--{owner}--{name}")):
        return True
    try:
        entries = os.listdir(datasets_cache)
    except OSError:
        return False
    prefix = f"{owner}___".lower()
    return any(e.lower().startswith(prefix) for e in entries)


def warm_up(repo_ids: list[str]) -> None:
    """Start importing ``datasets`` (about 2 s) in a daemon thread when one of ``repo_ids`` may
    be in the local cache (and ``HF_HUB_OFFLINE`` is not set), so the import overlaps the
    reachability probe: with a Hub that never answers, the cached copy then costs the probe's
    2 s, not the probe and the import one after the other. Nothing is imported when the cache
    cannot hold them (the bundled sample does not need ``datasets``)."""
    import sys
    import threading

    if "datasets" in sys.modules or _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"):
        return
    if not any(_maybe_cached(split_revision(r)[0]) for r in repo_ids if HUB_ID.match(r)):
        return

    def _import() -> None:
        try:
            import datasets  # noqa: F401
        except Exception:  # noqa: BLE001 - the load's own import reports it
            pass

    threading.Thread(target=_import, name="mtcb-datasets-import", daemon=True).start()


def _hub_load(repo_id: str, config: str, revision: str | None, offline: bool) -> tuple[Table, str | None]:
    """One config of a Hub dataset, and the commit sha it was read at when known.

    The sha is the name of the folder ``datasets`` caches a Hub dataset's arrow files in (the
    commit it resolved the revision to); None when that folder is not named by a sha.

    Raises:
        InputError: ``datasets`` cannot load it (not found, no network, not cached ...).
    """
    label = f"{repo_id}{'@' + revision if revision else ''}:{config}"
    if offline and not _maybe_cached(repo_id):
        raise InputError(label, "cannot load from its local cache (not in it)")
    try:
        import datasets

        with quiet_datasets():
            if offline:
                with _hub_offline():
                    ds = datasets.load_dataset(repo_id, config, split="train", revision=revision)
            else:
                with hub_requests.patience():
                    ds = datasets.load_dataset(repo_id, config, split="train", revision=revision)
    except Exception as exc:  # datasets raises many types; all mean "cannot load"
        where = "its local cache" if offline else "the Hugging Face Hub or its cache"
        cause = _root_cause(exc)
        kind = HubSilent if isinstance(cause, hub_requests.HubNoAnswer) else InputError
        raise kind(label, f"cannot load from {where} ({_one_line(cause, 160)})") from None
    commit = None
    files = ds.cache_files
    if files:
        folder = Path(files[0].get("filename", "")).parent.name
        commit = folder if _SHA.match(folder) else None
    return _arrow_to_table(ds.data.table, label), commit


def is_hub_id(spec: str) -> bool:
    """True when ``spec`` looks like ``owner/name`` or ``owner/name@REVISION`` and is not an
    existing local path."""
    return bool(HUB_ID.match(spec)) and not Path(spec).exists()


def split_revision(spec: str) -> tuple[str, str | None]:
    """``owner/name@REVISION`` -> (``owner/name``, ``REVISION``); ``owner/name`` -> (it, None).

    Raises:
        InputError: ``spec`` is not a Hub repo id.
    """
    m = HUB_ID.match(spec)
    if m is None:
        raise InputError(spec, "not a Hub repo id (owner/name or owner/name@REVISION)")
    return m.group("repo"), m.group("rev")


def read_hub(spec: str, profile: Profile, *, unreachable: str | None = None) -> tuple[Table, Table, SourceInfo]:
    """Read both configs of the Hub dataset ``owner/name[@REVISION]``.

    Args:
        spec: the repo id, with an optional revision.
        profile: gives the config names.
        unreachable: why the Hub is known to be unreachable (read from the cache only),
            ``HUB_ANSWERS`` when it is known to answer, or None to ask ``hub_unreachable`` first.

    Raises:
        InputError: it cannot be loaded; when the Hub is unreachable the message says so.
    """
    repo_id, revision = split_revision(spec)
    if unreachable is None:
        unreachable = hub_unreachable()
    elif unreachable == HUB_ANSWERS:
        unreachable = None
    offline = unreachable is not None
    try:
        corpus, commit = _hub_load(repo_id, profile.corpus_config, revision, offline)
        questions, q_commit = _hub_load(repo_id, profile.questions_config, revision, offline)
    except InputError as exc:
        if offline:
            raise InputError(exc.file, f"not in the local cache, and the Hugging Face Hub is unreachable "
                                       f"({unreachable})") from None
        raise
    return corpus, questions, SourceInfo("hub", repo_id, revision=revision, commit=commit or q_commit)


def read_tables(spec: list[str], profile: Profile, *,
                hub_unreachable_why: str | None = None) -> tuple[Table, Table, SourceInfo]:
    """Read the corpus and questions configs named by ``spec``.

    Args:
        spec: one folder, one Hub repo id (``owner/name[@REVISION]``), or two files (corpus,
            questions).
        profile: gives the config names.
        hub_unreachable_why: for a Hub id, why the Hub is already known to be unreachable (it
            is then read from the cache only); None to probe (``hub_unreachable``).

    Returns:
        (corpus table, questions table, source info without a reason).

    Raises:
        InputError: a missing path or config, or an unreadable file.
    """
    if len(spec) == 2:
        c, q = Path(spec[0]), Path(spec[1])
        return read_file(c), read_file(q), SourceInfo("files", f"{c} + {q}")
    if len(spec) != 1:
        raise InputError("--source", "give one folder or Hub repo id, or two files: CORPUS QUESTIONS")
    one = spec[0]
    path = Path(one)
    if path.is_dir():
        cf, qf = _folder_configs(path, profile)
        return (_read_config(cf, str(cf[0]) if len(cf) == 1 else str(path / profile.corpus_config)),
                _read_config(qf, str(qf[0]) if len(qf) == 1 else str(path / profile.questions_config)),
                SourceInfo("folder", str(path)))
    if path.is_file():
        raise InputError(one, "a single file is not a dataset: give the corpus file and the questions file")
    if is_hub_id(one):
        return read_hub(one, profile, unreachable=hub_unreachable_why)
    raise InputError(one, "no such file or folder, and not a Hub repo id (owner/name or owner/name@REVISION)")


# ---------------------------------------------------------------------------------------------
# Tables -> Dataset


def _require(table: Table, candidates: tuple[str, ...], what: str) -> str:
    col = first_present(candidates, list(table.columns))
    if col is None:
        raise InputError(table.label, f"no {what} column: expected {' or '.join(repr(c) for c in candidates)}; "
                                      f"found {', '.join(table.columns) or 'no columns'}", field=candidates[0])
    return col


def _check_type(table: Table, column: str, allowed: tuple[str, ...]) -> None:
    t = table.types.get(column)
    if t is not None and not any(t.startswith(a) for a in allowed) and t != "null":
        raise InputError(table.label, f"column has type {t}, expected {' or '.join(allowed)}", field=column)


def _key_str(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (str, int)):
        return str(value)
    return None


def build_dataset(name: str, profile: Profile, corpus: Table, questions: Table, source: SourceInfo) -> Dataset:
    """Link a corpus table and a questions table into a ``Dataset``.

    Pair ids are the questions' 0-based rows. Column choice follows ``profile`` (with the
    document key detected from the shared columns when the profile has none). The documents'
    bytes are written to a :class:`~mtcb_curate.dataset.model.CorpusFile` and read from it on
    access (when no folder can hold the file: kept in memory).

    Raises:
        InputError: a required column is missing or of the wrong type, no document key can be
            found, or a config has no rows.
    """
    if corpus.nrows == 0:
        raise InputError(corpus.label, "the corpus config has no rows")
    if questions.nrows == 0:
        raise InputError(questions.label, "the questions config has no rows")

    text_col = _require(corpus, profile.text_columns, "document text")
    question_col = _require(questions, profile.question_columns, "question")
    passage_col = _require(questions, profile.passage_columns, "supporting passage")
    answer_col = first_present(profile.answer_columns, list(questions.columns))

    qkey = profile.question_key
    ckey = profile.corpus_key or qkey
    if qkey is None:
        qkey = ckey = detect_document_key(list(questions.columns), list(corpus.columns))
        if qkey is None:
            raise InputError(questions.label, "cannot tell which column links a question to its document: "
                                              "the configs share no key column; pass --doc-key",
                             field="document key")
    if qkey not in questions.columns:
        raise InputError(questions.label, f"no document key column '{qkey}' (found {', '.join(questions.columns)})",
                         field=qkey)
    if ckey not in corpus.columns:
        raise InputError(corpus.label, f"no document key column '{ckey}' (found {', '.join(corpus.columns)})",
                         field=ckey)
    for table, col in ((corpus, text_col), (questions, question_col), (questions, passage_col)):
        _check_type(table, col, ("string", "large_string"))
    if answer_col:
        _check_type(questions, answer_col, ("string", "large_string", "list", "large_list"))
    _check_type(questions, qkey, ("string", "large_string", "int", "uint"))
    _check_type(corpus, ckey, ("string", "large_string", "int", "uint"))
    if CHUNK_INDEX_COLUMN in questions.columns:
        _check_type(questions, CHUNK_INDEX_COLUMN, ("int", "uint", "double", "float"))

    problems: list[Problem] = []

    def problem(table: Table, row: int, fld: str | None, msg: str, pair_id: int | None = None) -> Problem:
        file, local = table.where(row)
        p = Problem(file, local, fld, msg, pair_id, line=table.line_of(row))
        problems.append(p)
        return p

    # Problems found while reading the files (a CSV quote that never closes)
    read_flags: dict[int, list[str]] = {}  # questions row -> flags
    for row, fld, msg in corpus.problems:
        problem(corpus, row, fld, msg)
    for row, fld, msg in questions.problems:
        p = problem(questions, row, fld, msg, row)
        read_flags.setdefault(row, []).append(p.message if p.field is None else f"{p.field}: {p.message}")

    # Corpus
    documents: dict[str, Document] = {}
    key_rows: dict[str, list[int]] = {}
    other_cols = [c for c in corpus.columns if c not in (text_col, ckey)]
    texts, keys = corpus.columns[text_col], corpus.columns[ckey]
    stored = isinstance(texts, StoredTexts)  # already in a corpus file: referred to, not copied
    store = corpus_file() if not stored else None
    for row in range(corpus.nrows):
        key = _key_str(keys[row])
        if key is None:
            problem(corpus, row, ckey, f"document key is {_describe(keys[row])}; the document cannot be linked")
            continue
        key_rows.setdefault(key, []).append(row)
        entry = texts.entry(row) if stored else None
        text = None if stored else texts[row]
        if entry is None and not isinstance(text, str):
            # a repeated key's row (said below) is not linked: its pairs link to the first row
            problem(corpus, row, text_col, f"document text is {_describe(text)}"
                    + ("" if key in documents else "; shown as empty"))
            text = ""
        if key in documents:
            continue
        meta = {c: corpus.columns[c][row] for c in other_cols}
        if entry is not None:
            documents[key] = Document.at(key, *entry, row, meta)
            continue
        if store is None:
            documents[key] = Document(key, text, row, meta)
        else:
            documents[key] = Document.stored(key, encode_text(text), store, row, meta)
    duplicated = {k: rows for k, rows in key_rows.items() if len(rows) > 1}
    for k, rows in duplicated.items():
        problem(corpus, rows[1], ckey, f"document key '{k}' repeats (rows {', '.join(map(str, rows))}); "
                                       f"pairs link to row {rows[0]}")

    # Questions
    pairs: list[QAPair] = []
    qcols = questions.columns
    meta_cols = [c for c in qcols if c not in (question_col, passage_col, answer_col, qkey, CHUNK_INDEX_COLUMN)]
    chunk_values = qcols.get(CHUNK_INDEX_COLUMN)

    def text_field(row: int, col: str | None, label: str, flags: list[str], list_ok: bool = False) -> str:
        """A text cell that is not a plain string: read what can be read, and say so."""
        if col is None:
            return ""
        v = qcols[col][row]
        if isinstance(v, str):
            return v
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            if list_ok:  # SQuAD-style answers list: any of them is the answer
                return v[0] if v else ""
            p = problem(questions, row, col, f"{label} is a list of {len(v)} strings, expected one string; "
                                             f"the first is shown", row)
            flags.append(f"{p.field}: {p.message}")
            return v[0] if v else ""
        p = problem(questions, row, col, f"{label} is {_describe(v)}", row)
        flags.append(p.message if p.field is None else f"{p.field}: {p.message}")
        return "" if v is None else str(v)

    q_values, p_values = qcols[question_col], qcols[passage_col]
    a_values = qcols[answer_col] if answer_col else None
    key_values = qcols[qkey]
    for row in range(questions.nrows):
        flags: list[str] = list(read_flags.get(row, ()))
        # The plain case (a string in each cell) without a call per cell: 100,000 pairs load
        # in a fraction of the time a helper per field took.
        question = q_values[row]
        if type(question) is not str:
            question = text_field(row, question_col, "question", flags)
        passage = p_values[row]
        if type(passage) is not str:
            passage = text_field(row, passage_col, "supporting passage", flags)
        answer = "" if a_values is None else a_values[row]
        if type(answer) is not str:
            answer = text_field(row, answer_col, "answer", flags, list_ok=True)
        raw_key = key_values[row]
        key = raw_key if type(raw_key) is str else _key_str(raw_key)
        if key is None:
            p = problem(questions, row, qkey, f"document key is {_describe(raw_key)}", row)
            flags.append(f"{qkey}: {p.message}")
            key = ""
        elif key not in documents:
            p = problem(questions, row, qkey, f"'{key}' matches no document in the corpus", row)
            flags.append(f"{qkey}: {p.message}")
        elif key in duplicated:
            flags.append(f"{qkey}: '{key}' matches {len(duplicated[key])} corpus rows")
        chunk_index = None
        if chunk_values is not None:
            v = chunk_values[row]
            if isinstance(v, bool):
                v = str(v)
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if isinstance(v, str) and v.strip().isdigit():
                # A typed format (jsonl, parquet, the Hub) holding the number as text: read it,
                # but say so (CSV cells were converted when the file was read).
                chunk_index = int(v)
                p = problem(questions, row, CHUNK_INDEX_COLUMN,
                            f"chunk_index is the string {_describe(v)}, expected a whole number; read as {chunk_index}",
                            row)
                flags.append(f"{CHUNK_INDEX_COLUMN}: {p.message}")
            elif isinstance(v, int) and v >= 0:
                chunk_index = v
            elif v is not None and not (isinstance(v, float) and math.isnan(v)):
                p = problem(questions, row, CHUNK_INDEX_COLUMN, f"chunk_index is {_describe(v)}, expected a whole number >= 0", row)
                flags.append(f"{CHUNK_INDEX_COLUMN}: {p.message}")
        pairs.append(QAPair(row, question, answer, passage, key, chunk_index,
                            {c: qcols[c][row] for c in meta_cols}, flags))

    columns = {"doc_key": qkey, "corpus_key": ckey, "text": text_col, "question": question_col,
               "passage": passage_col}
    if answer_col:
        columns["answer"] = answer_col
    if CHUNK_INDEX_COLUMN in questions.columns:
        columns["chunk_index"] = CHUNK_INDEX_COLUMN
    return Dataset(name, profile, documents, pairs, source, columns, problems, duplicated)


def corpus_file() -> CorpusFile | None:
    """A new :class:`~mtcb_curate.dataset.model.CorpusFile` for a dataset's documents, or None
    when no folder can hold one (the documents are then kept in memory)."""
    try:
        return CorpusFile()
    except OSError:
        return None


def load(name: str, profile: Profile, spec: list[str], reason: str = "", *,
         hub_unreachable_why: str | None = None) -> Dataset:
    """Read ``spec`` (see ``read_tables``) and link it into a ``Dataset``.

    Raises:
        InputError: when the data cannot be used at all.
    """
    corpus, questions, source = read_tables(spec, profile, hub_unreachable_why=hub_unreachable_why)
    with collection_paused():
        dataset = build_dataset(name, profile, corpus, questions, replace(source, reason=reason))
    del corpus, questions
    if "pyarrow" in sys.modules:  # once more: the pool still kept pages of the reads here
        _release_arrow_memory()
    return dataset


def _root_cause(exc: BaseException) -> BaseException:
    """``exc``, or the ``hub_requests.HubNoAnswer`` it was raised from (``datasets`` wraps
    errors in its own), so the message says the Hub gave no answer."""
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in seen and len(seen) < 20:
        if isinstance(e, hub_requests.HubNoAnswer):
            return e
        seen.append(e)
        e = e.__cause__ or e.__context__
    return exc


def _describe(v: Any) -> str:
    if v is None:
        return "missing (null)"
    if isinstance(v, str):
        return "an empty string" if not v else f"'{v[:30]}'"
    return f"of type {type(v).__name__} ({str(v)[:30]!r})"


def _one_line(exc: BaseException, max_chars: int = 300) -> str:
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return msg if len(msg) <= max_chars else msg[:max_chars - 3] + "..."
