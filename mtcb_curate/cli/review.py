"""``mtcb-curate review NAME``: open the review app (the default command)."""

from __future__ import annotations

import argparse
import importlib
import threading

from mtcb_curate.cli.common import options, report_problems
from mtcb_curate.app.sources import open_review


def preload_tui() -> threading.Thread:
    """Import the Textual app in a background thread and return the thread (join it before use).

    Loading the dataset spends most of its time in pyarrow, which releases the GIL, so the
    import of Textual (about 0.15 s) overlaps it on a second core. An import error is raised
    again by the import after ``join``. The tokenizer is not loaded here: a corpus opened
    before has its windows and passage counts in the token cache (``dataset.token_cache``),
    and tiktoken's ``cl100k_base`` holds about 37 MB once loaded.
    """
    thread = threading.Thread(target=_import_quietly, args=("mtcb_curate.tui.app",), daemon=True)
    thread.start()
    return thread


def _import_quietly(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 - the main thread's import reports it
        pass


#: Seconds of the Hub's silence the app waits through before it opens the bundled sample and
#: lets the Hub load go on in the background (``app.sources.load_default``); a Hub that never
#: answers is already given up by the probe (2 s).
HUB_WAIT_S = 2.0

#: ``TERM`` values of terminals that cannot draw the full-screen app.
DUMB_TERMINALS = ("dumb", "unknown")


def run(args: argparse.Namespace) -> int:
    """Open the app on the chosen data; 0 on a normal quit, 2 on bad input or a terminal that
    cannot draw it (``TERM=dumb``: the headless commands still work there)."""
    import os

    from mtcb_curate.config import load_keymap
    from mtcb_curate.errors import CurateError

    if os.environ.get("TERM", "") in DUMB_TERMINALS:
        raise CurateError(f"the review app needs a full-screen terminal (TERM={os.environ['TERM']}); here use "
                          f"the headless commands: verify, check, dedup, stats, export ... (mtcb-curate --help)")
    from mtcb_curate.tui.memory import limit_heap_arenas

    limit_heap_arenas()  # before any thread starts
    keymap = load_keymap(args.config)
    tui_import = preload_tui()
    session, hub_load = open_review(options(args, read_only=args.read_only), hub_wait=HUB_WAIT_S)
    tui_import.join()
    try:
        if report_problems(session.dataset.problems, args.strict):
            return 2
        from mtcb_curate.tui.app import CurateApp

        CurateApp(session, keymap=keymap, config_path=args.config, hub_load=hub_load).run()
    finally:
        session.workspace.close()
    return 0
