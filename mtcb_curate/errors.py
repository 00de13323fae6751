"""Errors a person can act on: each names the file, row and field concerned."""

from __future__ import annotations


class CurateError(Exception):
    """Base class: the message is one line, shown as is, with exit code 2 on the command line."""


class InputError(CurateError):
    """The input data cannot be used (missing config or column, unreadable file ...).

    Args:
        file: the file, folder or ``repo:config`` concerned.
        message: what is wrong, one line.
        row: 0-based row, when one row is at fault.
        field: the column concerned, when one is.
        line: the 1-based line of a line-based file (jsonl, csv) where that row starts, or where
            the file stops parsing; said after the row ("row 2 (line 3)") or alone.
    """

    def __init__(self, file: str, message: str, *, row: int | None = None, field: str | None = None,
                 line: int | None = None):
        self.file, self.row, self.field, self.message, self.line = file, row, field, message, line
        where = str(file)
        if row is not None:
            where += f" row {row}" + (f" (line {line})" if line is not None else "")
        elif line is not None:
            where += f" line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


class WorkspaceError(CurateError):
    """The workspace cannot be opened or does not fit the source."""


class WorkspaceLocked(WorkspaceError):
    """Another mtcb-curate process holds the workspace."""


class WorkspaceReadOnly(WorkspaceError):
    """The workspace cannot be written: a read-only file system or no permission to write.
    Readers still open it (read-only)."""


class WorkspaceFull(WorkspaceError):
    """The disk holding the workspace is full (ENOSPC, SQLite's "database or disk is full").
    Every change committed before is kept; the one being made is not."""
