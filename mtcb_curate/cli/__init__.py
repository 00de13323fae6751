"""The ``mtcb-curate`` command line.

``mtcb-curate NAME`` (or ``mtcb-curate review NAME``) opens the review app; the other commands
run headless, for scripts and CI:

- ``export``: decisions and current texts as JSON Lines;
- ``verify``: where every supporting passage stands in its document (exit 1 unless all exact);
- ``dedup``: near-duplicate question clusters (exit 1 while one is unresolved); ``--llm`` runs
  the LLM's semantic dedup;
- ``check``: the quality checklist, the gate before publishing (exit 1 when a check fails);
- ``generate``: new pairs for a document from an LLM;
- ``publish``: both configs to the Hugging Face Hub in one verified commit, behind the gate;
- ``repair``: ``--chunk-index`` sets every chunk_index to the MTCB window holding its passage (one
  undoable step); ``--chunk-index-meaning ignore|mtcb`` says what the dataset's chunk_index means;
- ``preview``: MTCB's own scoring (chonkie chunkers, BM25) on the pairs: recall@k, MRR@k, ceiling;
- ``team``: a team's shared workspace: work split, each curator's counts and pace, agreement,
  conflicts and a lead's decisions on them;
- ``merge``: several SQLite workspaces of one source folded into a new one, with the same rules.

Bad input prints one line naming the file, row and field, and exits with code 2. A mistyped
command or option is answered with the closest one and that command's usage. Output paths
(``--json``, ``--markdown``, ``--out``, ``--dry-run DIR``) are checked before the work. A
closed standard output (``| head``) ends the output quietly; files are written first.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from pathlib import Path

from mtcb_curate import __version__
from mtcb_curate.cli.common import check_writable, data_options, llm_options, stdout_gone
from mtcb_curate.cli.review import preload_tui
from mtcb_curate.errors import CurateError

__all__ = ["COMMANDS", "build_parser", "main", "preload_tui"]

#: Command name -> module under ``mtcb_curate.cli`` whose ``run(args)`` returns the exit code.
COMMANDS = {
    "review": "review",
    "export": "export",
    "verify": "verify",
    "dedup": "dedup",
    "check": "check",
    "generate": "generate",
    "publish": "publish",
    "repair": "repair",
    "preview": "preview",
    "stats": "stats",
    "team": "team",
    "merge": "merge",
}


class _Parser(argparse.ArgumentParser):
    """``argparse`` that reports an unknown option with the subcommand's own usage and the
    closest option it has (``verify ficha --smaple``: did you mean ``--sample``?)."""

    def parse_args(self, args=None, namespace=None):  # noqa: D102 - argparse's own
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = _SUBPARSERS.get(getattr(parsed, "command", None) or "", self)
            sub.error(_unrecognized(sub, extras))
        return parsed


#: Subcommand name -> its parser, filled by ``build_parser``.
_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}


def _closest(word: str, choices: list[str]) -> str | None:
    """The choice closest to ``word`` (``difflib``, ratio at least 0.6), or None."""
    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


def _unrecognized(sub: argparse.ArgumentParser, extras: list[str]) -> str:
    message = f"unrecognized arguments: {' '.join(extras)}"
    options = [o for o in sub._option_string_actions if o.startswith("--")]  # argparse's own table
    for extra in extras:
        if extra.startswith("-"):
            guess = _closest(extra.split("=", 1)[0], options)
            if guess:
                return f"{message} (did you mean {guess}?)"
    return message


def _mistyped_command(word: str) -> str | None:
    """The command ``word`` was probably meant to be, or None when it reads as a dataset name:
    a known profile, an existing path or a Hub id (``owner/name``) is never second-guessed."""
    from mtcb_curate.dataset.profiles import PROFILES

    if word in PROFILES or "/" in word or Path(word).exists():
        return None
    return _closest(word, list(COMMANDS))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, one subcommand per entry of ``COMMANDS``."""
    parser = _Parser(
        prog="mtcb-curate",
        description="Review MTCB QA pairs beside their source documents. "
                    "`mtcb-curate ficha` opens the review app.")
    parser.add_argument("--version", action="version", version=f"mtcb-curate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _SUBPARSERS.clear()
    _add = sub.add_parser

    def add_parser(name: str, **kw):
        _SUBPARSERS[name] = _add(name, **kw)
        return _SUBPARSERS[name]

    sub.add_parser = add_parser  # type: ignore[method-assign]

    review = sub.add_parser("review", help="open the review app (the default command)")
    data_options(review)
    review.add_argument("--read-only", action="store_true", help="look without writing to the workspace")
    review.add_argument("--config", type=Path, help="config file (default: the user config dir's config.toml)")

    export = sub.add_parser("export", help="write one JSON line per pair: id, status, reason, current texts")
    data_options(export)
    export.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl | DIR")
    export.add_argument("--format", choices=("jsonl", "beir"), default="jsonl",
                        help="jsonl (default; with verdict, checks and judge score columns) or beir "
                             "(DIR/corpus.jsonl, queries.jsonl, qrels/test.tsv: accepted pairs)")
    export.add_argument("--include-undecided", action="store_true", help="beir: undecided pairs too")
    export.add_argument("--config", type=Path, help="config file with a [checklist] table (for the checks column)")

    verify = sub.add_parser("verify", help="check every supporting passage against its document "
                                           "(exit 0 when all are exact, 1 otherwise)")
    data_options(verify)
    verify.add_argument("--json", type=Path, metavar="FILE", help="write the per-pair results as JSON")

    dedup = sub.add_parser("dedup", help="find near-duplicate questions (exit 0 when no cluster is unresolved)")
    data_options(dedup)
    dedup.add_argument("--threshold", type=float, metavar="T",
                       help="question similarity threshold, 0-100 (default: the documented one)")
    dedup.add_argument("--json", type=Path, metavar="FILE", help="write the clusters as JSON")
    dedup.add_argument("--llm", action="store_true", help="run the LLM's semantic dedup instead "
                                                          "(batches of 50, then a final pass)")
    dedup.add_argument("--config", type=Path, help="config file with an [llm] table")
    dedup.add_argument("--no-cache", action="store_true",
                       help="with --llm: neither read nor write the LLM reply cache")
    llm_options(dedup)

    check = sub.add_parser("check", help="run the quality checklist (exit 0 when no check fails)")
    data_options(check)
    check.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    check.add_argument("--markdown", type=Path, metavar="FILE", help="write the results as Markdown")
    check.add_argument("--config", type=Path, help="config file with [checklist] and [llm] tables")
    check.add_argument("--no-cache", action="store_true",
                       help="verify every passage and load the publish layout afresh, without reading or "
                            "writing the checklist cache (publish always does); with --llm-judge, without the "
                            "LLM reply cache either")
    check.add_argument("--as-accepted", action="store_true",
                       help="check every pair not rejected as if it were accepted (what would fail once "
                            "the undecided pairs are accepted); 'reviewed' is skipped, so this is not the "
                            "publishing gate")
    check.add_argument("--llm-judge", action="store_true",
                       help="ask the LLM whether the passage supports the answer, for the pairs the "
                            "lexical 'answerable' check warns about")
    check.add_argument("--judge-keep", type=int, choices=range(1, 6), metavar="1-5",
                       help="with --llm-judge: the score every criterion must reach to propose keeping (default 3)")
    llm_options(check)

    generate = sub.add_parser("generate", help="new QA pairs for one document from an LLM")
    data_options(generate)
    generate.add_argument("--doc", metavar="KEY", help="the document key (ficha: a ticker)")
    generate.add_argument("--all", action="store_true", help="every document (under-covered first); resumable")
    generate.add_argument("--per-doc", type=int, metavar="N", help="with --all: N new pairs per document (default 1)")
    generate.add_argument("--per-window", type=int, metavar="N", help="with --all: top every window up to N pairs")
    generate.add_argument("--docs", metavar="KEY,...", help="with --all: only these documents")
    generate.add_argument("--n", type=int, default=1, metavar="N", help="how many pairs (default 1)")
    generate.add_argument("--json", type=Path, metavar="FILE", help="write the candidates and failures as JSON")
    generate.add_argument("--examples", type=Path, metavar="FILE",
                          help="example questions, one a line: the kind wanted (replaces [generate] examples)")
    generate.add_argument("--config", type=Path, help="config file with an [llm] table")
    generate.add_argument("--mode", choices=("auto", "numbered", "quote"),
                          help="numbered: the model names numbered sentences and the passage is cut from the "
                               "window (verbatim by construction); quote: the model copies the passage (MTCB's "
                               "way); auto (default, or [generate] mode): numbered for a local server, quote for an API")
    generate.add_argument("--dense", action="store_true", default=None,
                          help="ask for evidence-dense questions (several consecutive sentences)")
    generate.add_argument("--no-cache", action="store_true",
                          help="neither read nor write the LLM reply cache (every call goes to the server)")
    llm_options(generate)

    publish = sub.add_parser("publish", help="publish both configs to the Hugging Face Hub, behind the checklist")
    data_options(publish)
    publish.add_argument("--repo-id", help="target dataset repo (default: the profile's, e.g. chonkie-ai/ficha)")
    publish.add_argument("--revision", metavar="BRANCH", help="target branch (default main; created if missing)")
    publish.add_argument("--private", action="store_true", help="create the repo private")
    publish.add_argument("--create-pr", action="store_true", help="open a pull request instead of committing")
    publish.add_argument("--only-linked", action="store_true",
                         help="publish only the documents an accepted pair points at")
    publish.add_argument("--license", help="licence id for the card when the source has none (e.g. cc-by-4.0)")
    publish.add_argument("--dry-run", type=Path, metavar="DIR",
                         help="write exactly the files that would be committed to DIR; publish nothing")
    publish.add_argument("--force", action="store_true", help="publish although the checklist fails")
    publish.add_argument("--reason", help="why --force is used (required with it; goes into the card)")
    publish.add_argument("--yes", action="store_true", help="publish without asking for confirmation")
    publish.add_argument("--config", type=Path, help="config file with a [checklist] table")

    repair = sub.add_parser("repair", help="repair every pair's chunk_index to the MTCB window holding its "
                                           "passage (one undoable step in the workspace)")
    data_options(repair)
    repair.add_argument("--chunk-index", action="store_true",
                        help="set chunk_index to the window (8,192 tokens, 512 overlap) holding the passage")
    repair.add_argument("--chunk-index-meaning", choices=("mtcb", "ignore"),
                        help="what the dataset's chunk_index means: mtcb (the generation window, checked "
                             "by 'links') or ignore (something else: not checked); kept in the workspace")
    repair.add_argument("--dry-run", action="store_true", help="list the repairs; write nothing")
    repair.add_argument("--json", type=Path, metavar="FILE", help="write the repairs as JSON")

    preview = sub.add_parser("preview", help="MTCB's own scores per chunker (chonkie + BM25): recall@k, MRR@k, "
                                             "the ceiling, passages longer than the chunk size")
    data_options(preview)
    from mtcb_curate.cli.preview import add_arguments as preview_arguments

    preview_arguments(preview)

    stats = sub.add_parser("stats", help="the set's statistics: coverage, passage lengths, question forms and "
                                         "types, verdicts, decisions, edits, pace, LLM usage")
    data_options(stats)
    stats.add_argument("--json", type=Path, metavar="FILE", help="write every figure as JSON")
    stats.add_argument("--markdown", type=Path, metavar="FILE", help="write the statistics as Markdown")
    stats.add_argument("--checklist", action="store_true", help="also run the checklist (without 'loads') "
                                                                "and count its results")
    stats.add_argument("--config", type=Path, help="config file with [checklist], [stats] and [llm] tables")
    stats.add_argument("--llm-tags", action="store_true",
                       help="also ask the LLM for each question's form and type (one call per pair not tagged yet)")
    llm_options(stats)

    team = sub.add_parser("team", help="a team's shared workspace: work split, counts and pace of each curator, "
                                       "agreement (Cohen's kappa, Krippendorff's alpha), conflicts")
    data_options(team)
    from mtcb_curate.cli.team import add_arguments as team_arguments

    team_arguments(team)

    merge = sub.add_parser("merge", help="fold several SQLite workspaces of one source into a new one (--workspace "
                                         "OUT): agreeing decisions decide, disagreeing ones are conflicts")
    data_options(merge)
    from mtcb_curate.cli.merge import add_arguments as merge_arguments

    merge_arguments(merge)
    merge.add_argument("--json", metavar="FILE", help="write the team report as JSON ('-': standard output)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 1 a check failed, 2 bad input or usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # Arrow's default pool (mimalloc) keeps 10-15 MB of freed pages after a corpus is read,
    # even after ``release_unused``; its system pool frees them to the C heap, whose free pages
    # go back to the system (``tui.memory.trim_heap``). Arrow's own setting: a value the user
    # set is kept. Read when pyarrow first allocates, which no import above does.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    parser = build_parser()
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        guess = _mistyped_command(argv[0])
        if guess is not None:
            parser.error(f"unknown command '{argv[0]}' (did you mean '{guess}'?)")
        argv.insert(0, "review")
    args = parser.parse_args(argv)
    try:
        if getattr(args, "n", 1) is not None and getattr(args, "n", 1) < 1:
            raise CurateError("--n must be at least 1")
        for path, folder in _outputs(args):
            check_writable(path, folder=folder)
        module = importlib.import_module(f"mtcb_curate.cli.{COMMANDS[args.command]}")
        code = module.run(args)
        sys.stdout.flush()
        return code
    except CurateError as exc:
        print(f"mtcb-curate: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output printed past a closed pipe by a command not using ``emit``
        stdout_gone()
        return 1  # as Python itself on EPIPE
    except OSError as exc:  # a file the command did not expect to fail (a full disk ...): one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"mtcb-curate: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _outputs(args: argparse.Namespace) -> list[tuple[Path, bool]]:
    """The output paths the command line names, each with True for a folder: checked for
    writability before the command runs."""
    out: list[tuple[Path, bool]] = []
    for name in ("json", "markdown"):
        value = getattr(args, name, None)
        if isinstance(value, Path) or (isinstance(value, str) and value not in ("", "-")):
            out.append((Path(value), False))
    if isinstance(getattr(args, "out", None), Path):
        out.append((args.out, getattr(args, "format", "jsonl") == "beir"))
    if isinstance(getattr(args, "dry_run", None), Path):  # publish --dry-run DIR
        out.append((args.dry_run, True))
    return out
