"""The ``mtcb-curate`` command line.

``mtcb-curate NAME`` (or ``mtcb-curate review NAME``) opens the review app;
``mtcb-curate export NAME --out FILE.jsonl`` writes the decisions and current texts.
Bad input prints one line naming the file, row and field, and exits with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import threading
from pathlib import Path

from mtcb_curate import __version__
from mtcb_curate.errors import CurateError
from mtcb_curate.sources import Options, open_session

COMMANDS = ("review", "export")
MAX_WARNINGS = 20


def _data_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", help="dataset name (ficha, gacha, ...) or a Hub repo id")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--source", nargs="+", metavar="SRC",
                     help="a folder in Hub layout, a Hub repo id, or two files: CORPUS QUESTIONS")
    src.add_argument("--sample", action="store_true", help="open the bundled sample of this dataset")
    p.add_argument("--workspace", type=Path, metavar="DIR",
                   help="workspace folder (default: one per dataset in the user data directory)")
    p.add_argument("--strict", action="store_true", help="treat row-level input problems as errors (exit 2)")
    cols = p.add_argument_group("columns (defaults from the dataset profile, else detected)")
    cols.add_argument("--doc-key", help="question column holding the document key")
    cols.add_argument("--corpus-key", help="corpus column it matches (default: same name)")
    cols.add_argument("--passage-column", help="question column holding the supporting passage")
    cols.add_argument("--text-column", help="corpus column holding the document text")
    cols.add_argument("--question-column", help="question column holding the question")
    cols.add_argument("--answer-column", help="question column holding the answer")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``review`` and ``export``)."""
    parser = argparse.ArgumentParser(
        prog="mtcb-curate",
        description="Review MTCB QA pairs beside their source documents. "
                    "`mtcb-curate ficha` opens the review app.")
    parser.add_argument("--version", action="version", version=f"mtcb-curate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    review = sub.add_parser("review", help="open the review app (the default command)")
    _data_options(review)
    review.add_argument("--read-only", action="store_true", help="look without writing to the workspace")
    review.add_argument("--config", type=Path, help="config file (default: the user config dir's config.toml)")
    export = sub.add_parser("export", help="write one JSON line per pair: id, status, reason, current texts")
    _data_options(export)
    export.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl")
    return parser


def _options(args: argparse.Namespace, read_only: bool) -> Options:
    return Options(
        name=args.dataset, source=args.source, sample=args.sample, workspace=args.workspace,
        read_only=read_only,
        columns=dict(doc_key=args.doc_key, corpus_key=args.corpus_key, passage_column=args.passage_column,
                     text_column=args.text_column, question_column=args.question_column,
                     answer_column=args.answer_column))


def _report_problems(problems: list, strict: bool) -> bool:
    """Print row-level problems as warnings; True when --strict makes them fatal."""
    for p in problems[:MAX_WARNINGS]:
        print(f"mtcb-curate: {'error' if strict else 'warning'}: {p}", file=sys.stderr)
    if len(problems) > MAX_WARNINGS:
        print(f"mtcb-curate: ... and {len(problems) - MAX_WARNINGS} more", file=sys.stderr)
    return strict and bool(problems)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 bad input or usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        argv.insert(0, "review")
    args = build_parser().parse_args(argv)
    try:
        if args.command == "export":
            return _export(args)
        return _review(args)
    except CurateError as exc:
        print(f"mtcb-curate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _export(args: argparse.Namespace) -> int:
    from mtcb_curate.export import export_jsonl

    session = open_session(_options(args, read_only=True))
    try:
        if _report_problems(session.dataset.problems, args.strict):
            return 2
        try:
            n = export_jsonl(session, args.out)
        except OSError as exc:
            print(f"mtcb-curate: error: {args.out}: cannot write ({exc.strerror})", file=sys.stderr)
            return 2
    finally:
        session.workspace.close()
    print(f"wrote {n} pairs to {args.out}", file=sys.stderr)
    return 0


def preload_tui() -> threading.Thread:
    """Import the Textual app in a background thread and return the thread (join it before use).

    Loading the dataset spends most of its time in pyarrow, which releases the GIL, so the
    import of Textual (about 0.15 s) overlaps it on a second core. An import error is raised
    again by the import after ``join``.
    """
    thread = threading.Thread(target=_import_quietly, args=("mtcb_curate.tui.app",), daemon=True)
    thread.start()
    return thread


def _import_quietly(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 - the main thread's import reports it
        pass


def _review(args: argparse.Namespace) -> int:
    from mtcb_curate.config import load_keymap

    keymap = load_keymap(args.config)
    tui_import = preload_tui()
    session = open_session(_options(args, read_only=args.read_only))
    tui_import.join()
    try:
        if _report_problems(session.dataset.problems, args.strict):
            return 2
        from mtcb_curate.tui.app import CurateApp

        CurateApp(session, keymap=keymap).run()
    finally:
        session.workspace.close()
    return 0
