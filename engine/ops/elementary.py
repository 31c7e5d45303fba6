"""Elementary differentiable operations: arithmetic, products and reductions.

Contract:
- Every op checks its operand shapes first and raises `ShapeError` naming the op and both
  shapes; it then computes the float64 forward value with numpy and hands
  `TensorValue.from_op` a backward closure that returns exactly one gradient per input,
  each with that input's shape.
- Broadcasting ops (`add`, `sub`, `mul`) follow numpy's rules; their gradients are summed
  back to each operand's shape by the one shared helper `unbroadcast` (engine/ops/_common.py).
- `matmul` uses the row-vector convention ``[..., k] @ [k, m] -> [..., m]`` (a vector,
  a matrix, or a batch of matrices on the left; one 2-D matrix on the right), and also
  multiplies two batches ``[..., n, k] @ [..., k, m]`` whose batch axes broadcast.
- Plain Python numbers become constants, except in `mul`, where a number on either side
  is a `scale` by that factor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.ops._common import broadcast_check, check_axis, is_number, lift, unbroadcast
from engine.tensor import TensorValue


# --8<-- [start:add-op]
def add(left: Any, right: Any) -> TensorValue:
    """Elementwise ``left + right`` with numpy broadcasting."""
    a, b = lift(left, "add"), lift(right, "add")
    broadcast_check("add", a, b)

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # d(a + b)/da = d(a + b)/db = 1: each operand gets the upstream gradient.
        return unbroadcast(grad, a.shape), unbroadcast(grad, b.shape)

    return TensorValue.from_op("add", a.value + b.value, (a, b), backward)
# --8<-- [end:add-op]


def sub(left: Any, right: Any) -> TensorValue:
    """Elementwise ``left - right`` with numpy broadcasting."""
    a, b = lift(left, "sub"), lift(right, "sub")
    broadcast_check("sub", a, b)

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return unbroadcast(grad, a.shape), unbroadcast(-grad, b.shape)

    return TensorValue.from_op("sub", a.value - b.value, (a, b), backward)


def mul(left: Any, right: Any) -> TensorValue:
    """Elementwise ``left * right`` with numpy broadcasting; a number on either side scales."""
    if is_number(right):
        return scale(left, right)
    if is_number(left):
        return scale(right, left)
    a, b = lift(left, "mul"), lift(right, "mul")
    broadcast_check("mul", a, b)
    a_value, b_value = a.value, b.value

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return unbroadcast(grad * b_value, a.shape), unbroadcast(grad * a_value, b.shape)

    return TensorValue.from_op("mul", a_value * b_value, (a, b), backward)


def scale(operand: Any, factor: float) -> TensorValue:
    """``factor * operand`` for a plain number ``factor`` (which receives no gradient)."""
    if not is_number(factor):
        raise TypeError(f"scale: factor must be a real number, got {type(factor).__name__}")
    a, factor = lift(operand, "scale"), float(factor)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad * factor,)

    return TensorValue.from_op("scale", a.value * factor, (a,), backward)


def neg(operand: Any) -> TensorValue:
    """Elementwise ``-operand``."""
    a = lift(operand, "neg")

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (-grad,)

    return TensorValue.from_op("neg", -a.value, (a,), backward)


def matmul(left: Any, right: Any) -> TensorValue:
    """Matrix product in the row-vector convention, batched like numpy's ``@``.

    - ``[..., k] @ [k, m] -> [..., m]``: a vector, a matrix or a batch of rows on the left,
      one matrix shared by every row on the right.
    - ``[..., n, k] @ [..., k, m] -> [..., n, m]``: both operands batched; the batch axes
      (all but the last two) broadcast as in numpy, and each operand's gradient is summed
      back to its own shape by `unbroadcast`. A 1-D left ``[k]`` acts as one row ``[1, k]``
      whose axis is dropped again: ``[k] @ [..., k, m] -> [..., m]``.

    The right operand needs at least two axes (a column vector is not a row-vector map).
    """
    a, b = lift(left, "matmul"), lift(right, "matmul")
    if b.value.ndim == 2:
        return _matmul_shared(a, b)
    if a.value.ndim < 1 or b.value.ndim < 2:
        raise ShapeError(
            "matmul", a.shape, b.shape, "expected [..., k] @ [k, m] or [..., n, k] @ [..., k, m]"
        )
    _check_inner(a, b)
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError("matmul", a.shape, b.shape, "batch axes do not broadcast") from None
    return _matmul_batched(a, b)


def _check_inner(a: TensorValue, b: TensorValue) -> None:
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(
            "matmul", a.shape, b.shape, f"inner sizes differ ({a.shape[-1]} vs {b.shape[-2]})"
        )


def _matmul_shared(a: TensorValue, b: TensorValue) -> TensorValue:
    """``[..., k] @ [k, m]``: one matrix shared by every leading position of the left."""
    if a.value.ndim < 1:
        raise ShapeError("matmul", a.shape, b.shape, "expected [..., k] @ [k, m]")
    _check_inner(a, b)
    a_value, b_value = a.value, b.value

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grad_a = grad @ b_value.T
        # Every leading (batch) position contributes an outer product to the one matrix.
        rows = a_value.reshape(-1, b_value.shape[0])
        grad_b = rows.T @ grad.reshape(-1, b_value.shape[1])
        return grad_a, grad_b

    return TensorValue.from_op("matmul", a_value @ b_value, (a, b), backward)


def _matmul_batched(a: TensorValue, b: TensorValue) -> TensorValue:
    """``[..., n, k] @ [..., k, m]`` with broadcast batch axes (a 1-D left is one row)."""
    # Promote a 1-D left to one row so both gradients are plain batched products.
    vector, a_shape = a.value.ndim == 1, a.shape
    rows = a.value[np.newaxis, :] if vector else a.value
    b_value = b.value
    product = rows @ b_value

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grad_rows = np.expand_dims(grad, -2) if vector else grad
        grad_a = unbroadcast(grad_rows @ np.swapaxes(b_value, -1, -2), rows.shape)
        grad_b = unbroadcast(np.swapaxes(rows, -1, -2) @ grad_rows, b_value.shape)
        return grad_a.reshape(a_shape), grad_b

    value = product.squeeze(-2) if vector else product
    return TensorValue.from_op("matmul", value, (a, b), backward)


def sum_axis(operand: Any, axis: int, keepdims: bool = False) -> TensorValue:
    """Sum over one axis; ``keepdims`` keeps it with size 1."""
    a = lift(operand, "sum_axis")
    axis = check_axis("sum_axis", a, axis)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        kept = grad if keepdims else np.expand_dims(grad, axis)
        return (np.broadcast_to(kept, a.shape).copy(),)

    value = a.value.sum(axis=axis, keepdims=keepdims)
    return TensorValue.from_op("sum_axis", value, (a,), backward)


def mean(operand: Any, axis: int | None = None, keepdims: bool = False) -> TensorValue:
    """Mean over every element (``axis=None``, a scalar) or over one axis."""
    a = lift(operand, "mean")
    if a.value.size == 0:
        raise ShapeError("mean", a.shape, None, "needs at least one element")
    if axis is not None:
        axis = check_axis("mean", a, axis)
    count = a.value.size if axis is None else a.shape[axis]

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        kept = grad if keepdims or axis is None else np.expand_dims(grad, axis)
        return (np.broadcast_to(kept / count, a.shape).copy(),)

    value = a.value.mean(axis=axis, keepdims=keepdims)
    return TensorValue.from_op("mean", value, (a,), backward)
