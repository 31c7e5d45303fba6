"""Experiment 8: projection shortcuts, ``y = x W_s + F(x)``, for blocks that change width.

Contract: a stack of blocks widens the stream through ``widths`` (row-vector convention);
block ``k`` maps width ``d`` to ``d'`` with ``F(x) = relu(x W1) W2`` (``W1`` He-normal
``[d, d']``, ``W2`` Xavier-normal ``[d', d']`` shrunk by ``1 / sqrt(2 L)``) and one of these
shortcuts ``W_s`` ``[d, d']``:
- ``orthogonal``: orthonormal rows (the first ``d`` rows of a random orthogonal matrix); the
  forward keeps every norm, and its backward keeps the part of a gradient in its row space
  (for a gradient of random direction, a share ``sqrt(d / d')`` of its norm);
- ``random``: Gaussian with variance ``1 / d'``, the same scale as the orthogonal one;
- ``badly-scaled``: the random one times ``gain`` (small: every crossing shrinks the gradient);
- ``identity``: the reference, a stack of the same depth at the first width, ``W_s = I``.
The objective is ``J = Σ G · x_L`` for a fixed random ``G`` of norm one; the engine's backward
gives ``‖dJ/dx_l‖`` at every state (the root mean square over the batch of each input's
gradient norm), ``l = 0 .. L``, read through zero probes added to the stream.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from engine import init
from engine.experiments.claims import Get
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.common import Vector
from engine.experiments.residual_stream.corpus import TRACE
from engine.ops import relu, sum_axis
from engine.tensor import TensorValue

KINDS = ("identity", "orthogonal", "random", "badly-scaled")


@dataclass(frozen=True)
class ProjectionConfig:
    widths: tuple[int, ...] = (16, 24, 32, 48, 64, 96, 128)
    batch: int = 64
    gain: float = 0.25


@dataclass(frozen=True)
class Shortcut:
    kind: str
    widths: tuple[int, ...]
    gradient: Vector
    ratio: float


@dataclass(frozen=True)
class Projection:
    blocks: int
    batch: int
    gain: float
    seed: int
    widths: tuple[int, ...]
    shortcuts: tuple[Shortcut, ...]


# --8<-- [start:shortcut-matrix]
def shortcut_matrix(kind: str, rng: np.random.Generator, d: int, d_out: int,
                    gain: float) -> np.ndarray:
    if kind == "identity":
        return np.eye(d)
    if kind == "orthogonal":
        q, r = np.linalg.qr(rng.standard_normal((d_out, d_out)))
        return (q * np.sign(np.diag(r)))[:d, :]
    scale = gain if kind == "badly-scaled" else 1.0
    return rng.standard_normal((d, d_out)) * (scale / np.sqrt(d_out))
# --8<-- [end:shortcut-matrix]


def shortcut_stack(kind: str, seed: int, config: ProjectionConfig) -> Shortcut:
    widths = (config.widths[0],) * len(config.widths) if kind == "identity" else config.widths
    blocks = len(widths) - 1
    inputs = np.random.default_rng((seed, 80)).standard_normal((config.batch, widths[0]))
    x = TensorValue.constant(inputs)
    probes = []
    for k, (d, d_out) in enumerate(itertools.pairwise(widths)):
        probe = TensorValue.parameter(np.zeros(x.shape), name=f"probe{k}")
        probes.append(probe)
        x = x + probe
        rng = np.random.default_rng((seed, 81, k))
        w1 = init.he_normal(rng, d, d_out)
        w2 = init.xavier_normal(rng, d_out, d_out) / np.sqrt(2.0 * blocks)
        skip = shortcut_matrix(kind, np.random.default_rng((seed, 82, k)), d, d_out,
                               config.gain)
        branch = relu(x @ TensorValue.constant(w1)) @ TensorValue.constant(w2)
        x = x @ TensorValue.constant(skip) + branch
    last = TensorValue.parameter(np.zeros(x.shape), name="probe-out")
    probes.append(last)
    direction = np.random.default_rng((seed, 83)).standard_normal(x.shape)
    direction /= np.linalg.norm(direction)
    weighted = (x + last) * TensorValue.constant(direction)
    objective = sum_axis(sum_axis(weighted, 1), 0)
    objective.backward()
    gradient = tuple(float(np.sqrt(np.mean(np.sum(p.gradient() ** 2, axis=-1))))
                     for p in probes)
    return Shortcut(kind, widths, gradient, gradient[0] / gradient[-1])


def projection(seed: int, config: ProjectionConfig) -> Projection:
    shortcuts = tuple(shortcut_stack(kind, seed, config) for kind in KINDS)
    return Projection(len(config.widths) - 1, config.batch, config.gain, seed, config.widths,
                      shortcuts)


def bad_shortcut_attenuates(get: Get) -> str:
    bad, random = get("SHORTCUT[badly-scaled].ratio"), get("SHORTCUT[random].ratio")
    return "supports" if bad < 0.1 * random else "contradicts" if bad >= random else "qualifies"


register(Experiment(TRACE, "projection", ProjectionConfig, projection,
                    rules={"bad-shortcut-attenuates": bad_shortcut_attenuates}))
