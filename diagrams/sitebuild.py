"""The MkDocs phase and the atomic publish of the built site.

Role: run ``mkdocs build --strict`` in-process into a temporary folder beside the
output, turn whatever MkDocs reports into one ``FILE:LINE: message`` line, and move
the finished folder into place only when everything passed.

Contract:
- ``mkdocs_build(root, site_dir, env, site_url)`` builds ``root/mkdocs.yml`` into
  ``site_dir`` with ``strict=True``, the hook's environment ``env`` and ``site_url``
  (``None``: the one in mkdocs.yml); raises ``SiteError`` (the hook's own, or a
  ``BuildError`` made from MkDocs' first warning or error).
- ``temp_site_dir(out, build_dir)`` makes an empty folder on the same filesystem as
  ``out`` (in ``build_dir`` when possible) so that publishing is a rename.
- ``publish(tmp, out)`` replaces ``out`` by ``tmp``: on Linux one atomic exchange
  (``renameat2(RENAME_EXCHANGE)``) so ``out`` never stops existing, elsewhere two
  renames; on failure ``out`` is left as it was. It refuses to replace a folder that
  does not look like a site.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from diagrams.errors import BuildError, SiteError

_DOC_MESSAGE = re.compile(r"Doc file '([^']+)' contains (?:a|an) [\w ]*?link '([^']*)'")
_PAGE_ERROR = re.compile(r"Error (?:reading|building) page '([^']+)'")
# htmlproofer's two complaints: "invalid url - URL [STATUS] [PAGE]" (an error) and
# "Unable to locate source file for: URL" (a warning, fatal under --strict; names no page).
_PROOFER = re.compile(r"invalid url - (\S+) \[[^\]]*\] \[([^\]]+)\]"
                      r"|Unable to locate source file for: (\S+)")
_SITE_MARKERS = ("index.html", "404.html", "sitemap.xml")
_AT_FDCWD = -100  # "relative to the working folder", for the *at() calls
_RENAME_EXCHANGE = 2  # renameat2 flag: swap two existing paths atomically


class _Collect(logging.Handler):
    """Keeps MkDocs' warnings and errors instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _captured_logs() -> Iterator[_Collect]:
    logger = logging.getLogger("mkdocs")
    handler, propagate = _Collect(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


@contextmanager
def _environment(root: Path, env: Mapping[str, str]) -> Iterator[None]:
    """``env`` set and the project root as working folder (snippets paths are relative)."""
    saved = {name: os.environ.get(name) for name in env}
    cwd = Path.cwd()
    os.environ.update(env)
    os.chdir(root)
    try:
        yield
    finally:
        os.chdir(cwd)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def mkdocs_build(root: Path, site_dir: Path, env: Mapping[str, str],
                 site_url: str | None = None) -> None:
    """``mkdocs build --strict`` into ``site_dir``; one-line errors (see module doc)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import ConfigurationError, MkDocsException

    with _captured_logs() as logs, _environment(root, env):
        try:
            config = load_config(config_file=str(root / "mkdocs.yml"), site_url=site_url,
                                 site_dir=str(site_dir), strict=True)
            config.plugins.on_startup(command="build", dirty=False)
            try:
                build(config)
            finally:
                config.plugins.on_shutdown()
        except SiteError:
            raise
        except MkDocsException as err:
            cause = _site_error_in(err)
            if cause is not None:
                raise cause from None
            where = "mkdocs.yml" if isinstance(err, ConfigurationError) else "mkdocs"
            raise _from_logs(root, logs.records, str(err), where) from None
        except Exception as err:  # a markdown extension or theme failure
            raise _from_logs(root, logs.records, f"{err.__class__.__name__}: {err}") from None


def _site_error_in(err: BaseException) -> SiteError | None:
    """MkDocs wraps a hook's error in ``Abort``; find the original one."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, SiteError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _from_logs(
    root: Path, records: list[logging.LogRecord], fallback: str, where: str = "mkdocs"
) -> BuildError:
    """The first thing MkDocs complained about, located in its page when possible."""
    messages = [r.getMessage() for r in records]
    # "Error reading page 'x':" with nothing after it only announces the next record.
    detail = [m for m in messages if not (_PAGE_ERROR.match(m) and m.rstrip().endswith(":"))]
    if not detail:
        return BuildError(where, fallback)
    first, more = detail[0], len(detail) - 1
    suffix = f" (and {more} more)" if more else ""
    if proofer := _PROOFER.search(first):
        return _broken_link(root, proofer)
    if page := _DOC_MESSAGE.match(first) or _PAGE_ERROR.match(first):
        rel = f"docs/{page.group(1)}"
        needle = page.group(2) if page.re is _DOC_MESSAGE else _quoted(first)
        return BuildError(rel, _short(first) + suffix, _locate(root / rel, needle))
    return BuildError(where, _short(first) + suffix)


def _broken_link(root: Path, found: re.Match[str]) -> BuildError:
    """A link htmlproofer could not resolve, located on the page line that holds it."""
    url = found.group(1) or found.group(3)
    message = f"broken link or anchor '{url}' (no such page, file or id)"
    pages = [f"docs/{found.group(2)}"] if found.group(2) else sorted(
        p.relative_to(root).as_posix() for p in (root / "docs").rglob("*.md"))
    for page in pages:
        if line := _locate(root / page, url):
            return BuildError(page, message, line)
    return BuildError(pages[0] if found.group(2) else "mkdocs", message)


def _quoted(message: str) -> str | None:
    found = re.findall(r"'([^']+)'", message)
    return found[-1] if len(found) > 1 else None


def _short(message: str) -> str:
    return " ".join(message.split())


def _locate(path: Path, needle: str | None) -> int | None:
    """The first line of ``path`` containing ``needle``."""
    if not needle:
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next((no for no, line in enumerate(lines, 1) if needle in line), None)


def temp_site_dir(out: Path, build_dir: Path) -> Path:
    """An empty folder that can be renamed onto ``out`` (same filesystem)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    same = build_dir.stat().st_dev == out.parent.stat().st_dev
    parent = build_dir if same else out.parent
    return Path(tempfile.mkdtemp(prefix=f".{out.name}-tmp-", dir=parent))


def check_replaceable(out: Path) -> None:
    """Refuse to replace anything but a previous site (or nothing)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise BuildError(str(out), "exists and is not a folder; refusing to replace it")
    if any(out.iterdir()) and not any((out / m).is_file() for m in _SITE_MARKERS):
        raise BuildError(str(out), "exists and does not look like a built site "
                         "(no index.html); refusing to replace it")


def publish(tmp: Path, out: Path) -> None:
    """Replace ``out`` by ``tmp``: one atomic exchange where possible, else two renames."""
    check_replaceable(out)
    if out.exists() and _exchange(tmp, out):
        shutil.rmtree(tmp, ignore_errors=True)  # ``tmp`` now holds the previous site
        return
    old = out.with_name(f".{out.name}-old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    moved = False
    if out.exists():
        out.rename(old)
        moved = True
    try:
        tmp.rename(out)
    except OSError as err:
        if moved:
            old.rename(out)
        raise BuildError(str(out), f"cannot move the new site into place: {err}") from None
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``).

    With two renames there is a moment when ``out`` does not exist; an exchange has
    none. False when the system cannot do it (not Linux, old kernel or libc, a
    filesystem without support): the caller then falls back to two renames.
    """
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise BuildError(str(b), f"cannot move the new site into place: {os.strerror(code)}")


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
