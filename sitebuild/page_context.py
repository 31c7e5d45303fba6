"""What a page's template may use: the traces, the report and the generated files.

Contract: ``PageContext.page_globals(trace_id)`` are the Jinja globals of a page whose
unqualified trace paths name ``trace_id``: ``tv`` (a traced value), the figures put in place
whole and numbered (``diagram``, ``chart``, ``table``, ``equation``, and ``table_caption`` for
a Markdown table; ``ref`` names one, see ``sitebuild.numbering``), the ``explorer``, the traces
and report, ``rerun`` (the command that reruns an experiment), ``notebook`` (the link to a
lab's notebook), and the renderers of words, citations and versions. A failure raises
``PageError``; ``fenced`` is a code block no backtick run inside can close.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from diagrams.claim_reasons import decided_by
from diagrams.format import format_value, traced, traced_range, wrappable
from diagrams.shown_html import shown_html_script
from diagrams.svg import NARROW
from diagrams.words import claim_changes, claim_rule, number_words, trace_rules, verdict_term
from sitebuild.citations import PageCitations, Reference, pinned, render_pin
from sitebuild.notebooks import NOTEBOOKS
from sitebuild.numbering import Numbering
from sitebuild.paths import trace_url
from tracefile import Trace, TraceSet
from tracefile.errors import LocatedError


class PageError(LocatedError):
    """A page failed to render; ``path`` is the page file, ``line`` its line."""


def fenced(text: str, lang: str) -> Markup:
    """``text`` as a fenced code block whose fence no run of backticks inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"\n{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}\n")


#: How prose shows a traced value unless the page asks otherwise (`tv(path, "exact")`): four
#: significant figures; the popover keeps the value as stored.
PROSE_FORMAT = "sig4"
#: The keys of a record's middle value and its range over seeds.
SPREAD_KEYS = ("median", "low", "high")
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>", re.S)


@dataclass(frozen=True)
class PageContext:
    """What every page may use: the traces, the report and the generated artefacts."""

    traces: TraceSet
    report: str | None
    files: Mapping[str, bytes]  # the generated files by name (sitebuild.generated)
    references: dict[str, Reference]
    root: Path
    unverified: tuple[str, ...] = ()
    edition: str | None = None  # the PDF edition's path in the site, when one is printed

    def edition_link(self, page: str) -> str:
        """The link every page opens with to the PDF edition (none without one); ``page`` is
        the page's path under docs/."""
        if self.edition is None:
            return ""
        up = "../" * page.count("/")
        return (f'<p class="edition-link"><a href="{up}{self.edition}">The chapter and both '
                "labs as one PDF, for print</a></p>\n\n")

    def notebook_link(self, name: str, page: str) -> Markup:
        """A link to download the notebook ``notebooks/<name>.py`` becomes (sitebuild.notebooks),
        relative to ``page``; a name without a source lists the notebooks there are."""
        sources = self.root / NOTEBOOKS
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name) or not (sources / f"{name}.py").is_file():
            known = ", ".join(sorted(p.stem for p in sources.glob("*.py"))) or "none"
            raise PageError("<page>", None, f"notebook: {NOTEBOOKS}/ has no {name!r}.py (it has: "
                            f"{known})")
        return Markup('<a class="notebook-link" href="{}{}/{}.ipynb" download>{}.ipynb</a>'
                      ).format("../" * page.count("/"), NOTEBOOKS, name, name)

    def banner(self) -> str:
        """The warning every page opens with when a trace is not the engine's own run."""
        if not self.unverified:
            return ""
        names = ", ".join(f"`{trace_id}`" for trace_id in self.unverified)
        return (f'!!! danger "Unverified trace"\n    This site was built from trace files that '
                f"differ from a fresh run of the engine ({names}). Its numbers are what those "
                "files say, not what the engine computes.\n\n")

    def page_globals(self, trace_id: str, known: dict[str, tuple[str, int]] | None = None,
                     page: str = "") -> dict[str, Any]:
        """The Jinja globals of a page whose unqualified paths refer to ``trace_id``
        (``known``: the labels of its figures, tables and equations, from a first
        rendering; ``page``: the page's path under docs/, which links are relative to)."""
        if trace_id not in self.traces.traces:
            raise PageError("<page>", None, f"front matter names trace {trace_id!r}; the site "
                            f"has {', '.join(self.traces.traces)}")
        page_traces = TraceSet(self.traces.traces, trace_id)
        trace = page_traces.traces[trace_id]
        numbering = Numbering(known)
        return {
            "tv": lambda path, fmt=PROSE_FORMAT: traced(page_traces, path, fmt),
            "spread": lambda record, fmt=PROSE_FORMAT, keys=SPREAD_KEYS: spread(
                page_traces, record, fmt, keys),
            "decided_by": lambda key, fmt=PROSE_FORMAT: decided_by(page_traces, key, fmt),
            "seed_range": lambda path, fmt=PROSE_FORMAT: traced_range(page_traces, path, fmt),
            "diagram": lambda name: self.diagram(name, numbering),
            "chart": lambda name, caption="": self.chart(name, caption, numbering, page),
            "table": lambda name: self.table(name, numbering),
            "table_caption": lambda label, words: table_caption(label, words, numbering),
            "equation": lambda label, caller: equation(label, caller(), numbering),
            "ref": numbering,
            "rerun": lambda *names: rerun_command(trace, names),
            "notebook": lambda name: self.notebook_link(name, page),
            "trace": trace,
            "claims": trace.schema.claims,
            "traces": [(t, trace_url(t.trace_id)) for t in self.traces],
            "raw_trace_fold": lambda trace_id=trace_id: self.raw_trace_fold(trace_id, page),
            "learner_report": self.learner_report,
            "explorer": self.explorer,
            "number_words": number_words,
            "verdict_term": verdict_term,
            "claim_rule": claim_rule,
            "claim_changes": claim_changes,
            "trace_rules": trace_rules,
            "wrappable": wrappable,
            "cite": PageCitations(self.references),
            "pinned": lambda name: render_pin(name, pinned(self.root, name)),
        }

    def raw_trace_fold(self, trace_id: str, page: str) -> Markup:
        """A fold its script fills with the raw trace when it opens (``shown_file``);
        without JavaScript, a link to the published trace."""
        here = posixpath.dirname(page) or "."
        return Markup(
            '<details class="example" {shown} data-shown-html-fragment="listing/{trace_id}">'
            "<summary>The raw trace, record for record</summary>\n<p>Exactly as the site read "
            "it; hover over or focus any number on a page to see the record and key it came "
            'from.</p>\n<p class="shown-html__place">The trace is put here when this opens. '
            'Without JavaScript, <a href="{url}">open the trace file</a>.</p>\n</details>'
        ).format(shown=_shown_attrs("trace", trace_id, here), trace_id=trace_id,
                 url=posixpath.relpath(trace_url(trace_id), here))

    def learner_report(self) -> Markup:
        """The learner report as a code block, or empty when none was supplied."""
        return Markup("") if self.report is None else fenced(self.report, "text")

    def _generated(self, name: str, suffix: str, what: str) -> str:
        """A generated file's text; an unknown name lists the known ones."""
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name) or name + suffix not in self.files:
            known = [n.removesuffix(suffix) for n in sorted(self.files) if n.endswith(suffix)]
            raise PageError("<page>", None, f"unknown {what} {name!r} (known: {', '.join(known)})")
        return self.files[name + suffix].decode("utf-8")

    def diagram(self, name: str, numbering: Numbering) -> Markup:
        """The inline SVG of diagram ``name`` in a labelled wrapper, a numbered figure
        captioned with its title; where the diagram has a phone-width variant
        (``NAME-narrow``: a diagram, or a table), both, and the page's CSS shows the one that
        fits the screen."""
        svg, title = self._svg(name, "diagram")
        wide = _region(svg, title)
        narrow = f"{name}{NARROW}"
        other = (_region(*self._svg(narrow, "diagram")) if f"{narrow}.svg" in self.files
                 else self.table(narrow) if f"{narrow}.html" in self.files else None)
        drawn = wide if other is None else Markup(
            '<div class="figure-wide">\n{}\n</div>\n<div class="figure-narrow">\n{}\n</div>'
        ).format(wide, other)
        element_id = f"figure-{name}"
        return Markup('<figure class="diagram-figure" id="{id}">\n{drawn}\n'
                      "<figcaption>{label}. {title}</figcaption>\n</figure>").format(
            id=element_id, drawn=drawn, label=numbering.label("Figure", element_id),
            title=title)

    def _svg(self, name: str, what: str) -> tuple[str, str]:
        """A generated SVG without its blank lines, and its title (its name if it has none)."""
        svg = "\n".join(line for line in self._generated(name, ".svg", what).splitlines()
                        if line.strip())
        found = _TITLE.search(svg)
        return svg, html.unescape(found.group(1)) if found else name

    def chart(self, name: str, caption: str, numbering: Numbering, page: str = "") -> Markup:
        """A chart, a numbered figure: its phone-width drawing (a wider screen's script swaps
        in the wide one, from ``shown_file``), a caption (to which ``together_sentence`` adds
        the lines drawn on top of each other), and a fold its script fills with
        the plotted values when it opens (``shown_file`` too); ``page`` is the page's
        path, which links are relative to."""
        from diagrams.charts import chart_title, chart_trace, together_sentence

        self._generated(name, ".svg", "chart")  # an unknown name fails here, listing the known
        narrow = _region(*self._svg(f"{name}{NARROW}", "chart"))
        trace_id, here = chart_trace(name), posixpath.dirname(page) or "."
        return Markup(
            '<figure class="residual-chart" id="{name}" {wide}>\n'
            '<div class="chart-drawing">{narrow}</div>\n'
            '<figcaption id="{name}-caption">{label}. {caption}</figcaption>\n'
            '<details class="chart-values" {values} data-shown-html-fragment="values/{name}">'
            '<summary id="{name}-values">The plotted values</summary>\n'
            # A table of many series scrolls sideways in its own region, which the keyboard
            # can reach, rather than wrap a number; the region is named by its figure.
            '<div class="md-typeset__scrollwrap" role="region" tabindex="0" '
            'aria-labelledby="{name}-values {name}-caption">'
            '<div class="md-typeset__table"><p class="shown-html__place">Every value this '
            "chart plots, as a table, is put here when this opens. Without JavaScript they are "
            'in the <a href="{trace_page}">raw trace</a> on the Trace page.</p>'
            "</div></div>\n</details>\n</figure>"
        ).format(name=name, wide=_shown_attrs("charts", trace_id, here), narrow=narrow,
                 caption=Markup(" ").join(filter(None, (caption or chart_title(name),
                                                       together_sentence(name, self.traces)))),
                 label=numbering.label("Figure", name),
                 values=_shown_attrs("values", trace_id, here),
                 trace_page=f"{posixpath.relpath('trace.html', here)}#{trace_id}")

    def explorer(self) -> Markup:
        """The gradients lab's explorer (``diagrams.explorer``), rendered from its trace."""
        from diagrams.explorer import TRACE, render_explorer

        if TRACE not in self.traces.traces:
            raise PageError("<page>", None, f"the explorer needs trace {TRACE}")
        return Markup(render_explorer(self.traces.traces[TRACE]))

    def data_files(self) -> dict[str, bytes]:
        """The files a page's script loads (``diagrams.shown_html``), by their path in the
        site: the explorer's cells (``diagrams.explorer.DATA_FILE``) when its trace is among
        the traces, and a trace's raw listing, its charts' wide drawings and their plotted
        values, a file of each per trace (``shown_file``)."""
        from diagrams.charts import chart_names, chart_trace, values_table
        from diagrams.explorer import DATA_FILE, TRACE, render_explorer_data

        files: dict[str, bytes] = {}
        if TRACE in self.traces.traces:
            files[DATA_FILE] = render_explorer_data(self.traces.traces[TRACE]).encode("utf-8")
        wide: dict[str, dict[str, str]] = {}
        values: dict[str, dict[str, str]] = {}
        for name in chart_names(self.traces):
            if not name.endswith(NARROW) and f"{name}.svg" in self.files:
                trace_id = chart_trace(name)
                wide.setdefault(trace_id, {})[name] = str(_region(*self._svg(name, "chart")))
                values.setdefault(trace_id, {})[name] = str(values_table(name, self.traces))
        for trace in self.traces:
            # Focusable, as Material makes its own scrolling listings on load.
            listing = Markup('<div class="language-text highlight"><pre><span></span>'
                             '<code tabindex="0">{}'
                             "</code></pre></div>").format(trace.text)
            path, name = shown_file("trace", trace.trace_id)
            files[path] = shown_html_script(name, {"listing": {trace.trace_id: str(listing)}}
                                            ).encode("utf-8")
        for trace_id in wide:
            for kind, group, of in (("charts", "wide", wide), ("values", "values", values)):
                path, name = shown_file(kind, trace_id)
                files[path] = shown_html_script(name, {group: of[trace_id]}).encode("utf-8")
        return files

    def table(self, name: str, numbering: Numbering | None = None) -> Markup:
        """The rendered HTML table ``name``, wrapped like Material wraps tables; with a
        ``numbering``, a numbered table whose label opens its caption."""
        body = self._generated(name, ".html", "table").strip()
        element_id = ""
        if numbering is not None:
            if "<caption>" not in body:
                raise PageError("<page>", None, f"table {name!r} has no <caption> to number")
            element_id = f"table-{name}"
            body = body.replace("<caption>", Markup("<caption>{}. ").format(
                numbering.label("Table", element_id)), 1)
        return Markup(
            '<div class="md-typeset__scrollwrap"{}><div class="md-typeset__table">\n{}\n'
            "</div></div>"
        ).format(Markup(f' id="{element_id}"') if element_id else "", Markup(body))


def rerun_command(trace: Trace, names: tuple[str, ...]) -> Markup:
    """The command that prints the page's experiments ``names``' records (from ``records/``,
    or with ``--fresh`` from a new run), pasted at the repository's root."""
    known = trace.schema.experiments
    if not names or (unknown := [name for name in names if name not in known]):
        raise PageError("<page>", None, f"rerun: trace {trace.trace_id} has no experiment "
                        f"{(unknown[0] if names else '')!r} (it has: {', '.join(known)})")
    return Markup('<code class="rerun">./dev run {} {}</code>').format(trace.trace_id,
                                                                       " ".join(names))


def table_caption(label: str, words: str, numbering: Numbering) -> Markup:
    """The numbered caption of the Markdown table that follows it (a blank line between):
    ``{{ table_caption("verdicts", "Claims and their verdicts") }}``; ``ref("table-verdicts")``
    names it."""
    element_id = f"table-{label}"
    return Markup('<p class="table-caption" id="{}">{}. {}</p>').format(
        element_id, numbering.label("Table", element_id), words)


def equation(label: str, tex: str, numbering: Numbering) -> Markup:
    """Display math ``tex``, numbered: ``{% call equation("label") %}TeX{% endcall %}``."""
    element_id = f"equation-{label}"
    return Markup(
        '<div class="numbered-equation" id="{id}">\n<div class="arithmatex">\\[{tex}\\]</div>\n'
        "{number}\n</div>"
    ).format(id=element_id, tex=" ".join(str(tex).split()),
             number=numbering.label("Equation", element_id))


#: What a trace's on-demand files hold (``diagrams.shown_html``), and where each is published:
#: its charts' wide drawings, its charts' plotted values, its raw listing.
SHOWN_FILES = {"charts": "assets/charts/{}.js", "values": "assets/charts/{}-values.js",
               "trace": "assets/traces/{}.js"}


def shown_file(kind: str, trace_id: str) -> tuple[str, str]:
    """The path in the site of a trace's on-demand file of ``kind`` (``SHOWN_FILES``), and the
    name it files its HTML under."""
    return SHOWN_FILES[kind].format(trace_id), f"{kind}:{trace_id}"


def _shown_attrs(kind: str, trace_id: str, here: str) -> Markup:
    """The attributes naming a trace's on-demand file of ``kind`` from a page in ``here``."""
    path, name = shown_file(kind, trace_id)
    return Markup('data-shown-html="{}" data-shown-html-src="{}"').format(
        name, posixpath.relpath(path, here))


def _region(svg: str, label: str) -> Markup:
    """An inline SVG in a focusable, labelled region that scrolls sideways if it must."""
    return Markup(
        '<div class="diagram-scroll" tabindex="0" role="region" aria-label="{}">\n{}\n</div>'
    ).format(label, Markup(svg))


def spread(traces: TraceSet, record: str, fmt: str, keys: tuple[str, str, str]) -> Markup:
    """``MIDDLE (LOW–HIGH)`` from the keys ``keys`` of ``record``, each a traced value; the
    range is left out when its two ends show as the same number (it spans nothing), and an
    end that overflowed (a seed that diverged) reads "diverged"."""
    middle, low, high = (f"{record}.{key}" for key in keys)
    shown = [traced_range(traces, path, fmt) for path in (middle, low, high)]
    if _same_number(*(format_value(traces.resolve(path), fmt) for path in (low, high))):
        return shown[0]
    return Markup("{} ({}–{})").format(*shown)


def _same_number(one: str, other: str) -> bool:
    """Whether two shown values read as one number ("1" and "1.000" do, "50%" and "50.0%")."""
    if one == other:
        return True
    def number(shown: str) -> float:
        return float(shown.replace("\u2212", "-").removesuffix("%"))

    try:
        return number(one) == number(other)
    except ValueError:
        return False
