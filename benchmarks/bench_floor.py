"""The memory floor of the app's two processes: what their libraries take before any pair is held.

Run from the project root (the project installed in the current Python, with the ``dense``
extra for wordllama)::

    python benchmarks/bench_floor.py                 # about 10 s
    python benchmarks/bench_floor.py --text-mib 46.5

Each image is a fresh Python process that imports (and, for the paraphrase model, loads) what
one of the app's processes needs and then reports its resident set (``VmRSS``, MiB); nothing is
read, no pair or document is held. The images:

- ``bare``: the interpreter alone;
- ``textual``: Textual's app and widgets (what the trivial app of ``bench_pty.py`` imports);
- ``app, no pyarrow``: the review app's modules (``mtcb_curate.tui.app``), which bring numpy
  and rapidfuzz;
- ``app``: the same plus ``pyarrow.parquet`` and ``pyarrow.compute``, which reading a parquet
  dataset loads into the app's process;
- ``worker, answerable``: the analysis worker's modules, the stemmer and the paraphrase model
  loaded (``evidence.paraphrase.default_paraphraser``: wordllama when installed), as the
  worker's last stage holds them;
- ``worker, fuzzy``: the same stage with the fuzzy fallback instead of the model.

The sums are set against ``bench_pty.py --only memory``'s target, 4x the ficha-scale corpus
text (its UTF-8 bytes in MiB, computed as ``bench_pty.py`` does from ``benchmarks/out/ficha``
when that folder exists, else ``--text-mib``): the floor under which no arrangement of the
same libraries in the same two processes can go.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

_RSS = ("def _rss():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmRSS'):\n"
        "            return int(line.split()[1])\n")

IMAGES: dict[str, str] = {
    "bare": "pass",
    "textual": "import textual.app, textual.widgets",
    "app, no pyarrow": "import mtcb_curate.tui.app",
    "app": "import mtcb_curate.tui.app, pyarrow.parquet, pyarrow.compute",
    "worker, answerable": (
        "import mtcb_curate.app.analysis_worker, mtcb_curate.checks.questions\n"
        "from mtcb_curate.evidence.paraphrase import default_paraphraser\n"
        "import snowballstemmer; snowballstemmer.stemmer('english').stemWord('figures')\n"
        "p = default_paraphraser(); print('model', p.name, file=__import__('sys').stderr)"),
    "worker, fuzzy": (
        "import mtcb_curate.app.analysis_worker, mtcb_curate.checks.questions\n"
        "from mtcb_curate.evidence.paraphrase import FuzzyParaphraser\n"
        "import snowballstemmer; snowballstemmer.stemmer('english').stemWord('figures')\n"
        "p = FuzzyParaphraser()"),
}


def image_mib(code: str) -> float:
    """Resident set (MiB) of a fresh ``sys.executable`` after running ``code``.

    Raises:
        RuntimeError: the child failed (its stderr in the message).
    """
    src = _RSS + code + "\nprint(_rss())\n"
    done = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
    return int(done.stdout.split()[-1]) / 1024


def ficha_text_mib() -> float | None:
    """The ficha-scale corpus text in MiB, as ``bench_pty.py`` counts it, or None when
    ``benchmarks/out/ficha`` is absent."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "ficha")
    if not os.path.isdir(data):
        return None
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_pty import corpus_bytes

    return corpus_bytes(data) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--text-mib", type=float, default=None,
                    help="the text the target is a multiple of (default: the ficha-scale set's corpus)")
    ap.add_argument("--rounds", type=int, default=3, help="fresh processes per image; the median is shown")
    args = ap.parse_args()
    text = args.text_mib if args.text_mib is not None else ficha_text_mib()
    got: dict[str, float] = {}
    for name, code in IMAGES.items():
        values = sorted(image_mib(code) for _ in range(args.rounds))
        got[name] = values[len(values) // 2]
        print(f"  {name:>20}: {got[name]:6.1f} MiB   (rounds: {', '.join(f'{v:.1f}' for v in values)})")
    print()
    for app in ("app", "app, no pyarrow"):
        for worker in ("worker, answerable", "worker, fuzzy"):
            total = got[app] + got[worker]
            line = f"  {app} + {worker}: {total:6.1f} MiB"
            if text:
                line += f"  ({total / text:.2f}x the {text:.1f} MiB of text; 4x = {4 * text:.0f} MiB)"
            print(line)


if __name__ == "__main__":
    main()
