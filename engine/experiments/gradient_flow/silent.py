"""Experiment 4, "three ways to be silent": branches that output zero at the start, and which
of their parameters the first SGD steps move.

Contract: every case is the chapter's merge ``y = x + F(x)`` on ``x = [2, -1]`` in the
row-vector convention, with a branch that is the zero function at initialization:
- ``zero-weight``: ``F(x) = x W`` with ``W = 0`` (the chapter's zero branch);
- ``zero-scale``: ``F(x) = α · x W`` with ``α = 0`` (a one-element parameter) and the
  chapter's nonzero ``W`` (ReZero, SkipInit);
- ``zero-projection``: ``F(x) = (x W1) W2`` with the chapter's ``W1`` and ``W2 = 0``;
- ``all-zero``: the same with ``W1 = W2 = 0``.
The objective is linear, ``J = ȳ · y`` with the chapter's ``ȳ = [1, 1]``, so the gradient
arriving at ``y`` is ``ȳ`` at every step; each step is one backward and one SGD update. The
two-layer branch has no activation, so every value stays an exact binary fraction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.experiments.gradient_flow.common import TRACE, Vector, flat, gradient_or_zero, norm
from engine.experiments.registry import Experiment, register
from engine.nn import residual_add
from engine.ops import mul
from engine.optim import SGD
from engine.tensor import TensorValue
from engine.worked_example import constants as c

CASES = ("zero-weight", "zero-scale", "zero-projection", "all-zero")
Forward = Callable[[TensorValue], TensorValue]


@dataclass(frozen=True)
class SilentConfig:
    lr: float = 0.125
    steps: int = 3
    cases: tuple[str, ...] = CASES


@dataclass(frozen=True)
class ParameterStep:
    """One parameter in one step: its gradient and whether the update changed it."""

    index: int
    case: str
    step: int
    parameter: str
    shape: tuple[int, ...]
    before: Vector
    gradient: Vector
    gradient_norm: float
    after: Vector
    moved: bool


@dataclass(frozen=True)
class SilentCase:
    """One case over its steps: ``first_moved[i]`` is the step that first changed parameter
    ``i`` (0: none did); ``objective`` and ``branch_norm`` are measured before each update."""

    case: str
    parameters: tuple[str, ...]
    objective: Vector
    branch_norm: Vector
    first_moved: tuple[int, ...]


@dataclass(frozen=True)
class Silent:
    input: Vector
    upstream: Vector
    lr: float
    steps: int
    cases: tuple[SilentCase, ...]
    rows: tuple[ParameterStep, ...]
    objective: str = "linear"

    @property
    def last_row(self) -> int:
        return len(self.rows) - 1


# --8<-- [start:silent-branches]
def branch_of(case: str) -> tuple[list[TensorValue], Forward]:
    """The case's parameters (in trace order) and its branch ``F``."""
    weight, zeros = np.array(c.WEIGHT_VALUES), np.zeros((2, 2))
    if case == "zero-weight":
        w = TensorValue.parameter(zeros, name="zero-weight.weight")
        return [w], lambda x: x @ w
    if case == "zero-scale":
        alpha = TensorValue.parameter([0.0], name="zero-scale.alpha")
        w = TensorValue.parameter(weight, name="zero-scale.weight")
        return [alpha, w], lambda x: mul(alpha, x @ w)
    first = weight if case == "zero-projection" else zeros
    w1 = TensorValue.parameter(first, name=f"{case}.w1")
    w2 = TensorValue.parameter(zeros, name=f"{case}.w2")
    return [w1, w2], lambda x: (x @ w1) @ w2
# --8<-- [end:silent-branches]


def run_case(case: str, config: SilentConfig, start: int) -> tuple[SilentCase, list[ParameterStep]]:
    """``config.steps`` SGD steps on ``J = ȳ · y``; rows are numbered from ``start``."""
    parameters, branch = branch_of(case)
    optimizer = SGD(parameters, config.lr)
    x, upstream = TensorValue.constant(c.INPUT_VALUES), np.array(c.UPSTREAM_VALUES)
    rows: list[ParameterStep] = []
    objective, branch_norm = [], []
    for step in range(1, config.steps + 1):
        optimizer.zero_grad()
        update = branch(x)
        y = residual_add(x, update)
        objective.append(float(upstream @ y.value))
        branch_norm.append(norm(update.value))
        y.backward_with_seed(upstream)
        before = [p.value_snapshot() for p in parameters]
        gradients = [gradient_or_zero(p) for p in parameters]
        optimizer.step()
        for p, old, grad in zip(parameters, before, gradients, strict=True):
            rows.append(ParameterStep(
                start + len(rows), case, step, str(p.name), p.shape, flat(old), flat(grad),
                norm(grad), flat(p.value), not np.array_equal(old, p.value)))
    first = tuple(next((r.step for r in rows if r.parameter == p.name and r.moved), 0)
                  for p in parameters)
    names = tuple(str(p.name) for p in parameters)
    return SilentCase(case, names, tuple(objective), tuple(branch_norm), first), rows


def silent_branches(seed: int, config: SilentConfig) -> Silent:
    """Every case of `CASES` for ``config.steps`` steps.

    Uses no randomness (``seed`` is taken only so that every experiment is called alike).
    """
    del seed
    cases, rows = [], []
    for case in config.cases:
        summary, steps = run_case(case, config, len(rows))
        cases.append(summary)
        rows.extend(steps)
    return Silent(flat(c.INPUT_VALUES), flat(c.UPSTREAM_VALUES), config.lr, config.steps,
                  tuple(cases), tuple(rows))


register(Experiment(TRACE, "silent", SilentConfig, silent_branches))
