"""The gradients lab's explorer: every cell of the trace's grid as HTML, rendered in Python.

Contract: ``render_explorer(trace)`` and ``render_explorer_data(trace)`` are pure functions of
trace ``gradient-flow-v4``. For every (branch factor, depth) cell of the grid (records
``EXPLORER-CONFIG``, ``EXPLORER``, ``PATH-COUNT``, ``EXPLORER-FACTOR``) the data holds a section
whose every number is a traced span (``diagrams.format.traced``): the factor, the depth, the
plain and the residual input gradient, the path length that carries the most, and the
contributions of every path length as one traced vector. Bar lengths beside them are the
contributions' magnitudes relative to the cell's largest, computed here into a CSS custom
property; the bars are decoration (``aria-hidden``), the traced vector is the value. The data is
a script published at ``DATA_FILE`` (``diagrams.shown_html``, which the audit reads back); the
fragment names it and holds only the chapter's own cell (``CHAPTER-PATHS``). Above the cells,
one drawing per factor puts its plain and residual input gradients (``EXPLORER-FACTOR``) at
every depth on one logarithmic axis shared by all factors, from the grid's smallest nonzero
magnitude to its largest, both named in a key as traced spans; a drawing holds no text
(``aria-hidden``) and lists the x of every depth for its depth mark.
``docs/assets/js/explorer.js`` loads the data, puts the chosen cell's HTML in place and switches
the drawings (no arithmetic in the browser). The controls are native range inputs with labels
and their end values, hidden until the script runs; without it a reader has the chapter's cell
and a folded table of every factor at the deepest depth, linked to the whole grid on the Trace
page. ``depths`` and ``factors`` restrict the grid (for small golden files). The fragment is
numbers only, excluded from the search (``data-search-exclude``); its root is a ``<figure>``
because Material's search matches the excluded element by tag name, so the first ``</div>``
inside a ``<div>`` root would end it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

from markupsafe import Markup

from diagrams.errors import RenderError
from diagrams.format import traced
from diagrams.shown_html import shown_html_script
from tracefile import Trace
from tracefile.values import trace_repr

TRACE = "gradient-flow-v4"
#: Where the whole grid is listed, from the lab's page.
TRACE_PAGE = "../trace.html#gradient-flow-v4"
#: Where every cell's HTML is published (``diagrams.shown_html``), its address from the lab's
#: page, and the name it is filed under.
DATA_FILE = "assets/explorer/gradient-flow-v4.js"
DATA_URL = f"../{DATA_FILE}"
DATA_NAME = "explorer:gradient-flow-v4"
#: The format of every gradient the explorer shows (they span many powers of ten).
FMT = "sci"
#: The curves' drawing, in SVG user units: width, height and the margin inside them. The page
#: stretches it to its column's width and a height of its own (its strokes keep their width),
#: so a phone draws it as tall as a desktop does.
PLOT_WIDTH, PLOT_HEIGHT, PLOT_MARGIN = 320.0, 120.0, 4.0


def _cells(trace: Trace) -> dict[tuple[float, int], int]:
    """(factor, depth) → the cell's key in the trace."""
    return {(record.factor, record.depth): record.cell for record in trace.explorer}


def _width(value: float, largest: float) -> str:
    """A bar's length as a percentage of the cell's largest magnitude, one decimal."""
    share = abs(value) / largest if largest > 0 else 0.0
    return f"{100 * share:.1f}".removesuffix(".0") + "%"


def _cell(trace: Trace, cell: int, factor_index: int) -> str:
    path = f"EXPLORER[{cell}]"
    record = trace.resolve(f"{path}.contributions")
    depth = trace.resolve(f"{path}.depth")
    largest = max(abs(value) for value in record)
    # Kept terse: the grid has thousands of bars (a class only on negative ones).
    bars = "".join(f'<li{" class=n" if value < 0 else ""} style="--w:{_width(value, largest)}">'
                   "</li>" for value in record)

    def tv(key: str) -> Markup:
        return traced(trace, f"{path}.{key}", FMT if key in ("plain", "residual") else "exact")

    return (
        f'<section class="gf-cell" data-factor-index="{factor_index}" data-depth="{depth}">'
        f'<p class="gf-cell__summary">With branch factor <var>f</var> = {tv("factor")} and '
        f"depth <var>L</var> = {tv('depth')}, the plain stack passes {tv('plain')} back to "
        f"its input and the residual stack passes {tv('residual')}.</p>"
        '<div class="gf-cell__chart">'
        f'<ol class="gf-bars" aria-hidden="true">{bars}</ol>'
        '<p class="gf-cell__paths">Gradient carried by the paths through each number of '
        "branches, from the identity path alone to the path through every branch: "
        f"{traced(trace, f'{path}.contributions', FMT)}. The largest in magnitude is carried "
        f"by the paths through {tv('peak-length')} branches.</p>"
        "</div></section>")


def _counts(trace: Trace, depth: int) -> str:
    return (
        f'<p class="gf-counts" data-depth="{depth}">'
        f"How many paths pass through each number of branches, for depth "
        f"{traced(trace, f'PATH-COUNT[{depth}].depth')}: "
        f"{traced(trace, f'PATH-COUNT[{depth}].counts')}.</p>")


def _extremes(trace: Trace, factors: Sequence[float], depths: Sequence[int]) -> tuple[str, str]:
    """Paths of the smallest and the largest nonzero gradient magnitude of the chosen grid:
    the bottom and the top of the curves' one logarithmic axis."""
    found = []
    for factor in factors:
        for series in ("plain", "residual"):
            for depth in depths:
                path = f"EXPLORER-FACTOR[{trace_repr(factor)}].{series}[{depth - 1}]"
                if (value := trace.resolve(path)) != 0:
                    found.append((abs(value), path))
    return min(found)[1], max(found)[1]


def _y(power: float, axis: tuple[float, float]) -> float:
    """Where ``10 ** power`` sits on the log axis running from ``10 ** axis[0]`` at the bottom
    to ``10 ** axis[1]`` at the top."""
    low, high = axis
    share = (high - power) / (high - low) if high > low else 0.5
    return PLOT_MARGIN + share * (PLOT_HEIGHT - 2 * PLOT_MARGIN)


def _points(values: Sequence[float], xs: Sequence[float], axis: tuple[float, float]
            ) -> list[str]:
    """SVG polylines of ``|values|`` on the log axis, broken where a value is exactly zero."""
    runs: list[list[str]] = [[]]
    for x, value in zip(xs, values, strict=True):
        if value == 0:
            runs.append([])
        else:
            runs[-1].append(f"{x:.1f},{_y(math.log10(abs(value)), axis):.1f}")
    return [" ".join(run) for run in runs if run]


def _curves(trace: Trace, factor: float, index: int, depths: Sequence[int],
            axis: tuple[float, float], marked: int, shown: bool) -> str:
    """One factor's plain and residual input gradients against depth, drawn (no text: the
    values are the traced spans of the cells and the grid table)."""
    span = max(depths[-1] - depths[0], 1)
    xs = [PLOT_MARGIN + (d - depths[0]) / span * (PLOT_WIDTH - 2 * PLOT_MARGIN) for d in depths]
    at = {str(d): round(x, 1) for d, x in zip(depths, xs, strict=True)}
    record = f"EXPLORER-FACTOR[{trace_repr(factor)}]"
    lines = "".join(
        f'<polyline class="gf-curves__{series}" points="{points}"/>'
        for series in ("plain", "residual")
        for points in _points(trace.resolve(f"{record}.{series}")[depths[0] - 1:depths[-1]], xs,
                              axis))
    grid = "".join(
        f'<line class="gf-curves__decade{" gf-curves__one" if k == 0 else ""}" x1="0" '
        f'x2="{PLOT_WIDTH:g}" y1="{_y(k, axis):.1f}" y2="{_y(k, axis):.1f}"/>'
        for k in range(math.ceil(axis[0]), math.floor(axis[1]) + 1) if k % 5 == 0)
    mark = at[str(marked)]
    return (
        f'<svg class="gf-curves" data-factor-index="{index}" viewBox="0 0 {PLOT_WIDTH:g} '
        f'{PLOT_HEIGHT:g}" preserveAspectRatio="none" aria-hidden="true" focusable="false" '
        f"data-x='{json.dumps(at, separators=(',', ':'))}'{'' if shown else ' hidden'}>"
        f'{grid}{lines}<line class="gf-curves__mark" x1="{mark}" x2="{mark}" y1="0" '
        f'y2="{PLOT_HEIGHT:g}"/></svg>')


def _curves_key(trace: Trace, factors: Sequence[float], depths: Sequence[int]) -> str:
    low, high = _extremes(trace, factors, depths)
    return (
        '<p class="gf-curves__key">Above: the magnitude of the input gradient against depth '
        "for the chosen factor, from depth "
        f"{traced(trace, f'PATH-COUNT[{depths[0]}].depth')} at the left to "
        f"{traced(trace, f'PATH-COUNT[{depths[-1]}].depth')} at the right, on one "
        "logarithmic axis for every factor, from "
        f"{traced(trace, low, FMT)} at the bottom to {traced(trace, high, FMT)} at the top, "
        "a faint line every five powers of ten and a darker one at a gradient of one: "
        '<span class="gf-key gf-key--residual">residual</span> solid, '
        '<span class="gf-key gf-key--plain">plain</span> dashed, the upright line at the '
        "chosen depth. A gradient of exactly zero has no place on a logarithmic axis and is "
        "left out.</p>")


def _grid_table(trace: Trace, factors: Iterable[float], depth: int) -> str:
    """The input gradients of every factor at the deepest depth chosen, with a link to the
    whole grid: what a reader without JavaScript has besides the chapter's cell."""
    rows = "".join(
        f'<tr><th scope="row">{traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].factor")}</th>'
        f'<td>{traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].plain[{depth - 1}]", FMT)}</td>'
        f'<td>{traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].residual[{depth - 1}]", FMT)}'
        "</td></tr>" for f in factors)
    return (
        '<details class="gf-explorer__grid"><summary>Every factor at depth '
        f"{traced(trace, f'PATH-COUNT[{depth}].depth')}, as a table</summary>"
        '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
        '<table class="gf-grid"><thead><tr><th scope="col">branch factor <var>f</var></th>'
        '<th scope="col">plain input gradient</th><th scope="col">residual input gradient</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></div></div>"
        '<p>Every depth of every factor: the <code>EXPLORER-FACTOR</code> lines of the '
        f'<a href="{TRACE_PAGE}">trace</a>.</p></details>')


def _grid(trace: Trace, depths: Iterable[int] | None, factors: Iterable[float] | None
          ) -> tuple[tuple[float, ...], tuple[int, ...], tuple[float, int], dict[str, str],
                     dict[str, str]]:
    """The chosen factors and depths, the chapter's (factor, depth), and every cell's and
    every depth's counts HTML by key."""
    if trace.trace_id != TRACE:
        raise RenderError(trace.path, None, f"the explorer draws {TRACE}, not {trace.trace_id}")
    chosen_factors = tuple(trace.resolve("EXPLORER-CONFIG.factors") if factors is None
                           else factors)
    chosen_depths = tuple(range(1, trace.resolve("EXPLORER-CONFIG.max-depth") + 1)
                          if depths is None else depths)
    default = (trace.resolve("CHAPTER-PATHS.branch-factor"), trace.resolve("CHAPTER-PATHS.layers"))
    cells = _cells(trace)
    missing = [key for key in ((f, d) for f in chosen_factors for d in chosen_depths)
               if key not in cells]
    if missing or default not in cells or default[0] not in chosen_factors \
            or default[1] not in chosen_depths:
        raise RenderError(trace.path, None, "the explorer's grid lacks a cell for "
                          f"{(missing or [default])[0]} (factor, depth)")
    sections = {f"{index}-{depth}": _cell(trace, cells[(factor, depth)], index)
                for index, factor in enumerate(chosen_factors) for depth in chosen_depths}
    counts = {str(depth): _counts(trace, depth) for depth in chosen_depths}
    return chosen_factors, chosen_depths, default, sections, counts


def render_explorer_data(trace: Trace, depths: Iterable[int] | None = None,
                         factors: Iterable[float] | None = None) -> str:
    """The text of the script ``DATA_FILE``: every cell's and every depth's counts HTML
    (``diagrams.shown_html``), filed under ``DATA_NAME``."""
    cells, counts = _grid(trace, depths, factors)[3:]
    return shown_html_script(DATA_NAME, {"cells": cells, "counts": counts})


def render_explorer(trace: Trace, depths: Iterable[int] | None = None,
                    factors: Iterable[float] | None = None) -> Markup:
    """The explorer's HTML fragment (see the module docstring)."""
    chosen_factors, chosen_depths, default, sections, counts = _grid(trace, depths, factors)
    chosen = f"{chosen_factors.index(default[0])}-{default[1]}"
    low, high = _extremes(trace, chosen_factors, chosen_depths)
    axis = (math.log10(abs(trace.resolve(low))), math.log10(abs(trace.resolve(high))))
    curves = "".join(_curves(trace, factor, index, chosen_depths, axis, default[1],
                             factor == default[0])
                     for index, factor in enumerate(chosen_factors))
    first, last = chosen_depths[0], chosen_depths[-1]
    return Markup(
        '<figure class="gf-explorer" data-gf-explorer data-search-exclude '
        f'data-shown-html="{DATA_NAME}" data-shown-html-src="{DATA_URL}">'
        '<div class="gf-explorer__controls" hidden>'
        + _control("depth", "Depth <var>L</var>, the number of layers", first, last,
                   default[1], traced(trace, f"PATH-COUNT[{first}].depth"),
                   traced(trace, f"PATH-COUNT[{last}].depth"))
        + _control("factor", "Branch factor <var>f</var>, the derivative of every branch", 0,
                   len(chosen_factors) - 1, chosen_factors.index(default[0]),
                   *(traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].factor")
                     for f in (chosen_factors[0], chosen_factors[-1])))
        + '</div><p class="gf-explorer__live" aria-live="polite" aria-atomic="true"></p>'
        f'<div class="gf-explorer__curves">{curves}'
        f"{_curves_key(trace, chosen_factors, chosen_depths)}</div>"
        f'<div class="gf-explorer__cells">{sections[chosen]}{counts[str(default[1])]}</div>'
        f"{_grid_table(trace, chosen_factors, last)}</figure>")


def _control(name: str, label: str, low: int, high: int, default: int, first: Markup,
             last: Markup) -> str:
    """A labelled range input, the value it picks written beside its label (by the script,
    copied from the shown cell) and the values at its two ends beneath it."""
    return (
        f'<div class="gf-explorer__control"><label for="gf-explorer-{name}">{label}</label> '
        f'<output class="gf-explorer__value" for="gf-explorer-{name}"></output>'
        f'<input type="range" id="gf-explorer-{name}" name="{name}" min="{low}" max="{high}" '
        f'step="1" data-default="{default}">'
        f'<p class="gf-explorer__ends" aria-hidden="true"><span>{first}</span>'
        f"<span>{last}</span></p></div>")
