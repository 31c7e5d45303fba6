"""Test helper: compare an op's tape gradients with float64 central differences.

`check_op(fn, *arrays)` builds one parameter per array, runs ``fn`` on them, seeds backward
with a fixed pseudo-random upstream array and compares every parameter's gradient with
central differences of ``Σ fn(arrays) · upstream`` evaluated on constants (forward only,
so the numeric side never runs a backward closure).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.tensor import TensorValue

STEP = 1e-6
TOLERANCE = 1e-6


def numeric_gradient(
    fn: Callable[..., TensorValue], arrays: list[np.ndarray], seed: np.ndarray, which: int
) -> np.ndarray:
    def objective(probe: np.ndarray) -> float:
        operands = [TensorValue.constant(a) for a in arrays]
        operands[which] = TensorValue.constant(probe)
        return float(np.sum(fn(*operands).value * seed))

    probe = np.array(arrays[which], dtype=np.float64)
    gradient = np.zeros_like(probe)
    for index in np.ndindex(probe.shape):
        original = probe[index]
        probe[index] = original + STEP
        plus = objective(probe)
        probe[index] = original - STEP
        minus = objective(probe)
        probe[index] = original
        gradient[index] = (plus - minus) / (2 * STEP)
    return gradient


def check_op(fn: Callable[..., TensorValue], *arrays: np.ndarray, seed: int = 0) -> None:
    """Assert analytic == numeric gradient (within TOLERANCE) for every operand of ``fn``."""
    arrays_list = [np.asarray(a, dtype=np.float64) for a in arrays]
    parameters = [TensorValue.parameter(a) for a in arrays_list]
    output = fn(*parameters)
    upstream = np.random.default_rng(seed).uniform(-1.0, 1.0, size=output.shape)
    output.backward_with_seed(upstream)
    for which, parameter in enumerate(parameters):
        analytic = parameter.gradient()
        assert analytic is not None, f"operand {which} received no gradient"
        assert analytic.shape == arrays_list[which].shape
        numeric = numeric_gradient(fn, arrays_list, upstream, which)
        error = np.abs(analytic - numeric) / np.maximum(1.0, np.abs(numeric))
        assert np.all(error <= TOLERANCE), (
            f"operand {which}: analytic {analytic.tolist()} vs numeric {numeric.tolist()}"
        )


def sample(*shape: int, seed: int = 1) -> np.ndarray:
    """A deterministic array of ``shape`` with entries in [-2, 2)."""
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape)


def positive(*shape: int, seed: int = 1, low: float = 0.5) -> np.ndarray:
    """A deterministic array of ``shape`` with entries in [low, low + 2.5): inside log's domain."""
    return np.random.default_rng(seed).uniform(low, low + 2.5, size=shape)


def away_from_zero(*shape: int, seed: int = 1, margin: float = 0.1) -> np.ndarray:
    """Like `sample`, but every entry is at least ``margin`` from 0 (relu's kink, div's pole)."""
    values = sample(*shape, seed=seed)
    return np.where(values >= 0, values + margin, values - margin)
