"""Helpers shared by the gradient-flow experiments.

Contract: results leave the engine as plain Python values (tuples of floats or ints, strings,
bools), never live arrays. `probed` reads the gradient at any point of a stream with the
engine's own backward, `capped` turns an overflowed measurement into a finite number plus
a flag, because a trace holds finite floats only, and `descend` runs the full-batch gradient
descent every trained experiment of the lab uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine.optim import SGD
from engine.tensor import TensorValue
from engine.worked_example.common import Vector, flat
from tracefile.values import OVERFLOWED

#: The trace the lab's experiments write into (`engine.experiments.registry`).
TRACE = "gradient-flow"
#: What an overflowed value is written as (with its sign): the trace contract's mark; a flag
#: next to it says it overflowed.
CAP = OVERFLOWED


def norm(values: Any) -> float:
    """The Euclidean (Frobenius) norm of an array, as a Python float."""
    return float(np.linalg.norm(np.asarray(values, dtype=np.float64).ravel()))


def gradient_or_zero(tensor: TensorValue) -> np.ndarray:
    """A leaf's accumulated gradient; a leaf no backward reached has received exactly zero."""
    gradient = tensor.gradient_snapshot()
    return np.zeros(tensor.shape) if gradient is None else gradient


def probed(stream: TensorValue, name: str) -> tuple[TensorValue, TensorValue]:
    """``stream + p`` for a zero parameter ``p`` of the stream's shape, and ``p``.

    Adding zero leaves every value unchanged, and the backward of `add` hands ``p`` exactly
    the gradient that reaches this point of the stream: the engine keeps gradients on leaves
    only, so this is how an interior gradient is read without a second code path.
    """
    leaf = TensorValue.parameter(np.zeros(stream.shape), name=name)
    return stream + leaf, leaf


def capped(values: Any) -> tuple[Vector, bool]:
    """The values with NaN or ±inf replaced by ±`CAP`, and whether any had to be."""
    array = np.asarray(values, dtype=np.float64).ravel()
    bad = ~np.isfinite(array)
    if not bad.any():
        return flat(array), False
    sign = np.where(np.signbit(array), -1.0, 1.0)
    return flat(np.where(bad, sign * CAP, array)), True


def fate(gradient: float, band: float) -> str:
    """A word for a gradient that started as 1: ``dead`` (exactly 0), ``vanished`` (below
    ``1/band`` in magnitude), ``exploded`` (above ``band``), else ``kept``."""
    size = abs(gradient)
    if size == 0.0:
        return "dead"
    if size < 1.0 / band:
        return "vanished"
    return "exploded" if size > band else "kept"


def descend(loss_of: Callable[[], TensorValue], optimizer: SGD, steps: int) -> list[float]:
    """The loss before each of ``steps`` updates and after the last: ``loss_of()`` runs a
    forward and returns the loss. A loss that stops being finite ends the run there."""
    losses: list[float] = []
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(steps + 1):
            optimizer.zero_grad()
            loss = loss_of()
            losses.append(float(loss.value))
            if step == steps or not np.isfinite(losses[-1]):
                break
            loss.backward()
            optimizer.step()
    return losses
