"""What a chart is: its trace, its lines as value paths, its texts and axes (declarations only;
``diagrams.charts`` draws them)."""

from __future__ import annotations

from dataclasses import dataclass

Paths = str | tuple[str, ...]


@dataclass(frozen=True)
class Line:
    """One plotted line: its legend label and where its x and y values are in the trace.

    ``x = POSITIONS`` plots the values against their position, one to the count of y values
    (a block of a stack, say); the values table then names each row by its position in words,
    so no untraced digit reaches a page. ``low`` and ``high`` (both or neither) draw a band
    behind the line and add their own columns to the values table.
    """

    label: str
    x: Paths | None
    y: Paths
    low: Paths | None = None
    high: Paths | None = None
    #: Its colour, line style and marker, by the name ``diagrams.looks`` declares them under
    #: ("plain/eight", "quantity/2"): one look per variant across every chart.
    look: str = ""
    #: With ``x = POSITIONS``: the position of the first value; zero for a vector that starts
    #: with the state before any block (the embedding, say).
    first: int = 1


@dataclass(frozen=True)
class Yardstick:
    """A horizontal yardstick at one traced value (``y``, a path), labelled on the chart."""

    label: str
    y: str


#: ``Line.x`` for values plotted against their position (first, second, ...).
POSITIONS = None


@dataclass(frozen=True)
class Chart:
    """A chart of one trace's curves; texts hold no digits (they are shown on pages)."""

    name: str
    trace: str
    title: str
    desc: str
    xlabel: str
    ylabel: str
    lines: tuple[Line, ...]
    xscale: str = "linear"
    yscale: str = "linear"
    #: How the values table shows y values (a display format of ``diagrams.format``).
    fmt: str = "sci"
    #: Width and height in inches (``diagrams.plots.Plot.size``); None: the plots' default.
    size: tuple[float, float] | None = None
    #: Yardsticks drawn across the plot, each labelled at its right end.
    references: tuple[Yardstick, ...] = ()
    #: Charts (by name) drawn on the same y range as this one, so they compare by eye.
    shares_y_with: tuple[str, ...] = ()
