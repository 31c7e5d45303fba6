"""Experiment 6c, "clipping": the residual stacks that explode, trained with and without
gradient clipping, against a residual stack that trains without it.

Contract: `gradient_clipping(config)` trains, on the trainability task (`cells.teacher_task`
with the settings of ``config.task``), three models at every depth of ``config.depths``, each
at every learning rate of ``config.lrs`` from every seed of ``config.seeds``: the residual
stack with the default initialization (each add roughly doubles the stream's variance, so its
output and gradients explode with depth, as the depth sweep measures), the same stack with
every update's global gradient norm clipped to ``config.clip_norm``, and, as the control, the
residual stack whose output projections start at zero, unclipped. Cells run and are cached
through `engine.experiments.grid` like the trainability grid's. Each arm is summarised over
its seeds (`training.StackArm`) and each model at each depth judged at its best rate
(`ClipBest`, the lowest median final loss).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from engine.experiments import grid
from engine.experiments.claims import Decided, Get, MissingArms
from engine.experiments.gradient_flow.cells import StackCell, teacher_task, train_cell
from engine.experiments.gradient_flow.common import TRACE
from engine.experiments.gradient_flow.training import (
    StackArm,
    StackTrainingConfig,
    arm_over_seeds,
    best_by_stack,
)
from engine.experiments.registry import Experiment, register

#: Model → (`build_stack` variant, initialization of the output projections, clipped).
MODELS = {"residual-default": ("residual", "default", False),
          "residual-default-clipped": ("residual", "default", True),
          "residual-zero": ("residual", "zero", False)}


@dataclass(frozen=True)
class ClippingConfig:
    task: StackTrainingConfig = field(default_factory=StackTrainingConfig)
    depths: tuple[int, ...] = (8, 32)
    # Low enough that the unclipped stack trains somewhere: without these rates the grid's
    # lowest rate, not the stack, decided whether clipping was needed.
    lrs: tuple[float, ...] = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
    clip_norm: float = 1.0
    seeds: tuple[int, ...] = (24, 25, 26, 27, 28)

    def cells(self) -> list[tuple[str, StackCell]]:
        """``(model, cell)`` for every model, depth, rate and seed, in that order."""
        setting = self.task.setting
        return [(model, StackCell(setting, variant, start, depth, lr, seed,
                                  self.clip_norm if clipped else None))
                for model, (variant, start, clipped) in MODELS.items()
                for depth in self.depths for lr in self.lrs for seed in self.seeds]


@dataclass(frozen=True)
class ClipBest:
    """One model at one depth at its best rate: its median loss before training, and the
    median, least and largest final loss and diverged seeds of that arm."""

    stack: str
    model: str
    depth: int
    clipped: bool
    lr: float
    initial: float
    median: float
    low: float
    high: float
    diverged: int


@dataclass(frozen=True)
class Clipping:
    depths: tuple[int, ...]
    lrs: tuple[float, ...]
    clip_norm: float
    seeds: tuple[int, ...]
    steps: int
    zero_loss: float  # the loss of predicting zero (median over the seeds' tasks)
    models: tuple[str, ...]
    arm_names: tuple[str, ...]
    arms: tuple[StackArm, ...]
    best: tuple[ClipBest, ...]

    @property
    def stacks(self) -> tuple[str, ...]:
        return tuple(b.stack for b in self.best)


def gradient_clipping(config: ClippingConfig, progress: TextIO | None = None) -> Clipping:
    """Every cell, each arm over its seeds, each model and depth at its best rate."""
    pairs = config.cells()
    results = dict(zip((cell for _, cell in pairs),
                       grid.run_grid([cell for _, cell in pairs], train_cell,
                                     progress, "gradient-flow clipping"), strict=True))
    model_of = {cell.architecture: model for model, cell in pairs}
    arms = tuple(arm_over_seeds([c for _, c in pairs if c.arm == name], results)
                 for name in dict.fromkeys(c.arm for _, c in pairs))
    best = tuple(_best(model_of[stack], arm) for stack, arm in best_by_stack(arms).items())
    zero_loss = statistics.median(float(np.mean(teacher_task(seed, config.task.setting)[1] ** 2))
                                  for seed in config.seeds)
    return Clipping(config.depths, config.lrs, config.clip_norm, config.seeds,
                    config.task.steps, zero_loss, tuple(MODELS), tuple(a.arm for a in arms),
                    arms, best)


def _best(model: str, arm: StackArm) -> ClipBest:
    return ClipBest(arm.stack, model, arm.depth, MODELS[model][2], arm.lr,
                    arm.curve_median[0], arm.median, arm.low, arm.high, arm.diverged)



def clipping_tames_explosion(get: Get) -> Decided:
    best: dict[tuple[str, int], str] = {}
    for stack in get("CLIP-CONFIG.stacks"):
        record = f"CLIP-BEST[{stack}]"
        best[(get(f"{record}.model"), get(f"{record}.depth"))] = record
    depths = sorted({depth for _, depth in best})
    models = ("residual-default", "residual-default-clipped", "residual-zero")
    if not depths or any((model, d) not in best for d in depths for model in models):
        raise MissingArms("the clipping runs need all three models at every depth")
    zero = get("CLIP-CONFIG.zero-loss")
    because = ("CLIP-CONFIG.zero-loss", *(
        f"{best[(model, d)]}.{field}" for d in depths for model in models
        for field in ("low", "high", "diverged")))

    def trained(model: str, depth: int) -> bool:
        record = best[(model, depth)]
        return get(f"{record}.diverged") == 0 and get(f"{record}.high") < zero

    def beats(model: str, other: str, depth: int) -> bool:  # every seed below every seed
        return get(f"{best[(model, depth)]}.high") < get(f"{best[(other, depth)]}.low")

    clipped, unclipped = "residual-default-clipped", "residual-default"
    if not all(trained("residual-zero", d) for d in depths):
        verdict = "inconclusive"  # the control does not train: the task, not the stack, fails
    elif (any(get(f"{best[(clipped, d)]}.diverged") for d in depths)
          or all(beats(unclipped, clipped, d) for d in depths)):
        verdict = "contradicts"
    elif all(trained(clipped, d) and beats(clipped, unclipped, d) for d in depths):
        verdict = "supports"
    else:
        verdict = "qualifies"
    return Decided(verdict, because)


register(Experiment(
    TRACE, "clipping", ClippingConfig,
    lambda seed, config, progress: gradient_clipping(config, progress), needs=("progress",),
    rules={"clipping-tames-explosion": clipping_tames_explosion}))
