"""The site generator: rendered Markdown in, the themed site out (MkDocs today, or Zensical).

Contract: ``generate_site(root, pages_dir, site_dir, site_url, generator)`` builds the rendered
pages with ``root/mkdocs.yml``'s settings, strictly: MkDocs in this process (``mkdocs_build``,
which the preview also calls, dirty), or ``zensical build --strict`` in a child process on a
copy of the settings; neither runs code of ours. The ``<meta name="generator">`` tag is then
removed. A failure is one ``BuildError``, at the ``docs/`` page and line the generator names.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from sitebuild.errors import BuildError, last_line, line_holding
from sitebuild.processes import child_command
from tracefile.files import write_atomic

GENERATORS = ("mkdocs", "zensical")
_DOC_MESSAGE = re.compile(r"Doc file '([^']+)' contains (?:a|an) [\w ]*?link '([^']*)'")
_PAGE_ERROR = re.compile(r"Error (?:reading|building) page '([^']+)'")
_GENERATOR_TAG = re.compile(r'[ \t]*<meta name="generator" content="[^"]*">\n?')


class _Collect(logging.Handler):
    """Keeps MkDocs' warnings and errors instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def generate_site(root: Path, pages_dir: Path, site_dir: Path, site_url: str | None = None,
                  generator: str = "mkdocs") -> None:
    """Build ``pages_dir`` into ``site_dir`` with ``generator`` (see the module doc)."""
    if generator == "zensical":
        _zensical(root, pages_dir, site_dir, site_url)
    else:
        mkdocs_build(root, pages_dir, site_dir, site_url)
    for page in site_dir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if (stripped := strip_generator_tag(html)) != html:
            write_atomic(page, stripped)


def strip_generator_tag(html: str) -> str:
    """``html`` without its ``<meta name="generator">`` tag."""
    return _GENERATOR_TAG.sub("", html)


def mkdocs_build(root: Path, pages_dir: Path, site_dir: Path, site_url: str | None,
                 dirty: bool = False) -> None:
    """MkDocs' own build: strict, or ``dirty`` (only the pages changed since its last build
    into ``site_dir``, as ``mkdocs serve --dirty`` builds; MkDocs warns of every dirty build,
    so it cannot be strict too)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import ConfigurationError, MkDocsException

    logs, logger = _Collect(), logging.getLogger("mkdocs")
    logger.addHandler(logs)  # with a handler on the way, logging prints nothing by itself
    try:
        config = load_config(config_file=str(root / "mkdocs.yml"), site_url=site_url,
                             docs_dir=str(pages_dir), site_dir=str(site_dir), strict=not dirty)
        config.plugins.on_startup(command="build", dirty=dirty)
        try:
            build(config, dirty=dirty)
        finally:
            config.plugins.on_shutdown()
    except MkDocsException as err:
        where = "mkdocs.yml" if isinstance(err, ConfigurationError) else "mkdocs"
        raise _from_logs(root, logs.records, str(err), where) from None
    except Exception as err:  # a markdown extension or theme failure
        raise _from_logs(root, logs.records, f"{err.__class__.__name__}: {err}") from None
    finally:
        logger.removeHandler(logs)


#: What mkdocs.yml may hold that Zensical (0.0.x) does not do: a build with it fails rather
#: than publish a site without it (docs/building.md lists these).
ZENSICAL_PLUGINS = ("search", "offline")
ZENSICAL_IGNORES = {"hooks": "Zensical accepts hooks but never runs them"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def zensical_config(root: Path, pages_dir: Path, site_url: str | None) -> dict[str, object]:
    """mkdocs.yml's settings for a Zensical build of ``pages_dir`` into ``zensical-site``
    beside it (Zensical wants the site folder inside the folder of its settings file); a
    setting Zensical would silently ignore is an error."""
    config = read_settings(root)
    for key, why in ZENSICAL_IGNORES.items():
        if key in config:
            raise BuildError("mkdocs.yml", f"{key}: {why}; remove it to build with Zensical")
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config.get("plugins", [])]
    if unknown := [name for name in plugins if name not in ZENSICAL_PLUGINS]:
        raise BuildError("mkdocs.yml", f"plugins: Zensical has no {unknown[0]!r} plugin; "
                         "remove it to build with Zensical")
    config.update(docs_dir=pages_dir.name, site_dir="zensical-site")
    if site_url:
        config["site_url"] = site_url
    return config


def read_settings(root: Path) -> dict[str, Any]:
    """``root/mkdocs.yml`` as data, its ``!relative $config_dir`` (MkDocs' tag for a path in
    an extension's options) read as ``root``; a copy of it then holds no tag of MkDocs'."""
    class Loader(yaml.SafeLoader):
        pass

    def relative(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        if loader.construct_scalar(node) != "$config_dir":  # type: ignore[arg-type]
            raise BuildError("mkdocs.yml", f"!relative {node.value}: only $config_dir is read")
        return str(root)

    Loader.add_constructor("!relative", relative)
    return yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def _zensical(root: Path, pages_dir: Path, site_dir: Path, site_url: str | None) -> None:
    settings = pages_dir.parent / "zensical.yml"
    write_atomic(settings, yaml.safe_dump(zensical_config(root, pages_dir, site_url),
                                          sort_keys=False, allow_unicode=True))
    built = pages_dir.parent / "zensical-site"
    shutil.rmtree(built, ignore_errors=True)
    done = subprocess.run(child_command("zensical", ["build", "--strict", "--config-file",
                                                     str(settings)]),
                          cwd=root, capture_output=True, text=True, check=False)
    output = _ANSI.sub("", done.stdout + done.stderr)
    if done.returncode != 0 or not (built / "index.html").is_file():
        # Its first complaint (``Warning: page does not exist``), else its last line.
        said = next((line.strip() for line in output.splitlines()
                     if line.strip().startswith(("Warning:", "Error:"))), last_line(output))
        raise BuildError("zensical", f"`zensical build --strict` exited with "
                         f"{done.returncode}: {said}")
    for item in built.iterdir():
        shutil.move(item, site_dir / item.name)  # the site folder may be on another disk
    built.rmdir()


def _from_logs(root: Path, records: list[logging.LogRecord], fallback: str,
               where: str = "mkdocs") -> BuildError:
    """The first thing MkDocs complained about, located in its page when possible."""
    # "Error reading page 'x':" with nothing after it only announces the next record.
    detail = [" ".join(r.getMessage().split()) for r in records]
    detail = [m for m in detail if not (_PAGE_ERROR.match(m) and m.endswith(":"))]
    if not detail:
        return BuildError(where, fallback)
    first = detail[0] + (f" (and {len(detail) - 1} more)" if len(detail) > 1 else "")
    if page := _DOC_MESSAGE.match(first) or _PAGE_ERROR.match(first):
        rel = f"docs/{page.group(1)}"
        quoted = re.findall(r"'([^']+)'", first)
        needle = page.group(2) if page.re is _DOC_MESSAGE else quoted[-1] if quoted[1:] else ""
        return BuildError(rel, first, line_holding(root / rel, (needle,)))
    return BuildError(where, first)
