"""Tests of sitebuild/drawing.py and sitebuild/workers.py: every generated file, the same bytes
whether the charts are drawn by forked workers, by a forkserver's (as under serve, where other
threads run) or in turn, and a chart's error arriving whole from a worker."""

from __future__ import annotations

import pytest

import diagrams.charts
from diagrams.errors import RenderError
from sitebuild import drawing, workers
from tracefile import TraceSet

MODES = ("fork", "forkserver", "one core")


def use(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``worker_pool`` behave as it does in a build, under serve, or on one core (with
    two cores at least for the first two, whatever this machine has)."""
    monkeypatch.setattr(workers, "usable_cores", lambda: 1 if mode == "one core" else 2)
    if mode == "forkserver":
        monkeypatch.setattr(workers.threading, "active_count", lambda: 3)
        workers.start_forkserver()  # as serve does before its threads start


@pytest.fixture(scope="module")
def drawn(golden_traces: TraceSet) -> dict[str, bytes]:
    return drawing.render_generated(golden_traces)


@pytest.mark.parametrize("mode", MODES)
def test_every_way_of_drawing_gives_the_same_bytes(
        golden_traces: TraceSet, drawn: dict[str, bytes], monkeypatch: pytest.MonkeyPatch,
        mode: str) -> None:
    use(mode, monkeypatch)
    with workers.worker_pool(2) as pool:
        assert (pool is None) == (mode == "one core")
        assert mode == "one core" or workers.start_method() == mode
    assert drawing.render_generated(golden_traces) == drawn


def test_every_chart_diagram_and_table_is_drawn(golden_traces: TraceSet,
                                                drawn: dict[str, bytes]) -> None:
    charts = {f"{name}.svg" for name in diagrams.charts.chart_names(golden_traces)}
    assert charts <= set(drawn)
    assert all(drawn[name].startswith(b"<svg ") for name in charts)
    # Log axes are labelled in plain text: mathtext would cost a third of the drawing.
    assert not [name for name in charts if b"$" in drawn[name]]


@pytest.mark.parametrize("mode", ["fork", "one core"])
def test_a_chart_that_fails_in_a_worker_fails_the_same_way(
        golden_traces: TraceSet, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    def broken(name: str, traces: TraceSet) -> str:
        raise RenderError("gradient-flow-v1.trace", 7, f"chart {name!r} cannot be drawn")

    # Patched before the workers fork, so they inherit it.
    monkeypatch.setattr(diagrams.charts, "render_chart", broken)
    use(mode, monkeypatch)
    with pytest.raises(RenderError) as raised:
        drawing.render_generated(golden_traces)
    assert raised.value.path == "gradient-flow-v1.trace" and raised.value.line == 7
    assert str(raised.value).startswith("gradient-flow-v1.trace:7: chart ")
