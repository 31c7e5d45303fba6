"""diagrams/svg_compact.py: matplotlib's SVG with fewer elements and bytes, drawn the same.

Each rule is shown on a small hand-written SVG; a real chart, drawn by matplotlib, is shown in
Chromium before and after compaction (its coordinates unrounded) and the two screenshots must
be the same pixels; rounding moves a coordinate by half a hundredth of a point at most.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from diagrams import svg_compact
from diagrams.plots import Plot, Series, _draw
from diagrams.svg_compact import compact_svg

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       'width="10pt" height="10pt" viewBox="0 0 10 10">{}</svg>')


def test_only_ids_something_refers_to_and_the_plot_areas_stay() -> None:
    out = compact_svg(SVG.format(
        '<g id="figure_1"><g id="axes_1"><g id="patch_2"><path d="M 0 0"/></g>'
        '<defs><path id="m1" d="M 0 0"/><clipPath id="p1"><rect width="1" height="1"/>'
        '</clipPath></defs><g id="line2d_1" clip-path="url(#p1)">'
        '<use xlink:href="#m1" x="1"/></g></g></g>'))
    assert re.findall(r'\bid="([^"]+)"', out) == ["axes_1", "patch_2", "m1", "p1"]


def test_a_group_with_nothing_left_gives_way_to_its_children() -> None:
    out = compact_svg(SVG.format('<g id="figure_1">\n  <g id="text_1">\n   <text x="1">'
                                 ' a  b </text>\n  </g>\n</g>'))
    assert out.endswith('viewBox="0 0 10 10"><text x="1"> a  b </text></svg>')


@pytest.mark.parametrize(("style", "hoisted"), [
    ("fill: #e69f00; stroke: #e69f00", True),
    ("fill: #e69f00; opacity: 0.5", False),  # a group's opacity would blend its children as one
])
def test_a_style_every_child_shares_is_written_once(style: str, hoisted: bool) -> None:
    out = compact_svg(SVG.format(
        f'<g clip-path="url(#p)"><use xlink:href="#m" x="1" style="{style}"/>'
        f'<use xlink:href="#m" x="2" style="{style}"/></g>'))
    assert out.count(f'style="{style}"') == (1 if hoisted else 2)
    assert (f'<g clip-path="url(#p)" style="{style}">' in out) == hoisted


def test_coordinates_are_rounded_and_the_root_is_not() -> None:
    out = compact_svg(SVG.format('<path d="M 63.668175 -197.102036 \nL 0.004 -0.001 z" '
                                 'transform="rotate(-90 12.3456 7)"/>').replace(
        'viewBox="0 0 10 10"', 'viewBox="0 0 10.123456 10"'))
    assert 'd="M 63.67 -197.1 L 0 0 z"' in out and 'transform="rotate(-90 12.35 7)"' in out
    assert 'viewBox="0 0 10.123456 10"' in out


def test_rounding_moves_a_coordinate_by_half_a_hundredth_at_most() -> None:
    values = [k / 997 - 3 for k in range(6000)]
    out = compact_svg(SVG.format(f'<path d="M {" ".join(map(str, values))}"/>'))
    drawn = [float(v) for v in re.search(r' d="M ([^"]*)"', out).group(1).split()]
    assert max(abs(a - b) for a, b in zip(values, drawn, strict=True)) <= 0.005 + 1e-12


CHART = Plot("compact", "A chart", "Two series with markers, a band and a log axis.", "depth",
             "gradient", (Series("plain", (1.0, 2.0, 4.0, 8.0), (1.0, 0.5, 0.25, 0.125),
                                 low=(0.9, 0.4, 0.2, 0.1), high=(1.1, 0.6, 0.3, 0.15)),
                          Series("residual", (1.0, 2.0, 4.0, 8.0), (1.0, 1.5, 2.25, 3.4))),
             xscale="log2", yscale="log")


@pytest.mark.slow
@pytest.mark.browser
def test_a_compacted_chart_draws_the_same_pixels(browser: Any) -> None:
    raw = _draw(CHART)
    shots = []
    for svg in (raw, compact_svg(raw, decimals=6)):
        tab = browser.new_page(viewport={"width": 900, "height": 600}, device_scale_factor=2)
        try:
            tab.set_content(f'<body style="margin:0;background:#fff">{svg}</body>')
            shots.append(tab.locator("svg").screenshot())
        finally:
            tab.close()
    assert len(compact_svg(raw)) < 0.8 * len(raw)
    assert shots[0] == shots[1]


@pytest.mark.slow
@pytest.mark.browser
def test_the_pixels_would_show_a_style_hoisted_that_must_not_be(
        browser: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    overlapping = SVG.format(
        '<g><rect x="1" y="1" width="5" height="5" style="fill: #000; opacity: 0.5"/>'
        '<rect x="3" y="3" width="5" height="5" style="fill: #000; opacity: 0.5"/></g>')
    monkeypatch.setattr(svg_compact, "_NOT_INHERITED", re.compile("(?!)"))  # hoist anything
    shots = []
    for svg in (overlapping, compact_svg(overlapping)):
        tab = browser.new_page(viewport={"width": 100, "height": 100})
        try:
            tab.set_content(f'<body style="margin:0;background:#fff">{svg}</body>')
            shots.append(tab.locator("svg").screenshot())
        finally:
            tab.close()
    assert shots[0] != shots[1]
