"""The MkDocs phase: ``mkdocs build --strict`` in-process, its complaints as one line.

Contract: ``mkdocs_build(root, site_dir, settings, site_url, warm)`` builds ``root/mkdocs.yml`` into
``site_dir`` (a temporary folder: ``sitebuild.publish`` makes it and later swaps it into
place) with ``strict=True``, handing the hook its ``BuildSettings`` through the MkDocs config
(``configure``) and using ``site_url`` (``None``: the one in mkdocs.yml). It raises a
``LocatedError``: the hook's own, or a ``BuildError`` made from MkDocs' first warning or error,
located at its ``docs/`` page and line when MkDocs names a page. Given a ``Warm``
(``sitebuild.warm``), the build reuses the per-page work of earlier builds in the same process
wherever its inputs are unchanged. ``warm_up(root)`` does the imports and the config loading
ahead, for a process that will build again and again.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitebuild.errors import BuildError
from sitebuild.paths import SETTINGS_KEY, BuildSettings
from tracefile.errors import LocatedError

if TYPE_CHECKING:
    from sitebuild.warm import Warm

_DOC_MESSAGE = re.compile(r"Doc file '([^']+)' contains (?:a|an) [\w ]*?link '([^']*)'")
_PAGE_ERROR = re.compile(r"Error (?:reading|building) page '([^']+)'")


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


def mkdocs_build(root: Path, site_dir: Path, settings: BuildSettings,
                 site_url: str | None = None, warm: Warm | None = None) -> None:
    """``mkdocs build --strict`` into ``site_dir``; one-line errors (see module doc).
    ``warm``: a long-lived process's memos (``sitebuild.warm``), for its repeated builds."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import ConfigurationError, MkDocsException

    with _captured_logs() as logs:
        try:
            config = load_config(config_file=str(root / "mkdocs.yml"), site_url=site_url,
                                 site_dir=str(site_dir), strict=True)
            configure(config, root, settings)
            with warm.mkdocs() if warm is not None else nullcontext():
                config.plugins.on_startup(command="build", dirty=False)
                try:
                    build(config)
                finally:
                    config.plugins.on_shutdown()
        except LocatedError:
            raise
        except MkDocsException as err:
            cause = _site_error_in(err)
            if cause is not None:
                raise cause from None
            where = "mkdocs.yml" if isinstance(err, ConfigurationError) else "mkdocs"
            raise _from_logs(root, logs.records, str(err), where) from None
        except Exception as err:  # a markdown extension or theme failure
            raise _from_logs(root, logs.records, f"{err.__class__.__name__}: {err}") from None


#: What a build imports late (MkDocs, the hook, the charts' declarations, the gates):
#: ``warm_up`` imports it early.
LATE_IMPORTS = ("mkdocs.commands.build", "mkdocs.config", "sitebuild.hook", "diagrams.charts",
                "sitebuild.gates")


def warm_up(root: Path) -> None:
    """Import what ``mkdocs_build`` and the gates use and load the config once, so that a
    long-lived process (serve) spends its first rebuild building rather than importing.
    Errors are left for the real build to report."""
    for name in LATE_IMPORTS:
        importlib.import_module(name)
    from mkdocs.config import load_config

    with _captured_logs():
        try:  # loading the config imports the theme, plugins and Markdown extensions
            load_config(config_file=str(root / "mkdocs.yml"))
        except Exception:
            return


def configure(config: Any, root: Path, settings: BuildSettings) -> None:
    """Hand the hook its settings and anchor snippet paths at ``root``."""
    config.extra[SETTINGS_KEY] = settings
    snippets = config.mdx_configs.get("pymdownx.snippets")
    if snippets is not None:
        snippets["base_path"] = [str(root / base) for base in snippets.get("base_path", ["."])]


def _site_error_in(err: BaseException) -> LocatedError | None:
    """MkDocs wraps a hook's error in ``Abort``; find the original one."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, LocatedError):
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
    if page := _DOC_MESSAGE.match(first) or _PAGE_ERROR.match(first):
        rel = f"docs/{page.group(1)}"
        needle = page.group(2) if page.re is _DOC_MESSAGE else _quoted(first)
        return BuildError(rel, _short(first) + suffix, _locate(root / rel, needle))
    return BuildError(where, _short(first) + suffix)


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
