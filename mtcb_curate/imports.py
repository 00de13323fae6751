"""Import a library whose package ``__init__`` pulls in heavy optional packages it does not need
for what we use of it.

A library may import, when they are installed, packages it only uses as optional extras, inside
``try: ... except ImportError`` with a fallback:

- ``chonkie`` (for the chunkers of ``preview.chunkers``): ``chonkie.chunker`` imports its LLM
  "genies", which import openai (about 1.2 s of import on the thread that chunks).

:func:`import_hiding` imports such a module with those packages reported as not installed to
the importing thread only (a ``sys.meta_path`` finder that raises ``ModuleNotFoundError`` for
them on that thread); other threads import them as usual meanwhile, and so does everything once
the import is done (the library's fallback stays for the parts we never call). Nothing is
hidden when the package is already loaded. ``tests/test_startup_imports.py`` holds a canary per
library that fails once the library stops importing the package by itself (the hiding can go).
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

_LOCK = threading.Lock()


class _HiddenOnThisThread:
    """A ``sys.meta_path`` finder: the top-level packages ``hidden`` are not found on the thread
    that created it (``ModuleNotFoundError``); any other name, or thread, goes on to the next
    finder."""

    def __init__(self, hidden: frozenset[str]) -> None:
        self.hidden = hidden
        self.thread = threading.get_ident()

    def find_spec(self, name: str, path=None, target=None):
        if name.partition(".")[0] in self.hidden and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"No module named {name!r} (not loaded for this import)", name=name)
        return None


def import_hiding(module: str, hidden: tuple[str, ...]) -> ModuleType:
    """``importlib.import_module(module)`` with the top-level packages ``hidden`` (e.g.
    ``("scipy",)``) reported as not installed to this thread while it runs, unless ``module``'s
    top-level package or a hidden one is already loaded. Raises what the import raises."""
    top = module.partition(".")[0]
    with _LOCK:  # one hiding import at a time: the finder's list is shared by every thread
        hide = frozenset(h for h in hidden if h not in sys.modules)
        if top in sys.modules or not hide:
            return importlib.import_module(module)
        finder = _HiddenOnThisThread(hide)
        sys.meta_path.insert(0, finder)
        try:
            return importlib.import_module(module)
        finally:
            sys.meta_path.remove(finder)
