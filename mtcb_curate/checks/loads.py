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
    """Load both configs of the layout written in ``folder`` with ``datasets.load_dataset``;
    what differs from the tables written (rows, columns, types), one line each.

    Raises:
        Exception: whatever ``load_dataset`` raises.
    """
    import datasets

    from mtcb_curate.hub.quiet import quiet_datasets

    problems = []
    with quiet_datasets():
        for config, table in (("corpus", sample), ("questions", questions)):
            loaded = datasets.load_dataset(str(folder), config, split="train", cache_dir=str(folder / ".cache"))
            if loaded.num_rows != table.num_rows:
                problems.append(f"{config}: {loaded.num_rows} rows loaded, {table.num_rows} written")
            if loaded.column_names != table.column_names:
                problems.append(f"{config}: columns {loaded.column_names} loaded, {table.column_names} written")
            else:
                got = loaded.data.table.schema
                for name in table.column_names:
                    if got.field(name).type != table.schema.field(name).type:
                        problems.append(f"{config}.{name}: type {got.field(name).type}, "
                                        f"expected {table.schema.field(name).type}")
    return problems
