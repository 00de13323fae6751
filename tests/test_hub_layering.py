"""The Hub package's layering: one client module talks to the Hub.

``mtcb_curate/hub/client.py`` is the only module of the package tree that imports
``huggingface_hub`` or ``httpx2`` (at module level or inside a function). The one named
exception is ``dataset/loading.py``, which reads the SOURCE dataset and switches
huggingface_hub's offline mode for a cache-only load (``huggingface_hub.constants``).
The pure Hub modules (tables, diff, plan, errors, quiet) import neither the client nor the
libraries, so the checklist's ``loads`` check builds tables without the Hub client.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mtcb_curate

PACKAGE = Path(mtcb_curate.__file__).resolve().parent
HUB_LIBRARIES = {"huggingface_hub", "httpx2"}
#: Modules (relative to the package) allowed to import the Hub client libraries, and why.
ALLOWED = {
    "hub/client.py": "the Hub client",
    "dataset/loading.py": "source loading: huggingface_hub's offline switch for cache-only loads",
    "dataset/hub_requests.py": "source loading: the Hub probe and the patience hooks on huggingface_hub's client",
    # Not the Hub: the one LLM client module builds openai's transport (httpx2) so a cancel can
    # close the socket of the request in flight. It never imports huggingface_hub.
    "llm/client.py": "the LLM client: openai's httpx2 transport (cancel closes the request in flight)",
}
PURE_HUB = ("hub/tables.py", "hub/diff.py", "hub/plan.py", "hub/errors.py", "hub/quiet.py", "dataset/quiet.py",
            "hub/layout.py",
            "hub/card.py")


def imported_modules(source: str) -> set[str]:
    """Every module an ``import``/``from ... import`` anywhere in ``source`` names (absolute;
    a relative import is given as ``.name``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out.add(base)
            if node.module is None:  # from . import x
                out.update(base + alias.name for alias in node.names)
    return out


def imports_library(source: str, libraries: set[str]) -> set[str]:
    return {m for m in imported_modules(source) if m.split(".")[0] in libraries}


def test_the_parser_sees_imports_at_any_depth():
    src = ("import os\n"
           "def f():\n"
           "    from huggingface_hub.errors import HfHubHTTPError\n"
           "    import httpx2 as h\n"
           "class C:\n"
           "    def g(self):\n"
           "        import huggingface_hub.utils\n")
    assert imports_library(src, HUB_LIBRARIES) == {"huggingface_hub.errors", "httpx2", "huggingface_hub.utils"}
    assert imports_library("import huggingface_hubx\nfrom httpx import Client\n", HUB_LIBRARIES) == set()


def test_only_the_hub_client_imports_huggingface_hub_or_httpx2():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        found = imports_library(path.read_text(encoding="utf-8"), HUB_LIBRARIES)
        if found and rel not in ALLOWED:
            offenders[rel] = sorted(found)
    assert offenders == {}


def test_the_client_is_the_module_that_imports_them():
    source = (PACKAGE / "hub" / "client.py").read_text(encoding="utf-8")
    assert imports_library(source, HUB_LIBRARIES) >= {"huggingface_hub", "httpx2"}
    assert not (PACKAGE / "hub" / "publish.py").exists()


def test_pure_hub_modules_do_not_import_the_client():
    for rel in PURE_HUB:
        mods = imported_modules((PACKAGE / rel).read_text(encoding="utf-8"))
        assert "mtcb_curate.hub.client" not in mods, rel
        assert not any(m.split(".")[0] in HUB_LIBRARIES for m in mods), rel


def test_the_checks_do_not_import_the_hub_client():
    for path in sorted((PACKAGE / "checks").rglob("*.py")):
        mods = imported_modules(path.read_text(encoding="utf-8"))
        assert "mtcb_curate.hub.client" not in mods, path.name


def test_the_package_reexports_what_callers_use():
    import mtcb_curate.hub as hub
    from mtcb_curate.hub import client, errors, plan

    assert hub.plan_publish is client.plan_publish and hub.publish is client.publish
    assert hub.dry_run is plan.dry_run and hub.PublishPlan is plan.PublishPlan
    assert hub.PublishError is errors.PublishError and hub.LicenseRequired is errors.LicenseRequired
    for name in hub.__all__:
        assert getattr(hub, name) is not None


def test_publish_error_kinds_are_an_enum_equal_to_their_strings():
    from mtcb_curate.hub import LicenseRequired, PublishError, PublishErrorKind

    err = PublishError("gate", "the checklist failed")
    assert err.kind is PublishErrorKind.GATE and err.kind == "gate" and err.kind in ("offline", "gate")
    assert LicenseRequired("ficha").kind is PublishErrorKind.LICENSE
    assert len(PublishErrorKind) == 17
    try:
        PublishError("no-such-kind", "x")
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown kind was accepted")
