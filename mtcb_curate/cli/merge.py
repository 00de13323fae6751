"""``mtcb-curate merge NAME WORKSPACE... --workspace OUT``: fold several SQLite workspaces of
the same source into a new one (``app.merge``: agreeing decisions decide, disagreeing ones are
conflicts a lead decides; edits and notes: the latest wins), then print the team report. Exit 0;
1 while conflicts are open; 2 on bad input.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from mtcb_curate.cli.common import note, open_session, options


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``merge`` command's own arguments."""
    p.add_argument("inputs", nargs="+", type=Path, metavar="WORKSPACE", help="the workspace folders to merge")


def run(args: argparse.Namespace) -> int:
    """Merge, then report; see the module docstring."""
    from mtcb_curate.app import merge
    from mtcb_curate.errors import CurateError

    if args.workspace is None:
        raise CurateError("merge needs --workspace OUT: the new workspace the merge goes into")
    inputs = merge.read_inputs(args.inputs)
    try:
        spec = inputs[0][1].source_spec()
        opts = options(args)
        if not (opts.source or opts.sample):
            opts = replace(opts, source=spec)
        session = open_session(opts)
        try:
            counts = merge.merge_into(session, inputs)
        finally:
            session.workspace.close()
    finally:
        for _, ws in inputs:
            ws.close()
    names = ", ".join(name for name, _ in inputs)
    note(f"merged {counts['workspaces']} workspaces ({names}): {counts['decided']} pairs decided, "
         f"{counts['conflicts']} conflicts, {counts['edits']} edits ({counts['differing']} differed: the latest "
         f"kept), {counts['notes']} notes, {counts['added']} added pairs, {counts['marks']} marks")
    from mtcb_curate.cli import team

    code = team.run(argparse.Namespace(**{**vars(args), "plan": False, "overlap": None, "conflicts": True,
                                          "resolve": None, "reason": None, "json": getattr(args, "json", None),
                                          "source": None, "sample": False}))
    return code
