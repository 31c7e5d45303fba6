"""Graded stacks: a linear residual stack whose stream is split by path length.

Contract: for linear branches ``B_1 .. B_L`` the residual stack ``h_l = h_{l-1} + B_l(h_{l-1})``
is a sum over paths: each layer either skips (identity) or goes through its branch, and a path
through ``k`` branches contributes the product of those ``k`` branches. `graded_stack` keeps
one stream per ``k`` (``grade``): grade ``k`` after layer ``l`` is grade ``k`` before it plus
the branch applied to grade ``k - 1`` before it. The grades add up to the ordinary stream, and
a backward from grade ``k`` alone, measured by the engine like any other, is exactly the
gradient carried by the paths of length ``k``: no polynomial fit, so no ill-conditioning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.experiments.gradient_flow.common import gradient_or_zero, probed
from engine.nn import residual_add
from engine.tensor import GraphRetention, TensorValue

Branch = Callable[[TensorValue], TensorValue]


@dataclass
class GradedStack:
    """The output's grades (index = path length) and the grade-0 probes before each layer."""

    grades: list[TensorValue]
    entry_probes: list[TensorValue]


# --8<-- [start:graded-stack]
def graded_stack(x: TensorValue, branches: Sequence[Branch], probe: bool = False) -> GradedStack:
    """Run ``x`` through the branches, one stream per path length (see the module doc).

    With ``probe``, a zero leaf is added to grade 0 before each layer: grade 0 is the
    untouched input, so its probe before layer ``l`` reads the gradient of the last
    ``L - l + 1`` layers, a shorter stack of the same layers.
    """
    grades, probes = [x], []
    for index, branch in enumerate(branches):
        if probe:
            grades[0], leaf = probed(grades[0], f"graded.entry{index}")
            probes.append(leaf)
        lifted = [branch(grade) for grade in grades]  # grade k moves up to grade k + 1
        grades = [grades[0]] + [
            residual_add(grades[k], lifted[k - 1]) for k in range(1, len(grades))
        ] + [lifted[-1]]
    return GradedStack(grades, probes)
# --8<-- [end:graded-stack]


def grade_gradients(
    stack: GradedStack, seed: np.ndarray, leaves: Sequence[TensorValue]
) -> list[list[np.ndarray]]:
    """For each path length ``k``, the gradient each leaf receives from grade ``k`` alone.

    One backward per grade over the retained graph, with the leaves' gradients cleared in
    between (backward accumulates into leaves).
    """
    by_length = []
    for grade in stack.grades:
        for leaf in leaves:
            leaf.zero_grad()
        if grade.requires_grad:
            grade.backward_with_seed(seed, GraphRetention.RETAIN)
        by_length.append([gradient_or_zero(leaf) for leaf in leaves])
    return by_length
