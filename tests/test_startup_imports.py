"""What the review app's process loads to show its first pair: the libraries only a feature uses
(statistics, the preview's retrievers, the LLM client, datasets, pandas) stay unloaded until that
feature runs; and the canaries of ``mtcb_curate.imports`` (the libraries whose package init
imports heavy optional packages by itself)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mtcb_curate.imports import _HiddenOnThisThread

TESTS = Path(__file__).resolve().parent

#: Top-level packages the review app's process must not hold once its first pair is shown and its
#: start-up analysis has landed: each belongs to a feature the curator starts (the preview's
#: separation statistics: scipy; its retrievers: bm25s; the LLM: openai; loading from the Hub:
#: datasets; the stats screen: pandas), or to none (statsmodels, scikit-learn, torch), or runs
#: in the analysis's process (wordllama, for the answerable check); nltk (the Snowball stemmer
#: comes from snowballstemmer: nltk's package init alone is about 28 MB) is for the team
#: agreement figures only.
NOT_AT_START = ("scipy", "statsmodels", "sklearn", "torch", "bm25s", "openai", "datasets", "pandas", "wordllama",
                "nltk")

#: The review app started as ``mtcb-curate ficha --sample`` starts it (``cli.main``: the launcher's
#: preloads, the dataset's load, the app), with ``CurateApp.run`` replaced by a headless run
#: (``run_test``) that waits for the first pair and for the analysis in its worker process, then
#: prints the top-level packages loaded.
PROBE = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv[2])
from support import current, settle
from mtcb_curate.tui.app import CurateApp

seen = {}

async def drive(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        seen["pair"] = current(app)
        seen["modules"] = sorted({m.partition(".")[0] for m in sys.modules})
        c = app.screen.controller
        from mtcb_curate.checks.questions import answerable_problem
        seen["answerable"] = [[p.reason for p in c.problems(pid) if p.check_id == "answerable"]
                              for pid in range(len(c.session))]
        seen["want"] = [[w] if (w := answerable_problem(v.answer, v.passage, v.question)) else []
                        for v in map(c.session.view, range(len(c.session)))]
        from mtcb_curate.evidence.paraphrase import default_paraphraser
        seen["paraphraser"] = default_paraphraser().name

CurateApp.run = lambda self, *a, **k: asyncio.run(drive(self))
from mtcb_curate.cli import main
code = main(["ficha", "--sample", "--workspace", sys.argv[1]])
print(json.dumps({"code": code, **seen}))
"""


def test_the_review_app_shows_its_first_pair_without_the_libraries_of_features_not_used(tmp_path):
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "ws"), str(TESTS)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["code"] == 0 and got["pair"] == 0
    # the answerable check's paraphrase model stays in the analysis's worker process: every
    # pair's reason came from there, the same the rule gives here with wordllama ...
    assert "wordllama" not in got["modules"] and got["paraphraser"] == "wordllama"
    assert got["answerable"] == got["want"] and any(got["want"])
    # ... and nothing of the features not used was loaded
    assert [m for m in NOT_AT_START if m in got["modules"]] == []


def _fresh(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", "import json, sys\n" + code + "\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_stemmer_and_the_chunkers_load_without_nltk_scipy_nor_openai_which_stay_importable():
    mods = _fresh("from mtcb_curate.evidence.words import stem\n"
                  "assert stem('Organizations') == 'organ' and stem('founded') == 'found'\n"
                  "assert stem('internal') == stem('intern') == 'intern'\n"  # snowballstemmer < 3
                  "assert 'nltk' not in sys.modules\n"
                  "from mtcb_curate.preview.chunkers import make_chunker, parse_spec\n"
                  "assert make_chunker(parse_spec('recursive:64')).chunk('One. Two. ' * 40)\n"
                  "assert 'scipy' not in sys.modules and 'openai' not in sys.modules\n"
                  "from scipy.stats import norm\n"
                  "import openai\n"
                  "assert norm.cdf(0) == 0.5 and openai.OpenAI\n")
    assert "nltk" not in mods and "chonkie" in mods and "scipy" in mods and "openai" in mods


@pytest.mark.parametrize("library, pulls", [("chonkie", "openai")])
def test_canary_the_library_still_imports_the_heavy_package_itself(library, pulls):
    """``mtcb_curate.imports`` hides ``pulls`` while ``library`` loads. When this fails, the
    library no longer imports it by itself: drop the hiding for it."""
    assert pulls in _fresh(f"import {library}")


def test_a_hidden_package_is_hidden_only_on_the_thread_that_hides_it():
    finder = _HiddenOnThisThread(frozenset({"scipy"}))
    with pytest.raises(ModuleNotFoundError):
        finder.find_spec("scipy.stats")
    assert finder.find_spec("nltk") is None
    elsewhere = []
    t = threading.Thread(target=lambda: elsewhere.append(finder.find_spec("scipy.stats")))
    t.start()
    t.join()
    assert elsewhere == [None]
