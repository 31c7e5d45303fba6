"""Plots of traced values: matplotlib → an inline, accessible, theme-neutral SVG.

Contract: ``render_plot(plot)`` draws a ``Plot`` (line series over x, linear or log axes) with
matplotlib's SVG backend and returns an ``<svg>`` element ready to inline, like the Graphviz
diagrams (``diagrams.svg``), and lighter (``diagrams.svg_compact``): text kept as text
(``svg.fonttype = none``), no XML prolog, comments or metadata, every id prefixed with the plot
id and hashed with a fixed salt, so the same plot gives byte-identical SVG; ``role="img"`` with
a first-child ``<title>`` and ``<desc>``; black turned into ``currentColor`` and a transparent
background, so it reads in light and dark themes. Series are told apart by line style and marker
as well as colour; a series may carry a band (low and high values per x, drawn translucent
behind its line), and long series get markers on a subset of their points only; a series may fix
its look (``look``) so a variant keeps it across charts, and the legend sits below the axes,
never over the data. Yardsticks (``references``) are thin dotted lines named at their right end
(above the line; under it near the top of the axes, where the frame would cut the name);
``ylim`` fixes the y range (charts compared side by side share it).
Every plotted value comes from the ``Series`` (built from trace paths by the page's plot
declarations); tick labels are derived by matplotlib from the plotted data's range.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import KW_ONLY, dataclass
from functools import cache
from typing import Any

from diagrams.errors import RenderError
from diagrams.format import MINUS, SUPERSCRIPT
from diagrams.svg import ID_RE, clean_svg
from diagrams.svg_compact import compact_svg

#: Okabe–Ito colours that keep their contrast on Material's light and slate backgrounds.
COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#D55E00", "#999999")
STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "x")
#: Opacity of a band (a spread drawn behind its line).
BAND_ALPHA = 0.25
#: Longer series get a marker on about this many points only.
MARKED = 12
#: A plot's width and height in inches, unless it names its own.
SIZE = (6.4, 3.6)
#: The phone-width rendering's size: scaled to a phone's column, its text stays readable.
NARROW_SIZE = (4.0, 3.4)
#: The margin left around everything drawn (axes, labels, legend), in inches.
PAD_INCHES = 0.05
#: "log2" is a base-two log axis ticked at the plotted x values (depths that double).
SCALES = ("linear", "log", "log2", "symlog")


@dataclass(frozen=True)
class Series:
    """One line: its label and points (x and y of equal length)."""

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    #: An optional band drawn behind the line, from ``low`` to ``high`` at each x (a spread
    #: over repeats, say); both or neither, each as long as ``x``.
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None
    #: The colour, line style and marker to draw with (``diagrams.looks``; default: by the
    #: series' place in the plot), so a variant keeps its look across every chart.
    look: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class Plot:
    """A line chart: its id, accessible title and description, axes and series."""

    plot_id: str
    title: str
    desc: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    # The rest by keyword only: two of them are tuples of floats or flags a position could
    # silently swap (a size passed as ``narrow`` drew a wide chart at phone width).
    _: KW_ONLY
    xscale: str = "linear"
    yscale: str = "linear"
    #: Drawn for a phone-width column: a narrower figure, the legend in one column below.
    narrow: bool = False
    #: Width and height in inches (default `SIZE`); a narrower figure keeps its text
    #: readable when a phone scales it down to the column.
    size: tuple[float, float] | None = None
    #: Horizontal yardsticks as (label, y): a thin grey line each, labelled at its right end.
    references: tuple[tuple[str, float], ...] = ()
    #: The y range to show (low, high); None: matplotlib's, from what is drawn.
    ylim: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        # Refused when declared, not when drawn: a chart's declaration error then names
        # the file that declares it (``diagrams.charts.plot_of``).
        _check(self)


def _check(plot: Plot) -> None:
    """Raise ``RenderError`` for a plot no drawing could show as declared."""
    where = f"<plot {plot.plot_id}>"
    if not ID_RE.fullmatch(plot.plot_id):
        raise RenderError(where, None, "plot id must match [A-Za-z][A-Za-z0-9_-]*")
    if plot.size is not None and not all(0 < side <= 20 for side in plot.size):
        raise RenderError(where, None, "a plot's size is a width and a height in inches")
    if plot.xscale not in SCALES or plot.yscale not in SCALES:
        raise RenderError(where, None, f"axis scales must be one of {', '.join(SCALES)}")
    if not all(math.isfinite(y) for _, y in plot.references):
        raise RenderError(where, None, "a reference line needs a finite value")
    if plot.ylim is not None and not plot.ylim[0] < plot.ylim[1]:
        raise RenderError(where, None, "a y range is a low and a larger high")
    for series in plot.series:
        if len(series.x) != len(series.y) or not series.x:
            raise RenderError(where, None, f"series {series.label!r}: x and y must be "
                              "non-empty and of one length")
        if (series.low is None) != (series.high is None) or (series.low is not None and not (
                len(series.low) == len(series.high or ()) == len(series.x))):
            raise RenderError(where, None, f"series {series.label!r}: a band needs low and "
                              "high values, one of each per x")


@cache
def load_matplotlib() -> tuple[Any, Any, Any]:
    """matplotlib, its pyplot and its ticker, with the SVG backend, imported on first use: a
    build whose charts come from the cache never pays the third of a second of importing it,
    and a build that draws them on two or more cores pays it in its chart workers only."""
    import matplotlib

    matplotlib.use("svg")
    from matplotlib import pyplot, ticker

    return matplotlib, pyplot, ticker


def _draw(plot: Plot) -> str:
    matplotlib, pyplot, _ = load_matplotlib()
    settings = {"svg.fonttype": "none", "svg.hashsalt": plot.plot_id, "font.size": 10,
                "axes.edgecolor": "black", "text.color": "black", "axes.labelcolor": "black",
                "xtick.color": "black", "ytick.color": "black", "font.family": "DejaVu Sans"}
    with matplotlib.rc_context():
        # From matplotlib's own defaults, not this machine's: a matplotlibrc (the user's, or
        # $MATPLOTLIBRC's) must not change a drawing, nor set a layout engine on its figure.
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(settings)
        size = NARROW_SIZE if plot.narrow else (plot.size or SIZE)
        figure, axes = pyplot.subplots(figsize=size)
        try:
            for place, series in enumerate(plot.series):
                colour, style, marker = series.look or (
                    COLOURS[place % len(COLOURS)], STYLES[place % len(STYLES)],
                    MARKERS[place % len(MARKERS)])
                if series.low is not None and series.high is not None:
                    axes.fill_between(series.x, series.low, series.high, color=colour,
                                      alpha=BAND_ALPHA, linewidth=0)
                axes.plot(series.x, series.y, label=series.label, color=colour,
                          linestyle=style, marker=marker, markersize=4, linewidth=1.5,
                          markevery=_mark_every(len(series.x)))
            _reference_lines(axes, plot)
            _scale(axes, plot)
            if plot.ylim is not None:
                axes.set_ylim(*plot.ylim)
            _reference_labels(axes, plot)
            axes.set_xlabel(plot.xlabel)
            axes.set_ylabel(plot.ylabel)
            axes.grid(True, linewidth=0.4, alpha=0.4, color="black")
            legend = None
            if len(plot.series) > 1:
                # Below the axes, never over the data; the saved box grows to hold it.
                columns = 1 if plot.narrow else (2 if len(plot.series) > 2 else len(plot.series))
                legend = axes.legend(frameon=False, loc="upper center", ncol=columns)
            figure.patch.set_alpha(0.0)
            axes.patch.set_alpha(0.0)
            figure.tight_layout()
            if legend is not None:
                _below_xlabel(figure, axes, legend)
            # Measured here, not by savefig's "tight": tight_layout leaves a placeholder
            # layout engine behind, and with one set savefig draws the whole figure once
            # more before measuring it. Laid out, measured, drawn: three passes, not four
            # (an eighth of a chart's time; the same drawing).
            figure.set_layout_engine(None)
            box = figure.get_tightbbox().padded(PAD_INCHES)
            out = io.StringIO()
            figure.savefig(out, format="svg", bbox_inches=box,
                           metadata={"Date": None, "Creator": None, "Format": None,
                                     "Type": None})
        finally:
            pyplot.close(figure)
    return out.getvalue()


def _reference_lines(axes: Any, plot: Plot) -> None:
    """Yardsticks behind the data, thin dotted lines across the axes."""
    for _, y in plot.references:
        axes.axhline(y, color="black", alpha=0.55, linewidth=0.8, linestyle=(0, (1, 2)),
                     zorder=0.5)


#: The room a yardstick's name needs above its line (a share of the axes' height): nearer the
#: top, the frame would cut it.
NEAR_TOP = 0.08


def _reference_labels(axes: Any, plot: Plot) -> None:
    """Each yardstick named at the right edge, just above its line. Near the top the axes
    grow to make room, unless the chart fixes its range: then the name goes under the line."""
    def height(y: float) -> float:
        return axes.transAxes.inverted().transform(axes.transData.transform((0, y)))[1]

    top = max((y for _, y in plot.references), default=None)
    if top is not None and plot.ylim is None and height(top) > 1 - NEAR_TOP:
        low, high = axes.get_ylim()
        if axes.get_yscale() == "log":
            axes.set_ylim(low, high * (high / low) ** NEAR_TOP)
        else:
            axes.set_ylim(low, high + (high - low) * NEAR_TOP)
    for label, y in plot.references:
        below = height(y) > 1 - NEAR_TOP
        axes.annotate(label, xy=(1.0, y), xycoords=("axes fraction", "data"),
                      xytext=(-2, -1.5 if below else 1.5), textcoords="offset points",
                      ha="right", va="top" if below else "bottom", fontsize=8, alpha=0.8)


def _below_xlabel(figure: Any, axes: Any, legend: Any) -> None:
    """Move the legend just under the x label, wherever tall tick labels (powers of ten)
    pushed the label."""
    axis = axes.xaxis.get_tightbbox()  # ticks and label, the label placed as drawn
    top = axes.transAxes.inverted().transform((0.0, axis.y0))[1]
    legend.set_bbox_to_anchor((0.5, top - 0.02), transform=axes.transAxes)


def _mark_every(points: int) -> int:
    """Every point carries a marker on short series; long ones (training curves) get about
    `MARKED` markers each, enough to tell the lines apart without hiding them."""
    return 1 if points <= MARKED else points // MARKED


#: What matplotlib's log formatters write: ``$\mathdefault{…}$`` around a sign, a number, or
#: ``[C\times]B^{E}``.
_MATHTEXT_LABEL = re.compile(r"\$\\mathdefault\{(-?)([^{}$\\^]*?)(?:\\times([^{}$\\^]*))?"
                             r"(?:\^\{(-?\d+)\})?\}\$")


def plain_power(label: str) -> str:
    """A log axis's tick label as plain text (``10⁻²``, ``2×10³``, ``−10¹``) rather than
    mathtext, whose parser costs about a third of drawing a chart; a label of any other form
    is returned unchanged."""
    match = _MATHTEXT_LABEL.fullmatch(label)
    if match is None:
        return label
    sign, first, base, exponent = match.groups()
    text = first if base is None else f"{first}\u00d7{base}"
    if exponent is not None:
        text += exponent.translate(SUPERSCRIPT)
    # mathtext draws a leading hyphen as a minus sign; so does the plain label.
    return (MINUS if sign else "") + text


@cache
def plain_powers() -> type:
    """``PlainPowers``: matplotlib's log-axis labels (same ticks, same values), written as
    plain text (a class made on first use, as it derives from matplotlib's formatter)."""
    ticker = load_matplotlib()[2]

    class PlainPowers(ticker.LogFormatterSciNotation):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_power(super().__call__(x, pos))

    return PlainPowers


def _plain_log_labels(axis: Any) -> None:
    ticker, plain = load_matplotlib()[2], plain_powers()
    major, minor = axis.get_major_formatter(), axis.get_minor_formatter()
    base = getattr(axis.get_transform(), "base", None)  # a log scale's transform names it
    if type(major) is ticker.LogFormatterSciNotation:
        axis.set_major_formatter(plain(base, labelOnlyBase=major.labelOnlyBase))
    if type(minor) is ticker.LogFormatterSciNotation:
        axis.set_minor_formatter(plain(base, labelOnlyBase=minor.labelOnlyBase))


def _scale(axes: Any, plot: Plot) -> None:
    ticker = load_matplotlib()[2]
    if plot.xscale == "log2":
        axes.set_xscale("log", base=2)
        ticks = sorted({x for series in plot.series for x in series.x})
        axes.xaxis.set_major_locator(ticker.FixedLocator(ticks))
        axes.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        axes.xaxis.set_minor_locator(ticker.NullLocator())
    else:
        axes.set_xscale(plot.xscale)
    if plot.yscale in ("log", "log2"):
        # A zero (an untouched embedding's error, say) has no place on a log axis: leave the
        # point out of the drawing (its values table still shows it) rather than clip it to
        # the axis's edge, which would draw a line falling off the chart.
        axes.set_yscale("log", base=2 if plot.yscale == "log2" else 10, nonpositive="mask")
    else:
        axes.set_yscale(plot.yscale)
    _plain_log_labels(axes.xaxis)
    _plain_log_labels(axes.yaxis)


def render_plot(plot: Plot) -> str:
    """The inline SVG of ``plot`` (see the module docstring)."""
    raw = _draw(plot)
    # matplotlib writes sizes in pt on the root and colours as hex: map them to what the
    # diagram cleaner expects, then let it strip, prefix and theme the rest.
    raw = re.sub(r"<metadata>.*?</metadata>", "", raw, flags=re.DOTALL)
    raw = compact_svg(raw).replace("#000000", "currentColor")
    return clean_svg(raw, plot.plot_id, plot.title, plot.desc, f"<plot {plot.plot_id}>",
                     kind="residual-plot")
