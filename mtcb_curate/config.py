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

    [hub]             # Hub organisations tried, in order, for a dataset name such as "ficha"
    organisations = ["feyninc", "chonkie-ai"]

    [review]          # accepting a pair that fails a check asks once first (default true)
    confirm_failing_accept = true
    answerable_ahead = 2000       # pairs whose answerable reason the analysis works out ahead

    [generate]        # steering LLM generation (mtcb_curate.llm.steering; [generate.NAME] per profile)
    examples = ["What was the company's revenue in fiscal 2023?"]
    forms = { "how much" = 0.3, when = 0.2 }

    [stats]           # target distributions: the balance check warns outside them
    max_form_share = 0.8          # (mtcb_curate.stats.targets; [stats.NAME] per dataset profile)
    min_pairs_per_document = 1

``MTCB_CURATE_CONFIG`` or ``--config FILE`` point at another file.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from mtcb_curate.errors import CurateError

#: Where the MTCB datasets are looked for by default: chonkie moved to the ``feyninc``
#: organisation in 2026-07 (third-party projects load ``feyninc/gacha``); ``chonkie-ai`` is
#: where they were first published.
DEFAULT_HUB_ORGANISATIONS: tuple[str, ...] = ("feyninc", "chonkie-ai")


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


def hub_organisations(path: Path | None = None) -> tuple[str, ...]:
    """The ``[hub] organisations`` list (Hub owners tried in order for a dataset name), or
    ``DEFAULT_HUB_ORGANISATIONS`` when the file or the key is absent.

    Raises:
        CurateError: the file is not valid TOML, or the value is not a non-empty list of
            owner names.
    """
    path = default_config_path() if path is None else path
    orgs = read_table("hub", path).get("organisations")
    if orgs is None:
        return DEFAULT_HUB_ORGANISATIONS
    if (not isinstance(orgs, list) or not orgs
            or not all(isinstance(o, str) and re.fullmatch(r"[A-Za-z0-9][\w.-]*", o) for o in orgs)):
        raise CurateError(f'{path}: [hub] organisations must be a list of Hub owner names, such as '
                          f'["feyninc", "chonkie-ai"]')
    return tuple(orgs)


def confirm_failing_accept(path: Path | None = None) -> bool:
    """The ``[review] confirm_failing_accept`` setting: accepting a pair whose checks fail asks
    once for confirmation. True when the file or the key is absent.

    Raises:
        CurateError: the file is not valid TOML, or the value is not true or false.
    """
    path = default_config_path() if path is None else path
    value = read_table("review", path).get("confirm_failing_accept", True)
    if not isinstance(value, bool):
        raise CurateError(f"{path}: [review] confirm_failing_accept must be true or false")
    return value


def answerable_ahead(path: Path | None, default: int) -> int:
    """The ``[review] answerable_ahead`` setting: how many pairs' ``answerable`` support
    reasons the review app's analysis works out ahead in its worker process
    (``app.analysis.answer_ids``); 0: none, each is worked out in the app when its pair is
    shown. ``default`` when the file or the key is absent.

    Raises:
        CurateError: the file is not valid TOML, or the value is not a whole number >= 0.
    """
    path = default_config_path() if path is None else path
    value = read_table("review", path).get("answerable_ahead", default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CurateError(f"{path}: [review] answerable_ahead must be a whole number of pairs, 0 or more, "
                          f"such as {default}")
    return value
