"""What a page's template may use: the traces, the report and the generated files.

Role: the Jinja globals of every page (``SiteContext.page_globals``), which the MkDocs hook
(``sitebuild.hook``) hands to ``sitebuild.page_render``: ``tv`` (a traced value), ``diagram``,
``chart`` and ``table`` (the generated files: a ``Folder`` of stored ones, or a drawing still
in progress), ``trace`` and ``traces``, ``raw_trace``, ``learner_report``, ``explorer``,
``number_words``, ``trace_rules`` and ``wrappable``. The charts' drawings and values tables
and the explorer are marks in the page until ``insert_figures`` puts them there, after the
Markdown conversion. Failures raise
``PageError``, which the page renderer locates at the page's line.
"""

from __future__ import annotations

import html
import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from markupsafe import Markup

from diagrams.format import traced
from diagrams.svg import NARROW
from diagrams.words import number_words
from sitebuild.memo import remembered
from sitebuild.page_render import PageError, fenced
from sitebuild.paths import trace_url
from tracefile import TraceSet

_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>", re.S)

#: The kinds of figure a page marks for ``SiteContext.insert_figures``.
FIGURE_KINDS = ("svg", "values", "explorer")
#: Those put in before the site search indexes a page: what a reader may search for.
BEFORE_SEARCH = ("svg", "values")
#: Those put in after it: the explorer, which search excludes anyway (a megabyte of markup
#: the index's parser would read only to skip).
AFTER_SEARCH = ("explorer",)


class GeneratedFiles(Protocol):
    """The generated files a page may show: a ``Folder`` of stored ones, or a drawing still
    in progress (``sitebuild.drawing.Drawing``, whose ``read`` waits for the file)."""

    def names(self) -> list[str]:
        """Every file's name."""
        ...

    def read(self, name: str) -> bytes:
        """One file's bytes."""
        ...


@dataclass(frozen=True)
class Folder:
    """Generated files stored in a folder (``build/generated``); none if it is missing."""

    path: Path

    def names(self) -> list[str]:
        """Every file's name."""
        if not self.path.is_dir():
            return []
        return sorted(p.name for p in self.path.iterdir() if p.is_file())

    def read(self, name: str) -> bytes:
        """One file's bytes."""
        return (self.path / name).read_bytes()


@dataclass(frozen=True)
class SiteContext:
    """What every page may use: the traces, the report and the generated artefacts."""

    traces: TraceSet
    trace_paths: dict[str, Path]
    report: str | None
    files: GeneratedFiles
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

    def _has(self, file_name: str) -> bool:
        return file_name in self.files.names()

    def _known(self, name: str, suffix: str, what: str) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name) or not self._has(name + suffix):
            known = [n.removesuffix(suffix) for n in self.files.names() if n.endswith(suffix)]
            raise PageError("<page>", None, f"unknown {what} {name!r} (known: {', '.join(known)})")

    def _generated(self, name: str, suffix: str, what: str) -> str:
        self._known(name, suffix, what)
        return self.files.read(name + suffix).decode("utf-8")

    def diagram(self, name: str) -> Markup:
        """The inline SVG of diagram ``name`` in a labelled wrapper; where the diagram has a
        phone-width variant (``NAME-narrow``: a diagram, or a table), both, and the page's CSS
        shows the one that fits the screen."""
        wide = _region(*self._svg(name, "diagram"))
        narrow = f"{name}{NARROW}"
        if self._has(f"{narrow}.svg"):
            other = _region(*self._svg(narrow, "diagram"))
        elif self._has(f"{narrow}.html"):
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
        """A chart: its drawings (wide and phone-width), a caption, and its plotted values as
        a folded table of traced spans. The drawings and the table are marks here, replaced
        after the Markdown conversion (``insert_figures``): charts may still be being drawn
        while MkDocs converts the pages, and Markdown has no business inside an SVG or a
        table of hundreds of traced values."""
        from diagrams.charts import chart_title

        self._known(name, ".svg", "chart")
        self._known(f"{name}{NARROW}", ".svg", "chart")
        return Markup(
            '<figure class="residual-chart" id="{name}">\n'
            '<div class="figure-wide">{wide}</div>\n<div class="figure-narrow">{narrow}</div>\n'
            "<figcaption>{caption}</figcaption>\n"
            '<details class="chart-values"><summary>The plotted values</summary>\n'
            '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">{table}'
            "</div></div>\n</details>\n</figure>"
        ).format(name=name, wide=_mark("svg", name), narrow=_mark("svg", f"{name}{NARROW}"),
                 caption=caption or chart_title(name), table=_mark("values", name))

    def insert_figures(self, content: str, page: str, kinds: tuple[str, ...] = FIGURE_KINDS,
                       later: tuple[str, ...] = (),
                       memo: tuple[MutableMapping[Any, Any], object] | None = None) -> str:
        """The HTML of ``page`` with each mark of ``kinds`` replaced by what it stands for: a
        chart's SVG in a labelled region (waiting for a chart still being drawn), a chart's
        values table, the explorer. Marks of ``later`` are left for a later pass; any other
        mark left means Markdown did not pass it through as it was, which would leave a
        figure missing without a trace: that is an error. With ``memo`` (serve's: the memo
        and a digest of everything a page reads besides its Markdown, ``hook.context_digest``)
        each figure's markup is remembered under its kind and name while the digest holds."""
        table, inputs = memo if memo is not None else (None, None)

        def put(mark: re.Match[str]) -> str:
            kind, name = mark.groups()
            if kind not in kinds:
                return mark.group(0)
            return remembered(table, ("figure", kind, name), inputs,
                              lambda: self._inserted(kind, name))

        content = _MARK.sub(put, content)
        left = sum(match.group(1) in later for match in _MARK.finditer(content))
        if content.count(_MARK_WORD) != left:
            raise PageError(page, None, "a figure's place was changed by the Markdown "
                            f"conversion (a mark {_MARK_WORD.strip()!r} is left); put the "
                            "figure in a block of its own")
        return content

    def _inserted(self, kind: str, name: str) -> str:
        if kind == "svg":
            return _region(*self._svg(name, "chart"))
        if kind == "values":
            from diagrams.charts import values_table

            return values_table(name, self.traces)
        from diagrams.explorer import render_explorer

        return render_explorer(self.traces.traces[name])

    def explorer(self) -> Markup:
        """The gradients lab's explorer (``diagrams.explorer``), rendered from its trace
        after the Markdown conversion (a megabyte of markup Markdown need not read)."""
        from diagrams.explorer import TRACE

        if TRACE not in self.traces.traces:
            raise PageError("<page>", None, f"the explorer needs trace {TRACE}")
        return _mark("explorer", TRACE)

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


#: What a mark holds first: no drawing's text or id has a space after a comment opener.
_MARK_WORD = "!--figure-slot "
_MARK = re.compile(rf"<{_MARK_WORD}(svg|values|explorer) ([a-z][a-z0-9-]*)-->")


def _mark(kind: str, name: str) -> Markup:
    """Where ``insert_figures`` puts a figure (``kind`` ``svg``, ``values`` or ``explorer``)
    named ``name``: an HTML comment, which Markdown passes through untouched."""
    return Markup(f"<{_MARK_WORD}{kind} {name}-->")


def _region(svg: str, label: str) -> Markup:
    """An inline SVG in a focusable, labelled region that scrolls sideways if it must."""
    return Markup(
        '<div class="diagram-scroll" tabindex="0" role="region" aria-label="{}">\n{}\n</div>'
    ).format(label, Markup(svg))
