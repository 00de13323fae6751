"""Every headless command on bad input: no traceback, no warning, the documented exit code.

Run from the project root, under Python's development mode (warnings shown, ResourceWarning
on unclosed files and sockets, asyncio debug)::

    python -X dev benchmarks/bad_input.py            # a table; exit 1 when any case fails
    python -X dev benchmarks/bad_input.py --json     # the same as JSON

Method. One process, fresh user folders (``XDG_*`` and ``HF_HOME`` in a temporary folder,
``HF_HUB_OFFLINE=1``). Each case calls ``mtcb_curate.cli.main(argv)`` with standard output
and standard error captured, after writing its inputs (a missing source, a file that is not
JSON, a questions file without its passage column, an output folder that does not exist, a
mistyped option, a bad value), and checks: the exit code is the documented one (2 bad input),
standard error holds no ``Traceback`` and no Python warning, and exactly one line starts with
``mtcb-curate: error:`` or is argparse's ``error:`` line. Warnings raised and collected at the
end (``gc.collect()``, unraisable exceptions) count against the whole run.

``tests/test_bad_input.py`` runs this script once in a subprocess under ``-X dev``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

COMMANDS = ("verify", "dedup", "check", "generate", "publish", "export", "repair", "preview", "stats", "team",
            "merge")


def _inputs(root: Path) -> dict[str, Path]:
    good = root / "good"
    good.mkdir()
    (good / "corpus.jsonl").write_text(json.dumps({"ticker": "AAA", "text": "Alpha makes anvils."}) + "\n",
                                       encoding="utf-8")
    (good / "questions.jsonl").write_text(json.dumps({"question": "What does Alpha make?", "answer": "anvils",
                                                      "supporting_passage": "Alpha makes anvils.",
                                                      "ticker": "AAA"}) + "\n", encoding="utf-8")
    not_json = root / "not-json"
    not_json.mkdir()
    (not_json / "corpus.jsonl").write_text((good / "corpus.jsonl").read_text(), encoding="utf-8")
    (not_json / "questions.jsonl").write_text('{"question": "q", "answer": \n', encoding="utf-8")
    no_passage = root / "no-passage"
    no_passage.mkdir()
    (no_passage / "corpus.jsonl").write_text((good / "corpus.jsonl").read_text(), encoding="utf-8")
    (no_passage / "questions.jsonl").write_text(json.dumps({"question": "q", "answer": "a", "ticker": "AAA"}) + "\n",
                                                encoding="utf-8")
    from mtcb_curate.app.sources import Options, open_session

    ws = root / "ws-good"  # a real workspace, for merge's inputs
    open_session(Options("ficha", source=[str(good)], workspace=ws)).workspace.close()
    return {"good": good, "not_json": not_json, "no_passage": no_passage, "missing": root / "missing",
            "no_folder": root / "no-such-folder" / "out.json", "workspace": ws}


def cases(p: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(label, argv) of every case: the shared bad inputs for every command, then each
    command's own."""
    out: list[tuple[str, list[str]]] = []
    for cmd in COMMANDS:
        extra = {"generate": ["--doc", "AAA"], "repair": ["--chunk-index"],
                 "merge": ["--workspace", str(p["good"].parent / "merged")],
                 "export": ["--out", str(p["good"].parent / "x.jsonl")]}.get(cmd, [])
        inputs = [str(p["workspace"])] if cmd == "merge" else []  # merge's WORKSPACE... before --source's
        out.append((f"{cmd}: missing source", [cmd, "ficha", *inputs, *extra, "--source", str(p["missing"])]))
        out.append((f"{cmd}: not JSON", [cmd, "ficha", *inputs, *extra, "--source", str(p["not_json"])]))
        out.append((f"{cmd}: no passage column", [cmd, "ficha", *inputs, *extra, "--source", str(p["no_passage"])]))
        out.append((f"{cmd}: mistyped option", [cmd, "ficha", *inputs, "--smaple", *extra]))
    for cmd in ("verify", "dedup", "check", "stats", "repair", "preview", "generate"):
        extra = {"repair": ["--chunk-index"], "generate": ["--doc", "AAA"]}.get(cmd, [])
        out.append((f"{cmd}: --json in a missing folder",
                    [cmd, "ficha", "--source", str(p["good"]), "--json", str(p["no_folder"]), *extra]))
    good = ["ficha", "--source", str(p["good"])]
    out += [
        ("dedup: threshold out of range", ["dedup", *good, "--threshold", "500"]),
        ("check: --judge-keep out of range", ["check", *good, "--judge-keep", "9"]),
        ("generate: neither --doc nor --all", ["generate", *good]),
        ("generate: unknown document", ["generate", *good, "--doc", "ZZZ"]),
        ("generate: --n 0", ["generate", *good, "--doc", "AAA", "--n", "0"]),
        ("publish: --force without --reason", ["publish", *good, "--force"]),
        ("publish: bad licence", ["publish", *good, "--dry-run", str(p["good"].parent / "pub"), "--license", "no pe"]),
        ("publish: --dry-run into a file", ["publish", *good, "--dry-run", str(p["good"] / "corpus.jsonl")]),
        ("export: beir into a file", ["export", *good, "--format", "beir", "--out", str(p["good"] / "corpus.jsonl")]),
        ("export: beir with nothing accepted", ["export", *good, "--format", "beir",
                                                "--out", str(p["good"].parent / "beir")]),
        ("repair: nothing to repair", ["repair", *good]),
        ("preview: unknown chunker", ["preview", *good, "--chunker", "nonsense:12"]),
        ("preview: bad k", ["preview", *good, "--k", "0,x"]),
        ("stats: --llm-tags without a workspace", ["stats", *good, "--llm-tags"]),
        ("team: --resolve a bad status", ["team", *good, "--workspace", str(p["good"].parent / "ws"),
                                         "--resolve", "0", "maybe"]),
        ("team: no workspace to read", ["team", *good, "--workspace", str(p["good"].parent / "none")]),
        ("merge: without --workspace", ["merge", "ficha", str(p["good"]), "--source", str(p["good"])]),
        ("merge: an input that is not a workspace", ["merge", "ficha", str(p["good"]), "--workspace",
                                                     str(p["good"].parent / "merged"), "--source", str(p["good"])]),
        ("mistyped command", ["verfy", *good]),
    ]
    return out


def run_case(argv: list[str]) -> dict:
    from mtcb_curate.cli import main

    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # noqa: BLE001 - that is what this script looks for
            import traceback

            code = "raised"
            err.write("Traceback (most recent call last):\n" + "".join(traceback.format_exception(exc)))
    text = err.getvalue()
    errors = [ln for ln in text.splitlines() if ln.startswith("mtcb-curate: error:") or ": error: " in ln]
    problems = []
    if code != 2:
        problems.append(f"exit {code}, expected 2")
    if "Traceback" in text:
        problems.append("a traceback")
    if len(errors) != 1:
        problems.append(f"{len(errors)} error lines")
    if caught:
        problems.append("warnings: " + "; ".join(f"{w.category.__name__}: {w.message}" for w in caught)[:300])
    return {"code": code, "error": errors[0] if errors else text.strip().splitlines()[-1:] or "",
            "problems": problems}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="mtcb-bad-input-"))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = str(root / var.lower())
    os.environ.update(HF_HOME=str(root / "hf"), HF_HUB_OFFLINE="1", MTCB_CURATE_CONFIG=str(root / "none.toml"))
    os.environ.pop("MTCB_CURATE_DATABASE_URL", None)
    os.environ.pop("OPENAI_API_KEY", None)
    unraisable: list[str] = []
    sys.unraisablehook = lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}")
    results = []
    for label, case_argv in cases(_inputs(root)):
        results.append({"case": label, "argv": case_argv, **run_case(case_argv)})
    with warnings.catch_warnings(record=True) as late:
        warnings.simplefilter("always")
        gc.collect()
    failed = [r for r in results if r["problems"]]
    if args.json:
        print(json.dumps({"results": results, "late_warnings": [str(w.message) for w in late],
                          "unraisable": unraisable}, indent=1))
    else:
        for r in results:
            mark = "FAIL" if r["problems"] else "ok  "
            print(f"{mark}  {r['case']:<42} exit {r['code']}  {r['error'][:90] if isinstance(r['error'], str) else ''}"
                  + (f"   <- {'; '.join(r['problems'])}" if r["problems"] else ""))
        print(f"\n{len(results) - len(failed)} of {len(results)} cases as documented; late warnings: {len(late)}; "
              f"unraisable exceptions: {len(unraisable)}")
    return 1 if failed or late or unraisable else 0


if __name__ == "__main__":
    sys.exit(main())
