"""The checklist's cache on disk (``mtcb_curate.checks.cache``): checking again reuses the
verification of unchanged passages and the ``loads`` verdict of unchanged tables, gives the
same report as checking afresh, and never serves an answer for changed text, code or corpus.

The user cache folder is the test's own (``XDG_CACHE_HOME`` from ``conftest.isolated_env``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_checklist import corpus, q, questions, write_source  # noqa: E402

from mtcb_curate.app import gate  # noqa: E402
from mtcb_curate.app.sources import Options, open_session  # noqa: E402
from mtcb_curate.checks import cache as ccache  # noqa: E402
from mtcb_curate.checks import run_checklist  # noqa: E402
from mtcb_curate.checks import base as cbase  # noqa: E402
from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.hub.tables import tables_digest  # noqa: E402

CACHE = ccache.default_cache_dir


def rows_with_a_bad_passage() -> list[dict]:
    rows = questions()
    rows.append(q("What does Beta sell?", "Bells", "Beta sells bells in 1999.", "BBB"))  # not in BBB's text
    return rows


@pytest.fixture
def session_of(tmp_path):
    """``session_of(name, corpus_rows, question_rows)``: a fresh session with a workspace in
    tmp_path, every pair accepted; closed at teardown."""
    opened = []

    def make(name="src", corpus_rows=None, question_rows=None):
        src = write_source(tmp_path / name, corpus() if corpus_rows is None else corpus_rows,
                           questions() if question_rows is None else question_rows)
        session = open_session(Options("ficha", source=[str(src)], workspace=tmp_path / f"ws-{name}-{len(opened)}"))
        opened.append(session)
        for pid in range(len(session)):
            session.decide(pid, Status.ACCEPTED)
        return session

    yield make
    for s in opened:
        s.workspace.close()


def plain(report) -> list[dict]:
    """The report as JSON, without ``loads``' message (which says when the cache answered)."""
    out = []
    for c in report.checks:
        d = c.to_dict()
        if c.id == "loads":
            d.pop("message")
        out.append(d)
    return out


def count_verified(monkeypatch) -> list[int]:
    """Patch ``verify_dataset`` as the checklist calls it to record how many pairs it verifies."""
    import mtcb_curate.verify as verify

    seen: list[int] = []
    real = verify.verify_dataset

    def counting(*args, **kw):
        seen.append(len(kw["pairs"]))
        return real(*args, **kw)

    monkeypatch.setattr(verify, "verify_dataset", counting)
    return seen


def test_checking_again_reuses_the_verification_and_gives_the_same_report(session_of, monkeypatch):
    seen = count_verified(monkeypatch)
    first = run_checklist(session_of(question_rows=rows_with_a_bad_passage()), loads=False, cache=True)
    assert seen == [5]
    assert first.get("verbatim").status == "fail" and first.get("verbatim").pairs == [4]
    again = run_checklist(session_of(question_rows=rows_with_a_bad_passage()), loads=False, cache=True)
    assert seen == [5], "a second session over the same texts verified passages again"
    fresh = run_checklist(session_of(question_rows=rows_with_a_bad_passage()), loads=False, cache=False)
    assert seen == [5, 5]
    assert plain(again) == plain(first) == plain(fresh)
    # the token counts came back from the cache too (passage_length reads them)
    ctx = cbase.CheckContext.build(session_of(question_rows=rows_with_a_bad_passage()), cache=True)
    assert all(r.tokens and r.tokens > 0 for r in ctx.verified.values())


def test_an_edited_passage_is_verified_again_and_only_it(session_of, monkeypatch):
    seen = count_verified(monkeypatch)
    run_checklist(session_of(), loads=False, cache=True)
    session = session_of()
    # pair 1's passage now quotes text its document does not hold
    assert session.edit(1, {"supporting_passage": "Total revenue was $11 million in fiscal 2022"})
    report = run_checklist(session, loads=False, cache=True)
    assert seen == [4, 1]
    assert report.get("verbatim").pairs == [1]
    # and snapped back to the source text, it is the first verdict again, from the cache
    assert session.edit(1, {"supporting_passage": questions()[1]["supporting_passage"]})
    assert run_checklist(session, loads=False, cache=True).get("verbatim").status == "pass"
    assert seen == [4, 1]


def test_a_changed_document_is_a_new_corpus(session_of, monkeypatch):
    seen = count_verified(monkeypatch)
    assert run_checklist(session_of(), loads=False, cache=True).get("verbatim").status == "pass"
    rows = corpus()
    rows[0]["text"] = rows[0]["text"].replace("Total revenue was $10 million", "Revenue was $10 million")
    report = run_checklist(session_of("changed", corpus_rows=rows), loads=False, cache=True)
    assert seen == [4, 4]
    assert report.get("verbatim").pairs == [1]
    assert len(list(CACHE().glob("verified-*.json"))) == 2


def test_a_damaged_or_foreign_cache_file_is_ignored_and_rewritten(session_of, monkeypatch):
    seen = count_verified(monkeypatch)
    run_checklist(session_of(question_rows=rows_with_a_bad_passage()), loads=False, cache=True)
    (path,) = CACHE().glob("verified-*.json")
    good = json.loads(path.read_text(encoding="utf-8"))
    for damaged in ("{not json", json.dumps({**good, "stamp": "another version of the code"}),
                    json.dumps({**good, "entries": {k: {"verdict": "exact"} for k in good["entries"]}})):
        path.write_text(damaged, encoding="utf-8")
        report = run_checklist(session_of(question_rows=rows_with_a_bad_passage()), loads=False, cache=True)
        assert report.get("verbatim").pairs == [4]
        assert json.loads(path.read_text(encoding="utf-8"))["stamp"] == good["stamp"]
    assert seen == [5, 5, 5, 5]


def test_a_cache_folder_that_cannot_be_written_only_means_no_cache(session_of, monkeypatch, tmp_path):
    if os.geteuid() == 0:
        # root writes anywhere: make the folder a file instead
        blocker = tmp_path / "blocked"
        blocker.write_text("", encoding="utf-8")
        monkeypatch.setattr(ccache, "default_cache_dir", lambda: blocker / "checklist")
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        monkeypatch.setattr(ccache, "default_cache_dir", lambda: folder / "checklist")
    seen = count_verified(monkeypatch)
    for _ in range(2):
        report = run_checklist(session_of(question_rows=rows_with_a_bad_passage()), loads=True, cache=True)
        assert report.get("verbatim").pairs == [4]
        assert report.get("loads").status == "pass"
    assert seen == [5, 5]


def test_loads_is_not_loaded_again_for_the_same_tables(session_of, monkeypatch):
    first = run_checklist(session_of(), loads=True, cache=True).get("loads")
    assert first.status == "pass" and "not built or loaded again" not in first.message

    from mtcb_curate.checks import loads as loads_check

    real_read_back = loads_check.read_back

    def refuse(folder):
        raise loads_check.LoadFailed("AssertionError: load_dataset called for tables that loaded before")

    monkeypatch.setattr(loads_check, "read_back", refuse)
    again = run_checklist(session_of(), loads=True, cache=True).get("loads")
    assert again.status == "pass"
    assert again.message.startswith(first.message)
    assert "so it was not built or loaded again" in again.message and "datasets " in again.message
    # another accepted set is other tables: loaded again (and here, refused)
    session = session_of()
    session.decide(2, Status.REJECTED, "other")
    changed = run_checklist(session, loads=True, cache=True).get("loads")
    assert changed.status == "fail" and "load_dataset called" in changed.message
    # a failure is not kept: the same tables are loaded again next time
    monkeypatch.setattr(loads_check, "read_back", real_read_back)
    assert run_checklist(session, loads=True, cache=True).get("loads").message == first.message.replace(
        "questions 4 rows", "questions 3 rows")


def test_tables_digest_follows_what_is_published(session_of):
    base = tables_digest(session_of())
    assert tables_digest(session_of()) == base
    edited = session_of()
    assert edited.edit(0, {"question": "What does Alpha Corp make, in Ohio and Texas?"})
    assert tables_digest(edited) != base
    rejected = session_of()
    rejected.decide(3, Status.REJECTED, "other")
    assert tables_digest(rejected) != base
    rows = corpus()
    rows[1]["company"] = "Beta Incorporated"
    assert tables_digest(session_of("meta", corpus_rows=rows)) != base


def test_tables_digest_is_stable_across_processes(tmp_path):
    """Two edited fields (a set inside) and dicts of columns: the digest must not depend on
    the process's hash seed, or the cache would never answer."""
    src = write_source(tmp_path / "src", corpus(), questions())
    script = f"""
import sys
from mtcb_curate.app.sources import Options, open_session
from mtcb_curate.dataset.model import Status
from mtcb_curate.hub.tables import tables_digest
s = open_session(Options("ficha", source=[{str(src)!r}], workspace={str(tmp_path / 'ws')!r}))
if not s.decided:
    for pid in range(len(s)):
        s.decide(pid, Status.ACCEPTED)
    s.edit(0, {{"question": "Q0 changed?", "answer": "A0 changed", "supporting_passage": "Alpha Corp makes"}})
print(tables_digest(s))
s.workspace.close()
"""
    digests = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_publishing_checks_afresh(session_of):
    """A cache file that says a hallucinated passage is verbatim is believed by ``check`` but
    never by the gate before publishing."""
    session = session_of(question_rows=rows_with_a_bad_passage())
    run_checklist(session, loads=False, cache=True)
    (path,) = CACHE().glob("verified-*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["entries"].values():
        entry.update(verdict="exact", start=0, end=1, offsets=[0], occurrences_in_doc=1)
    path.write_text(json.dumps(data), encoding="utf-8")
    assert gate.run_gate(session, loads=False).get("verbatim").status == "pass"  # the cache is read
    assert gate.run_gate(session, loads=False, cache=False).get("verbatim").pairs == [4]

    from mtcb_curate.app import publishing
    from mtcb_curate.errors import CurateError

    gates = []
    try:
        publishing.prepare(session, on_gate=gates.append, repo_id="someone/ficha-curated")
    except CurateError:
        pass  # whatever planning says offline: the gate ran first
    assert len(gates) == 1 and gates[0].get("verbatim").pairs == [4] and not gates[0].passed


def test_old_entries_are_dropped_when_the_file_outgrows_the_runs(tmp_path):
    from mtcb_curate.dataset.model import QAPair
    from mtcb_curate.verify.verdict import PairResult, Verdict

    store = ccache.ChecklistCache(tmp_path / "c")

    def put(texts, keep):
        items = [(QAPair(i, "q", "a", t, "AAA"), PairResult(i, "AAA", Verdict.EXACT, 100.0, 0, len(t), passage=t))
                 for i, t in enumerate(texts)]
        assert store.put_verified("f" * 64, items, keep=keep)
        return json.loads((tmp_path / "c" / f"verified-{'f' * 40}.json").read_text(encoding="utf-8"))["entries"]

    assert len(put([f"a{i}" for i in range(10)], keep=10)) == 10
    assert len(put([f"b{i}" for i in range(10)], keep=10)) == 20  # kept: within 3 x 10 + 1000
    assert len(put([f"c{i}" for i in range(1000)], keep=1)) == 1000  # 1,020 > 1,003: only this run's


def test_check_command_reads_the_cache_and_no_cache_checks_afresh(tmp_path):
    from support import call_main

    src = write_source(tmp_path / "cli", corpus(), rows_with_a_bad_passage())
    first = call_main("check", "ficha", "--source", src)
    assert first.returncode == 1 and "FAIL  verbatim" in first.stdout
    again = call_main("check", "ficha", "--source", src)
    assert again.returncode == 1
    assert "so it was not built or loaded again" in again.stdout
    assert [ln for ln in again.stdout.splitlines() if "loads" not in ln] == \
        [ln for ln in first.stdout.splitlines() if "loads" not in ln]
    # a cache that lies is believed by check, and ignored with --no-cache
    (path,) = CACHE().glob("verified-*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["entries"].values():
        entry.update(verdict="exact", start=0, end=1, offsets=[0], occurrences_in_doc=1)
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "ok    verbatim" in call_main("check", "ficha", "--source", src).stdout
    fresh = call_main("check", "ficha", "--source", src, "--no-cache")
    assert fresh.returncode == 1 and "FAIL  verbatim" in fresh.stdout
    assert "not built or loaded again" not in fresh.stdout


def test_a_document_key_with_a_lone_surrogate_is_kept_and_read_back(tmp_path):
    """Passages are only hashed, but document keys are written (``doc_key``, ``elsewhere``)."""
    from mtcb_curate.dataset.model import QAPair
    from mtcb_curate.verify.verdict import PairResult, Verdict

    store = ccache.ChecklistCache(tmp_path / "c")
    key, other = "AA\ud83dA", "B\udcffB"
    pair = QAPair(0, "q", "a", "some passage", key)
    result = PairResult(0, key, Verdict.EXACT, 100.0, 3, 15, elsewhere=((other, 2),), passage="some passage")
    assert store.put_verified("e" * 64, [(pair, result)], keep=1)
    found, missing = store.verified("e" * 64, [(pair, "some passage")])
    assert missing == [] and found[0].doc_key == key and found[0].elsewhere == ((other, 2),)


def count_supported(monkeypatch) -> list[int]:
    """Patch the answerable rule as the checklist calls it to record each pair it works out."""
    from mtcb_curate.checks import questions as qchecks

    seen: list[int] = []
    real = qchecks.overlap_problem

    def counting(answer, passage, question=None):
        seen.append(1)
        return real(answer, passage, question)

    monkeypatch.setattr(qchecks, "overlap_problem", counting)
    return seen


def test_answerable_is_worked_out_once_per_text_and_again_after_an_edit(session_of, monkeypatch):
    seen = count_supported(monkeypatch)
    first = run_checklist(session_of(), loads=False, cache=True)
    assert len(seen) == 4
    again = run_checklist(session_of(), loads=False, cache=True)
    assert len(seen) == 4, "a second session over the same texts worked the answerable rule out again"
    fresh = run_checklist(session_of(), loads=False, cache=False)
    assert len(seen) == 8 and plain(again) == plain(first) == plain(fresh)
    # an edited answer is a new text: only it is worked out, and its warning is its own
    session = session_of()
    assert session.edit(2, {"answer": "It rose by 97,531 units in the quarter."})
    report = run_checklist(session, loads=False, cache=True)
    assert len(seen) == 9 and 2 in report.get("answerable").pairs
    # a cache that lies is believed (it is keyed by the texts and the code) ...
    (path,) = CACHE().glob("answerable.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["entries"] = {k: "planted reason" for k in data["entries"]}
    path.write_text(json.dumps(data), encoding="utf-8")
    lied = run_checklist(session_of(), loads=False, cache=True).get("answerable")
    assert "planted reason" in json.dumps(lied.to_dict())
    # ... and a changed rule's code never reads it
    monkeypatch.setattr(ccache, "ANSWERABLE_CODE", ("evidence", "checks/questions.py", "checks/cache.py"))
    assert "planted reason" not in json.dumps(run_checklist(session_of(), loads=False, cache=True)
                                              .get("answerable").to_dict())


def test_the_corpus_table_is_built_from_the_documents_bytes_and_names_a_lone_surrogates_row(
        session_of, tmp_path, monkeypatch):
    from mtcb_curate.dataset import model
    from mtcb_curate.hub.errors import PublishError
    from mtcb_curate.hub.tables import build_tables

    session = session_of()
    decoded: list[int] = []
    real = model.document_text
    monkeypatch.setattr(model, "document_text", lambda data: decoded.append(1) or real(data))
    table = build_tables(session)[0]
    assert decoded == []  # no decoded copy of the corpus
    monkeypatch.setattr(model, "document_text", real)
    assert table.column("text").to_pylist() == [row["text"] for row in corpus()]
    assert table.column_names == ["ticker", "company", "text"]

    rows = corpus()
    rows[1] = {**rows[1], "text": rows[1]["text"] + " \ud800 bells"}
    src = write_source(tmp_path / "lone", corpus(), questions())
    (src / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="ascii")
    lone = open_session(Options("ficha", source=[str(src)], workspace=tmp_path / "ws-lone"))
    try:
        with pytest.raises(PublishError) as err:
            build_tables(lone)
    finally:
        lone.workspace.close()
    assert err.value.kind == "input" and "corpus row 1, field 'text'" in str(err.value)
