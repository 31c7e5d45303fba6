"""Helpers every op module shares: lifting operands onto the tape, axis and broadcast checks,
and `unbroadcast`, the one place where a broadcast result's gradient is summed back down."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.operands import numeric_array
from engine.tensor import TensorValue


def lift(operand: Any, op: str) -> TensorValue:
    """Wrap anything that is not already on the tape as a constant (collects no gradient).

    None, text, object arrays and other non-numeric operands raise `OperandError` naming
    ``op``, instead of turning into NaN or failing later inside numpy.
    """
    if isinstance(operand, TensorValue):
        return operand
    return TensorValue.constant(numeric_array(operand, op))


def is_number(operand: Any) -> bool:
    return isinstance(operand, numbers.Real) and not isinstance(operand, bool)


def broadcast_check(op: str, left: TensorValue, right: TensorValue) -> None:
    try:
        np.broadcast_shapes(left.shape, right.shape)
    except ValueError:
        raise ShapeError(op, left.shape, right.shape, "shapes do not broadcast") from None


# --8<-- [start:unbroadcast]
def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a gradient of the broadcast result back down to one operand's shape."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)  # an axis numpy put in front of the operand
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)  # an axis numpy stretched from 1
    return grad
# --8<-- [end:unbroadcast]


def check_axis(op: str, a: TensorValue, axis: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{op}: axis must be an int, got {type(axis).__name__}")
    if not -a.value.ndim <= axis < a.value.ndim:
        raise ShapeError(op, a.shape, None, f"axis {axis} is out of range")
    return int(axis) % a.value.ndim


