"""Tests for diagrams/looks.py: one look per variant across every chart of the site.

Every line of every chart is drawn with a declared look; no two lines of a chart share one; a
line's legend names what its colour and line style mean (a colour never means "plain" in one
chart and "pre-norm" in the next); the explorer's curves take the same colours.
"""

from __future__ import annotations

import re

import pytest
from paths import ROOT

from diagrams.chart_spec import POSITIONS, Chart, Line
from diagrams.charts_gradient_flow import CHARTS as GRADIENT_CHARTS
from diagrams.charts_residual_stream import CHARTS as STREAM_CHARTS
from diagrams.errors import RenderError
from diagrams.looks import FAMILIES, QUANTITIES, WORDS, look

CHARTS = (*GRADIENT_CHARTS, *STREAM_CHARTS)


def _says(label: str, words: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(words)}(?![\w-])", label) is not None


def mismatches(charts: tuple[Chart, ...]) -> list[str]:
    """Every line whose look is missing, shared within its chart (as drawn: two keys may draw
    alike), or not what its label says."""
    found = []
    for chart in charts:
        keys = [line.look for line in chart.lines if line.look]
        drawn = [look(key) for key in keys]
        found += [f"{chart.name}: {key!r} drawn as another line is" for key, seen in
                  zip(keys, drawn, strict=True) if drawn.count(seen) > 1]
        for line in chart.lines:
            family, _, degree = line.look.partition("/")
            if not line.look:
                found.append(f"{chart.name}: {line.label!r} has no look")
            elif family != "quantity" and not all(
                    _says(line.label, WORDS[part]) for part in (family, degree) if part):
                found.append(f"{chart.name}: {line.label!r} drawn as {line.look!r}")
    return found


def test_every_line_is_drawn_as_what_its_label_says() -> None:
    assert mismatches(CHARTS) == []
    for chart in CHARTS:
        for line in chart.lines:
            look(line.look)  # declared


def test_the_check_finds_a_colour_that_means_something_else() -> None:
    wrong = Chart("c", "t", "T", "D", "x", "y", (
        Line("plain", POSITIONS, "A.b", look="pre-norm"),
        Line("residual, two blocks", POSITIONS, "A.c", look="residual/four"),
        Line("plain, eight blocks", POSITIONS, "A.d", look="quantity/1"),
        Line("plain", POSITIONS, "A.e", look="quantity/1"), Line("plain", POSITIONS, "A.f")))
    assert mismatches((wrong,)) == [
        "c: 'quantity/1' drawn as another line is", "c: 'quantity/1' drawn as another line is",
        "c: 'plain' drawn as 'pre-norm'", "c: 'residual, two blocks' drawn as 'residual/four'",
        "c: 'plain' has no look"]
    # Two keys that draw alike are one look: "plain" and "plain/two" are both solid.
    alike = Chart("c", "t", "T", "D", "x", "y", (
        Line("plain", POSITIONS, "A.b", look="plain"),
        Line("plain, two blocks", POSITIONS, "A.c", look="plain/two")))
    assert mismatches((alike,)) == ["c: 'plain' drawn as another line is",
                                    "c: 'plain/two' drawn as another line is"]


def _luminance(colour: str) -> float:
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def contrast(one: str, other: str) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


#: Material's page background, light and slate (its --md-default-bg-color).
BACKGROUNDS = ("#FFFFFF", "#1E2129")


def test_every_colour_stands_out_on_both_themes() -> None:
    colours = {colour for colour, _ in FAMILIES.values()} | {
        colour for colour, _, _ in QUANTITIES if colour != "#000000"}  # black: the page's ink
    for colour in colours:
        assert all(contrast(colour, background) >= 3 for background in BACKGROUNDS), colour
    assert contrast("#E69F00", BACKGROUNDS[0]) < 3  # Okabe and Ito's own orange would not


@pytest.mark.parametrize("key", ["plain/nine", "blue", "quantity/9", "quantity/x"])
def test_an_undeclared_look_is_a_render_error(key: str) -> None:
    with pytest.raises(RenderError, match=f"no look {key!r}"):
        look(key)


def test_the_explorer_draws_plain_and_residual_in_their_colours() -> None:
    css = (ROOT / "docs" / "assets" / "css" / "lab.css").read_text(encoding="utf-8")
    for family in ("plain", "residual"):
        assert f"--gf-{family}: {FAMILIES[family][0]};" in css, family
