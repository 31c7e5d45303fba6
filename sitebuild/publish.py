"""Publishing: the site behind one symbolic link, and the folders a build rewrites whole.

Contract: ``publish(tmp, out)`` moves the built site ``tmp`` beside ``out`` as a release
folder (``.{out.name}-release-{n}``) and points the link ``out`` at it with one
``os.replace`` of a new link, so ``out`` never stops naming a whole site: a build killed at any
moment leaves the previous site or the new one, and the next publish removes every release
the link does not name. It runs after ``check_replaceable`` says ``out`` is nothing, an empty
folder, a site this build published (its ``PUBLISHED_FILES`` list names every file in it) or
a link to one: a folder holding any file no build published is refused, so a rebuild never
deletes a stranger's file. A folder at ``out`` (a site from before releases, an empty folder)
is first moved to a release name, so even then the previous site stays whole on disk.
``write_folder(target, files)`` replaces a build's own folder by exactly ``files``: written
beside it, then two renames (a build killed between them leaves the folder to be made again).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from sitebuild.errors import BuildError
from sitebuild.paths import temp_prefix

#: The list of every file a published site holds, written into it by ``publish``.
PUBLISHED_FILES = ".published-files"


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
    """Refuse to replace anything but nothing, an empty folder, or a site ``publish`` wrote
    (or a link it made to one) whose files are all its own."""
    if out.is_symlink() and _release(out) is None:
        raise BuildError(str(out), "is a link this build did not make; refusing to replace it: "
                         "remove it or choose another --out")
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
    """Make the built site ``tmp`` the one ``out`` names (see the module doc), after
    ``check_replaceable``, with the list of its files and the permissions an ordinary new
    folder gets (the temporary one was private)."""
    check_replaceable(out)
    list_site(tmp)
    ordinary_permissions(tmp)
    if out.is_dir() and not out.is_symlink():
        out.rename(_release_name(out))  # a folder from before releases: removed below
    release = _release_name(out)
    try:
        tmp.rename(release)
        _point(out, release)
    except OSError as err:
        raise BuildError(str(out), f"cannot move the new site into place: {err}") from None
    for stale in out.parent.glob(f".{glob.escape(out.name)}-release-*"):
        if stale.name != release.name:  # the previous release, or one a killed build left
            shutil.rmtree(stale, ignore_errors=True)


def _release_name(out: Path) -> Path:
    """A new release folder's path beside ``out``."""
    return Path(tempfile.mkdtemp(prefix=f".{out.name}-release-", dir=out.parent))


def _release(out: Path) -> Path | None:
    """The release folder the link ``out`` names, or None when ``out`` is not such a link."""
    if not out.is_symlink():
        return None
    target = os.readlink(out)
    if not re.fullmatch(rf"\.{re.escape(out.name)}-release-[\w]+", target):
        return None
    return out.parent / target


def _point(out: Path, release: Path) -> None:
    """Point ``out`` at ``release`` in one step: a new link, renamed over the old one."""
    link = out.with_name(temp_prefix(f".{out.name}-link") + "new")
    link.unlink(missing_ok=True)
    link.symlink_to(release.name)
    os.replace(link, out)


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
    """Replace the build's folder ``target`` by ``new`` with two renames; on failure
    ``target`` is as it was."""
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
