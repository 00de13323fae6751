"""What every command shares: data options, opening the data, warnings, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mtcb_curate.files import atomic_write_bytes
from mtcb_curate.app.sources import Options

MAX_WARNINGS = 20


def data_options(p: argparse.ArgumentParser) -> None:
    """Add the dataset, source, workspace and column options every command takes."""
    p.add_argument("dataset", help="dataset name (ficha, gacha, ...) or a Hub repo id")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--source", nargs="+", metavar="SRC",
                     help="a folder in Hub layout, a Hub repo id, or two files: CORPUS QUESTIONS")
    src.add_argument("--sample", action="store_true", help="open the bundled sample of this dataset")
    p.add_argument("--workspace", type=workspace_target, metavar="DIR|URL",
                   help="workspace folder (default: one per dataset in the user data directory), or a "
                        "postgresql:// URL: a team's shared workspace (default: $MTCB_CURATE_DATABASE_URL)")
    p.add_argument("--curator", type=curator_name, metavar="NAME",
                   help="who the changes are recorded under (default: [team] curator in the config file, "
                        "else the login name)")
    p.add_argument("--strict", action="store_true", help="treat row-level input problems as errors (exit 2)")
    cols = p.add_argument_group("columns (defaults from the dataset profile, else detected)")
    cols.add_argument("--doc-key", help="question column holding the document key")
    cols.add_argument("--corpus-key", help="corpus column it matches (default: same name)")
    cols.add_argument("--passage-column", help="question column holding the supporting passage")
    cols.add_argument("--text-column", help="corpus column holding the document text")
    cols.add_argument("--question-column", help="question column holding the question")
    cols.add_argument("--answer-column", help="question column holding the answer")


def workspace_target(value: str) -> Path | str:
    """A ``--workspace`` value: a ``postgresql://`` URL stays text, anything else is a folder."""
    from mtcb_curate.store.postgres import is_database_url

    return value if is_database_url(value) else Path(value)


def curator_name(value: str) -> str:
    """A ``--curator`` value, checked (``argparse`` reports a bad one as a usage error)."""
    from mtcb_curate.errors import CurateError
    from mtcb_curate.store.curators import check_curator

    try:
        return check_curator(value)
    except CurateError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def llm_options(p: argparse.ArgumentParser) -> None:
    """Add the LLM server options (``--model``, ``--base-url``, ``--config``, ``--yes``)."""
    g = p.add_argument_group("LLM (any OpenAI-compatible server; key from OPENAI_API_KEY)")
    g.add_argument("--model", help="model name (default: [llm] model in the config file, or OPENAI_MODEL)")
    g.add_argument("--base-url", help="server URL, e.g. http://localhost:8000/v1 (default: OPENAI_BASE_URL)")
    g.add_argument("--yes", action="store_true", help="run more than 10 LLM calls without asking")


def options(args: argparse.Namespace, read_only: bool = False) -> Options:
    """The ``sources.Options`` the parsed arguments describe."""
    return Options(
        name=args.dataset, source=args.source, sample=args.sample, workspace=args.workspace,
        read_only=read_only, strict=args.strict, curator=getattr(args, "curator", None),
        columns=dict(doc_key=args.doc_key, corpus_key=args.corpus_key, passage_column=args.passage_column,
                     text_column=args.text_column, question_column=args.question_column,
                     answer_column=args.answer_column))


def report_problems(problems: list, strict: bool) -> bool:
    """Print row-level problems as warnings; True when --strict makes them fatal."""
    for p in problems[:MAX_WARNINGS]:
        print(f"mtcb-curate: {'error' if strict else 'warning'}: {p}", file=sys.stderr)
    if len(problems) > MAX_WARNINGS:
        print(f"mtcb-curate: ... and {len(problems) - MAX_WARNINGS} more", file=sys.stderr)
    return strict and bool(problems)


def note(message: str) -> None:
    """One line of progress or outcome on stderr (stdout carries the command's result)."""
    print(f"mtcb-curate: {message}", file=sys.stderr)


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as UTF-8 JSON (indented), atomically.

    Raises:
        OSError: the folder is not writable.
    """
    text = json.dumps(value, ensure_ascii=False, indent=1)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a dataset: ASCII escapes are still JSON
        data = json.dumps(value, indent=1).encode("ascii")
    atomic_write_bytes(Path(path), data + b"\n")


def confirm(question: str, assume_yes: bool) -> bool:
    """Ask on the terminal; False without a terminal unless ``assume_yes`` (``--yes``)."""
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        return False
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False
