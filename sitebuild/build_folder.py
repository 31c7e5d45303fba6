"""The build folder: one build at a time, and what killed builds left removed.

Contract: ``exclusive(build_dir)`` holds the folder's lock (builds sharing it take turns; one
that waits says for which pid) and, once held, removes the temporary folders of builds no
longer running (``remove_leftovers``: their names carry their pid, ``paths.TEMPORARY``). It
refuses a folder that holds anything and is no build folder (``check_build_folder``): a build
replaces what it made there, so it must never take a folder of the user's for its own.
``source_date_epoch(root)`` is SOURCE_DATE_EPOCH, else the last commit's time, else 1980.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sitebuild.errors import BuildError
from sitebuild.paths import TEMPORARY

# The zip epoch (1980-01-01): a fixed build date when there is no commit to take one from.
FALLBACK_EPOCH = 315532800


@contextmanager
def exclusive(build_dir: Path, say: Callable[[str], None] = print) -> Iterator[None]:
    """Hold ``build_dir``'s lock (see the module doc); a build that has to wait says so,
    naming the process that holds it (its pid is written into the lock file)."""
    try:
        check_build_folder(build_dir)
        build_dir.mkdir(parents=True, exist_ok=True)
        handle = (build_dir / ".lock").open("a+")
    except OSError as err:
        raise BuildError(str(build_dir), f"cannot use the build folder: "
                         f"{err.strerror or err}") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            say(f"[build] waiting for the build in progress (pid {holder}) that holds "
                f"{build_dir / '.lock'}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        remove_leftovers(build_dir, build_dir / "cache")
        yield


#: What a build folder may hold before its first build: the engine's cell cache (``cache/``,
#: which ``python -m engine`` fills before any build) and builds' temporary folders.
BEFORE_FIRST_BUILD = frozenset({"cache"})


def check_build_folder(build_dir: Path) -> None:
    """Refuse ``build_dir`` if it holds anything but is not a build folder: every build leaves
    its ``.lock`` there, and a folder without one that holds more than ``BEFORE_FIRST_BUILD``
    is someone else's (``--build-dir ~/notes`` would otherwise lose its ``pages/``)."""
    if not build_dir.is_dir() or (build_dir / ".lock").exists():
        return
    strangers = sorted(path.name for path in build_dir.iterdir() if path.name not in
                       BEFORE_FIRST_BUILD and not TEMPORARY.fullmatch(path.name))
    if strangers:
        raise BuildError(str(build_dir / strangers[0]), "is in a folder no build has used "
                         f"(it has no .lock); refusing to build in {build_dir} and replace what "
                         "it holds: choose an empty or new --build-dir")


def remove_leftovers(*folders: Path) -> list[str]:
    """Remove the temporary folders (and links) of builds that are no longer running from
    ``folders`` (never a live build's: a killed build leaves them, the next one clears them)."""
    removed = []
    for folder in folders:
        for path in sorted(folder.iterdir()) if folder.is_dir() else ():
            found = TEMPORARY.fullmatch(path.name)
            if found is None or not (path.is_dir() or path.is_symlink()):
                continue
            pid = int(found.group(1))
            if pid != os.getpid() and _alive(pid):
                continue
            if path.is_symlink():
                path.unlink()
            else:
                shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def source_date_epoch(root: Path) -> str:
    """SOURCE_DATE_EPOCH as set, else the last commit's time, else a fixed date."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        return os.environ["SOURCE_DATE_EPOCH"]
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=root,
                             capture_output=True, encoding="utf-8", errors="replace", timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return str(FALLBACK_EPOCH)
    stamp = out.stdout.strip()
    return stamp if out.returncode == 0 and stamp.isdigit() else str(FALLBACK_EPOCH)
