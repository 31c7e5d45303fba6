"""The site generator: rendered Markdown in, the themed site out (MkDocs today, or Zensical).

Contract: ``generate_site(root, pages_dir, site_dir, site_url, generator)`` builds the rendered
pages with ``root/mkdocs.yml``'s settings, strictly: ``mkdocs build --strict`` or ``zensical
build --strict``, each its own command in a child process on a copy of the settings beside
the pages (``mkdocs_settings``; the preview builds with ``mkdocs_build`` too). The
``<meta name="generator">`` tag is then removed and the math typeset (``typeset_math``). A
failure is one ``BuildError``, at the ``docs/`` page and line the generator names.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from sitebuild.errors import BuildError, last_line, line_holding
from sitebuild.processes import child_command, run_limited
from sitebuild.typeset_math import typeset_site
from tracefile.files import write_atomic

GENERATORS = ("mkdocs", "zensical")
#: How long a generator may take over the site (it takes seconds).
GENERATOR_SECONDS = 600
#: MkDocs' one complaint that names a page with nothing else to locate it by: an exception
#: while reading or rendering it (links are the links gate's, on the built pages; the nav is
#: checked from the settings, ``check_nav``).
_PAGE_ERROR = re.compile(r"Error (?:reading|building) page '([^']+)'")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colours in a tool's output
_GENERATOR_TAG = re.compile(r'[ \t]*<meta name="generator" content="[^"]*">\n?')


def generate_site(root: Path, pages_dir: Path, site_dir: Path, site_url: str | None = None,
                  generator: str = "mkdocs") -> None:
    """Build ``pages_dir`` into ``site_dir`` with ``generator`` (see the module doc)."""
    if generator == "zensical":
        _zensical(root, pages_dir, site_dir, site_url)
    else:
        mkdocs_build(root, pages_dir, site_dir, site_url)
    built = {page: page.read_text(encoding="utf-8") for page in sorted(site_dir.rglob("*.html"))}
    finished = typeset_site(root, site_dir, {page: strip_generator_tag(html)
                                             for page, html in built.items()})
    for page, html in finished.items():
        if html != built[page]:
            write_atomic(page, html)


def strip_generator_tag(html: str) -> str:
    """``html`` without its ``<meta name="generator">`` tag."""
    return _GENERATOR_TAG.sub("", html)


def mkdocs_build(root: Path, pages_dir: Path, site_dir: Path, site_url: str | None,
                 strict: bool = True) -> list[str]:
    """``mkdocs build`` of ``pages_dir`` into ``site_dir``, on a copy of the settings beside
    the pages (``mkdocs_settings``): ``--strict`` unless told otherwise (the preview's build,
    which tells its warnings, returned here, rather than stop at one)."""
    check_nav(root, pages_dir, read_settings(root).get("nav", []))
    settings = mkdocs_settings(root, pages_dir, site_url)
    check_settings(root, settings, strict)
    done = run_limited(child_command("mkdocs", ["build", "--strict" if strict else "--no-strict",
                                                "--config-file", str(settings),
                                                "--site-dir", str(site_dir)]),
                       GENERATOR_SECONDS, "mkdocs", cwd=root, capture_output=True,
                       encoding="utf-8", errors="replace",
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    output = _ANSI.sub("", done.stdout + done.stderr)
    if done.returncode != 0:
        raise _located(root, _complaints(output), f"`mkdocs build` exited with "
                       f"{done.returncode}: {last_line(output)}")
    return _complaints(output)


def check_settings(root: Path, settings: Path, strict: bool = True) -> None:
    """MkDocs' own validation of the settings copy ``settings`` (its configuration classes, the
    checks ``mkdocs build`` makes first): its first error, or under ``strict`` its first
    warning, stops the build at the line of mkdocs.yml that sets that key."""
    from mkdocs.config.defaults import MkDocsConfig  # a second's import: only when building

    config = MkDocsConfig(config_file_path=str(settings))
    config.load_dict(yaml.safe_load(settings.read_text(encoding="utf-8")))
    failed, warned = config.validate()
    for key, problem in [*failed, *(warned if strict else [])]:
        raise BuildError("mkdocs.yml", f"{key}: {' '.join(str(problem).split())}",
                         line_holding(root / "mkdocs.yml", (f"{key}:",)))


def mkdocs_settings(root: Path, pages_dir: Path, site_url: str | None) -> Path:
    """A copy of mkdocs.yml's settings for the rendered pages, written beside them: MkDocs'
    command line names no pages folder and no site address."""
    settings = pages_dir.parent / "mkdocs-settings.yml"
    write_atomic(settings, yaml.safe_dump(settings_for(root, pages_dir, site_url),
                                          sort_keys=False, allow_unicode=True))
    return settings


def settings_for(root: Path, pages_dir: Path, site_url: str | None) -> dict[str, Any]:
    """mkdocs.yml's settings for a copy beside ``pages_dir`` that builds those pages."""
    config = read_settings(root)
    config["docs_dir"] = pages_dir.name  # relative to the copy's folder, as both tools read it
    if site_url:
        config["site_url"] = site_url
    return config


def check_nav(root: Path, pages_dir: Path, nav: Any) -> None:
    """Every page mkdocs.yml's ``nav`` names is a rendered page (a link elsewhere is not):
    the first that is not stops the build at its line of mkdocs.yml."""
    entries = [nav] if isinstance(nav, str) else (
        nav.values() if isinstance(nav, dict) else nav if isinstance(nav, list) else [])
    for entry in entries:
        if isinstance(entry, list | dict):
            check_nav(root, pages_dir, entry)
        elif isinstance(entry, str) and "://" not in entry and not (pages_dir / entry).is_file():
            raise BuildError("mkdocs.yml", f"nav: {entry!r} is not a page of docs/",
                             line_holding(root / "mkdocs.yml", (entry,)))


#: What mkdocs.yml may hold that Zensical (0.0.x) does not do: a build with it fails rather
#: than publish a site without it (docs/building.md lists these).
ZENSICAL_PLUGINS = ("search", "offline")
ZENSICAL_IGNORES = {"hooks": "Zensical accepts hooks but never runs them"}


def zensical_config(root: Path, pages_dir: Path, site_url: str | None) -> dict[str, object]:
    """mkdocs.yml's settings for a Zensical build of ``pages_dir`` into ``zensical-site``
    beside it (Zensical wants the site folder inside the folder of its settings file); a
    setting Zensical would silently ignore is an error."""
    config = settings_for(root, pages_dir, site_url)
    for key, why in ZENSICAL_IGNORES.items():
        if key in config:
            raise BuildError("mkdocs.yml", f"{key}: {why}; remove it to build with Zensical")
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config.get("plugins", [])]
    if unknown := [name for name in plugins if name not in ZENSICAL_PLUGINS]:
        raise BuildError("mkdocs.yml", f"plugins: Zensical has no {unknown[0]!r} plugin; "
                         "remove it to build with Zensical")
    config["site_dir"] = "zensical-site"
    return config


def read_settings(root: Path) -> dict[str, Any]:
    """``root/mkdocs.yml`` as data, its ``!relative $config_dir`` (MkDocs' tag for a path in
    an extension's options) read as ``root``; any other tag (``!ENV``, ``!!python/name``) is
    refused at its line, never run, so a copy of the settings holds no tag of MkDocs'."""
    class Loader(yaml.SafeLoader):
        pass

    def relative(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        if loader.construct_scalar(node) != "$config_dir":  # type: ignore[arg-type]
            raise BuildError("mkdocs.yml", f"!relative {node.value}: only $config_dir is read",
                             node.start_mark.line + 1)
        return str(root)

    Loader.add_constructor("!relative", relative)
    path = root / "mkdocs.yml"
    try:
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    except OSError as err:
        raise BuildError(str(path), f"cannot read the settings: {err.strerror or err}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        mark = getattr(err, "problem_mark", None)
        raise BuildError(str(path), f"not valid YAML: {' '.join(str(err).split())}",
                         None if mark is None else mark.line + 1) from None
    if not isinstance(config, dict):
        raise BuildError(str(path), "expected a mapping of settings", 1)
    return config


def _zensical(root: Path, pages_dir: Path, site_dir: Path, site_url: str | None) -> None:
    check_nav(root, pages_dir, read_settings(root).get("nav", []))
    settings = pages_dir.parent / "zensical.yml"
    write_atomic(settings, yaml.safe_dump(zensical_config(root, pages_dir, site_url),
                                          sort_keys=False, allow_unicode=True))
    built = pages_dir.parent / "zensical-site"
    shutil.rmtree(built, ignore_errors=True)
    done = run_limited(child_command("zensical", ["build", "--strict", "--config-file",
                                                  str(settings)]),
                       GENERATOR_SECONDS, "zensical", cwd=root, capture_output=True,
                       encoding="utf-8", errors="replace")
    output = _ANSI.sub("", done.stdout + done.stderr)
    if done.returncode != 0 or not (built / "index.html").is_file():
        # Its first complaint (``Warning: page does not exist``), else its last line.
        said = next((line.strip() for line in output.splitlines()
                     if line.strip().startswith(("Warning:", "Error:"))), last_line(output))
        if where := _ZENSICAL_AT.search(output):  # the page and line it drew under it
            raise _in_source(root, pages_dir, where[1], int(where[2]), f"zensical: {said}")
        raise BuildError("zensical", f"`zensical build --strict` exited with "
                         f"{done.returncode}: {said}")
    for item in built.iterdir():
        shutil.move(item, site_dir / item.name)  # the site folder may be on another disk
    built.rmdir()


#: Where Zensical shows a complaint: ``╭─[ building.md:426:15 ]``, in the rendered pages.
_ZENSICAL_AT = re.compile(r"\[\s*([^\s\]]+\.md):(\d+):\d+\s*\]")


def _in_source(root: Path, pages_dir: Path, page: str, line: int, message: str) -> BuildError:
    """``message`` at the line of ``docs/PAGE`` that the rendered page's ``line`` came from
    (the one holding its text), else at that line of the rendered page."""
    rendered = pages_dir / page
    rows = rendered.read_text(encoding="utf-8", errors="replace").splitlines()
    text = rows[line - 1].strip() if 0 < line <= len(rows) else ""
    source = root / "docs" / page
    if source.is_file():
        return BuildError(f"docs/{page}", message, line_holding(source, (text,)) if text else None)
    shown = rendered.relative_to(root) if rendered.is_relative_to(root) else rendered
    return BuildError(str(shown), message, line)


#: A warning or error as MkDocs prints it (``WARNING -  Doc file 'x.md' contains ...``).
_LOGGED = re.compile(r"(?:WARNING|ERROR)\s*-\s+(.*)")


def _complaints(output: str) -> list[str]:
    """MkDocs' warnings and errors in ``output``, each with its indented continuation."""
    found: list[str] = []
    for line in output.splitlines():
        if logged := _LOGGED.match(line):
            found.append(logged[1])
        elif found and line[:1].isspace() and line.strip():
            found[-1] += " " + line.strip()
    return found


def _located(root: Path, messages: list[str], fallback: str) -> BuildError:
    """The first thing MkDocs complained about, at its page when it names one."""
    # "Error reading page 'x':" with nothing after it only announces the next message.
    detail = [" ".join(m.split()) for m in messages]
    detail = [m for m in detail if m and not (_PAGE_ERROR.match(m) and m.endswith(":"))]
    if not detail:
        return BuildError("mkdocs", fallback)
    first = detail[0] + (f" (and {len(detail) - 1} more)" if len(detail) > 1 else "")
    if page := _PAGE_ERROR.match(first):
        quoted = re.findall(r"'([^']+)'", first)
        rel = f"docs/{page.group(1)}"
        return BuildError(rel, first, line_holding(root / rel, (quoted[-1],)) if quoted[1:]
                          else None)
    return BuildError("mkdocs", first)
