"""Helpers every op module shares: lifting operands onto the tape, axis, broadcast and
integer-index checks, and `unbroadcast`, the one place where a broadcast result's gradient
is summed back down."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import IndicesError, ShapeError, format_shape
from engine.operands import numeric_array
from engine.tensor import TensorValue
from tracefile.values import is_int, is_real


def lift(operand: Any, op: str) -> TensorValue:
    """Wrap anything that is not already on the tape as a constant (collects no gradient).

    None, text, object arrays and other non-numeric operands raise `OperandError` naming
    ``op``, instead of turning into NaN or failing later inside numpy.
    """
    if isinstance(operand, TensorValue):
        return operand
    return TensorValue.constant(numeric_array(operand, op))


def is_number(operand: Any) -> bool:
    return is_real(operand)


def broadcast_check(op: str, left: TensorValue, right: TensorValue) -> None:
    if left.shape == right.shape:
        return
    try:
        np.broadcast_shapes(left.shape, right.shape)
    except ValueError:
        raise ShapeError(op, left.shape, right.shape, "shapes do not broadcast") from None


# --8<-- [start:unbroadcast]
def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a gradient of the broadcast result back down to one operand's shape."""
    if grad.shape == shape:
        return grad  # nothing was broadcast
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)  # an axis numpy put in front of the operand
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)  # an axis numpy stretched from 1
    return grad
# --8<-- [end:unbroadcast]


def check_axis(op: str, a: TensorValue, axis: int) -> int:
    if not is_int(axis):
        raise TypeError(f"{op}: axis must be an int, got {type(axis).__name__}")
    if not -a.value.ndim <= axis < a.value.ndim:
        raise ShapeError(op, a.shape, None, f"axis {axis} is out of range")
    return int(axis) % a.value.ndim




def integer_indices(op: str, indices: Any, size: int, what: str) -> np.ndarray:
    """``indices`` as an integer array whose entries all lie in ``[0, size)``.

    Negative indices are refused rather than counted from the end: in a target or token
    array a negative number is a bug, not a request for the last class.
    """
    if isinstance(indices, TensorValue):
        raise IndicesError(
            f"{op}: {what} must be an integer array, not a TensorValue (which holds float64)"
        )
    try:
        array = np.array(indices)  # a private copy: backward must not see later edits
    except (TypeError, ValueError):
        raise IndicesError(f"{op}: {what} must be an integer array") from None
    if array.dtype.kind not in "iu":
        raise IndicesError(f"{op}: {what} must be integers, got dtype {array.dtype}")
    outside = (array < 0) | (array >= size)
    if np.any(outside):
        position = tuple(int(i) for i in np.argwhere(outside)[0])
        raise IndicesError(
            f"{op}: {what} must lie in [0, {size}): got {int(array[position])} at "
            f"position {format_shape(position)}"
        )
    return array
