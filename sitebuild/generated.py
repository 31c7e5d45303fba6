"""The generated files: every diagram, chart and table a page shows, drawn from the traces.

Contract: ``generate(root, traces, target, cache)`` returns the cache status and the files
(``<name>.svg`` per diagram and chart, ``<name>.html`` per table), a pure function of the
traces and the drawing code, cached under ``generated_key`` and written to ``target``. Charts
are drawn in worker processes when that pays, Graphviz diagrams in threads.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sitebuild.cache import Cache, content_key, source_files
from sitebuild.errors import BuildError, last_line
from sitebuild.paths import CHAPTER_TRACE, dist_version
from sitebuild.processes import worker_pool
from sitebuild.publish import write_folder
from tracefile import TraceSet

#: What the drawings depend on besides the traces (the trace text stands for the engine).
DRAWING_CODE = ("tracefile", "diagrams")
DRAWING_DISTRIBUTIONS = ("numpy", "jinja2", "markupsafe", "matplotlib")


def generated_key(root: Path, traces: TraceSet) -> str:
    """Exactly what the generated files depend on."""
    return content_key([
        *((f"trace:{trace.trace_id}", trace.text) for trace in traces), ("dot", dot_version()),
        *((f"version:{name}", dist_version(name)) for name in DRAWING_DISTRIBUTIONS),
        *source_files(root, [root / name for name in DRAWING_CODE])])


def generate(root: Path, traces: TraceSet, target: Path, cache: Cache,
             key: str | None = None) -> tuple[str, dict[str, bytes]]:
    """The generated files for ``traces`` and whether the cache had them (module doc)."""
    key = key or generated_key(root, traces)
    files, status = cache.lookup("generated", key)
    if files is None:
        files = draw(traces)
        cache.store("generated", key, files)
    write_folder(target, files)
    return status, files


def draw(traces: TraceSet) -> dict[str, bytes]:
    """Every diagram (SVG, via dot), chart (SVG, via matplotlib) and table (HTML)."""
    from diagrams.charts import chart_names

    names = chart_names(traces)
    with worker_pool(len(names), _start_worker, (traces,)) as workers:
        pending = {f"{name}.svg": workers.submit(_draw_chart, name) for name in names
                   } if workers else {}
        files = _diagrams_and_tables(traces)
        if workers:
            files.update((name, future.result()) for name, future in pending.items())
        else:
            files.update((f"{name}.svg", _draw_chart(name, traces)) for name in names)
    return dict(sorted(files.items()))


def _diagrams_and_tables(traces: TraceSet) -> dict[str, bytes]:
    from diagrams.svg import DIAGRAMS, diagram_trace, render_svg
    from diagrams.tables import TABLES, render_table

    trace = traces.traces[CHAPTER_TRACE]  # the tables' trace
    drawn = {name: drawn_from for name in DIAGRAMS
             if (drawn_from := diagram_trace(name, traces)) is not None}

    def one_diagram(name: str) -> tuple[str, bytes]:
        dot_fn, title, desc = DIAGRAMS[name]
        return f"{name}.svg", render_svg(dot_fn(drawn[name]), name, title, desc).encode("utf-8")

    with ThreadPoolExecutor(max_workers=4) as pool:
        files = dict(pool.map(one_diagram, sorted(drawn)))
    for name in sorted(TABLES):
        files[f"{name}.html"] = str(render_table(name, trace)).encode("utf-8")
    return files


#: The traces the chart workers draw from (set in each worker as it starts).
_WORKER_TRACES: TraceSet | None = None


def _start_worker(traces: TraceSet) -> None:
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


def dot_version() -> str:
    """``dot -V`` output; a clear one-line error when Graphviz is missing."""
    try:
        out = subprocess.run(["dot", "-V"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise BuildError("dot", "Graphviz `dot` is not on PATH; install Graphviz "
                         "(Debian: apt-get install graphviz)") from None
    except (OSError, subprocess.TimeoutExpired) as err:
        raise BuildError("dot", f"`dot -V` failed: {err}") from None
    if out.returncode != 0:
        raise BuildError("dot", f"`dot -V` exited with {out.returncode}: "
                         f"{last_line(out.stderr)}")
    return (out.stderr + out.stdout).strip()
