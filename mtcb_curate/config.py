"""The user's config file: ``config.toml`` under ``platformdirs.user_config_dir("mtcb-curate")``.

Tables::

    [keys]            # rebind any action by its id (see the help screen, '?')
    accept = "y"
    reject = "n,x"    # several keys: comma-separated

    [llm]             # the LLM server (see mtcb_curate.llm.config)
    model = "gpt-4o-mini"
    base_url = "http://localhost:8000/v1"

    [checklist]       # passage length bounds of the passage_length check, in characters
    min_passage_chars = 30
    max_passage_chars = 600

``MTCB_CURATE_CONFIG`` or ``--config FILE`` point at another file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from mtcb_curate.errors import CurateError


def default_config_path() -> Path:
    """``$MTCB_CURATE_CONFIG`` or ``<user config dir>/mtcb-curate/config.toml``."""
    env = os.environ.get("MTCB_CURATE_CONFIG")
    if env:
        return Path(env)
    from platformdirs import user_config_dir

    return Path(user_config_dir("mtcb-curate", appauthor=False)) / "config.toml"


def read_table(name: str, path: Path | None = None) -> dict:
    """One table of the config file (``path``, default ``default_config_path()``); {} when the
    file or the table is absent.

    Raises:
        CurateError: the file is not valid TOML, or ``name`` is not a table.
    """
    path = default_config_path() if path is None else path
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CurateError(f"{path}: not a valid config file ({exc})") from None
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise CurateError(f"{path}: [{name}] must be a table")
    return table


def load_keymap(path: Path | None = None) -> dict[str, str]:
    """The ``[keys]`` table: action id -> key(s). An absent file gives {}.

    Raises:
        CurateError: the file is not valid TOML, or a key binding is not a string.
    """
    path = default_config_path() if path is None else path
    keys = read_table("keys", path)
    for action, key in keys.items():
        if not isinstance(key, str) or not key.strip():
            raise CurateError(f"{path}: [keys] {action} must be a key name such as \"y\" or \"ctrl+y\"")
    return dict(keys)
