"""Experiment 5, "where the norm goes": post-norm and pre-norm MLP stacks at initialization.

Contract: a stack of RMSNorm blocks (`engine.nn.build_stack`, variants ``postnorm``
``h ← norm(h + F(h))`` and ``prenorm`` ``h ← h + F(norm(h))``) reads a standard normal batch
and feeds a softmax cross-entropy readout: logits ``= h_L U`` over a small vocabulary with
random labels, ``U`` Xavier-normal (a regression readout did not show the placement effect,
see the lab's design notes). Pre-norm is read twice from one forward: with a final RMSNorm
before ``U`` (the usual design) and without it, to show what the final norm does. For each
block we measure the gradient norm of its output projection ``W2``, over several repeats
(each a different seed for weights, inputs, labels and readout), and report mean, spread and
the ratio of the last block's to the first's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import init
from engine.experiments.gradient_flow.common import TRACE, Vector, flat, gradient_or_zero, norm
from engine.experiments.registry import Experiment, register
from engine.nn import Norm, build_stack
from engine.ops import cross_entropy
from engine.tensor import GraphRetention, TensorValue

#: Curve kinds: (placement, final norm before the readout).
READOUTS = (("postnorm", False), ("prenorm", True), ("prenorm", False))


@dataclass(frozen=True)
class PlacementConfig:
    width: int = 32
    hidden: int = 128
    batch: int = 256
    vocab: int = 50
    repeats: int = 10
    #: Rows per forward: the batch runs in chunks through the same weights. Chosen when
    #: OpenBLAS still ran these products on several threads (which made this experiment
    #: 10-20x slower, and erratic, on a loaded 2-core machine); every run has one thread now,
    #: and the chunks stay because they fix the products' shapes, hence the trace's bytes.
    chunk: int = 64
    blocks: tuple[int, ...] = (12, 24)
    activation: str = "relu"


@dataclass(frozen=True)
class PlacementCurve:
    """One placement at one depth, over the repeats (``gradient_*`` are per block)."""

    curve: str
    placement: str
    blocks: int
    final_norm: bool
    gradient_mean: Vector
    gradient_std: Vector
    gradient_low: Vector
    gradient_high: Vector
    last_over_first: float
    ratio_low: float
    ratio_high: float
    stream_norm_squared: Vector
    loss: float


@dataclass(frozen=True)
class Placement:
    width: int
    hidden: int
    batch: int
    vocab: int
    repeats: int
    seed: int
    activation: str
    curves: tuple[PlacementCurve, ...]
    norm: str = "rms"
    readout: str = "cross-entropy"


@dataclass(frozen=True)
class _Reading:
    """One repeat of one curve: W2 gradient norms, ``‖h_l‖²`` (batch mean) and the loss."""

    gradients: np.ndarray
    stream: np.ndarray
    loss: float


def _readings(config: PlacementConfig, placement: str, blocks: int, seed: int) -> list[_Reading]:
    """One forward of a ``placement`` stack; one reading per readout of `READOUTS` using it."""
    stack = build_stack(blocks, config.width, config.hidden, placement, seed=seed,
                        activation=config.activation, norm="rms")
    rng = np.random.default_rng((seed, 1))
    x = init.normal(rng, (config.batch, config.width), 1.0)
    unembed = TensorValue.parameter(init.xavier_normal(rng, config.width, config.vocab))
    labels = rng.integers(0, config.vocab, size=config.batch)
    chunks = [slice(start, start + config.chunk) for start in range(0, config.batch, config.chunk)]
    # Every chunk goes through the same weights; the mean of the chunks' mean losses is the
    # batch's mean loss, so its gradient is the whole batch's.
    tops = [stack.stream(TensorValue.constant(x[rows])) for rows in chunks]
    stream = _mean_squared_norms(tops)
    final = Norm("rms", config.width, "final.norm")
    readings = []
    for _, with_norm in (r for r in READOUTS if r[0] == placement):
        for parameter in stack.parameters():
            parameter.zero_grad()
        losses = [cross_entropy((final(states[-1]) if with_norm else states[-1]) @ unembed,
                                labels[rows]) for states, rows in zip(tops, chunks, strict=True)]
        loss = sum(losses[1:], losses[0]).scale(1.0 / len(losses))
        loss.backward(GraphRetention.RETAIN)  # the other readout walks the same blocks again
        gradients = np.array([norm(gradient_or_zero(b.mlp.w2.weight)) for b in stack.blocks])
        readings.append(_Reading(gradients, stream, float(loss.value)))
    return readings


def _mean_squared_norms(chunks: list[list[TensorValue]]) -> np.ndarray:
    """``‖h_l‖²`` averaged over every row of every chunk, for each depth ``l``."""
    return np.array([np.mean(np.concatenate([np.sum(state.value**2, axis=-1) for state in layer]))
                     for layer in zip(*chunks, strict=True)])


def _curve(placement: str, blocks: int, final_norm: bool, readings: list[_Reading]
           ) -> PlacementCurve:
    gradients = np.stack([r.gradients for r in readings])  # [repeat, block]
    ratios = gradients[:, -1] / gradients[:, 0]
    mean = gradients.mean(axis=0)
    suffix = "" if final_norm or placement == "postnorm" else "-no-final-norm"
    return PlacementCurve(
        curve=f"{placement}{suffix}-{blocks}", placement=placement, blocks=blocks,
        final_norm=final_norm, gradient_mean=flat(mean), gradient_std=flat(gradients.std(axis=0)),
        gradient_low=flat(gradients.min(axis=0)), gradient_high=flat(gradients.max(axis=0)),
        last_over_first=float(mean[-1] / mean[0]), ratio_low=float(ratios.min()),
        ratio_high=float(ratios.max()),
        stream_norm_squared=flat(np.mean([r.stream for r in readings], axis=0)),
        loss=float(np.mean([r.loss for r in readings])),
    )


def norm_placement(seed: int, config: PlacementConfig) -> Placement:
    """Every curve of `READOUTS` at every depth; repeat ``r`` uses seed ``seed + r``."""
    curves = []
    for blocks in config.blocks:
        for placement in ("postnorm", "prenorm"):
            runs = [_readings(config, placement, blocks, seed + r) for r in range(config.repeats)]
            finals = [final for p, final in READOUTS if p == placement]
            for which, final_norm in enumerate(finals):
                curves.append(_curve(placement, blocks, final_norm, [run[which] for run in runs]))
    return Placement(config.width, config.hidden, config.batch, config.vocab, config.repeats,
                     seed, config.activation, tuple(curves))


register(Experiment(TRACE, "placement", PlacementConfig, norm_placement))
