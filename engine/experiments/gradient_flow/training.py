"""Experiment 6, "trainability": plain and residual deep-narrow MLPs trained with SGD.

Contract: the task is a regression generated from the seed: ``samples`` standard normal
inputs of the stack's width and a target from a random teacher, ``t = tanh(g · x A) b``
(``A``, ``b`` Gaussian with variance ``1/width``), standardized to mean 0 and variance 1, so
predicting 0 scores a loss of 1. A model is `engine.nn.build_stack` (no biases) followed by a
linear readout ``U`` to one output; the loss is the mean squared error over all samples (full
batch). Plain stacks use the default initialization, which keeps the signal's variance at
this width (hidden = width); residual stacks start every branch as the zero function (output
projection initialized to zero), so each starts as the identity. Every model runs the same
number of steps at the same learning rate; a loss that stops being finite ends the run, is
flagged as diverged and is capped in the curve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import init
from engine.experiments.gradient_flow.common import Vector, capped
from engine.nn import build_stack
from engine.ops import mean
from engine.optim import SGD
from engine.tensor import TensorValue

#: Lab variant → (`build_stack` variant, its ``init`` of the output projection W2).
MODELS = {"plain": ("plain", "default"), "residual": ("residual", "zero")}


@dataclass(frozen=True)
class StackTrainingConfig:
    width: int = 16
    hidden: int = 16
    depths: tuple[int, ...] = (2, 8, 32)
    samples: int = 128
    steps: int = 250
    lr: float = 0.01
    points: int = 50
    teacher_gain: float = 2.0
    activation: str = "relu"


@dataclass(frozen=True)
class TrainingCurve:
    """One model's training: the loss before step ``steps[i]`` is ``loss[i]``; ``final_loss``
    is measured after the last update."""

    curve: str
    variant: str
    depth: int
    steps: tuple[int, ...]
    loss: Vector
    initial_loss: float
    final_loss: float
    diverged: bool


@dataclass(frozen=True)
class Training:
    width: int
    hidden: int
    samples: int
    steps: int
    lr: float
    seed: int
    teacher_gain: float
    activation: str
    curves: tuple[TrainingCurve, ...]
    task: str = "teacher-regression"
    loss: str = "mean-squared-error"
    plain_init: str = MODELS["plain"][1]
    residual_init: str = MODELS["residual"][1]


def teacher_task(seed: int, config: StackTrainingConfig) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``[samples, width]`` and standardized targets ``[samples, 1]``."""
    rng = np.random.default_rng((seed, 1))
    inputs = init.normal(rng, (config.samples, config.width), 1.0)
    spread = 1.0 / np.sqrt(config.width)
    teacher = init.normal(rng, (config.width, config.width), spread)
    head = init.normal(rng, (config.width, 1), spread)
    targets = np.tanh(config.teacher_gain * inputs @ teacher) @ head
    return inputs, (targets - targets.mean()) / targets.std()


def train_model(config: StackTrainingConfig, variant: str, depth: int, seed: int,
                task: tuple[np.ndarray, np.ndarray]) -> TrainingCurve:
    """Full-batch SGD for ``config.steps`` steps; the loss is sampled every ``steps/points``."""
    kind, w2_init = MODELS[variant]
    stack = build_stack(depth, config.width, config.hidden, kind, seed=seed,
                        activation=config.activation, init=w2_init)
    readout = TensorValue.parameter(
        init.xavier_normal(np.random.default_rng((seed, 2)), config.width, 1), name="readout")
    optimizer = SGD([*stack.parameters(), readout], config.lr)
    inputs, targets = task
    every = max(1, config.steps // config.points)
    losses: list[float] = []
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(config.steps + 1):
            optimizer.zero_grad()
            error = stack(inputs) @ readout - targets
            loss = mean(error * error)
            losses.append(float(loss.value))
            if step == config.steps or not np.isfinite(losses[-1]):
                break
            loss.backward()
            optimizer.step()
    sampled = list(range(0, config.steps, every))[: config.points]
    padded = losses + [np.inf] * (config.steps + 1 - len(losses))  # after a divergence
    curve, diverged = capped([padded[s] for s in sampled])
    final, _ = capped([padded[-1]])
    return TrainingCurve(f"{variant}-{depth}", variant, depth, tuple(sampled), curve,
                         curve[0], final[0], diverged or not np.isfinite(padded[-1]))


def trainability(seed: int, config: StackTrainingConfig) -> Training:
    """Every variant of `MODELS` at every depth, on one task, from one seed."""
    task = teacher_task(seed, config)
    curves = tuple(train_model(config, variant, depth, seed, task)
                   for variant in MODELS for depth in config.depths)
    return Training(config.width, config.hidden, config.samples, config.steps, config.lr, seed,
                    config.teacher_gain, config.activation, curves)
