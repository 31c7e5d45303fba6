"""Experiment 6b, "learning the identity": one block trained to output its input.

Contract: `identity_fit(config)` fits ``y = x`` on ``samples`` standard normal inputs of the
block's width with one block of `engine.nn.build_stack` (ReLU, hidden width ``hidden``, which
can represent the identity exactly: ``x = relu(x) - relu(-x)``) for each model of
``config.models``: the plain block ``F(x)`` and the residual block ``x + F(x)``, both from the
default initialization, and the residual block whose output projection starts at zero (so it
is the identity before any step). Each trains by full-batch gradient descent on the mean
squared error for ``steps`` steps at every rate of ``lrs``, from every seed (weights and
inputs). A loss that stops being finite ends the run and is capped (`common.capped`). Each
arm (model and rate) is summarised over its seeds (`IdentityArm`) and each model's best rate
found (`IdentityBest`, the lowest median final loss).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from engine import init
from engine.experiments.claims import Get, MissingArms
from engine.experiments.gradient_flow.common import TRACE, Vector, capped, descend
from engine.experiments.registry import Experiment, register
from engine.nn import build_stack
from engine.ops import mean
from engine.optim import SGD
from engine.tensor import TensorValue

#: Model name → (`build_stack` variant, its initialization of the output projection).
MODELS = {"plain-default": ("plain", "default"), "residual-default": ("residual", "default"),
          "residual-zero": ("residual", "zero")}


@dataclass(frozen=True)
class IdentityConfig:
    width: int = 16
    hidden: int = 64
    samples: int = 128
    steps: int = 500
    lrs: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0)
    seeds: tuple[int, ...] = (24, 25, 26, 27, 28)


@dataclass(frozen=True)
class IdentityArm:
    arm: str
    model: str
    lr: float
    seeds: tuple[int, ...]
    initial: Vector
    final: Vector
    median: float
    low: float
    high: float
    diverged: int


@dataclass(frozen=True)
class IdentityBest:
    model: str
    arm: str
    lr: float
    initial: float
    median: float
    low: float
    high: float


@dataclass(frozen=True)
class IdentityFit:
    width: int
    hidden: int
    samples: int
    steps: int
    lrs: tuple[float, ...]
    seeds: tuple[int, ...]
    models: tuple[str, ...]
    arm_names: tuple[str, ...]
    arms: tuple[IdentityArm, ...]
    best: tuple[IdentityBest, ...]


def fit(model: str, lr: float, seed: int, config: IdentityConfig) -> tuple[float, float, bool]:
    """One run: the loss before the first step, after the last, and whether it diverged."""
    variant, start = MODELS[model]
    block = build_stack(1, config.width, config.hidden, variant, seed=seed, activation="relu",
                        init=start)
    x = init.normal(np.random.default_rng((seed, 3)), (config.samples, config.width), 1.0)

    def loss_of() -> TensorValue:
        error = block(x) - x
        return mean(error * error)

    losses = descend(loss_of, SGD(block.parameters(), lr), config.steps)
    (first, last), diverged = capped([losses[0], losses[-1]])
    return first, last, diverged


def identity_fit(config: IdentityConfig) -> IdentityFit:
    arms = tuple(_arm(model, lr, config) for model in MODELS for lr in config.lrs)
    best = tuple(_best(min((a for a in arms if a.model == model), key=lambda a: (a.median, a.arm)))
                 for model in MODELS)
    return IdentityFit(config.width, config.hidden, config.samples, config.steps, config.lrs,
                       config.seeds, tuple(MODELS), tuple(a.arm for a in arms), arms, best)


def _arm(model: str, lr: float, config: IdentityConfig) -> IdentityArm:
    runs = [fit(model, lr, seed, config) for seed in config.seeds]
    finals = tuple(final for _, final, _ in runs)
    return IdentityArm(f"{model}-lr{lr:g}", model, lr, config.seeds,
                       tuple(first for first, _, _ in runs), finals, statistics.median(finals),
                       min(finals), max(finals), sum(diverged for _, _, diverged in runs))


def _best(arm: IdentityArm) -> IdentityBest:
    return IdentityBest(arm.model, arm.arm, arm.lr, statistics.median(arm.initial), arm.median,
                        arm.low, arm.high)


def identity_hard_for_plain(get: Get) -> str:
    best = {model: f"IDENTITY-BEST[{model}]" for model in get("IDENTITY-CONFIG.models")}
    if not {"plain-default", "residual-default", "residual-zero"} <= set(best):
        raise MissingArms("the identity fit needs the plain block and both residual blocks")
    plain, residual = best["plain-default"], best["residual-default"]
    if get(f"{plain}.median") <= get(f"{residual}.median"):
        return "contradicts"
    starts_there = get(f"{best['residual-zero']}.high") == 0.0
    beats = get(f"{residual}.high") < get(f"{plain}.low")
    return "supports" if starts_there and beats else "inconclusive"


register(Experiment(TRACE, "identity", IdentityConfig, lambda seed, config: identity_fit(config),
                    rules={"identity-hard-for-plain": identity_hard_for_plain}))
