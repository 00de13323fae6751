"""From found to fixed (issue 13): a scripted curator drives the real review app with Pilot, keys
counted, to a passing gate.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_curation.py                                  # both data sets
    python benchmarks/bench_curation.py --source ../shared/data --skip-squad [--verbose]
    python benchmarks/bench_curation.py --squad ../shared/data/squad-mtcb --skip-finance

Targets (issue 13):

1. FinanceBench (``--source``, 33 pairs): from the first open to a passing gate with no
   ``--force``, every accepted passage verbatim, at most 600 characters and still holding the
   answer's figures (every digit string of the answer, ``verify.shrink.answer_figures``, is a
   figure of the passage, ``text_figures``): <= 4 keys per pair on average, every key counted.
2. squad-mtcb (``--squad``, 1,299 pairs, document key ``title``): after ONE bulk chunk_index
   repair (``I`` and its confirmation) and no other fix, ``links`` passes and ``duplicates``
   raises at most 30 clusters (the gate run as if every pair not rejected were accepted, what
   the headless ``check`` does on a source without a workspace); then how many keys the
   remaining decisions take.
3. Each lexical shrink proposal appears in <= 100 ms: ``z`` pressed to the dialog on screen.

Method. ``CurateApp`` over a session on the source, its workspace in a temporary folder, under
``App.run_test(size=(120, 30))``; the passage scan and locate run at once (as in the tests'
``review_at_once``), and the script waits for the app's workers after each key (a curator reads
the screen before the next key; that wait is not a key). For each pair the curator reads what the
QA panel shows (``ReviewScreen.problems``: the checks the pair would fail or warn, with their fix
keys) and, for a judgement a person makes by reading (is the answer's figure in the passage at
all? does the proposal keep it?), the same domain functions the panel's shrink dialog uses. The
policy, in order:

- a figure of the answer is not in the located passage (a computed answer, e.g. a ratio of two
  table figures): no passage can be shown to hold it: ``x`` then ``3`` (unanswerable);
- ``verbatim`` fails: ``s`` (snap);
- the passage is over 600 characters: ``z`` and ``enter`` when the proposal fits and keeps every
  figure of the answer; otherwise ``x`` then ``6`` (too long);
- ``links`` fails: ``i``; ``duplicates`` fails: ``d``, ``k`` (keep this pair), ``escape``;
- then ``a``, and ``a`` again when the app asks (the pair would fail a check). Warnings
  (``answerable``, ``shared_passage``, ``unique_passage``) are left as warnings.

Navigation keys count too (``n`` when a decision does not land on an undecided pair). At the end
``g`` opens the checklist (counted) and ``app.gate.run_gate`` on the session (``loads``
included) must pass.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from mtcb_curate.app.gate import run_gate
from mtcb_curate.app.review import propose_shrink
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.dataset.model import Status
from mtcb_curate.verify.shrink import answer_figures, text_figures

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parents[1] / "shared" / "data"
DEFAULT_SQUAD = DEFAULT_SOURCE / "squad-mtcb"
SIZE = (120, 30)
MAX_CHARS = 600
KEYS_TARGET = 4.0
CLUSTERS_TARGET = 30
SHRINK_TARGET_MS = 100.0
#: Reject reasons by their key in the reject dialog (``dataset.model.REJECT_REASONS``, 1-based).
UNANSWERABLE, TOO_LONG = "3", "6"


class Keys:
    """Presses keys through Pilot, counts them (in total and per pair), and waits for the app
    to settle after each one (workers done, messages processed)."""

    def __init__(self, app, pilot) -> None:
        self.app, self.pilot = app, pilot
        self.total = 0
        self.per_pair: Counter[int] = Counter()
        self.by_key: Counter[str] = Counter()
        self.pair: int | None = None

    async def settle(self) -> None:
        await self.pilot.pause()
        await self.app.workers.wait_for_complete()
        await self.pilot.pause()

    async def press(self, *keys: str) -> None:
        for key in keys:
            self.total += 1
            self.by_key[key] += 1
            if self.pair is not None:
                self.per_pair[self.pair] += 1
            await self.pilot.press(key)
            await self.settle()


def _fast_review() -> None:
    """The passage scan and locate start with the first frame (the tests' ``review_at_once``)."""
    from mtcb_curate.tui.screens import review_analysis, review_painting

    review_analysis.ANALYSIS_DELAY_S = 0.0
    review_painting.LOCATE_DELAY_S = 0.0


def _holds_figures(passage: str, answer: str) -> bool:
    return set(answer_figures(answer)) <= text_figures(passage)


def _snap_target(screen, pid: int) -> str:
    """The passage as a snap would make it (the located span), else the passage itself."""
    from mtcb_curate.verify import snap

    doc = screen.session.dataset.document_for(screen.session.pairs[pid])
    r = screen.controller.verdicts.complete(pid)
    if doc is not None and r.verdict != "exact":
        new = snap(doc.text, r)
        if new is not None:
            return new
    return screen.session.view(pid).passage


async def _open_z_timed(keys: Keys, times: list[float]) -> bool:
    """Press ``z`` (counted) and time it to the shrink dialog composited on screen, as
    ``bench_review.py`` times a decision (key->frame): the key event is sent the way the pilot
    sends it, the clock stops once the dialog is the screen, every widget has processed its
    pending messages and the screen has been composited (no pilot idle sleeps, which put a
    ~60 ms floor under any ``pilot.press`` + ``pause``). True if the dialog opened."""
    from textual import events

    from mtcb_curate.tui.screens.shrink import ShrinkScreen

    app, pilot = keys.app, keys.pilot
    keys.total += 1
    keys.by_key["z"] += 1
    if keys.pair is not None:
        keys.per_pair[keys.pair] += 1
    key = events.Key("z", "z")
    key.set_sender(app)
    t0 = time.perf_counter()
    app._driver.send_message(key)
    while not isinstance(app.screen, ShrinkScreen) and time.perf_counter() - t0 < 2.0:
        await asyncio.sleep(0)
    opened = isinstance(app.screen, ShrinkScreen)
    if opened:
        await pilot._wait_for_screen()
        app.screen._on_timer_update()
        times.append((time.perf_counter() - t0) * 1000)
    await keys.settle()
    return opened


# -- 1. FinanceBench ------------------------------------------------------------------------------


async def curate_finance(source: Path, verbose: bool) -> dict:
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.checklist import ChecklistScreen
    from mtcb_curate.tui.screens.confirm import ConfirmScreen
    from mtcb_curate.tui.screens.review import ReviewScreen

    _fast_review()
    out: dict = {"shrink_ms": [], "actions": {}}
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("ficha", source=[str(source)], workspace=Path(tmp) / "ws"))
        app = CurateApp(session)
        try:
            async with app.run_test(size=SIZE) as pilot:
                keys = Keys(app, pilot)
                await keys.settle()
                screen: ReviewScreen = app.screen
                t_start = time.perf_counter()
                while True:
                    pid = screen.queue.current
                    if pid is None or session.status(pid) is not Status.UNDECIDED:
                        if session.first_undecided() is None:
                            break
                        keys.pair = None
                        await keys.press("n")
                        continue
                    keys.pair = pid
                    done: list[str] = []
                    view = session.view(pid)
                    located = _snap_target(screen, pid)
                    if not _holds_figures(located, view.answer):
                        missing = sorted(set(answer_figures(view.answer)) - text_figures(located))
                        done.append(f"reject: figure(s) {', '.join(missing)} not in the passage")
                        await keys.press("x", UNANSWERABLE)
                        out["actions"][pid] = done
                        continue
                    problems = {p.check_id for p in screen.controller.problems(pid)}
                    if "verbatim" in problems:
                        await keys.press("s")
                        done.append("snap")
                    view = session.view(pid)
                    if len(view.passage) > MAX_CHARS:
                        outcome = propose_shrink(session, pid)
                        p = outcome.proposal
                        if p is not None and len(p.text) <= MAX_CHARS and _holds_figures(p.text, view.answer):
                            assert await _open_z_timed(keys, out["shrink_ms"]), f"#{pid}: z opened no dialog"
                            await keys.press("enter")
                            done.append(f"shrink {len(view.passage):,} -> {len(session.view(pid).passage):,}")
                        else:
                            why = (outcome.reason if p is None else
                                   f"proposal of {len(p.text):,} characters" if len(p.text) > MAX_CHARS
                                   else "the proposal drops a figure of the answer (a table header's year)")
                            done.append(f"reject: too long ({why})")
                            await keys.press("x", TOO_LONG)
                            out["actions"][pid] = done
                            continue
                    problems = {p.check_id for p in screen.controller.problems(pid)}
                    if "links" in problems:
                        await keys.press("i")
                        done.append("repair chunk_index")
                    if "duplicates" in problems:
                        await keys.press("d", "k", "escape")
                        done.append("keep one of its duplicates")
                    if session.status(pid) is Status.UNDECIDED:
                        await keys.press("a")
                        if isinstance(app.screen, ConfirmScreen):
                            fails = [p.check_id for p in screen.controller.problems(pid) if p.fails]
                            done.append(f"confirmed ({', '.join(fails)})")
                            await keys.press("a")
                        done.append("accept")
                    out["actions"][pid] = done
                out["review_s"] = time.perf_counter() - t_start
                keys.pair = None
                await keys.press("g")
                out["checklist_opened"] = isinstance(app.screen, ChecklistScreen)
                out["keys"] = keys
        finally:
            report = run_gate(session)
            out["report"] = report
            out["accepted"] = [p.id for p in session.pairs if session.status(p.id) is Status.ACCEPTED]
            out["rejected"] = [p.id for p in session.pairs if session.status(p.id) is Status.REJECTED]
            out["n"] = len(session)
            bad = []
            for pid in out["accepted"]:
                v = session.view(pid)
                r = screen.controller.verdicts.complete(pid)
                if r.verdict != "exact" or len(v.passage) > MAX_CHARS or not _holds_figures(v.passage, v.answer):
                    bad.append((pid, r.verdict, len(v.passage)))
            out["bad"] = bad
            out["lengths"] = [len(session.view(pid).passage) for pid in out["accepted"]]
            session.workspace.close()
    return out


def report_finance(out: dict, verbose: bool) -> bool:
    keys: Keys = out["keys"]
    n = out["n"]
    per = keys.total / n
    report = out["report"]
    print(f"1. FinanceBench: {n} pairs, scripted curator in the review app at {SIZE[0]}x{SIZE[1]}")
    print(f"   keys: {keys.total} in total, {per:.2f} per pair (target <= {KEYS_TARGET:g}): "
          f"{'met' if per <= KEYS_TARGET else 'MISSED'}")
    print("   by key: " + ", ".join(f"{k} {c}" for k, c in keys.by_key.most_common()))
    print(f"   accepted {len(out['accepted'])}, rejected {len(out['rejected'])}; accepted passages: "
          f"{min(out['lengths'], default=0)}-{max(out['lengths'], default=0)} characters, "
          f"{'all' if not out['bad'] else 'NOT all'} exact, <= {MAX_CHARS} and holding the answer's figures"
          + (f" (failing: {out['bad']})" if out["bad"] else ""))
    print(f"   review took {out['review_s']:.1f} s of app time; g opened the checklist: {out['checklist_opened']}")
    print(f"   gate (no --force): {'PASSES' if report.passed else 'FAILS'}")
    for c in report.checks:
        print(f"     {c.id:<15} {str(c.status):<5} {c.message}")
    why = Counter()
    for pid, acts in out["actions"].items():
        why[acts[-1].split(":")[0] if acts[-1].startswith("reject") else acts[-1]] += 1
    print("   outcomes: " + ", ".join(f"{k} {v}" for k, v in why.most_common()))
    if verbose or per > KEYS_TARGET:
        costly = sorted(out["actions"], key=lambda pid: -keys.per_pair[pid])
        print("   pairs by keys:" if verbose else "   target missed; the costliest pairs:")
        for pid in costly if verbose else costly[:8]:
            print(f"     #{pid:<3} {keys.per_pair[pid]} keys: {'; '.join(out['actions'][pid])}")
    ok = report.passed and not out["bad"] and per <= KEYS_TARGET
    return ok


# -- 2. squad-mtcb --------------------------------------------------------------------------------


_CLUSTERS = re.compile(r"(\d[\d,]*) unresolved near-duplicate cluster")


def _clusters(report) -> int:
    m = _CLUSTERS.search(report.get("duplicates").message)
    return int(m.group(1).replace(",", "")) if m else 0


async def curate_squad(squad: Path) -> dict:
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.cluster import ClusterScreen
    from mtcb_curate.tui.screens.confirm import ConfirmScreen

    _fast_review()
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("squad", source=[str(squad)], workspace=Path(tmp) / "ws",
                                       columns={"doc_key": "title"}))
        app = CurateApp(session)
        try:
            async with app.run_test(size=SIZE) as pilot:
                keys = Keys(app, pilot)
                await keys.settle()
                screen = app.screen
                before = run_gate(session, include_undecided=True, loads=False)
                out["links_before"] = before.get("links")
                out["clusters_before"] = _clusters(before)
                await keys.press("I")
                # the plan runs in a worker; then the confirmation
                for _ in range(600):
                    if isinstance(app.screen, ConfirmScreen):
                        break
                    await pilot.pause(0.05)
                out["confirm_shown"] = isinstance(app.screen, ConfirmScreen)
                await keys.press("y")
                out["repair_keys"] = keys.total
                after = run_gate(session, include_undecided=True, loads=False)
                out["after"] = after
                out["clusters_after"] = _clusters(after)
                cluster_pairs = set(after.get("duplicates").failing)
                # the remaining decisions
                keys.total, keys.by_key = 0, Counter()
                t0 = time.perf_counter()
                confirms = Counter()
                while True:
                    pid = screen.queue.current
                    if pid is None or session.status(pid) is not Status.UNDECIDED:
                        if session.first_undecided() is None:
                            break
                        await keys.press("n")
                        continue
                    if pid in cluster_pairs and screen.controller.cluster_index.get(pid) is not None:
                        await keys.press("d")
                        if isinstance(app.screen, ClusterScreen):
                            await keys.press("k")
                            if isinstance(app.screen, ClusterScreen) and app.screen._armed is not None:
                                await keys.press("k")  # a keep that rejects more than 5 asks again
                            await keys.press("escape")
                    if session.status(pid) is Status.UNDECIDED:
                        await keys.pilot.press("a")  # counted below, without a settle per pair
                        keys.total += 1
                        keys.by_key["a"] += 1
                        await keys.pilot.pause()
                        if isinstance(app.screen, ConfirmScreen):
                            for p in screen.controller.problems(pid):
                                if p.fails:
                                    confirms[p.check_id] += 1
                            await keys.press("a")
                out["decide_s"] = time.perf_counter() - t0
                out["keys"] = keys
                out["confirms"] = confirms
        finally:
            final = run_gate(session, loads=False)
            out["final"] = final
            out["n"] = len(session)
            out["accepted"] = sum(session.status(p.id) is Status.ACCEPTED for p in session.pairs)
            out["rejected"] = sum(session.status(p.id) is Status.REJECTED for p in session.pairs)
            session.workspace.close()
    return out


def report_squad(out: dict) -> bool:
    lb, la = out["links_before"], out["after"].get("links")
    print(f"\n2. squad-mtcb: {out['n']:,} pairs (document key title)")
    print(f"   before: links {lb.status} ({len(lb.failing):,} pairs fail), duplicates {out['clusters_before']} clusters")
    print(f"   one bulk chunk_index repair: {out['repair_keys']} keys (I, then y at the confirmation: "
          f"{'shown' if out['confirm_shown'] else 'NOT shown'})")
    print(f"   after, every pair not rejected checked as if accepted: links {la.status} ({la.message}); "
          f"duplicates {out['clusters_after']} clusters (target <= {CLUSTERS_TARGET})")
    keys: Keys = out["keys"]
    print(f"   remaining decisions: {keys.total:,} keys for {out['n']:,} pairs ({keys.total / out['n']:.3f} per pair): "
          + ", ".join(f"{k} {c:,}" for k, c in keys.by_key.most_common())
          + f"; {out['decide_s']:.0f} s of app time")
    if out["confirms"]:
        print("   accepts that asked once more: " + ", ".join(f"{k} {v}" for k, v in out["confirms"].items()))
    final = out["final"]
    print(f"   accepted {out['accepted']:,}, rejected {out['rejected']:,}; gate: {'PASSES' if final.passed else 'FAILS'}")
    for c in final.checks:
        print(f"     {c.id:<15} {str(c.status):<5} {c.message}")
    return la.status == "pass" and out["clusters_after"] <= CLUSTERS_TARGET


# -- 3. shrink proposal timing ------------------------------------------------------------------


async def time_shrink(source: Path) -> list[float]:
    """Each FinanceBench pair snapped (as the curator does) and, when it has a lexical proposal,
    ``z`` timed to the dialog on screen (:func:`_open_z_timed`), then ``escape``."""
    from mtcb_curate.tui.app import CurateApp

    _fast_review()
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("ficha", source=[str(source)], workspace=Path(tmp) / "ws"))
        app = CurateApp(session)
        try:
            async with app.run_test(size=SIZE) as pilot:
                keys = Keys(app, pilot)
                await keys.settle()
                screen = app.screen
                for i in range(len(session)):
                    pid = screen.queue.current
                    if screen.controller.verdicts.complete(pid).verdict != "exact":
                        await keys.press("s")
                    if propose_shrink(session, pid).proposal is not None:
                        assert await _open_z_timed(keys, times), f"#{pid}: z opened no dialog"
                        await keys.press("escape")
                    if i < len(session) - 1:
                        await keys.press("j")
        finally:
            session.workspace.close()
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="FinanceBench folder (corpus/questions.jsonl)")
    ap.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    ap.add_argument("--skip-finance", action="store_true")
    ap.add_argument("--skip-squad", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="the keys and actions of every FinanceBench pair")
    args = ap.parse_args(argv)
    print(f"Python {platform.python_version()}, {platform.machine()}; terminal {SIZE[0]}x{SIZE[1]} (Pilot)\n")
    ok = True
    shrink_ms: list[float] = []
    if not args.skip_finance:
        if not (args.source / "corpus.jsonl").is_file():
            print(f"no corpus.jsonl in {args.source}", file=sys.stderr)
            return 2
        out = asyncio.run(curate_finance(args.source, args.verbose))
        ok &= report_finance(out, args.verbose)
        shrink_ms = out["shrink_ms"] + asyncio.run(time_shrink(args.source))
    if not args.skip_squad:
        if not (args.squad / "questions.jsonl").is_file():
            print(f"no questions.jsonl in {args.squad}", file=sys.stderr)
            return 2
        ok &= report_squad(asyncio.run(curate_squad(args.squad)))
    if shrink_ms:
        med, mx = statistics.median(shrink_ms), max(shrink_ms)
        print(f"\n3. lexical shrink, z pressed to the dialog on screen: {len(shrink_ms)} proposals, "
              f"median {med:.1f} ms, max {mx:.1f} ms (target <= {SHRINK_TARGET_MS:g} ms): "
              f"{'met' if mx <= SHRINK_TARGET_MS else 'MISSED'}")
        ok &= mx <= SHRINK_TARGET_MS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
