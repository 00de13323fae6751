"""The analysis worker process's entry point: ``python -m mtcb_curate.worker JOB.json``.

Started by ``app.analysis.AnalysisRunner`` with pipes for stdin and stdout (never a terminal),
it runs ``app.analysis_worker.run_job`` on the job and speaks a small protocol:

- stdout: one JSON object per line, ``{"progress": [stage, done, total]}`` (at most about five
  a second), ``{"ready": {...}}`` once the verdicts and groups are written (the summary so
  far), then ``{"done": {...}}`` (the job's summary) or ``{"cancelled": true}``;
- stdin: a line ``cancel`` stops the work at its next step; the end of stdin (the app gone,
  however it ended) ends this process at once;
- the C heap maps each large block on its own (``collector.map_large_blocks``), so an array
  a stage frees leaves the resident set at once;
- errors go to stderr (the runner keeps them in ``worker.log`` and quotes its last lines) and
  the exit status is then 1.

After its ``ready`` line the process replaces itself (``os.execv``, POSIX) with
``python -m mtcb_curate.worker --answerable JOB.json SUMMARY`` for the ``answerable`` stage: the
same process id, pipes and protocol, but a fresh interpreter, so the paraphrase model and the
stemmer it loads come on top of a small process, not of the memory the verification and the
near-duplicate search left behind. Elsewhere, and for a job that asks for no pair's reason
(``answer_ids`` empty: ``[review] answerable_ahead = 0``), the stage runs in the same process.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

# wordllama's tokenizer (the answerable stage) splits each short batch over a thread pool, which
# costs more CPU than it saves here; the tokens are the same either way
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from mtcb_curate.app.analysis_worker import Cancelled, answer_job, run_job  # noqa: E402
from mtcb_curate.collector import map_large_blocks  # noqa: E402

#: The first argument of the ``answerable`` stage's own process image.
ANSWERABLE = "--answerable"

#: Seconds between two progress lines at most (the first and last of a stage always go).
PROGRESS_EVERY_S = 0.2


def _say(value: dict) -> None:
    try:
        sys.stdout.write(json.dumps(value) + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, ValueError, OSError):
        os._exit(3)  # the app is gone


def _watch_stdin(stop: threading.Event) -> None:
    """Set ``stop`` at a ``cancel`` line; end the process when stdin ends (the app is gone)."""
    for line in sys.stdin:
        if line.strip() == "cancel":
            stop.set()
    os._exit(4)


def main(argv: list[str] | None = None) -> int:
    """Run the job named on the command line (see the module docstring); the exit status."""
    args = sys.argv[1:] if argv is None else argv
    answering = len(args) == 3 and args[0] == ANSWERABLE
    if len(args) != 1 and not answering:
        sys.stderr.write("usage: python -m mtcb_curate.worker JOB.json\n")
        return 2
    map_large_blocks()  # the stages' large arrays go back to the system as they are freed
    stop = threading.Event()
    threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()
    job = json.loads(Path(args[-2 if answering else 0]).read_bytes())
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or done == 0 or done == total:
            last[0] = now
            _say({"progress": [stage, done, total]})

    # the stage in a fresh process image, unless it works no reason out (it then loads nothing)
    fresh = os.name == "posix" and argv is None and job.get("answer_ids") != []
    try:
        if answering:
            summary = answer_job(job, json.loads(args[2]), progress, stop.is_set)
        else:
            summary = run_job(job, progress, stop.is_set, lambda so_far: _say({"ready": so_far}), answer=not fresh)
            if fresh:
                if stop.is_set():
                    raise Cancelled()
                sys.stdout.flush()
                sys.stderr.flush()
                try:
                    os.execv(sys.executable, [sys.executable, "-m", "mtcb_curate.worker", ANSWERABLE, args[0],
                                              json.dumps(summary)])
                except OSError:  # no new image: the stage runs here
                    summary = answer_job(job, summary, progress, stop.is_set)
    except Cancelled:
        _say({"cancelled": True})
        return 0
    _say({"done": summary})
    return 0


if __name__ == "__main__":
    sys.exit(main())
