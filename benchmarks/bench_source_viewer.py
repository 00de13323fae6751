"""Benchmark the source viewer on 1 MB documents (a script, not a test).

Run:  python benchmarks/bench_source_viewer.py [--runs 20] [--size 100x30]

For each document shape it reports the median over N runs, inside `App.run_test`, of

* wrap        - wrapping alone (`LineIndex` of the document, uncached) at the viewer's content width;
* wrap@40     - the same at 40 cells (most lines need breaking);
* show        - `viewer.show(text, spans)` (printable scan, split, wrap, scroll to the focus span)
                plus rendering every visible row with `render_line` (the first paint's own work);
* show+paint  - `show` then `await pilot.pause()`: the same, plus Textual compositing the screen
                and writing it to the (headless) driver;
* jump        - `viewer.set_spans([span elsewhere])` (scroll to it) plus rendering the visible rows;
* jump+paint  - `set_spans` then `await pilot.pause()`;
* idle pause  - `await pilot.pause()` with nothing to do: the harness's own latency, included in
                both "+paint" figures.

Targets (2-core machine): show <= 100 ms, jump <= 16 ms (one frame at 60 Hz).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App, ComposeResult  # noqa: E402

from mtcb_curate.tui.widgets.source_viewer import SourceViewer, Span  # noqa: E402

SHOW_TARGET_MS = 100.0
JUMP_TARGET_MS = 16.0

WORDS = (
    "the Company fiscal year net revenue income operations 2023 2024 $1,234 million of and "
    "’s — segment risk factors Item 7 Management’s Discussion Analysis Results "
    "(in thousands) (unaudited) [bold] [/] goodwill impairment"
).split()


def filing_10k(target: int = 1_000_000, seed: int = 1) -> str:
    """~30,000 short lines (tables, headings, short paragraphs), curly quotes and dashes."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < target:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9)))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def long_paragraphs(target: int = 1_000_000, seed: int = 2) -> str:
    """Ten 100 KB lines (e.g. an HTML page flattened to text without newlines)."""
    rng = random.Random(seed)
    lines = []
    for _ in range(10):
        words: list[str] = []
        size = 0
        while size < target // 10:
            word = rng.choice(WORDS)
            words.append(word)
            size += len(word) + 1
        lines.append(" ".join(words))
    return "\n".join(lines)


def cjk_mixed(target: int = 1_000_000, seed: int = 3) -> str:
    """Chinese text with some Latin, ~1 MB in UTF-8 (wide characters take the exact wrap path)."""
    rng = random.Random(seed)
    chars = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 2000))  # CJK ideographs
    lines = []
    size = 0
    while size < target:
        n = rng.randint(20, 400)
        line = "".join(rng.choice(chars) if rng.random() > 0.1 else " ab " for _ in range(n))
        lines.append(line)
        size += len(line.encode()) + 1
    return "\n".join(lines)


class BenchApp(App[None]):
    CSS = "SourceViewer { width: 1fr; height: 1fr; }"

    def __init__(self) -> None:
        super().__init__()
        self.animation_level = "none"

    def compose(self) -> ComposeResult:
        yield SourceViewer()


def ms(seconds: float) -> float:
    return seconds * 1000.0


def line_offsets(text: str, rng: random.Random, count: int) -> list[Span]:
    """`count` spans of 40 characters at random places in `text`."""
    spans = []
    for _ in range(count):
        start = rng.randrange(0, max(1, len(text) - 40))
        spans.append(Span(start, start + 40, "exact"))
    return spans


async def bench_document(
    name: str, text: str, runs: int, size: tuple[int, int]
) -> dict[str, float]:
    app = BenchApp()
    results: dict[str, list[float]] = {
        "wrap": [],
        "wrap@40": [],
        "show": [],
        "show+paint": [],
        "jump": [],
        "jump+paint": [],
        "idle pause": [],
    }
    rng = random.Random(42)
    async with app.run_test(size=size) as pilot:
        viewer = app.query_one(SourceViewer)
        await pilot.pause()

        def render_visible() -> None:
            for y in range(viewer.size.height):
                viewer.render_line(y)

        def timed(fn: Callable[[], None]) -> float:
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start

        # Warm-up (imports, Rich caches, CSS).
        viewer.show(text, line_offsets(text, rng, 1))
        await pilot.pause()

        index = viewer._index  # the document's LineIndex; `_wrap` is its uncached wrap
        width = viewer.wrap_width
        for _ in range(runs):
            results["wrap"].append(timed(lambda: index._wrap(width)))
            results["wrap@40"].append(timed(lambda: index._wrap(40)))

        for _ in range(runs):
            viewer.show("")  # drop the previous document and its caches
            await pilot.pause()
            spans = line_offsets(text, rng, 3)
            results["show"].append(timed(lambda: (viewer.show(text, spans), render_visible())))
            await pilot.pause()

            viewer.show("")
            await pilot.pause()
            start = time.perf_counter()
            viewer.show(text, spans)
            await pilot.pause()
            results["show+paint"].append(time.perf_counter() - start)

        for _ in range(runs):
            spans = line_offsets(text, rng, 3)
            results["jump"].append(timed(lambda: (viewer.set_spans(spans), render_visible())))
            await pilot.pause()

            spans = line_offsets(text, rng, 3)
            start = time.perf_counter()
            viewer.set_spans(spans)
            await pilot.pause()
            results["jump+paint"].append(time.perf_counter() - start)

            start = time.perf_counter()
            await pilot.pause()
            results["idle pause"].append(time.perf_counter() - start)

        rows = viewer.visual_line_count
        width = viewer.wrap_width
    medians = {key: ms(statistics.median(values)) for key, values in results.items()}
    print(
        f"\n{name}: {len(text):,} chars, {text.count(chr(10)) + 1:,} lines -> {rows:,} rows "
        f"at {width} cells; median of {runs} runs (min..max)"
    )
    for key, values in results.items():
        print(
            f"  {key:<11} {medians[key]:7.2f} ms   "
            f"({ms(min(values)):.2f} .. {ms(max(values)):.2f})"
        )
    return medians


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--size", default="100x30", help="terminal size, COLUMNSxROWS")
    args = parser.parse_args()
    columns, rows = (int(part) for part in args.size.lower().split("x"))

    documents = {
        "10-K (short lines)": filing_10k(),
        "long paragraphs (10 x 100 KB lines)": long_paragraphs(),
        "CJK + Latin (1 MB UTF-8)": cjk_mixed(),
    }
    print(f"terminal {columns}x{rows}, Python {sys.version.split()[0]}")
    failed = False
    for name, text in documents.items():
        medians = await bench_document(name, text, args.runs, (columns, rows))
        show_ok = medians["show"] <= SHOW_TARGET_MS
        jump_ok = medians["jump"] <= JUMP_TARGET_MS
        failed |= not (show_ok and jump_ok)
        print(
            f"  targets: show <= {SHOW_TARGET_MS:.0f} ms {'OK' if show_ok else 'MISSED'}, "
            f"jump <= {JUMP_TARGET_MS:.0f} ms {'OK' if jump_ok else 'MISSED'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
