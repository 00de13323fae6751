"""Faults found by trial in choosing and opening sources.

- bad input is refused before anything is written: no workspace folder, no file;
- with the Hub unreachable the default source falls back to the sample at once, saying why;
- the Hub organisation is configurable, tried in order, and ``owner/name@REV`` pins a revision
  that ends up in the ``SourceInfo`` and in the dataset card.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CORPUS, QUESTIONS, write_jsonl  # noqa: E402
from hubfake import HubFake  # noqa: E402
from test_cli import FATAL, assert_one_error_line, run_cli  # noqa: E402

from mtcb_curate.hub import card as cardmod  # noqa: E402
from mtcb_curate.dataset import loading  # noqa: E402
from mtcb_curate.config import hub_organisations  # noqa: E402
from mtcb_curate.errors import CurateError, InputError  # noqa: E402
from mtcb_curate.hub.layout import write_hub_layout  # noqa: E402
from mtcb_curate.dataset.model import SourceInfo  # noqa: E402
from mtcb_curate.dataset.profiles import get_profile  # noqa: E402
from mtcb_curate.app.sources import Options, choose_and_load, open_session  # noqa: E402
from mtcb_curate.store.sqlite import default_workspace_dir  # noqa: E402

# ---------------------------------------------------------------------------------------------
# item 7: refused input writes nothing


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.mark.parametrize("make", FATAL, ids=[f.__name__.strip("_") for f in FATAL])
def test_bad_input_creates_no_workspace(make, tmp_path, isolated_env):
    spec, _ = make(tmp_path / "bad")
    ws = tmp_path / "ws"
    with pytest.raises(InputError):
        open_session(Options("ficha", source=spec, workspace=ws))
    assert not ws.exists()
    # nor the per-dataset default workspace, nor anything else in the user data directory
    with pytest.raises(InputError):
        open_session(Options("ficha", source=spec))
    assert not default_workspace_dir("ficha").exists()
    assert _files_under(isolated_env / "data") == []


def test_no_sample_and_no_hub_creates_no_workspace(tmp_path):
    ws = tmp_path / "ws"
    with pytest.raises(InputError):
        open_session(Options("gacha", workspace=ws))  # offline, no cache, no bundled sample
    with pytest.raises(InputError):
        open_session(Options("gacha", sample=True, workspace=ws))
    assert not ws.exists()


def test_strict_with_row_problems_creates_no_workspace(tmp_path):
    questions = [dict(q) for q in QUESTIONS]
    questions[1]["ticker"] = "ZZZ"
    src = tmp_path / "src"
    write_jsonl(src / "corpus.jsonl", CORPUS)
    write_jsonl(src / "questions.jsonl", questions)
    ws = tmp_path / "ws"
    with pytest.raises(InputError) as info:
        open_session(Options("ficha", source=[str(src)], workspace=ws, strict=True))
    assert f"{src / 'questions.jsonl'} row 1 (line 2), field 'ticker'" in str(info.value)
    assert not ws.exists()
    # without --strict the same data opens, with the problem recorded
    session = open_session(Options("ficha", source=[str(src)], workspace=ws))
    try:
        assert len(session.dataset.problems) == 1
    finally:
        session.workspace.close()
    assert ws.exists()


def _snapshot(folder: Path) -> dict[str, bytes]:
    """The workspace's files and their bytes; SQLite's ``-wal``/``-shm`` companions, which a
    read-only reader may leave (empty of changes), are not the workspace's content."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.endswith(("-wal", "-shm"))}


def test_a_bad_source_leaves_an_existing_workspace_untouched(tiny, tmp_path):
    ws = tmp_path / "ws"
    open_session(Options("ficha", source=[str(tiny)], workspace=ws)).workspace.close()
    before = _snapshot(ws)
    for bad in ([str(tmp_path / "nowhere")], [str(tiny / "questions.jsonl")]):
        with pytest.raises(InputError):
            open_session(Options("ficha", source=bad, workspace=ws))
        assert _snapshot(ws) == before
    resumed = open_session(Options("ficha", workspace=ws))  # the stored source is read back
    try:
        assert "resumed" in resumed.dataset.source.reason
        assert len(resumed.dataset.pairs) == 3
    finally:
        resumed.workspace.close()


def test_resume_with_a_stored_source_that_went_bad_leaves_the_workspace_untouched(tmp_path):
    src = tmp_path / "src"
    write_jsonl(src / "corpus.jsonl", CORPUS)
    write_jsonl(src / "questions.jsonl", QUESTIONS)
    ws = tmp_path / "ws"
    open_session(Options("ficha", source=[str(src)], workspace=ws)).workspace.close()
    before = _snapshot(ws)
    (src / "questions.jsonl").write_bytes(b"")
    with pytest.raises(InputError):
        open_session(Options("ficha", workspace=ws))
    assert _snapshot(ws) == before


@pytest.mark.parametrize("make", FATAL[:3], ids=[f.__name__.strip("_") for f in FATAL[:3]])
def test_review_command_with_bad_input_creates_no_workspace(make, tmp_path):
    spec, fragments = make(tmp_path / "bad")
    proc = run_cli("ficha", "--source", *spec, "--workspace", tmp_path / "ws")
    assert_one_error_line(proc, *fragments)
    assert not (tmp_path / "ws").exists()


# ---------------------------------------------------------------------------------------------
# item 16: an unreachable Hub is noticed at once


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Run in a subprocess before the load: every ``time.sleep`` is added up (``SLEPT``), so that "at
#: once" is a count of the waits the load asked for, not a measure of a loaded machine's speed.
COUNT_SLEEPS = """
    import time
    SLEPT = [0.0]
    _sleep = time.sleep
    def _counted(seconds):
        SLEPT[0] += seconds
        _sleep(seconds)
    time.sleep = _counted
"""


def test_unreachable_hub_falls_back_to_the_sample_quickly(tmp_path):
    code = textwrap.dedent(COUNT_SLEEPS) + textwrap.dedent("""
        import json
        from mtcb_curate.app.sources import Options, choose_and_load
        ds, spec = choose_and_load(Options('ficha'), None)
        print(json.dumps({"spec": spec, "kind": ds.source.kind, "reason": ds.source.reason, "slept": SLEPT[0]}))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{_closed_port()}", HF_HOME=str(tmp_path / "hf"))
    # Before the fix huggingface_hub retried for 25 s, sleeping between the attempts; the
    # timeout only guards against a hang.
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["spec"] == ["sample:ficha"] and out["kind"] == "sample"
    assert "unreachable" in out["reason"]
    assert "Retrying" not in proc.stderr and out["slept"] < 1.0


def test_offline_mode_is_unreachable_without_a_probe(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(loading, "_probe", lambda *a: pytest.fail("probed although offline"))
    assert "HF_HUB_OFFLINE" in loading.hub_unreachable()


def test_probe_targets_the_endpoint(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example.org:8443/")
    seen = []
    monkeypatch.setattr(loading, "_probe", lambda url, timeout: seen.append(url) or None)
    assert loading.hub_unreachable() is None
    assert seen == ["https://hub.example.org:8443/"]
    monkeypatch.setattr(loading, "_probe", lambda url, timeout: "connection refused")
    reason = loading.hub_unreachable()
    assert "hub.example.org:8443" in reason and "connection refused" in reason


def test_reachable_hub_keeps_the_real_loading_path(monkeypatch, tmp_path):
    """When the probe succeeds, the loader is called without forcing offline mode."""
    monkeypatch.setattr(loading, "hub_unreachable", lambda: None)
    calls = []

    def fake(repo_id, config, revision, offline):
        calls.append((repo_id, config, revision, offline))
        return _table(config), None

    monkeypatch.setattr(loading, "_hub_load", fake)
    ds, spec = choose_and_load(Options("ficha"), None)
    assert spec == ["feyninc/ficha"] and ds.source.kind == "hub"
    assert {c[3] for c in calls} == {False}


# ---------------------------------------------------------------------------------------------
# item 17: the organisation, the order of names and the revision


def _table(config: str) -> loading.Table:
    rows = CORPUS if config == "corpus" else QUESTIONS
    return loading._rows_to_table([dict(r) for r in rows], f"hub:{config}")


@pytest.mark.parametrize("spec,expected", [
    ("feyninc/gacha", ("feyninc/gacha", None)),
    ("feyninc/gacha@0123abcd", ("feyninc/gacha", "0123abcd")),
    ("chonkie-ai/ficha@refs/pr/3", ("chonkie-ai/ficha", "refs/pr/3")),
    ("a.b/c-d@v1.0", ("a.b/c-d", "v1.0")),
])
def test_parse_hub_spec(spec, expected):
    assert loading.is_hub_id(spec)
    assert loading.split_revision(spec) == expected


@pytest.mark.parametrize("spec", ["feyninc/gacha@", "@rev", "owner@rev", "a/b/c@x", "feyninc/gacha@a b"])
def test_malformed_hub_specs_are_not_hub_ids(spec):
    assert not loading.is_hub_id(spec)


def test_default_source_tries_feyninc_then_chonkie_ai(monkeypatch):
    monkeypatch.setattr(loading, "hub_unreachable", lambda: None)
    tried = []

    def fake(repo_id, config, revision, offline):
        tried.append(repo_id)
        if repo_id.startswith("feyninc/"):
            raise InputError(f"{repo_id}:{config}", "not found")
        return _table(config), "c" * 40

    monkeypatch.setattr(loading, "_hub_load", fake)
    ds, spec = choose_and_load(Options("ficha"), None)
    assert tried[0] == "feyninc/ficha" and set(tried[1:]) == {"chonkie-ai/ficha"}
    assert spec == ["chonkie-ai/ficha"]
    assert ds.source.location == "chonkie-ai/ficha" and ds.source.commit == "c" * 40
    assert "chonkie-ai/ficha" in ds.source.reason


def test_every_name_failing_falls_back_to_the_sample_naming_them(monkeypatch):
    monkeypatch.setattr(loading, "hub_unreachable", lambda: None)

    def fake(repo_id, config, revision, offline):
        raise InputError(f"{repo_id}:{config}", "not found")

    monkeypatch.setattr(loading, "_hub_load", fake)
    ds, spec = choose_and_load(Options("ficha"), None)
    assert spec == ["sample:ficha"]
    assert "feyninc/ficha" in ds.source.reason and "chonkie-ai/ficha" in ds.source.reason
    assert ds.source.reason.count("(") == ds.source.reason.count(")")


def test_configured_organisations_are_tried_in_their_order(monkeypatch, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[hub]\norganisations = ["acme", "chonkie-ai"]\n', encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(cfg))
    assert hub_organisations() == ("acme", "chonkie-ai")
    monkeypatch.setattr(loading, "hub_unreachable", lambda: None)
    tried = []

    def fake(repo_id, config, revision, offline):
        tried.append(repo_id)
        raise InputError(f"{repo_id}:{config}", "not found")

    monkeypatch.setattr(loading, "_hub_load", fake)
    choose_and_load(Options("ficha"), None)
    assert list(dict.fromkeys(tried)) == ["acme/ficha", "chonkie-ai/ficha"]


def test_default_organisations_and_bad_config(monkeypatch, tmp_path):
    assert hub_organisations() == ("feyninc", "chonkie-ai")
    cfg = tmp_path / "config.toml"
    cfg.write_text('[hub]\norganisations = "feyninc"\n', encoding="utf-8")
    with pytest.raises(CurateError, match=r"\[hub\] organisations"):
        hub_organisations(cfg)


def test_an_explicit_repo_id_as_the_dataset_name_is_the_only_name_tried(monkeypatch):
    monkeypatch.setattr(loading, "hub_unreachable", lambda: None)
    tried = []

    def fake(repo_id, config, revision, offline):
        tried.append(repo_id)
        return _table(config), None

    monkeypatch.setattr(loading, "_hub_load", fake)
    _, spec = choose_and_load(Options("someone/nano-ficha"), None)
    assert set(tried) == {"someone/nano-ficha"} and spec == ["someone/nano-ficha"]


def test_source_with_a_revision_passes_it_to_the_loader_and_records_it(monkeypatch):
    monkeypatch.setattr(loading, "hub_unreachable", lambda: None)
    calls = []

    def fake(repo_id, config, revision, offline):
        calls.append((repo_id, revision))
        return _table(config), "d" * 40

    monkeypatch.setattr(loading, "_hub_load", fake)
    ds, spec = choose_and_load(Options("ficha", source=["feyninc/ficha@v1.2"]), None)
    assert set(calls) == {("feyninc/ficha", "v1.2")}
    assert spec == ["feyninc/ficha@v1.2"]
    assert (ds.source.kind, ds.source.location, ds.source.revision, ds.source.commit) == \
        ("hub", "feyninc/ficha", "v1.2", "d" * 40)


def test_card_records_the_source_revision():
    content = cardmod.CardContent(
        repo_id="me/ficha-curated", name="ficha", description="d", corpus_config="corpus",
        questions_config="questions", corpus_fields=[], questions_fields=[], counts={},
        curation=cardmod.CurationSummary(0, 0, 0, {}, 0, 0, 0, 0),
        source=SourceInfo("hub", "feyninc/ficha", "r", revision="v1.2", commit="e" * 40))
    text = cardmod.render_section(content)
    [line] = [ln for ln in text.splitlines() if "feyninc/ficha" in ln]
    assert "v1.2" in line and "e" * 40 in line
    local = cardmod.render_section(replace(content, source=SourceInfo("folder", "/home/me/secret", "r")))
    assert "/home/me/secret" not in local and "### Source" not in local


@pytest.mark.slow
def test_pinned_revision_loads_that_revision_from_the_hub(tmp_path):
    """Through the loopback Hub fake (no auth, no Xet): ``owner/name@SHA`` gives the older data."""
    old = tmp_path / "old"
    write_hub_layout(old, CORPUS, QUESTIONS, body="# v1\n")
    new = tmp_path / "new"
    write_hub_layout(new, CORPUS, QUESTIONS[:2], body="# v2\n")
    code = textwrap.dedent("""
        import json, sys
        from mtcb_curate.app.sources import Options, choose_and_load
        ds, spec = choose_and_load(Options('ficha', source=[sys.argv[1]]), None)
        print(json.dumps({"pairs": len(ds.pairs), "spec": spec, "revision": ds.source.revision,
                          "commit": ds.source.commit, "location": ds.source.location}))
    """)
    with HubFake() as fake:
        first = fake.add_dataset_from_folder("feyninc/ficha", old)
        second = fake.add_dataset_from_folder("feyninc/ficha", new)
        assert first != second
        runs = {}
        for spec in (f"feyninc/ficha@{first}", "feyninc/ficha"):
            proc = subprocess.run([sys.executable, "-c", code, spec], env=fake.env(tmp_path / "hf"),
                                  capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr[-3000:]
            runs[spec] = json.loads(proc.stdout.strip().splitlines()[-1])
    pinned, latest = runs[f"feyninc/ficha@{first}"], runs["feyninc/ficha"]
    assert pinned == {"pairs": 3, "spec": [f"feyninc/ficha@{first}"], "revision": first, "commit": first,
                      "location": "feyninc/ficha"}
    assert latest["pairs"] == 2 and latest["revision"] is None and latest["commit"] == second


def test_profiles_name_the_hub_candidates():
    assert get_profile("ficha").hub_candidates(("feyninc", "chonkie-ai")) == ["feyninc/ficha", "chonkie-ai/ficha"]
    assert get_profile("someone/ficha").hub_candidates(("feyninc",)) == ["someone/ficha"]


def test_review_command_with_strict_and_a_row_problem_creates_no_workspace(tmp_path):
    questions = [dict(q) for q in QUESTIONS]
    questions[1]["ticker"] = "ZZZ"
    src = tmp_path / "src"
    write_jsonl(src / "corpus.jsonl", CORPUS)
    write_jsonl(src / "questions.jsonl", questions)
    proc = run_cli("ficha", "--source", src, "--workspace", tmp_path / "ws", "--strict")
    assert_one_error_line(proc, f"{src / 'questions.jsonl'} row 1 (line 2), field 'ticker'", "ZZZ", "--strict")
    assert not (tmp_path / "ws").exists()


def test_published_card_names_the_source_revision(tiny, tmp_path):
    from mtcb_curate.hub import plan_publish

    session = open_session(Options("ficha", source=[str(tiny)], workspace=tmp_path / "ws"))
    try:
        local = plan_publish(session, read_hub=False, license="cc-by-4.0").readme()
        assert "### Source" not in local and str(tiny) not in local
        session.dataset.source = SourceInfo("hub", "feyninc/ficha", "r", revision="v1.2", commit="f" * 40)
        readme = plan_publish(session, read_hub=False, license="cc-by-4.0").readme()
    finally:
        session.workspace.close()
    [line] = [ln for ln in readme.splitlines() if ln.startswith("Curated from")]
    assert "`feyninc/ficha`" in line and "`v1.2`" in line and "f" * 40 in line


@pytest.mark.slow
def test_unreachable_hub_still_reads_a_cached_dataset(tmp_path):
    """Loaded once from the loopback Hub fake; then, with the Hub gone, from the local cache."""
    folder = tmp_path / "src"
    write_hub_layout(folder, CORPUS, QUESTIONS, body="# cached\n")
    code = textwrap.dedent(COUNT_SLEEPS) + textwrap.dedent("""
        import json
        from mtcb_curate.app.sources import Options, choose_and_load
        ds, spec = choose_and_load(Options('ficha'), None)
        print(json.dumps({"spec": spec, "pairs": len(ds.pairs), "reason": ds.source.reason, "slept": SLEPT[0]}))
    """)
    with HubFake() as fake:
        fake.add_dataset_from_folder("chonkie-ai/ficha", folder)
        env = fake.env(tmp_path / "hf")
        online = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert online.returncode == 0, online.stderr[-3000:]
    assert json.loads(online.stdout.strip().splitlines()[-1])["spec"] == ["chonkie-ai/ficha"]
    env = {k: v for k, v in env.items() if k != "HF_HUB_OFFLINE"}
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{_closed_port()}"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["spec"] == ["chonkie-ai/ficha"] and out["pairs"] == 3 and out["slept"] < 1.0  # no retry waits
    assert "local cache" in out["reason"] and "unreachable" in out["reason"]
