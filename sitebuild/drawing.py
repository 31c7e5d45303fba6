"""Drawing the generated files: every diagram, chart and table a page includes, from traces.

Contract: ``render_generated(traces)`` returns each generated file's name and bytes; it is a
pure function of the traces (and the drawing code): the build caches its result under a key of
exactly those (``pipeline.generated_key``). Graphviz diagrams run ``dot`` per diagram in
threads; matplotlib charts, the bulk of the time, are spread over forked worker processes
when that pays (``sitebuild.workers``); the files are the same either way.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from sitebuild.paths import CHAPTER_TRACE
from sitebuild.workers import worker_pool
from tracefile import TraceSet


def render_generated(traces: TraceSet) -> dict[str, bytes]:
    """Every diagram (SVG, via dot), chart (SVG, via matplotlib) and table (HTML) the pages
    show."""
    from diagrams.charts import chart_names
    from diagrams.plots import load_matplotlib
    from diagrams.svg import DIAGRAMS, diagram_trace, render_svg
    from diagrams.tables import TABLES, render_table

    trace = traces.traces[CHAPTER_TRACE]  # the tables' trace
    drawn = {name: drawn_from for name in DIAGRAMS
             if (drawn_from := diagram_trace(name, traces)) is not None}

    def one_diagram(name: str) -> tuple[str, bytes]:
        dot_fn, title, desc = DIAGRAMS[name]
        return f"{name}.svg", render_svg(dot_fn(drawn[name]), name, title, desc).encode("utf-8")

    names = chart_names(traces)
    if names:  # forked workers inherit the import instead of each paying for it
        load_matplotlib()
    with worker_pool(len(names), _set_worker_traces, (traces,)) as workers:
        charts = {name: workers.submit(_draw_chart, name) for name in names} if workers else {}
        # dot runs as a subprocess per diagram, so threads overlap the waiting.
        with ThreadPoolExecutor(max_workers=4) as pool:
            files = dict(pool.map(one_diagram, sorted(drawn)))
        for name in sorted(TABLES):
            files[f"{name}.html"] = str(render_table(name, trace)).encode("utf-8")
        for name in names:
            files[f"{name}.svg"] = charts[name].result() if workers else _draw_chart(name, traces)
    return files


#: The traces the chart workers draw from (set in each worker before it starts).
_WORKER_TRACES: TraceSet | None = None


def _set_worker_traces(traces: TraceSet) -> None:
    global _WORKER_TRACES
    _WORKER_TRACES = traces


def _draw_chart(name: str, traces: TraceSet | None = None) -> bytes:
    """One chart's SVG file (in a worker: from the traces it was started with)."""
    from diagrams.charts import render_chart

    traces = traces or _WORKER_TRACES
    assert traces is not None
    return render_chart(name, traces).encode("utf-8")
