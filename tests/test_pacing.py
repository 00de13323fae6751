"""The start-up passes give way to keys all along: no pass runs long between two paces.

A held key waits for the worker's next ``threads.pace``. A loop over every pair without one
(a comprehension building a list, a dict or a code per pair) keeps the key waiting for all of
it, up to the interpreter's switch interval at each of the app's GIL hand-overs. Measured
here in calls rather than time: the profiler's ``call`` and ``c_call`` events on the worker's
thread between two paces, on a synthetic set large enough (``PAIRS``) that such a loop makes
more than ``LONGEST_STRETCH`` of them while a paced one (``paced(..., every=1024)``) stays
well under it. A C call counts one, however long: ``benchmarks/bench_gil.py`` measures those.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from mtcb_curate import neardup, threads
from mtcb_curate.app import clusters
from mtcb_curate.app import filters as app_filters
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.app.verdicts import Verdicts
from mtcb_curate.checks import Limits
from mtcb_curate.checks.pair import set_check_results

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PAIRS = 12_000
LONGEST_STRETCH = 10_000


@pytest.fixture(scope="module")
def big_session(tmp_path_factory):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from make_synthetic import make_dataset
    finally:
        sys.path.remove(str(BENCHMARKS))
    root = tmp_path_factory.mktemp("pacing")
    data = make_dataset(root / "data", docs=20, pairs=PAIRS, mean_chars=60_000)
    session = open_session(Options(name="ficha", source=[str(data)], workspace=root / "ws"))
    yield session
    session.workspace.close()


def _stretches(monkeypatch, passes) -> list[tuple[int, str, str, str]]:
    """Run ``passes`` (name -> callable) in a worker thread as the review screen does, each in
    ``threads.working()``; every stretch between two paces as (calls, pass, where it began,
    where it ended), the places being the project's innermost line."""
    count = [0]
    state = {"pass": "", "from": ""}
    found: list[tuple[int, str, str, str]] = []
    real = threads.pace

    def place(frame) -> str:
        while frame is not None and ("mtcb_curate" not in frame.f_code.co_filename
                                     or frame.f_code.co_filename.endswith("threads.py")):
            frame = frame.f_back
        return f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}:{frame.f_lineno}" if frame else "?"

    def pace(lock=None):
        here = place(sys._getframe(1))
        found.append((count[0], state["pass"], state["from"], here))
        state["from"] = here
        real(lock)
        count[0] = 0

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    # every module that took ``pace`` by name, and ``threads`` itself (``paced``, ``discard``)
    for name, module in list(sys.modules.items()):
        if name.startswith("mtcb_curate") and getattr(module, "pace", None) is real:
            monkeypatch.setattr(module, "pace", pace)
    failed: list[BaseException] = []

    def run():
        sys.setprofile(profile)
        try:
            for name, fn in passes.items():
                state.update({"pass": name, "from": "its start"})
                count[0] = 0
                with threads.working():
                    fn()
                found.append((count[0], name, state["from"], "its end"))
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
            failed.append(exc)
        finally:
            sys.setprofile(None)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return found


def test_no_start_up_pass_runs_long_between_two_paces(big_session, monkeypatch):
    from mtcb_curate.dataset import tokens

    session = big_session
    tokens.encoding()  # loaded once per process, in tiktoken's own loop (the token pass on a cold cache)
    verdicts = Verdicts(session)
    limits = Limits.resolve(session.dataset.profile, {})
    search = {}

    def find():
        search["found"] = clusters.search(session, threshold=neardup.DEFAULT_THRESHOLD,
                                          located=verdicts.verbatim_spans(), workers=1)
        clusters.groups(session, search["found"])

    stretches = _stretches(monkeypatch, {
        "passage scan": verdicts.scan,
        "filters": lambda: app_filters.warm(session),
        "near-duplicates": find,
        "set checks": lambda: set_check_results(session, threshold=neardup.DEFAULT_THRESHOLD, limits=limits,
                                                search=search["found"]),
        "tokens": verdicts.fill_token_cache,
    })
    assert {name for _, name, _, _ in stretches} == {"passage scan", "filters", "near-duplicates", "set checks",
                                                     "tokens"}
    long = sorted((s for s in stretches if s[0] > LONGEST_STRETCH), reverse=True)
    assert long == [], "\n".join(f"{calls:,} calls in {name}, from {a} to {b}" for calls, name, a, b in long)
