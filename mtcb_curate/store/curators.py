"""Curator names: who made a change (``--curator NAME``, else the config, else the login name)."""

from __future__ import annotations

import getpass
import unicodedata

from mtcb_curate.errors import CurateError

#: The longest curator name accepted, in characters.
MAX_NAME_CHARS = 64


def check_curator(name: str, where: str = "--curator") -> str:
    """``name`` stripped, or ``CurateError`` naming ``where`` when it is empty, longer than
    ``MAX_NAME_CHARS`` characters or holds a control character (names are shown on screens and
    in reports, always as plain text)."""
    clean = name.strip() if isinstance(name, str) else ""
    if not clean or len(clean) > MAX_NAME_CHARS or any(unicodedata.category(c).startswith("C") for c in clean):
        raise CurateError(f"{where}: a curator name is 1 to {MAX_NAME_CHARS} printable characters, "
                          f"not {name!r}")
    return clean


def default_curator() -> str:
    """The ``[team] curator`` of the config file, else the login name, else ``curator``.

    Raises:
        CurateError: the configured name is not a valid curator name.
    """
    from mtcb_curate.config import default_config_path, read_table

    configured = read_table("team").get("curator")
    if configured is not None:
        return check_curator(str(configured), f"{default_config_path()}: [team] curator")
    try:
        login = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (a container without a passwd entry)
        login = ""
    try:
        return check_curator(login)
    except CurateError:
        return "curator"


#: The share of pairs two curators decide blind when ``[team] overlap`` is not set.
DEFAULT_OVERLAP = 0.1


def configured_overlap() -> float:
    """The ``[team] overlap`` share (0 to 1) of the config file, else ``DEFAULT_OVERLAP``.

    Raises:
        CurateError: the value is not a number between 0 and 1.
    """
    from mtcb_curate.config import default_config_path, read_table

    value = read_table("team").get("overlap", DEFAULT_OVERLAP)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise CurateError(f"{default_config_path()}: [team] overlap must be a share between 0 and 1, such as 0.1")
    return float(value)
