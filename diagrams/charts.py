"""Charts of traced curves: declarations, their SVG, and the folded table of plotted values.

Contract:
- A ``Chart`` (``diagrams.chart_spec``) names its trace and, per line, the value paths of its x
  and y vectors (a ``vector`` or ``shape`` value, or a list of scalar paths); nothing else can
  reach a plot. ``CHARTS`` maps every chart's name to its declaration, gathered from the
  labs' modules (``charts_*.py``).
- ``render_chart(name, traces)`` is the chart's SVG (``diagrams.plots``), a pure function of
  the traces: the build renders it once into the generated files and the figure check renders
  it again to compare. Tick labels are matplotlib's, derived from the plotted (traced) range.
- ``values_table(name, traces)`` is the chart's plotted values as an HTML table in which every
  value is a traced span (``diagrams.format.traced``), so the reader (and the provenance
  audit) can check each point. A line plotted against positions (``chart_spec.POSITIONS``)
  names its rows by position in words; a line with a band adds a low and a high column; lines
  whose x values are equal share rows, named by the first line's x paths.
- Positions count from ``Line.first`` (one unless a line says zero: a vector whose first value
  is the state before any block); lines share rows only when their positions start alike.
- A value path ``KIND[*].key`` (``RANDOM-PATH[*].norm``) names that key of every record of a
  keyed kind, in trace order.
- ``drawn_together(name, traces)`` names the lines one hides another in (``TOGETHER``), and
  ``together_sentence`` says so in words, for the chart's caption: no two lines look like one
  without the figure saying it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from markupsafe import Markup, escape

from diagrams import charts_gradient_flow as gradient_flow
from diagrams import charts_residual_stream as residual_stream
from diagrams.chart_spec import POSITIONS, Chart, Line, Paths, Yardstick
from diagrams.errors import RenderError
from diagrams.format import traced
from diagrams.looks import look
from diagrams.plots import Plot, Series, render_plot
from diagrams.svg import NARROW
from diagrams.words import number_words
from tracefile import Trace, TraceSet
from tracefile.value_paths import key_text
from tracefile.values import is_real

#: In a value path, ``KIND[*].key`` names that key of every record of ``KIND``.
COLUMN = "[*]"

#: Every chart by name, from the labs' declaration modules.
CHARTS: dict[str, Chart] = {chart.name: chart
                            for chart in (*gradient_flow.CHARTS, *residual_stream.CHARTS)}
#: The file that declares each chart, as an error names it.
DECLARED_IN = {chart.name: f"{module.__name__.replace('.', '/')}.py"
               for module in (gradient_flow, residual_stream) for chart in module.CHARTS}


def _chart(name: str) -> Chart:
    if name not in CHARTS:
        raise RenderError(f"<chart {name}>", None,
                          f"unknown chart {name!r}; known: {', '.join(sorted(CHARTS))}")
    return CHARTS[name]


def chart_title(name: str) -> str:
    """The chart's title: its drawings' accessible name and its default caption."""
    return _chart(name).title


def chart_trace(name: str) -> str:
    """The id of the trace the chart draws."""
    return _chart(name).trace


def _points(trace: Trace, paths: Paths) -> list[tuple[str, float]]:
    """(path, value) of every point, from a vector path, a tuple of scalar paths or a column
    ``KIND[*].key`` (that key of every record of a keyed kind, in trace order)."""
    if isinstance(paths, str) and COLUMN in paths:
        paths = _column(trace, paths)
    if isinstance(paths, tuple):
        return [(path, float(trace.resolve(path))) for path in paths]
    values = trace.resolve(paths)
    if not isinstance(values, tuple):
        raise RenderError(trace.path, None, f"{paths} is a single value, not a curve")
    return [(f"{paths}[{index}]", float(value)) for index, value in enumerate(values)]


def _column(trace: Trace, path: str) -> tuple[str, ...]:
    kind, _, key = path.partition(COLUMN)
    spec = trace.schema.specs.get(kind)
    if spec is None or spec.keyed_by is None or not key.startswith("."):
        raise RenderError(trace.path, None, f"{path}: a column is KIND[*].key for a keyed "
                          "record kind of the trace")
    return tuple(f"{kind}[{key_text(spec, record)}]{key}"
                 for record in getattr(trace, spec.attr))


def _trace_of(chart: Chart, traces: Trace | TraceSet) -> Trace:
    if isinstance(traces, TraceSet):
        return traces.traces[chart.trace]
    if traces.trace_id != chart.trace:
        raise RenderError(traces.path, None, f"chart {chart.name!r} draws {chart.trace}")
    return traces


def plot_of(name: str, traces: Trace | TraceSet) -> Plot:
    chart = _chart(name)
    trace = _trace_of(chart, traces)
    series = []
    for line in chart.lines:
        ys = _points(trace, line.y)
        xs = _x_values(trace, line, len(ys))
        if len(xs) != len(ys):
            raise RenderError(trace.path, None, f"chart {name!r}, line {line.label!r}: "
                              f"{len(xs)} x values but {len(ys)} y values")
        low, high = _band(trace, line)
        series.append(Series(line.label, tuple(xs), tuple(v for _, v in ys), low, high,
                             look(line.look) if line.look else None))
    references = tuple((ref.label, _reference(trace, ref)[1]) for ref in chart.references)
    try:
        return Plot(name, chart.title, chart.desc, chart.xlabel, chart.ylabel, tuple(series),
                    xscale=chart.xscale, yscale=chart.yscale, size=chart.size,
                    references=references, ylim=_shared_ylim(chart, trace))
    except RenderError as err:  # a declaration no plot can draw: name where it is declared
        raise RenderError(DECLARED_IN[name], None, f"chart {name!r}: {err.message}") from None


def _reference(trace: Trace, reference: Yardstick) -> tuple[str, float]:
    """A yardstick's path and value (one number)."""
    value = trace.resolve(reference.y)
    if not is_real(value):
        raise RenderError(trace.path, None, f"yardstick {reference.label!r}: {reference.y} "
                          "must name one number")
    return reference.y, float(value)


def _y_extent(chart: Chart, trace: Trace) -> tuple[float, float]:
    """The least and largest finite y a chart draws: lines, bands and yardsticks."""
    values = [value for line in chart.lines for paths in (line.y, line.low, line.high)
              if paths is not None for _, value in _points(trace, paths)]
    values += [_reference(trace, reference)[1] for reference in chart.references]
    finite = [value for value in values if math.isfinite(value)]
    return min(finite), max(finite)


def _shared_ylim(chart: Chart, trace: Trace) -> tuple[float, float] | None:
    """One y range for a chart and those it shares it with (matplotlib's five per cent
    margins around all of their data), or None when it shares with none."""
    if not chart.shares_y_with:
        return None
    extents = [_y_extent(c, trace) for c in (chart, *map(_chart, chart.shares_y_with))]
    low, high = min(e[0] for e in extents), max(e[1] for e in extents)
    margin = 0.05 * (high - low)
    return low - margin, high + margin


#: Two lines whose values at every shared x lie closer than this share of the y axis's extent
#: (on its scale) are drawn on top of each other: a line and its marker are about that thick.
TOGETHER = 0.01


def drawn_together(name: str, traces: Trace | TraceSet) -> list[tuple[str, ...]]:
    """The groups of lines (by label, in declared order) drawn on top of the group's first:
    plotted at the same x values and, at every one they draw, within ``TOGETHER`` of the y
    axis's extent of it (a log axis measured in decades)."""
    plot = plot_of(name, traces)
    on_axis = _log10 if plot.yscale == "log" else float
    shown = [y for series in plot.series for ys in (series.y, series.low, series.high)
             for y in ys or ()] + [y for _, y in plot.references] + list(plot.ylim or ())
    finite = [v for v in map(on_axis, shown) if math.isfinite(v)]
    reach = TOGETHER * ((max(finite) - min(finite)) if finite else 1.0)

    def as_one(first: Series, series: Series) -> bool:
        if first.x != series.x:
            return False
        drawn = [(on_axis(a), on_axis(b)) for a, b in zip(first.y, series.y, strict=True)]
        drawn = [(a, b) for a, b in drawn if math.isfinite(a) or math.isfinite(b)]
        return bool(drawn) and all(abs(a - b) < reach for a, b in drawn)  # nan compares False

    groups: list[list[Series]] = []
    for series in plot.series:
        group = next((group for group in groups if as_one(group[0], series)), None)
        if group is None:
            groups.append([series])
        else:
            group.append(series)
    return [tuple(series.label for series in group) for group in groups if len(group) > 1]


def together_sentence(name: str, traces: Trace | TraceSet) -> str:
    """The caption's sentence naming the lines drawn on top of each other, or ``""``."""
    sentences = []
    for group in drawn_together(name, traces):
        labels = [f"‘{label}’" for label in group]
        named = ", ".join(labels[:-1]) + f" and {labels[-1]}"
        sentences.append(f"The lines {named} lie within a line's width of each other at every "
                         "point, so they are drawn on top of each other.")
    return " ".join(sentences)


def _log10(value: float) -> float:
    return math.log10(value) if value > 0 else math.nan


def _x_values(trace: Trace, line: Line, count: int) -> list[float]:
    if line.x is POSITIONS:
        return [float(position) for position in range(line.first, line.first + count)]
    return [value for _, value in _points(trace, line.x)]


def _band(trace: Trace, line: Line) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    if line.low is None or line.high is None:
        return None, None
    return (tuple(v for _, v in _points(trace, line.low)),
            tuple(v for _, v in _points(trace, line.high)))


# NARROW (diagrams.svg): the suffix of a chart's phone-width rendering too, a narrower figure
# of the same values.


def render_chart(name: str, traces: Trace | TraceSet) -> str:
    """The chart's inline SVG (``NAME-narrow``: its phone-width rendering). A declaration
    no plot can draw is an error naming the file that declares the chart (``plot_of``); a
    drawing that fails after that (matplotlib's own output refused) names ``<plot NAME>``."""
    narrow = name.endswith(NARROW) and name.removesuffix(NARROW) in CHARTS
    plot = plot_of(name.removesuffix(NARROW) if narrow else name, traces)
    return render_plot(replace(plot, plot_id=name, narrow=True) if narrow else plot)


def chart_names(traces: Trace | TraceSet | None = None) -> Sequence[str]:
    """Every chart's name and its phone-width rendering's (with ``traces``: of the charts
    whose trace is among them)."""
    if traces is None:
        names = list(CHARTS)
    else:
        have = set(traces.traces) if isinstance(traces, TraceSet) else {traces.trace_id}
        names = [name for name, chart in CHARTS.items() if chart.trace in have]
    return sorted([*names, *(f"{name}{NARROW}" for name in names)])


def values_table(name: str, traces: Trace | TraceSet) -> Markup:
    """Every plotted value as a traced cell (the ``td`` is the traced element). Lines that
    share their x values share rows (one row per x, one column per line, and a low and a high
    column after a line with a band); otherwise each line's points get rows of their own."""
    chart = _chart(name)
    trace = _trace_of(chart, traces)
    head, columns, owner = [], [], []
    for number, line in enumerate(chart.lines):
        head.append(f'<th scope="col">{escape(line.label)}</th>')
        columns.append(_points(trace, line.y))
        owner.append(number)
        if line.low is not None and line.high is not None:
            for side, paths in (("low", line.low), ("high", line.high)):
                head.append(f'<th scope="col">{escape(line.label)}, {side}</th>')
                columns.append(_points(trace, paths))
                owner.append(number)
    shared = all(_same_x(trace, line, chart.lines[0]) for line in chart.lines)
    rows = []
    if shared:
        count = max(len(column) for column in columns)
        for index, row_head in enumerate(_row_heads(trace, chart.lines[0], count)):
            cells = "".join(traced(trace, column[index][0], chart.fmt, "td")
                            if index < len(column) else "<td></td>" for column in columns)
            rows.append(f'<tr><th scope="row">{row_head}</th>{cells}</tr>')
    else:
        for number, line in enumerate(chart.lines):
            mine = [c for c, o in zip(columns, owner, strict=True) if o == number]
            for index, row_head in enumerate(_row_heads(trace, line, len(mine[0]))):
                cells = iter(mine)
                row = "".join(traced(trace, next(cells)[index][0], chart.fmt, "td")
                              if o == number else "<td></td>" for o in owner)
                rows.append(f'<tr><th scope="row">{row_head}</th>{row}</tr>')
    return Markup(
        f'<table class="chart-values" data-chart="{escape(name)}">'
        f'<thead><tr><th scope="col">{escape(chart.xlabel)}</th>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody>{_references_foot(chart, trace, len(columns))}</table>")


def _references_foot(chart: Chart, trace: Trace, columns: int) -> str:
    """The yardsticks as the table's foot: one row each, its value across the columns."""
    rows = "".join(f'<tr><th scope="row">{escape(ref.label)}</th><td colspan="{columns}">'
                   f"{traced(trace, _reference(trace, ref)[0], chart.fmt)}</td></tr>"
                   for ref in chart.references)
    return f"<tfoot>{rows}</tfoot>" if rows else ""


def _same_x(trace: Trace, line: Line, first: Line) -> bool:
    """Both lines are plotted against the same x values (positions, or equal traced values:
    the table then names each row by the first line's x paths)."""
    if line.x is POSITIONS or first.x is POSITIONS:
        return line.x is first.x and line.first == first.first
    return [v for _, v in _points(trace, line.x)] == [v for _, v in _points(trace, first.x)]


def _row_heads(trace: Trace, line: Line, count: int) -> list[Markup | str]:
    """The traced x values of a line (to four figures, as the page's prose shows them), or its
    positions in words."""
    if line.x is POSITIONS:
        return [number_words(position) for position in range(line.first, line.first + count)]
    return [traced(trace, path, "sig4") for path, _ in _points(trace, line.x)]
