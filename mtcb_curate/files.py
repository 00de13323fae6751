"""Writing files atomically, with the permissions a plain ``open(path, "w")`` would give; and
the user cache folder the caches that outlive a workspace live under."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any


def _default_mode() -> int:
    """0o666 minus the process umask (read without changing it for good)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(dest: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``dest`` through ``write(binary_file)`` into a temporary file beside it, then rename.

    A reader (or a crash) never sees a half-written file. The file gets the usual permissions
    (0o666 minus the umask), not the 0o600 of ``tempfile.mkstemp``.

    Raises:
        OSError: the folder is not writable, or the disk is full; its ``filename`` is ``dest``
            (never the temporary file, never None), and the temporary file is removed.
    """
    dest = Path(dest)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    except OSError as exc:
        raise _naming(exc, dest) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, _default_mode())
        os.replace(tmp, dest)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _naming(exc, dest) from exc
        raise


def _naming(exc: OSError, dest: Path) -> OSError:
    """``exc`` as an ``OSError`` of the same kind whose ``filename`` is ``dest``."""
    if exc.errno is None:
        return exc
    out = OSError(exc.errno, exc.strerror, str(dest))  # the subclass for the errno (PermissionError ...)
    return out


def atomic_write_bytes(dest: Path, data: bytes) -> None:
    """``atomic_write`` of a bytes value."""
    atomic_write(dest, lambda fh: fh.write(data))


def write_folder(dest: Path, files: Mapping[str, bytes]) -> dict[str, Path]:
    """Write ``{relative path: bytes}`` under the folder ``dest`` so that a failure leaves
    nothing behind: every file is first written into a temporary folder beside ``dest``; a new
    ``dest`` is that folder renamed, an existing one gets each file moved in (``os.replace``;
    its other files are left alone). On failure the temporary folder, and any parent folder
    made for ``dest``, is removed.

    Returns:
        ``{relative path: final path}``.

    Raises:
        OSError: a file cannot be written (``filename`` is its final path under ``dest``, never
            a temporary one), or the disk is full.
        ValueError: a relative path would leave ``dest``.
    """
    dest = Path(dest)
    for rel in files:
        if rel.startswith("/") or ".." in Path(rel).parts:
            raise ValueError(f"refusing to write outside {dest}: {rel!r}")
    made: list[Path] = []  # parent folders made here, innermost first
    probe = dest.parent
    while not probe.exists():
        made.insert(0, probe)
        probe = probe.parent
    tmp: Path | None = None
    current = dest
    try:
        for folder in reversed(made):
            current = folder
            folder.mkdir()
        current = dest
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
        os.chmod(tmp, 0o777 & ~_umask())
        for rel, data in files.items():
            current = dest / rel
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
        out = {rel: dest / rel for rel in files}
        if not dest.exists():
            current = dest
            os.rename(tmp, dest)
            tmp = None
            return out
        for rel in files:
            current = dest / rel
            current.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, current)
        return out
    except OSError as exc:
        raise _naming(exc, current) from exc
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if not dest.exists():
            for folder in made:  # outermost first: it takes the inner ones with it
                shutil.rmtree(folder, ignore_errors=True)
                break


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def user_cache_folder(name: str) -> Path:
    """``<user cache dir>/mtcb-curate/<name>`` (``platformdirs``; ``XDG_CACHE_HOME`` on Linux),
    not created."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mtcb-curate", appauthor=False)) / name


def read_json(path: Path | None) -> Any:
    """The JSON in ``path`` (UTF-8), or None when ``path`` is None, missing or unreadable, or
    its content is not JSON."""
    if path is None:
        return None
    try:
        return json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
