"""Publishing: what is published, the gate, dry runs, and the real huggingface_hub / datasets
client code against tests/hubfake.py, a loopback protocol fake of the Hub.

Publishing to the real Hugging Face Hub is verified here ONLY against that fake, which has no
auth, no Xet and no server-side validation (see tests/hubfake.py). The fake must be running
before huggingface_hub is imported (HF_ENDPOINT is read at import time), so the client code
runs in a worker subprocess: this file run as a script (``python tests/test_publish.py
--worker``) answers JSON commands on stdin/stdout. One fake and one worker serve the whole
module; each test uses its own repository.
"""

from __future__ import annotations

import re

import hashlib
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CORPUS, QUESTIONS, fake_secret, write_jsonl  # noqa: E402
from hubfake import HubFake  # noqa: E402

from mtcb_curate.hub import card as cardmod  # noqa: E402
from mtcb_curate.hub.layout import config_entries, content_hash, front_matter  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.hub import (  # noqa: E402
    LicenseRequired,
    PublishError,
    check_gate,
    curation_summary,
    diff_rows,
    dry_run,
    plan_publish,
    publish,
)
from mtcb_curate.app.sources import Options, open_session  # noqa: E402

SECRET = fake_secret("hub-token")
Q_FILE = "questions/train-00000-of-00001.parquet"
C_FILE = "corpus/train-00000-of-00001.parquet"
FICHA_Q_COLUMNS = ["question", "answer", "supporting_passage", "ticker", "company", "chunk_index"]


# ---------------------------------------------------------------------------------------------
# helpers (both sides)


def make_data(folder: Path, corpus: list[dict] = CORPUS, questions: list[dict] = QUESTIONS) -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "questions.jsonl", questions)
    return folder


def apply(session, decisions: list[list[Any]], edits: list[list[Any]]) -> None:
    for pair_id, status, *reason in decisions:
        session.decide(pair_id, Status(status), reason[0] if reason else None)
    for pair_id, changes in edits:
        session.edit(pair_id, changes)


def tree_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (the workspace), to show it is untouched."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "lock"}


# ---------------------------------------------------------------------------------------------
# The worker (runs in a subprocess with HF_ENDPOINT pointing at the fake)


def _worker_main() -> int:  # pragma: no cover - runs in the subprocess
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    sys.stdout = sys.stderr  # anything the libraries print goes to stderr, not the protocol
    sessions: dict[str, Any] = {}
    plans: dict[str, Any] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        try:
            result = _worker_do(cmd, sessions, plans)
            reply = {"ok": result}
        except PublishError as exc:
            reply = {"error": {"type": type(exc).__name__, "kind": exc.kind, "message": str(exc)}}
        except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
            reply = {"error": {"type": type(exc).__name__, "kind": None, "message": str(exc),
                               "traceback": traceback.format_exc()}}
        out.write(json.dumps(reply, default=str) + "\n")
    return 0


def _worker_do(cmd: dict, sessions: dict, plans: dict) -> Any:  # pragma: no cover - subprocess
    op = cmd["op"]
    if op == "open":
        s = open_session(Options("ficha", source=[cmd["data"]], workspace=Path(cmd["ws"])))
        apply(s, cmd.get("decisions", []), cmd.get("edits", []))
        sessions[cmd["id"]] = s
        return len(s)
    if op == "close":
        sessions.pop(cmd["id"]).workspace.close()
        return None
    if op == "plan":
        plan = plan_publish(sessions[cmd["session"]], **cmd.get("kwargs", {}))
        plans[cmd["id"]] = plan
        d = plan.diff
        return {"describe": plan.describe(), "license": plan.license, "base_sha": plan.base_sha,
                "repo_exists": plan.repo_exists, "notes": plan.notes,
                "diff": None if d is None else {
                    "corpus": [d.corpus.added, d.corpus.removed, d.corpus.edited, d.corpus.unchanged],
                    "questions": [d.questions.added, d.questions.removed, d.questions.edited, d.questions.unchanged],
                    "edited_columns": d.questions.edited_columns, "card_changed": d.card_changed,
                    "first_publish": d.first_publish}}
    if op == "publish":
        r = publish(plans[cmd["plan"]], **cmd.get("kwargs", {}))
        return {"commit_url": r.commit_url, "commit_sha": r.commit_sha, "pr_url": r.pr_url,
                "created_repo": r.created_repo, "created_branch": r.created_branch,
                "rows": [r.corpus_rows, r.question_rows]}
    if op == "dry_run":
        written = dry_run(plans[cmd["plan"]], Path(cmd["folder"]), **cmd.get("kwargs", {}))
        return sorted(written)
    if op == "load":
        import datasets

        ds = datasets.load_dataset(cmd["path"], cmd["config"], split="train", **cmd.get("kwargs", {}))
        return {"rows": ds.num_rows, "columns": ds.column_names, "hash": content_hash(ds.data.table),
                "features": {k: str(v) for k, v in ds.features.items()}}
    raise ValueError(f"unknown op {op}")


class Worker:
    """The test side of the worker: send a command, wait (bounded) for its one-line answer."""

    def __init__(self, env: dict[str, str], log: Path):
        self.log = log
        self._stderr = log.open("w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     text=True, env=env, cwd=str(Path(__file__).resolve().parents[1]))
        self.lines: queue.Queue[str] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.put(line)

    def call(self, op: str, timeout: float = 180, **fields: Any) -> dict:
        assert self.proc.poll() is None, f"worker died; stderr:\n{self.stderr()[-3000:]}"
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"worker gave no answer to {op} in {timeout} s; stderr:\n{self.stderr()[-3000:]}")
        self.transcript.append(line)
        return json.loads(line)

    def ok(self, op: str, **fields: Any) -> Any:
        reply = self.call(op, **fields)
        assert "ok" in reply, f"{op} failed: {json.dumps(reply['error'], indent=1)}"
        return reply["ok"]

    def fails(self, op: str, **fields: Any) -> dict:
        reply = self.call(op, **fields)
        assert "error" in reply, f"{op} was expected to fail, got {reply['ok']}"
        err = reply["error"]
        assert err.get("traceback") is None or err["type"] in ("LicenseRequired", "PublishError", "ValueError"), \
            err["traceback"]
        assert "\n" not in err["message"], f"not one line: {err['message']!r}"
        return err

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.log.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


@pytest.fixture(scope="module")
def fake():
    with HubFake() as hub:
        yield hub


@pytest.fixture(scope="module")
def worker(fake: HubFake, tmp_path_factory):
    d = tmp_path_factory.mktemp("worker")
    env = fake.env(d / "hf")
    env["HF_TOKEN"] = SECRET
    w = Worker(env, d / "stderr.log")
    yield w
    w.close()
    # the token was never printed, logged or written by the client side (HF_HOME included)
    assert SECRET not in w.stderr()
    assert all(SECRET not in line for line in w.transcript)
    for p in d.rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p


@pytest.fixture(autouse=True)
def _no_leftover_failures(request):
    yield
    if "fake" in request.fixturenames:
        assert request.getfixturevalue("fake").clear_failures() == 0, "a failure rule was never triggered"


_repo_numbers = itertools.count(1)


class Case:
    """One test's data folder, workspace, repository and session in the worker."""

    def __init__(self, worker: Worker, tmp_path: Path, decisions=(), edits=(), corpus=CORPUS, questions=QUESTIONS):
        self.worker = worker
        self.data = make_data(tmp_path / "data", corpus, questions)
        self.ws = tmp_path / "ws"
        self.repo = f"chonkie-ai/pub{next(_repo_numbers)}"
        self.id = self.repo
        worker.ok("open", id=self.id, data=str(self.data), ws=str(self.ws), decisions=list(decisions),
                  edits=list(edits))
        self.n_plans = 0

    def plan(self, **kwargs: Any) -> tuple[str, dict]:
        self.n_plans += 1
        pid = f"{self.id}#{self.n_plans}"
        kwargs.setdefault("repo_id", self.repo)
        kwargs.setdefault("license", "cc-by-4.0")
        kwargs.setdefault("checklist", [{"id": "verbatim", "status": "pass", "message": "all verbatim", "pairs": []}])
        kwargs.setdefault("checklist_passed", True)
        return pid, self.worker.ok("plan", id=pid, session=self.id, kwargs=kwargs)

    def publish(self, pid: str, **kwargs: Any) -> dict:
        kwargs.setdefault("gate_passed", True)
        return self.worker.call("publish", plan=pid, kwargs=kwargs)

    def close(self) -> None:
        self.worker.ok("close", id=self.id)


@pytest.fixture
def case_factory(worker, tmp_path):
    made: list[Case] = []

    def make(**kwargs: Any) -> Case:
        c = Case(worker, tmp_path / f"c{len(made)}", **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


ACCEPT_0_2 = [[0, "accepted"], [1, "rejected", "duplicate"], [2, "accepted"]]
EDIT_2 = [[2, {"supporting_passage": "Beta sells bells."}]]


def read_parquet(data: bytes) -> pa.Table:
    return pq.read_table(pa.BufferReader(data))


# ---------------------------------------------------------------------------------------------
# What is published (no network)


@pytest.fixture
def session(tiny, tmp_path):
    s = open_session(Options("ficha", source=[str(tiny)], workspace=tmp_path / "ws"))
    yield s
    s.workspace.close()


def test_questions_are_the_accepted_pairs_with_edits_in_ficha_columns(session):
    apply(session, ACCEPT_0_2, EDIT_2)
    plan = plan_publish(session, read_hub=False, license="cc-by-4.0")
    q = plan.questions
    assert q.column_names == FICHA_Q_COLUMNS
    assert q.schema.field("chunk_index").type == pa.int64()
    rows = q.to_pylist()
    assert [r["question"] for r in rows] == [QUESTIONS[0]["question"], QUESTIONS[2]["question"]]
    assert rows[1]["supporting_passage"] == "Beta sells bells."  # the edit, not the source text
    assert rows[0]["supporting_passage"] == QUESTIONS[0]["supporting_passage"]
    assert [r["ticker"] for r in rows] == ["AAA", "BBB"]
    assert [r["company"] for r in rows] == ["Alpha", "Beta"]
    assert [r["chunk_index"] for r in rows] == [0, None]
    c = plan.corpus
    assert c.column_names == ["ticker", "company", "text"]
    assert c.to_pylist() == [{"ticker": d["ticker"], "company": d["company"], "text": d["text"]} for d in CORPUS]
    assert plan.content.curation.accepted == 2
    assert plan.content.curation.rejected_by_reason == {"duplicate": 1}
    assert plan.content.curation.edited == 1
    assert plan.content.counts["questions"] == 2 and plan.content.counts["documents"] == 2


def test_a_known_profile_publishes_its_own_names_and_a_generic_one_the_source_names(tmp_path):
    # macha once published its text as `readme` (0 % recall): a republish uses `text`
    d = make_data(tmp_path / "macha",
                  [{"repo": "a/b", "readme": "Install with pip.", "stars": 3}],
                  [{"question": "How to install?", "chunk-must-contain": "Install with pip.", "repo": "a/b",
                    "answer": "pip", "supporting_passage": "stale variant"}])
    s = open_session(Options("macha", source=[str(d)], workspace=tmp_path / "ws1"))
    try:
        apply(s, [[0, "accepted"]], [])
        plan = plan_publish(s, read_hub=False)
        assert plan.corpus.column_names == ["repo", "stars", "text"]
        assert plan.corpus.schema.field("stars").type == pa.int64()
        assert plan.questions.column_names == ["question", "answer", "chunk-must-contain", "repo"]
        assert any("supporting_passage" in n for n in plan.notes)  # the stale variant is left out
    finally:
        s.workspace.close()
    g = make_data(tmp_path / "generic", [{"doc_id": "d1", "content": "Some text."}],
                  [{"query": "What?", "chunk_must_contain": "Some text.", "doc_id": "d1", "topic": None}])
    s = open_session(Options("mydata", source=[str(g)], workspace=tmp_path / "ws2"))
    try:
        apply(s, [[0, "accepted"]], [])
        plan = plan_publish(s, read_hub=False)
        assert plan.corpus.column_names == ["doc_id", "content"]
        assert plan.questions.column_names == ["query", "chunk_must_contain", "doc_id", "topic"]
        assert plan.questions.schema.field("topic").type == pa.string()  # all null: string, not null
    finally:
        s.workspace.close()


def test_chunk_index_is_published_when_the_source_has_it(tmp_path):
    d = make_data(tmp_path / "nulls", questions=[{**q, "chunk_index": None} for q in QUESTIONS])
    s = open_session(Options("ficha", source=[str(d)], workspace=tmp_path / "ws"))
    try:
        apply(s, [[0, "accepted"]], [])
        q = plan_publish(s, read_hub=False).questions
        assert q.column_names == FICHA_Q_COLUMNS and q.schema.field("chunk_index").type == pa.int64()
        assert q.column("chunk_index").to_pylist() == [None]
    finally:
        s.workspace.close()


def test_only_linked_keeps_documents_with_an_accepted_pair(session):
    apply(session, [[2, "accepted"], [0, "rejected"], [1, "skipped"]], [])
    assert plan_publish(session, read_hub=False).corpus.column("ticker").to_pylist() == ["AAA", "BBB"]
    linked = plan_publish(session, read_hub=False, only_linked=True)
    assert linked.corpus.column("ticker").to_pylist() == ["BBB"]
    assert linked.content.counts["documents"] == 1
    assert "fewer distractors" in linked.readme() and "fewer distractors" not in plan_publish(
        session, read_hub=False).readme()


def test_same_state_gives_same_bytes_and_a_change_changes_the_hash(session):
    apply(session, ACCEPT_0_2, [])
    a = plan_publish(session, read_hub=False, license="cc-by-4.0")
    b = plan_publish(session, read_hub=False, license="cc-by-4.0")
    assert a.files() == b.files()
    assert (a.corpus_hash, a.questions_hash) == (b.corpus_hash, b.questions_hash)
    session.edit(0, {"answer": "Anvils and hammers"})
    c = plan_publish(session, read_hub=False, license="cc-by-4.0")
    assert c.questions_hash != a.questions_hash
    assert c.corpus_hash == a.corpus_hash
    assert c.files()[Q_FILE] != a.files()[Q_FILE]


def test_dry_run_writes_a_folder_that_datasets_loads(session, tmp_path):
    apply(session, ACCEPT_0_2, EDIT_2)
    plan = plan_publish(session, read_hub=False, license="cc-by-nc-4.0", only_linked=False)
    out = tmp_path / "dry"
    written = dry_run(plan, out)
    assert sorted(written) == ["README.md", C_FILE, Q_FILE]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(written)
    assert {k: p.read_bytes() for k, p in written.items()} == plan.files()
    import datasets

    corpus = datasets.load_dataset(str(out), "corpus", split="train")
    questions = datasets.load_dataset(str(out), "questions", split="train")
    assert corpus.num_rows == 2 and questions.num_rows == 2
    assert questions.column_names == FICHA_Q_COLUMNS
    assert str(questions.features["chunk_index"]) == "Value('int64')"
    assert content_hash(questions.data.table) == plan.questions_hash
    assert content_hash(corpus.data.table) == plan.corpus_hash
    meta, _ = cardmod.split_card((out / "README.md").read_text(encoding="utf-8"))
    assert meta["license"] == "cc-by-nc-4.0"
    assert [c["config_name"] for c in meta["configs"]] == ["corpus", "questions"]
    # a second dry run into the same folder is fine; a folder with other files is refused
    dry_run(plan, out)
    (out / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(PublishError) as err:
        dry_run(plan, out)
    assert err.value.kind == "dry_run" and "mine.txt" in str(err.value)


def test_licence_required_when_unknown_and_taken_from_the_source_card(session, tiny, tmp_path):
    apply(session, ACCEPT_0_2, [])
    plan = plan_publish(session, read_hub=False)
    assert plan.license is None
    with pytest.raises(LicenseRequired) as err:
        dry_run(plan, tmp_path / "dry")
    assert "license=" in str(err.value) and err.value.kind == "license"
    with pytest.raises(LicenseRequired):
        publish(plan, gate_passed=True)
    assert plan.with_license(" CC-BY-4.0 ").license == "cc-by-4.0"
    with pytest.raises(ValueError):
        plan.with_license("see <README>")
    with pytest.raises(PublishError) as bad:
        plan_publish(session, read_hub=False, license="MIT licence!")
    assert bad.value.kind == "license"
    # a source folder whose card names a licence
    (tiny / "README.md").write_text(front_matter({"license": "cc-by-sa-4.0"}) + "# tiny\n", encoding="utf-8")
    from_card = plan_publish(session, read_hub=False)
    assert (from_card.license, from_card.license_source) == ("cc-by-sa-4.0", "source card")


def test_gate_refuses_without_force_and_force_needs_a_reason(session):
    assert check_gate(True) is None
    with pytest.raises(PublishError) as err:
        check_gate(False)
    assert err.value.kind == "gate" and "--force" in str(err.value)
    for reason in (None, "", "   \n "):
        with pytest.raises(PublishError) as err:
            check_gate(False, True, reason)
        assert err.value.kind == "gate" and "--reason" in str(err.value)
    assert check_gate(False, True, " known\nfalse positives ") == "known false positives"
    apply(session, ACCEPT_0_2, [])
    plan = plan_publish(session, read_hub=False, license="cc-by-4.0")
    with pytest.raises(PublishError) as err:
        publish(plan, gate_passed=False)  # refused before anything else, network included
    assert err.value.kind == "gate"
    with pytest.raises(PublishError) as err:
        publish(plan, gate_passed=True)  # an offline preview cannot be published
    assert err.value.kind == "changed" and "read_hub" in str(err.value)


def test_a_lone_surrogate_is_refused_with_its_row_and_field(session):
    apply(session, ACCEPT_0_2, [[2, {"answer": "Bells \ud800"}]])
    with pytest.raises(PublishError) as err:
        plan_publish(session, read_hub=False)
    assert err.value.kind == "input"
    assert "questions row 1, field 'answer'" in str(err.value)


def test_hostile_texts_never_become_markup_in_the_card(session):
    apply(session, [[0, "rejected", "other"], [2, "accepted"]], [])
    hostile = "<!-- mtcb-curate:end --> <script>x</script> [link](http://evil) | cell\n# heading"
    plan = plan_publish(session, read_hub=False, license="cc-by-4.0",
                        checklist=[{"id": hostile, "status": "fail", "message": hostile, "pairs": [hostile, 3]}],
                        checklist_passed=False)
    readme = plan.readme(gate_passed=False, force_reason=hostile)
    assert readme.count(cardmod.BEGIN) == 1 and readme.count(cardmod.END) == 1
    assert "<script>" not in readme and not re.search(r"(?<!\\)\]\(http", readme) and "\n# heading" not in readme
    assert "&lt;script&gt;" in readme
    # no question, answer, passage or document text goes into the card
    for text in [*(q["question"] for q in QUESTIONS), *(c["text"].strip() for c in CORPUS)]:
        assert text not in readme


def test_diff_rows_matches_by_key_then_by_passage():
    old = [{"k": "A", "q": "q1", "p": "p1", "a": "x"}, {"k": "A", "q": "q2", "p": "p2", "a": "y"},
           {"k": "B", "q": "q3", "p": "p3", "a": "z"}, {"k": "B", "q": "q4", "p": "p4", "a": "w"}]
    new = [{"k": "A", "q": "q1", "p": "p1", "a": "x"},          # unchanged
           {"k": "A", "q": "q2", "p": "p2", "a": "EDITED"},     # same (k, q): edited answer
           {"k": "B", "q": "q3 reworded", "p": "p3", "a": "z"},  # same (k, p): edited question
           {"k": "C", "q": "new", "p": "pn", "a": "n"}]         # added; q4 removed
    keys = [lambda r: (r["k"], r["q"]), lambda r: (r["k"], r["p"])]
    d = diff_rows(old, new, keys)
    assert (d.added, d.removed, d.edited, d.unchanged) == (1, 1, 2, 1)
    assert d.edited_columns == {"a": 1, "q": 1}
    first = diff_rows([], new, keys)
    assert (first.added, first.removed, first.edited, first.unchanged) == (4, 0, 0, 0)
    unknown = diff_rows(None, new, keys)
    assert unknown.known is False and unknown.added == 4


# ---------------------------------------------------------------------------------------------
# Against the fake Hub (real huggingface_hub / datasets client code in the worker)


def test_first_publish_creates_the_repo_in_one_commit_and_loads_back(case_factory, fake, worker, tmp_path):
    case = case_factory(decisions=ACCEPT_0_2, edits=EDIT_2)
    pid, plan = case.plan()
    assert plan["repo_exists"] is False and plan["base_sha"] is None
    assert plan["diff"]["first_publish"] is True
    assert plan["diff"]["corpus"] == [2, 0, 0, 0] and plan["diff"]["questions"] == [2, 0, 0, 0]
    dry = tmp_path / "dry"
    assert worker.ok("dry_run", plan=pid, folder=str(dry)) == ["README.md", C_FILE, Q_FILE]
    ws_before = tree_digest(case.ws)

    result = case.publish(pid)["ok"]
    sha = fake.head(case.repo)
    assert result["commit_sha"] == sha
    assert result["commit_url"].endswith(f"/datasets/{case.repo}/commit/{sha}")
    assert result["created_repo"] is True and result["pr_url"] is None
    assert result["rows"] == [2, 2]
    assert [c.title for c in fake.history(case.repo)] == ["Publish corpus and questions (mtcb-curate)",
                                                          "initial commit"]
    files = fake.files(case.repo)
    assert set(files) == {".gitattributes", "README.md", C_FILE, Q_FILE}
    # exactly the dry run's bytes
    for path in ("README.md", C_FILE, Q_FILE):
        assert files[path] == (dry / path).read_bytes(), path
    # parquet round trip
    q = read_parquet(files[Q_FILE])
    assert q.column_names == FICHA_Q_COLUMNS
    assert q.column("supporting_passage").to_pylist() == [QUESTIONS[0]["supporting_passage"], "Beta sells bells."]
    assert read_parquet(files[C_FILE]).column("text").to_pylist() == [d["text"] for d in CORPUS]
    # card front matter
    meta, body = cardmod.split_card(files["README.md"].decode("utf-8"))
    assert meta["configs"] == config_entries(("corpus", "questions"))
    assert meta["license"] == "cc-by-4.0"
    assert f'datasets.load_dataset("{case.repo}", "questions", split="train")' in body
    assert "Result: passed." in body
    # the load-back downloaded the committed files from the Hub at the new commit
    assert {("GET", f"/datasets/{case.repo}/resolve/{sha}/{path}") for path in (C_FILE, Q_FILE, "README.md")} \
        <= set(fake.requests)
    loaded = worker.ok("load", path=case.repo, config="questions", kwargs={"revision": sha})
    assert loaded["rows"] == 2 and loaded["columns"] == FICHA_Q_COLUMNS
    assert fake.repos[case.repo].private is False
    # one commit request, based on the head read just before (so a concurrent change gives 412)
    headers = [h for r, _, h in fake.commit_headers if r == case.repo]
    assert len(headers) == 1
    assert headers[0]["parentCommit"] == fake.history(case.repo)[1].sha
    assert tree_digest(case.ws) == ws_before
    assert fake.unknown_requests == []
    for data in files.values():
        assert SECRET.encode() not in data


def _existing_repo(fake: HubFake, repo: str, folder: Path) -> None:
    """A repository with a foreign config, foreign sections, a stale dataset_info and a licence."""
    folder.mkdir(parents=True)
    meta = {
        "license": "cc-by-nc-4.0",
        "pretty_name": "Ficha",
        "configs": [{"config_name": "raw", "data_files": [{"split": "train", "path": "raw/*.parquet"}]},
                    {"config_name": "corpus", "data_files": [{"split": "train", "path": "old/corpus-*.parquet"}]},
                    {"config_name": "questions", "data_files": [{"split": "train", "path": "old/questions-*.parquet"}]}],
        "dataset_info": [{"config_name": "questions", "splits": [{"name": "train", "num_examples": 3}]},
                         {"config_name": "raw", "splits": [{"name": "train", "num_examples": 1}]}],
    }
    body = "\n# Ficha\n\nFinancial filings.\n\n## Citation\n\n```bibtex\n@misc{ficha}\n```\n"
    (folder / "README.md").write_text(front_matter(meta) + body, encoding="utf-8")
    for sub, rows in (("old/corpus-00000.parquet", CORPUS), ("old/questions-00000.parquet", QUESTIONS),
                      ("raw/part-0.parquet", [{"raw": "r"}])):
        (folder / sub).parent.mkdir(parents=True, exist_ok=True)
        schema = pa.schema([(k, pa.int64() if k == "chunk_index" else pa.string()) for k in rows[0]])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / sub)
    fake.add_dataset_from_folder(repo, folder)


def test_republish_merges_the_card_and_reports_the_diff(case_factory, fake, worker, tmp_path):
    case = case_factory(decisions=[[0, "accepted"], [1, "accepted"], [2, "rejected", "not verbatim"]],
                        edits=[[0, {"answer": "Anvils, mostly"}]])
    _existing_repo(fake, case.repo, tmp_path / "existing")
    pid, plan = case.plan(license=None)
    assert plan["license"] == "cc-by-nc-4.0"  # from the Hub's card
    diff = plan["diff"]
    assert diff["first_publish"] is False
    assert diff["corpus"] == [0, 0, 0, 2]
    assert diff["questions"] == [0, 1, 1, 1]  # pair 0 edited, pair 1 unchanged, pair 2 removed
    assert diff["edited_columns"] == {"answer": 1}
    assert sum("no longer loaded" in n for n in plan["notes"]) == 2
    case.publish(pid)["ok"]

    readme = fake.files(case.repo)["README.md"].decode("utf-8")
    meta, body = cardmod.split_card(readme)
    assert [c["config_name"] for c in meta["configs"]] == ["raw", "corpus", "questions"]
    assert meta["configs"][0]["data_files"][0]["path"] == "raw/*.parquet"
    assert meta["configs"][2] == config_entries(("questions",))[0]
    assert meta["pretty_name"] == "Ficha" and meta["license"] == "cc-by-nc-4.0"
    assert [e["config_name"] for e in meta["dataset_info"]] == ["raw"]  # the stale one is gone
    assert body.startswith("\n# Ficha\n\nFinancial filings.\n\n## Citation\n\n```bibtex\n@misc{ficha}\n```\n")
    assert body.count(cardmod.BEGIN) == 1
    assert "- not verbatim: 1" in body
    # the foreign config still loads; ours load with the new rows
    assert worker.ok("load", path=case.repo, config="raw")["rows"] == 1
    assert worker.ok("load", path=case.repo, config="questions")["rows"] == 2

    # publish again after another decision: the block is replaced in place, nothing else moves
    worker.ok("close", id=case.id)
    worker.ok("open", id=case.id, data=str(case.data), ws=str(case.ws), decisions=[[1, "rejected", "trivial"]])
    pid2, plan2 = case.plan(license=None)
    assert plan2["diff"]["questions"] == [0, 1, 0, 1]
    case.publish(pid2)["ok"]
    readme2 = fake.files(case.repo)["README.md"].decode("utf-8")
    meta2, body2 = cardmod.split_card(readme2)
    assert body2.count(cardmod.BEGIN) == 1 and body2.count(cardmod.END) == 1
    assert body2.split(cardmod.BEGIN)[0] == body.split(cardmod.BEGIN)[0]
    assert meta2["configs"] == meta["configs"]
    assert "- trivial: 1" in body2
    assert read_parquet(fake.files(case.repo)[Q_FILE]).num_rows == 1
    assert len(fake.history(case.repo)) == 3  # the seeded commit + two publishes, one commit each


def test_gate_refusal_touches_nothing_and_force_writes_the_reason(case_factory, fake, worker):
    case = case_factory(decisions=ACCEPT_0_2)
    pid, _ = case.plan(checklist=[{"id": "verbatim", "status": "fail", "message": "1 passage not verbatim",
                                   "pairs": [2]}], checklist_passed=False)
    n = len(fake.requests)
    err = case.publish(pid, gate_passed=False)["error"]
    assert err["kind"] == "gate" and "--force" in err["message"]
    err = case.publish(pid, gate_passed=False, force=True, reason="  ")["error"]
    assert err["kind"] == "gate" and "--reason" in err["message"]
    assert len(fake.requests) == n  # refused before any request
    assert case.repo not in fake.repos
    case.publish(pid, gate_passed=False, force=True, reason="pair #2 is fixed upstream")["ok"]
    body = fake.files(case.repo)["README.md"].decode("utf-8")
    assert "Result: **failed**." in body
    assert "Reason given: pair #2 is fixed upstream" in body


def test_private_creates_a_private_repo_and_refuses_an_existing_public_one(case_factory, fake):
    case = case_factory(decisions=ACCEPT_0_2)
    pid, _ = case.plan()
    case.publish(pid, private=True)["ok"]
    assert fake.repos[case.repo].private is True

    other = case_factory(decisions=ACCEPT_0_2)
    fake.create_repo(other.repo, private=False)
    pid, _ = other.plan()
    err = other.publish(pid, private=True)["error"]
    assert err["kind"] == "visibility"
    assert [c.title for c in fake.history(other.repo)] == ["initial commit"]


def test_create_pr_and_revision_leave_main_alone(case_factory, fake):
    case = case_factory(decisions=ACCEPT_0_2)
    pid, _ = case.plan()
    case.publish(pid)["ok"]
    main_head = fake.head(case.repo)

    worker = case.worker
    worker.ok("close", id=case.id)
    worker.ok("open", id=case.id, data=str(case.data), ws=str(case.ws), decisions=[[2, "rejected", "other"]])
    pid, _ = case.plan()
    pr = case.publish(pid, create_pr=True)["ok"]
    assert pr["pr_url"] and "/discussions/" in pr["pr_url"]
    assert fake.head(case.repo) == main_head
    assert read_parquet(fake.files(case.repo, "refs/pr/1")[Q_FILE]).num_rows == 1

    pid, plan = case.plan(revision="curated")
    assert "new branch from main" in plan["describe"][0]
    res = case.publish(pid, revision="curated")["ok"]
    assert res["created_branch"] is True
    assert fake.head(case.repo) == main_head
    assert fake.head(case.repo, "curated") == res["commit_sha"]
    assert read_parquet(fake.files(case.repo, "curated")[Q_FILE]).num_rows == 1
    err = case.publish(pid, revision="other")["error"]
    assert err["type"] == "ValueError"


@pytest.mark.parametrize(
    ("where", "status", "kind", "words"),
    [
        ("/api/whoami-v2", 401, "auth", ["401", "HF_TOKEN", "hf auth login"]),
        ("/api/repos/create", 403, "not_found", ["does not exist", "could not be created"]),
        ("commit", 403, "forbidden", ["403", "write access"]),
        ("commit", 409, "conflict", ["409", "publish again"]),
        ("commit", 412, "changed", ["412", "plan again"]),
        ("commit", 404, "not_found", ["404", "not found"]),
        ("commit", 503, "server", ["503", "try again later"]),
        ("commit", "drop", "dropped", ["connection", "dropped", "run publish again"]),
    ],
)
def test_hub_failures_give_one_clear_line_and_a_retry_works(case_factory, fake, where, status, kind, words):
    case = case_factory(decisions=ACCEPT_0_2)
    if where != "/api/repos/create":
        fake.create_repo(case.repo)
    pid, _ = case.plan()
    prefix = f"/api/datasets/{case.repo}/commit/" if where == "commit" else where
    # 503 is retried by huggingface_hub only for idempotent calls; the commit POST is not retried
    fake.fail_next(prefix, status, method="POST" if where != "/api/whoami-v2" else None,
                   message="Injected by the test")
    ws_before = tree_digest(case.ws)
    err = case.publish(pid)["error"]
    assert err["type"] == "PublishError" and err["kind"] == kind, err
    for w in words:
        assert w in err["message"], err["message"]
    assert SECRET not in err["message"]
    assert tree_digest(case.ws) == ws_before
    if case.repo in fake.repos:  # nothing was committed
        assert [c.title for c in fake.history(case.repo)] == ["initial commit"]
    # the same plan publishes once the Hub behaves
    result = case.publish(pid)["ok"]
    assert result["commit_sha"] == fake.head(case.repo)
    assert read_parquet(fake.files(case.repo)[Q_FILE]).num_rows == 2


def test_a_change_between_plan_and_publish_is_refused_before_upload(case_factory, fake, tmp_path):
    case = case_factory(decisions=ACCEPT_0_2)
    fake.create_repo(case.repo)
    pid, plan = case.plan()
    sha_before = fake.head(case.repo)
    assert plan["base_sha"] == sha_before
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("someone else's commit", encoding="utf-8")
    fake.add_dataset_from_folder(case.repo, other)
    n_lfs = sum(1 for m, p in fake.requests if m == "PUT")
    err = case.publish(pid)["error"]
    assert err["kind"] == "changed" and "plan again" in err["message"]
    assert sum(1 for m, p in fake.requests if m == "PUT") == n_lfs  # nothing uploaded
    assert fake.files(case.repo) == {"notes.txt": b"someone else's commit"}
    _, plan2 = case.plan()
    assert plan2["base_sha"] == fake.head(case.repo)


def test_a_dropped_lfs_upload_is_retried_by_the_client(case_factory, fake):
    # content no other test publishes, so its LFS object is really uploaded (the fake dedups by sha256)
    case = case_factory(decisions=ACCEPT_0_2, edits=[[0, {"answer": "Anvils (dropped-upload test)"}]])
    pid, _ = case.plan()
    fake.fail_next("/__lfs__/", "drop", method="PUT")
    result = case.publish(pid)["ok"]
    dropped = [e for e in fake.request_log if e["method"] == "PUT" and e["status"] is None]
    assert len(dropped) == 1
    assert result["commit_sha"] == fake.head(case.repo)


def test_a_load_back_failure_says_the_commit_exists(case_factory, fake):
    case = case_factory(decisions=ACCEPT_0_2)
    fake.create_repo(case.repo)
    pid, _ = case.plan()
    # nothing is read from resolve/ during the publish until the load-back
    fake.fail_next(f"/datasets/{case.repo}/resolve/", 404, count=1000)
    err = case.publish(pid)["error"]
    fake.clear_failures()
    assert err["kind"] == "verify"
    sha = fake.head(case.repo)
    assert f"committed {case.repo}@{sha[:12]}" in err["message"]
    assert [c.title for c in fake.history(case.repo)][0] == "Publish corpus and questions (mtcb-curate)"
    # retrying the same plan is refused: the Hub moved (to our own commit); a new plan shows no change
    assert case.publish(pid)["error"]["kind"] == "changed"
    _, plan = case.plan()
    assert plan["diff"]["corpus"] == [0, 0, 0, 2] and plan["diff"]["questions"] == [0, 0, 0, 2]


def test_a_plan_reads_401_and_403_as_clear_errors(case_factory, fake):
    case = case_factory(decisions=ACCEPT_0_2)
    fake.create_repo(case.repo)
    fake.fail_next(f"/api/datasets/{case.repo}", 401, message="Invalid credentials in Authorization header")
    err = case.worker.call("plan", id="p401", session=case.id, kwargs={"repo_id": case.repo})["error"]
    assert err["kind"] == "auth" and "HF_TOKEN" in err["message"]
    fake.fail_next(f"/api/datasets/{case.repo}", 403)
    err = case.worker.call("plan", id="p403", session=case.id, kwargs={"repo_id": case.repo})["error"]
    assert err["kind"] == "forbidden"


def _one_shot(env: dict[str, str], tmp_path: Path, plan_kwargs: dict) -> dict:
    """A fresh worker (for settings read at import time): open, plan, and publish if planned."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    w = Worker(env, tmp_path / "stderr.log")
    try:
        data = make_data(tmp_path / "data")
        w.ok("open", id="s", data=str(data), ws=str(tmp_path / "ws"), decisions=ACCEPT_0_2)
        reply = w.call("plan", id="p", session="s", kwargs=plan_kwargs)
        if "ok" in reply:
            reply = w.call("publish", plan="p", kwargs={"gate_passed": True})
        w.ok("close", id="s")
        return reply
    finally:
        w.close()


@pytest.mark.slow
def test_offline_mode_and_no_network_are_clear(fake, tmp_path):
    env = fake.env(tmp_path / "hf")
    env["HF_HUB_OFFLINE"] = "1"
    reply = _one_shot(env, tmp_path / "offline", {"repo_id": "chonkie-ai/offline", "license": "cc-by-4.0"})
    assert reply["error"]["kind"] == "offline" and "HF_HUB_OFFLINE" in reply["error"]["message"]

    import socket

    with socket.socket() as s:  # a port on which nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = fake.env(tmp_path / "hf2")
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{port}"
    reply = _one_shot(env, tmp_path / "nonet", {"repo_id": "chonkie-ai/nonet", "license": "cc-by-4.0"})
    assert reply["error"]["kind"] == "network"
    assert "cannot reach" in reply["error"]["message"] and str(port) in reply["error"]["message"]
    assert "chonkie-ai/offline" not in fake.repos and "chonkie-ai/nonet" not in fake.repos


def test_no_token_is_a_clear_error(fake, tmp_path):
    env = fake.env(tmp_path / "hf")
    env.pop("HF_TOKEN")
    reply = _one_shot(env, tmp_path / "notoken", {"repo_id": "chonkie-ai/notoken", "license": "cc-by-4.0"})
    assert reply["error"]["kind"] == "auth" and "HF_TOKEN" in reply["error"]["message"]
    assert "chonkie-ai/notoken" not in fake.repos


if __name__ == "__main__" and "--worker" in sys.argv:
    raise SystemExit(_worker_main())


def test_generated_and_regenerated_pairs_are_published_and_counted(session):
    new = session.add_pair("AAA", "Where does Alpha make anvils?", "In its plant",
                           "Alpha makes anvils.", 0)
    session.edit(1, {"question": "How much revenue did Alpha report for 2022?"}, via="regenerate")
    apply(session, [[new, "accepted"], [1, "accepted"], [0, "rejected", "trivial"]], [])
    plan = plan_publish(session, read_hub=False)
    questions = plan.questions.to_pylist()
    assert [q["question"] for q in questions] == ["How much revenue did Alpha report for 2022?",
                                                 "Where does Alpha make anvils?"]
    assert questions[1]["company"] == "Alpha"  # filled from its document
    summary = curation_summary(session)
    assert (summary.generated, summary.regenerated, summary.accepted) == (1, 1, 2)
    assert "| 1 | 1 |" in plan.readme()  # regenerated and generated columns of the card


def test_a_repaired_chunk_index_is_published_when_the_source_had_no_such_column(tmp_path):
    """A source without chunk_index: the curator's repair sets one; publishing must carry it
    (it used to decide the column from the pairs as loaded, silently dropping the repair)."""
    d = make_data(tmp_path / "nocol", questions=[{k: v for k, v in q.items() if k != "chunk_index"}
                                                 for q in QUESTIONS])
    s = open_session(Options("ficha", source=[str(d)], workspace=tmp_path / "ws"))
    try:
        s.set_chunk_index(0, 0)
        apply(s, [[0, "accepted"]], [])
        q = plan_publish(s, read_hub=False).questions
        assert "chunk_index" in q.column_names and q.column("chunk_index").to_pylist() == [0]
    finally:
        s.workspace.close()
