"""Drawing the generated files: every diagram, chart and table a page includes, from traces.

Contract: ``start(traces)`` yields a ``Drawing``: the diagrams and tables drawn at once, the
charts (the bulk of the time) still being drawn by forked worker processes when that pays
(``sitebuild.workers``); ``read(name)`` waits for the one file asked for, ``files()`` for all.
So a build can run MkDocs while the charts are drawn, the hook waiting for a chart only when
a page's figure is put in place. ``render_generated(traces)`` (every file at once) is
``start(traces)`` finished at once. Either way
the files are a pure function of the traces (and the drawing code), the same bytes whether
drawn by workers or in turn: the build caches them under a key of exactly those
(``pipeline.generated_key``). Graphviz diagrams run ``dot`` per diagram in threads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from sitebuild.paths import CHAPTER_TRACE
from sitebuild.workers import worker_pool
from tracefile import TraceSet


class Drawing:
    """The generated files of one set of traces, some perhaps still being drawn."""

    def __init__(self, ready: dict[str, bytes], pending: dict[str, Future[bytes]],
                 when_drawn: Callable[[], object] | None = None) -> None:
        self._ready = ready
        self._pending = pending
        self._when_drawn = when_drawn
        self._names = sorted([*ready, *pending])
        #: How many charts were handed to workers.
        self.charts = len(pending)

    def names(self) -> list[str]:
        """Every file's name, drawn or not yet."""
        return list(self._names)

    def read(self, name: str) -> bytes:
        """The file ``name``, once drawn (a chart's own error if drawing it failed)."""
        if name not in self._ready:
            self._ready[name] = self._pending.pop(name).result()
        return self._ready[name]

    def unfinished(self) -> int:
        """How many files are still being drawn."""
        return sum(not future.done() for future in self._pending.values())

    def files(self) -> dict[str, bytes]:
        """Every file, once all are drawn (the workers are then stopped: a worker process
        or its pool's thread left running would keep the build from forking others)."""
        files = {name: self.read(name) for name in self._names}
        if self._when_drawn is not None:
            self._when_drawn()
        return files


def render_generated(traces: TraceSet) -> dict[str, bytes]:
    """Every diagram (SVG, via dot), chart (SVG, via matplotlib) and table (HTML) the pages
    show."""
    with start(traces) as drawn:
        return drawn.files()


@contextmanager
def start(traces: TraceSet) -> Iterator[Drawing]:
    """The drawing of every generated file (see the module docstring). On leaving, charts
    not yet started are cancelled and the workers stopped."""
    from diagrams.charts import chart_names

    names = chart_names(traces)
    with worker_pool(len(names), _start_worker, (traces,)) as workers:
        pending = {f"{name}.svg": workers.submit(_draw_chart, name) for name in names
                   } if workers else {}
        files = _diagrams_and_tables(traces)
        if not workers:
            files.update((f"{name}.svg", _draw_chart(name, traces)) for name in names)
        yield Drawing(files, pending, workers.shutdown if workers else None)


def _diagrams_and_tables(traces: TraceSet) -> dict[str, bytes]:
    from diagrams.svg import DIAGRAMS, diagram_trace, render_svg
    from diagrams.tables import TABLES, render_table

    trace = traces.traces[CHAPTER_TRACE]  # the tables' trace
    drawn = {name: drawn_from for name in DIAGRAMS
             if (drawn_from := diagram_trace(name, traces)) is not None}

    def one_diagram(name: str) -> tuple[str, bytes]:
        dot_fn, title, desc = DIAGRAMS[name]
        return f"{name}.svg", render_svg(dot_fn(drawn[name]), name, title, desc).encode("utf-8")

    # dot runs as a subprocess per diagram, so threads overlap the waiting.
    with ThreadPoolExecutor(max_workers=4) as pool:
        files = dict(pool.map(one_diagram, sorted(drawn)))
    for name in sorted(TABLES):
        files[f"{name}.html"] = str(render_table(name, trace)).encode("utf-8")
    return files


#: The traces the chart workers draw from (set in each worker before it starts).
_WORKER_TRACES: TraceSet | None = None


def _start_worker(traces: TraceSet) -> None:
    """A chart worker's start: it imports matplotlib itself, at the same time as the other
    workers and as this process goes on to the diagrams and MkDocs, which never need it."""
    from diagrams.plots import load_matplotlib

    global _WORKER_TRACES
    _WORKER_TRACES = traces
    load_matplotlib()


def _draw_chart(name: str, traces: TraceSet | None = None) -> bytes:
    """One chart's SVG file (in a worker: from the traces it was started with)."""
    from diagrams.charts import render_chart

    traces = traces or _WORKER_TRACES
    assert traces is not None
    return render_chart(name, traces).encode("utf-8")
