"""``mtcb-curate repair NAME --chunk-index``: set every pair's chunk_index to the MTCB window
(8,192 ``cl100k_base`` tokens, 512 overlap) that holds its located passage, as ONE undoable
step in the workspace (``u`` in the app takes it all back); ``--dry-run`` only lists the
repairs. ``--chunk-index-meaning ignore|mtcb`` records what the dataset's chunk_index means
(``ignore``: something else, the ``links`` check no longer compares it with the windows).

Output: one summary line on stdout (``chunk_index: 1,259 pair(s) changed, 0 refused``), the
first repairs on stderr; ``--json FILE``: ``{"dry_run", "meaning", "changed", "refused",
"fixes": [{"id", "old", "new", "reason", "refused"}]}``.

Exit 0 on success (refusals included: they are listed), 2 on bad input (neither option, an
unknown meaning, a locked or unwritable workspace, an unwritable ``--json`` file).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from mtcb_curate.cli.common import command_session, emit, note, open_session, options, report_problems, write_json
from mtcb_curate.errors import CurateError

#: Repairs listed on stderr before ``... and N more``.
SHOWN = 20


@contextmanager
def _session(args: argparse.Namespace, dry_run: bool) -> Iterator:
    """The workspace's session, written to; a dry run reads the workspace when it exists and
    otherwise runs on the source alone."""
    from mtcb_curate.store.opening import workspace_exists

    if dry_run:  # the workspace when it exists (read-only), else the source alone
        if args.workspace is not None and not workspace_exists(args.workspace):
            args = argparse.Namespace(**{**vars(args), "workspace": None})
        with command_session(args) as (session, _):
            yield session
        return
    session = open_session(options(args))
    try:
        yield session
    finally:
        session.workspace.close()


def run(args: argparse.Namespace) -> int:
    """Repair chunk_index and/or set its meaning; see the module docstring for the exit codes."""
    from mtcb_curate.app import review as app_review
    from mtcb_curate.verify.chunk_index import chunk_index_meaning

    if not args.chunk_index and args.chunk_index_meaning is None:
        raise CurateError("repair: say what to repair: --chunk-index (and/or --chunk-index-meaning ignore|mtcb)")
    if args.chunk_index_meaning is not None:
        try:
            chunk_index_meaning(args.chunk_index_meaning)
        except ValueError as exc:
            raise CurateError(str(exc)) from None
    with _session(args, args.dry_run) as session:
        if report_problems(session.dataset.problems, args.strict):
            return 2
        lines = []
        if args.chunk_index_meaning is not None:
            if args.dry_run:
                note(f"dry run: chunk_index_meaning would be set to {args.chunk_index_meaning}")
            else:
                changed = app_review.set_chunk_index_meaning(session, args.chunk_index_meaning)
                lines.append(f"chunk_index_meaning: {session.chunk_index_meaning}"
                             f"{'' if changed else ' (unchanged)'}")
        fixes, changes = [], []
        if args.chunk_index:
            fixes = app_review.plan_chunk_index_repairs(session)
            if not args.dry_run:
                changes = app_review.repair_all_chunk_indexes(session, fixes=fixes)
            refused = [f for f in fixes if f.refused]
            n = sum(1 for f in fixes if not f.refused) if args.dry_run else len(changes)
            verb = "would change" if args.dry_run else "changed"
            for f in fixes[:SHOWN]:
                old = "none" if f.old is None else f.old
                note(f"#{f.pair_id}: {'refused' if f.refused else f'{old} -> {f.new}'}: {f.reason}")
            if len(fixes) > SHOWN:
                note(f"... and {len(fixes) - SHOWN:,} more")
            lines.append(f"chunk_index: {n:,} pair(s) {verb}, {len(refused):,} refused"
                         + ("" if args.dry_run or not n else " (one step: u in the app undoes it)"))
        if not args.dry_run:
            ws = session.workspace
            note(f"written to the workspace {getattr(ws, 'label', None) or ws.path}: the app and the headless "
                 f"commands of this source (the same --source, or --workspace) see it")
        if args.json:  # before any output: a closed pipe never costs the file
            try:
                write_json(args.json, {
                    "dry_run": bool(args.dry_run), "meaning": session.chunk_index_meaning,
                    "changed": sum(1 for f in fixes if not f.refused) if args.dry_run else len(changes),
                    "refused": sum(1 for f in fixes if f.refused),
                    "fixes": [{"id": f.pair_id, "old": f.old, "new": f.new, "reason": f.reason,
                               "refused": f.refused} for f in fixes]})
            except OSError as exc:
                note(f"error: {args.json}: cannot write ({exc.strerror})")
                return 2
        for line in lines:
            emit(line)
    return 0
