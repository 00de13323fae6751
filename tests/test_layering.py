"""The domain modules import nothing from Textual: only mtcb_curate/tui/ may."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mtcb_curate"


def test_only_tui_imports_textual():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "tui" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "textual" or n.startswith("textual.") for n in names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
