"""Normalization over the last axis: `rms_norm` and `layer_norm`, each one fused op.

Contract: both normalize every vector along the last axis (size ``d``) on its own, then
optionally multiply by a ``weight`` and (layer norm only) add a ``bias``, both 1-D of size
``d`` and broadcast over every leading position. Each is one tape node with a hand-written
backward instead of the dozen elementary nodes the formula would otherwise record, because
a deep stack normalizes at every block and the tape walk cost grows with the node count.
The node's inputs are ``x`` then whichever of ``weight`` and ``bias`` were given, in that
order, and the backward returns one gradient for each.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.ops._common import is_number, lift
from engine.tensor import TensorValue


def rms_norm(x: Any, weight: Any = None, eps: float = 1e-5) -> TensorValue:
    """``x / sqrt(mean(x², axis=-1) + eps) * weight`` (Zhang & Sennrich, 2019).

    No mean is subtracted. ``eps > 0`` keeps an all-zero vector finite (it maps to 0).
    """
    a, extras = _operands("rms_norm", x, weight, None, eps)
    x_value = a.value
    inv_rms = 1.0 / np.sqrt(np.mean(x_value * x_value, axis=-1, keepdims=True) + eps)
    normalized = x_value * inv_rms
    return _finish("rms_norm", a, extras, normalized, inv_rms, centred=False)


def layer_norm(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> TensorValue:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last axis (Ba et al., 2016).

    ``var`` is the biased (population) variance, ``mean((x - mean)²)``, as in PyTorch.
    """
    a, extras = _operands("layer_norm", x, weight, bias, eps)
    centred = a.value - np.mean(a.value, axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)
    normalized = centred * inv_std
    return _finish("layer_norm", a, extras, normalized, inv_std, centred=True)


def _operands(
    op: str, x: Any, weight: Any, bias: Any, eps: float
) -> tuple[TensorValue, dict[str, TensorValue]]:
    if not is_number(eps) or not eps > 0:
        raise ValueError(f"{op}: eps must be a positive real number, got {eps!r}")
    a = lift(x, op)
    if a.value.ndim < 1 or a.shape[-1] == 0:
        raise ShapeError(op, a.shape, None, "needs a last axis with at least one entry")
    extras: dict[str, TensorValue] = {}
    for label, operand in (("weight", weight), ("bias", bias)):
        if operand is None:
            continue
        lifted = lift(operand, op)
        if lifted.shape != a.shape[-1:]:
            raise ShapeError(
                op, a.shape[-1:], lifted.shape, f"{label} must be 1-D of the last axis's size",
                labels=("expected", "got"),
            )
        extras[label] = lifted
    return a, extras


def _finish(
    op: str,
    a: TensorValue,
    extras: dict[str, TensorValue],
    normalized: np.ndarray,
    inv_scale: np.ndarray,
    centred: bool,
) -> TensorValue:
    """Apply weight and bias, and attach the shared backward."""
    weight = extras["weight"].value if "weight" in extras else None
    value = normalized if weight is None else normalized * weight
    if "bias" in extras:
        value = value + extras["bias"].value
    size = normalized.shape[-1]

    def backward(grad: np.ndarray) -> tuple[np.ndarray, ...]:
        g = grad if weight is None else grad * weight
        # d normalized / dx projects out the directions the normalization removed: the
        # component along the output itself and, for layer norm, the constant direction.
        projected = g - normalized * np.sum(g * normalized, axis=-1, keepdims=True) / size
        if centred:
            projected = projected - np.mean(g, axis=-1, keepdims=True)
        grads = [projected * inv_scale]
        rows = grad.reshape(-1, size)
        if "weight" in extras:
            grads.append(np.sum(rows * normalized.reshape(-1, size), axis=0))
        if "bias" in extras:
            grads.append(np.sum(rows, axis=0))
        return tuple(grads)

    return TensorValue.from_op(op, value, (a, *extras.values()), backward)
