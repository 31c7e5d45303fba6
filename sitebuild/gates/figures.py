"""Diagram check (part of the "audit" gate): each inline diagram shows what the trace renders.

Contract: an inline ``<svg>`` of the article naming a registered figure (``data-diagram``)
must read exactly like that figure re-rendered from the checked trace: the same text nodes and
reader-visible attributes, in order, whitespace collapsed. Each difference is a finding at its
page line; an SVG with text that names no figure, or a figure that cannot be re-rendered (no
``dot``), is a finding too. Text-free icons pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser

from diagrams.errors import RenderError
from sitebuild.gates.pages import READER_ATTRS, Finding, attr
from tracefile import Trace, TraceSet
from tracefile.errors import LocatedError, shorten

GATE = "audit"
Item = tuple[str, str]  # (where: "<text>" or "@aria-label", reader-visible text)


@dataclass
class SvgText:
    """The reader-visible content of one inline SVG, in document order, with page lines."""

    line: int
    name: str | None
    items: list[Item] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)

    def start(self, tag: str, attrs: list[tuple[str, str | None]], line: int) -> None:
        """An element opens inside the SVG (the root included)."""
        for name in READER_ATTRS:
            value = attr(attrs, name)
            if value is not None and value.strip():
                self._add(f"@{name}", value, line)
        self.stack.append(tag)

    def end(self, tag: str) -> None:
        """An element closes; unclosed children close with it."""
        if tag in self.stack:
            del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]

    def data(self, text: str, line: int) -> None:
        """Text inside the SVG, attributed to its innermost element."""
        if text.strip():
            self._add(f"<{self.stack[-1] if self.stack else 'svg'}>", text, line)

    def _add(self, where: str, text: str, line: int) -> None:
        self.items.append((where, " ".join(text.split())))
        self.lines.append(line)


def svg_text(attrs: list[tuple[str, str | None]], line: int) -> SvgText:
    """A collector for an `<svg>` element opening on `line` with `attrs`."""
    name = attr(attrs, "data-diagram")
    collector = SvgText(line, name)
    collector.start("svg", attrs, line)
    return collector


def registered() -> list[str]:
    """Every figure the pages may inline: the Graphviz diagrams and the charts."""
    from diagrams.charts import chart_names
    from diagrams.svg import DIAGRAMS

    return [*DIAGRAMS, *chart_names()]


class _SvgParser(HTMLParser):
    """Reads one standalone SVG (a freshly rendered diagram) into an `SvgText`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.svg: SvgText | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.svg is None:
            if tag == "svg":
                self.svg = svg_text(attrs, self.getpos()[0])
        else:
            self.svg.start(tag, attrs, self.getpos()[0])

    def handle_endtag(self, tag: str) -> None:
        if self.svg is not None:
            self.svg.end(tag)

    def handle_data(self, data: str) -> None:
        if self.svg is not None:
            self.svg.data(data, self.getpos()[0])


class ExpectedDiagrams:
    """Each registered figure re-rendered from the traces, once and on demand; ``rendered``
    are SVGs the caller drew from them with the same code (a build's generate phase)."""

    def __init__(self, traces: Trace | TraceSet,
                 rendered: Mapping[str, str] | None = None) -> None:
        self.traces = traces
        self.rendered = dict(rendered or {})
        self._items: dict[str, list[Item] | str] = {}

    def items(self, name: str) -> list[Item] | str:
        """The diagram's reader-visible items, or why it could not be rendered."""
        if name not in self._items:
            from diagrams.charts import render_chart
            from diagrams.svg import DIAGRAMS, render_diagram

            try:
                parser = _SvgParser()
                svg = self.rendered.get(name) or (
                    render_diagram(name, self.trace_for(name)) if name in DIAGRAMS
                    else render_chart(name, self.traces))
                parser.feed(svg)
                parser.close()
                items = parser.svg.items if parser.svg else []
                labelled = self._as_labelled(name, items) if name in DIAGRAMS else items
                self._items[name] = labelled if items else "no <svg> rendered"
            except LocatedError as err:
                self._items[name] = str(err)
        return self._items[name]

    def trace_for(self, name: str) -> Trace:
        """The trace a diagram draws; a RenderError (reported as the diagram's finding) when
        the caller did not supply it."""
        from diagrams.svg import diagram_trace, diagram_trace_id

        trace = diagram_trace(name, self.traces)
        if trace is None:
            raise RenderError(f"<diagram {name}>", None, f"draws {diagram_trace_id(name)}, "
                              "which was not supplied")
        return trace

    def _as_labelled(self, name: str, items: list[Item]) -> list[Item] | str:
        """``items`` when Graphviz drew every label as written, else what it changed (it
        expands escapes such as \\N in labels, so drawing is not trusted to be verbatim)."""
        from diagrams.dot_parts import label_texts
        from diagrams.svg import DIAGRAMS

        drawn = sorted(" ".join(text.split()) for where, text in items if where == "<text>")
        labels = sorted(" ".join(text.split())
                        for text in label_texts(DIAGRAMS[name][0](self.trace_for(name))))
        if drawn == labels:
            return items
        missing = next((t for t in labels if t not in drawn), "?")
        extra = next((t for t in drawn if t not in labels), "?")
        return (f"Graphviz draws “{shorten(extra)}” where the trace's label reads "
                f"“{shorten(missing)}”")


def compare_svg(page: str, svg: SvgText, expected: ExpectedDiagrams) -> list[Finding]:
    """Findings for an inline SVG of `page` that differs from its diagram rendered afresh."""
    known = registered()
    if svg.name not in known:
        if not svg.items:
            return []  # an icon: no text a reader could take for a figure
        return [Finding(page, svg.line, GATE, f"inline SVG with text names no registered "
                        f"diagram (data-diagram={svg.name!r}; known: {', '.join(known)}): "
                        f"“{shorten(svg.items[0][1])}”")]
    want = expected.items(svg.name)
    if isinstance(want, str):
        return [Finding(page, svg.line, GATE, f"diagram {svg.name!r} cannot be re-rendered "
                        f"from the trace to compare: {want}")]
    return _differences(page, svg, want)


def _differences(page: str, svg: SvgText, want: list[Item]) -> list[Finding]:
    """One finding per replaced, extra or missing item (difflib's opcodes)."""
    got, findings = svg.items, []
    label = f"diagram {svg.name!r}"
    matcher = difflib.SequenceMatcher(a=got, b=want, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            mine = got[i1 + k] if i1 + k < i2 else None
            theirs = want[j1 + k] if j1 + k < j2 else None
            line = svg.lines[i1 + k] if mine else (svg.lines[i1 - 1] if i1 else svg.line)
            if mine and theirs:
                message = (f"{label}: {mine[0]} shows “{shorten(mine[1])}”, the trace renders "
                           f"“{shorten(theirs[1])}” ({theirs[0]})")
            elif mine:
                message = f"{label}: {mine[0]} “{shorten(mine[1])}” is not in the diagram " \
                          "rendered from the trace"
            else:
                message = f"{label}: {theirs[0]} “{shorten(theirs[1])}” of the diagram " \
                          "rendered from the trace is missing"
            findings.append(Finding(page, line, GATE, message))
    return findings
