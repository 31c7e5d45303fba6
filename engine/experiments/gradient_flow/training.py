"""Experiment 6, "trainability": plain and residual deep-narrow MLPs trained with SGD, over a
grid of initializations, learning rates and seeds.

Contract: `trainability(seed, config)` trains every cell of the grid (`cells.train_cell`,
through `engine.experiments.grid`): each variant with each initialization of its output
projections (``default`` keeps the signal's variance per layer, ``scaled`` shrinks it with
the depth, ``zero`` starts every branch as the zero function, so a residual stack starts as
the identity and a plain one as the constant zero), at every depth and learning rate, from
every seed. Each arm is summarised over its seeds (`StackArm`), each architecture's best
learning rate found (`StackBest`), and the runs of the lab's seed and learning rate of the
original comparison (plain with the default initialization, residual with zero) are kept as
curves (`TrainingCurve`) for the page's first chart.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from engine.experiments import grid
from engine.experiments.claims import Decided, Get, MissingArms
from engine.experiments.gradient_flow.cells import StackCell, StackSetting, train_cell
from engine.experiments.gradient_flow.common import TRACE, Vector
from engine.experiments.registry import Experiment, register
from engine.init import OUTPUT_STARTS

#: The original comparison: lab variant → its initialization of the output projections.
MODELS = {"plain": "default", "residual": "zero"}
#: The experiment modules a cell runs (they key the cell cache with the engine's code).


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
    seeds: tuple[int, ...] = (24, 25, 26, 27, 28)
    lrs: tuple[float, ...] = (0.003, 0.01, 0.03)
    inits: tuple[str, ...] = ("default", "scaled", "zero")

    @property
    def setting(self) -> StackSetting:
        """The task and model size every cell shares."""
        return StackSetting(self.width, self.hidden, self.samples, self.steps, self.points,
                            self.teacher_gain, self.activation)

    def cells(self) -> list[StackCell]:
        setting = self.setting
        return [StackCell(setting, variant, init, depth, lr, seed)
                for variant in MODELS for init in self.inits for depth in self.depths
                for lr in self.lrs for seed in self.seeds]


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
class StackArm:
    """One arm over its seeds: each seed's final loss and the spread of the curves."""

    arm: str
    stack: str
    variant: str
    init: str
    depth: int
    lr: float
    final_loss: Vector
    median: float
    low: float
    high: float
    diverged: int
    steps: tuple[int, ...]
    curve_low: Vector
    curve_median: Vector
    curve_high: Vector


@dataclass(frozen=True)
class StackBest:
    """A stack (variant, initialization, depth) at its best learning rate."""

    stack: str
    arm: str
    lr: float
    median: float
    low: float
    high: float
    steps: tuple[int, ...]
    curve_low: Vector
    curve_median: Vector
    curve_high: Vector


@dataclass(frozen=True)
class ByDepth:
    """One variant and initialization at each depth's best learning rate."""

    line: str
    variant: str
    init: str
    depths: tuple[int, ...]
    median: Vector
    low: Vector
    high: Vector


@dataclass(frozen=True)
class Training:
    width: int
    hidden: int
    samples: int
    steps: int
    precision: str
    lr: float
    seed: int
    teacher_gain: float
    activation: str
    seeds: tuple[int, ...]
    lrs: tuple[float, ...]
    inits: tuple[str, ...]
    arm_names: tuple[str, ...]
    curves: tuple[TrainingCurve, ...]
    arms: tuple[StackArm, ...]
    best: tuple[StackBest, ...]
    by_depth: tuple[ByDepth, ...]
    task: str = "teacher-regression"
    loss: str = "mean-squared-error"
    plain_init: str = MODELS["plain"]
    residual_init: str = MODELS["residual"]


def trainability(seed: int, config: StackTrainingConfig, progress: TextIO | None = None
                 ) -> Training:
    """The grid, its arms, each architecture's best rate and the lab's curves."""
    cells = config.cells()
    results = dict(zip(cells, grid.run_grid(cells, train_cell, progress,
                                            "gradient-flow grid"), strict=True))
    curves = tuple(_curve(cell, results[cell]) for variant, init in MODELS.items()
                   for cell in cells if (cell.variant, cell.init, cell.seed, cell.lr)
                   == (variant, init, seed, config.lr))
    arms = tuple(arm_over_seeds([c for c in cells if c.arm == name], results)
                 for name in dict.fromkeys(c.arm for c in cells))
    best = tuple(_best(arm) for arm in best_by_stack(arms).values())
    lines = tuple(_by_depth(variant, init, config.depths, best)
                  for variant in MODELS for init in config.inits)
    return Training(config.width, config.hidden, config.samples, config.steps,
                    grid.precision(list(results.values())), config.lr, seed,
                    config.teacher_gain, config.activation, config.seeds, config.lrs,
                    config.inits, tuple(a.arm for a in arms), curves, arms, best, lines)


def _by_depth(variant: str, init: str, depths: tuple[int, ...],
              best: tuple[StackBest, ...]) -> ByDepth:
    named = {b.stack: b for b in best}
    at = [named[f"{variant}-{init}-{depth}"] for depth in depths]
    return ByDepth(f"{variant}-{init}", variant, init, depths, tuple(b.median for b in at),
                   tuple(b.low for b in at), tuple(b.high for b in at))


def _curve(cell: StackCell, result: dict[str, np.ndarray]) -> TrainingCurve:
    return TrainingCurve(f"{cell.variant}-{cell.depth}", cell.variant, cell.depth,
                         tuple(int(s) for s in result["steps"]),
                         tuple(float(v) for v in result["loss"]),
                         float(result["initial_loss"]), float(result["final_loss"]),
                         bool(result["diverged"]))


def best_by_stack(arms: tuple[StackArm, ...]) -> dict[str, StackArm]:
    """Each stack's arm with the lowest median final loss (its best rate; ties by arm name),
    stacks in the order of ``arms``."""
    best: dict[str, StackArm] = {}
    for arm in arms:
        if arm.stack not in best or (arm.median, arm.arm) < (best[arm.stack].median,
                                                             best[arm.stack].arm):
            best[arm.stack] = arm
    return best


def arm_over_seeds(cells: list[StackCell], results: dict[StackCell, dict[str, np.ndarray]]
                   ) -> StackArm:
    """One arm's cells (every seed of one setting) summarised."""
    first, got = cells[0], [results[cell] for cell in cells]
    finals = tuple(float(r["final_loss"]) for r in got)
    curves = np.array([r["loss"] for r in got])
    return StackArm(first.arm, first.architecture, first.variant, first.init, first.depth,
                    first.lr, finals, statistics.median(finals), min(finals), max(finals),
                    sum(bool(r["diverged"]) for r in got), tuple(int(s) for s in got[0]["steps"]),
                    tuple(float(v) for v in curves.min(axis=0)),
                    tuple(float(v) for v in np.median(curves, axis=0)),
                    tuple(float(v) for v in curves.max(axis=0)))


def _best(arm: StackArm) -> StackBest:
    return StackBest(arm.stack, arm.arm, arm.lr, arm.median, arm.low, arm.high,
                     arm.steps, arm.curve_low, arm.curve_median, arm.curve_high)


# The rules of the claims this grid decides. An architecture (variant, initialization, depth)
# is judged at its own best learning rate, the arm with the lowest median final loss; one
# beats another when each of its seeds ends lower than every seed of the other.

#: An architecture's final losses at its best learning rate, and their path in the trace.
Finals = tuple[str, tuple[float, ...]]


def _finals(get: Get) -> dict[tuple[str, str, int], Finals]:
    """Each architecture's final losses at its best learning rate, by (variant, init, depth)."""
    best: dict[tuple[str, str, int], tuple[float, str, Finals]] = {}
    for name in get("TRAINING-CONFIG.arm-names"):
        arm = f"ARM[{name}]"
        key = (get(f"{arm}.variant"), get(f"{arm}.init"), get(f"{arm}.depth"))
        finals = get(f"{arm}.final-loss")
        median = statistics.median(finals)
        if key not in best or (median, name) < best[key][:2]:
            best[key] = (median, name, (f"{arm}.final-loss", finals))
    return {key: value[2] for key, value in best.items()}


def _beats(one: Finals, other: Finals) -> bool:
    return max(one[1]) < min(other[1])


def _compare(one: Finals | None, other: Finals | None) -> Decided:
    if one is None or other is None:
        raise MissingArms("an architecture the rule compares is not in the grid")
    verdict = "supports" if _beats(one, other) else "contradicts" if _beats(other, one) else (
        "inconclusive")
    return Decided(verdict, (one[0], other[0]))


def plain_degrades(get: Get) -> Decided:
    plain = [finals for _, finals in sorted(
        (key[2], finals) for key, finals in _finals(get).items()
        if key[:2] == ("plain", "default"))]
    steps = list(itertools.pairwise(plain))
    if not steps:
        raise MissingArms("no plain stacks of several depths")
    worse = [(shallow, deep) for shallow, deep in steps if _beats(shallow, deep)]
    if worse:
        return Decided("supports", tuple(finals[0] for finals in worse[0]))
    better = all(_beats(deep, shallow) for shallow, deep in steps)
    return Decided("contradicts" if better else "inconclusive",
                   tuple(finals[0] for finals in plain))


def _deepest(finals: dict[tuple[str, str, int], Finals]) -> int:
    if not finals:
        raise MissingArms("no arm")
    return max(key[2] for key in finals)


def _best_start(finals: dict[tuple[str, str, int], Finals], variant: str, depth: int,
                starts: tuple[str, ...]) -> Finals | None:
    """The variant's finals at ``depth`` with the start of ``starts`` whose median is lowest."""
    found = [finals[key] for key in ((variant, start, depth) for start in starts) if key in finals]
    return min(found, key=lambda one: statistics.median(one[1])) if found else None


def residual_trains_deeper(get: Get) -> Decided:
    finals = _finals(get)
    depth = _deepest(finals)
    return _compare(finals.get(("residual", "scaled", depth)),
                    _best_start(finals, "plain", depth, OUTPUT_STARTS))


def identity_start_helps(get: Get) -> Decided:
    finals = _finals(get)
    depth = _deepest(finals)
    return _compare(finals.get(("residual", "zero", depth)),
                    _best_start(finals, "residual", depth, ("default", "scaled")))



register(Experiment(TRACE, "training", StackTrainingConfig, trainability, needs=("progress",),
                    rules={"plain-degrades": plain_degrades,
                           "residual-trains-deeper": residual_trains_deeper,
                           "identity-start-helps": identity_start_helps}))
