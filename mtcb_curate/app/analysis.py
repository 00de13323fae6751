"""The review app's analysis of a whole session, off the app's process, kept per fingerprint.

What the review screen needs about every pair and cannot work out on a key: each passage's
verification (exact, normalized or fuzzy, with its occurrences elsewhere, its ``chunk_index``
window and its token count), the near-duplicate clusters and shared-passage groups, and the
set-wide checks' results over the pairs not rejected. ``app.analysis_worker`` works them out in
a process of its own (real parallelism beside the app's, on its own memory); this module is the
app's side of it, free of Textual:

- :func:`snapshot` takes what the analysis reads from the session, on the caller's thread (the
  app's: the session is not thread-safe), in a few milliseconds;
- :class:`AnalysisRunner` keys it (:func:`text_key`, :func:`groups_key`: the corpus, every
  pair's current texts, the settings, the curator's marks and rejections, the code), reads the
  results kept under those keys, or writes the inputs and runs the worker process, reporting
  progress, retrying a worker that died, cancelling on request; each outcome goes to one
  callback as an :class:`AnalysisEvent`, from the runner's own thread;
- an :class:`Analysis` is what a finished run gives: the verdicts (``VerdictTable``), the
  clusters and groups, and the set-wide checks' results built from them; then every pair's
  ``answerable`` support reason (``AnswerableTable``), which the worker works out last and the
  runner delivers on its own (:class:`AnalysisAnswers`), so the verdicts are not kept waiting.

A session opened again with the same fingerprint reads its results and starts no process.
After a change, a new request reuses what did not change: the verdicts of unchanged pairs, the
links when no text changed (a decision or a mark only groups again).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mtcb_curate.app import analysis_store as store
from mtcb_curate.app.worker_protocol import read_messages
from mtcb_curate.collector import trim_heap
from mtcb_curate.dataset.model import PASSAGE_FIELD, QAPair, Status

#: The code whose change makes every kept result stale (paths relative to the package).
CODE = ("verify", "neardup", "dataset", "arrays.py", "app/analysis_worker.py", "app/analysis_store.py", "worker.py")
#: Worker processes started for one request at most (a killed one is started again).
ATTEMPTS = 3
#: Seconds a worker asked to cancel has to stop before it is killed.
CANCEL_GRACE_S = 5.0
#: Lines of the worker's error output quoted in a failure's message.
LOG_LINES = 3
#: The pairs whose ``answerable`` support reasons the analysis works out at most (about 1-3 ms
#: of CPU a pair, with the paraphrase model): those from the first undecided pair on, in id
#: order (the queue's), and every edited or added pair; beyond them the app works a reason
#: out when it shows the pair. Every pair of the shared data's sets (up to 1,331) is within.
#: The default of ``[review] answerable_ahead`` (``config.answerable_ahead``; 0: none, the app
#: works each out when it shows the pair, and the worker never loads the paraphrase model).
ANSWERABLE_AHEAD = 2_000
#: Clusters with at least this many links get their links indexed by member ahead
#: (``Cluster.member_rows``, which the ``≈N similar`` badge reads at each key).
WARM_LINKS = 2_000


def analysis_folder(session) -> Path:
    """Where the session's analysis lives: ``<workspace>/analysis`` for a workspace folder
    opened for writing, else ``<user cache>/mtcb-curate/analysis/<workspace digest>`` (a
    read-only or database workspace)."""
    from mtcb_curate.files import user_cache_folder

    path = getattr(session.workspace, "path", None)
    if path is not None and not session.read_only:
        return Path(path) / "analysis"
    label = str(path if path is not None else getattr(session.workspace, "label", "workspace"))
    return user_cache_folder("analysis") / hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# -- what the analysis reads ----------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """What the analysis reads of a session at one moment (nothing here changes afterwards).

    Attributes:
        pairs: every pair as loaded, with its current ``chunk_index`` (a copy of the list).
        source_pairs: how many of them are the source's rows (the rest were added).
        edited: field -> pair id -> its edited text (``question``, ``answer``, the passage).
        rejected: ids of the rejected pairs.
        not_duplicates, shared_marks: the curator's marks, as id pairs.
        extra_links: the stored LLM dedup's links.
        threshold: the near-duplicate threshold (0-100).
        start: the first undecided pair's id (0 when none): where the curator goes on.
    """

    pairs: list[QAPair]
    source_pairs: int
    edited: dict[str, dict[int, str]]
    rejected: frozenset[int]
    not_duplicates: frozenset[tuple[int, int]]
    shared_marks: frozenset[tuple[int, int]]
    extra_links: tuple[tuple[int, int], ...]
    threshold: float
    start: int = 0

    def __len__(self) -> int:
        return len(self.pairs)

    def texts(self) -> store.PairTexts:
        """Every pair's current texts (edits applied), in id order."""
        q, a, p = (self.edited.get(f, {}) for f in ("question", "answer", PASSAGE_FIELD))
        pairs = self.pairs
        return store.PairTexts(
            [x.doc_key for x in pairs], [q.get(i, x.question) for i, x in enumerate(pairs)],
            [a.get(i, x.answer) for i, x in enumerate(pairs)], [p.get(i, x.passage) for i, x in enumerate(pairs)],
            [x.chunk_index for x in pairs])


def snapshot(session, threshold: float) -> Snapshot:
    """A :class:`Snapshot` of ``session`` now; call it on the thread that owns the session."""
    from mtcb_curate import neardup

    n = len(session)
    return Snapshot(
        pairs=list(session.pairs), source_pairs=len(session.dataset.pairs),
        edited={f: dict(session.edited_texts(f)) for f in ("question", "answer", PASSAGE_FIELD)},
        rejected=frozenset(pid for pid, (status, _) in session.decisions().items()
                           if status == Status.REJECTED and 0 <= pid < n),
        not_duplicates=frozenset(session.not_duplicates()), shared_marks=frozenset(session.shared_evidence()),
        extra_links=tuple(neardup.llm_links(session.workspace.get_meta(neardup.LLM_CLUSTERS_KEY), n)),
        threshold=float(threshold), start=session.first_undecided() or 0)


def answer_ids(snap: Snapshot, ahead: int = ANSWERABLE_AHEAD) -> list[int] | None:
    """The pairs whose ``answerable`` reasons the analysis works out (``ANSWERABLE_AHEAD``):
    none (``[]``) when ``ahead`` is 0; None (every pair) when the set has at most ``ahead``;
    else ``ahead`` pairs from ``snap.start`` on in id order (wrapping to the start), with every
    edited or added pair."""
    n = len(snap)
    if ahead <= 0:
        return []
    if n <= ahead:
        return None
    ids = {(snap.start + k) % n for k in range(ahead)}
    ids.update(i for d in snap.edited.values() for i in d)
    ids.update(range(snap.source_pairs, n))
    return sorted(i for i in ids if 0 <= i < n)


def _source_digest(pairs: Sequence[QAPair]) -> str:
    from mtcb_curate.store.sqlite import questions_fingerprint

    return questions_fingerprint((p.question, p.answer, p.passage, p.doc_key) for p in pairs)


def text_key(snap: Snapshot, corpus_fp: str, source_digest: str) -> str:
    """sha256 hex of everything the verdicts and the links depend on: the code (``CODE``), the
    file format, the tokenizer's version, ``corpus_fp``, the source's questions
    (``source_digest``: ``store.sqlite.questions_fingerprint`` of the loaded pairs), every
    pair's ``chunk_index``, the edits, the added pairs, the threshold and the LLM links."""
    from mtcb_curate.checks.cache import _version, code_digest

    h = hashlib.sha256()
    head = {"format": store.FORMAT, "code": code_digest(CODE), "tiktoken": _version("tiktoken"),
            "corpus": corpus_fp, "source": source_digest, "n": len(snap), "source_pairs": snap.source_pairs,
            "threshold": snap.threshold, "extra": sorted(snap.extra_links),
            "edited": {f: sorted(d.items()) for f, d in sorted(snap.edited.items())},
            "added": [[p.doc_key, p.question, p.answer, p.passage] for p in snap.pairs[snap.source_pairs:]]}
    h.update(json.dumps(head, ensure_ascii=True).encode("ascii"))
    h.update(np.array([-1 if p.chunk_index is None else p.chunk_index for p in snap.pairs], dtype=np.int64).tobytes())
    return h.hexdigest()


def groups_key(text: str, snap: Snapshot) -> str:
    """sha256 hex of ``text`` (:func:`text_key`) with the marks and the rejected pairs."""
    value = {"text": text, "not_duplicates": sorted(snap.not_duplicates), "shared_marks": sorted(snap.shared_marks),
             "rejected": sorted(snap.rejected)}
    return hashlib.sha256(json.dumps(value).encode("ascii")).hexdigest()


# -- what a run gives ------------------------------------------------------------------------------


@dataclass
class Analysis:
    """A finished analysis of one snapshot.

    Attributes:
        text_key, groups_key: its keys.
        passages, chunk_index: each pair's passage and ``chunk_index`` it was verified with (a
            result applies to a pair only while these are still its own).
        verdicts: the verifications (``analysis_store.VerdictTable``, one row per pair).
        clusters, shared: near-duplicate clusters and shared-passage groups over every pair.
        cluster_index, shared_index: pid -> its cluster / group.
        set_results: check id -> the set-wide check's result over the pairs not rejected
            (``checks.pair.pair_problems``' ``set_results``).
        threshold: the near-duplicate threshold.
        from_cache: read from what an earlier run kept (no process ran).
        seconds: the worker's time per stage (empty from the cache).
        worker: the worker's summary (``analysis_worker.run_job``; empty from the cache).
        answers: every pair's ``answerable`` support reason, or None when not worked out yet
            (they then follow as an :class:`AnalysisAnswers`).
    """

    text_key: str
    groups_key: str
    passages: Sequence[str]
    chunk_index: Sequence[int | None]
    verdicts: store.VerdictTable
    clusters: list
    shared: list
    cluster_index: dict
    shared_index: dict
    set_results: dict
    threshold: float
    from_cache: bool = False
    seconds: dict = field(default_factory=dict)
    worker: dict = field(default_factory=dict)
    answers: store.AnswerableTable | None = None

    def not_exact(self) -> set[int]:
        """Ids whose verdict is not ``exact``."""
        from mtcb_curate.verify.verdict import Verdict

        code = store.VERDICT_CODES.index(Verdict.EXACT)
        return set(np.flatnonzero(self.verdicts.verdicts != code).tolist())


def set_results_from_groups(clusters: list, shared: list, threshold: float) -> dict:
    """check id -> result of the set-wide checks (``checks.pair.SET_CHECKS`` that exist) for
    these clusters and groups of the pairs checked (as ``checks.pair.set_check_results``)."""
    from mtcb_curate.checks import passages, questions
    from mtcb_curate.checks.gate import CHECKS_BY_ID
    from mtcb_curate.checks.pair import SET_CHECKS

    out = {"duplicates": questions.duplicates_result(clusters, threshold),
           "shared_passage": passages.shared_passage_result(shared)}
    return {cid: r for cid, r in out.items() if cid in SET_CHECKS and cid in CHECKS_BY_ID}


def load(folder: Path, text: str, groups: str, snap: Snapshot, texts: store.PairTexts | None = None,
         from_cache: bool = False, worker: dict | None = None) -> Analysis | None:
    """The :class:`Analysis` kept under these keys, or None when any part is missing or
    unreadable (a run then makes it)."""
    from mtcb_curate import neardup

    here = store.text_dir(folder, text)
    where = store.groups_path(folder, text, groups)
    if not (where / "meta.json").is_file() or not (here / "links.npz").is_file():
        return None
    texts = texts if texts is not None else snap.texts()
    try:
        verdicts = store.VerdictTable.read(here / "verdicts.npz")
        found = store.read_groups(where, texts.doc_keys)
        clusters, shared = found["clusters"], found["shared_passages"]
        live_c, live_s = found.get("live_clusters", clusters), found.get("live_shared_passages", shared)
    except Exception:  # noqa: BLE001 - a damaged file is a miss: the run makes it again
        return None
    if len(verdicts) != len(snap):
        return None
    for c in clusters:
        if c.link_count >= WARM_LINKS:
            c.member_rows()
    answers = read_answers(folder, text, len(snap))
    return Analysis(text, groups, texts.passages, texts.chunk_index, verdicts, clusters, shared,
                    neardup.cluster_index(clusters), neardup.cluster_index(shared),
                    set_results_from_groups(live_c, live_s, snap.threshold), snap.threshold, from_cache,
                    dict((worker or {}).get("seconds") or {}), dict(worker or {}), answers)


def read_answers(folder: Path, text: str, n: int) -> store.AnswerableTable | None:
    """The ``answerable`` reasons kept for the texts of ``text`` (``n`` pairs), or None when
    missing, unreadable, made under another stamp or for another number of pairs."""
    answers = store.read_answerable(store.text_dir(folder, text) / "answerable.json")
    return answers if answers is not None and len(answers) == n else None


# -- events ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnalysisEvent:
    """What the runner reports (subclasses below), from its own thread."""


@dataclass(frozen=True)
class AnalysisProgress(AnalysisEvent):
    """The worker's progress: ``stage`` (``analysis_worker.STAGES``), ``done`` of ``total``."""

    stage: str
    done: int
    total: int


@dataclass(frozen=True)
class AnalysisReady(AnalysisEvent):
    """A run finished (or its results were read from the cache)."""

    analysis: Analysis


@dataclass(frozen=True)
class AnalysisAnswers(AnalysisEvent):
    """The ``answerable`` support reasons of the analysis of ``text_key`` (an
    :class:`AnalysisReady` of the same run came first): the end of a run."""

    text_key: str
    answers: store.AnswerableTable


@dataclass(frozen=True)
class AnalysisNote(AnalysisEvent):
    """Something to tell the curator that does not stop the analysis (a worker started again)."""

    message: str


@dataclass(frozen=True)
class AnalysisFailed(AnalysisEvent):
    """A run could not finish; ``message`` says why in one line."""

    message: str


@dataclass(frozen=True)
class AnalysisCancelled(AnalysisEvent):
    """A run stopped because :meth:`AnalysisRunner.cancel` asked."""


class WorkerDied(Exception):
    """The worker process ended without its result (killed, crashed, out of memory)."""


# -- the runner -----------------------------------------------------------------------------------


class AnalysisRunner:
    """Runs the analysis of a session's snapshots, one at a time, on a thread of its own.

    Args:
        session: the review session (read only through :func:`snapshot`, on the caller's
            thread, and for its corpus, which never changes).
        on_event: called with every :class:`AnalysisEvent`, on the runner's thread.
        folder: where inputs and results are kept (default :func:`analysis_folder`).
        attempts: worker processes started per request at most (a killed one is started again).
        python: the interpreter the worker runs on (default this one).
        answerable_ahead: the pairs whose ``answerable`` reasons the worker works out at most
            (:func:`answer_ids`; ``[review] answerable_ahead``, default ``ANSWERABLE_AHEAD``).

    ``request(threshold)`` asks for the analysis of the session as it is now; while a run goes
    on, the latest request waits and runs after it (a request made meanwhile replaces an
    earlier waiting one). ``cancel()`` stops the current run and drops the waiting one;
    ``close()`` does too, ends the thread and deletes the corpus's copy (the app calls it as it
    exits).
    """

    def __init__(self, session, on_event: Callable[[AnalysisEvent], None], *, folder: Path | None = None,
                 attempts: int = ATTEMPTS, python: str | None = None, answerable_ahead: int = ANSWERABLE_AHEAD):
        self.session = session
        self.folder = Path(folder) if folder is not None else analysis_folder(session)
        self.on_event = on_event
        self.attempts = max(1, attempts)
        self.python = python or sys.executable
        self._cond = threading.Condition()
        self._pending: Snapshot | None = None
        self._closed = False
        self._cancel = False
        self._running = False
        self._proc: subprocess.Popen | None = None
        self._corpus_fp: str | None = None
        self._source_digest: str | None = None
        self._thread: threading.Thread | None = None
        self._token_folder: str | None = None
        #: The pairs whose ``answerable`` reasons the worker works out at most (:func:`answer_ids`).
        self.answerable_ahead = answerable_ahead
        #: Worker processes started so far (tests and benchmarks read it).
        self.processes_started = 0

    @property
    def worker_pid(self) -> int | None:
        """The process id of the worker running now, or None."""
        proc = self._proc
        return None if proc is None else proc.pid

    @property
    def waiting(self) -> bool:
        """A request waits for the current run to end."""
        with self._cond:
            return self._pending is not None

    @property
    def busy(self) -> bool:
        """A run is going on or waiting."""
        with self._cond:
            return self._running or self._pending is not None

    def request(self, threshold: float) -> None:
        """Ask for the analysis of the session as it is now (a snapshot is taken here)."""
        snap = snapshot(self.session, threshold)
        if self._token_folder is None:
            cache = self.session.corpus_index.token_cache
            self._token_folder = "" if cache is None else str(cache.folder)
        with self._cond:
            if self._closed:
                return
            self._pending = snap
            self._cancel = False
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="analysis", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def cancel(self) -> None:
        """Stop the current run (the worker is asked, then killed after ``CANCEL_GRACE_S``)
        and drop the waiting request."""
        with self._cond:
            self._pending = None
            if not self._running:
                return
            self._cancel = True
            proc = self._proc
        if proc is not None:
            self._ask_cancel(proc)

    def close(self, timeout: float = 5.0) -> None:
        """Cancel, kill the worker process, end the thread (waits ``timeout`` seconds at most)."""
        with self._cond:
            self._closed = True
            self._pending = None
            self._cancel = True
            proc = self._proc
            thread = self._thread
            self._cond.notify_all()
        if proc is not None:
            _kill(proc)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        # The corpus's copy is the worker's input only: a session opened again reads the kept
        # results without it, and a run writes it again when it needs it.
        store.remove_other(self.folder, [], "corpus-*.bin")

    # -- the thread ---------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                snap, self._pending = self._pending, None
                self._running = True
            try:
                event = self._run(snap)
            except Exception as exc:  # noqa: BLE001 - one line for the curator, never a traceback
                event = AnalysisFailed(f"the analysis failed: {_one_line(exc)}")
            try:
                if isinstance(event, AnalysisFailed) and self._cancel:
                    event = AnalysisCancelled()
                if not self._closed and event is not None:
                    self.on_event(event)  # before ``busy`` turns false: a waiter sees the event sent
            finally:
                with self._cond:
                    self._running = False
                    self._cancel = False

    def _keys(self, snap: Snapshot) -> tuple[str, str]:
        if self._corpus_fp is None:
            self._corpus_fp = self.session.corpus_fingerprint
        if self._source_digest is None:
            self._source_digest = _source_digest(snap.pairs[:snap.source_pairs])
        text = text_key(snap, self._corpus_fp, self._source_digest)
        return text, groups_key(text, snap)

    def _run(self, snap: Snapshot) -> AnalysisEvent | None:
        text, groups = self._keys(snap)
        texts = snap.texts()
        found = load(self.folder, text, groups, snap, texts, from_cache=True)
        if found is not None and found.answers is not None:
            self._remember(text, groups)
            return AnalysisReady(found)
        announced = [False]

        def ready(summary: dict) -> None:
            """The worker wrote the verdicts and groups: deliver them now."""
            if announced[0] or self._cancel or self._closed:
                return
            got = load(self.folder, text, groups, snap, texts, worker=summary)
            if got is not None:
                announced[0] = True
                self.on_event(AnalysisReady(got))

        if found is not None:  # only the answerable reasons are missing
            announced[0] = True
            self.on_event(AnalysisReady(found))
        self._write_inputs(snap, texts, text, groups, corpus_needed=found is None)
        # Writing the inputs freed their temporaries (every pair's texts encoded, the corpus
        # read): the C heap keeps such pages until asked, and the worker runs for a while.
        trim_heap()
        log = store.text_dir(self.folder, text) / "worker.log"
        summary = None
        for attempt in range(1, self.attempts + 1):
            if self._cancel or self._closed:
                return AnalysisCancelled()
            try:
                summary = self._run_worker(text, log, ready)
            except WorkerDied as died:
                if self._cancel or self._closed:
                    return AnalysisCancelled()
                if attempt == self.attempts:
                    return AnalysisFailed(f"the analysis process stopped {self.attempts} times ({died}); "
                                          f"{_log_tail(log)}")
                self.on_event(AnalysisNote(f"the analysis process stopped ({died}); starting it again "
                                           f"(attempt {attempt + 1} of {self.attempts})"))
                continue
            break
        if summary is None:
            return AnalysisCancelled()
        if announced[0]:
            answers = read_answers(self.folder, text, len(snap))
            if answers is None:
                return AnalysisFailed(f"the analysis finished but its answerable results cannot be read in "
                                      f"{self.folder}")
            self._remember(text, groups)
            return AnalysisAnswers(text, answers)
        found = load(self.folder, text, groups, snap, texts, worker=summary)
        if found is None or found.answers is None:
            return AnalysisFailed(f"the analysis finished but its results cannot be read in {self.folder}")
        self._remember(text, groups)
        return AnalysisReady(found)

    def _write_inputs(self, snap: Snapshot, texts: store.PairTexts, text: str, groups: str,
                      corpus_needed: bool = True) -> None:
        """The worker's inputs of ``text``: the pairs, the job and (unless only the answerable
        reasons are missing: ``corpus_needed`` False) the corpus."""
        here = store.text_dir(self.folder, text)
        corpus = store.corpus_path(self.folder, self._corpus_fp)
        if not corpus.is_file() and corpus_needed:
            docs = self.session.dataset.documents
            store.write_corpus(corpus, ((k, d.data) for k, d in docs.items()))
            store.remove_other(self.folder, [corpus], "corpus-*.bin")
        if not (here / "pairs.npz").is_file():
            store.write_pairs(here / "pairs.npz", texts)
        store.write_json(here / "job.json", {
            "folder": str(self.folder), "text_key": text, "groups_key": groups, "corpus": self._corpus_fp,
            "name": self.session.dataset.name, "threshold": snap.threshold,
            "extra_links": [list(x) for x in snap.extra_links],
            "not_duplicates": sorted(map(list, snap.not_duplicates)),
            "shared_marks": sorted(map(list, snap.shared_marks)), "rejected": sorted(snap.rejected),
            "token_cache": self._token_folder or None, "answer_ids": answer_ids(snap, self.answerable_ahead)})

    def _run_worker(self, text: str, log: Path, ready: Callable[[dict], None] | None = None) -> dict | None:
        """One worker process over the job of ``text``: its ``done`` summary, or None when it
        was cancelled. ``ready(summary)`` is called at its ``ready`` line.

        Raises:
            WorkerDied: it ended without a result.
        """
        here = store.text_dir(self.folder, text)
        with open(log, "wb") as err:
            proc = subprocess.Popen([self.python, "-m", "mtcb_curate.worker", str(here / "job.json")],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.processes_started += 1
        with self._cond:
            self._proc = proc
            cancel = self._cancel or self._closed
        if cancel:
            self._ask_cancel(proc)
        result: dict | None = None
        cancelled = False
        try:
            assert proc.stdout is not None
            for kind, value in read_messages(proc.stdout):
                if kind == "progress":
                    stage, done, total = value
                    if not self._cancel:
                        self.on_event(AnalysisProgress(str(stage), int(done), int(total)))
                elif kind == "ready":
                    if ready is not None and not self._cancel:
                        ready(value)
                elif kind == "done":
                    result = value
                elif value:  # cancelled
                    cancelled = True
        finally:
            code = _finish(proc)
            with self._cond:
                self._proc = None
        if result is not None:
            return result
        if cancelled:
            return None
        raise WorkerDied(_describe_exit(code))

    def _ask_cancel(self, proc: subprocess.Popen) -> None:
        try:
            assert proc.stdin is not None
            proc.stdin.write(b"cancel\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            pass
        timer = threading.Timer(CANCEL_GRACE_S, _kill, args=(proc,))
        timer.daemon = True
        timer.start()

    def _remember(self, text: str, groups: str) -> None:
        """Mark ``text``/``groups`` as the latest run; drop the other runs' folders."""
        try:
            store.write_json(self.folder / "latest.json", {"text": text, "groups": groups})
            store.remove_other(self.folder, [store.text_dir(self.folder, text)], "text-*")
            store.remove_other(store.text_dir(self.folder, text), [store.groups_path(self.folder, text, groups)],
                               "groups-*")
        except OSError:
            pass


def _finish(proc: subprocess.Popen) -> int:
    """Close the worker's pipes and wait for it; its exit status."""
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    try:
        return proc.wait(timeout=CANCEL_GRACE_S)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return proc.wait()


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        import signal

        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _log_tail(log: Path) -> str:
    try:
        lines = [x for x in log.read_text("utf-8", "replace").splitlines() if x.strip()]
    except OSError:
        lines = []
    if not lines:
        return "it said nothing"
    return f"its last words ({log}): " + " / ".join(x.strip() for x in lines[-LOG_LINES:])


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]

