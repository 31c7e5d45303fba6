"""Tests for diagrams/plots.py: deterministic, accessible, theme-neutral SVG line charts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from golden_support import assert_drawing_matches_golden
from paths import GOLDEN_DIR, ROOT

from diagrams.errors import RenderError
from diagrams.plots import Plot, Series, plain_power, render_plot

PLOT = Plot("demo", "Gradient against depth", "Two lines, one per stack.", "depth", "gradient",
            (Series("plain", (1.0, 2.0, 4.0), (1.0, 0.5, 0.25)),
             Series("residual", (1.0, 2.0, 4.0), (1.0, 1.5, 2.25))), xscale="log", yscale="log")


def test_the_same_plot_gives_the_same_bytes() -> None:
    assert render_plot(PLOT) == render_plot(PLOT)


@pytest.mark.parametrize("narrow", [False, True])
def test_matches_golden(narrow: bool) -> None:
    plot = replace(PLOT, plot_id="demo-narrow", narrow=True) if narrow else PLOT
    golden = GOLDEN_DIR / "plots" / f"{plot.plot_id}.svg"
    assert_drawing_matches_golden(render_plot(plot), golden,
                                  f"render_plot({plot.plot_id})")


@pytest.mark.parametrize(("mathtext", "plain"), [
    (r"$\mathdefault{10^{-2}}$", "10\u207b\u00b2"),
    (r"$\mathdefault{10^{12}}$", "10\u00b9\u00b2"),
    (r"$\mathdefault{2\times10^{3}}$", "2\u00d710\u00b3"),
    (r"$\mathdefault{-10^{1}}$", "\u221210\u00b9"),
    (r"$\mathdefault{2^{5}}$", "2\u2075"),
    (r"$\mathdefault{0}$", "0"),
    (r"$\mathdefault{-0.5}$", "\u22120.5"),
    ("0.25", "0.25"),
    (r"$\alpha$", r"$\alpha$"),
])
def test_log_tick_labels_are_plain_text(mathtext: str, plain: str) -> None:
    assert plain_power(mathtext) == plain


def test_a_log_axis_shows_its_powers_as_plain_text() -> None:
    svg = render_plot(PLOT)
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "3\u00d710\u207b\u00b9" in labels and "10\u2070" in labels
    assert "$" not in svg


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


@pytest.mark.parametrize(("args", "options", "problem"), [
    (("bad id", "t", "d", "x", "y", ()), {}, "plot id"),
    (("p", "t", "d", "x", "y", ()), {"xscale": "cubic"}, "scales"),
    (("p", "t", "d", "x", "y", (Series("s", (1.0,), (1.0, 2.0)),)), {}, "one length"),
    (("p", "t", "d", "x", "y", ()), {"size": (0.0, 3.0)}, "size"),
    (("p", "t", "d", "x", "y", ()), {"references": (("floor", float("nan")),)}, "reference"),
    (("p", "t", "d", "x", "y", ()), {"ylim": (1.0, 1.0)}, "y range"),
])
def test_a_plot_no_drawing_could_show_is_refused_when_made(
        args: tuple[Any, ...], options: dict[str, Any], problem: str) -> None:
    with pytest.raises(RenderError, match=problem):
        Plot(*args, **options)
    with pytest.raises(RenderError, match=problem):  # nor can a copy be made one
        replace(PLOT, **dict(zip(("plot_id", "title", "desc", "xlabel", "ylabel", "series"),
                                 args, strict=True)), **options)


def test_a_plot_is_drawn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Laid out and measured without drawing, then drawn into the SVG: savefig's own "tight"
    measuring drew every chart a second time (an eighth of the build's chart time)."""
    from diagrams.plots import load_matplotlib

    figure_class = load_matplotlib()[1].Figure
    draws: list[object] = []
    original = figure_class.draw
    monkeypatch.setattr(figure_class, "draw",
                        lambda self, renderer: draws.append(renderer) or original(self, renderer))
    render_plot(PLOT)
    assert len(draws) == 1, f"the figure was drawn {len(draws)} times"


def test_a_matplotlibrc_changes_no_drawing(tmp_path: Path) -> None:
    # Another machine's settings (thick lines, a layout engine on every figure, another
    # default format) must not reach the site: the same plot, the same bytes.
    rc = tmp_path / "matplotlibrc"
    rc.write_text("lines.linewidth: 5\nfigure.constrained_layout.use: True\n"
                  "savefig.format: pdf\nfont.size: 20\naxes.grid: False\n")
    code = ("import sys; sys.path[:0] = [\"tests\"]; from test_plots import PLOT; "
            "from diagrams.plots import "
            "render_plot; sys.stdout.write(render_plot(PLOT))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "MATPLOTLIBRC": str(rc)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == render_plot(PLOT)
