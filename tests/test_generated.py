"""Tests of sitebuild/generated.py and the worker pool of sitebuild/processes.py: every
generated file, the same bytes whether the charts are drawn by forked workers (a build) or in
turn (one core, or another thread running), and a chart's error arriving whole from a worker.

The forked case runs in a fresh interpreter: the test process may have threads of its own
(the browser tests' server), beside which ``worker_pool`` rightly refuses to fork.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import GOLDEN_DIR, ROOT, SITE_URL
from site_support import BuiltSite, build

import diagrams.charts
from sitebuild import generated, processes
from tracefile import TraceSet

#: Loads the golden traces in a fresh interpreter, as ``golden_traces`` does.
LOAD = f"""
import hashlib, sys
from pathlib import Path
from sitebuild import generated, processes
from sitebuild.paths import CHAPTER_TRACE
from tracefile import SCHEMAS, TraceSet, load_trace
traces = TraceSet({{i: load_trace(Path({str(GOLDEN_DIR)!r}) / s.file_name, s)
                   for i, s in SCHEMAS.items()}}, CHAPTER_TRACE)
processes.usable_cores = lambda: 2
"""


def fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LOAD + code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def digest(files: dict[str, bytes]) -> str:
    return hashlib.sha256(b"".join(name.encode() + b"\0" + data + b"\0"
                                   for name, data in sorted(files.items()))).hexdigest()


@pytest.fixture(scope="module")
def drawn(golden_traces: TraceSet) -> dict[str, bytes]:
    """Drawn as this process draws (workers, when it has no other thread)."""
    return generated.draw(golden_traces)


@pytest.fixture(scope="module")
def drawn_in_turn(golden_traces: TraceSet) -> dict[str, bytes]:
    """Drawn in turn, the reference the workers' drawings must equal."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(processes, "usable_cores", lambda: 1)
        return generated.draw(golden_traces)


# Each draws every chart twice more (seconds): the full suite runs them, not the inner loop.
@pytest.mark.slow
def test_forked_workers_draw_the_same_bytes(drawn_in_turn: dict[str, bytes]) -> None:
    done = fresh("""
files = generated.draw(traces)
print(hashlib.sha256(b"".join(n.encode() + b"\\0" + d + b"\\0"
                              for n, d in sorted(files.items()))).hexdigest())
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == digest(drawn_in_turn)


def test_no_pool_beside_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # Forking beside a running thread could copy a lock it holds: callers then work in turn.
    monkeypatch.setattr(processes, "usable_cores", lambda: 2)
    monkeypatch.setattr(processes, "other_threads", lambda: True)
    with processes.worker_pool(2) as pool:
        assert pool is None


def test_one_core_draws_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "usable_cores", lambda: 1)
    with processes.worker_pool(8) as pool:
        assert pool is None


def test_a_pool_has_no_more_workers_than_jobs_or_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "usable_cores", lambda: 2)
    monkeypatch.setattr(processes, "other_threads", lambda: False)  # as in a build
    assert [processes.worker_count(jobs) for jobs in (0, 1, 2, 38)] == [0, 1, 2, 2]


# Draws all 38 charts in forked workers (two seconds, on top of the inner loop's own workers):
# the inner loop draws each chart's wide rendering in tests/test_charts_*.py, the full suite
# every rendering here.
@pytest.mark.slow
def test_every_chart_diagram_and_table_is_drawn(golden_traces: TraceSet,
                                                drawn: dict[str, bytes]) -> None:
    charts = {f"{name}.svg" for name in diagrams.charts.chart_names(golden_traces)}
    assert charts <= set(drawn)
    assert all(drawn[name].startswith(b"<svg ") for name in charts)
    # Log axes are labelled in plain text: mathtext would cost a third of the drawing.
    assert not [name for name in charts if b"$" in drawn[name]]


def test_a_chart_that_fails_in_a_worker_fails_with_its_own_error() -> None:
    done = fresh("""
import diagrams.charts
from diagrams.errors import RenderError

def broken(name, traces):
    raise RenderError("gradient-flow-v3.trace", 7, f"chart {name!r} cannot be drawn")

diagrams.charts.render_chart = broken  # before the workers fork: they inherit it
try:
    generated.draw(traces)
except RenderError as err:
    print(type(err).__name__, err.path, err.line, str(err))
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RenderError gradient-flow-v3.trace 7 "
                                  "gradient-flow-v3.trace:7: chart "), done.stdout


def test_the_modules_a_build_with_cached_figures_runs_do_not_import_matplotlib() -> None:
    # The quick check for the inner loop; the next test runs such a build.
    code = ("import sys, sitebuild.build, sitebuild.render, sitebuild.gates, diagrams.charts; "
            "print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.slow
def test_a_build_whose_figures_are_cached_never_imports_matplotlib(
        site_build: BuiltSite, tmp_path: Path) -> None:
    # Such a build renders pages (the charts' values tables among them) and runs the gates,
    # and never draws: importing matplotlib would be a third of a second of every one.
    # Python lists every module a process imports on stderr (-X importtime).
    out = tmp_path / "site"
    done = build(out, tmp_path / "build", extra=("--site-url", SITE_URL),
                 env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0 and (out / "index.html").is_file(), done.stdout
    assert "cache hit" in done.stdout, done.stdout  # the figures came from the cache
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert {"sitebuild", "diagrams"} <= imported  # what importtime reports (MkDocs is a child)
    assert "matplotlib" not in imported


def _gone(pid: int) -> bool:
    """The process has ended (reaped, or a zombie its new parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_a_process_killed_outright(tmp_path: Path) -> None:
    # Left running, they would wait for work forever, holding the build folder's lock.
    pid_file = tmp_path / "pids"
    code = f"""
import multiprocessing, os, signal
from pathlib import Path
from sitebuild import processes
processes.usable_cores = lambda: 2
with processes.worker_pool(2) as pool:
    pool.submit(os.getpid).result()
    pool.submit(os.getpid).result()
    workers = [child.pid for child in multiprocessing.active_children()]
    Path({str(pid_file)!r}).write_text(" ".join(str(pid) for pid in workers))
    os.kill(os.getpid(), signal.SIGKILL)
"""
    # No pipes: a surviving worker would hold them open, and the test would hang, not fail.
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=120,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert done.returncode == -9
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 20
    while not all(_gone(pid) for pid in pids):
        if time.monotonic() > deadline:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"workers {pids} outlived their parent")
        time.sleep(0.05)
