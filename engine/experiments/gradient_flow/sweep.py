"""Experiment 3, "depth sweep at initialization": MLP stacks of growing depth, five variants.

Contract: every stack sees the same batch ``x`` (standard normal, ``[batch, width]``) and the
same scalar objective, a random linear readout ``J = Σ G ⊙ h_L`` with a fixed random ``G`` of
the output's shape scaled to norm 1, so the gradient arriving at the output is ``G`` for every
stack and depth and every gradient norm is a gain relative to it. Each
variant is `engine.nn.build_stack` with one seed for all of them, so two variants of one
depth share their first-layer weights. Values that overflow are capped and flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import init
from engine.experiments.gradient_flow.common import (
    TRACE,
    Vector,
    capped,
    gradient_or_zero,
    norm,
    probed,
)
from engine.experiments.registry import Experiment, register
from engine.nn import build_stack
from engine.tensor import TensorValue

# --8<-- [start:sweep-variants]
#: Lab variant → (`build_stack` variant, its ``init`` of the output projection W2).
VARIANTS: dict[str, tuple[str, str]] = {
    "plain": ("plain", "default"),
    "residual": ("residual", "default"),
    "residual-scaled": ("residual", "scaled"),
    "residual-zero": ("residual", "zero"),
    "prenorm": ("prenorm", "default"),
}
# --8<-- [end:sweep-variants]


@dataclass(frozen=True)
class SweepConfig:
    width: int = 32
    hidden: int = 128
    batch: int = 64
    depths: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    activations: tuple[str, ...] = ("relu", "gelu")
    variants: tuple[str, ...] = tuple(VARIANTS)


@dataclass(frozen=True)
class StackMeasure:
    """One stack at initialization: gains and norms along it, the weights' gradient norms.

    ``stream_gradient[l]`` is ``‖∂J/∂h_l‖`` (index 0 is the input's gain, the last is
    ``‖G‖ = 1``); ``stream_norm[l]`` is the root mean square over the batch of ``‖h_l‖``;
    the weight gradients are Frobenius norms, block by block.
    """

    stream_gradient: Vector
    stream_norm: Vector
    w1_gradient: Vector
    w2_gradient: Vector
    overflowed: bool


@dataclass(frozen=True)
class SweepCurve:
    """One variant and activation over every depth: input gain and final stream norm."""

    curve: str
    variant: str
    activation: str
    input_gradient: Vector
    stream_norm: Vector
    overflowed: bool


@dataclass(frozen=True)
class DeepestStack:
    """The deepest stack of one curve, layer by layer."""

    curve: str
    depth: int
    first_weight_gradient: Vector
    projection_gradient: Vector
    stream_gradient: Vector
    stream_norm: Vector
    overflowed: bool


@dataclass(frozen=True)
class Sweep:
    width: int
    hidden: int
    batch: int
    depths: tuple[int, ...]
    seed: int
    input_norm: float
    variants: tuple[str, ...]
    activations: tuple[str, ...]
    curves: tuple[SweepCurve, ...]
    deepest: tuple[DeepestStack, ...]
    objective: str = "random-readout"


def measure_stack(config: SweepConfig, variant: str, activation: str, depth: int, seed: int,
                  data: tuple[np.ndarray, np.ndarray]) -> StackMeasure:
    """Build one stack, run it on ``x`` and backward the readout ``G`` (``data = (x, G)``)."""
    kind, w2_init = VARIANTS[variant]
    stack = build_stack(depth, config.width, config.hidden, kind, seed=seed,
                        activation=activation, init=w2_init)
    x, readout = data
    stream, leaves, norms = TensorValue.parameter(x, name="x"), [], []
    for index, block in enumerate(stack.blocks):
        norms.append(_rms_row_norm(stream.value))
        leaves.append(stream)
        stream, leaf = probed(block(stream), f"after{index + 1}")
    norms.append(_rms_row_norm(stream.value))
    leaves.append(leaf)
    with np.errstate(over="ignore", invalid="ignore"):
        stream.backward_with_seed(readout)
        gains = [norm(gradient_or_zero(leaf)) for leaf in leaves]
    gains_capped, over_gain = capped(gains)
    norms_capped, over_norm = capped(norms)
    w1, over_w1 = capped([norm(gradient_or_zero(b.mlp.w1.weight)) for b in stack.blocks])
    w2, over_w2 = capped([norm(gradient_or_zero(b.mlp.w2.weight)) for b in stack.blocks])
    return StackMeasure(gains_capped, norms_capped, w1, w2,
                        over_gain or over_norm or over_w1 or over_w2)


def _rms_row_norm(values: np.ndarray) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.sqrt(np.mean(np.sum(values * values, axis=-1))))


def depth_sweep(seed: int, config: SweepConfig) -> Sweep:
    """Every variant and activation at every depth; the deepest stack of each layer by layer."""
    x = init.normal(np.random.default_rng((seed, 1)), (config.batch, config.width), 1.0)
    readout = init.normal(np.random.default_rng((seed, 2)), (config.batch, config.width), 1.0)
    readout = readout / norm(readout)
    curves, deepest = [], []
    for activation in config.activations:
        for variant in config.variants:
            name = f"{variant}-{activation}"
            runs = [measure_stack(config, variant, activation, depth, seed, (x, readout))
                    for depth in config.depths]
            curves.append(SweepCurve(
                curve=name, variant=variant, activation=activation,
                input_gradient=tuple(run.stream_gradient[0] for run in runs),
                stream_norm=tuple(run.stream_norm[-1] for run in runs),
                overflowed=any(run.overflowed for run in runs)))
            last = runs[-1]
            deepest.append(DeepestStack(name, config.depths[-1], last.w1_gradient,
                                        last.w2_gradient, last.stream_gradient, last.stream_norm,
                                        last.overflowed))
    return Sweep(config.width, config.hidden, config.batch, config.depths, seed,
                 _rms_row_norm(x), config.variants, config.activations, tuple(curves),
                 tuple(deepest))


register(Experiment(TRACE, "sweep", SweepConfig, depth_sweep))
