"""MkDocs hook: every page in ``docs/`` is a Jinja template over the parsed traces.

Role: the single rendering path from traces to pages. Pages never hold a number; they
name a trace value (``{{ tv("FORWARD.output") }}``) and this hook inserts it.

Contract (MkDocs events):
- ``on_config``: reads its settings from ``config.extra["build"]`` (``BuildSettings``, set by
  ``build_site.py`` on the loaded config; no environment variables): the trace files by id,
  the learner report (``None``: not supplied), the generated diagrams/tables folder and, when
  the build parsed them already, the parsed traces. Without them (a plain ``mkdocs build``/
  ``mkdocs serve``) it takes every declared trace from ``build/trace/`` and first brings the
  generated files up to date through the cache. It also replaces the offline plugin's CDN
  polyfill by the vendored one, so no page requests another host.
- ``on_files``: adds vendored KaTeX (from ``node_modules/katex/dist``), the iframe-worker shim
  when installed, and every raw trace at ``trace/<id>.trace``.
- ``on_page_markdown``: renders the page through ``sitebuild.page_render`` (strict, comment
  delimiters ``<#-- --#>``). Globals: ``tv``, ``diagram``, ``table``, ``trace`` (the page's
  trace: the chapter's, or the one its front matter names with ``trace: ID``), ``traces``
  (every trace, for the Trace page), ``raw_trace``, ``learner_report``, ``explorer`` (the
  gradients lab's explorer, ``diagrams.explorer``), ``number_words`` (a position in words,
  ``diagrams.words``: a row's place is not a traced value, and pages show no untraced digit),
  ``wrappable`` (a name as inline code that may wrap after ``=`` or ``.``), ``cite``
  (``extra.references``), ``pinned`` (a package's version, from the lock). Any failure
  raises ``PageError`` whose ``str`` is ``docs/page.md:LINE: message``. Given a page memo
  (``BuildSettings.page_memo``: serve's, ``sitebuild.warm``), a page whose Markdown, trace and
  inputs (``context_digest``) are unchanged since the memo's last build is not rendered again.
- ``on_post_page``/``on_post_template``: strip ``<meta name="generator">`` so no tool
  version string reaches the site.
Errors are ``HookError`` (a ``LocatedError`` that MkDocs' own CLI also reports on one line).
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

from diagrams.format import traced
from diagrams.svg import NARROW
from diagrams.words import number_words
from sitebuild.citations import load_references, render_citation
from sitebuild.lockfile import LOCK, pinned, render_pin
from sitebuild.page_render import HookError, PageError, fenced, front_matter_lines, render_page
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
from tracefile import SCHEMAS, TraceSet, load_trace
from tracefile.errors import LocatedError

KATEX_DIST = "node_modules/katex/dist"
KATEX_FILES = ("katex.min.js", "katex.min.css")
SHIM_SRC = "node_modules/iframe-worker/shim/index.js"
SHIM_URL = "assets/vendor/iframe-worker/shim.js"
_GENERATOR = re.compile(r'[ \t]*<meta name="generator" content="[^"]*">\n?')
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>", re.S)


@dataclass(frozen=True)
class SiteContext:
    """What every page may use: the traces, the report and the generated artefacts."""

    traces: TraceSet
    trace_paths: dict[str, Path]
    report: str | None
    generated: Path
    unverified: tuple[str, ...] = ()

    def banner(self) -> str:
        """The warning every page opens with when a trace is not the engine's own run."""
        if not self.unverified:
            return ""
        names = ", ".join(f"`{trace_id}`" for trace_id in self.unverified)
        return (f'!!! danger "Unverified trace"\n    This site was built from trace files that '
                f"differ from a fresh run of the engine ({names}). Its numbers are what those "
                "files say, not what the engine computes.\n\n")

    def page_globals(self, trace_id: str) -> dict[str, Any]:
        """The Jinja globals of a page whose unqualified paths refer to ``trace_id``."""
        if trace_id not in self.traces.traces:
            raise PageError("<page>", None, f"front matter names trace {trace_id!r}; the site "
                            f"has {', '.join(self.traces.traces)}")
        page_traces = TraceSet(self.traces.traces, trace_id)
        trace = page_traces.traces[trace_id]
        return {
            "tv": lambda path, fmt="exact": traced(page_traces, path, fmt),
            "diagram": self.diagram,
            "chart": self.chart,
            "table": self.table,
            "trace": trace,
            "traces": [(t, trace_url(t.trace_id)) for t in self.traces],
            "raw_trace": lambda trace_id=trace_id: fenced(
                self.traces.traces[trace_id].text, "text"),
            "learner_report": self.learner_report,
            "explorer": self.explorer,
            "number_words": number_words,
            "trace_rules": trace_rules,
            "wrappable": wrappable,
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
        """The inline SVG of diagram ``name`` in a labelled wrapper; where the diagram has a
        phone-width variant (``NAME-narrow``: a diagram, or a table), both, and the page's CSS
        shows the one that fits the screen."""
        wide = _region(*self._svg(name, "diagram"))
        narrow = self.generated / f"{name}{NARROW}"
        if narrow.with_suffix(".svg").is_file():
            other = _region(*self._svg(f"{name}{NARROW}", "diagram"))
        elif narrow.with_suffix(".html").is_file():
            other = self.table(f"{name}{NARROW}")
        else:
            return wide
        return Markup('<div class="figure-wide">\n{}\n</div>\n<div class="figure-narrow">\n{}\n'
                      "</div>").format(wide, other)

    def _svg(self, name: str, what: str) -> tuple[str, str]:
        """A generated SVG without its blank lines, and its title (its name if it has none)."""
        svg = "\n".join(line for line in self._generated(name, ".svg", what).splitlines()
                        if line.strip())
        found = _TITLE.search(svg)
        return svg, html.unescape(found.group(1)) if found else name

    def chart(self, name: str, caption: str = "") -> Markup:
        """A chart: its SVG (from the generated files), a caption, and its plotted values as a
        folded table of traced spans."""
        from diagrams.charts import values_table

        wide, label = self._svg(name, "chart")
        return Markup(
            '<figure class="residual-chart" id="{name}">\n'
            '<div class="figure-wide">{wide}</div>\n<div class="figure-narrow">{narrow}</div>\n'
            "<figcaption>{caption}</figcaption>\n"
            '<details class="chart-values"><summary>The plotted values</summary>\n'
            '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">{table}'
            "</div></div>\n</details>\n</figure>"
        ).format(name=name, wide=_region(wide, label),
                 narrow=_region(*self._svg(f"{name}{NARROW}", "chart")),
                 caption=caption or label, table=values_table(name, self.traces))

    def explorer(self) -> Markup:
        """The gradients lab's explorer (``diagrams.explorer``), rendered from its trace."""
        from diagrams.explorer import TRACE, render_explorer

        if TRACE not in self.traces.traces:
            raise PageError("<page>", None, f"the explorer needs trace {TRACE}")
        return render_explorer(self.traces.traces[TRACE])

    def table(self, name: str) -> Markup:
        """The rendered HTML table ``name``, wrapped like Material wraps tables."""
        body = self._generated(name, ".html", "table").strip()
        return Markup(
            '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">\n{}\n'
            "</div></div>"
        ).format(Markup(body))


def wrappable(text: str) -> Markup:
    """``text`` as inline code that may wrap after an equals sign or a dot (a ``<wbr>``
    there) as well as after a hyphen: a name in a table column a phone makes narrow."""
    return Markup("<code>{}</code>").format(Markup("<wbr>").join(re.split(r"(?<=[=.])", text)))


def trace_rules() -> list[str]:
    """The reader's rules (``tracefile.rules``), their limits spelled out in words."""
    from tracefile.rules import LIMITS, RULES

    texts = []
    for rule in RULES:
        text = rule.text
        for name, value in LIMITS.items():
            text = text.replace(name, number_words(value))
        texts.append(text)
    return texts


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


def _region(svg: str, label: str) -> Markup:
    """An inline SVG in a focusable, labelled region that scrolls sideways if it must."""
    return Markup(
        '<div class="diagram-scroll" tabindex="0" role="region" aria-label="{}">\n{}\n</div>'
    ).format(label, Markup(svg))


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
    if not settings.generated_ready:
        from sitebuild.cache import Cache
        from sitebuild.pipeline import exclusive, generate

        with exclusive(root / "build"):
            generate(root, trace_set, settings.generated, Cache(root / "build" / "cache"))
    return SiteContext(trace_set, dict(settings.traces), report, settings.generated,
                       tuple(getattr(settings, "unverified", ())))


def context_digest(root: Path, context: SiteContext, references: Any) -> str:
    """A digest of everything a page's rendering reads besides its own Markdown: the traces,
    the report, the generated figures and tables, the bibliography and the lock."""
    from sitebuild.cache import input_key

    parts: list[tuple[str, str | bytes]] = [
        ("unverified and references", repr((context.unverified, references))),
        ("report", context.report or ""),
        *((f"trace {tid}", t.text) for tid, t in sorted(context.traces.traces.items()))]
    for path in [root / LOCK, *sorted(context.generated.iterdir())]:
        parts.append((f"file {path.name}", path.read_bytes() if path.is_file() else b""))
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
    page_globals = {**context.page_globals(page.meta.get("trace", CHAPTER_TRACE)),
                    "pinned": lambda name: render_pin(name, pinned(root, name)),
                    "cite": lambda key: render_citation(references, key)}
    memo: dict[str, Any] | None = _state["page_memo"]
    key = (markdown, offset, page.meta.get("trace", CHAPTER_TRACE), _state.get("inputs"))
    if memo is not None and name in memo and memo[name][0] == key:
        rendered = memo[name][1]
    else:
        rendered = render_page(markdown, name, page_globals, offset)
        if memo is not None:
            memo[name] = (key, rendered)
    # The banner goes after any front matter MkDocs already removed: line numbers in errors
    # still count from the page's own first line.
    return context.banner() + rendered


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Drop the generator meta tag from every page."""
    return strip_generator(output)


def on_post_template(output_content: str, template_name: str, config: MkDocsConfig) -> str:
    """Drop the generator meta tag from theme templates such as ``404.html``."""
    return strip_generator(output_content)
