"""Bias-free linear layer with one named weight, row-vector convention.

Contract: ``Linear.forward(x)`` returns ``x @ W`` with ``W`` of shape ``[in, out]`` and ``x``
of shape ``[..., in]``. With this convention the weight gradient for a vector input is
``outer(x, ȳ)``. `named_linear` makes the weight a parameter leaf whose `name` is the
parameter's name (a constant weight is allowed too: a frozen layer).
"""

from __future__ import annotations

from typing import Any

from engine.errors import ShapeError
from engine.tensor import TensorValue


class Linear:
    """``y = x @ W``; owns exactly one parameter, its weight."""

    def __init__(self, weight: TensorValue) -> None:
        if len(weight.shape) != 2:
            raise ShapeError("Linear", weight.shape, None, "weight must be an [in, out] matrix")
        self._weight = weight

    @property
    def weight(self) -> TensorValue:
        return self._weight

    @property
    def name(self) -> str | None:
        return self._weight.name

    def parameters(self) -> list[TensorValue]:
        return [self._weight]

    def forward(self, inputs: TensorValue) -> TensorValue:
        return inputs @ self._weight

    __call__ = forward


def named_linear(name: str, values: Any) -> Linear:
    """A `Linear` whose weight is a parameter called ``name`` holding ``values`` ([in, out]),
    in their precision (float32 stays float32, see `engine.tensor`)."""
    return Linear(TensorValue.parameter(values, name=name))
