"""Optimizers that update parameter leaves from their accumulated gradients: `SGD`, `Adam`.

Contract:
- An optimizer owns a fixed list of parameter leaves (`TensorValue.parameter`), each once.
  `step()` reads every leaf's accumulated gradient, skips leaves that have none (they took
  no part in the last backward), and gives each other leaf its new value through
  `TensorValue.set_value`, which swaps arrays instead of writing into one: values recorded
  on an existing tape stay what that forward used. Run a new forward after each step.
- `step()` returns the global gradient norm before clipping, ``sqrt(Σ_p Σ_i g_pi²)`` over
  every leaf with a gradient, and records it as ``last_grad_norm``. With ``clip_norm`` set
  and the norm above it, every gradient is scaled by ``clip_norm / norm`` for the update;
  the stored gradients themselves are left untouched.
- `zero_grad()` drops the accumulated gradients; backward adds into them otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from engine.errors import ConfigError
from engine.tensor import TensorValue
from tracefile.values import is_real


def global_grad_norm(parameters: Iterable[TensorValue]) -> float:
    """``sqrt`` of the sum of squares of every gradient entry (leaves without one skipped)."""
    total = 0.0
    for parameter in parameters:
        grad = parameter.gradient()
        if grad is not None:
            total += float(np.sum(grad * grad))
    return math.sqrt(total)


class _Optimizer:
    """Shared bookkeeping: the parameter list, clipping, zero_grad."""

    def __init__(self, name: str, parameters: Iterable[TensorValue], lr: float,
                 clip_norm: float | None) -> None:
        self.parameters = _check_parameters(name, parameters)
        self.lr = _positive(name, "lr", lr)
        self.clip_norm = None if clip_norm is None else _positive(name, "clip_norm", clip_norm)
        self.last_grad_norm: float | None = None

    def zero_grad(self) -> None:
        for parameter in self.parameters:
            parameter.zero_grad()

    def _gradients(self) -> list[tuple[int, TensorValue, np.ndarray]]:
        """``(position, leaf, gradient to use)`` for each leaf with a gradient, clipped."""
        present = [(i, p, p.gradient()) for i, p in enumerate(self.parameters)]
        present = [(i, p, g) for i, p, g in present if g is not None]
        norm = global_grad_norm(p for _, p, _ in present)
        self.last_grad_norm = norm
        if self.clip_norm is not None and norm > self.clip_norm:
            factor = self.clip_norm / norm
            return [(i, p, g * factor) for i, p, g in present]
        return present


class SGD(_Optimizer):
    """Gradient descent ``p ← p - lr · g``, with optional global-norm clipping of ``g``."""

    def __init__(self, parameters: Iterable[TensorValue], lr: float,
                 clip_norm: float | None = None) -> None:
        super().__init__("SGD", parameters, lr, clip_norm)

    def step(self) -> float:
        """Update every leaf that has a gradient; return the pre-clip global gradient norm."""
        for _, parameter, grad in self._gradients():
            parameter.set_value(parameter.value - self.lr * grad)
        assert self.last_grad_norm is not None
        return self.last_grad_norm


class Adam(_Optimizer):
    """Adam (Kingma & Ba, 2015) with decoupled weight decay (AdamW, Loshchilov & Hutter).

    Per leaf, with ``t`` the number of updates that leaf has received (from 1)::

        m ← β1 m + (1 - β1) g              v ← β2 v + (1 - β2) g²
        m̂ = m / (1 - β1ᵗ)                  v̂ = v / (1 - β2ᵗ)
        p ← p - lr · (m̂ / (sqrt(v̂) + eps) + weight_decay · p)

    ``g`` is the (clipped) gradient. The decay term uses ``p`` itself, not ``g``, so it does
    not pass through the adaptive scaling; ``weight_decay = 0`` is plain Adam.
    """

    def __init__(self, parameters: Iterable[TensorValue], lr: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, clip_norm: float | None = None) -> None:
        super().__init__("Adam", parameters, lr, clip_norm)
        self.betas = _check_betas(betas)
        self.eps = _positive("Adam", "eps", eps)
        self.weight_decay = _non_negative("Adam", "weight_decay", weight_decay)
        self._moments: list[tuple[np.ndarray, np.ndarray, int] | None] = [None] * len(
            self.parameters
        )

    def step(self) -> float:
        """Update every leaf that has a gradient; return the pre-clip global gradient norm."""
        beta1, beta2 = self.betas
        for position, parameter, grad in self._gradients():
            first, second, count = self._moments[position] or (
                np.zeros_like(parameter.value), np.zeros_like(parameter.value), 0
            )
            first = beta1 * first + (1.0 - beta1) * grad
            second = beta2 * second + (1.0 - beta2) * grad * grad
            count += 1
            self._moments[position] = (first, second, count)
            first_hat = first / (1.0 - beta1**count)
            second_hat = second / (1.0 - beta2**count)
            update = first_hat / (np.sqrt(second_hat) + self.eps)
            value = parameter.value
            parameter.set_value(value - self.lr * (update + self.weight_decay * value))
        assert self.last_grad_norm is not None
        return self.last_grad_norm


def _check_parameters(name: str, parameters: Iterable[TensorValue]) -> list[TensorValue]:
    if isinstance(parameters, TensorValue):
        raise ConfigError(f"{name}: pass a list of parameters, got a single TensorValue")
    leaves = list(parameters)
    if not leaves:
        raise ConfigError(f"{name}: needs at least one parameter")
    seen: set[int] = set()
    for leaf in leaves:
        if not isinstance(leaf, TensorValue) or leaf.op != "parameter" or not leaf.is_leaf:
            raise ConfigError(f"{name}: every entry must be a parameter leaf, got {leaf!r}")
        if id(leaf) in seen:
            raise ConfigError(f"{name}: parameter {leaf!r} is listed twice")
        seen.add(id(leaf))
    return leaves


def _positive(name: str, label: str, number: Any) -> float:
    if is_real(number) and 0 < number < math.inf:
        return float(number)
    raise ConfigError(f"{name}: {label} must be a finite number > 0, got {number!r}")


def _non_negative(name: str, label: str, number: Any) -> float:
    if is_real(number) and 0 <= number < math.inf:
        return float(number)
    raise ConfigError(f"{name}: {label} must be a finite number >= 0, got {number!r}")


def _check_betas(betas: Any) -> tuple[float, float]:
    pair = tuple(betas) if isinstance(betas, tuple | list) else ()
    if len(pair) != 2 or not all(is_real(b) and 0 <= b < 1 for b in pair):
        raise ConfigError(f"Adam: betas must be two numbers in [0, 1), got {betas!r}")
    return float(pair[0]), float(pair[1])

