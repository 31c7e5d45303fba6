"""Experiment 2, "the product expanded into paths": the input gradient split by path length.

Contract: scaling every branch of a linear residual stack by ``α`` makes its input gradient a
polynomial in ``α`` whose ``k``-th coefficient is the gradient carried by the paths through
exactly ``k`` branches. `chapter_paths` measures that polynomial for the chapter's four-layer
stack by backward at ``L + 1`` integer ``α`` and solves the Vandermonde system in exact
rational arithmetic; `random_paths` splits a random 16-layer stack with a graded stack
(`graded.py`), which needs no fit at all, and reports how far a float64 fit at 17 Chebyshev
nodes strays from it (a Vandermonde system's conditioning grows exponentially with its size,
so the smallest coefficients are where the fit loses digits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from engine import init
from engine.experiments.gradient_flow.common import TRACE, Vector, norm
from engine.experiments.gradient_flow.graded import grade_gradients, graded_stack
from engine.experiments.registry import Experiment, register
from engine.nn import Linear, named_linear, residual_add
from engine.tensor import TensorValue
from engine.worked_example import constants as c


def scaled_stack_gradient(weights: list[np.ndarray], alpha: float, x: np.ndarray,
                          upstream: np.ndarray) -> np.ndarray:
    """Input gradient of ``h ← h + α·(h @ W_l)`` over the weights, by one backward."""
    leaf = TensorValue.parameter(x, name="x")
    stream = leaf
    for index, weight in enumerate(weights):
        update = named_linear(f"paths.{index}.weight", weight).forward(stream)
        stream = residual_add(stream, update.scale(alpha))
    stream.backward_with_seed(upstream)
    gradient = leaf.gradient_snapshot()
    assert gradient is not None  # x feeds the output along the identity path
    return gradient


def solve_exact(alphas: list[Fraction], values: list[Fraction]) -> list[Fraction]:
    """Coefficients ``c`` with ``Σ_k c_k α^k = value`` at every ``α``: Gauss-Jordan in
    rationals, so the only rounding is in the measured values themselves."""
    size = len(alphas)
    rows = [[alpha**k for k in range(size)] + [value] for alpha, value in zip(alphas, values,
                                                                               strict=True)]
    for col in range(size):
        pivot = next(r for r in range(col, size) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        rows[col] = [entry / rows[col][col] for entry in rows[col]]
        for r in range(size):
            if r != col and rows[r][col] != 0:
                rows[r] = [a - rows[r][col] * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [row[-1] for row in rows]


@dataclass(frozen=True)
class ChapterPathsConfig:
    layers: int = c.STACK_LAYERS
    branch_factor: float = c.STACK_BRANCH_FACTOR
    held_out_alpha: float = 0.5


@dataclass(frozen=True)
class ChapterPaths:
    """The chapter stack's input gradient by path length (first input component)."""

    layers: int
    branch_factor: float
    alphas: Vector
    gradients: Vector
    contributions: Vector
    counts: tuple[int, ...]
    components_equal: bool
    total: float
    gradient: float
    held_out_alpha: float
    max_deviation: float
    exact: bool
    methods_agree: bool


def chapter_weights(config: ChapterPathsConfig) -> list[np.ndarray]:
    size = len(c.INPUT_VALUES)
    return [config.branch_factor * np.eye(size) for _ in range(config.layers)]


def chapter_paths(seed: int, config: ChapterPathsConfig) -> ChapterPaths:
    """Recover the chapter stack's path contributions from backward at α = 0 .. L.

    Uses no randomness (``seed`` is taken only so that every experiment is called alike).
    The recovery is exact when every coefficient is a float64 and the polynomial predicts a
    further backward at ``held_out_alpha`` with zero deviation.
    """
    del seed
    weights = chapter_weights(config)
    x, upstream = np.array(c.INPUT_VALUES), np.array(c.UPSTREAM_VALUES)
    alphas = [Fraction(a) for a in range(config.layers + 1)]
    measured = [scaled_stack_gradient(weights, float(a), x, upstream) for a in alphas]
    # One exact solve per input component: the measured floats are exact rationals.
    columns = [solve_exact(alphas, [Fraction(float(g[i])) for g in measured])
               for i in range(len(x))]
    held_out = scaled_stack_gradient(weights, config.held_out_alpha, x, upstream)
    point = Fraction(config.held_out_alpha)
    deviation = max(abs(sum(coef * point**k for k, coef in enumerate(column))
                        - Fraction(float(held_out[i]))) for i, column in enumerate(columns))
    contributions = [float(coef) for coef in columns[0]]
    gradient = Fraction(float(scaled_stack_gradient(weights, 1.0, x, upstream)[0]))
    representable = all(Fraction(float(coef)) == coef for column in columns for coef in column)
    graded = _graded_contributions(weights, x, upstream)[:, 0].tolist()
    return ChapterPaths(
        layers=config.layers, branch_factor=config.branch_factor,
        alphas=tuple(float(a) for a in alphas), gradients=tuple(float(g[0]) for g in measured),
        contributions=tuple(contributions),
        counts=tuple(math.comb(config.layers, k) for k in range(config.layers + 1)),
        components_equal=all(column == columns[0] for column in columns),
        total=float(sum(columns[0])), gradient=float(gradient),
        held_out_alpha=config.held_out_alpha, max_deviation=float(deviation),
        exact=representable and deviation == 0 and sum(columns[0]) == gradient,
        methods_agree=graded == contributions,
    )


def _graded_contributions(weights: list[np.ndarray], x: np.ndarray,
                          upstream: np.ndarray) -> np.ndarray:
    """``[L + 1, d]``: the input gradient carried by the paths of each length (graded stack)."""
    leaf = TensorValue.parameter(x, name="x")
    branches = [Linear(TensorValue.constant(w)) for w in weights]
    stack = graded_stack(leaf, branches)
    return np.stack([g[0] for g in grade_gradients(stack, upstream, [leaf])])


@dataclass(frozen=True)
class RandomPathsConfig:
    """A linear residual stack with Gaussian branches of std ``gain / sqrt(width)``."""

    width: int = 32
    layers: int = 16
    gain: float = 0.5
    #: The branch gains whose every path is enumerated (the stack's own gain among them).
    gains: tuple[float, ...] = (0.25, 0.5, 1.0)


@dataclass(frozen=True)
class PathMagnitudes:
    """Every one of a stack's 2^L paths, one by one, grouped by how many branches it passes:
    the mean, least and largest norm of one path's gradient, and the lengths' totals (count
    times mean), whose peak says which length carries most of the gradient."""

    gain: float
    lengths: tuple[int, ...]
    mean: Vector
    low: Vector
    high: Vector
    total: Vector
    peak_length: int


@dataclass(frozen=True)
class PathLength:
    """The paths through exactly ``length`` branches: how many, and the gradient they carry."""

    length: int
    count: int
    norm: float
    per_path: float
    share: float


@dataclass(frozen=True)
class RandomPaths:
    width: int
    layers: int
    gain: float
    seed: int
    gradient_norm: float
    sum_deviation: float
    vandermonde_deviation: float
    peak_length: int
    gains: tuple[float, ...]
    lengths: tuple[PathLength, ...]
    magnitudes: tuple[PathMagnitudes, ...]
    #: The largest difference, over lengths, between the enumerated paths of a length summed
    #: and the graded stack's part for that length, relative to the part's norm.
    enumeration_deviation: float


def every_path(weights: list[np.ndarray], upstream: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """The input gradient of each path of ``h ← h + h @ W_l`` separately, and its length:
    backward from the output, each layer either passes a partial path along the identity or
    through its branch (``g @ W_lᵀ``), doubling them, so ``[2^L, d]`` vectors in the end."""
    paths, lengths = upstream[np.newaxis, :], np.zeros(1, dtype=np.int64)
    for weight in reversed(weights):
        paths = np.concatenate([paths, paths @ weight.T])
        lengths = np.concatenate([lengths, lengths + 1])
    return paths, lengths


def path_magnitudes(weights: list[np.ndarray], upstream: np.ndarray, gain: float
                    ) -> tuple[PathMagnitudes, np.ndarray]:
    """Every path's magnitude by length, and the paths of each length summed (``[L+1, d]``)."""
    paths, lengths = every_path(weights, upstream)
    sizes = np.linalg.norm(paths, axis=1)
    by_length = [sizes[lengths == k] for k in range(len(weights) + 1)]
    totals = tuple(float(np.sum(group)) for group in by_length)
    summed = np.stack([paths[lengths == k].sum(axis=0) for k in range(len(weights) + 1)])
    return PathMagnitudes(gain, tuple(range(len(weights) + 1)),
                          tuple(float(np.mean(g)) for g in by_length),
                          tuple(float(np.min(g)) for g in by_length),
                          tuple(float(np.max(g)) for g in by_length), totals,
                          int(np.argmax(totals))), summed


def random_paths(seed: int, config: RandomPathsConfig) -> RandomPaths:
    """Split a random stack's input gradient by path length, and compare with the α fit.

    ``norm`` is the norm of the gradient the length-``k`` paths carry together, ``per_path``
    that norm over their count C(L, k) (not one path's magnitude: the paths' sum cancels),
    ``share`` its fraction of the sum of the norms. ``magnitudes`` enumerates every path, one
    by one, for each gain of ``config.gains`` (the same draws, scaled).
    """
    width, layers = config.width, config.layers

    def drawn(gain: float) -> list[np.ndarray]:
        std = gain / math.sqrt(width)
        return [init.normal(np.random.default_rng((seed, 1, i)), (width, width), std)
                for i in range(layers)]

    weights = drawn(config.gain)
    x = init.normal(np.random.default_rng((seed, 2)), width, 1.0)
    upstream = init.normal(np.random.default_rng((seed, 3)), width, 1.0)
    graded = _graded_contributions(weights, x, upstream)
    gradient = scaled_stack_gradient(weights, 1.0, x, upstream)
    norms = [norm(row) for row in graded]
    counts = [math.comb(layers, k) for k in range(layers + 1)]
    lengths = tuple(PathLength(k, counts[k], norms[k], norms[k] / counts[k],
                               norms[k] / sum(norms)) for k in range(layers + 1))
    enumerated = {gain: path_magnitudes(drawn(gain), upstream, gain) for gain in config.gains}
    summed = enumerated[config.gain][1] if config.gain in enumerated else graded
    return RandomPaths(
        width=width, layers=layers, gain=config.gain, seed=seed, gradient_norm=norm(gradient),
        sum_deviation=norm(graded.sum(axis=0) - gradient) / norm(gradient),
        vandermonde_deviation=_vandermonde_deviation(weights, x, upstream, graded),
        peak_length=int(np.argmax(norms)), gains=config.gains, lengths=lengths,
        magnitudes=tuple(found for found, _ in enumerated.values()),
        enumeration_deviation=max(norm(mine - part) / norm(part)
                                  for mine, part in zip(summed, graded, strict=True)),
    )


def _vandermonde_deviation(weights: list[np.ndarray], x: np.ndarray, upstream: np.ndarray,
                           graded: np.ndarray) -> float:
    """The α-polynomial fit at Chebyshev nodes of [-1, 1], solved in float64: the largest,
    over path lengths, of its error relative to the graded coefficient of that length."""
    size = len(weights) + 1
    nodes = np.cos((2 * np.arange(size) + 1) * np.pi / (2 * size))
    measured = np.stack([scaled_stack_gradient(weights, float(a), x, upstream) for a in nodes])
    fitted = np.linalg.solve(np.vander(nodes, size, increasing=True), measured)
    return max(norm(fit - exact) / norm(exact) for fit, exact in zip(fitted, graded, strict=True))


register(Experiment(TRACE, "chapter_paths", ChapterPathsConfig, chapter_paths))
register(Experiment(TRACE, "random_paths", RandomPathsConfig, random_paths))
