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
  audit) can check each point.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from diagrams import charts_gradient_flow as gradient_flow
from diagrams.chart_spec import Chart, Paths
from diagrams.errors import RenderError
from diagrams.format import traced
from diagrams.plots import Plot, Series, render_plot
from tracefile import Trace, TraceSet

#: Every chart by name, from the labs' declaration modules.
CHARTS: dict[str, Chart] = {chart.name: chart for chart in gradient_flow.CHARTS}


def _chart(name: str) -> Chart:
    if name not in CHARTS:
        raise RenderError(f"<chart {name}>", None,
                          f"unknown chart {name!r}; known: {', '.join(sorted(CHARTS))}")
    return CHARTS[name]


def _points(trace: Trace, paths: Paths) -> list[tuple[str, float]]:
    """(path, value) of every point, from a vector path or a tuple of scalar paths."""
    if isinstance(paths, tuple):
        return [(path, float(trace.resolve(path))) for path in paths]
    values = trace.resolve(paths)
    if not isinstance(values, tuple):
        raise RenderError(trace.path, None, f"{paths} is a single value, not a curve")
    return [(f"{paths}[{index}]", float(value)) for index, value in enumerate(values)]


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
        xs, ys = _points(trace, line.x), _points(trace, line.y)
        if len(xs) != len(ys):
            raise RenderError(trace.path, None, f"chart {name!r}, line {line.label!r}: "
                              f"{len(xs)} x values but {len(ys)} y values")
        series.append(Series(line.label, tuple(v for _, v in xs), tuple(v for _, v in ys)))
    return Plot(name, chart.title, chart.desc, chart.xlabel, chart.ylabel, tuple(series),
                chart.xscale, chart.yscale)


def render_chart(name: str, traces: Trace | TraceSet) -> str:
    """The chart's inline SVG."""
    return render_plot(plot_of(name, traces))


def chart_names(traces: Trace | TraceSet | None = None) -> Sequence[str]:
    """Every chart's name (with ``traces``: of the charts whose trace is among them)."""
    if traces is None:
        return sorted(CHARTS)
    have = set(traces.traces) if isinstance(traces, TraceSet) else {traces.trace_id}
    return sorted(name for name, chart in CHARTS.items() if chart.trace in have)


def values_table(name: str, traces: Trace | TraceSet) -> Markup:
    """Every plotted value as a traced span. Lines that share their x values share rows (one
    row per x, one column per line); otherwise each line's points get rows of their own."""
    chart = _chart(name)
    trace = _trace_of(chart, traces)
    head = "".join(f'<th scope="col">{escape(line.label)}</th>' for line in chart.lines)
    columns = [_points(trace, line.y) for line in chart.lines]
    shared = all(line.x == chart.lines[0].x for line in chart.lines)
    rows = []
    if shared:
        for index, (x_path, _) in enumerate(_points(trace, chart.lines[0].x)):
            cells = "".join(f"<td>{traced(trace, column[index][0], chart.fmt)}</td>"
                            if index < len(column) else "<td></td>" for column in columns)
            rows.append(f'<tr><th scope="row">{traced(trace, x_path)}</th>{cells}</tr>')
    else:
        for number, line in enumerate(chart.lines):
            for (x_path, _), (y_path, _) in zip(_points(trace, line.x), columns[number],
                                                strict=True):
                cells = "".join(f"<td>{traced(trace, y_path, chart.fmt)}</td>" if other == number
                                else "<td></td>" for other in range(len(chart.lines)))
                rows.append(f'<tr><th scope="row">{traced(trace, x_path)}</th>{cells}</tr>')
    return Markup(
        f'<table class="chart-values" data-chart="{escape(name)}">'
        f'<thead><tr><th scope="col">{escape(chart.xlabel)}</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>")
