"""``mtcb-curate generate``: new pairs from the fake chat server join the workspace's queue."""

from __future__ import annotations

import json
import os

from conftest import fake_secret
from mtcb_curate.dataset.model import Status
from support import opened, run_cli, write_source

KEY = fake_secret("llm-key")


def test_generate_adds_verbatim_candidates_as_undecided_pairs(tmp_path, fake_llm, cli):
    write_source(tmp_path / "d")
    fake_llm.script = [
        {"question": "How much revenue did Alpha report?", "answer": "$10 million",
         "supporting_passage": "Revenue was $10 million in 2023."},  # not in the window: retried
        {"question": "How much revenue did Alpha report for 2022?", "answer": "$10 million",
         "supporting_passage": "Revenue was $10 million in 2022."},
    ]
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_llm.base_url}
    proc = cli("generate", "ficha", "--source", tmp_path / "d", "--workspace", tmp_path / "ws",
                   "--doc", "AAA", "--n", "1", "--model", "fake-model", "--json", tmp_path / "g.json", "--mode", "quote",
                   env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 of 1 pairs generated for AAA" in proc.stdout and "#3" in proc.stdout
    out = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert out["calls"] == 2 and out["candidates"][0]["pair_id"] == 3
    # The retry told the model what was wrong.
    assert "verbatim" in json.dumps(fake_llm.requests[1]["messages"][-1])
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    assert len(s) == 4 and s.status(3) is Status.UNDECIDED
    assert s.view(3).passage == "Revenue was $10 million in 2022." and s.pairs[3].origin == "generate"
    s.workspace.close()


def test_generate_with_an_unreachable_server_is_one_clear_line(tmp_path):
    # A real process: no traceback and no key in what a shell sees.
    write_source(tmp_path / "d")
    env = dict(os.environ, OPENAI_API_KEY=KEY, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    proc = run_cli("generate", "ficha", "--source", tmp_path / "d", "--doc", "AAA", "--model", "m", env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("mtcb-curate: error: ")
    assert KEY not in proc.stderr


def test_generate_for_an_unknown_document_is_exit_2(tmp_path, cli):
    write_source(tmp_path / "d")
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    proc = cli("generate", "ficha", "--source", tmp_path / "d", "--doc", "ZZZ", "--model", "m", env=env)
    assert proc.returncode == 2 and "no document 'ZZZ'" in proc.stderr


def test_generate_doc_runs_at_concurrency_and_adds_pairs_in_window_order(tmp_path, fake_llm, cli):
    import re
    import time

    from llmfake import InFlight

    text = "".join(f"Line {i}: Zeta Corp reported segment figure {i} of {i * 7} dollars.\n" for i in range(1400))
    write_source(tmp_path / "d", [{"ticker": "ZZZ", "company": "Zeta", "text": text}],
                 [{"question": "Where is Zeta based?", "answer": "x", "supporting_passage": "Line 0: Zeta Corp",
                   "ticker": "ZZZ", "company": "Zeta", "chunk_index": 0}])
    in_flight = InFlight(together=2)

    def reply(body):
        user = body["messages"][1]["content"]
        chunk = int(re.search(r"\(chunk (\d+)\)", user).group(1))
        window = user.split("<<<DOCUMENT WINDOW\n", 1)[1]
        line = next(ln for ln in window.splitlines() if ln.startswith("Line "))
        with in_flight:
            time.sleep(0.1 * (4 - chunk))  # earlier windows answer last
        return {"question": f"What figure does {line.split(':')[0]} report?", "answer": "A figure.",
                "supporting_passage": line}

    fake_llm.default = reply
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\nconcurrency = 4\n", encoding="utf-8")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_llm.base_url}
    proc = cli("generate", "ficha", "--source", tmp_path / "d", "--workspace", tmp_path / "ws", "--doc", "ZZZ",
               "--n", "3", "--model", "fake-model", "--config", cfg, "--mode", "quote", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert in_flight.most > 1 and "4 at once" in proc.stderr
    s = opened(tmp_path / "d", tmp_path / "ws", read_only=True)
    assert [s.view(i).pair.chunk_index for i in range(1, len(s))] == [1, 2, 3]  # window order, not reply order
    s.workspace.close()
