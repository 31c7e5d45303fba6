"""Experiment 1: which decoders train on the corpus, and the rules of the claims it decides.

Contract: `trainability` trains a grid (`engine.experiments.grid`, each cell cached on its
own): residual and plain pre-norm decoders at every depth and learning rate, and residual
post-norm decoders at every depth for each (learning rate, warm-up) arm, every arm over the
same seeds and with one `DecoderTrainingConfig` otherwise. Each arm is summarised over its
seeds (`Arm`), the best arm of each architecture is found (by `training_rules.Evidence`, as
the rules find it), and the runs of the lab's seed at the lab's learning rate without warm-up
(`Run`, with its trained model) are what the analyses read. A cell's losses are the
validation-loss curve on a fixed probe, the training curve, the final losses, the loss on the
sum's digits and the share of held-out problems whose whole sum the model predicts (each
digit the most likely token after the true prefix). The rules of the claims the grid decides
are `training_rules`, registered with it.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from engine.data import ArithmeticCorpus
from engine.experiments import grid
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.cells import Setting, TrainingCell, load_model, train_cell
from engine.experiments.residual_stream.common import Vector
from engine.experiments.residual_stream.corpus import TRACE, lab_corpus
from engine.experiments.residual_stream.training_rules import (
    ArmEvidence,
    Evidence,
    deep_plain_fails,
    depth_helps,
    postnorm_fragile_deep,
    postnorm_needs_warmup,
    postnorm_tuned_better,
)
from engine.models import Decoder

#: The rules' margin in nats: above what all but the grid's few tipping-point cells moved between
#: two CPU kernel sets (benchmarks/README.md, "The rules' margin against the kernels").
MARGIN = 0.03


@dataclass(frozen=True)
class DecoderTrainingConfig:
    """The grid's settings; ``lr``, ``warmup`` and ``lab_seed`` pick the runs the analyses
    read (and must be in the grid)."""

    width: int = 32
    heads: int = 4
    mlp_ratio: int = 2
    depths: tuple[int, ...] = (2, 4, 8)
    steps: int = 400
    batch: int = 8
    lr: float = 1e-2
    warmup: int = 0
    min_lr_ratio: float = 0.1
    clip: float = 1.0
    eval_every: int = 20
    eval_sequences: int = 32
    curve_points: int = 25
    #: The training's floating-point format; the analyses read the weights in float64.
    precision: str = "float32"
    seeds: tuple[int, ...] = (24, 25, 26, 27, 28)
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2)
    #: The rules' margin (training_rules), in nats.
    margin: float = MARGIN
    #: Post-norm's (learning rate, warm-up steps) arms, at every depth.
    postnorm_arms: tuple[tuple[float, int], ...] = (
        (1e-2, 0), (1e-2, 40), (1e-2, 100), (3e-3, 0), (3e-3, 100), (1e-3, 0), (1e-3, 100))

    def setting(self) -> Setting:
        return Setting(self.width, self.heads, self.mlp_ratio, self.steps, self.batch,
                       self.min_lr_ratio, self.clip, self.eval_every, self.eval_sequences,
                       self.curve_points, self.precision)

    def cells(self) -> list[TrainingCell]:
        arms = [(v, "pre", d, lr, 0) for v in ("residual", "plain") for d in self.depths
                for lr in self.lrs]
        arms += [("residual", "post", d, lr, w) for d in self.depths
                 for lr, w in self.postnorm_arms]
        return [TrainingCell(self.setting(), *arm, seed) for arm in arms for seed in self.seeds]


@dataclass(frozen=True)
class Run:
    """One trained model of the lab's seed and learning rate: curves and final losses."""

    curve: str
    variant: str
    norm: str
    depth: int
    parameters: int
    eval_steps: tuple[int, ...]
    validation: Vector
    train_steps: tuple[int, ...]
    train_loss: Vector
    final_validation: float
    final_train: float
    sum_digit_loss: float
    accuracy: float
    diverged: bool
    model: Decoder = field(compare=False, repr=False)


@dataclass(frozen=True)
class Arm:
    """One arm of the grid over its seeds: each seed's final losses and the curves' spread."""

    arm: str
    curve: str
    variant: str
    norm: str
    depth: int
    lr: float
    warmup: int
    seeds: tuple[int, ...]
    final_validation: Vector
    median: float
    low: float
    high: float
    sum_digit_loss: Vector
    accuracy: Vector
    trained: int
    diverged: int
    eval_steps: tuple[int, ...]
    curve_low: Vector
    curve_median: Vector
    curve_high: Vector


@dataclass(frozen=True)
class Best:
    """An architecture's best learning rate (and warm-up): its arm with the lowest median,
    with that arm's spread and curves."""

    curve: str
    arm: str
    lr: float
    warmup: int
    median: float
    low: float
    high: float
    accuracy: float  # the median over seeds
    eval_steps: tuple[int, ...]
    curve_low: Vector
    curve_median: Vector
    curve_high: Vector


@dataclass(frozen=True)
class RateSweep:
    """One architecture at one warm-up across the learning rates: final validation loss."""

    series: str
    curve: str
    warmup: int
    lrs: Vector
    median: Vector
    low: Vector
    high: Vector


@dataclass(frozen=True)
class Trainability:
    width: int
    heads: int
    hidden: int
    steps: int
    batch: int
    precision: str
    lr: float
    warmup: int
    seed: int
    depths: tuple[int, ...]
    seeds: tuple[int, ...]
    lrs: tuple[float, ...]
    arm_names: tuple[str, ...]
    runs: tuple[Run, ...]
    arms: tuple[Arm, ...]
    best: tuple[Best, ...]
    series: tuple[RateSweep, ...]
    margin: float = 0.0
    setting: Setting | None = None  # the cells' shared settings (the long runs reuse them)

    def run(self, curve: str) -> Run:
        return next(r for r in self.runs if r.curve == curve)


def trainability(corpus: ArithmeticCorpus, seed: int, config: DecoderTrainingConfig,
                 progress: TextIO | None = None) -> Trainability:
    """The grid, its arms, the best of each architecture and the lab's runs (see the module
    doc); ``progress`` gets a line about the grid and the grid's own lines."""
    cells = config.cells()
    if progress is not None:
        print(f"residual-stream grid: {len(cells)} runs of {config.steps} steps "
              f"({len({c.arm for c in cells})} arms, {len(config.seeds)} seeds)",
              file=progress, flush=True)
    results = grid.run_grid(cells, functools.partial(train_cell, corpus), progress,
                            "residual-stream grid")
    by_cell = dict(zip(cells, results, strict=True))
    # The rules' own test of a seed that learned (the margin below the format-only loss).
    yardstick = Evidence((), corpus.reference_losses.format_only, config.margin)
    arms = tuple(_arm([c for c in cells if c.arm == name], by_cell, yardstick)
                 for name in dict.fromkeys(c.arm for c in cells))
    runs = tuple(_run(corpus, cell, by_cell[cell]) for cell in cells
                 if (cell.seed, cell.lr, cell.warmup) == (seed, config.lr, config.warmup))
    evidence = dataclasses.replace(yardstick, arms=tuple(ArmEvidence(
        a.arm, a.variant, a.norm, a.depth, a.lr, a.warmup, a.final_validation) for a in arms))
    named = {a.arm: a for a in arms}
    best = tuple(_best(named[evidence.best(*key).arm]) for key in dict.fromkeys(
        (a.variant, a.norm, a.depth) for a in arms))
    return Trainability(config.width, config.heads, config.width * config.mlp_ratio,
                        config.steps, config.batch, grid.precision(results), config.lr,
                        config.warmup, seed,
                        config.depths, config.seeds, config.lrs, tuple(a.arm for a in arms),
                        runs, arms, best, _series(arms), config.margin, config.setting())


def _best(arm: Arm) -> Best:
    return Best(arm.curve, arm.arm, arm.lr, arm.warmup, arm.median, arm.low, arm.high,
                statistics.median(arm.accuracy), arm.eval_steps, arm.curve_low,
                arm.curve_median, arm.curve_high)


def _series(arms: tuple[Arm, ...]) -> tuple[RateSweep, ...]:
    found = []
    for curve, warmup in dict.fromkeys((a.curve, a.warmup) for a in arms):
        line = sorted((a for a in arms if (a.curve, a.warmup) == (curve, warmup)),
                      key=lambda a: a.lr)
        found.append(RateSweep(f"{curve}-warmup{warmup}", curve, warmup,
                            tuple(a.lr for a in line), tuple(a.median for a in line),
                            tuple(a.low for a in line), tuple(a.high for a in line)))
    return tuple(found)


def _arm(cells: list[TrainingCell], results: dict[TrainingCell, dict[str, np.ndarray]],
         yardstick: Evidence) -> Arm:
    first = cells[0]
    got = [results[cell] for cell in cells]
    finals = tuple(float(r["final_validation"]) for r in got)
    curves = np.array([r["validation"] for r in got])
    return Arm(first.arm, first.curve, first.variant, first.norm, first.depth, first.lr,
               first.warmup, tuple(c.seed for c in cells), finals,
               statistics.median(finals), min(finals), max(finals),
               tuple(float(r["sum_digit_loss"]) for r in got),
               tuple(float(r["accuracy"]) for r in got),
               sum(yardstick.learned(f) for f in finals), sum(bool(r["diverged"]) for r in got),
               tuple(int(s) for s in got[0]["eval_steps"]),
               tuple(float(v) for v in curves.min(axis=0)),
               tuple(float(v) for v in np.median(curves, axis=0)),
               tuple(float(v) for v in curves.max(axis=0)))


def _run(corpus: ArithmeticCorpus, cell: TrainingCell, result: dict[str, np.ndarray]) -> Run:
    return Run(cell.curve, cell.variant, cell.norm, cell.depth, int(result["parameters"]),
               tuple(int(s) for s in result["eval_steps"]),
               tuple(float(v) for v in result["validation"]),
               tuple(int(s) for s in result["train_steps"]),
               tuple(float(v) for v in result["train_loss"]),
               float(result["final_validation"]), float(result["final_train"]),
               float(result["sum_digit_loss"]), float(result["accuracy"]),
               bool(result["diverged"]), load_model(corpus, cell, result))


register(Experiment(
    TRACE, "training", DecoderTrainingConfig,
    lambda seed, config, progress: trainability(lab_corpus(), seed, config, progress),
    needs=("progress",),
    rules={"deep-plain-fails": deep_plain_fails, "depth-helps": depth_helps,
           "postnorm-needs-warmup": postnorm_needs_warmup,
           "postnorm-fragile-deep": postnorm_fragile_deep,
           "postnorm-tuned-better": postnorm_tuned_better}))
