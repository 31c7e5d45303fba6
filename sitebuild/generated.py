"""The generated files: every diagram, chart and table a page shows, drawn from the traces.

Contract: ``generate(traces, target, cache, key)`` returns the cache status and the files
(``<name>.svg`` per diagram and chart, ``<name>.html`` per table), a pure function of the
traces and the drawing code, cached under ``key`` (``generated_key``), written to ``target``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from sitebuild.cache import Cache, content_key, source_files
from sitebuild.errors import BuildError, last_line
from sitebuild.paths import CHAPTER_TRACE, dist_version
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


def generate(traces: TraceSet, target: Path, cache: Cache, key: str
             ) -> tuple[str, dict[str, bytes]]:
    """The generated files for ``traces`` (``key``: their ``generated_key``) and whether the
    cache had them."""
    files, status = cache.lookup("generated", key)
    if files is None:
        files = draw(traces)
        cache.store("generated", key, files)
    write_folder(target, files, listed=True)
    return status, files


def draw(traces: TraceSet) -> dict[str, bytes]:
    """Every diagram (SVG, via dot), chart (SVG, via matplotlib) and table (HTML)."""
    from diagrams.charts import chart_names, render_chart
    from diagrams.svg import DIAGRAMS, diagram_trace, render_diagram
    from diagrams.tables import TABLES, render_table

    files = {f"{name}.svg": render_diagram(name, trace).encode("utf-8") for name in DIAGRAMS
             if (trace := diagram_trace(name, traces)) is not None}
    chapter = traces.traces[CHAPTER_TRACE]  # the tables' trace
    files.update((f"{name}.html", str(render_table(name, chapter)).encode("utf-8"))
                 for name in TABLES)
    files.update((f"{name}.svg", render_chart(name, traces).encode("utf-8"))
                 for name in chart_names(traces))
    return dict(sorted(files.items()))


def dot_version() -> str:
    """``dot -V`` output; a clear one-line error when Graphviz is missing."""
    try:
        out = subprocess.run(["dot", "-V"], capture_output=True, encoding="utf-8",
                             errors="replace", timeout=30)
    except FileNotFoundError:
        raise BuildError("dot", "Graphviz `dot` is not on PATH; install Graphviz "
                         "(Debian: apt-get install graphviz)") from None
    except (OSError, subprocess.TimeoutExpired) as err:
        raise BuildError("dot", f"`dot -V` failed: {err}") from None
    if out.returncode != 0:
        raise BuildError("dot", f"`dot -V` exited with {out.returncode}: "
                         f"{last_line(out.stderr)}")
    return (out.stderr + out.stdout).strip()
