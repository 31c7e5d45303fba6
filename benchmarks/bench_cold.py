"""Hand-run benchmark: where a cold build's CPU goes, and the least wall time the cores allow.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_cold.py [--repeat N]

``bench_site.py`` times each scenario's wall clock against the floor (plain MkDocs of the very
same pages). This one asks what no schedule can beat. On a copy of the project it measures, as
fresh processes interleaved round by round, the wall time and the CPU time (user + system of
the process and every process it waited for: chart workers, gate workers, ``dot``) of:
- ``floor``: plain ``mkdocs build`` of the rendered pages (``build/pages``, which mkdocs.yml names);
- ``cold-cached``: ``build_site.py build`` with only the engine's runs cached;
- ``cold-drawn``: the same with the figures' cache entry kept too (everything but drawing);
and, in one process of the project's interpreter, matplotlib's import and the charts drawn
from the built traces by ``diagrams.charts.render_chart``:
- ``first use``: what the first round costs beyond a later one (matplotlib's font list, the
  formatter classes), which each chart worker pays once;
- ``as drawn``: as the site draws them (laid out, measured, drawn: three passes each);
- ``one pass``: the same code with the layout and the measuring pass turned into no-ops, so
  each chart is drawn once, unlaid-out (labels may fall off the figure): the least matplotlib
  and our SVG clean-up can spend on these charts, whatever the layout.
It then prints the least wall time a build doing that work could take on this machine's
cores (CPU ÷ cores, as if every core were busy from start to end) as a ratio to the floor.
Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_site import ENV, ROOT, Project, empty_build

SCENARIOS = ("floor", "cold-cached", "cold-drawn")

# Run in the copy with its interpreter: import matplotlib, then draw every chart of the built
# traces, as drawn and in one pass; prints the count and four CPU times in seconds.
CHARTS = """
import sys, time
from pathlib import Path
from tracefile import TraceSet, load_trace
from sitebuild.paths import CHAPTER_TRACE
from diagrams.charts import chart_names, render_chart
from diagrams.plots import load_matplotlib
rounds = int(sys.argv[1])
start = time.process_time()
load_matplotlib()
imported = time.process_time() - start
found = {path.stem: load_trace(path) for path in sorted(Path("build/trace").glob("*.trace"))}
traces = TraceSet(found, CHAPTER_TRACE)
names = chart_names(traces)

def draw_all():
    start = time.process_time()
    for name in names:
        render_chart(name, traces)
    return time.process_time() - start

first = draw_all()  # the first round also loads the font list and makes the formatters
drawn = min(draw_all() for _ in range(rounds))
from matplotlib.figure import Figure
Figure.tight_layout = lambda self, *args, **kwargs: None
Figure.get_tightbbox = lambda self, *args, **kwargs: self.bbox_inches
one_pass = min(draw_all() for _ in range(rounds))
print(len(names), imported, first - drawn, drawn, one_pass)
"""


def measured(project: Project, *args: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, waited-for descendants included) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    project.run(*args)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def build_args(project: Project) -> tuple[str, ...]:
    """The build ``Project.build`` runs, as arguments ``measured`` can time."""
    return ("build_site.py", "build", "--out", str(project.root / "site"))


def one_round(project: Project, times: dict[str, list[tuple[float, float]]]) -> None:
    """Each scenario once, in turn, so that the machine's load hits them alike."""
    times["floor"].append(measured(project, "-m", "mkdocs", "build", "-q", "-d",
                                   str(project.root.parent / "floor-site")))
    empty_build(project, kept=("engine-",))
    times["cold-cached"].append(measured(project, *build_args(project)))
    empty_build(project, kept=("engine-", "generated-"))
    times["cold-drawn"].append(measured(project, *build_args(project)))


def chart_costs(project: Project, rounds: int) -> tuple[int, float, float, float, float]:
    """How many charts; matplotlib's import, its first use (beyond a later round), and
    drawing them all as drawn and in one pass."""
    out = subprocess.run([project.python, "-c", CHARTS, str(rounds)], cwd=project.root,
                         env=ENV, check=True, capture_output=True, text=True, timeout=600)
    count, *seconds = out.stdout.split()
    return int(count), *(float(value) for value in seconds)


def report(times: dict[str, list[tuple[float, float]]],
           charts: tuple[int, float, float, float, float], cores: int) -> None:
    medians = {name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for name, runs in times.items()}
    floor_wall = medians["floor"][0]
    print(f"{cores} usable cores; medians of {len(times['floor'])} rounds")
    print(f"  {'':<12} {'wall':>7} {'cpu':>7}   least wall on {cores} cores (cpu / cores)")
    for name, (wall, cpu) in medians.items():
        print(f"  {name:<12} {wall:6.2f}s {cpu:6.2f}s   {cpu / cores:5.2f}s = "
              f"{cpu / cores / floor_wall:4.2f}x floor (measured: {wall / floor_wall:4.2f}x)")
    count, imported, first_use, drawn, one_pass = charts
    print(f"  charts: {count}; matplotlib's import {imported:.2f}s cpu, its first use "
          f"{first_use:.2f}s more; drawn as the site draws them {drawn:.2f}s, in one pass each "
          f"{one_pass:.2f}s")
    floor_cpu, drawn_cpu = medians["floor"][1], medians["cold-drawn"][1]
    least = floor_cpu + imported + one_pass
    print(f"  floor + import + one-pass charts: {least:.2f}s cpu, at least "
          f"{least / cores / floor_wall:4.2f}x floor on {cores} cores, with no gate, render, "
          "diagram or table")
    print(f"  cold-drawn + import + one-pass charts: {drawn_cpu + imported + one_pass:.2f}s cpu, "
          f"at least {(drawn_cpu + imported + one_pass) / cores / floor_wall:4.2f}x floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        project = Project(ROOT, sys.executable, Path(tmp))
        project.run(*build_args(project))
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in SCENARIOS}
        for _ in range(args.repeat):
            one_round(project, times)
        charts = chart_costs(project, args.repeat)
    report(times, charts, cores)


if __name__ == "__main__":
    main()
