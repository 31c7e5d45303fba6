"""Sampled central-difference gradient check on raw float64 arrays.

Contract: `gradcheck` never touches the tape. It perturbs a private float64 copy of the
probe array one coordinate at a time and evaluates a plain-array objective, so it checks
an analytic gradient against an implementation that shares no code with backward.

- Numeric derivative: ``(f(p + h·e_i) - f(p - h·e_i)) / (2h)`` with ``h = step``.
- Error: ``|analytic - numeric| / max(1, |analytic|, |numeric|)`` (absolute near zero,
  relative for large values); a coordinate passes when its error is at most `tolerance`.
- Coordinate choice is deterministic: ``count`` row-major flat positions spaced evenly,
  ``i * size // count`` for ``i = 0 .. count-1``. With ``count == size`` every coordinate
  is checked, in row-major order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import GradcheckError, format_shape

Index = tuple[int, ...]


@dataclass(frozen=True)
class CoordinateCheck:
    """One checked coordinate of the probe."""

    index: Index
    analytic: float
    numeric: float
    error: float


@dataclass(frozen=True)
class GradcheckResult:
    """Every check that ran, and whether all of them were within tolerance."""

    shape: Index
    step: float
    tolerance: float
    checks: tuple[CoordinateCheck, ...]
    passed: bool

    @property
    def max_error(self) -> float:
        return max(check.error for check in self.checks)

    def failures(self) -> tuple[CoordinateCheck, ...]:
        return tuple(check for check in self.checks if not check.error <= self.tolerance)

    def failure_message(self) -> str | None:
        """One line naming the worst coordinate with its numerical and analytical values."""
        failures = self.failures()
        if not failures:
            return None
        worst = max(failures, key=lambda check: (math.isnan(check.error), check.error))
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        return (
            f"gradcheck: gradient mismatch at coordinate {format_shape(worst.index)} of "
            f"shape {format_shape(self.shape)}{more}: numerical={worst.numeric!r} "
            f"analytical={worst.analytic!r} error={worst.error!r} > "
            f"tolerance={self.tolerance!r}"
        )

    def raise_if_failed(self) -> None:
        message = self.failure_message()
        if message is not None:
            raise GradcheckError(message)


def sample_indices(shape: Index, count: int) -> tuple[Index, ...]:
    """``count`` evenly spaced row-major coordinates of an array of ``shape``."""
    size = math.prod(shape)
    if not 1 <= count <= size:
        raise GradcheckError(
            f"gradcheck: count must be between 1 and {size} for shape "
            f"{format_shape(shape)}, got {count}"
        )
    flat = [position * size // count for position in range(count)]
    return tuple(tuple(int(i) for i in np.unravel_index(p, shape)) for p in flat)


def relative_error(analytic: float, numeric: float) -> float:
    return abs(analytic - numeric) / max(1.0, abs(analytic), abs(numeric))


def _validate(probe: np.ndarray, analytic: np.ndarray, step: float, tolerance: float) -> None:
    if analytic.shape != probe.shape:
        raise GradcheckError(
            "gradcheck: analytic gradient shape must equal the probe shape: "
            f"expected {format_shape(probe.shape)} got {format_shape(analytic.shape)}"
        )
    if not (math.isfinite(step) and step > 0):
        raise GradcheckError(f"gradcheck: step must be a positive finite number, got {step!r}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise GradcheckError(f"gradcheck: tolerance must be finite and >= 0, got {tolerance!r}")


def gradcheck(
    probe: Any,
    analytic: Any,
    step: float,
    tolerance: float,
    count: int,
    objective: Callable[[np.ndarray], float],
) -> GradcheckResult:
    """Compare ``analytic`` with central differences of ``objective`` at ``probe``."""
    work = np.array(probe, dtype=np.float64, copy=True)
    expected = np.asarray(analytic, dtype=np.float64)
    _validate(work, expected, step, tolerance)
    view = work.view()
    view.flags.writeable = False  # the objective sees our perturbations but cannot write

    def evaluate(index: Index, value: float) -> float:
        work[index] = value
        return float(objective(view))

    checks = []
    for index in sample_indices(work.shape, count):
        original = float(work[index])
        plus, minus = evaluate(index, original + step), evaluate(index, original - step)
        work[index] = original
        numeric = (plus - minus) / (2.0 * step)
        exact = float(expected[index])
        checks.append(CoordinateCheck(index, exact, numeric, relative_error(exact, numeric)))
    passed = all(check.error <= tolerance for check in checks)
    return GradcheckResult(work.shape, float(step), float(tolerance), tuple(checks), passed)
