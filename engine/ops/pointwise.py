"""Elementwise nonlinearities and division: `relu`, `tanh`, `gelu`, `exp`, `log`, `sqrt`, `div`.

Contract: each unary op maps every entry on its own, so its output and its gradient have
the operand's shape. `div` broadcasts like `add`, and its gradients are summed back by
`unbroadcast`. Values outside an op's domain are not refused: numpy's IEEE results
(``inf``, ``nan``) and warnings come through unchanged, as they would from numpy itself.
Backward closures capture the forward arrays they need, never the operand, so a later
`TensorValue.set_value` on a parameter cannot change a gradient already on the tape.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.ops._common import broadcast_check, lift, unbroadcast
from engine.tensor import TensorValue

GELU_CUBIC = 0.044715
_GELU_SCALE = math.sqrt(2.0 / math.pi)


def relu(operand: Any) -> TensorValue:
    """``max(x, 0)`` entrywise; its derivative is taken as 0 at ``x == 0``."""
    a = lift(operand, "relu")
    active = a.value > 0

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad * active,)

    return TensorValue.from_op("relu", np.where(active, a.value, 0.0), (a,), backward)


def tanh(operand: Any) -> TensorValue:
    """Hyperbolic tangent entrywise; derivative ``1 - tanh(x)²``."""
    a = lift(operand, "tanh")
    value = np.tanh(a.value)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad * (1.0 - value * value),)

    return TensorValue.from_op("tanh", value, (a,), backward)


def gelu(operand: Any) -> TensorValue:
    """GELU in its tanh approximation (the GPT-2 form), not the exact erf form.

    ``gelu(x) = 0.5 x (1 + tanh(u))`` with ``u = sqrt(2/π) (x + 0.044715 x³)``. The exact
    ``x Φ(x)`` differs from it by less than 1e-3 everywhere.
    """
    a = lift(operand, "gelu")
    x = a.value
    # x * x * x, not x**3: numpy's power is a general pow, about 100x slower on an array.
    t = np.tanh(_GELU_SCALE * (x + GELU_CUBIC * (x * x * x)))

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        du_dx = _GELU_SCALE * (1.0 + 3.0 * GELU_CUBIC * x * x)
        return (grad * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx),)

    return TensorValue.from_op("gelu", 0.5 * x * (1.0 + t), (a,), backward)


def exp(operand: Any) -> TensorValue:
    """``e**x`` entrywise; overflows to ``inf`` above about 709.78."""
    a = lift(operand, "exp")
    value = np.exp(a.value)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad * value,)

    return TensorValue.from_op("exp", value, (a,), backward)


def log(operand: Any) -> TensorValue:
    """Natural logarithm entrywise; domain ``x > 0`` (``log 0 = -inf``, negatives give nan)."""
    a = lift(operand, "log")
    x = a.value

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad / x,)

    return TensorValue.from_op("log", np.log(x), (a,), backward)


def sqrt(operand: Any) -> TensorValue:
    """Square root entrywise; domain ``x >= 0``, differentiable only for ``x > 0``.

    At 0 the value is 0 and the derivative ``1 / (2 sqrt(x))`` is ``inf``; negatives give nan.
    """
    a = lift(operand, "sqrt")
    value = np.sqrt(a.value)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad / (2.0 * value),)

    return TensorValue.from_op("sqrt", value, (a,), backward)


def div(left: Any, right: Any) -> TensorValue:
    """Elementwise ``left / right`` with numpy broadcasting; domain ``right != 0``.

    A zero divisor gives ``±inf`` or nan as in numpy. Gradients: ``1 / right`` for the
    numerator and ``-left / right²`` for the denominator, each unbroadcast to its operand.
    """
    a, b = lift(left, "div"), lift(right, "div")
    broadcast_check("div", a, b)
    numerator, denominator = a.value, b.value
    value = numerator / denominator

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grad_numerator = grad / denominator
        return (
            unbroadcast(grad_numerator, a.shape),
            unbroadcast(-grad_numerator * value, b.shape),
        )

    return TensorValue.from_op("div", value, (a, b), backward)
