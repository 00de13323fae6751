"""The Textual workarounds seam (``mtcb_curate/tui/workarounds``): nothing outside it touches a
private Textual or Rich name, and one canary per workaround.

A canary fails when the Textual (or Rich) behaviour a workaround exists for changes (then the
workaround may go: measure, and delete it) or when a private name it uses disappears (then it
must be rewritten). Each checks the names it relies on before anything is patched or counted,
so none can pass because a renamed method silently stopped being called.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import gc
import importlib
import inspect
import sys
import textwrap
from pathlib import Path

import pytest
import rich
import textual
from rich.cells import get_character_cell_size
from rich.console import Console
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static

from support import wait_until
from test_frames import INTERVAL, _frames, clock  # noqa: F401  (clock: a fixture)

PACKAGE = Path(__file__).resolve().parents[1] / "mtcb_curate"
SEAM = "tui/workarounds/"


# -- the guard: private names only inside the seam ----------------------------------------------


@functools.cache
def _library_private_names(package) -> frozenset[str]:
    """Every ``_name`` (not dunder) that ``package``'s source defines: functions, classes,
    assignments at any level, ``self._x = ...`` attributes."""
    names: set[str] = set()
    for path in Path(package.__file__).parent.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def _package_files() -> dict[str, ast.Module]:
    return {str(p.relative_to(PACKAGE)): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGE.rglob("*.py"))}


def _names_we_define(trees: dict[str, ast.Module], seam: str) -> set[str]:
    """Names the package itself defines (outside the seam): its own private attributes."""
    out: set[str] = set()
    for rel, tree in trees.items():
        if rel.startswith(seam):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                out.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


def _library_bases(cls: type) -> list[type]:
    return [base for base in cls.__mro__[1:]
            if base.__module__.split(".")[0] in ("textual", "rich")]


@functools.cache
def _class_private_names(cls: type) -> frozenset[str]:
    """The private names of one Textual or Rich class: its class attributes and the
    ``self._x`` attributes its source assigns."""
    names = {n for n in vars(cls) if n.startswith("_") and not n.startswith("__")}
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return frozenset(names)
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            names.add(node.attr)
    return frozenset(names)


def _modules_bound(tree: ast.Module) -> set[str]:
    """Names the module binds to modules other than Textual's or Rich's (``import re``): an
    attribute of one of those is not Textual's."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ("textual", "rich"):
                    out.add((alias.asname or alias.name).split(".")[0])
    return out


def _uses_library(tree: ast.Module) -> bool:
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) and any(
        (getattr(n, "module", None) or a.name).split(".")[0] in ("textual", "rich") for a in n.names)
        for n in ast.walk(tree))


def _mixins(trees: dict[str, ast.Module]) -> dict[type, list[type]]:
    """Our classes with no Textual base that some class of ours mixes into a Textual one ->
    the Textual classes they are mixed into."""
    out: dict[type, list[type]] = {}
    for rel, tree in trees.items():
        if not _uses_library(tree):
            continue
        module = importlib.import_module("mtcb_curate." + rel[:-3].replace("/", ".").removesuffix(".__init__"))
        for value in vars(module).values():
            if not isinstance(value, type) or not _library_bases(value):
                continue
            library = [b for b in value.__mro__ if b.__module__.split(".")[0] in ("textual", "rich")]
            for base in value.__mro__[1:]:
                if base.__module__.startswith("mtcb_curate") and not _library_bases(base):
                    out.setdefault(base, []).extend(library[:1])
    return out


def private_touches(seam: str = SEAM) -> list[str]:
    """Every use of a private Textual or Rich name outside the seam, as ``path:line: what``:

    - an import of ``textual._x``/``rich._x`` (or ``from textual import _x``);
    - in a class with a Textual or Rich base, a method or ``self._x`` attribute whose name one
      of those bases defines (an override or a read of their private state); in a mixin of
      ours (no such base, but mixed into one), one that the classes it is mixed into define;
    - ``obj._x`` or ``getattr(obj, "_x")`` on anything else, where Textual or Rich defines
      ``_x`` and the package does not.
    """
    library = _library_private_names(textual) | _library_private_names(rich)
    trees = _package_files()
    ours = _names_we_define(trees, seam)
    mixins = _mixins(trees)
    found: list[str] = []
    for rel, tree in trees.items():
        if rel.startswith(seam):
            continue
        dotted = "mtcb_curate." + rel[:-3].replace("/", ".").removesuffix(".__init__")
        module = None
        other_modules = _modules_bound(tree)
        uses_library = _uses_library(tree)
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("textual", "rich"):
                if any(p.startswith("_") for p in node.module.split(".")) or \
                        any(a.name.startswith("_") for a in node.names):
                    found.append(f"{where}: import from {node.module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] in ("textual", "rich") and any(p.startswith("_") for p in parts):
                        found.append(f"{where}: import {alias.name}")
            elif isinstance(node, ast.ClassDef) and uses_library:
                if module is None:
                    module = importlib.import_module(dotted)
                cls = getattr(module, node.name, None)
                if not isinstance(cls, type):  # a class made in a function: its bases are unknown here
                    for inner in ast.walk(node):
                        if (isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
                                and inner.value.id == "self" and inner.attr in library and inner.attr not in ours):
                            found.append(f"{rel}:{inner.lineno}: {node.name} uses {inner.attr}")
                    continue
                bases = _library_bases(cls)
                if not bases and cls in mixins:  # mixed into a widget, a screen or the app
                    bases = [b for core in mixins[cls] for b in core.__mro__ if b.__module__.startswith("textual")]
                theirs = set().union(*map(_class_private_names, bases))
                for inner in ast.walk(node):
                    name = None
                    if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner in node.body:
                        name = inner.name
                    elif (isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
                          and inner.value.id == "self"):
                        name = inner.attr
                    if name and name in theirs:
                        found.append(f"{rel}:{inner.lineno}: {node.name} uses {name} of its Textual/Rich base")
            elif isinstance(node, ast.Attribute) and node.attr in library and node.attr not in ours:
                if not (isinstance(node.value, ast.Name) and node.value.id in {"self", *other_modules}):
                    found.append(f"{where}: .{node.attr}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) > 1
                  and isinstance(node.args[1], ast.Constant) and node.args[1].value in library
                  and node.args[1].value not in ours
                  and not (isinstance(node.args[0], ast.Name) and node.args[0].id in other_modules)):
                found.append(f"{where}: {node.func.id}(..., {node.args[1].value!r})")
    return sorted(set(found))


#: Touches outside the seam that another branch deletes (not moved into the seam, to keep the
#: merge simple). Remove an entry once its code is gone; the guard then holds it off for good.
BEING_DELETED: set[str] = set()


@pytest.mark.slow
def test_no_private_textual_or_rich_name_outside_the_workarounds_seam():
    touches = [t for t in private_touches() if _without_line(t) not in BEING_DELETED]
    assert touches == []


def _without_line(touch: str) -> str:
    """``path:line: what`` as ``path: what``."""
    path, _line, what = touch.split(":", 2)
    return f"{path}:{what}"


@pytest.mark.slow
def test_the_guard_finds_what_it_guards_against():
    """The guard is not vacuous: the seam's own files, read as if they were elsewhere, are
    reported (an override of ``Screen._update_timer``, ``rich._wrap``, ``_styles_cache``, a
    read of the app's queue)."""
    touches = "\n".join(t for t in private_touches(seam="no-such-folder/") if t.startswith(SEAM))
    assert "frames.py" in touches and "_update_timer" in touches
    assert "import from rich._wrap" in touches and "import from textual" in touches
    assert "._styles_cache" in touches
    assert "'_message_queue'" in touches or "._message_queue" in touches


def test_textual_is_pinned_below_the_next_major_version():
    """The workarounds are tested against one major version of Textual: the dependency says so."""
    import tomllib

    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    spec = next(d for d in project["project"]["dependencies"] if d.replace(" ", "").startswith("textual>="))
    major = int(textual.__version__.split(".")[0]) if hasattr(textual, "__version__") else None
    if major is None:
        from importlib.metadata import version

        major = int(version("textual").split(".")[0])
    assert f"<{major + 1}" in spec.replace(" ", ""), spec


# -- frames: FrameClock ------------------------------------------------------------------------


def test_frames_canary_the_private_timer_and_screen_names_still_exist():
    from textual import _time

    from mtcb_curate.tui.workarounds.frames import FrameClock, PromptFrames

    for name in ("_run", "_tick", "_start", "_run_timer"):
        assert callable(getattr(Timer, name, None)), name
    class Target:
        pass

    target = Target()
    timer = Timer(target, 1.0, pause=True)
    for name in ("_active", "_reset", "_interval"):
        assert hasattr(timer, name), name
    assert isinstance(inspect.getattr_static(Screen, "_update_timer"), property)
    assert callable(getattr(Screen, "_on_timer_update", None))
    assert callable(_time.get_time) and callable(_time.sleep)
    assert inspect.signature(Timer._tick).parameters.keys() >= {"next_timer", "count"}
    assert issubclass(FrameClock, Timer) and "_update_timer" in vars(PromptFrames)


async def test_frames_canary_textuals_own_timer_holds_a_refresh_for_its_grid(clock):  # noqa: F811
    """Why the review screen has its own clock: with Textual's timer a refresh asked for more
    than an interval after the previous frame still waits (up to two intervals) for the grid.
    Should Textual's timer stop doing so, ``FrameClock`` can go."""
    start = clock[0]
    resumes = [start, start + 0.5 + 0.004, start + 0.5 + 0.004 + INTERVAL + 0.002]
    ticks = await _frames(Timer, clock, resumes)
    assert ticks[1] == round(resumes[1], 6)  # long after the first frame: at once
    assert ticks[2] > round(resumes[2], 6) + 0.001  # an interval after that one: held for the grid


async def test_frames_canary_a_prompt_frames_screen_draws_from_its_frame_clock():
    """The override takes: Textual asks ``_update_timer`` for the screen's timer, and gets ours."""
    from mtcb_curate.tui.workarounds.frames import FrameClock, PromptFrames

    class Prompt(PromptFrames, Screen):
        def compose(self) -> ComposeResult:
            yield Static("x", id="x")

    ticks: list[str] = []
    original = FrameClock._tick

    async def counted(self, *, next_timer: float, count: int) -> None:
        ticks.append(self.name)
        await original(self, next_timer=next_timer, count=count)

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(Prompt())

    FrameClock._tick = counted
    try:
        app = Host()
        async with app.run_test() as pilot:
            await pilot.pause()
            before = len(ticks)
            app.screen.query_one("#x", Static).update("y")
            await wait_until(pilot, lambda: len(ticks) > before, "a frame drawn by the frame clock")
            assert isinstance(app.screen._update_timer, FrameClock)
    finally:
        FrameClock._tick = original


# -- strips: keep_strips_acyclic --------------------------------------------------------------


def _cyclic_garbage_after(divide) -> int:
    """Objects the cyclic collector finds after one strip is divided whole and at a cut,
    then dropped (0: reference counting freed everything)."""
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        strip = Strip([Segment("net revenue "), Segment("of $1,234 million")])
        whole = divide(strip, [strip.cell_length])
        cut = divide(strip, [4, strip.cell_length])
        assert [s.text for s in whole] == [strip.text] and [s.text for s in cut] == ["net ", strip.text[4:]]
        del strip, whole, cut
        return gc.collect()
    finally:
        if was:
            gc.enable()


def test_strips_canary_textuals_divide_still_leaves_a_cycle_and_ours_none():
    """The compositor divides every painted row; Textual's ``Strip.divide`` keeps ``[self]`` in
    the strip's own cache (``_divide_cache``) when nothing is cut, a cycle only a full
    collection frees. Should it stop doing so, ``keep_strips_acyclic`` can go."""
    from mtcb_curate.tui.workarounds.strips import keep_strips_acyclic

    assert hasattr(Strip([]), "_divide_cache")
    assert keep_strips_acyclic()
    assert keep_strips_acyclic()  # idempotent: patched once
    textual_divide = Strip.divide.textual_divide
    assert not getattr(textual_divide, "keeps_acyclic", False)
    assert _cyclic_garbage_after(textual_divide) > 0  # the cycle this removes
    assert _cyclic_garbage_after(Strip.divide) == 0
    strip = Strip([Segment("abc", None), Segment("defgh", None)])
    for cuts in ([8], [3, 8], [2, 5, 8], [8, 9], [1], []):
        assert [(s.text, s.cell_length) for s in Strip.divide(strip, cuts)] == \
            [(s.text, s.cell_length) for s in textual_divide(strip, cuts)], cuts


# -- styles: release_styles_caches ------------------------------------------------------------


def test_styles_canary_textuals_get_inner_outer_holds_its_instance_and_ours_none():
    """Textual's ``StylesCache.get_inner_outer`` is an ``lru_cache`` over the instance method:
    its key holds the ``StylesCache`` (with the widget's painted lines) after the widget is
    gone. Should its key stop holding the instance, ``release_styles_caches`` can go."""
    from textual._styles_cache import StylesCache
    from textual.color import Color

    from mtcb_curate.tui.workarounds.styles import release_styles_caches

    assert release_styles_caches()
    assert release_styles_caches()  # idempotent: patched once
    ours = StylesCache.get_inner_outer
    textual_method = ours.textual_method
    assert hasattr(textual_method, "cache_clear") and not getattr(textual_method, "colours_only", False)
    base, background = Color(18, 18, 18), Color(30, 30, 30, 0.5)
    textual_method.cache_clear()
    held = StylesCache()
    before = sys.getrefcount(held)
    assert textual_method(held, base, background) == ours(StylesCache(), base, background)  # the same styles
    assert sys.getrefcount(held) > before  # Textual's cache key holds the instance
    textual_method.cache_clear()
    assert sys.getrefcount(held) == before
    ours(held, base, background)
    assert sys.getrefcount(held) == before  # ours holds nothing of it


async def test_styles_closed_dialogs_leave_no_styles_cache_behind():
    """Open and close a dialog twenty times: with ``release_styles_caches`` the widgets'
    ``StylesCache`` objects alive afterwards are as many as before (Textual's method kept one per
    widget ever painted, with its painted lines, up to 1,024)."""
    from textual._styles_cache import StylesCache

    from mtcb_curate.tui.workarounds.styles import release_styles_caches

    class Dialog(ModalScreen):
        def compose(self) -> ComposeResult:
            with Vertical():
                yield Static("a proposal", id="one")
                yield Static("its reasons", id="two")

    def alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is StylesCache)

    assert release_styles_caches()
    app = App()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        for _ in range(2):
            await app.push_screen(Dialog())
            await pilot.pause()
            app.pop_screen()
            await pilot.pause()
        before = alive()
        for _ in range(20):
            await app.push_screen(Dialog())
            await pilot.pause()
            app.pop_screen()
            await pilot.pause()
        assert alive() <= before


# -- repaint: forget_painted_lines -------------------------------------------------------------


def count_arrangements(compositor) -> list:
    """The list that grows by one each time ``compositor`` rebuilds its whole widget map
    (``Compositor._arrange_root``, checked to exist before it is wrapped)."""
    assert callable(getattr(type(compositor), "_arrange_root", None)), "Textual renamed _arrange_root"
    arranged: list = []
    arrange = compositor._arrange_root
    compositor._arrange_root = lambda *a, **k: arranged.append(1) or arrange(*a, **k)
    return arranged


async def assert_counts_arrangements(pilot, screen, arranged: list) -> None:
    """The positive control of a test that asserts ``arranged`` stayed empty: a layout pass of
    ``screen`` is counted (so the wrapped method is still the one Textual calls)."""
    before = len(arranged)
    screen.refresh(layout=True)
    await pilot.pause()
    assert len(arranged) > before, "Textual no longer arranges through _arrange_root: the count proves nothing"


class _Painted(Widget):
    """One row: ``text``."""

    DEFAULT_CSS = "_Painted { height: 1; }"

    def __init__(self, text: str, **kw) -> None:
        super().__init__(**kw)
        self.text = text

    def render_line(self, y: int) -> Strip:
        return Strip([Segment(self.text.ljust(self.size.width))])


async def test_repaint_canary_textual_rebuilds_its_map_for_a_hidden_widgets_refresh():
    """Why ``SkipsHiddenRepaint`` exists: a refresh of a widget under ``display: none`` makes
    Textual's compositor take it for a new widget and drop its whole widget map, rebuilt the
    next time anything asks where a widget not on screen is (the review screen's hidden queue
    asks on every key). Should Textual stop doing so, the mixin (and ``forget_painted_lines``)
    can go. The count is checked to move for a real layout change first."""
    from mtcb_curate.tui.widgets.scrolling import SkipsHiddenRepaint

    class Skipping(SkipsHiddenRepaint, _Painted):
        pass

    class Host(App):
        def compose(self) -> ComposeResult:
            yield _Painted("shown", id="shown")
            with Vertical(id="pane"):
                yield _Painted("hidden", id="hidden")
                yield Skipping("skipping", id="skipping")

    app = Host()
    async with app.run_test(size=(30, 5)) as pilot:
        app.query_one("#pane").display = False
        await pilot.pause()
        hidden, skipping = app.query_one("#hidden"), app.query_one("#skipping")
        hidden.region, skipping.region  # noqa: B018  (the map as it stands)
        arranged = count_arrangements(app.screen._compositor)
        app.query_one("#shown").refresh(layout=True)
        await pilot.pause()
        hidden.region  # noqa: B018
        assert arranged, "the counter counts nothing: the canary could not fail"
        arranged.clear()
        skipping.refresh()
        await pilot.pause()
        skipping.region  # noqa: B018
        assert arranged == []  # the mixin's repaint while hidden: no rebuild
        hidden.refresh()
        await pilot.pause()
        hidden.region  # noqa: B018
        assert arranged, "Textual no longer rebuilds its map for a hidden widget: SkipsHiddenRepaint can go"


async def test_repaint_canary_a_skipped_repaint_is_painted_when_shown_again():
    """Textual keeps a widget's painted lines (``Widget._styles_cache``) across ``display: none``:
    a widget whose repaint was skipped while hidden shows its old lines when shown again unless
    ``forget_painted_lines`` empties that cache. Should Textual repaint a widget shown again by
    itself, the private call can go."""
    from mtcb_curate.tui.widgets.scrolling import SkipsHiddenRepaint

    class Forgetting(SkipsHiddenRepaint, _Painted):
        pass

    class NotForgetting(_Painted):
        def refresh(self, *regions, repaint=True, layout=False, recompose=False):
            if repaint and not layout and self.is_mounted and not self.display_path_shown():
                return self  # skipped, nothing forgotten
            return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

        def display_path_shown(self) -> bool:
            return self.parent.display

    async def shown_again(widget_class) -> str:
        class Host(App):
            def compose(self) -> ComposeResult:
                with Vertical(id="pane"):
                    yield widget_class("before", id="w")

        app = Host()
        async with app.run_test(size=(30, 3)) as pilot:
            await pilot.pause()
            pane, widget = app.query_one("#pane"), app.query_one("#w")
            pane.display = False
            await pilot.pause()
            widget.text = "after"
            widget.refresh()
            await pilot.pause()
            pane.display = True
            await pilot.pause()
            return widget.render_lines(widget.size.region)[0].text.strip()

    assert await shown_again(NotForgetting) == "before"  # Textual's cache: the old line
    assert await shown_again(Forgetting) == "after"


# -- text: divide_line and the cell table ------------------------------------------------------

TEXTS = [
    "The Company's net revenue grew 12% to $1,234 million in fiscal 2023, driven by services.",
    "word " * 40,
    "a" * 95 + " tail",
    "文字の幅は二つ 文字の幅は二つ 文字の幅は二つ 文字の幅は二つ mixed with latin words here",
    "tabs\tinside\ta line\tand more text to wrap across rows",
    "   leading spaces and   double  spaces   ",
    "",
]


@pytest.mark.parametrize("width", [2, 7, 20, 33, 80])
def test_text_canary_divide_line_still_breaks_as_text_wrap(width):
    """The QA panel finds row bounds with Rich's private ``divide_line`` and promises rows equal
    to ``Text.wrap``'s: should Rich change one and not the other, this fails."""
    from mtcb_curate.tui.workarounds.text import divide_line

    console = Console(width=200, legacy_windows=False)
    for line in TEXTS:
        text = Text(line)
        text.expand_tabs(8)
        plain = text.plain
        wrapped = [row.plain.rstrip() for row in text.wrap(console, width, overflow="fold")]
        edges = [0, *divide_line(plain, width, fold=True), len(plain)]
        ours = [plain[a:b].rstrip() for a, b in zip(edges, edges[1:])]
        assert ours == wrapped, (line, width)


def test_text_canary_the_cell_table_agrees_with_riches_public_cell_sizes():
    from mtcb_curate.tui.workarounds.text import cell_width_ranges

    ranges = cell_width_ranges()
    assert ranges, "Rich's private cell table is gone: the source viewer falls back to a slower path"
    assert all(width in (0, 2) for _a, _b, width in ranges)
    for start, end, width in ranges[:: max(1, len(ranges) // 50)]:
        for code in {start, (start + end) // 2, end}:
            if code >= 0x20 and not 0x7F <= code < 0xA0:
                assert get_character_cell_size(chr(code)) == width, hex(code)
    assert get_character_cell_size("a") == 1 and not any(a <= ord("a") <= b for a, b, _w in ranges)


# -- keys: keys_waiting and RunsOwnBindings ----------------------------------------------------


def _burst(app, text: str) -> None:
    """Queue ``text``'s keys on ``app`` at once (``|`` is enter, ``<`` backspace)."""
    for ch in text:
        key, char = {"|": ("enter", "\r"), "<": ("backspace", "\x7f")}.get(ch, (ch, ch))
        app.post_message(events.Key(key, char))


async def _handled(app, pilot) -> None:
    """Wait until every key queued on ``app`` so far has been handled, by the app and then by the
    widget it went to, and what they posted in turn: a marker queued behind the keys on the app
    queues another behind them on the focused widget (an event, not a fixed pause that a loaded
    machine can outlast)."""
    from support import WAIT_S

    done = asyncio.Event()
    app.call_later(lambda: (app.focused or app.screen).call_later(done.set))
    await asyncio.wait_for(done.wait(), WAIT_S)
    await pilot.pause()


def _input_app(input_class: type[Input]):
    class Typing(App):
        submitted: list[str] = []

        def compose(self) -> ComposeResult:
            yield input_class(id="field")

        def on_mount(self) -> None:
            self.set_focus(self.query_one("#field"))

        def on_input_submitted(self, message: Input.Submitted) -> None:
            self.submitted.append(message.value)

    return Typing()


async def _typed(input_class: type[Input], keys: str) -> tuple[str, list[str]]:
    app = _input_app(input_class)
    app.submitted = []
    async with app.run_test() as pilot:
        await pilot.pause()
        _burst(app, keys)
        await _handled(app, pilot)
        return app.query_one("#field", Input).value, app.submitted


async def test_keys_canary_textual_still_runs_an_inputs_bindings_after_the_keys_typed_behind():
    """Why ``RunsOwnBindings`` and the dialogs' priority enter exist: typed at once into Textual's
    ``Input``, enter submits the keys typed after it and backspace deletes a later key. Should
    Textual run a focused widget's bindings in order, the mixin can go."""
    assert await _typed(Input, "hi|x") == ("hix", ["hix"])
    assert (await _typed(Input, "a<b"))[0] == "a"


async def test_keys_canary_a_typed_input_runs_its_own_keys_in_order():
    from mtcb_curate.tui.keys import TypedInput

    assert (await _typed(TypedInput, "a<b"))[0] == "b"
    assert (await _typed(TypedInput, "abc<<d"))[0] == "ad"


async def test_keys_canary_push_screen_still_holds_the_apps_queue_until_the_dialog_is_mounted():
    """The dialogs rely on it: the keys typed right after the key that opens a dialog go to the
    dialog's input, even when its mounting takes a while."""

    class Dialog(ModalScreen):
        def compose(self) -> ComposeResult:
            yield Input(id="field")

        async def on_mount(self) -> None:
            await asyncio.sleep(0.05)
            self.set_focus(self.query_one("#field"))

    class Below(Screen):
        BINDINGS = [Binding("n", "open", "open", priority=True)]

        def compose(self) -> ComposeResult:
            yield Static("below")

        def action_open(self) -> None:
            self.app.push_screen(Dialog())

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(Below())

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        _burst(app, "nabc")
        await _handled(app, pilot)
        assert app.screen.query_one("#field", Input).value == "abc"


async def test_keys_canary_keys_waiting_sees_keys_queued_behind_the_one_being_handled():
    from mtcb_curate.tui.workarounds.keys import keys_waiting

    assert hasattr(App(), "_message_queue") and hasattr(App(), "_pending_message")
    seen: list[bool] = []

    class Host(App):
        BINDINGS = [Binding("w", "look", "look")]

        def action_look(self) -> None:
            seen.append(keys_waiting(self))

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        _burst(app, "wz")  # z waits while w is handled
        await pilot.pause()
        _burst(app, "w")  # nothing behind this one
        await pilot.pause()
        assert not keys_waiting(app)
    assert seen == [True, False]


async def test_keys_canary_widget_focus_still_waits_in_the_apps_queue_where_focus_pending_looks():
    """Why the app keeps the keys after one that asked for the focus (``tui.keys.keys_in_order``):
    ``Widget.focus`` moves the focus later, through a callback queued on the app behind the keys
    already read. Should Textual focus at once, ``focus_pending`` can go."""
    from mtcb_curate.tui.workarounds.keys import focus_pending

    seen: list[tuple[bool, object]] = []

    class Host(App):
        AUTO_FOCUS = None
        BINDINGS = [Binding("f", "look", "look", priority=True)]

        def compose(self) -> ComposeResult:
            yield Input(id="field")

        def action_look(self) -> None:
            assert not focus_pending(self)
            self.query_one("#field").focus()
            seen.append((focus_pending(self), self.focused))

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        _burst(app, "fab")
        await pilot.pause(0.1)
        assert seen == [(True, None)]
        assert not focus_pending(app) and app.focused is app.query_one("#field")
        assert app.query_one("#field", Input).value == ""  # Textual: a and b were read before it had focus


async def test_keys_canary_idle_waits_for_a_submitted_input_and_a_dismissed_dialogs_callback():
    """``idle`` returns once what a key set going is done, hop by hop: an input's enter bubbling
    back up to the app, its binding's ``Submitted`` bubbling to the dialog, the dialog's
    dismissal and the result callback run on the screen below (which opens the next dialog)."""
    from mtcb_curate.tui.workarounds.keys import idle

    results: list[str] = []

    class Dialog(ModalScreen[str]):
        def compose(self) -> ComposeResult:
            yield Input(id="field")

        def on_mount(self) -> None:
            self.set_focus(self.query_one("#field"))

        def on_input_submitted(self, message: Input.Submitted) -> None:
            self.dismiss(message.value)

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(Dialog(), self.answered)

        def answered(self, value: str) -> None:
            results.append(value)
            if len(results) == 1:
                self.push_screen(Dialog(), self.answered)

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        field = app.screen.query_one("#field", Input)
        field.value = "first"
        app.post_message(events.Key("enter", "\r"))
        await idle(app)
        assert results == ["first"]
        second = app.screen
        assert isinstance(second, Dialog) and second.focused is second.query_one("#field")


# -- nodes: is_closing -------------------------------------------------------------------------


async def test_nodes_canary_is_closing_turns_true_while_a_widget_is_removed():
    from mtcb_curate.tui.workarounds.nodes import is_closing

    seen: list[tuple[bool, bool]] = []

    class Watched(Static):
        async def on_unmount(self) -> None:
            seen.append((is_closing(self), self.is_attached))

    class Host(App):
        def compose(self) -> ComposeResult:
            yield Watched("x", id="w")

    app = Host()
    async with app.run_test() as pilot:
        widget = app.query_one("#w")
        assert not is_closing(widget)
        await widget.remove()
        await pilot.pause()
    assert seen and seen[0][0] is True
