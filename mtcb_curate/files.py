"""Writing files atomically, with the permissions a plain ``open(path, "w")`` would give; and
the user cache folder the caches that outlive a workspace live under."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


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
        OSError: the folder is not writable; the temporary file is removed.
    """
    dest = Path(dest)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, _default_mode())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(dest: Path, data: bytes) -> None:
    """``atomic_write`` of a bytes value."""
    atomic_write(dest, lambda fh: fh.write(data))


def user_cache_folder(name: str) -> Path:
    """``<user cache dir>/mtcb-curate/<name>`` (``platformdirs``; ``XDG_CACHE_HOME`` on Linux),
    not created."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mtcb-curate", appauthor=False)) / name
