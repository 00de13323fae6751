"""Opening a workspace by its target: a folder (SQLite, one curator) or a ``postgresql://``
URL (the shared PostgreSQL workspace of a team). Both give a ``store.base.Store``."""

from __future__ import annotations

from pathlib import Path

from mtcb_curate.store.base import Store
from mtcb_curate.store.postgres import is_database_url


def open_workspace(target: Path | str, *, read_only: bool = False, curator: str | None = None) -> Store:
    """Open (creating when needed) the workspace at ``target``.

    Args:
        target: a folder, or a PostgreSQL connection URI (``store.postgres.is_database_url``).
        read_only: nothing can be written.
        curator: who the changes are recorded under (default ``curators.default_curator()``).

    Raises:
        WorkspaceError: as ``sqlite.Workspace.open`` / ``postgres.PgWorkspace.open``.
    """
    if is_database_url(target):
        from mtcb_curate.store.postgres import PgWorkspace

        return PgWorkspace.open(str(target), read_only=read_only, curator=curator)
    from mtcb_curate.store.sqlite import Workspace

    return Workspace.open(Path(target), read_only=read_only, curator=curator)


def workspace_exists(target: Path | str) -> bool:
    """True when ``target`` holds a workspace (for a database: one bound to a dataset)."""
    if is_database_url(target):
        from mtcb_curate.store.postgres import PgWorkspace

        return PgWorkspace.exists(str(target))
    from mtcb_curate.store.sqlite import Workspace

    return Workspace.exists(Path(target))


def describe(target: Path | str) -> str:
    """How messages name ``target``: the folder, or the URL without its password."""
    if is_database_url(target):
        from mtcb_curate.store.postgres import redact

        return redact(str(target))
    return str(target)
