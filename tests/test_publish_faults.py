"""Faults of ``mtcb-curate publish`` found by trial, end to end.

The CLI runs in a subprocess against tests/hubfake.py, the loopback protocol fake of the Hub
(no auth, no Xet, no server-side validation: see that module).

- The load-back after the commit reads the new Hub revision and nothing else: not a local
  folder that happens to be named like the repo id in the current directory (which
  ``datasets.load_dataset("owner/name")`` would prefer).
- Hub faults that huggingface_hub retries give one line per retry in our words and none of
  the library's own log lines, warnings or progress bars; a 409 without ``url`` on repo
  creation is a clear line, not ``KeyError: 'url'``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret, write_jsonl  # noqa: E402
from hubfake import HubFake  # noqa: E402

from mtcb_curate.hub.layout import write_hub_layout  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.app.sources import Options, open_session  # noqa: E402

pytestmark = pytest.mark.slow  # every test here runs the command line as a real process

Q_FILE = "questions/train-00000-of-00001.parquet"
C_FILE = "corpus/train-00000-of-00001.parquet"
GOOD = [
    {"question": "What does Alpha make according to its filing?", "answer": "Anvils",
     "supporting_passage": "Alpha makes anvils and ships them worldwide.", "ticker": "AAA", "company": "Alpha",
     "chunk_index": 0},
    {"question": "What was Beta's best year according to the filing?", "answer": "2021",
     "supporting_passage": "Its best year was 2021, by revenue and by profit.", "ticker": "BBB",
     "company": "Beta", "chunk_index": 0},
]
DOCS = [
    {"ticker": "AAA", "company": "Alpha", "text": "Alpha makes anvils and ships them worldwide.\nMore text.\n"},
    {"ticker": "BBB", "company": "Beta", "text": "Beta sells bells.\nIts best year was 2021, by revenue and by profit.\n"},
]
# Lines huggingface_hub / datasets / tqdm print themselves; none may reach the terminal.
LIBRARY_TEXT = ("HTTP Error", "thrown while requesting", "Retrying in", "[Retry", "Rate limited", "it/s]",
                "Upload ", "Fetching ", "huggingface_hub", "Traceback", "KeyError", "Warning", "warn(")
RETRY_LINE = re.compile(r"^mtcb-curate: the Hub (answered \d{3}|.*) while .+: trying again in [\d.]+ s "
                        r"\(retry \d+ of \d+\)$")


@pytest.fixture(scope="module")
def fake():
    with HubFake() as hub:
        yield hub


@pytest.fixture(autouse=True)
def _no_leftover_failures(fake):
    yield
    assert fake.clear_failures() == 0, "a failure rule was never triggered"


@pytest.fixture
def project(tmp_path) -> dict:
    """A reviewed ficha-shaped dataset, its workspace, and an empty working directory."""
    data = tmp_path / "data"
    write_jsonl(data / "corpus.jsonl", DOCS)
    write_jsonl(data / "questions.jsonl", GOOD)
    ws = tmp_path / "ws"
    s = open_session(Options("ficha", source=[str(data)], workspace=ws))
    for pid in range(len(s)):
        s.decide(pid, Status.ACCEPTED)
    s.workspace.close()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return {"data": data, "ws": ws, "cwd": cwd, "tmp": tmp_path}


def publish_cli(fake: HubFake, project: dict, repo_id: str, *, progress_bars: bool = True,
                token: str | None = None) -> subprocess.CompletedProcess:
    env = fake.env(project["tmp"] / "hf")
    env["HF_TOKEN"] = token or fake_secret("hub-token")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    if progress_bars:  # the library's default: bars on (our code must turn them off itself)
        env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    return subprocess.run([sys.executable, "-m", "mtcb_curate", "publish", "ficha", "--source", project["data"],
                           "--workspace", project["ws"], "--repo-id", repo_id, "--license", "cc-by-4.0", "--yes"],
                          env=env, cwd=project["cwd"], capture_output=True, text=True, timeout=180)


def decoy(project: dict, repo_id: str, docs: list[dict], questions: list[dict]) -> Path:
    """A folder in the working directory named like the repo id, in Hub layout."""
    folder = project["cwd"] / repo_id
    write_hub_layout(folder, docs, questions)
    return folder


def resolve_requests(fake: HubFake, repo_id: str, sha: str) -> list[str]:
    prefix = f"/datasets/{repo_id}/resolve/{sha}/"
    return [e["path"][len(prefix):] for e in fake.request_log
            if e["method"] == "GET" and e["path"].startswith(prefix) and e["status"] in (200, 206)]


def stderr_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------
# Item 2: the load-back reads the new Hub revision, never a local folder


def test_the_load_back_reads_the_new_revision_from_the_hub_not_a_local_folder(fake, project):
    repo = "me/decoy-different"
    other = [dict(d, text=d["text"] + "decoy\n") for d in DOCS]
    decoy(project, repo, other, GOOD[:1])
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "published and verified: 2 questions, 2 documents" in proc.stdout
    sha = fake.head(repo)
    assert f"/commit/{sha}" in proc.stdout
    # the verification downloaded the committed files at the commit's revision from the Hub
    assert {C_FILE, Q_FILE, "README.md"} <= set(resolve_requests(fake, repo, sha))


def test_a_hub_serving_other_content_at_the_revision_fails_the_verification(fake, project):
    repo = "me/decoy-same"
    # a local folder with exactly the content being published: reading it would "verify"
    decoy(project, repo, DOCS, GOOD)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(GOOD[:1]), sink)
    fake.corrupt(repo, Q_FILE, sink.getvalue().to_pybytes())  # valid parquet, other rows
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "published and verified" not in proc.stdout
    sha = fake.head(repo)
    lines = stderr_lines(proc)
    assert lines[-1].startswith(f"mtcb-curate: error: committed {repo}@{sha[:12]}, but the 'questions' config"), lines
    assert "check the repository" in lines[-1]
    assert Q_FILE in resolve_requests(fake, repo, sha)
    fake.clear_failures()

    # bytes that are not parquet at all: also a verification failure, in one line
    repo2 = "me/decoy-garbage"
    decoy(project, repo2, DOCS, GOOD)
    fake.corrupt(repo2, C_FILE)
    proc = publish_cli(fake, project, repo2)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    last = stderr_lines(proc)[-1]
    assert last.startswith(f"mtcb-curate: error: committed {repo2}@"), proc.stderr
    assert "'corpus' config" in last and "Traceback" not in proc.stderr


def test_the_plan_reads_the_current_version_from_the_hub_not_a_local_folder(fake, project, tmp_path):
    repo = "me/decoy-plan"
    hub_copy = tmp_path / "hub-copy"
    write_hub_layout(hub_copy, DOCS, GOOD)  # the Hub already holds exactly this
    fake.add_dataset_from_folder(repo, hub_copy)
    decoy(project, repo, DOCS[:1], GOOD[:1])  # a stale local copy with other rows
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "corpus: +0 added, -0 removed, ~0 edited, 2 unchanged" in proc.stdout
    assert "questions: +0 added, -0 removed, ~0 edited, 2 unchanged" in proc.stdout


# ---------------------------------------------------------------------------------------------
# Item 8: one line per retry in our words, nothing of the library's own output


def test_retried_hub_faults_give_one_line_each_in_our_words_then_the_result(fake, project):
    repo = "me/flaky"
    fake.fail_next(f"/api/datasets/{repo}/preupload/", 503, count=2, method="POST")
    fake.fail_next(f"/datasets/{repo}.git/info/lfs/objects/batch", 500, count=1, method="POST")
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    for text in LIBRARY_TEXT:
        assert text not in out, f"{text!r} in the output:\n{out}"
    retries = [line for line in stderr_lines(proc) if "trying again" in line]
    assert len(retries) == 3, proc.stderr
    assert all(RETRY_LINE.match(line) for line in retries), retries
    assert "answered 503" in retries[0] and "(retry 1 of 5)" in retries[0]
    assert "answered 503" in retries[1] and "(retry 2 of 5)" in retries[1]
    assert "answered 500" in retries[2]
    tail = [line for line in proc.stdout.splitlines() if line.strip()][-2:]
    assert tail[0] == "published and verified: 2 questions, 2 documents" and f"/commit/{fake.head(repo)}" in tail[1]


def test_retries_then_a_failure_end_in_one_line_without_library_text(fake, project):
    repo = "me/flaky-fails"
    fake.fail_next(f"/datasets/{repo}.git/info/lfs/objects/batch", 502, count=2, method="POST")
    fake.fail_next(f"/api/datasets/{repo}/commit/", 503, method="POST")  # the commit POST is not retried
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    for text in LIBRARY_TEXT:
        assert text not in out, f"{text!r} in the output:\n{out}"
    lines = stderr_lines(proc)
    retries = [line for line in lines if "trying again" in line]
    assert len(retries) == 2 and all(RETRY_LINE.match(line) for line in retries), lines
    assert lines[-1].startswith("mtcb-curate: error: the Hub answered 503") and "try again later" in lines[-1], lines
    assert lines[-2] == retries[-1], lines  # nothing between the retries and the final line
    assert [c.title for c in fake.history(repo)] == ["initial commit"]


def test_a_409_without_url_on_repo_creation_is_a_clear_line(fake, project):
    repo = "me/conflict-no-url"
    fake.fail_next("/api/repos/create", 409, method="POST", message="Conflict")  # body: {"error": ...}, no url
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = stderr_lines(proc)
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr and "'url'" not in proc.stderr
    assert lines[-1].startswith(f"mtcb-curate: error: the Hub refused to create {repo} (409: Conflict)"), lines
    assert "nothing was committed" in lines[-1]
    assert repo not in fake.repos


def test_a_409_on_creation_of_a_repo_that_appeared_meanwhile_publishes_to_it(fake, project):
    repo = "me/appeared"
    fake.create_repo(repo)
    # the plan and the publish's first read both see no repo; then creating it answers 409
    fake.fail_next(f"/api/datasets/{repo}", 404, count=2, method="GET", message="Repository not found",
                   error_code="RepoNotFound")
    proc = publish_cli(fake, project, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "published and verified: 2 questions, 2 documents" in proc.stdout
    assert [c.title for c in fake.history(repo)] == ["Publish corpus and questions (mtcb-curate)", "initial commit"]


# ---------------------------------------------------------------------------------------------
# The app: retries replace the status line; nothing of the libraries reaches the terminal

from test_tui_publish import (  # noqa: E402
    SIZE,
    CurateApp,
    at_once,  # noqa: F401 - autouse fixture
    clean,  # noqa: F401 - fixture
    hub,  # noqa: F401 - fixture
    open_publish,
    press_and_settle,
    shown,
)


async def test_the_app_shows_retries_on_its_status_line_and_prints_nothing(clean, hub, capfd):  # noqa: F811
    from mtcb_curate.tui.screens.publish import PublishScreen

    statuses: list[str] = []
    original = PublishScreen._status

    def recording(self, text: str, cls: str = "") -> None:
        statuses.append(text)
        original(self, text, cls)

    app = CurateApp(clean)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)
        screen._status = recording.__get__(screen)
        screen.license = "cc-by-4.0"
        hub.fail_next("/api/datasets/chonkie-ai/ficha/preupload/", 503, count=1, method="POST")
        await press_and_settle(app, pilot, "r")
        await press_and_settle(app, pilot, "p", "y")
        assert screen.result is not None, shown(screen, "#publish-status")
    retries = [s for s in statuses if s.startswith("Retrying: ")]
    assert retries == ["Retrying: the Hub answered 503 while uploading to chonkie-ai/ficha: trying again in 1 s "
                       "(retry 1 of 5)…"], statuses
    out, err = capfd.readouterr()
    for text in LIBRARY_TEXT:
        assert text not in out + err, f"{text!r} reached the terminal:\n{out}{err}"
