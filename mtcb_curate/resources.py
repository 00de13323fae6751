"""Files shipped with the package: the stylesheets and the bundled sample datasets.

In a source checkout (or an editable install) they live at the repository's top level
(``styles/``, ``sample_data/``); a wheel carries them inside the package as ``_styles/`` and
``_sample_data/`` (see ``pyproject.toml``). Both are looked up, packaged copy first.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _first_existing(*candidates: Path) -> Path | None:
    for c in candidates:
        if c.exists():
            return c
    return None


def styles_dir() -> Path:
    """The folder holding the app's ``.tcss`` files.

    Raises:
        FileNotFoundError: the package was installed without its styles.
    """
    found = _first_existing(_PACKAGE / "_styles", _PACKAGE.parent / "styles")
    if found is None:
        raise FileNotFoundError("mtcb-curate's styles/ folder is missing from this installation")
    return found


def sample_dir(dataset: str) -> Path | None:
    """The bundled sample of ``dataset`` (a folder in Hub layout), or None when none is shipped."""
    return _first_existing(_PACKAGE / "_sample_data" / dataset, _PACKAGE.parent / "sample_data" / dataset)
