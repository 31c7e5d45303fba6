"""diagrams/plots.py: a plot may name its own size (a chart narrower than the default keeps
its text readable when a phone scales it down); the default stays as it was."""

from __future__ import annotations

import re

import pytest

from diagrams.errors import RenderError
from diagrams.plots import SIZE, Plot, Series, render_plot

LINE = Series("s", (1.0, 2.0, 3.0), (1.0, 4.0, 9.0))


def view_box(svg: str) -> tuple[float, float]:
    found = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg)
    assert found is not None
    return float(found.group(1)), float(found.group(2))


def plot(size: tuple[float, float] | None = None) -> Plot:
    return Plot("sized", "Sized", "A plot of its own size.", "x", "y", (LINE,), size=size)


def test_the_default_size_is_unchanged() -> None:
    assert SIZE == (6.4, 3.6)
    assert render_plot(plot()) == render_plot(plot(SIZE))


def test_a_narrower_plot_is_narrower_and_deterministic() -> None:
    wide, narrow = view_box(render_plot(plot())), view_box(render_plot(plot((4.8, 3.4))))
    assert narrow[0] < wide[0]
    assert render_plot(plot((4.8, 3.4))) == render_plot(plot((4.8, 3.4)))


@pytest.mark.parametrize("size", [(0.0, 3.0), (4.0, -1.0), (100.0, 3.0)])
def test_a_size_must_be_a_sensible_width_and_height(size: tuple[float, float]) -> None:
    with pytest.raises(RenderError, match="size"):
        render_plot(plot(size))
