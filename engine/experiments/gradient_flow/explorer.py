"""Experiment 7, "explorer grid": every depth and branch factor of the scalar stacks, with the
residual gradient split by path length, precomputed so the page does no arithmetic.

Contract: for each factor ``f`` of the grid and depth ``D = 1 .. max_depth``, the plain input
gradient (``f^D``), the residual one (``(1+f)^D``) and the gradient carried by the paths
through exactly ``k`` branches (``C(D, k) f^k``), all measured by backward, never evaluated
from those formulas. Every layer of a stack is the same, so a stack of depth ``D`` is the last
``D`` layers of one stack of depth ``max_depth``: one backward through that stack, read at
the stream entering each layer (zero probes), gives every depth at once, and one backward
per path length through a graded stack (`graded.py`) gives the contributions. All factors
run at once, one lane each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.experiments.gradient_flow.common import TRACE, Vector, flat
from engine.experiments.gradient_flow.graded import grade_gradients, graded_stack
from engine.experiments.gradient_flow.scalar import depth_gradients
from engine.experiments.registry import Experiment, register
from engine.ops import mul
from engine.tensor import TensorValue


@dataclass(frozen=True)
class ExplorerConfig:
    """The grid: depths ``1 .. max_depth``, factors ``low, low + step, .., high``."""

    max_depth: int = 32
    low: float = -1.5
    high: float = 1.5
    step: float = 0.25

    @property
    def factors(self) -> tuple[float, ...]:
        count = round((self.high - self.low) / self.step) + 1
        return tuple(self.low + i * self.step for i in range(count))


@dataclass(frozen=True)
class FactorCurves:
    """One factor: input gradients of depth 1 .. max_depth."""

    factor: float
    plain: Vector
    residual: Vector


@dataclass(frozen=True)
class PathCount:
    """How many paths of each length ``0 .. depth`` a residual stack of ``depth`` has."""

    depth: int
    counts: tuple[int, ...]


@dataclass(frozen=True)
class ExplorerCell:
    """One (factor, depth): both input gradients and the contribution of each path length;
    ``peak_length`` is the length whose contribution is largest in magnitude."""

    cell: int
    factor: float
    depth: int
    plain: float
    residual: float
    contributions: Vector
    peak_length: int


@dataclass(frozen=True)
class Explorer:
    max_depth: int
    factors: Vector
    curves: tuple[FactorCurves, ...]
    counts: tuple[PathCount, ...]
    cells: tuple[ExplorerCell, ...]

    @property
    def last_cell(self) -> int:
        return len(self.cells) - 1


def path_contributions(factors: tuple[float, ...], max_depth: int) -> np.ndarray:
    """``[depth, length, lane]``: the gradient the paths of each length carry, depth 1 .. max.

    Entry ``[D - 1, k]`` is read at the probe before layer ``max_depth - D + 1`` in the
    backward from grade ``k``; lengths above ``D`` stay zero (no such path).
    """
    lanes = len(factors)
    branch = TensorValue.constant(np.asarray(factors, dtype=np.float64), name="factors")
    x = TensorValue.parameter(np.ones(lanes), name="x")
    stack = graded_stack(x, [lambda h: mul(h, branch)] * max_depth, probe=True)
    by_length = grade_gradients(stack, np.ones(lanes), stack.entry_probes)
    table = np.zeros((max_depth, max_depth + 1, lanes))
    for length, at_entries in enumerate(by_length):
        for entry, gradient in enumerate(at_entries):
            table[max_depth - entry - 1, length] = gradient
    return table


def explorer_grid(seed: int, config: ExplorerConfig) -> Explorer:
    """The whole grid. Uses no randomness (``seed`` is taken only so that every experiment
    is called alike). Cells run factor by factor, depth 1 .. max within each."""
    del seed
    factors, depth = config.factors, config.max_depth
    # Row l is the gradient at the stream after l layers: a stack of depth D starts at row L - D.
    plain = depth_gradients(factors, depth, False, 1.0, 1.0)[depth - 1 :: -1]
    residual = depth_gradients(factors, depth, True, 1.0, 1.0)[depth - 1 :: -1]
    paths = path_contributions(factors, depth)
    curves = tuple(FactorCurves(float(f), flat(plain[:, i]), flat(residual[:, i]))
                   for i, f in enumerate(factors))
    counts = tuple(PathCount(d, tuple(math.comb(d, k) for k in range(d + 1)))
                   for d in range(1, depth + 1))
    cells = []
    for lane, factor in enumerate(factors):
        for d in range(1, depth + 1):
            row = paths[d - 1, : d + 1, lane]
            cells.append(ExplorerCell(len(cells), float(factor), d, float(plain[d - 1, lane]),
                                      float(residual[d - 1, lane]), flat(row),
                                      int(np.argmax(np.abs(row)))))
    return Explorer(depth, tuple(float(f) for f in factors), curves, counts, tuple(cells))


register(Experiment(TRACE, "explorer", ExplorerConfig, explorer_grid))
