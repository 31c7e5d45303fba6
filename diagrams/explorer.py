"""The gradients lab's explorer: every cell of the trace's grid as HTML, rendered in Python.

Contract: ``render_explorer(trace)`` is a pure function of trace ``gradient-flow-v3`` that
returns one HTML fragment. For every (branch factor, depth) cell of the grid (records
``EXPLORER-CONFIG``, ``EXPLORER``, ``PATH-COUNT``, ``EXPLORER-FACTOR``) it holds a section
whose every number is a traced span (``diagrams.format.traced``): the factor, the depth, the
plain and the residual input gradient, the path length that carries the most, and the
contributions of every path length as one traced vector. The bar lengths beside them are
the contributions' magnitudes relative to the cell's largest, computed here at render time
into a CSS custom property; the bars are decoration (``aria-hidden``), the traced vector is the
value. Only the cell for the chapter's own stack (``CHAPTER-PATHS``: its factor and number of
layers) is visible; the others carry ``hidden``, and ``docs/assets/js/explorer.js`` only
switches which one is shown (no arithmetic in the browser). The controls are native range
inputs with labels, hidden until the script runs; a folded table of every factor's plain and
residual gradients by depth (``EXPLORER-FACTOR``) serves readers without JavaScript.
``depths`` and ``factors`` restrict the grid (for small golden files); the page shows it all.
The fragment is numbers only, and no search should find it: it is marked excluded from the
search (``data-search-exclude``). Its root
is a ``<figure>`` because Material's search matches the excluded element by tag name, so the
first ``</div>`` inside a ``<div>`` root would end the exclusion.
"""

from __future__ import annotations

from collections.abc import Iterable

from markupsafe import Markup

from diagrams.errors import RenderError
from diagrams.format import traced
from tracefile import Trace
from tracefile.values import trace_repr

TRACE = "gradient-flow-v3"
#: The format of every gradient the explorer shows (they span many powers of ten).
FMT = "sci"


def _cells(trace: Trace) -> dict[tuple[float, int], int]:
    """(factor, depth) → the cell's key in the trace."""
    return {(record.factor, record.depth): record.cell for record in trace.explorer}


def _width(value: float, largest: float) -> str:
    """A bar's length as a percentage of the cell's largest magnitude, one decimal."""
    share = abs(value) / largest if largest > 0 else 0.0
    return f"{100 * share:.1f}".removesuffix(".0") + "%"


def _cell(trace: Trace, cell: int, factor_index: int, shown: bool) -> str:
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
        f'<section class="gf-cell" data-factor-index="{factor_index}" data-depth="{depth}"'
        f'{"" if shown else " hidden"}>'
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


def _counts(trace: Trace, depth: int, shown: bool) -> str:
    return (
        f'<p class="gf-counts" data-depth="{depth}"{"" if shown else " hidden"}>'
        f"How many paths pass through each number of branches, for depth "
        f"{traced(trace, f'PATH-COUNT[{depth}].depth')}: "
        f"{traced(trace, f'PATH-COUNT[{depth}].counts')}.</p>")


def _grid_table(trace: Trace, factors: Iterable[float]) -> str:
    rows = "".join(
        f'<tr><th scope="row">{traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].factor")}</th>'
        f'<td>{traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].plain", FMT)}</td>'
        f'<td>{traced(trace, f"EXPLORER-FACTOR[{trace_repr(f)}].residual", FMT)}</td></tr>'
        for f in factors)
    return (
        '<details class="gf-explorer__grid"><summary>The whole grid as a table: plain and '
        "residual input gradients for every factor, by depth from one layer up to "
        f"{traced(trace, 'EXPLORER-CONFIG.max-depth')}</summary>"
        '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
        '<table class="gf-grid"><thead><tr><th scope="col">branch factor <var>f</var></th>'
        '<th scope="col">plain input gradient, by depth</th>'
        '<th scope="col">residual input gradient, by depth</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></div></details>")


def render_explorer(trace: Trace, depths: Iterable[int] | None = None,
                    factors: Iterable[float] | None = None) -> Markup:
    """The explorer's HTML fragment (see the module docstring)."""
    if trace.trace_id != TRACE:
        raise RenderError(trace.path, None, f"the explorer draws {TRACE}, not {trace.trace_id}")
    all_factors = trace.resolve("EXPLORER-CONFIG.factors")
    max_depth = trace.resolve("EXPLORER-CONFIG.max-depth")
    chosen_factors = tuple(all_factors if factors is None else factors)
    chosen_depths = tuple(range(1, max_depth + 1) if depths is None else depths)
    default = (trace.resolve("CHAPTER-PATHS.branch-factor"), trace.resolve("CHAPTER-PATHS.layers"))
    cells = _cells(trace)
    missing = [key for key in ((f, d) for f in chosen_factors for d in chosen_depths)
               if key not in cells]
    if missing or default not in cells or default[0] not in chosen_factors \
            or default[1] not in chosen_depths:
        raise RenderError(trace.path, None, "the explorer's grid lacks a cell for "
                          f"{(missing or [default])[0]} (factor, depth)")
    sections = "".join(
        _cell(trace, cells[(factor, depth)], index, (factor, depth) == default)
        for index, factor in enumerate(chosen_factors) for depth in chosen_depths)
    counts = "".join(_counts(trace, depth, depth == default[1]) for depth in chosen_depths)
    first, last = chosen_depths[0], chosen_depths[-1]
    return Markup(
        '<figure class="gf-explorer" data-gf-explorer data-search-exclude>'
        '<div class="gf-explorer__controls" hidden>'
        '<div class="gf-explorer__control"><label for="gf-explorer-depth">Depth <var>L</var>, '
        "the number of layers</label>"
        f'<input type="range" id="gf-explorer-depth" name="depth" min="{first}" max="{last}" '
        f'step="1" data-default="{default[1]}"></div>'
        '<div class="gf-explorer__control"><label for="gf-explorer-factor">Branch factor '
        "<var>f</var>, the derivative of every branch</label>"
        f'<input type="range" id="gf-explorer-factor" name="factor" min="0" '
        f'max="{len(chosen_factors) - 1}" step="1" '
        f'data-default="{chosen_factors.index(default[0])}"></div></div>'
        '<p class="gf-explorer__live" aria-live="polite" aria-atomic="true"></p>'
        f'<div class="gf-explorer__cells">{sections}{counts}</div>'
        f"{_grid_table(trace, chosen_factors)}</figure>")
