"""MkDocs hook: every page in ``docs/`` is a Jinja template over the parsed trace.

Role: the single rendering path from trace to page. Pages never hold a number; they
name a trace value (``{{ tv("FORWARD.output") }}``) and this hook inserts it.

Contract (MkDocs events):
- ``on_config``: loads the trace (env ``RESIDUAL_TRACE``, default
  ``build/trace/residual-connections-v1.trace``), the learner report (env
  ``RESIDUAL_REPORT``: a path, or empty for "not supplied"; default: the engine's
  ``build/trace/learner-report.txt`` when present) and the generated diagrams/tables
  (env ``RESIDUAL_GENERATED``, default ``build/generated``). Without
  ``RESIDUAL_GENERATED`` (a plain ``mkdocs build``/``mkdocs serve``) the generated
  files are first brought up to date through the cache. It also replaces the offline
  plugin's CDN polyfill by the vendored one, so no page requests another host.
- ``on_files``: adds vendored KaTeX (from ``node_modules/katex/dist``), the
  iframe-worker shim when installed, and the raw trace at ``trace/<name>.trace``.
- ``on_page_markdown``: renders the page through ``diagrams.page_render`` (strict,
  comment delimiters ``<#-- --#>``). Globals: ``tv``, ``diagram``, ``table``, ``trace``,
  ``raw_trace``, ``learner_report``, ``cite`` (``extra.references``). Any failure raises
  ``PageError`` whose ``str`` is ``docs/page.md:LINE: message``.
- ``on_post_page``/``on_post_template``: strip ``<meta name="generator">`` so no tool
  version string reaches the site.
Errors are ``HookError`` (a ``SiteError`` that MkDocs' own CLI also reports on one line).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from diagrams.citations import load_references, render_citation
from diagrams.errors import SiteError
from diagrams.format import traced
from diagrams.page_render import HookError, PageError, fenced, front_matter_lines, render_page
from diagrams.paths import DEFAULT_GENERATED, DEFAULT_REPORT, DEFAULT_TRACE, TRACE_URL
from diagrams.trace import Trace, load_trace

KATEX_DIST = "node_modules/katex/dist"
KATEX_FILES = ("katex.min.js", "katex.min.css")
SHIM_SRC = "node_modules/iframe-worker/shim/index.js"
SHIM_URL = "assets/vendor/iframe-worker/shim.js"
_GENERATOR = re.compile(r'[ \t]*<meta name="generator" content="[^"]*">\n?')
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


@dataclass(frozen=True)
class SiteContext:
    """What every page may use: the trace, the report and the generated artefacts."""

    trace: Trace
    trace_path: Path
    report: str | None
    generated: Path

    def page_globals(self) -> dict[str, Any]:
        """The Jinja globals available to every page."""
        return {
            "tv": lambda path, fmt="exact": traced(self.trace, path, fmt),
            "diagram": self.diagram,
            "table": self.table,
            "trace": self.trace,
            "raw_trace": lambda: fenced(self.trace.text, "text"),
            "learner_report": self.learner_report,
        }

    def learner_report(self) -> Markup:
        """The learner report as a code block, or empty when none was supplied."""
        return Markup("") if self.report is None else fenced(self.report, "text")

    def _generated(self, name: str, suffix: str, what: str) -> str:
        path = self.generated / f"{name}{suffix}"
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name) or not path.is_file():
            known = sorted(p.stem for p in self.generated.glob(f"*{suffix}"))
            raise PageError("<page>", None, f"unknown {what} {name!r} (known: {', '.join(known)})")
        return path.read_text(encoding="utf-8")

    def diagram(self, name: str) -> Markup:
        """The inline SVG of diagram ``name`` in a scrollable, labelled wrapper."""
        svg = "\n".join(line for line in self._generated(name, ".svg", "diagram").splitlines()
                        if line.strip())
        found = _TITLE.search(svg)
        label = html.unescape(found.group(1)) if found else name
        return Markup(
            '<div class="diagram-scroll" tabindex="0" role="region" aria-label="{}">\n{}\n</div>'
        ).format(label, Markup(svg))

    def table(self, name: str) -> Markup:
        """The rendered HTML table ``name``, wrapped like Material wraps tables."""
        body = self._generated(name, ".html", "table").strip()
        return Markup(
            '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">\n{}\n'
            "</div></div>"
        ).format(Markup(body))


def strip_generator(output: str) -> str:
    """Remove the generator meta tag (it carries tool version strings)."""
    return _GENERATOR.sub("", output)


def _root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path or "mkdocs.yml").resolve().parent


def _env_path(name: str, root: Path, default: str) -> Path:
    value = os.environ.get(name)
    return Path(value) if value else root / default


def load_context(root: Path) -> SiteContext:
    """Build the page context from the environment (see the module docstring)."""
    trace_path = _env_path("RESIDUAL_TRACE", root, DEFAULT_TRACE)
    if not trace_path.is_file():
        raise HookError(str(trace_path), None,
                        "trace not found; run `python build_site.py build` (it runs the engine)")
    trace = load_trace(trace_path)
    report_env = os.environ.get("RESIDUAL_REPORT")
    report = None
    if report_env is None and (root / DEFAULT_REPORT).is_file():
        report = (root / DEFAULT_REPORT).read_text(encoding="utf-8")
    elif report_env:
        try:
            report = Path(report_env).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise HookError(report_env, None, f"cannot read the learner report: {err}") from None
    generated = _env_path("RESIDUAL_GENERATED", root, DEFAULT_GENERATED)
    if "RESIDUAL_GENERATED" not in os.environ:
        from diagrams.cache import Cache
        from diagrams.pipeline import exclusive, generate

        with exclusive(root / "build"):
            generate(root, trace, generated, Cache(root / "build" / "cache"))
    return SiteContext(trace, trace_path, report, generated)


_state: dict[str, Any] = {}


def _reported(event: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a lower-level SiteError into a HookError that MkDocs reports on one line."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return event(*args, **kwargs)
        except HookError:
            raise
        except SiteError as err:
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
    _state["context"] = load_context(root)
    _state["references"] = load_references(config.extra)
    polyfills = [p for p in config.extra.get("polyfills", []) if "://" not in str(p)]
    if (root / SHIM_SRC).is_file():
        polyfills.append(SHIM_URL)
    config.extra["polyfills"] = polyfills
    return config


@event_priority(50)  # before plugins that index the files (htmlproofer), which run at 0
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
    if (root / SHIM_SRC).is_file():
        files.append(File.generated(config, SHIM_URL, abs_src_path=str(root / SHIM_SRC)))
    context: SiteContext = _state["context"]
    files.append(File.generated(config, TRACE_URL, abs_src_path=str(context.trace_path)))
    return files


@_reported
def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Render the page's Markdown as a Jinja template over the trace."""
    root: Path = _state["root"]
    source = page.file.abs_src_path
    name = os.path.relpath(source, root) if source else f"docs/{page.file.src_uri}"
    offset = 0
    if source:
        offset = front_matter_lines(Path(source).read_text(encoding="utf-8-sig"), markdown)
    context: SiteContext = _state["context"]
    references = _state["references"]
    page_globals = {**context.page_globals(),
                    "cite": lambda key: render_citation(references, key)}
    return render_page(markdown, name, page_globals, offset)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Drop the generator meta tag from every page."""
    return strip_generator(output)


def on_post_template(output_content: str, template_name: str, config: MkDocsConfig) -> str:
    """Drop the generator meta tag from theme templates such as ``404.html``."""
    return strip_generator(output_content)
