"""Files on disk: the one atomic file write, shared by the engine's writer and the build.

Contract: ``write_atomic(path, data)`` writes ``data`` to a temporary file in ``path``'s folder
and renames it over ``path`` in one step, so a reader sees the old file or the new one, never a
part; the new file gets the permissions the umask gives an ordinary new file (not mkstemp's
0600); on any failure the temporary file is removed and ``path`` is untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8 with LF line endings)."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # The name's start only: a legal name of 255 bytes would leave no room for the rest.
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp",
                                     dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
