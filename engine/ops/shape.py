"""Ops that rearrange entries without changing them: `reshape`, `transpose`, `swap_last_axes`.

Contract: each output holds exactly the operand's entries in a new layout, so each backward
applies the inverse layout change to the upstream gradient (a reshape back, or the inverse
permutation). Nothing is summed, so `unbroadcast` is not involved.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.ops._common import lift
from engine.tensor import TensorValue
from tracefile.values import is_int


def reshape(operand: Any, shape: Sequence[int] | int) -> TensorValue:
    """The operand's entries, row-major, in ``shape``; one size may be -1 (inferred)."""
    a = lift(operand, "reshape")
    sizes = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if any(not is_int(s) for s in sizes):
        raise TypeError(f"reshape: shape must be a sequence of ints, got {shape!r}")
    try:
        value = a.value.reshape(sizes)
    except ValueError:
        raise ShapeError(
            "reshape", a.shape, None, f"{a.value.size} entries do not fit shape {list(sizes)}"
        ) from None
    original = a.shape

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad.reshape(original),)

    return TensorValue.from_op("reshape", value, (a,), backward)


def transpose(operand: Any, axes: Sequence[int] | None = None) -> TensorValue:
    """Permute axes as numpy does: output axis ``i`` is input axis ``axes[i]``.

    ``axes=None`` reverses all axes (numpy's convention; for a matrix this is ``W.T``).
    To swap only the last two axes of a batch, as in ``q @ kᵀ``, use `swap_last_axes`.
    """
    a = lift(operand, "transpose")
    ndim = a.value.ndim
    order = tuple(range(ndim))[::-1] if axes is None else tuple(axes)
    if any(not is_int(i) for i in order):
        raise TypeError(f"transpose: axes must be ints, got {axes!r}")
    normalized = tuple(int(i) % ndim if -ndim <= i < ndim else -1 for i in order)
    if sorted(normalized) != list(range(ndim)):
        raise ShapeError(
            "transpose", a.shape, None, f"axes {list(order)} are not a permutation of {ndim} axes"
        )
    inverse = tuple(np.argsort(normalized))

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad.transpose(inverse),)

    return TensorValue.from_op("transpose", a.value.transpose(normalized), (a,), backward)


def swap_last_axes(operand: Any) -> TensorValue:
    """Swap the last two axes: ``[..., n, m] -> [..., m, n]`` (a batch of matrix transposes)."""
    a = lift(operand, "swap_last_axes")
    ndim = a.value.ndim
    if ndim < 2:
        raise ShapeError("swap_last_axes", a.shape, None, "needs at least two axes")
    return transpose(a, (*range(ndim - 2), ndim - 1, ndim - 2))
