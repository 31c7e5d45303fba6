"""Experiment 1b: the shallowest decoders trained for many more steps, to see whether their
loss curves flatten and whether they learn to add.

Contract: `long_training(corpus, config, setting, trained, progress)` trains each architecture
named in ``config.curves`` again, at its best learning rate and warm-up of the short grid
``trained`` (its `Best` records), from every seed of ``config.seeds``, for ``config.steps``
steps: the same models, schedule shape and batches, only longer, each cell cached like the
grid's. Each architecture becomes a `LongRun` (all of them, with the settings, a
`LongTraining`): final validation losses and held-out exact-match accuracies over seeds with
their median, least and largest, the validation curves' spread, and the flatness test fixed
before the run: an architecture's curve is *flat* when the seeds' median validation loss fell
by less than ``config.tolerance`` nats over the last ``config.window`` of training (from the
probe at ``window_start`` to the last probe).
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from engine.data import ArithmeticCorpus
from engine.experiments import grid
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.cells import Setting, TrainingCell, train_cell
from engine.experiments.residual_stream.common import Vector
from engine.experiments.residual_stream.corpus import TRACE, lab_corpus
from engine.experiments.residual_stream.training import Arm, Trainability


@dataclass(frozen=True)
class LongTrainingConfig:
    """Which architectures train longer, for how long, and the flatness test."""

    curves: tuple[str, ...] = ("residual-prenorm-two", "plain-prenorm-two")
    # Four times the first long runs' 4,000 steps, after which neither curve was flat yet.
    steps: int = 16000
    eval_every: int = 800
    seeds: tuple[int, ...] = (24, 25, 26, 27, 28)
    #: The share of training at its end over which a flat curve may fall by ``tolerance``.
    window: float = 0.25
    tolerance: float = 0.01


@dataclass(frozen=True)
class LongRun:
    """One architecture trained long, over its seeds."""

    curve: str
    arm: str
    lr: float
    warmup: int
    steps: int
    seeds: tuple[int, ...]
    final_validation: Vector
    median: float
    low: float
    high: float
    accuracy: Vector
    accuracy_median: float
    accuracy_low: float
    accuracy_high: float
    eval_steps: tuple[int, ...]
    curve_low: Vector
    curve_median: Vector
    curve_high: Vector
    window_start: int
    last_drop: float
    flat: bool


@dataclass(frozen=True)
class LongTraining:
    """The long runs and the settings they share."""

    curves: tuple[str, ...]
    steps: int
    seeds: tuple[int, ...]
    window: float
    tolerance: float
    runs: tuple[LongRun, ...]


def long_training(corpus: ArithmeticCorpus, config: LongTrainingConfig, setting: Setting,
                  trained: Trainability, progress: TextIO | None = None) -> LongTraining:
    """Each of ``config.curves`` at its best rate of the short grid ``trained`` (whose cells
    share ``setting``), trained long; see the module doc."""
    arms = {arm.arm: arm for arm in trained.arms}
    chosen = {best.curve: arms[best.arm] for best in trained.best if best.curve in config.curves}
    longer = dataclasses.replace(setting, steps=config.steps, eval_every=config.eval_every)
    cells = [TrainingCell(longer, arm.variant, arm.norm, arm.depth, arm.lr, arm.warmup, seed)
             for arm in (chosen[curve] for curve in config.curves) for seed in config.seeds]
    if progress is not None:
        print(f"residual-stream long runs: {', '.join(config.curves)} for {config.steps} steps",
              file=progress, flush=True)
    results = grid.run_grid(cells, functools.partial(train_cell, corpus), progress,
                            "residual-stream long runs")
    runs = tuple(_long_run(chosen[curve], [r for c, r in zip(cells, results, strict=True)
                                           if c.curve == curve], config)
                 for curve in config.curves)
    return LongTraining(config.curves, config.steps, config.seeds, config.window,
                        config.tolerance, runs)


def _long_run(arm: Arm, got: list[dict[str, np.ndarray]], config: LongTrainingConfig
              ) -> LongRun:
    finals = tuple(float(r["final_validation"]) for r in got)
    accuracy = tuple(float(r["accuracy"]) for r in got)
    steps = tuple(int(s) for s in got[0]["eval_steps"])
    curves = np.array([r["validation"] for r in got])
    median = tuple(float(v) for v in np.median(curves, axis=0))
    start = next(i for i, s in enumerate(steps) if s >= (1 - config.window) * config.steps)
    drop = median[start] - median[-1]
    return LongRun(arm.curve, arm.arm, arm.lr, arm.warmup, config.steps, config.seeds, finals,
                   statistics.median(finals), min(finals), max(finals), accuracy,
                   statistics.median(accuracy), min(accuracy), max(accuracy), steps,
                   tuple(float(v) for v in curves.min(axis=0)), median,
                   tuple(float(v) for v in curves.max(axis=0)), steps[start], drop,
                   drop < config.tolerance)


def _long(seed: int, config: LongTrainingConfig, training: Trainability,
          progress: TextIO) -> LongTraining:
    assert training.setting is not None, "the grid names the settings its cells share"
    return long_training(lab_corpus(), config, training.setting, training, progress)


register(Experiment(TRACE, "long", LongTrainingConfig, _long, needs=("training", "progress")))
