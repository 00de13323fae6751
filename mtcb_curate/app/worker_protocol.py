"""Reading the analysis worker's stdout (the protocol ``mtcb_curate.worker`` describes): one
JSON object per line, ``{"progress": [stage, done, total]}``, ``{"ready": {...}}``,
``{"done": {...}}`` or ``{"cancelled": true}``.

Read by ``app.analysis.AnalysisRunner`` and by ``benchmarks/bench_analysis.py``; imports nothing
of the analysis itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

#: The kinds of message the worker writes, one a line.
KINDS = ("progress", "ready", "done", "cancelled")


def read_messages(stdout: Iterable[bytes | str]) -> Iterator[tuple[str, Any]]:
    """The worker's messages, one ``(kind, value)`` per line of ``stdout`` (its pipe, bytes or
    text), each as soon as its line arrives (a caller that times them takes the time itself):
    ``("progress", [stage, done, total])``, ``("ready", summary so far)``, ``("done", summary)``,
    ``("cancelled", True)``. A line that is not a JSON object of one of :data:`KINDS` (a library
    writing to stdout) is skipped."""
    for line in stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            kind = next((k for k in KINDS if k in msg), None)
            if kind is not None:
                yield kind, msg[kind]
