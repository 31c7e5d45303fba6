"""diagrams/plots.py: a zero on a logarithmic axis is left out of the drawing, not clipped."""

from __future__ import annotations

import re

import pytest

from diagrams.plots import COLOURS, Plot, Series, render_plot


def line_segments(svg: str) -> int:
    """Segments of the (single) data line: the ``L`` commands of the path in its colour."""
    paths = re.findall(rf'<path d="([^"]*)"[^>]*stroke: {COLOURS[0]}', svg, flags=re.IGNORECASE)
    assert len(paths) == 1, paths
    return paths[0].count("L ")


@pytest.mark.parametrize("scale", ["log", "log2"])
def test_a_zero_on_a_log_axis_draws_no_segment_to_the_axis_edge(scale: str) -> None:
    with_zero = Series("error", (0.0, 1.0, 2.0, 3.0), (0.0, 0.1, 0.05, 0.02))
    svg = render_plot(Plot("logzero", "Zero on a log axis", "A first value of zero.", "x", "y",
                           (with_zero,), yscale=scale))
    assert line_segments(svg) == 2  # three drawn points, the zero left out
    assert svg == render_plot(Plot("logzero", "Zero on a log axis", "A first value of zero.",
                                   "x", "y", (with_zero,), yscale=scale))


def test_a_linear_axis_still_draws_the_zero() -> None:
    with_zero = Series("error", (0.0, 1.0, 2.0, 3.0), (0.0, 0.1, 0.05, 0.02))
    svg = render_plot(Plot("linzero", "Zero on a linear axis", "A first value of zero.", "x",
                           "y", (with_zero,)))
    assert line_segments(svg) == 3
