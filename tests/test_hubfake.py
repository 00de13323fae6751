"""Tests of tests/hubfake.py, the loopback protocol fake of the Hugging Face Hub.

The fake has no auth, no Xet and no server-side validation: these tests check that the real
huggingface_hub / datasets client code can read from and write to it, nothing about the real Hub.
Client code runs in a subprocess because HF_ENDPOINT and friends are read at import time.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hubfake import HubFake  # noqa: E402

from mtcb_curate.hub.layout import write_hub_layout  # noqa: E402

REPO = "chonkie-ai/ficha"


def _hub_folder(root: Path) -> Path:
    write_hub_layout(
        root,
        pa.table({"doc_id": ["d1", "d2", "d3"], "text": ["alpha", "beta", "gamma"]}),
        pa.table({"question": ["q1", "q2"], "answer": ["a1", "a2"], "doc_id": ["d1", "d3"]}),
        body="# ficha (test fixture)\n",
    )
    return root


def _run(fake: HubFake, tmp_path: Path, code: str, timeout: float = 120) -> dict:
    """Run client code in a subprocess pointed at the fake; it prints one JSON line last."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=fake.env(tmp_path / "hf"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def fake(tmp_path: Path):
    with HubFake() as hub:
        hub.add_dataset_from_folder(REPO, _hub_folder(tmp_path / "src"))
        yield hub


def test_server_is_loopback_only_and_env_points_at_it(fake: HubFake, tmp_path: Path) -> None:
    assert fake.url.startswith("http://127.0.0.1:")
    env = fake.env(tmp_path / "hf")
    assert env["HF_ENDPOINT"] == fake.url
    assert env["HF_TOKEN"] == "hf_fake"
    assert env["HF_HUB_DISABLE_XET"] == "1"
    assert env["HF_HOME"] == str(tmp_path / "hf")
    assert env["HF_HUB_DISABLE_TELEMETRY"] == "1"
    assert env.get("HF_HUB_OFFLINE", "0") == "0"
    assert set(fake.files(REPO)) == {
        "README.md",
        "corpus/train-00000-of-00001.parquet",
        "questions/train-00000-of-00001.parquet",
    }


def test_load_dataset_reads_both_configs(fake: HubFake, tmp_path: Path) -> None:
    out = _run(
        fake,
        tmp_path,
        f"""
        import json, datasets
        corpus = datasets.load_dataset({REPO!r}, "corpus", split="train")
        questions = datasets.load_dataset({REPO!r}, "questions", split="train")
        print(json.dumps({{
            "corpus": [corpus.num_rows, corpus.column_names, list(corpus["doc_id"])],
            "questions": [questions.num_rows, questions.column_names],
        }}))
        """,
    )
    assert out["corpus"] == [3, ["doc_id", "text"], ["d1", "d2", "d3"]]
    assert out["questions"] == [2, ["question", "answer", "doc_id"]]
    assert fake.unknown_requests == []
    sha = fake.head(REPO)
    assert ("GET", f"/api/datasets/{REPO}/tree/{sha}/corpus") in fake.requests
    assert ("GET", f"/datasets/{REPO}/resolve/{sha}/questions/train-00000-of-00001.parquet") in fake.requests


def test_hfapi_reads(fake: HubFake, tmp_path: Path) -> None:
    out = _run(
        fake,
        tmp_path,
        f"""
        import json
        from huggingface_hub import HfApi, HfFileSystem, hf_hub_download
        from huggingface_hub.errors import RevisionNotFoundError, RepositoryNotFoundError
        api = HfApi()
        info = api.dataset_info({REPO!r}, files_metadata=True)
        path = hf_hub_download({REPO!r}, "corpus/train-00000-of-00001.parquet", repo_type="dataset")
        errors = []
        try:
            api.dataset_info({REPO!r}, revision="refs/convert/parquet")
        except RevisionNotFoundError:
            errors.append("revision")
        try:
            api.dataset_info("chonkie-ai/missing")
        except RepositoryNotFoundError:
            errors.append("repo")
        with HfFileSystem().open("datasets/{REPO}/corpus/train-00000-of-00001.parquet") as f:
            f.seek(-4, 2)
            tail = f.read().decode()
        print(json.dumps({{
            "sha": info.sha,
            "configs": [c["config_name"] for c in info.card_data["configs"]],
            "siblings": {{s.rfilename: [s.size, s.lfs is not None] for s in info.siblings}},
            "files": api.list_repo_files({REPO!r}, repo_type="dataset"),
            "tree": sorted(e.path for e in api.list_repo_tree({REPO!r}, repo_type="dataset", recursive=True)),
            "download": open(path, "rb").read().hex(),
            "errors": errors,
            "tail": tail,
        }}))
        """,
    )
    files = fake.files(REPO)
    assert out["sha"] == fake.head(REPO)
    assert out["configs"] == ["corpus", "questions"]
    assert out["files"] == sorted(files)
    assert out["siblings"]["README.md"] == [len(files["README.md"]), False]
    assert out["siblings"]["corpus/train-00000-of-00001.parquet"][1] is True
    assert out["tree"] == sorted([*files, "corpus", "questions"])
    assert bytes.fromhex(out["download"]) == files["corpus/train-00000-of-00001.parquet"]
    assert out["errors"] == ["revision", "repo"]
    assert out["tail"] == "PAR1"  # a Range read through HfFileSystem
    assert ("GET", f"/api/datasets/{REPO}/revision/refs%2Fconvert%2Fparquet") in fake.requests
    assert fake.unknown_requests == []


def test_commit_then_load_back(fake: HubFake, tmp_path: Path) -> None:
    out = _run(
        fake,
        tmp_path,
        """
        import io, json
        import pyarrow as pa, pyarrow.parquet as pq
        import datasets
        from huggingface_hub import CommitOperationAdd, HfApi
        from huggingface_hub.errors import HfHubHTTPError
        api = HfApi()
        repo = "chonkie-ai/published"
        api.create_repo(repo, repo_type="dataset")
        statuses = []
        try:
            api.create_repo(repo, repo_type="dataset")
        except HfHubHTTPError as e:
            statuses.append(e.response.status_code)
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        parent = api.dataset_info(repo).sha
        buf = io.BytesIO()
        pq.write_table(pa.table({"question": ["a", "b", "c", "d"]}), buf)
        readme = (
            "---\\nconfigs:\\n- config_name: questions\\n  data_files:\\n"
            "  - split: train\\n    path: questions/train-*.parquet\\n---\\n"
        )
        info = api.create_commit(
            repo,
            [CommitOperationAdd("README.md", readme.encode()),
             CommitOperationAdd("questions/train-00000-of-00001.parquet", buf.getvalue())],
            commit_message="publish", repo_type="dataset", parent_commit=parent,
        )
        try:  # parent_commit is stale now
            api.create_commit(repo, [CommitOperationAdd("x.txt", b"x")], commit_message="stale",
                              repo_type="dataset", parent_commit=parent)
        except HfHubHTTPError as e:
            statuses.append(e.response.status_code)
        ds = datasets.load_dataset(repo, "questions", split="train")
        print(json.dumps({"oid": info.oid, "statuses": statuses,
                          "rows": ds.num_rows, "columns": ds.column_names}))
        """,
    )
    repo = "chonkie-ai/published"
    assert out["statuses"] == [409, 412]
    assert out["rows"] == 4 and out["columns"] == ["question"]
    assert out["oid"] == fake.head(repo)
    files = fake.files(repo)
    assert set(files) == {".gitattributes", "README.md", "questions/train-00000-of-00001.parquet"}
    assert pq.read_table(pa.BufferReader(files["questions/train-00000-of-00001.parquet"])).num_rows == 4
    assert [c.title for c in fake.history(repo)] == ["publish", "initial commit"]
    # the parquet went the LFS way (batch + PUT on the fake), the README the regular way
    methods_paths = fake.requests
    assert ("POST", f"/datasets/{repo}.git/info/lfs/objects/batch") in methods_paths
    assert any(m == "PUT" and p.startswith("/__lfs__/") for m, p in methods_paths)
    assert fake.unknown_requests == []


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=60) as resp:
        resp.read()
        return resp.status


def test_fail_next_statuses_and_dropped_connection(fake: HubFake) -> None:
    info_url = f"{fake.url}/api/datasets/{REPO}"
    fake.fail_next(f"/api/datasets/{REPO}", 401, count=2, message="Invalid credentials")
    for _ in range(2):
        with pytest.raises(urllib.error.HTTPError) as err:
            _get(info_url)
        assert err.value.code == 401
        assert err.value.headers["X-Error-Message"] == "Invalid credentials"
    assert _get(info_url) == 200

    fake.fail_next("/datasets/", 500, method="HEAD")
    assert _get(f"{fake.url}/datasets/{REPO}/resolve/main/README.md") == 200  # GET not matched
    req = urllib.request.Request(f"{fake.url}/datasets/{REPO}/resolve/main/README.md", method="HEAD")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=60)
    assert err.value.code == 500

    fake.fail_next(f"/api/datasets/{REPO}", "drop")
    with pytest.raises((urllib.error.URLError, http.client.RemoteDisconnected, ConnectionError)):
        _get(info_url)
    assert _get(info_url) == 200

    with pytest.raises(urllib.error.HTTPError) as err:
        _get(f"{fake.url}/api/no/such/endpoint")
    assert err.value.code == 404
    assert fake.unknown_requests == [("GET", "/api/no/such/endpoint", "")]
