"""The order of layers, read from the source with ``ast`` (imports at module level and inside
functions alike):

    utilities (config, errors, plaintext, resources, files, collector, arrays, imports, the package root)
      <- dataset <- evidence <- verify <- neardup <- store <- preview <- stats <- hub <- checks <- llm
                                                                           (the domain)
      <- app                                                               (the application layer)
      <- cli, tui                                                          (the front ends)

A part may import the utilities, itself, and the parts before it, never one after it: the order
is a line, so the package graph has no cycle. The front ends are siblings: ``tui`` never imports
``cli``, and ``cli`` reaches ``tui`` only from the review launcher (``cli/review.py``), inside a
function, so headless commands never load Textual. Only ``tui`` imports Textual. Only the front
ends print. Nothing reads ``../shared`` (the developers' notes and data) at run time. The front
ends change a pair only through the application layer: no module of ``tui`` or ``cli`` calls (or
hands out as a callback) a writing method of ``ReviewSession`` or of a store.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mtcb_curate"

#: Cross-cutting modules at the package's top level (and the package root, ``__version__``).
UTILITIES = ("", "config", "errors", "plaintext", "resources", "files", "collector", "arrays", "imports")
#: The domain packages, bottom-up: each may import the utilities and the packages before it.
DOMAIN = ("dataset", "evidence", "verify", "neardup", "store", "preview", "stats", "hub", "checks", "llm")
APPLICATION = ("app",)
FRONT_ENDS = ("cli", "tui")
#: ``python -m mtcb_curate``: calls the CLI; ``python -m mtcb_curate.worker``: the review app's
#: analysis worker process (its stdin and stdout are pipes to the app, never a terminal).
ENTRY = ("__main__", "worker")

RANK = {part: 0 for part in UTILITIES}
RANK.update({part: 1 + i for i, part in enumerate(DOMAIN)})
RANK.update({part: 1 + len(DOMAIN) for part in APPLICATION})
RANK.update({part: 2 + len(DOMAIN) for part in FRONT_ENDS})
RANK.update({part: 3 + len(DOMAIN) for part in ENTRY})

#: Upward edges that exist today (importing part, imported part) -> where and why. Allowed until
#: removed, and only these: any other upward edge fails. Delete an entry once its import is gone
#: (``test_known_upward_edges_are_still_there`` says when).
#: (At the folder move checks/checklist.py imported app.clusters.session_items; the checklist's
#: split into check objects removed that edge.)
#: (verify/shrink.py imported checks' content_words; they moved down to verify/words.py.)
KNOWN_UPWARD: dict[tuple[str, str], str] = {}

#: The one place a front end imports the other: the review launcher, lazily.
REVIEW_LAUNCHER = "cli/review.py"


@dataclass(frozen=True)
class Edge:
    """One import of a ``mtcb_curate`` module: from ``path`` (relative to the package) at
    ``line``; ``lazy`` when inside a function body."""

    path: str
    line: int
    source: str  # the importing part (see ``part_of``)
    target: str  # the imported part
    module: str  # the imported module, dotted
    lazy: bool

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.source} -> {self.target}: {self.module})"


def part_of(rel: str) -> str:
    """The layer part of a path relative to the package: the package folder (``checks``), or
    the top-level module's name (``config``), or ``""`` for ``__init__.py``."""
    first = rel.split("/")[0]
    if first.endswith(".py"):
        first = first[:-3]
        return "" if first == "__init__" else first
    return first


def module_part(dotted: str) -> str | None:
    """The part of a dotted module name under ``mtcb_curate``, or None outside the package."""
    names = dotted.split(".")
    if names[0] != "mtcb_curate":
        return None
    return names[1] if len(names) > 1 else ""


def _module_of(rel: str) -> list[str]:
    names = ["mtcb_curate", *rel[:-3].split("/")]
    return names[:-1] if names[-1] == "__init__" else names


def imports_of(rel: str, source: str) -> list[tuple[str, int, bool]]:
    """Every imported module name in ``source`` (dotted, relative imports resolved; for
    ``from X import a`` both ``X`` and ``X.a``, as ``a`` may be a submodule), with its line and
    whether it sits inside a function."""
    tree = ast.parse(source)
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, lazy) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    here = _module_of(rel)
                    if not rel.endswith("__init__.py"):
                        here = here[:-1]
                    base = here[: len(here) - (child.level - 1)]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                found.append((module, child.lineno, lazy))
                found.extend((f"{module}.{a.name}", child.lineno, lazy) for a in child.names)
            visit(child, inner)

    visit(tree, False)
    return found


def package_sources() -> dict[str, str]:
    """Every module of the package: path relative to it (``checks/checklist.py``) -> source."""
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def edges_of(sources: dict[str, str]) -> list[Edge]:
    """The imports between parts (an import within one part is not an edge)."""
    edges: dict[tuple[str, int, str], Edge] = {}
    for rel, source in sources.items():
        here = part_of(rel)
        for module, line, lazy in imports_of(rel, source):
            target = module_part(module)
            if target is None:
                continue
            if target not in RANK and not (PACKAGE / target).is_dir() and not (PACKAGE / f"{target}.py").is_file():
                target = ""  # a name of the package root: ``from mtcb_curate import __version__``
            if target == here:
                continue
            edges.setdefault((rel, line, target), Edge(rel, line, here, target, module, lazy))
    return list(edges.values())


def layer_violations(sources: dict[str, str]) -> list[str]:
    """Every import that breaks the order, one line each (empty when the tree is layered)."""
    bad = []
    for e in edges_of(sources):
        if e.source not in RANK or e.target not in RANK:
            bad.append(f"{e}: a part this test does not know; add it to the order above")
            continue
        if e.source == "tui" and e.target == "cli":
            bad.append(f"{e}: the TUI never imports the CLI")
        elif e.source == "cli" and e.target == "tui":
            if e.path != REVIEW_LAUNCHER or not e.lazy:
                bad.append(f"{e}: the CLI reaches the TUI only from {REVIEW_LAUNCHER}, inside a function")
        elif RANK[e.target] > RANK[e.source] and (e.source, e.target) not in KNOWN_UPWARD:
            bad.append(f"{e}: an upward import")
        elif RANK[e.target] == RANK[e.source] and RANK[e.source] != 0:
            bad.append(f"{e}: parts of one layer do not import each other")
    return bad


# -- the tree as it is --------------------------------------------------------------------


def test_every_part_of_the_package_has_a_place_in_the_order():
    parts = {part_of(rel) for rel in package_sources()}
    assert parts - set(RANK) == set(), "a new package or top-level module: give it a layer above"


def test_layers_import_only_downwards():
    assert layer_violations(package_sources()) == []


def test_domain_and_application_never_import_a_front_end():
    for e in edges_of(package_sources()):
        if e.source in UTILITIES or e.source in DOMAIN or e.source in APPLICATION:
            assert e.target not in FRONT_ENDS, str(e)


def test_the_domain_imports_the_application_only_through_the_known_edges():
    upward = {(e.source, e.target) for e in edges_of(package_sources())
              if (e.source in DOMAIN or e.source in UTILITIES) and e.target in APPLICATION}
    assert upward <= set(KNOWN_UPWARD)


def test_known_upward_edges_are_still_there():
    present = {(e.source, e.target) for e in edges_of(package_sources())}
    gone = [edge for edge in KNOWN_UPWARD if edge not in present]
    assert gone == [], f"{gone} no longer exist: delete them from KNOWN_UPWARD"


def test_cli_reaches_tui_only_through_the_lazy_review_launcher():
    to_tui = [e for e in edges_of(package_sources()) if e.source == "cli" and e.target == "tui"]
    assert to_tui, "the review command launches the TUI"
    assert {e.path for e in to_tui} == {REVIEW_LAUNCHER} and all(e.lazy for e in to_tui)


def test_only_tui_imports_textual():
    offenders = []
    for rel, source in package_sources().items():
        if part_of(rel) == "tui":
            continue
        for module, line, _ in imports_of(rel, source):
            if module == "textual" or module.startswith("textual."):
                offenders.append(f"{rel}:{line}")
    assert offenders == []


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_only_the_front_ends_print_to_the_terminal():
    offenders = []
    for rel, source in package_sources().items():
        if part_of(rel) in FRONT_ENDS + ENTRY:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input"):
                offenders.append(f"{rel}:{node.lineno} {node.func.id}()")
            elif (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr", "stdin")
                  and isinstance(node.value, ast.Name) and node.value.id == "sys"):
                offenders.append(f"{rel}:{node.lineno} sys.{node.attr}")
    assert offenders == []


SHARED_PATH = re.compile(r"(^|[\\/])shared([\\/]|$)")


def shared_path_literals(rel: str, source: str) -> list[str]:
    """String literals in code (not docstrings; comments are not in the tree) that name a
    ``shared`` folder: ``"../shared/data"``, ``"shared"`` (as in ``root / "shared"``)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    hits = [node for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and (node.value.strip() == "shared" or SHARED_PATH.search(node.value))]
    return [f"{rel}:{node.lineno} {node.value!r}" for node in sorted(hits, key=lambda n: n.lineno)]


def test_no_module_reads_the_shared_folder_at_run_time():
    offenders = [hit for rel, source in package_sources().items() for hit in shared_path_literals(rel, source)]
    assert offenders == []


# -- one mutation path ---------------------------------------------------------------------

#: ``ReviewSession``'s methods that change the workspace: a front end reaches them only through
#: the application layer (``app.review``, ``app.controller``, ``app.bulk``, ``app.clusters``,
#: ``app.hand``, ``app.team``, ``app.generation`` ...).
SESSION_WRITES = frozenset({
    "decide", "run_within", "decide_many", "edit", "edit_many", "set_chunk_index", "set_chunk_indexes", "set_note", "undo",
    "add_pair", "mark_not_duplicates", "mark_not_duplicate_groups", "mark_not_duplicate_pairs", "mark_shared_evidence",
    "mark_shared_evidence_groups", "keep_one",
    "set_chunk_index_meaning"})
#: ``ReviewSession``'s methods that only read (or read the workspace again: ``reload_decisions``).
SESSION_READS = frozenset({
    "corpus_index", "corpus_fingerprint", "read_only", "status", "decisions", "view", "chunk_index_meaning",
    "edited_texts", "counts", "decided", "settled", "ids", "next_undecided", "first_undecided", "note", "notes",
    "search", "rate_per_hour", "not_duplicates", "shared_evidence", "regenerated_ids", "curation_summary",
    "reload_decisions"})
#: The writing methods of a store (``store.base.Store``, and the team store's votes and work split).
STORE_WRITES = frozenset({
    "bind", "set_meta", "decide", "decide_many", "edit", "edit_many", "add_pair", "mark_not_duplicates",
    "mark_shared_evidence", "set_note", "undo", "add_votes", "resolve", "plan_work", "claim_next"})
WRITES = SESSION_WRITES | STORE_WRITES
#: A receiver that holds a session or a store, by its name: ``session``, ``self.session``,
#: ``self.session.workspace``, ``ws``, ``store`` ... (and names assigned from one).
RECEIVER = re.compile(r"(^|_)(session|workspace|store|ws)$")


def _holds_a_session(node: ast.AST, aliases: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return bool(RECEIVER.search(node.id)) or node.id in aliases
    if isinstance(node, ast.Attribute):
        return bool(RECEIVER.search(node.attr))
    return False


def direct_writes(rel: str, source: str) -> list[str]:
    """Every use of a writing method (``WRITES``) on a session or a store in ``source``, called
    or handed out as a callback: ``self.session.decide(...)``, ``save=session.edit``,
    ``s = self.session; s.undo()``."""
    tree = ast.parse(source)
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and _holds_a_session(node.value, aliases)):
            aliases.add(node.targets[0].id)
    hits = [node for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in WRITES and _holds_a_session(node.value, aliases)]
    return [f"{rel}:{node.lineno} {ast.unparse(node)}" for node in sorted(hits, key=lambda n: n.lineno)]


def test_every_session_method_is_known_as_a_read_or_a_write():
    tree = ast.parse((PACKAGE / "store" / "session.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ReviewSession")
    public = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and not n.name.startswith("_")}
    assert public - SESSION_WRITES - SESSION_READS == set(), "a new ReviewSession method: a read or a write?"
    assert SESSION_WRITES & SESSION_READS == set()


def test_the_front_ends_change_pairs_only_through_the_application_layer():
    offenders = [hit for rel, source in package_sources().items() if part_of(rel) in FRONT_ENDS
                 for hit in direct_writes(rel, source)]
    assert offenders == []


#: The most lines a screen module may have: a screen presents and forwards keys; what a key
#: does lives in the application layer (the review screen's in ``app/controller.py``).
MAX_SCREEN_LINES = 800


def test_no_screen_module_is_over_800_lines():
    long = {rel: source.count("\n") for rel, source in package_sources().items()
            if rel.startswith("tui/screens/") and source.count("\n") > MAX_SCREEN_LINES}
    assert long == {}


# -- the checks themselves bite -----------------------------------------------------------


def test_the_mutation_check_finds_calls_callbacks_and_aliases():
    source = ("def f(self, session, app_review):\n"
              "    self.session.decide(1, 'accepted')\n"       # 2: a call
              "    push(EditScreen(save=self.session.edit))\n"  # 3: a callback
              "    s = self.session\n"
              "    s.undo()\n"                                  # 5: through a name
              "    self.session.workspace.set_meta(a='b')\n"    # 6: the store
              "    app_review.decide(session, 1, 'accepted')\n"  # through app/: fine
              "    session.view(1).passage\n"                   # a read: fine
              "    Path('x').resolve()\n")                      # not a session: fine
    assert [hit.split(" ")[0] for hit in direct_writes("tui/x.py", source)] == [
        "tui/x.py:2", "tui/x.py:3", "tui/x.py:5", "tui/x.py:6"]



def test_the_layer_check_reports_an_upward_import():
    tree = {
        "dataset/model.py": "from mtcb_curate.app.sources import Options\n",
        "verify/verdict.py": "def f():\n    from mtcb_curate.store import session\n",  # lazy counts too
        "store/sqlite.py": "from ..verify import verdict\n",  # relative, downward: fine
        "app/sources.py": "from mtcb_curate.tui import app\n",
        "tui/app.py": "from mtcb_curate.cli import main\n",
        "cli/export.py": "def run():\n    from mtcb_curate.tui.app import CurateApp\n",
        "cli/review.py": "def run():\n    from mtcb_curate.tui.app import CurateApp\n",  # the launcher: fine
        "verify/shrink.py": "from mtcb_curate.checks import content_words\n",  # upward: verify < checks
        "checks/gate.py": "from mtcb_curate.app.clusters import session_items\n",
        "neardup/similarity.py": "from mtcb_curate import __version__, errors\n",  # the root: fine
        "hub/plan.py": "from mtcb_curate.llm import client\n",
        "llm/client.py": "from mtcb_curate.hub import plan\n",  # downward: fine
    }
    bad = layer_violations(tree)
    assert [line.split(" ")[0] for line in bad] == [
        "dataset/model.py:1", "verify/verdict.py:2", "app/sources.py:1", "tui/app.py:1", "cli/export.py:2",
        "verify/shrink.py:1", "checks/gate.py:1", "hub/plan.py:1"]


def test_the_shared_check_ignores_docstrings_and_finds_code():
    source = ('"""Figures from ``../shared/data``."""\n'
              'ROOT = Path(__file__).parents[2] / "shared" / "data"\n'
              'NOTES = "../shared/notes/mtcb.md"\n'
              'WORD = "a shared column"\n')
    assert [hit.split(" ")[0] for hit in shared_path_literals("x.py", source)] == ["x.py:2", "x.py:3"]
