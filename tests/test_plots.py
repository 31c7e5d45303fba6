"""Tests for diagrams/plots.py: deterministic, accessible, theme-neutral SVG line charts."""

from __future__ import annotations

import re

import pytest

from diagrams.errors import RenderError
from diagrams.plots import Plot, Series, render_plot

PLOT = Plot("demo", "Gradient against depth", "Two lines, one per stack.", "depth", "gradient",
            (Series("plain", (1.0, 2.0, 4.0), (1.0, 0.5, 0.25)),
             Series("residual", (1.0, 2.0, 4.0), (1.0, 1.5, 2.25))), "log", "log")


def test_the_same_plot_gives_the_same_bytes() -> None:
    assert render_plot(PLOT) == render_plot(PLOT)


def test_the_svg_is_accessible_and_theme_neutral() -> None:
    svg = render_plot(PLOT)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert 'role="img" aria-labelledby="demo-title demo-desc"' in svg
    assert '<title id="demo-title">Gradient against depth</title>' in svg
    assert "#000000" not in svg and "currentColor" in svg
    assert "<?xml" not in svg and "<metadata" not in svg and "<!--" not in svg
    # Text is kept as text (selectable, searchable, audited), not outlined into paths.
    assert re.search(r"<text[^>]*>plain</text>", svg) and ">depth</text>" in svg
    ids = re.findall(r'\bid="([^"]+)"', svg)
    assert ids and all(i.startswith("demo-") for i in ids)


@pytest.mark.parametrize(("plot", "problem"), [
    (Plot("bad id", "t", "d", "x", "y", ()), "plot id"),
    (Plot("p", "t", "d", "x", "y", (), xscale="cubic"), "scales"),
    (Plot("p", "t", "d", "x", "y", (Series("s", (1.0,), (1.0, 2.0)),)), "one length"),
])
def test_bad_plots_are_render_errors(plot: Plot, problem: str) -> None:
    with pytest.raises(RenderError, match=problem):
        render_plot(plot)
