"""``mtcb-curate export NAME --out FILE.jsonl``: decisions and current texts, one line per pair."""

from __future__ import annotations

import argparse
import sys

from mtcb_curate.cli.common import note, options, report_problems
from mtcb_curate.app.sources import open_session


def run(args: argparse.Namespace) -> int:
    """Write the export; 0 on success, 2 on bad input or an unwritable file."""
    from mtcb_curate.app.export import export_jsonl

    session = open_session(options(args, read_only=True))
    try:
        if report_problems(session.dataset.problems, args.strict):
            return 2
        try:
            n = export_jsonl(session, args.out)
        except OSError as exc:
            note(f"error: {args.out}: cannot write ({exc.strerror})")
            return 2
    finally:
        session.workspace.close()
    print(f"wrote {n} pairs to {args.out}", file=sys.stderr)
    return 0
