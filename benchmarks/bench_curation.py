"""A careful curator drives the real review app with Pilot, every key counted, from the first open
to a passing gate: how many pairs are kept, in how many keys, and whether the kept passages can
be found by the configured chunkers.

Run from the project root (the project installed in the current Python)::

    python benchmarks/bench_curation.py --source ../shared/data --skip-squad --json out.json [--verbose]
    python benchmarks/bench_curation.py --squad ../shared/data/squad-mtcb --skip-finance

``--source DIR`` is any ficha-like dataset folder (``corpus.jsonl`` and ``questions.jsonl``).
``--json FILE`` writes ``{"pairs", "kept", "rejected", "keys", "keys_per_pair",
"max_keys_per_pair", "kept_inside_one_chunk"}`` (counts; ``kept_inside_one_chunk``: kept
passages that some chunk of their document holds as a plain substring, MTCB's hit rule, under
chonkie's ``RecursiveChunker(chunk_size=2048)``). ``--config`` is the app's config file (its
``[preview] chunkers`` are the configured chunkers the ceiling is reported for).

Method. ``CurateApp`` over a session on the source, its workspace in a temporary folder, under
``App.run_test(size=(120, 30))``; the passage scan and locate start at once (as in the tests'
``review_at_once``), and the script waits for the app's workers after each key (a curator reads
the screen before the next key; that wait is not a key). Every key counts, navigation included.

The curator's policy (what a careful curator does with what the screen shows: the QA panel's
verdict, problems and findability lines, the shrink and fit dialogs, the one-line notices; the
gold answer is read only as the screen shows it):

1. ``F`` once: the findability of every pair under the configured chunkers (one key for the
   session); when the first pair shows ``links`` failing (the set's chunk_index unset or
   wrong), ``I`` and ``y``: every chunk_index repaired in one step.
2. For each undecided pair, in queue order (``n`` when a decision does not land on one), read
   for :data:`READ_S` seconds (the app works out the shrink proposal meanwhile), then: when
   the panel shows work to do (the passage is not verbatim, over the checklist's
   ``max_passage_chars``, cut across chunks or longer than a chunk, or ``answerable`` says the
   passage does not hold the answer), ``z``. A proposal is read: it holds the answer's figures
   as written or computed (its "computed answer" line shows the derivation and the rows it
   comes from) and, for an answer without figures, its words; the curator takes it with
   ``enter``. When the app says the answer's figures are neither in the passage or around it
   nor computable from the rows the question names, the evidence cannot be shown in one
   passage: ``x`` then ``3`` (unanswerable). When it says nothing shorter holds the answer (or
   the answer gives nothing to anchor one), the passage stays (``s`` first if not verbatim).
3. When the findability line then says the passage is cut across chunks, ``o`` (fit in one
   chunk) and ``enter`` on its proposal. When the app says no one chunk holds what the answer
   needs, the chunks it names decide: in chunks more than one apart, the evidence cannot be one
   findable passage: ``x`` then ``3``; in adjacent chunks the passage is kept as it is (it can
   be one passage; it is counted as not inside one chunk).
4. ``links`` fails: ``i``; ``duplicates`` fails: ``d``, ``k`` (keep this pair), ``escape``; then
   ``a``, and ``a`` again when the app asks (the pair would fail a check: a passage the
   evidence makes longer than the checklist's limit). Warnings are left as warnings.

At the end ``g`` opens the checklist (counted) and ``app.gate.run_gate`` runs on the session.
Whether each kept passage really holds the figures its answer needs is checked by reading them
(``--verbose`` prints each one); ``docs/performance.md`` lists them.

The shrink timing: ``z`` pressed to the dialog composited on screen, for every proposal the
curator asks for, and once more per pair in a second pass (``z`` then ``escape``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parents[1] / "shared" / "data"
DEFAULT_SQUAD = DEFAULT_SOURCE / "squad-mtcb"
SIZE = (120, 30)
CLUSTERS_TARGET = 30
#: Targets (docs/performance.md): kept pairs of the FinanceBench set, keys, the ceiling, the shrink.
KEPT_TARGET = 29
KEYS_TARGET = 5.0
MAX_KEYS_TARGET = 20
INSIDE_TARGET = 0.9
SHRINK_MEDIAN_MS, SHRINK_MAX_MS = 100.0, 200.0
#: Seconds the curator reads a pair before the first key on it (not counted as a key).
READ_S = 0.5
#: The chunker ``kept_inside_one_chunk`` is counted under.
REFERENCE_SPEC = "recursive:2048"
#: Reject reasons by their key in the reject dialog (``dataset.model.REJECT_REASONS``, 1-based).
UNANSWERABLE = "3"


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
        from textual.worker import WorkerCancelled

        await self.pilot.pause()
        for _ in range(20):  # a worker replaced by a newer one of its group ends cancelled
            try:
                await self.app.workers.wait_for_complete()
                break
            except WorkerCancelled:
                await self.pilot.pause()
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


async def _wait(pilot, cond, seconds: float = 600.0) -> bool:
    """Let the app run until ``cond()`` (a worker's result on screen); not a key."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        if cond():
            return True
        await pilot.pause(0.05)
    return cond()


def _listen(app) -> list[str]:
    """Every notice the app shows from now on, in order (what the curator reads in the corner:
    ``App.notify`` wrapped; notices expire from the app's own list)."""
    heard: list[str] = []
    shown = app.notify

    def notify(message, *args, **kwargs):
        heard.append(str(message))
        return shown(message, *args, **kwargs)

    app.notify = notify
    app.heard = heard
    return heard


def _notes(app, since: int) -> list[str]:
    """The notices shown since the ``since``-th."""
    return app.heard[since:]


async def _open_timed(keys: Keys, key: str, times: list[float] | None, screen_type) -> bool:
    """Press ``key`` (counted) and, when ``times`` is given, time it to the dialog composited on
    screen, as ``bench_review.py`` times a decision (key->frame): the key event is sent the way
    the pilot sends it, the clock stops once the dialog is the screen, every widget has processed
    its pending messages and the screen has been composited (no pilot idle sleeps, which put a
    ~60 ms floor under any ``pilot.press`` + ``pause``). True if the dialog opened."""
    from textual import events

    app, pilot = keys.app, keys.pilot
    keys.total += 1
    keys.by_key[key] += 1
    if keys.pair is not None:
        keys.per_pair[keys.pair] += 1
    event = events.Key(key, key)
    event.set_sender(app)
    before = len(app.heard)
    t0 = time.perf_counter()
    app._driver.send_message(event)
    while not isinstance(app.screen, screen_type) and time.perf_counter() - t0 < 2.0:
        await asyncio.sleep(0)
    opened = isinstance(app.screen, screen_type)
    if opened and times is not None:
        await pilot._wait_for_screen()
        app.screen._on_timer_update()
        times.append((time.perf_counter() - t0) * 1000)
    await keys.settle()
    if not opened:  # a worker may still be chunking (o): wait for its dialog or its notice
        await _wait(pilot, lambda: isinstance(app.screen, screen_type) or any(
            n.startswith(("No ", "The passage")) for n in app.heard[before:]), 10.0)
        opened = isinstance(app.screen, screen_type)
    return opened


def _placements(screen, pid: int) -> dict:
    lines = screen.controller.current_find_lines(pid)
    return lines.placements() if lines is not None else {}


_CHUNK_NUMBERS = re.compile(r"\bin chunk (\d+)")


async def _review_pair(keys: Keys, screen, session, pid: int, out: dict) -> list[str]:
    """One pair, by the policy of the module docstring; returns what was done, one line each."""
    from mtcb_curate.preview.placement import CUT
    from mtcb_curate.tui.screens.confirm import ConfirmScreen
    from mtcb_curate.tui.screens.shrink import ShrinkScreen

    app = keys.app
    done: list[str] = []
    await keys.pilot.pause(READ_S)  # reading the pair (not a key; the app works ahead meanwhile)
    await keys.settle()
    verdict = str(screen.controller.verdicts.complete(pid).verdict)
    problems = {p.check_id for p in screen.controller.problems(pid)}
    cut = any(v == CUT for v in _placements(screen, pid).values())
    limit = screen.controller.limits.max_chars
    long = len(session.view(pid).passage) > limit
    if verdict != "exact" or long or cut or "answerable" in problems:
        seen = len(app.heard)
        if await _open_timed(keys, "z", out["shrink_ms"], ShrinkScreen):
            out.setdefault("shrink_at", []).append((pid, out["shrink_ms"][-1]))
            p = app.screen.proposal
            before = len(session.view(pid).passage)
            await keys.press("enter")
            what = f"z: {before:,} -> {len(session.view(pid).passage):,}"
            if p is not None and p.computed:
                what += " (computed: " + "; ".join(p.computed) + ")"
            if p is not None and p.outside:
                what += f" (reaching out {p.outside:,})"
            done.append(what)
        else:
            note = next((n for n in _notes(app, seen) if n.startswith("No shrink:")), "No shrink: (no notice)")
            if "nor computable" in note:
                done.append("reject: " + note)
                await keys.press("x", UNANSWERABLE)
                return done
            done.append("kept as is: " + note)
            if verdict != "exact":
                await keys.press("s")
                done.append("snap")
    if any(v == CUT for v in _placements(screen, pid).values()):
        seen = len(app.heard)
        if await _open_timed(keys, "o", None, ShrinkScreen):
            before = len(session.view(pid).passage)
            await keys.press("enter")
            done.append(f"fit: {before:,} -> {len(session.view(pid).passage):,}")
        else:
            await _wait(keys.pilot, lambda: any(n.startswith(("No fit", "The passage")) for n in _notes(app, seen)),
                        10.0)
            note = next((n for n in _notes(app, seen) if n.startswith(("No fit", "The passage"))), "(no notice)")
            chunks = [int(c) for c in _CHUNK_NUMBERS.findall(note)]
            if chunks and max(chunks) - min(chunks) > 1:
                done.append("reject: evidence in chunks more than one apart: " + note)
                await keys.press("x", UNANSWERABLE)
                return done
            done.append("kept across adjacent chunks: " + note)
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
    return done


def inside_one_chunk(session, pids: list[int], spec_text: str) -> list[int]:
    """The pairs of ``pids`` whose passage some chunk of their document holds as a plain
    substring (MTCB's hit rule) under ``spec_text``, chunked by chonkie here."""
    from mtcb_curate.preview.chunkers import chunk_corpus, parse_spec

    docs = {key: d.text for key, d in session.dataset.documents.items()}
    chunks = chunk_corpus(parse_spec(spec_text), docs)
    by_doc: dict[str, list[str]] = {}
    for k, text in enumerate(chunks.texts):
        by_doc.setdefault(chunks.doc_keys[chunks.doc[k]], []).append(text)
    out = []
    for pid in pids:
        v = session.view(pid)
        if v.passage and any(v.passage in t for t in by_doc.get(v.pair.doc_key, [])):
            out.append(pid)
    return out


async def curate_finance(source: Path, verbose: bool, config: Path | None = None,
                         extra_specs: tuple[str, ...] = ()) -> dict:
    from mtcb_curate.preview.settings import PreviewSettings
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.checklist import ChecklistScreen
    from mtcb_curate.tui.screens.confirm import ConfirmScreen
    from mtcb_curate.tui.screens.review import ReviewScreen

    _fast_review()
    out: dict = {"shrink_ms": [], "actions": {}}
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("ficha", source=[str(source)], workspace=Path(tmp) / "ws"))
        app = CurateApp(session, config_path=config)
        _listen(app)
        try:
            async with app.run_test(size=SIZE) as pilot:
                keys = Keys(app, pilot)
                await keys.settle()
                screen: ReviewScreen = app.screen
                t_start = time.perf_counter()
                await keys.press("F")
                await _wait(pilot, lambda: bool(screen.controller.find_lines) and not screen._find_running)
                out["findability_s"] = time.perf_counter() - t_start
                first = screen.queue.current
                if first is not None and "links" in {p.check_id for p in screen.controller.problems(first)}:
                    # the set's chunk_index is unset or wrong: every one repaired in one step
                    await keys.press("I")
                    await _wait(pilot, lambda: isinstance(app.screen, ConfirmScreen), 60.0)
                    if isinstance(app.screen, ConfirmScreen):
                        await keys.press("y")
                while True:
                    pid = screen.queue.current
                    if pid is None or session.status(pid) is not Status.UNDECIDED:
                        if session.first_undecided() is None:
                            break
                        keys.pair = None
                        await keys.press("n")
                        continue
                    keys.pair = pid
                    out["actions"][pid] = await _review_pair(keys, screen, session, pid, out)
                out["review_s"] = time.perf_counter() - t_start
                keys.pair = None
                await keys.press("g")
                out["checklist_opened"] = isinstance(app.screen, ChecklistScreen)
                out["keys"] = keys
        finally:
            out["report"] = run_gate(session)
            out["n"] = len(session)
            out["accepted"] = [p.id for p in session.pairs if session.status(p.id) is Status.ACCEPTED]
            out["rejected"] = [p.id for p in session.pairs if session.status(p.id) is Status.REJECTED]
            out["verdicts"] = {pid: str(screen.controller.verdicts.complete(pid).verdict) for pid in out["accepted"]}
            out["passages"] = {pid: session.view(pid).passage for pid in out["accepted"]}
            out["answers"] = {p.id: (session.view(p.id).question, session.view(p.id).answer) for p in session.pairs}
            specs = [REFERENCE_SPEC] + [s.text for s in PreviewSettings.resolve(config).chunkers] + list(extra_specs)
            out["inside"] = {spec: inside_one_chunk(session, out["accepted"], spec) for spec in dict.fromkeys(specs)}
            session.workspace.close()
    return out


def finance_json(out: dict) -> dict:
    """The ``--json`` figures (module docstring)."""
    keys: Keys = out["keys"]
    n = out["n"]
    return {"pairs": n, "kept": len(out["accepted"]), "rejected": len(out["rejected"]), "keys": keys.total,
            "keys_per_pair": round(keys.total / n, 3) if n else 0.0,
            "max_keys_per_pair": max(keys.per_pair.values(), default=0),
            "kept_inside_one_chunk": len(out["inside"][REFERENCE_SPEC])}


def report_finance(out: dict, verbose: bool) -> bool:
    keys: Keys = out["keys"]
    n = out["n"]
    j = finance_json(out)
    kept = j["kept"]
    print(f"1. FinanceBench-style set: {n} pairs, a careful curator in the review app at {SIZE[0]}x{SIZE[1]}")
    print(f"   kept {kept}, rejected {j['rejected']} (target: at least {KEPT_TARGET} kept): "
          f"{'met' if kept >= KEPT_TARGET else 'MISSED'}")
    print(f"   keys: {keys.total} in total, {j['keys_per_pair']:.2f} per pair (target <= {KEYS_TARGET:g}), at most "
          f"{j['max_keys_per_pair']} for one pair (target <= {MAX_KEYS_TARGET})")
    print("   by key: " + ", ".join(f"{k} {c}" for k, c in keys.by_key.most_common()))
    lengths = [len(t) for t in out["passages"].values()]
    not_exact = [pid for pid, v in out["verdicts"].items() if v != "exact"]
    print(f"   kept passages: {min(lengths, default=0)}-{max(lengths, default=0)} characters, "
          f"{sum(x <= 600 for x in lengths)} of {kept} at most 600; "
          f"{'all verbatim' if not not_exact else f'NOT verbatim: {not_exact}'}")
    for spec, pids in out["inside"].items():
        share = len(pids) / kept if kept else 0.0
        mark = f" (target >= {INSIDE_TARGET:.0%})" if spec == REFERENCE_SPEC else ""
        print(f"   inside one chunk of {spec}: {len(pids)} of {kept} kept passages ({share:.0%}){mark}")
    print(f"   findability run (F) {out['findability_s']:.1f} s; review {out['review_s']:.1f} s of app time; "
          f"g opened the checklist: {out['checklist_opened']}")
    report = out["report"]
    print(f"   gate (no --force): {'PASSES' if report.passed else 'FAILS'}")
    for c in report.checks:
        print(f"     {c.id:<15} {str(c.status):<5} {c.message}")
    outcome = Counter()
    for acts in out["actions"].values():
        last = acts[-1]
        outcome[last.split(":")[0]] += 1
    print("   outcomes: " + ", ".join(f"{k} {v}" for k, v in outcome.most_common()))
    costly = sorted(out["actions"], key=lambda pid: (-keys.per_pair[pid], pid))
    inside = set(out["inside"][REFERENCE_SPEC])
    print("   pairs by keys:" if verbose else "   the costliest pairs:")
    for pid in costly if verbose else costly[:6]:
        where = "" if pid not in out["passages"] else (" [one chunk]" if pid in inside else " [NOT in one chunk]")
        print(f"     #{pid:<3} {keys.per_pair[pid]} keys{where}: {'; '.join(out['actions'][pid])}")
    if verbose:
        print("\n   the kept passages (read each: does it hold what the answer needs?)")
        for pid, text in out["passages"].items():
            q, a = out["answers"][pid]
            print(f"   --- #{pid} ({len(text):,} characters) Q: {' '.join(q.split())[:160]}")
            print(f"       A: {' '.join(a.split())[:200]}")
            print("       " + text.replace("\n", " | ")[:1200])
    share = len(inside) / kept if kept else 0.0
    return (kept >= KEPT_TARGET and not not_exact and j["keys_per_pair"] <= KEYS_TARGET
            and j["max_keys_per_pair"] <= MAX_KEYS_TARGET and share >= INSIDE_TARGET)


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


async def _anchor_ms(app, pilot) -> float:
    """The anchor: a trivial modal screen (one line of text) pushed and composited, timed as
    :func:`_open_timed` times the shrink dialog, in the same app and run."""
    from textual.screen import ModalScreen
    from textual.widgets import Static

    class Anchor(ModalScreen):
        def compose(self):
            yield Static("anchor")

    t0 = time.perf_counter()
    app.push_screen(Anchor())
    while not isinstance(app.screen, Anchor):
        await asyncio.sleep(0)
    await pilot._wait_for_screen()
    app.screen._on_timer_update()
    ms = (time.perf_counter() - t0) * 1000
    app.pop_screen()
    await pilot.pause()
    return ms


async def time_shrink(source: Path, config: Path | None = None, anchors: list[float] | None = None,
                      where: list[tuple[int, float]] | None = None) -> list[float]:
    """Each pair, as the curator finds it (read a moment: the proposal is worked out ahead):
    when ``z`` has a proposal, ``z`` timed to the dialog on screen (:func:`_open_timed`), then
    ``escape``, then the anchor (:func:`_anchor_ms`, into ``anchors``); ``j`` to the next pair.
    ``where`` receives (pair id, ms) of each timing."""
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.shrink import ShrinkScreen

    _fast_review()
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Options("ficha", source=[str(source)], workspace=Path(tmp) / "ws"))
        app = CurateApp(session, config_path=config)
        _listen(app)
        try:
            async with app.run_test(size=SIZE) as pilot:
                keys = Keys(app, pilot)
                await keys.settle()
                screen = app.screen
                for i in range(len(session)):
                    pid = screen.queue.current
                    screen.controller.verdicts.complete(pid)
                    await pilot.pause(READ_S)  # reading the pair
                    await keys.settle()
                    if propose_shrink(session, pid, verdicts=screen.controller.verdicts).proposal is not None:
                        assert await _open_timed(keys, "z", times, ShrinkScreen), f"#{pid}: z opened no dialog"
                        if where is not None:
                            where.append((pid, times[-1]))
                        await keys.press("escape")
                        if anchors is not None:
                            anchors.append(await _anchor_ms(app, pilot))
                    if i < len(session) - 1:
                        await keys.press("j")
        finally:
            session.workspace.close()
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="a ficha-like dataset folder")
    ap.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    ap.add_argument("--config", type=Path, default=None, help="the app's config file ([preview] chunkers)")
    ap.add_argument("--also-chunker", action="append", default=[], metavar="SPEC",
                    help="another chunker spec to report the kept passages' ceiling under (e.g. token:2048)")
    ap.add_argument("--skip-finance", action="store_true")
    ap.add_argument("--skip-squad", action="store_true")
    ap.add_argument("--skip-timing", action="store_true", help="no second pass timing z on every pair")
    ap.add_argument("--json", type=Path, default=None, help="write the FinanceBench figures as JSON here")
    ap.add_argument("--verbose", action="store_true", help="the keys and actions of every pair, and each kept passage")
    args = ap.parse_args(argv)
    print(f"Python {platform.python_version()}, {platform.machine()}; terminal {SIZE[0]}x{SIZE[1]} (Pilot)\n")
    ok = True
    shrink_ms: list[float] = []
    if not args.skip_finance:
        if not (args.source / "corpus.jsonl").is_file():
            print(f"no corpus.jsonl in {args.source}", file=sys.stderr)
            return 2
        out = asyncio.run(curate_finance(args.source, args.verbose, args.config, tuple(args.also_chunker)))
        ok &= report_finance(out, args.verbose)
        if args.json is not None:
            args.json.write_text(json.dumps(finance_json(out), indent=2) + "\n", encoding="utf-8")
            print(f"   wrote {args.json}")
        anchors: list[float] = []
        second_at: list[tuple[int, float]] = []
        second = [] if args.skip_timing else asyncio.run(time_shrink(args.source, args.config, anchors, second_at))
        shrink_ms = out["shrink_ms"] + second
    if not args.skip_squad:
        if not (args.squad / "questions.jsonl").is_file():
            print(f"no questions.jsonl in {args.squad}", file=sys.stderr)
            return 2
        ok &= report_squad(asyncio.run(curate_squad(args.squad)))
    if shrink_ms:
        if not args.skip_finance:
            first = out["shrink_ms"]
            slowest = sorted(out.get("shrink_at", []), key=lambda x: -x[1])[:3]
            print(f"\n   z during the curation: {len(first)} proposals, median {statistics.median(first):.1f} ms, "
                  f"max {max(first):.1f} ms, {sum(t > SHRINK_MAX_MS for t in first)} over {SHRINK_MAX_MS:g} ms; "
                  "slowest " + ", ".join(f"#{pid} {t:.0f} ms" for pid, t in slowest) if first else "")
            if second:
                print(f"   z in the second pass (z, escape on every pair with a proposal): {len(second)} proposals, "
                      f"median {statistics.median(second):.1f} ms, max {max(second):.1f} ms; slowest "
                      + ", ".join(f"#{pid} {t:.0f} ms" for pid, t in sorted(second_at, key=lambda x: -x[1])[:3]))
        med, mx = statistics.median(shrink_ms), max(shrink_ms)
        met = med <= SHRINK_MEDIAN_MS and mx <= SHRINK_MAX_MS
        print(f"\n3. lexical shrink, z pressed to the proposal on screen: {len(shrink_ms)} proposals, "
              f"median {med:.1f} ms, max {mx:.1f} ms, {sum(t > SHRINK_MAX_MS for t in shrink_ms)} over "
              f"{SHRINK_MAX_MS:g} ms (targets: median <= {SHRINK_MEDIAN_MS:g} ms, max <= "
              f"{SHRINK_MAX_MS:g} ms): {'met' if met else 'MISSED'}")
        ok &= met
        if not args.skip_finance and anchors:
            amed = statistics.median(anchors)
            print(f"   anchor, a trivial modal screen opened the same way in the same run: median {amed:.1f} ms, "
                  f"max {max(anchors):.1f} ms; shrink median / anchor median = {med / amed:.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
