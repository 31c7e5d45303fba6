"""diagrams/plots.py: a band behind a line, and markers thinned on long series."""

from __future__ import annotations

import re

import pytest

from diagrams.errors import RenderError
from diagrams.plots import COLOURS, MARKED, Plot, Series, render_plot

BAND = Series("mean", (1.0, 2.0, 3.0), (1.0, 2.0, 3.0), low=(0.5, 1.5, 2.5), high=(1.5, 2.5, 3.5))


def plot(*series: Series) -> Plot:
    return Plot("band", "A band", "A line with its spread.", "x", "y", series)


def test_a_band_is_drawn_deterministically_and_theme_neutral() -> None:
    svg = render_plot(plot(BAND))
    plain = render_plot(plot(Series("mean", BAND.x, BAND.y)))
    assert svg == render_plot(plot(BAND))
    # fill_between adds one translucent filled path in the line's colour.
    assert svg.count("fill-opacity: 0.25") == 1 and "fill-opacity: 0.25" not in plain
    assert "#000000" not in svg and "<metadata" not in svg


@pytest.mark.parametrize("series", [
    Series("s", (1.0, 2.0), (1.0, 2.0), low=(0.0, 1.0)),
    Series("s", (1.0, 2.0), (1.0, 2.0), low=(0.0,), high=(2.0,)),
])
def test_a_band_needs_low_and_high_for_every_x(series: Series) -> None:
    with pytest.raises(RenderError, match="band"):
        render_plot(plot(series))


def markers(svg: str) -> int:
    """How many markers the (single) line draws: one <use> per marked point, in a group of
    its colour (tick marks are <use> elements too, in the text colour)."""
    groups = re.findall(rf'<g [^>]*{COLOURS[0]}[^>]*>((?:<use [^>]*/>)+)</g>', svg,
                        flags=re.IGNORECASE)
    assert len(groups) == 1, groups
    return groups[0].count("<use ")


def test_long_series_carry_markers_on_a_subset_of_points() -> None:
    short = [float(i) for i in range(1, MARKED + 1)]
    long = [float(i) for i in range(1, 4 * MARKED + 1)]
    assert markers(render_plot(plot(Series("s", tuple(short), tuple(short))))) == MARKED
    assert markers(render_plot(plot(Series("s", tuple(long), tuple(long))))) == MARKED


def test_a_series_can_keep_its_look_when_others_are_left_out() -> None:
    first, second = Series("a", (1.0, 2.0), (1.0, 2.0)), Series("b", (1.0, 2.0), (2.0, 1.0))
    pinned = Series("b", (1.0, 2.0), (2.0, 1.0), look=(COLOURS[1], "--", "s"))
    alone = render_plot(plot(pinned))
    assert COLOURS[1].lower() in alone.lower() and COLOURS[0].lower() not in alone.lower()
    assert COLOURS[1].lower() in render_plot(plot(first, second)).lower()


def test_the_legend_sits_below_the_axes() -> None:
    svg = render_plot(plot(Series("a", (1.0, 2.0), (1.0, 2.0)),
                           Series("b", (1.0, 2.0), (2.0, 1.0))))

    def text_y(label: str) -> float:
        found = re.search(rf'<text [^>]*y="([0-9.]+)"[^>]*>{label}</text>', svg)
        assert found is not None, label
        return float(found.group(1))

    assert text_y("a") > text_y("x") and text_y("b") > text_y("x")  # below the x axis label
