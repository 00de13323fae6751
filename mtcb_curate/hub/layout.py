"""The Hugging Face Hub layout of an MTCB dataset: two configs, one ``train`` split each.

MTCB evaluators load a dataset as ``datasets.load_dataset(REPO, "corpus", split="train")`` and
``datasets.load_dataset(REPO, "questions", split="train")``. That works when the repository
(or a local folder) holds::

    README.md                                    # YAML front matter: configs -> data_files
    corpus/train-00000-of-00001.parquet
    questions/train-00000-of-00001.parquet

and the README's ``configs:`` front matter registers both configs with split ``train``. A card
without it does not load (hojicha's configs were not registered and did not load; see
``shared/notes/mtcb.md``). This module writes exactly that layout, deterministically:

- same tables in, same bytes out (for a given pyarrow version): fixed writer options, no
  timestamps, row order as given;
- ``content_hash`` gives a value that is equal for equal content whatever the file bytes or
  the arrow string type, so a table written here and loaded back with ``datasets`` can be
  compared.

``write_hub_layout`` is the one function that writes the layout to a folder; ``layout_files``
gives the same files as bytes (what a publish commits).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from mtcb_curate.files import write_folder

CORPUS_CONFIG = "corpus"
QUESTIONS_CONFIG = "questions"
SPLIT = "train"
README = "README.md"

#: Parquet writer options. Content-defined chunking and the page index are what
#: ``datasets`` 5.x uses for ``push_to_hub`` (``datasets.arrow_writer.ParquetWriter``, options
#: ``datasets.config.DEFAULT_CDC_OPTIONS``): pages are cut where the content says, so a small
#: change in a re-published corpus changes few pages and uploads little on Xet storage.
#: zstd as in the bundled sample and the synthetic benchmark data.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "write_page_index": True,
    "use_content_defined_chunking": {"min_chunk_size": 256 * 1024, "max_chunk_size": 1024 * 1024,
                                     "norm_level": 0},
}

TableLike = pa.Table | Sequence[Mapping[str, Any]]


def data_file(config: str) -> str:
    """The repository path of a config's single ``train`` shard: ``CONFIG/train-00000-of-00001.parquet``."""
    return f"{config}/{SPLIT}-00000-of-00001.parquet"


def config_entries(configs: Sequence[str] = (CORPUS_CONFIG, QUESTIONS_CONFIG), *,
                   path: str | None = None) -> list[dict[str, Any]]:
    """The ``configs:`` front-matter entries registering each config with split ``train``.

    By default the path is the exact shard file (``data_file``), not a glob: a stale shard
    left in the repository by an earlier publish (``train-00000-of-00002.parquet`` ...) is then
    never loaded as well. ``path`` is a format string with ``{config}`` for another layout,
    e.g. ``"{config}/train-*.parquet"`` for a config split into several shards.
    """
    return [{"config_name": c, "data_files": [{"split": SPLIT, "path": (path or data_file("{config}")).format(config=c)}]}
            for c in configs]


def front_matter(metadata: Mapping[str, Any]) -> str:
    """``metadata`` as a README front-matter block (``---`` YAML ``---``), key order kept.

    YAML is written by ``yaml.safe_dump``, so any string value is quoted as needed and cannot
    end the block or inject keys.
    """
    text = yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True, default_flow_style=False,
                          width=1000)
    return f"---\n{text}---\n"


def to_table(data: TableLike, schema: pa.Schema | None = None) -> pa.Table:
    """A pyarrow table from a table or from rows (dicts), cast to ``schema`` when given.

    Raises:
        ValueError: a value does not fit the schema, or a string is not valid Unicode (a lone
            surrogate): the message names the column.
    """
    if isinstance(data, pa.Table):
        return data if schema is None or data.schema.equals(schema) else data.select(schema.names).cast(schema)
    rows = list(data)
    try:
        if schema is not None:
            return pa.Table.from_pylist(rows, schema=schema)
        return pa.Table.from_pylist(rows)
    except (pa.ArrowException, UnicodeEncodeError) as exc:
        raise ValueError(f"cannot build a table from the rows: {' '.join(str(exc).split())[:200]}") from None


def parquet_bytes(table: pa.Table) -> bytes:
    """``table`` as one parquet file (``PARQUET_OPTIONS``); equal tables give equal bytes."""
    buf = io.BytesIO()
    pq.write_table(table, buf, **PARQUET_OPTIONS)
    return buf.getvalue()


def content_hash(table: pa.Table) -> str:
    """sha256 (hex) of a table's content: column names, then every value, column by column.

    Values are compared as Python values in JSON (``None``, numbers, strings, lists), so a
    ``string`` and a ``large_string`` column with the same texts hash equal, and a table read
    back from parquet or through ``datasets`` hashes like the one written.
    """
    h = hashlib.sha256()
    h.update(json.dumps(table.column_names, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    h.update(b"\x1e%d\x1e" % table.num_rows)
    for name in table.column_names:
        h.update(b"\x1d")
        for chunk in table.column(name).chunks:
            for value in chunk.to_pylist():
                h.update(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
                         .encode("utf-8", "surrogatepass"))
                h.update(b"\x1f")
    return h.hexdigest()


def layout_files(corpus: TableLike, questions: TableLike, *, readme: str,
                 corpus_schema: pa.Schema | None = None, questions_schema: pa.Schema | None = None,
                 corpus_config: str = CORPUS_CONFIG, questions_config: str = QUESTIONS_CONFIG) -> dict[str, bytes]:
    """The files of the Hub layout as ``{repository path: bytes}``, in commit order.

    Order: the corpus shard, the questions shard, then ``README.md`` (``readme``, UTF-8).
    """
    return {
        data_file(corpus_config): parquet_bytes(to_table(corpus, corpus_schema)),
        data_file(questions_config): parquet_bytes(to_table(questions, questions_schema)),
        README: readme.encode("utf-8"),
    }


def write_files(folder: Path, files: Mapping[str, bytes]) -> dict[str, Path]:
    """Write ``{relative path: bytes}`` under ``folder`` (``files.write_folder``): all or
    nothing; a failure leaves no partial folder behind.

    Returns ``{relative path: written path}``. Other files in ``folder`` are left alone.

    Raises:
        OSError: the folder cannot be created or written (``filename``: the file's final path).
        ValueError: a path would leave ``folder``.
    """
    return write_folder(Path(folder), files)


def write_hub_layout(folder: Path, corpus: TableLike, questions: TableLike, *, body: str = "",
                     readme: str | None = None, metadata: Mapping[str, Any] | None = None,
                     corpus_schema: pa.Schema | None = None, questions_schema: pa.Schema | None = None,
                     corpus_config: str = CORPUS_CONFIG, questions_config: str = QUESTIONS_CONFIG) -> dict[str, Path]:
    """Write a dataset in Hub layout to ``folder``; it then loads with ``datasets.load_dataset``.

    Args:
        folder: created when missing; files other than the three written are left alone.
        corpus, questions: a pyarrow table or a sequence of row dicts each, in the row order
            to publish (never reordered here).
        body: Markdown after the front matter (ignored when ``readme`` is given).
        readme: the complete ``README.md`` text to write instead (a merged dataset card,
            ``mtcb_curate.hub.card``); it must register both configs itself.
        metadata: extra front-matter keys (``license`` ...), written after ``configs``.
        corpus_schema, questions_schema: the arrow schemas to write (needed when a column may be
            all null, e.g. ficha's ``chunk_index`` int64).
        corpus_config, questions_config: the config names (MTCB: ``corpus``, ``questions``).

    Returns:
        ``{repository path: written path}`` for ``README.md`` and the two parquet shards.

    Raises:
        ValueError: rows do not fit the schema, or ``metadata`` tries to set ``configs``.
        OSError: the folder cannot be written.
    """
    if readme is None:
        meta: dict[str, Any] = {"configs": config_entries((corpus_config, questions_config))}
        for k, v in (metadata or {}).items():
            if k == "configs":
                raise ValueError("metadata may not set 'configs': the layout registers them")
            meta[k] = v
        readme = front_matter(meta) + body
    files = layout_files(corpus, questions, readme=readme, corpus_schema=corpus_schema,
                         questions_schema=questions_schema, corpus_config=corpus_config,
                         questions_config=questions_config)
    return write_files(Path(folder), files)
