"""Experiment 1, "the +1 over ten layers": scalar stacks, plain ``h ← f·h`` and residual
``h ← h + f·h``, with the gradient at every depth measured by one backward.

Contract: `depth_gradients` runs one stack per branch factor at once (a lane per factor: the
stream is a vector and each lane is an independent scalar stack) and returns the gradient of
the output with respect to the stream after every layer, read with zero probes (the engine
keeps gradients on leaves only). `ten_layers` is the experiment: the chapter's worked example
(input 2, upstream gradient 1) for ten layers and a few factors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.experiments.gradient_flow.common import (
    TRACE,
    Vector,
    fate,
    flat,
    gradient_or_zero,
    probed,
)
from engine.experiments.registry import Experiment, register
from engine.nn import residual_add
from engine.ops import mul
from engine.tensor import TensorValue


# --8<-- [start:scalar-stacks]
def depth_gradients(
    factors: Sequence[float], layers: int, residual: bool, x: float = 2.0, upstream: float = 1.0
) -> np.ndarray:
    """``[layers + 1, lanes]``: row ``l`` is the gradient reaching the stream after ``l`` layers.

    Row 0 is the input gradient, row ``layers`` the upstream gradient itself. The branch of a
    lane is ``F(h) = f·h`` with its lane's ``f``; a plain layer replaces the stream with it.
    """
    lanes = len(factors)
    branch = TensorValue.constant(np.asarray(factors, dtype=np.float64), name="factors")
    stream = TensorValue.parameter(np.full(lanes, x), name="x")
    leaves = [stream]
    for depth in range(layers):
        update = mul(stream, branch)
        stream = residual_add(stream, update) if residual else update
        stream, leaf = probed(stream, f"after{depth + 1}")
        leaves.append(leaf)
    stream.backward_with_seed(np.full(lanes, upstream))
    return np.stack([gradient_or_zero(leaf) for leaf in leaves])
# --8<-- [end:scalar-stacks]


@dataclass(frozen=True)
class TenLayersConfig:
    """The stacks of experiment 1; ``band`` sets the fate words (see `common.fate`)."""

    layers: int = 10
    factors: tuple[float, ...] = (-1.0, 0.1, 0.5, 0.9, 1.5)
    input: float = 2.0
    upstream: float = 1.0
    band: float = 10.0


@dataclass(frozen=True)
class FactorRun:
    """Both stacks for one branch factor: the input gradient and the gradient at each depth."""

    factor: float
    plain: float
    residual: float
    plain_by_depth: Vector
    residual_by_depth: Vector
    plain_fate: str
    residual_fate: str


@dataclass(frozen=True)
class TenLayers:
    layers: int
    input: float
    upstream: float
    band: float
    runs: tuple[FactorRun, ...]


def ten_layers(seed: int, config: TenLayersConfig) -> TenLayers:
    """Plain and residual scalar stacks of ``config.layers`` layers for each factor.

    Uses no randomness (``seed`` is taken only so that every experiment is called alike).
    Factors are measured in increasing order, the order the trace keys them by.
    """
    del seed
    factors = sorted(config.factors)
    plain = depth_gradients(factors, config.layers, False, config.input, config.upstream)
    residual = depth_gradients(factors, config.layers, True, config.input, config.upstream)
    runs = tuple(
        FactorRun(
            factor=float(factor),
            plain=float(plain[0, lane]),
            residual=float(residual[0, lane]),
            plain_by_depth=flat(plain[:, lane]),
            residual_by_depth=flat(residual[:, lane]),
            plain_fate=fate(float(plain[0, lane]) / config.upstream, config.band),
            residual_fate=fate(float(residual[0, lane]) / config.upstream, config.band),
        )
        for lane, factor in enumerate(factors)
    )
    return TenLayers(config.layers, config.input, config.upstream, config.band, runs)


register(Experiment(TRACE, "ten_layers", TenLayersConfig, ten_layers))
