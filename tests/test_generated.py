"""Tests of sitebuild/generated.py: every generated file is drawn, and a chart's error arrives
whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

import diagrams.charts
from diagrams.errors import RenderError
from sitebuild import generated
from tracefile import TraceSet


@pytest.fixture(scope="module")
def drawn(golden_traces: TraceSet) -> dict[str, bytes]:
    return generated.draw(golden_traces)


# Draws every chart (seconds): the inner loop draws each chart's wide rendering in
# tests/test_charts_*.py, the full suite every rendering here.
@pytest.mark.slow
def test_every_chart_diagram_and_table_is_drawn(golden_traces: TraceSet,
                                                drawn: dict[str, bytes]) -> None:
    charts = {f"{name}.svg" for name in diagrams.charts.chart_names(golden_traces)}
    assert charts <= set(drawn)
    assert all(drawn[name].startswith(b"<svg ") for name in charts)
    # Log axes are labelled in plain text: mathtext would cost a third of the drawing.
    assert not [name for name in charts if b"$" in drawn[name]]


def test_a_chart_that_fails_fails_with_its_own_error(golden_traces: TraceSet,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str, traces: TraceSet) -> str:
        raise RenderError("gradient-flow-v4.trace", 7, f"chart {name!r} cannot be drawn")

    monkeypatch.setattr(diagrams.charts, "render_chart", broken)
    with pytest.raises(RenderError) as caught:
        generated.draw(golden_traces)
    assert (caught.value.path, caught.value.line) == ("gradient-flow-v4.trace", 7)
    assert str(caught.value).startswith("gradient-flow-v4.trace:7: chart ")


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
        sub_path_build: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    # Such a build renders pages (the charts' values tables among them) and runs the gates,
    # and never draws: importing matplotlib would be a third of a second of every one.
    # Python lists every module a process imports on stderr (-X importtime).
    _, done = sub_path_build
    assert "cache hit" in done.stdout, done.stdout  # the figures came from the cache
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert {"sitebuild", "diagrams"} <= imported  # what importtime reports (MkDocs is a child)
    assert "matplotlib" not in imported
