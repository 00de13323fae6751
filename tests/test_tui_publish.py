"""The publish screen (``mtcb_curate.tui.screens.publish``), driven with Textual's Pilot.

The success path runs IN-PROCESS against tests/hubfake.py, a loopback protocol fake of the Hub
(no auth, no Xet, no server-side validation: publishing to the real Hub is verified only
against this fake). huggingface_hub and datasets read ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE``
at import time, but every client call reads them back from ``huggingface_hub.constants`` and
``datasets.config``: the ``hub`` fixture points those attributes at the fake (monkeypatch,
restored after the test) instead of running the client in a subprocess.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from textual.widgets import Input, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import fake_secret, write_jsonl  # noqa: E402
from hubfake import HubFake  # noqa: E402
from test_app import SIZE, opened, settle  # noqa: E402

from mtcb_curate.dataset.model import Status  # noqa: E402
from mtcb_curate.tui.app import CurateApp  # noqa: E402
from mtcb_curate.tui.screens.publish import HUB_UNREACHABLE, PublishScreen  # noqa: E402
from mtcb_curate.tui.screens.review import ReviewScreen  # noqa: E402

HOSTILE = "[bold]x[/bold] [@click=app.quit]y[/]"
SECRET = fake_secret("hub-token")

# A clean dataset: every check of the checklist passes once every pair is accepted.
ALPHA = ("Alpha Corp makes industrial anvils in Ohio and Texas.\n"
         "Total revenue was $10 million in fiscal 2022, up from $8 million.\n")
BETA = ("Beta Inc sells brass bells through retail stores.\n"
        "Its best year was 2021, when net income reached $3 million.\n")
CLEAN_CORPUS = [{"ticker": "AAA", "company": "Alpha", "text": ALPHA},
                {"ticker": "BBB", "company": "Beta", "text": BETA}]
CLEAN_QUESTIONS = [
    {"question": "What does Alpha Corp make in Ohio and Texas?", "answer": "Industrial anvils",
     "supporting_passage": "Alpha Corp makes industrial anvils in Ohio and Texas.", "ticker": "AAA",
     "company": "Alpha", "chunk_index": 0},
    {"question": "What was Alpha's total revenue in fiscal 2022?", "answer": "$10 million",
     "supporting_passage": "Total revenue was $10 million in fiscal 2022, up from $8 million.", "ticker": "AAA",
     "company": "Alpha", "chunk_index": 0},
    {"question": "Through which channel does Beta Inc sell its brass bells?", "answer": "Retail stores",
     "supporting_passage": "Beta Inc sells brass bells through retail stores.", "ticker": "BBB",
     "company": "Beta", "chunk_index": None},
    {"question": "How much net income did Beta report for 2021?", "answer": "$3 million",
     "supporting_passage": "Its best year was 2021, when net income reached $3 million.", "ticker": "BBB",
     "company": "Beta", "chunk_index": None},
]


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    from mtcb_curate.tui.screens import review_analysis, review_painting

    monkeypatch.setattr(review_analysis, "ANALYSIS_DELAY_S", 0.0)
    monkeypatch.setattr(review_painting, "LOCATE_DELAY_S", 0.0)


@pytest.fixture
def clean(tmp_path):
    """A session over the clean dataset with every pair accepted (workspace closed at teardown)."""
    src = tmp_path / "clean"
    write_jsonl(src / "corpus.jsonl", CLEAN_CORPUS)
    write_jsonl(src / "questions.jsonl", CLEAN_QUESTIONS)
    session = opened(src, tmp_path / "ws")
    for pid in range(len(session)):
        session.decide(pid, Status.ACCEPTED)
    yield session
    session.workspace.close()


@pytest.fixture
def hub(monkeypatch):
    """A started HubFake with huggingface_hub and datasets pointed at it (online, no Xet)."""
    import datasets.config as dconfig
    from huggingface_hub import constants

    with HubFake() as fake:
        url = fake.url
        monkeypatch.setattr(constants, "ENDPOINT", url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_PROGRESS_BARS", True)
        monkeypatch.setattr(dconfig, "HF_ENDPOINT", url)
        monkeypatch.setattr(dconfig, "HUB_DATASETS_URL", url + "/datasets/{repo_id}/resolve/{revision}/{path}")
        monkeypatch.setattr(dconfig, "HF_HUB_OFFLINE", False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_TOKEN", SECRET)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        yield fake
        assert fake.clear_failures() == 0, "a failure rule was never triggered"


def shown(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).content)


def all_text(screen) -> str:
    return "\n".join(str(s.content) for s in screen.query(Static))


def workspace_digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file() and p.name != "lock" and not p.name.endswith("-shm")}


async def open_publish(app, pilot) -> PublishScreen:
    await settle(app, pilot)
    screen = PublishScreen(app.session)
    app.push_screen(screen)
    await settle(app, pilot)
    assert app.screen is screen
    return screen


async def press_and_settle(app, pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await settle(app, pilot)


async def test_failing_gate_shows_the_failing_checks_and_p_refuses(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    for pid in (0, 1, 2):  # pair 2's passage is not verbatim (a doubled space)
        session.decide(pid, Status.ACCEPTED)
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)
        gate = shown(screen, "#publish-gate")
        assert "FAILED" in gate and "verbatim" in gate
        assert "reviewed" not in gate  # every pair is decided: only the failing ids are named
        assert screen.failing_checks() == ["verbatim"]
        await press_and_settle(app, pilot, "p")
        status = shown(screen, "#publish-status")
        assert "refused" in status and "verbatim" in status
        assert "--force" in status and "command line" in status
        await press_and_settle(app, pilot, "y")  # no confirmation was asked: nothing happens
        assert screen.result is None and screen.busy is None
        # escape in a field leaves it (an unsubmitted repo id is dropped); escape again closes
        await press_and_settle(app, pilot, "t", "z")  # t selects the repo id: typing replaces it
        repo = screen.query_one("#publish-repo", Input)
        assert repo.value == "z" and screen.focused is repo
        await press_and_settle(app, pilot, "escape")
        assert repo.value == "chonkie-ai/ficha" and screen.focused is None and app.screen is screen
        await press_and_settle(app, pilot, "escape")
        assert isinstance(app.screen, ReviewScreen)
    session.workspace.close()


async def test_undecided_pairs_fail_the_reviewed_check(tiny, tmp_path):
    session = opened(tiny, tmp_path / "ws")
    app = CurateApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)
        assert "FAILED" in shown(screen, "#publish-gate") and "reviewed" in screen.failing_checks()
    session.workspace.close()


async def test_passing_gate_offline_shows_the_preview_and_cannot_publish(clean):
    digest = workspace_digest(clean.workspace.path)
    app = CurateApp(clean)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)  # HF_HUB_OFFLINE=1 (conftest)
        assert "PASSED" in shown(screen, "#publish-gate")
        assert HUB_UNREACHABLE in shown(screen, "#publish-changes-title")
        plan_text = shown(screen, "#publish-plan")
        assert "HF_HUB_OFFLINE" in plan_text  # the PublishError line
        assert "target: chonkie-ai/ficha@main" in plan_text and "questions: 4 rows" in plan_text
        assert screen.plan is not None and not screen.plan.hub_read
        await press_and_settle(app, pilot, "p")
        assert HUB_UNREACHABLE in shown(screen, "#publish-status")
        await press_and_settle(app, pilot, "y")
        assert screen.result is None and screen.busy is None
    assert workspace_digest(clean.workspace.path) == digest


async def test_hostile_repo_id_is_shown_as_plain_text(clean):
    app = CurateApp(clean)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)
        await pilot.press("t")
        repo = screen.query_one("#publish-repo", Input)
        assert screen.focused is repo
        repo.value = HOSTILE
        await press_and_settle(app, pilot, "enter")
        assert app.is_running and app.screen is screen
        assert screen.focused is None
        assert "not a Hub repo id" in shown(screen, "#publish-status")
        assert HOSTILE in shown(screen, "#publish-status")
        assert HOSTILE in shown(screen, "#publish-plan")
        await press_and_settle(app, pilot, "p")
        assert "Nothing to publish" in shown(screen, "#publish-status")


async def test_publish_against_the_hub_fake_shows_the_commit_url(clean, hub):
    digest = workspace_digest(clean.workspace.path)
    app = CurateApp(clean)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)
        # the target: t, type a repo id, enter re-plans against the Hub
        await pilot.press("t")
        screen.query_one("#publish-repo", Input).value = "chonkie-ai/tui-p"
        await press_and_settle(app, pilot, "end", "u", "b", "enter")  # typing works in the field
        assert screen.plan is not None and screen.plan.hub_read and screen.plan.repo_id == "chonkie-ai/tui-pub"
        assert "What changes against the Hub's current version" in shown(screen, "#publish-changes-title")
        plan_text = shown(screen, "#publish-plan")
        assert "target: chonkie-ai/tui-pub@main (new repository)" in plan_text
        assert "questions: +4 added, -0 removed, ~0 edited" in plan_text
        assert "licence: unknown" in plan_text
        # no licence is known: p asks for one and focuses its input
        await press_and_settle(app, pilot, "p")
        assert "licence is unknown" in shown(screen, "#publish-status")
        licence = screen.query_one("#publish-license", Input)
        assert screen.focused is licence
        licence.value = "cc-by-4."
        await press_and_settle(app, pilot, "end", "0", "enter")
        assert screen.plan.license == "cc-by-4.0" and screen.focused is None
        # p asks for a confirmation; n cancels; p then y publishes
        await press_and_settle(app, pilot, "p")
        assert "y publish" in shown(screen, "#publish-status")
        await press_and_settle(app, pilot, "n")
        assert "Not published" in shown(screen, "#publish-status") and not hub.repos
        await press_and_settle(app, pilot, "p", "y")
        status = shown(screen, "#publish-status")
        assert screen.result is not None, status
        assert "Published and verified: 4 questions, 2 documents" in status
        assert screen.result.commit_url in status and hub.url in screen.result.commit_url
        assert hub.head("chonkie-ai/tui-pub") in screen.result.commit_url
        assert {"README.md", "corpus/train-00000-of-00001.parquet",
                "questions/train-00000-of-00001.parquet"} <= set(hub.files("chonkie-ai/tui-pub"))
        assert b"license: cc-by-4.0" in hub.files("chonkie-ai/tui-pub")["README.md"]
        # the token is never shown; a second p does not publish the same plan again
        assert SECRET not in all_text(screen)
        await press_and_settle(app, pilot, "p")
        assert "Published already" in shown(screen, "#publish-status")
        await press_and_settle(app, pilot, "escape")
        assert isinstance(app.screen, ReviewScreen)
    assert workspace_digest(clean.workspace.path) == digest


async def test_a_refused_publish_shows_its_one_line_and_can_be_retried(clean, hub):
    app = CurateApp(clean)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_publish(app, pilot)
        screen.license = "cc-by-4.0"  # as if typed: the plan is made with it
        await press_and_settle(app, pilot, "r")
        assert screen.plan is not None and screen.plan.hub_read and screen.plan.license == "cc-by-4.0"
        hub.fail_next("/api/datasets/chonkie-ai/ficha/commit", 403, message="You may not write here")
        await press_and_settle(app, pilot, "p", "y")
        status = shown(screen, "#publish-status")
        assert status.startswith("Not published:") and "403" in status and "\n" not in status
        assert screen.result is None and SECRET not in all_text(screen)
        await press_and_settle(app, pilot, "p", "y")  # retried on the same plan: the repo is still empty
        assert screen.result is not None, shown(screen, "#publish-status")
        assert "Published and verified" in shown(screen, "#publish-status")
