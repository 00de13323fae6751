"""The ``loads`` check: the publish layout, written to a temporary folder, loads with
``datasets.load_dataset``. Builds the tables with ``hub.tables`` (pure; the Hub is never
contacted). The questions config is written whole; the corpus config (tens of MB of text) as
its first ``CORPUS_SAMPLE_ROWS`` rows with the same schema, files and card, while its row count
and schema are checked on the whole table: what the loader reads (configs, files, features) is
the same, and writing and reading the whole corpus again took most of the checklist's time.
With the checklist's cache (``checks.cache``), tables built from the same inputs, by the same
code and libraries, as a layout that loaded before are not built or loaded again (the message
says so)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, check
from mtcb_curate.plaintext import one_line


#: Rows of the corpus config written and loaded (the whole table's schema and row count are
#: checked without writing it).
CORPUS_SAMPLE_ROWS = 3


@check("loads", CheckStatus.FAIL)
def loads(ctx: CheckContext) -> CheckResult:
    """Fails: the publish layout, written to a temporary folder, does not load with
    ``datasets.load_dataset`` with the expected rows, columns, types (skipped when not asked).
    The corpus is written as a sample of ``CORPUS_SAMPLE_ROWS`` rows (the message says so)."""
    if not ctx.loads:
        return CheckResult("loads", CheckStatus.SKIP, "not run")
    # Imported on use (pyarrow and datasets are slow to import); never the Hub client.
    from mtcb_curate.hub.errors import PublishError
    from mtcb_curate.hub.layout import write_hub_layout
    from mtcb_curate.hub.tables import build_tables, tables_digest

    key = ctx.cache.loads_key(tables_digest(ctx.session, ctx.accepted)) if ctx.cache is not None else None
    seen = ctx.cache.loaded(key) if ctx.cache is not None and key is not None else None
    if seen is not None:
        return CheckResult("loads", CheckStatus.PASS, f"{seen['message']}; the same content (hash {key[:12]}) "
                                                      f"loaded with datasets {seen['datasets']} on {seen['when']}, "
                                                      "so it was not built or loaded again")
    try:
        corpus, questions, _notes = build_tables(ctx.session, accepted=ctx.accepted)
    except PublishError as exc:
        return CheckResult("loads", CheckStatus.FAIL, f"the publish layout cannot be built: {exc}")
    if questions.num_rows == 0:
        return CheckResult("loads", CheckStatus.FAIL, "no accepted pair: the questions config would be empty and "
                                                      "does not load with datasets")
    sample = corpus.slice(0, CORPUS_SAMPLE_ROWS) if corpus.num_rows > CORPUS_SAMPLE_ROWS else corpus
    with tempfile.TemporaryDirectory(prefix="mtcb-curate-loads-") as tmp:
        folder = Path(tmp)
        try:
            write_hub_layout(folder, sample, questions, body="# checklist: loads\n")
        except OSError as exc:  # a full or read-only temporary folder: the check cannot run
            return CheckResult("loads", CheckStatus.FAIL, f"cannot write a temporary copy to load "
                                                          f"({exc.strerror or type(exc).__name__}: {tmp})")
        try:
            problems = _load(folder, sample, questions)
        except LoadFailed as exc:
            return CheckResult("loads", CheckStatus.FAIL, f"datasets.load_dataset failed: {one_line(str(exc), 200)}")
        except Exception as exc:  # noqa: BLE001 - any failure to load is what this check reports
            return CheckResult("loads", CheckStatus.FAIL, f"datasets.load_dataset failed: {type(exc).__name__}: "
                                                          f"{one_line(str(exc), 200)}")
    if problems:
        return CheckResult("loads", CheckStatus.FAIL, "; ".join(problems))
    if sample is not corpus:
        message = (f"both configs load with datasets: questions {questions.num_rows} rows; corpus written and "
                   f"loaded as {sample.num_rows} of its {corpus.num_rows} rows (same schema, files and card; the "
                   "whole corpus is not written again)")
    else:
        message = (f"both configs load with datasets: corpus {corpus.num_rows} rows, questions "
                   f"{questions.num_rows} rows")
    if ctx.cache is not None and key is not None:
        ctx.cache.put_loaded(key, message)
    return CheckResult("loads", CheckStatus.PASS, message)


def _load(folder: Path, sample, questions) -> list[str]:
    """Load both configs of the layout written in ``folder`` with ``datasets.load_dataset``, in
    a child process (:func:`read_back`); what differs from the tables written (rows, columns,
    types), one line each.

    Raises:
        LoadFailed: ``load_dataset`` raised (its type and message), or the child process failed.
    """
    found = read_back(folder)
    problems = []
    for config, table in (("corpus", sample), ("questions", questions)):
        loaded = found[config]
        if loaded["rows"] != table.num_rows:
            problems.append(f"{config}: {loaded['rows']} rows loaded, {table.num_rows} written")
        if loaded["columns"] != table.column_names:
            problems.append(f"{config}: columns {loaded['columns']} loaded, {table.column_names} written")
        else:
            for name in table.column_names:
                want = str(table.schema.field(name).type)
                if loaded["types"][name] != want:
                    problems.append(f"{config}.{name}: type {loaded['types'][name]}, expected {want}")
    return problems


class LoadFailed(Exception):
    """``datasets.load_dataset`` failed on the layout (the message: the error's type and text),
    or the process that ran it did."""


#: Seconds the child process may take to load the two configs (they hold a few rows of the
#: corpus and the questions: a couple of seconds, most of it the import of ``datasets``).
LOAD_TIMEOUT_S = 300.0

#: The file, in the layout's folder, where the child process writes what it loaded.
_RESULT = ".loaded.json"


def read_back(folder: Path) -> dict:
    """What ``datasets.load_dataset`` reads from the layout in ``folder``, config by config:
    ``{"corpus"|"questions": {"rows": int, "columns": [str], "types": {column: arrow type
    as str}}}``.

    Run in a child process (``python -m mtcb_curate.checks.loads FOLDER``, with the Hub client
    offline: the folder is local), so that ``datasets`` (large once imported, with pandas:
    docs/performance.md) and the objects of the load never stay in the caller's process: the review app's
    memory returns to what it was after the checklist.

    Raises:
        LoadFailed: the load raised (its type and message), or the child process failed or
            took more than :data:`LOAD_TIMEOUT_S` seconds.
    """
    import json
    import os
    import subprocess
    import sys

    result = folder / _RESULT
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    try:
        proc = subprocess.run([sys.executable, "-m", "mtcb_curate.checks.loads", str(folder)], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=LOAD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise LoadFailed(f"TimeoutExpired: no answer within {LOAD_TIMEOUT_S:.0f} s") from None
    try:
        found = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        raise LoadFailed(f"the loading process failed: {tail[0]}") from None
    if "error" in found:
        raise LoadFailed(found["error"])
    return found


def _main(argv: list[str]) -> int:
    """The child process of :func:`read_back`: load both configs of the layout in ``argv[0]``
    and write what was loaded (or ``{"error": "Type: message"}``) to its ``.loaded.json``."""
    import json

    folder = Path(argv[0])
    try:
        import datasets

        from mtcb_curate.hub.quiet import quiet_datasets

        found = {}
        with quiet_datasets():
            for config in ("corpus", "questions"):
                loaded = datasets.load_dataset(str(folder), config, split="train", cache_dir=str(folder / ".cache"))
                found[config] = {"rows": loaded.num_rows, "columns": loaded.column_names,
                                 "types": {f.name: str(f.type) for f in loaded.data.table.schema}}
    except Exception as exc:  # noqa: BLE001 - any failure to load is what the check reports
        found = {"error": f"{type(exc).__name__}: {exc}"}
    (folder / _RESULT).write_text(json.dumps(found), encoding="utf-8")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
