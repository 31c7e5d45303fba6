"""Publishing: the one atomic folder swap, used for the site, generated files and the cache.

Contract: ``swap_in(new, target)`` makes folder ``new`` appear at ``target`` in one step (on
Linux an atomic ``renameat2(RENAME_EXCHANGE)``, so ``target`` never stops existing; elsewhere
two renames), leaving ``target`` as it was on failure. ``write_folder(target, files)`` replaces
a folder by exactly ``files``; ``publish(tmp, out)`` swaps a built site in from
``temp_site_dir``, after ``check_replaceable`` says ``out`` is nothing, an empty folder, or a
site this build published (its ``PUBLISHED_FILES`` list names every file in it): a folder
holding any file no build published is refused, so a rebuild never deletes a stranger's file.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from sitebuild.errors import BuildError
from sitebuild.paths import temp_prefix

#: The list of every file a published site holds, written into it by ``publish``.
PUBLISHED_FILES = ".published-files"
_AT_FDCWD = -100  # "relative to the working folder", for the *at() calls
_RENAME_EXCHANGE = 2  # renameat2 flag: swap two existing paths atomically


def write_folder(target: Path, files: Mapping[str, bytes], what: str = "folder",
                 listed: bool = False) -> None:
    """Replace folder ``target`` by exactly ``files`` (written beside it, then swapped in;
    ``what`` names it in an error). ``listed``: a build folder's own, so it holds the list of
    its files, and a file in it that the list does not name stops the build (``check_listed``)."""
    if listed:
        check_listed(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(f".{target.name}-tmp"),
                                dir=target.parent))
    try:
        for name, data in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
        if listed:
            write_listing(tmp, files)
        swap_in(tmp, target, what)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_listing(folder: Path, names: Iterable[str]) -> None:
    """Write the list of the files a build made in ``folder`` (``PUBLISHED_FILES``), unless it
    says so already: a watcher of the folder (the preview's MkDocs) must not wake for nothing."""
    listing = "".join(f"{name}\n" for name in sorted(set(names) - {PUBLISHED_FILES}))
    target = folder / PUBLISHED_FILES
    if not target.is_file() or target.read_text(encoding="utf-8") != listing:
        target.write_text(listing, encoding="utf-8")


def check_listed(folder: Path) -> None:
    """Refuse to go on if ``folder`` holds a file its list does not name: the user's, which
    replacing or clearing the folder would delete. A folder without a list was made before
    builds kept one, in a folder ``build_folder.check_build_folder`` knows for a build's."""
    if (stranger := _unlisted(folder)) is not None:
        raise BuildError(str(folder / stranger), "is not a file the build made; refusing "
                         f"to delete it: move it out of {folder}")


def _unlisted(folder: Path) -> str | None:
    """The first file in ``folder`` its list (``PUBLISHED_FILES``) does not name; None when
    every file is listed or there is no list."""
    try:
        listed = set((folder / PUBLISHED_FILES).read_text(encoding="utf-8").splitlines())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise BuildError(str(folder / PUBLISHED_FILES), f"cannot read the list of the files "
                         f"a build made: {err}") from None
    return min(_files(folder) - listed - {PUBLISHED_FILES}, default=None)


def temp_site_dir(out: Path, build_dir: Path) -> Path:
    """An empty folder that can be renamed onto ``out`` (same filesystem)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    same = build_dir.stat().st_dev == out.parent.stat().st_dev
    parent = build_dir if same else out.parent
    return Path(tempfile.mkdtemp(prefix=temp_prefix(f".{out.name}-tmp"), dir=parent))


def check_replaceable(out: Path) -> None:
    """Refuse to replace anything but nothing, an empty folder or a site ``publish`` wrote
    whose files are all its own."""
    if not out.exists():
        return
    if not out.is_dir():
        raise BuildError(str(out), "exists and is not a folder; refusing to replace it")
    if not _files(out):
        return
    if not (out / PUBLISHED_FILES).is_file():
        raise BuildError(str(out), f"exists and is not a site this build published (no "
                         f"{PUBLISHED_FILES}); refusing to replace it: remove it or choose "
                         "another --out")
    if (stranger := _unlisted(out)) is not None:
        raise BuildError(str(out / stranger), "is not a file this build published; "
                         f"refusing to replace {out} and delete it: move it away or choose "
                         "another --out")


def publish(tmp: Path, out: Path) -> None:
    """Replace the site ``out`` by ``tmp`` (see ``swap_in``), after ``check_replaceable``,
    with the list of its files and the permissions an ordinary new folder gets (the
    temporary one was private)."""
    check_replaceable(out)
    list_site(tmp)
    ordinary_permissions(tmp)
    swap_in(tmp, out, "site")


def list_site(folder: Path) -> None:
    """Write into the site ``folder`` the list of every file it holds, as a published one has."""
    write_listing(folder, _files(folder))


def _files(folder: Path) -> set[str]:
    """Every file and symbolic link under ``folder``, by POSIX relative path."""
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*")
            if path.is_symlink() or not path.is_dir()}


def ordinary_permissions(folder: Path) -> None:
    """Folders ``0777`` and files ``0666`` less the umask (``0755``/``0644`` usually), so a web
    server running as another user can read the site; mkdtemp made the root ``0700``."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)
    for path in folder.rglob("*"):
        if not path.is_symlink():
            os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~mask)


def swap_in(new: Path, target: Path, what: str = "folder") -> None:
    """Replace ``target`` by ``new``: one atomic exchange where possible, else two renames."""
    if target.exists() and _exchange(new, target, what):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the previous contents
        return
    old = target.with_name(temp_prefix(f".{target.name}-old") + "swapped")
    shutil.rmtree(old, ignore_errors=True)
    moved = False
    if target.exists():
        target.rename(old)
        moved = True
    try:
        new.rename(target)
    except OSError as err:
        if moved:
            old.rename(target)
        raise BuildError(str(target), f"cannot move the new {what} into place: {err}") from None
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path, what: str = "folder") -> bool:
    """Swap ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``: no moment
    without ``b``); False where the system cannot (not Linux, an old kernel or libc, a
    filesystem without support), and the caller falls back to two renames."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise BuildError(str(b), f"cannot move the new {what} into place: {os.strerror(code)}")


def _renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2``, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
    function.restype = ctypes.c_int
    return function
