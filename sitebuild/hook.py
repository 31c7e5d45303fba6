"""MkDocs hook: every page in ``docs/`` is a Jinja template over the parsed traces.

Role: the single rendering path from traces to pages. Pages never hold a number; they
name a trace value (``{{ tv("FORWARD.output") }}``) and this hook inserts it.

Contract (MkDocs events):
- ``on_config``: reads its settings from ``config.extra["build"]`` (``BuildSettings``, set by
  ``build_site.py`` on the loaded config; no environment variables): the trace files by id,
  the learner report (``None``: not supplied), the generated diagrams/tables folder (or the
  drawing still in progress) and, when the build parsed them already, the parsed traces.
  Without them (a plain ``mkdocs build``/``mkdocs serve``) it takes every declared trace
  from ``build/trace/`` and first brings the generated files up to date through the cache.
  It also replaces the offline plugin's CDN polyfill by the vendored one, so no page
  requests another host.
- ``on_files``: adds vendored KaTeX (from ``node_modules/katex/dist``), the iframe-worker shim
  when installed, and every raw trace at ``trace/<id>.trace``.
- ``on_page_markdown``: renders the page through ``sitebuild.page_render`` (strict, comment
  delimiters ``<#-- --#>``) with the globals of ``sitebuild.site_context`` and two of its
  own: ``cite`` (``extra.references``) and ``pinned`` (a package's version, from the lock).
  Any failure raises ``PageError`` whose ``str`` is ``docs/page.md:LINE: message``. Given a
  page memo (``BuildSettings.page_memo``: serve's, ``sitebuild.warm``), a page whose
  Markdown, trace and inputs (``context_digest``) are unchanged since the memo's last build
  is not rendered again; nor is a figure (below) while its inputs are unchanged.
- ``on_page_context`` (before the search plugin reads the page): puts each chart's SVG and
  values table where the page's template left their marks. Figures skip the Markdown
  conversion (a megabyte of markup on the gradients lab, half its build time): the build may
  still be drawing the charts while MkDocs converts the pages (``BuildSettings.drawing``,
  ``sitebuild.drawing``), and the hook waits for a chart only here.
- ``on_post_page``: puts the explorer in, once the search plugin has indexed the page (it
  excludes the explorer, so its parser would read a megabyte only to skip it); then, like
  ``on_post_template``, strips ``<meta name="generator">`` so no tool version string
  reaches the site.
Errors are ``HookError`` (a ``LocatedError`` that MkDocs' own CLI also reports on one line).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from sitebuild.citations import load_references, render_citation
from sitebuild.lockfile import LOCK, pinned, render_pin
from sitebuild.memo import remembered
from sitebuild.page_render import HookError, front_matter_lines, render_page
from sitebuild.paths import (
    CHAPTER_TRACE,
    DEFAULT_GENERATED,
    DEFAULT_REPORT,
    SETTINGS_KEY,
    TRACE_DIR,
    BuildSettings,
    trace_file,
    trace_url,
)
from sitebuild.site_context import AFTER_SEARCH, BEFORE_SEARCH, Folder, SiteContext
from tracefile import SCHEMAS, TraceSet, load_trace
from tracefile.errors import LocatedError

KATEX_DIST = "node_modules/katex/dist"
KATEX_FILES = ("katex.min.js", "katex.min.css")
SHIM_SRC = "node_modules/iframe-worker/shim/index.js"
SHIM_URL = "assets/vendor/iframe-worker/shim.js"
_GENERATOR = re.compile(r'[ \t]*<meta name="generator" content="[^"]*">\n?')


def strip_generator(output: str) -> str:
    """Remove the generator meta tag (it carries tool version strings)."""
    return _GENERATOR.sub("", output)


def _root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path or "mkdocs.yml").resolve().parent


def default_settings(root: Path) -> BuildSettings:
    """A plain ``mkdocs build``: the engine's traces and report from the last build."""
    report = root / DEFAULT_REPORT
    return BuildSettings(
        traces={trace_id: root / TRACE_DIR / trace_file(trace_id) for trace_id in SCHEMAS},
        report=report if report.is_file() else None,
        generated=root / DEFAULT_GENERATED, generated_ready=False)


def load_context(root: Path, settings: BuildSettings) -> SiteContext:
    """Parse the traces (unless the caller already did) and read the report the settings
    name."""
    parsed = getattr(settings, "parsed", None)
    traces = {}
    for trace_id, path in settings.traces.items():
        if parsed is not None and trace_id in parsed.traces:
            traces[trace_id] = parsed.traces[trace_id]
            continue
        if not path.is_file():
            raise HookError(str(path), None, "trace not found; run `python build_site.py "
                            "build` (it runs the engine)")
        traces[trace_id] = load_trace(path, SCHEMAS[trace_id])
    report = None
    if settings.report is not None:
        try:
            report = settings.report.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise HookError(str(settings.report), None,
                            f"cannot read the learner report: {err}") from None
    trace_set = TraceSet(traces, CHAPTER_TRACE)
    drawing = getattr(settings, "drawing", None)
    if drawing is None and not settings.generated_ready:
        from sitebuild.cache import Cache
        from sitebuild.pipeline import exclusive, generate

        with exclusive(root / "build"):
            generate(root, trace_set, settings.generated, Cache(root / "build" / "cache"))
    return SiteContext(trace_set, dict(settings.traces), report,
                       drawing if drawing is not None else Folder(settings.generated),
                       tuple(getattr(settings, "unverified", ())))


def context_digest(root: Path, context: SiteContext, references: Any) -> str:
    """A digest of everything a page's rendering reads besides its own Markdown: the traces,
    the report, the generated figures and tables, the bibliography and the lock."""
    from sitebuild.cache import input_key

    parts: list[tuple[str, str | bytes]] = [
        ("unverified and references", repr((context.unverified, references))),
        ("report", context.report or ""),
        *((f"trace {tid}", t.text) for tid, t in sorted(context.traces.traces.items()))]
    lock = root / LOCK
    parts.append(("lock", lock.read_bytes() if lock.is_file() else b""))
    parts += [(f"file {name}", context.files.read(name)) for name in context.files.names()]
    return input_key(parts)


_state: dict[str, Any] = {}


def _reported(event: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a lower-level LocatedError into a HookError that MkDocs reports on one line."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return event(*args, **kwargs)
        except HookError:
            raise
        except LocatedError as err:
            raise HookError.wrap(err) from err

    run.__name__ = event.__name__
    run.__doc__ = event.__doc__
    return run


@_reported
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Load the context once per build; keep every script on this host."""
    root = _root(config)
    _state.clear()
    _state["root"] = root
    # MkDocs loads this file as a module of its own, so the settings' class is not this
    # module's BuildSettings: read them by attribute.
    settings = config.extra.get(SETTINGS_KEY) or default_settings(root)
    _state["context"] = load_context(root, settings)
    _state["references"] = load_references(config.extra)
    _state["page_memo"] = getattr(settings, "page_memo", None)
    if _state["page_memo"] is not None:
        _state["inputs"] = context_digest(root, _state["context"], _state["references"])
    polyfills = [p for p in config.extra.get("polyfills", []) if "://" not in str(p)]
    if not (root / SHIM_SRC).is_file():
        # Without the vendored shim the offline search silently stops working: a different
        # site, not a smaller one. Refuse, as for KaTeX.
        raise HookError(SHIM_SRC, None, "the offline search's iframe-worker shim is not "
                        "installed; run `./dev setup` (npm ci)")
    config.extra["polyfills"] = [*polyfills, SHIM_URL]
    return config


@event_priority(50)  # before plugins that index the files, which run at 0
@_reported
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the vendored KaTeX, the worker shim and the raw trace to the site."""
    root: Path = _state["root"]
    katex = root / KATEX_DIST
    if not (katex / "katex.min.js").is_file():
        raise HookError(KATEX_DIST, None, "KaTeX is not installed; run `./dev setup` (npm ci)")
    vendored = [katex / name for name in KATEX_FILES]
    vendored += sorted(p for p in (katex / "fonts").iterdir() if p.is_file())
    for path in vendored:
        uri = "assets/vendor/katex/" + path.relative_to(katex).as_posix()
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    files.append(File.generated(config, SHIM_URL, abs_src_path=str(root / SHIM_SRC)))
    context: SiteContext = _state["context"]
    for trace_id, path in context.trace_paths.items():
        files.append(File.generated(config, trace_url(trace_id), abs_src_path=str(path)))
    return files


def _page_name(page: Page) -> str:
    """The page's source as errors name it (``docs/…``)."""
    source = page.file.abs_src_path
    return os.path.relpath(source, _state["root"]) if source else f"docs/{page.file.src_uri}"


@_reported
def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Render the page's Markdown as a Jinja template over the trace."""
    root: Path = _state["root"]
    source = page.file.abs_src_path
    name = _page_name(page)
    offset = 0
    if source:
        offset = front_matter_lines(Path(source).read_text(encoding="utf-8-sig"), markdown)
    context: SiteContext = _state["context"]
    references = _state["references"]
    page_globals = {**context.page_globals(page.meta.get("trace", CHAPTER_TRACE)),
                    "pinned": lambda name: render_pin(name, pinned(root, name)),
                    "cite": lambda key: render_citation(references, key)}
    key = (markdown, offset, page.meta.get("trace", CHAPTER_TRACE), _state.get("inputs"))
    rendered = remembered(_state["page_memo"], (name, "render"), key,
                          lambda: render_page(markdown, name, page_globals, offset))
    # The banner goes after any front matter MkDocs already removed: line numbers in errors
    # still count from the page's own first line.
    return context.banner() + rendered


@event_priority(100)  # before the search plugin indexes the page, at 0
@_reported
def on_page_context(context: dict[str, Any], page: Page, config: MkDocsConfig,
                    nav: Any) -> dict[str, Any]:
    """Put the charts and their values tables where the page marked them, now that the
    Markdown is converted, and before the site search indexes the page."""
    if page.content is not None:
        page.content = _insert_figures(page.content, page, BEFORE_SEARCH, AFTER_SEARCH)
    return context


@event_priority(100)  # before any plugin's: the explorer's mark must reach it as it was
@_reported
def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Put the explorer where the page marked it, now that the site search has indexed the
    page (it excludes the explorer: its parser need not read it); no mark may be left. Drop
    the generator meta tag from every page."""
    return strip_generator(_insert_figures(output, page, AFTER_SEARCH))


def _insert_figures(html: str, page: Page, kinds: tuple[str, ...],
                    later: tuple[str, ...] = ()) -> str:
    """``html`` with the figures of ``kinds`` put in, those of ``later`` left for a later
    event; with a page memo, each figure's markup is rendered again only when something a
    page reads changed (the explorer and the values tables take a tenth of a second)."""
    site: SiteContext = _state["context"]
    memo = _state["page_memo"]
    return site.insert_figures(html, _page_name(page), kinds, later,
                               None if memo is None else (memo, _state["inputs"]))


def on_post_template(output_content: str, template_name: str, config: MkDocsConfig) -> str:
    """Drop the generator meta tag from theme templates such as ``404.html``."""
    return strip_generator(output_content)
