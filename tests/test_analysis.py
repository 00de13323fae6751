"""The review app's analysis, run in a worker process and kept per fingerprint (``app.analysis``,
``app.analysis_worker``, ``app.analysis_store``): no Textual here.

The runner is driven as the review screen drives it: ``request`` on the test's thread, events
collected from the runner's thread. Every wait is on an event (never a wall-clock bound); the
long timeouts only keep a broken run from hanging the suite.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from conftest import CORPUS, QUESTIONS, write_jsonl
from support import opened, write_source

from mtcb_curate.app import analysis, analysis_store, analysis_worker
from mtcb_curate.app.analysis import (AnalysisCancelled, AnalysisFailed, AnalysisNote, AnalysisProgress,
                                      AnalysisReady, AnalysisRunner, AnalysisAnswers)
from mtcb_curate.dataset.model import Status
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.verify import verify_dataset

#: Longest wait for one run (a guard against a hang, not a speed target).
RUN_TIMEOUT_S = 120


class Events:
    """Collects a runner's events; ``wait_final()`` returns the run's last one."""

    def __init__(self) -> None:
        self.all: list = []
        self._final = threading.Event()
        self.hook = None

    def __call__(self, event) -> None:
        self.all.append(event)
        if self.hook is not None:
            self.hook(event)
        if isinstance(event, (AnalysisAnswers, AnalysisFailed, AnalysisCancelled)) or \
                (isinstance(event, AnalysisReady) and event.analysis.answers is not None):
            self._final.set()

    def wait_final(self, attach: bool = True):
        """The run's last event; a run that ends with its answerable reasons gives its
        ``AnalysisReady`` with them attached (``analysis.answers``; ``attach`` False: the
        ``AnalysisAnswers`` itself)."""
        assert self._final.wait(RUN_TIMEOUT_S), f"no outcome; events: {self.all}"
        self._final.clear()
        last = self.all[-1]
        if isinstance(last, AnalysisAnswers) and attach:
            ready = [e for e in self.all if isinstance(e, AnalysisReady)][-1]
            assert ready.analysis.text_key == last.text_key and ready.analysis.answers is None
            ready.analysis.answers = last.answers
            return ready
        return last

    def of(self, kind) -> list:
        return [e for e in self.all if isinstance(e, kind)]


def run(session, threshold: float = 85.0, *, attach: bool = True, answerable_ahead: int | None = None, **kw):
    """One request on a new runner; ``(last event, runner, events)`` (``attach``: as
    ``Events.wait_final``; ``answerable_ahead``: the runner's, when given)."""
    events = Events()
    runner = AnalysisRunner(session, events, **kw)
    if answerable_ahead is not None:
        runner.answerable_ahead = answerable_ahead
    try:
        runner.request(threshold)
        return events.wait_final(attach=attach), runner, events
    finally:
        runner.close()


@contextmanager
def session_on(source: Path | None, ws: Path) -> Iterator[ReviewSession]:
    """``support.opened(source, ws)`` (``source`` None: the workspace alone, as a reopen) whose
    workspace is closed on the way out, also when the test fails."""
    session = opened(source, ws)
    try:
        yield session
    finally:
        session.workspace.close()


def many_pairs_source(folder: Path, n: int = 60) -> Path:
    """A source with ``n`` pairs on the tiny corpus (enough for the worker to report progress)."""
    rows = [dict(QUESTIONS[i % 3], question=f"{QUESTIONS[i % 3]['question']} ({i})") for i in range(n)]
    return write_source(folder, CORPUS, rows)


def dup_source(folder: Path) -> Path:
    """The tiny corpus with near-duplicates: pair 3 repeats pair 0's question, pair 4 asks
    another question on pair 1's passage (a shared-passage group)."""
    rows = [*QUESTIONS, dict(QUESTIONS[0], answer="anvils"),
            dict(QUESTIONS[1], question="In which year was Alpha's revenue $10 million?", answer="2022")]
    return write_source(folder, CORPUS, rows)



def worker_job_path(session) -> Path:
    """Write the analysis worker's inputs for ``session``'s pairs as the app writes them (no
    token folder) and return its ``job.json``."""
    runner = AnalysisRunner(session, lambda e: None)
    runner._corpus_fp = session.corpus_fingerprint
    snap = analysis.snapshot(session, 85.0)
    text, groups = runner._keys(snap)
    runner._token_folder = ""
    runner._write_inputs(snap, snap.texts(), text, groups)
    return analysis_store.text_dir(runner.folder, text) / "job.json"

def test_the_analysis_verifies_every_pair_as_verify_does_fuzzy_step_included(tiny, ws):
    with session_on(tiny, ws) as session:
        event, runner, events = run(session)
        assert isinstance(event, AnalysisReady), event
        a = event.analysis
        report = verify_dataset(session.dataset, fuzzy=True, count_tokens=True, index=session.corpus_index)
        for pid, want in enumerate(report.results):
            got = a.verdicts.result(pid, session.view(pid).passage)
            assert got == want, pid
        assert {e.stage for e in events.of(AnalysisProgress)} <= set(analysis_worker.STAGES)
        assert runner.processes_started == 1 and not a.from_cache
        assert a.not_exact() == {2}


def test_clusters_and_set_checks_are_those_of_the_search_in_process(tmp_path):
    from mtcb_curate.app import clusters
    from mtcb_curate.checks.pair import set_check_results

    with session_on(dup_source(tmp_path / "src"), tmp_path / "ws") as session:
        event, _, _ = run(session)
        a = event.analysis
        found, shared = clusters.find_both(session)
        assert found and shared
        assert a.clusters == found and a.shared == shared
        assert [c.link_table.tolist() for c in a.clusters] == [c.link_table.tolist() for c in found]
        assert a.cluster_index.keys() == {i for c in found for i in c.ids}
        want = set_check_results(session, search=clusters.search(session))
        assert {k: (r.reasons, r.failing) for k, r in a.set_results.items()} == \
            {k: (r.reasons, r.failing) for k, r in want.items()}


def test_a_reopened_session_reads_the_kept_analysis_and_starts_no_process(tiny, ws):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
    with session_on(None, ws) as session:
        again, runner, events = run(session)
        assert isinstance(again, AnalysisReady) and again.analysis.from_cache
        assert runner.processes_started == 0 and not events.of(AnalysisProgress)
        assert again.analysis.text_key == first.analysis.text_key
        assert list(again.analysis.verdicts.verdicts) == list(first.analysis.verdicts.verdicts)


def test_an_edited_pair_misses_the_cache_and_only_it_is_verified_again(tiny, ws):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
        session.edit(2, {"supporting_passage": "Beta sells bells."})
        second, runner, _ = run(session)
        assert runner.processes_started == 1 and not second.analysis.from_cache
        assert second.analysis.text_key != first.analysis.text_key
        assert second.analysis.worker["verified"] == 1 and second.analysis.worker["reused"] == 2
        assert second.analysis.verdicts.verdict(2) == "exact"
        assert second.analysis.passages[2] == "Beta sells bells."


def test_an_edited_question_changes_the_key_but_reuses_every_verdict(tiny, ws):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
        session.edit(0, {"question": "What does Alpha make, exactly?"})
        second, _, _ = run(session)
        assert second.analysis.text_key != first.analysis.text_key
        assert second.analysis.worker["verified"] == 0 and second.analysis.worker["reused"] == 3


def test_a_changed_corpus_misses_the_cache(tmp_path):
    src = write_source(tmp_path / "src")
    ws = tmp_path / "ws"
    with session_on(src, ws) as session:
        first, _, _ = run(session)
    changed = [dict(CORPUS[0], text=CORPUS[0]["text"] + "More text.\n"), CORPUS[1]]
    write_jsonl(src / "corpus.jsonl", changed)
    with session_on(src, tmp_path / "ws2") as session:
        second, runner, _ = run(session, folder=ws / "analysis")  # the same folder: only the key differs
        assert runner.processes_started == 1 and not second.analysis.from_cache
        assert second.analysis.text_key != first.analysis.text_key
        assert second.analysis.worker["verified"] == 3  # another corpus: nothing is reused


def test_a_rejection_groups_again_without_verifying_or_searching(tmp_path):
    with session_on(dup_source(tmp_path / "src"), tmp_path / "ws") as session:
        first, _, _ = run(session)
        member = first.analysis.clusters[0].ids[0]
        session.decide(member, Status.REJECTED, "duplicate")
        second, runner, _ = run(session)
        a = second.analysis
        assert runner.processes_started == 1 and a.text_key == first.analysis.text_key
        assert a.groups_key != first.analysis.groups_key
        assert set(a.seconds) == {"groups"}  # nothing verified, nothing searched
        assert member not in a.set_results["duplicates"].reasons  # a rejected pair is not checked
        assert member in a.cluster_index  # the badge still shows its cluster


def test_a_killed_worker_is_reported_and_started_again(tmp_path):
    events = Events()
    with session_on(many_pairs_source(tmp_path / "src", 400), tmp_path / "ws") as session, \
            closing(AnalysisRunner(session, events)) as runner:
        killed = []

        def kill_first(event) -> None:
            if isinstance(event, AnalysisProgress) and not killed and runner.worker_pid is not None:
                killed.append(runner.worker_pid)
                os.kill(runner.worker_pid, signal.SIGKILL)

        events.hook = kill_first
        runner.request(85.0)
        final = events.wait_final()
    assert killed and isinstance(final, AnalysisReady), events.all
    notes = events.of(AnalysisNote)
    assert len(notes) == 1 and "SIGKILL" in notes[0].message and "attempt 2 of 3" in notes[0].message
    assert runner.processes_started == 2


def dying_python(tmp_path: Path, times: int) -> str:
    """An interpreter that dies of SIGKILL its first ``times`` runs, then runs Python."""
    count = tmp_path / "runs"
    script = tmp_path / "python"
    script.write_text(f"""#!{sys.executable}
import os, signal, sys
from pathlib import Path
count = Path({str(count)!r})
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
if n < {times}:
    sys.stderr.write("about to die\\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)
os.execv({sys.executable!r}, [{sys.executable!r}, *sys.argv[1:]])
""")
    script.chmod(0o755)
    return str(script)


def test_a_worker_that_keeps_dying_fails_with_one_plain_line(tiny, ws, tmp_path):
    with session_on(tiny, ws) as session:
        event, runner, events = run(session, python=dying_python(tmp_path, 99))
    assert isinstance(event, AnalysisFailed)
    assert "stopped 3 times (signal SIGKILL)" in event.message and "about to die" in event.message
    assert "\n" not in event.message and "Traceback" not in event.message
    assert runner.processes_started == 3 and len(events.of(AnalysisNote)) == 2


def test_a_worker_dying_once_then_succeeds(tiny, ws, tmp_path):
    with session_on(tiny, ws) as session:
        event, runner, _ = run(session, python=dying_python(tmp_path, 1))
    assert isinstance(event, AnalysisReady) and runner.processes_started == 2


def test_cancel_stops_the_worker_and_reports_it(tmp_path):
    events = Events()
    with session_on(many_pairs_source(tmp_path / "src", 400), tmp_path / "ws") as session, \
            closing(AnalysisRunner(session, events)) as runner:
        pids = []

        def cancel_first(event) -> None:
            if isinstance(event, AnalysisProgress) and not pids:
                pids.append(runner.worker_pid)
                runner.cancel()

        events.hook = cancel_first
        runner.request(85.0)
        final = events.wait_final()
    assert isinstance(final, AnalysisCancelled), events.all
    assert pids and pids[0] is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # gone (and reaped)
    assert not runner.busy


def test_a_damaged_result_is_made_again(tiny, ws):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
        codes = list(first.analysis.verdicts.verdicts)
        here = analysis_store.text_dir(ws / "analysis", first.analysis.text_key)
        (here / "verdicts.npz").write_bytes(b"not numpy")
        again, runner, _ = run(session)
    assert isinstance(again, AnalysisReady) and runner.processes_started == 1
    assert again.analysis.worker["verified"] == 3  # nothing of the damaged file is reused
    assert set(again.analysis.seconds) == {"verdicts"}  # the links and groups were kept
    assert list(again.analysis.verdicts.verdicts) == codes


def test_the_worker_process_imports_no_textual_datasets_pandas_nor_pyarrow(tiny, ws):
    with session_on(tiny, ws) as session:
        event, _, _ = run(session)
        job = analysis_store.text_dir(ws / "analysis", event.analysis.text_key) / "job.json"
    probe = (
        "import json, shutil, sys\n"
        "from pathlib import Path\n"
        "from mtcb_curate.app import analysis_worker\n"
        "job = json.loads(Path(sys.argv[1]).read_bytes())\n"
        "for p in Path(job['folder']).glob('text-*/groups-*'):\n"
        "    shutil.rmtree(p)\n"
        "analysis_worker.run_job(job)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'datasets', 'pandas', 'pyarrow'))))\n")
    out = subprocess.run([sys.executable, "-c", probe, str(job)], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == []


def test_keys_follow_every_input(tiny, ws):
    with session_on(tiny, ws) as session:
        snap = analysis.snapshot(session, 85.0)
        base = analysis.text_key(snap, "corpus", "source")
        assert analysis.text_key(snap, "corpus", "source") == base
        assert analysis.text_key(snap, "other corpus", "source") != base
        assert analysis.text_key(snap, "corpus", "other source") != base
        assert analysis.text_key(analysis.snapshot(session, 80.0), "corpus", "source") != base
        session.set_chunk_index(2, 0)
        assert analysis.text_key(analysis.snapshot(session, 85.0), "corpus", "source") != base
        g = analysis.groups_key(base, snap)
        session.decide(1, Status.ACCEPTED)
        assert analysis.groups_key(base, analysis.snapshot(session, 85.0)) == g  # only rejections count
        session.decide(1, Status.REJECTED)
        assert analysis.groups_key(base, analysis.snapshot(session, 85.0)) != g
        session.undo()
        session.undo()
        session.mark_not_duplicates([0, 1])
        assert analysis.groups_key(base, analysis.snapshot(session, 85.0)) != g


def test_texts_round_trip_through_the_files_byte_for_byte(tmp_path):
    texts = analysis_store.PairTexts(["A", "B\ud800"], ["q\x00?", "é“x”"], ["", "a"], ["p\ud83d", "  p  "], [None, 3])
    analysis_store.write_pairs(tmp_path / "pairs.npz", texts)
    back = analysis_store.read_pairs(tmp_path / "pairs.npz")
    assert (back.doc_keys, back.questions, back.answers, back.passages, back.chunk_index) == \
        (texts.doc_keys, texts.questions, texts.answers, texts.passages, texts.chunk_index)
    analysis_store.write_corpus(tmp_path / "corpus.bin", [("k\ud800", b"text \xe2\x80\x99"), ("j", b"")])
    assert analysis_store.read_corpus(tmp_path / "corpus.bin") == {"k\ud800": b"text \xe2\x80\x99", "j": b""}


def test_large_clusters_have_their_links_indexed_by_member_when_loaded(tmp_path, monkeypatch):
    with session_on(dup_source(tmp_path / "src"), tmp_path / "ws") as session:
        monkeypatch.setattr(analysis, "WARM_LINKS", 1)
        event, _, _ = run(session)
    assert event.analysis.clusters and all(c.member_index is not None for c in event.analysis.clusters)


def test_the_worker_ends_when_the_app_is_gone(tmp_path):
    """The app's end closes the worker's stdin (however the app ended): the worker stops at once."""
    with session_on(many_pairs_source(tmp_path / "src", 400), tmp_path / "ws") as session:
        job = worker_job_path(session)
    proc = subprocess.Popen([sys.executable, "-m", "mtcb_curate.worker", str(job)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first = json.loads(proc.stdout.readline())
    assert "progress" in first
    proc.stdin.close()  # the app is gone
    assert proc.wait(timeout=RUN_TIMEOUT_S) == 4
    proc.stdout.close()


def _support_reasons(session) -> list:
    from mtcb_curate.checks.questions import overlap_problem

    return [overlap_problem(v.answer, v.passage, v.question) for v in map(session.view, range(len(session)))]


def test_the_analysis_gives_every_pairs_answerable_reason_as_the_rule_does_after_its_verdicts(tmp_path):
    src = write_source(tmp_path / "src", CORPUS, [*QUESTIONS, dict(QUESTIONS[0], answer="$45 million in 2019")])
    with session_on(src, tmp_path / "ws") as session:
        event, runner, events = run(session)
        a = event.analysis
        want = _support_reasons(session)
        assert want[-1] is not None  # the rule warns on one pair: the table must carry it
        assert list(a.answers.reasons) == want
        for pid in range(len(session)):
            v = session.view(pid)
            assert a.answers.reason(pid, v.question, v.answer, v.passage) == (True, want[pid])
        # the verdicts and groups came first, on their own; the reasons after them
        kinds = [type(e).__name__ for e in events.all if not isinstance(e, AnalysisProgress)]
        assert kinds == ["AnalysisReady", "AnalysisAnswers"]
        assert a.worker["answered"] == 0 and runner.processes_started == 1  # the "ready" summary
    with session_on(None, tmp_path / "ws") as session:
        again, runner, events = run(session)  # one event, from the files: no process
        assert again.analysis.from_cache and list(again.analysis.answers.reasons) == want
        assert runner.processes_started == 0 and len(events.all) == 1


def test_an_edited_answer_is_answered_again_alone_and_its_old_reason_no_longer_applies(tiny, ws):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
        old = session.view(1)
        session.edit(1, {"answer": "$45 million in 2019"})
        v = session.view(1)
        assert first.analysis.answers.reason(1, v.question, v.answer, v.passage) == (False, None)
        assert first.analysis.answers.reason(1, old.question, old.answer, old.passage)[0]
        second, runner, events = run(session)
        done = events.of(AnalysisAnswers)[-1]
        assert runner.processes_started == 1 and done.answers.reasons[1] is not None
        assert list(done.answers.reasons) == _support_reasons(session)
        # the worker worked out the edited pair only, the others' reasons were the last run's
        log = [e for e in events.all if isinstance(e, AnalysisProgress) and e.stage == "answerable"]
        assert log and log[-1].total == 1


def test_kept_verdicts_without_answerable_reasons_land_at_once_and_a_worker_works_out_only_the_reasons(tiny, ws):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
        (analysis_store.text_dir(analysis.analysis_folder(session), first.analysis.text_key) / "answerable.json").unlink()
        _, runner, events = run(session, attach=False)
        ready, answers = events.of(AnalysisReady), events.of(AnalysisAnswers)
        assert len(ready) == 1 and ready[0].analysis.from_cache and ready[0].analysis.answers is None
        assert events.all.index(ready[0]) < events.all.index(answers[0])
        assert runner.processes_started == 1
        stages = {e.stage for e in events.of(AnalysisProgress)}
        assert "answerable" in stages and not stages & {"verdicts", "tokens"}  # nothing verified again
        assert list(answers[0].answers.reasons) == _support_reasons(session)


def test_answerable_reasons_of_another_rule_version_are_not_read(tiny, ws, monkeypatch):
    with session_on(tiny, ws) as session:
        first, _, _ = run(session)
        path = analysis_store.text_dir(analysis.analysis_folder(session), first.analysis.text_key) / "answerable.json"
        assert analysis_store.read_answerable(path) is not None
        monkeypatch.setattr(analysis_store, "answerable_stamp", lambda: "another wordllama")
        assert analysis_store.read_answerable(path) is None


def test_the_worker_lets_the_tokenizer_go_once_the_tokens_are_counted(tiny, ws, monkeypatch):
    """The stages after the token counts (links, groups, the answerable reasons with their
    paraphrase model) run without the tokenizer's memory."""
    from mtcb_curate.dataset import tokens

    with session_on(tiny, ws) as session:
        job = json.loads(worker_job_path(session).read_bytes())
        held = []
        real = analysis_worker._answerable
        monkeypatch.setattr(analysis_worker, "_answerable",
                            lambda *a: held.append(tokens._encoding is not None) or real(*a))
        tokens.encoding()
        summary = analysis_worker.run_job(job)
        assert summary["verified"] == 3 and held == [False]


@pytest.mark.skipif(os.name != "posix", reason="the fresh process image is POSIX's exec")
def test_the_answerable_stage_runs_in_a_fresh_image_of_the_same_worker_process(tiny, ws):
    """After its ``ready`` line the worker replaces itself (same process id and pipes) so that
    the paraphrase model loads on top of a small interpreter, not of what verifying left."""
    with session_on(tiny, ws) as session:
        event, _, _ = run(session)
        here = analysis_store.text_dir(ws / "analysis", event.analysis.text_key)
    (here / "answerable.json").unlink()
    proc = subprocess.Popen([sys.executable, "-m", "mtcb_curate.worker", str(here / "job.json")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    seen, images = [], []
    try:
        for line in proc.stdout:
            msg = json.loads(line)
            seen.append(next(iter(msg)))
            if msg.get("progress", [None])[0] in ("groups", "answerable"):
                images.append((msg["progress"][0], Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")))
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert seen[-1] == "done" and "ready" in seen and proc.returncode == 0
    assert all(b"--answerable" not in argv for stage, argv in images if stage == "groups")
    assert any(b"--answerable" in argv for stage, argv in images if stage == "answerable")
    assert analysis_store.read_answerable(here / "answerable.json") is not None


def test_the_worker_counts_tokens_after_letting_the_corpus_go(tiny, ws, monkeypatch):
    """The token counts read the passages only: the corpus (the worker's largest input) is not
    held while they are counted."""
    import weakref

    class Corpus(dict):
        pass

    with session_on(tiny, ws) as session:
        job = json.loads(worker_job_path(session).read_bytes())
        refs, alive = [], []
        read = analysis_store.open_corpus
        monkeypatch.setattr(analysis_store, "open_corpus", lambda p: refs.append(weakref.ref(c := Corpus(read(p)))) or c)
        count = analysis_worker._count_tokens
        monkeypatch.setattr(analysis_worker, "_count_tokens",
                            lambda *a: alive.append(refs[0]() is not None) or count(*a))
        summary = analysis_worker.run_job(job, answer=False)
        assert summary["verified"] == 3 and alive == [False]


def test_a_large_set_gets_the_reasons_of_the_pairs_met_first_and_of_the_edited_ones(tiny, ws):
    with session_on(tiny, ws) as session:
        session.decide(0, Status.ACCEPTED)
        session.edit(2, {"answer": "$45 million in 2019"})
        done, _, _ = run(session, attach=False, answerable_ahead=1)  # three pairs: more than it
        assert isinstance(done, AnalysisAnswers), done
        want = _support_reasons(session)
        known = []
        for pid in range(3):
            v = session.view(pid)
            ok, reason = done.answers.reason(pid, v.question, v.answer, v.passage)
            known.append(ok)
            assert not ok or reason == want[pid]
        assert known == [False, True, True]  # from the first undecided pair on, and the edited one
        assert want[2] is not None


def test_answerable_ahead_0_works_no_reason_out_and_loads_no_model_in_the_worker(tiny, ws):
    """``[review] answerable_ahead = 0``: the worker works no pair's reason out, an edited one
    neither, and never loads the paraphrase model (nor replaces its process image for it);
    the run still ends with its (empty) reasons, so the app knows to work each out itself."""
    with session_on(tiny, ws) as session:
        session.edit(2, {"answer": "$45 million in 2019"})
        done, runner, events = run(session, attach=False, answerable_ahead=0)
        assert isinstance(done, AnalysisAnswers), done
        assert runner.processes_started == 1 and list(done.answers.keys) == ["", "", ""]
        assert done.answers.paraphraser == ""  # no model was asked for its name
        ready = events.of(AnalysisReady)[-1]
        here = analysis_store.text_dir(runner.folder, ready.analysis.text_key)
        assert json.loads((here / "job.json").read_bytes())["answer_ids"] == []
        (here / "answerable.json").unlink()  # the stage again, in a process of its own
        probe = ("import json, sys\n"
                 "from pathlib import Path\n"
                 "from mtcb_curate.app.analysis_worker import answer_job\n"
                 "done = answer_job(json.loads(Path(sys.argv[1]).read_bytes()), {'seconds': {}})\n"
                 "print(json.dumps([done['answered'], sorted({m.split('.')[0] for m in sys.modules} & "
                 "{'wordllama', 'nltk'})]))\n")
        out = subprocess.run([sys.executable, "-c", probe, str(here / "job.json")], capture_output=True, text=True,
                             check=True)
        assert json.loads(out.stdout) == [0, []]
        assert list(analysis_store.read_answerable(here / "answerable.json").keys) == ["", "", ""]


def test_without_a_new_process_image_the_answerable_stage_runs_in_the_same_one(tiny, ws):
    with session_on(tiny, ws) as session:
        event, _, _ = run(session)
        here = analysis_store.text_dir(ws / "analysis", event.analysis.text_key)
    (here / "answerable.json").unlink()
    probe = ("import os, sys\n"
             "def refuse(*a):\n"
             "    raise PermissionError('exec refused')\n"
             "os.execv = refuse\n"
             "sys.argv = ['worker', sys.argv[1]]\n"
             "from mtcb_curate.worker import main\n"
             "sys.exit(main())\n")
    proc = subprocess.Popen([sys.executable, "-c", probe, str(here / "job.json")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # stdin stays open: the app is there
    try:
        lines = [json.loads(x) for x in proc.stdout]
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert proc.returncode == 0
    assert any("ready" in x for x in lines) and lines[-1]["done"]["answered"] == 3
    assert analysis_store.read_answerable(here / "answerable.json") is not None


def test_the_verdicts_keep_the_token_counts_given_beside_the_results(tmp_path):
    """The worker counts tokens after verifying and hands the counts to the verdicts file
    beside the results (no result is made again to hold its count)."""
    from mtcb_curate.verify.verdict import PairResult, Verdict

    results = [PairResult(i, "D", Verdict.EXACT, 100.0, 0, 5, passage="x" * 5, chars=5) for i in range(3)]
    path = tmp_path / "verdicts.npz"
    analysis_store.write_verdicts(path, results, [bytes([i]) * 16 for i in range(3)], "corpus", tokens=[4, None, 7])
    table = analysis_store.VerdictTable.read(path)
    assert [table.result(i, "x" * 5).tokens for i in range(3)] == [4, None, 7]
    assert all(r.tokens is None for r in results)



def test_the_protocol_reader_yields_the_workers_messages_and_skips_other_lines():
    from mtcb_curate.app.worker_protocol import read_messages

    lines = [b'{"progress": ["verdicts", 0, 3]}\n', b"a library writing to stdout\n", b"[1, 2]\n",
             b'{"other": 1}\n', b'{"ready": {"verified": 3}}\n', b'{"done": {"answered": 3}}\n']
    assert list(read_messages(lines)) == [("progress", ["verdicts", 0, 3]), ("ready", {"verified": 3}),
                                          ("done", {"answered": 3})]


def test_the_worker_groups_without_the_pairs_texts(tiny, ws, monkeypatch):
    """Grouping reads the links and the scored questions only: no pair's texts (the search's
    items, the pairs as read from the inputs) are held while the clusters are made."""
    import gc

    from mtcb_curate.neardup import Item

    with session_on(tiny, ws) as session:
        job = json.loads(worker_job_path(session).read_bytes())
        held = []
        real = analysis_worker._groups
        monkeypatch.setattr(analysis_worker, "_groups", lambda *a: held.append(
            sum(isinstance(o, (Item, analysis_store.PairTexts)) for o in gc.get_objects())) or real(*a))
        summary = analysis_worker.run_job(job, answer=False)
        assert summary["verified"] == 3 and held == [0]


def test_links_of_any_integer_type_are_kept_as_int64_as_savez_writes_them(tmp_path):
    """The search hands narrow arrays; the file holds the int64 arrays ``np.savez`` writes,
    byte for byte, written a slice at a time."""
    import zipfile

    import numpy as np

    rng = np.random.default_rng(3)
    n = 3 * analysis_store._WRITE_SLICE + 17
    a, b = rng.integers(0, 2**31 - 1, n).astype(np.int32), rng.integers(0, 2**31 - 1, n).astype(np.int32)
    bits = rng.integers(-128, 127, n).astype(np.int8)
    analysis_store.write_links(tmp_path / "links.npz", a, b, bits)
    np.savez(tmp_path / "want.npz", a=a.astype(np.int64), b=b.astype(np.int64), bits=bits.astype(np.int64))
    got, want = zipfile.ZipFile(tmp_path / "links.npz"), zipfile.ZipFile(tmp_path / "want.npz")
    assert got.namelist() == want.namelist()
    assert all(got.read(name) == want.read(name) for name in want.namelist())
    read = analysis_store.read_links(tmp_path / "links.npz")
    assert all(x.dtype == np.int64 and np.array_equal(x, y) for x, y in zip(read, (a, b, bits)))


def test_the_groups_link_tables_are_written_as_one_array_saved_whole(tmp_path):
    """Each kind's link tables go to one ``.npy`` a table at a time: the bytes ``np.save`` of
    their concatenation writes (also for no cluster, or a table read from disk)."""
    import numpy as np

    from mtcb_curate.neardup.clusters import _LINK_DTYPE

    rng = np.random.default_rng(5)

    def table(k: int) -> np.ndarray:
        t = np.zeros(k, dtype=_LINK_DTYPE)
        t["a"], t["b"] = rng.integers(0, 99, k), rng.integers(100, 999, k)
        t["bits"], t["score"] = rng.integers(1, 127, k), rng.random(k) * 100
        return t

    whole = table(50)
    np.save(tmp_path / "disk.npy", whole)
    on_disk = np.load(tmp_path / "disk.npy", mmap_mode="r")
    for tables in ([], [table(0)], [table(3), table(1), table(40)], [on_disk[10:30], table(2)]):
        analysis_store._save_tables(tmp_path / "got.npy", tables, _LINK_DTYPE)
        np.save(tmp_path / "want.npy", np.concatenate(tables) if tables else np.zeros(0, _LINK_DTYPE))
        assert (tmp_path / "got.npy").read_bytes() == (tmp_path / "want.npy").read_bytes()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_worker_maps_its_large_blocks_so_that_freeing_one_gives_it_back(tmp_path):
    """In the worker process a freed large array leaves the resident set at once, even after
    glibc has raised its mapping threshold (which it does on freeing a larger block)."""
    from mtcb_curate import collector

    if collector._glibc() is None:
        pytest.skip("no glibc")
    probe = ("import sys\n"
             "import numpy as np\n"
             "import mtcb_curate.worker as w\n"
             "calls = []\n"
             "real = w.map_large_blocks\n"
             "w.map_large_blocks = lambda: calls.append(real())\n"
             "w._watch_stdin = lambda stop: None\n"
             "try:\n"
             "    w.main([sys.argv[1]])\n"
             "except OSError:\n"  # no such job: main stops after its set-up
             "    pass\n"
             "def rss():\n"
             "    for line in open('/proc/self/status'):\n"
             "        if line.startswith('VmRSS:'):\n"
             "            return int(line.split()[1]) / 1024\n"
             "big = np.ones(24 << 20, np.uint8); del big\n"  # glibc raises its threshold past 16 MB
             "x = np.ones(16 << 20, np.uint8)\n"
             "pin = np.ones(300 << 10, np.uint8)\n"  # a heap block after it
             "before = rss(); del x\n"
             "print(calls, round(before - rss()))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "missing.json")], capture_output=True,
                         text=True, env=env, stdin=subprocess.DEVNULL)
    calls, freed = out.stdout.split("] ")
    assert calls == "[True" and int(freed) >= 15, out.stdout + out.stderr
