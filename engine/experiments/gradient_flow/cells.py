"""One cell of the gradients lab's training grid: a deep-narrow MLP stack trained with SGD.

Contract: the task is a regression generated from the seed (`teacher_task`): ``samples``
standard normal inputs of the stack's width and a target from a random teacher,
``t = tanh(g · x A) b`` (``A``, ``b`` Gaussian with variance ``1/width``), standardized to
mean 0 and variance 1, so predicting 0 scores a loss of 1. A model is `engine.nn.build_stack`
(no biases) with the cell's variant and initialization of the output projections, followed by
a linear readout to one output; the loss is the mean squared error over all samples (full
batch). ``train_cell(cell)`` runs ``steps`` steps of plain gradient descent (its global
gradient norm clipped to the cell's ``clip_norm``, when set) and returns numpy
arrays: the loss before each sampled step, the initial and final loss, whether a loss
stopped being finite (which ends the run; the curve is then capped) and the precision the
weights were held in. A `StackCell`'s ``repr``
names everything its run depends on (it keys the cell cache of `engine.experiments.grid`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import init
from engine.experiments.gradient_flow.common import capped, descend
from engine.nn import build_stack
from engine.ops import mean
from engine.optim import SGD
from engine.tensor import TensorValue


@dataclass(frozen=True)
class StackSetting:
    """What every cell of the grid shares: the task and the model's size."""

    width: int
    hidden: int
    samples: int
    steps: int
    points: int
    teacher_gain: float
    activation: str


@dataclass(frozen=True)
class StackCell:
    """One run: a variant with an initialization of its output projections, a depth, a
    learning rate, a seed (of the task and the weights) and, optionally, the global gradient
    norm its updates are clipped to."""

    setting: StackSetting
    variant: str
    init: str
    depth: int
    lr: float
    seed: int
    clip_norm: float | None = None

    @property
    def architecture(self) -> str:
        clipped = "" if self.clip_norm is None else f"-clip{self.clip_norm:g}"
        return f"{self.variant}-{self.init}-{self.depth}{clipped}"

    @property
    def arm(self) -> str:
        return f"{self.architecture}-lr{self.lr:g}"


def teacher_task(seed: int, setting: StackSetting) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``[samples, width]`` and standardized targets ``[samples, 1]``."""
    rng = np.random.default_rng((seed, 1))
    inputs = init.normal(rng, (setting.samples, setting.width), 1.0)
    spread = 1.0 / np.sqrt(setting.width)
    teacher = init.normal(rng, (setting.width, setting.width), spread)
    head = init.normal(rng, (setting.width, 1), spread)
    targets = np.tanh(setting.teacher_gain * inputs @ teacher) @ head
    return inputs, (targets - targets.mean()) / targets.std()


def train_cell(cell: StackCell) -> dict[str, np.ndarray]:
    """Full-batch gradient descent for ``steps`` steps; the loss sampled ``points`` times."""
    s = cell.setting
    stack = build_stack(cell.depth, s.width, s.hidden, cell.variant, seed=cell.seed,
                        activation=s.activation, init=cell.init)
    readout = TensorValue.parameter(
        init.xavier_normal(np.random.default_rng((cell.seed, 2)), s.width, 1), name="readout")
    optimizer = SGD([*stack.parameters(), readout], cell.lr, clip_norm=cell.clip_norm)
    inputs, targets = teacher_task(cell.seed, s)
    every = max(1, s.steps // s.points)

    def loss_of() -> TensorValue:
        error = stack(inputs) @ readout - targets
        return mean(error * error)

    losses = descend(loss_of, optimizer, s.steps)
    sampled = list(range(0, s.steps, every))[: s.points]
    padded = losses + [np.inf] * (s.steps + 1 - len(losses))  # after a divergence
    curve, diverged = capped([padded[i] for i in sampled])
    final, _ = capped([padded[-1]])
    return {"steps": np.array(sampled), "loss": np.array(curve),
            "initial_loss": np.array(curve[0]), "final_loss": np.array(final[0]),
            "diverged": np.array(diverged or not np.isfinite(padded[-1])),
            "precision": np.array(readout.value.dtype.name)}
