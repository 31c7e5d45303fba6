"""Tests of sitebuild/drawing.py: every generated file, the same bytes whether the charts are
drawn by worker processes or in turn, and a chart's error arriving whole from a worker."""

from __future__ import annotations

import pytest

import diagrams.charts
from diagrams.errors import RenderError
from sitebuild import drawing, workers
from tracefile import TraceSet


def serial(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``render_generated`` draw in this process (as with one core, or a thread running)."""
    monkeypatch.setattr(workers.threading, "active_count", lambda: 2)


@pytest.fixture(scope="module")
def drawn(golden_traces: TraceSet) -> dict[str, bytes]:
    return drawing.render_generated(golden_traces)


def test_workers_are_used_and_draw_the_same_bytes_as_one_process(
        golden_traces: TraceSet, drawn: dict[str, bytes],
        monkeypatch: pytest.MonkeyPatch) -> None:
    with workers.worker_pool(2) as pool:
        assert pool is not None or workers.usable_cores() == 1
    serial(monkeypatch)
    with workers.worker_pool(2) as pool:
        assert pool is None
    assert drawing.render_generated(golden_traces) == drawn


def test_every_chart_diagram_and_table_is_drawn(golden_traces: TraceSet,
                                                drawn: dict[str, bytes]) -> None:
    charts = {f"{name}.svg" for name in diagrams.charts.chart_names(golden_traces)}
    assert charts <= set(drawn)
    assert all(drawn[name].startswith(b"<svg ") for name in charts)
    # Log axes are labelled in plain text: mathtext would cost a third of the drawing.
    assert not [name for name in charts if b"$" in drawn[name]]


@pytest.mark.parametrize("workers", [True, False])
def test_a_chart_that_fails_in_a_worker_fails_the_same_way(
        golden_traces: TraceSet, monkeypatch: pytest.MonkeyPatch, workers: bool) -> None:
    def broken(name: str, traces: TraceSet) -> str:
        raise RenderError("gradient-flow-v1.trace", 7, f"chart {name!r} cannot be drawn")

    # Patched before the workers fork, so they inherit it.
    monkeypatch.setattr(diagrams.charts, "render_chart", broken)
    if not workers:
        serial(monkeypatch)
    with pytest.raises(RenderError) as raised:
        drawing.render_generated(golden_traces)
    assert raised.value.path == "gradient-flow-v1.trace" and raised.value.line == 7
    assert str(raised.value).startswith("gradient-flow-v1.trace:7: chart ")
