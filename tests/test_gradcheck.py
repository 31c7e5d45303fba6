"""Tests for engine/gradcheck.py: sampling, error measure, and that a wrong gradient fails."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import GradcheckError
from engine.gradcheck import gradcheck, relative_error, sample_indices


def cubic(probe: np.ndarray) -> float:
    return float(np.sum(probe**3))


def test_correct_gradient_passes_and_reports_every_check():
    probe = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]])
    result = gradcheck(probe, 3 * probe**2, 1e-6, 1e-6, 6, cubic)
    assert result.passed and result.failure_message() is None
    assert [check.index for check in result.checks] == list(np.ndindex(2, 3))
    assert all(check.error <= 1e-6 for check in result.checks)
    assert result.max_error == max(check.error for check in result.checks)
    result.raise_if_failed()


def test_wrong_gradient_fails_with_a_message_naming_the_coordinate():
    probe = np.array([1.0, -2.0])
    wrong = 3 * probe**2
    wrong[1] += 0.5  # 12.5 instead of 12
    result = gradcheck(probe, wrong, 1e-6, 2e-6, 2, cubic)
    assert not result.passed
    assert [check.index for check in result.failures()] == [(1,)]
    bad = result.checks[1]
    assert bad.analytic == 12.5 and abs(bad.numeric - 12.0) < 1e-6
    assert bad.error == relative_error(12.5, bad.numeric)
    expected = (
        f"gradcheck: gradient mismatch at coordinate [1] of shape [2]: "
        f"numerical={bad.numeric!r} analytical=12.5 error={bad.error!r} > tolerance=2e-06"
    )
    assert result.failure_message() == expected
    with pytest.raises(GradcheckError) as caught:
        result.raise_if_failed()
    assert str(caught.value) == expected


def test_nan_objective_fails():
    result = gradcheck(np.array([1.0]), np.array([0.0]), 1e-6, 1.0, 1, lambda p: float("nan"))
    assert not result.passed
    assert "coordinate [0]" in result.failure_message()


def test_error_is_absolute_near_zero_and_relative_for_large_values():
    assert relative_error(0.0, 1e-7) == 1e-7
    assert relative_error(100.0, 101.0) == 1.0 / 101.0


def test_sampling_is_deterministic_and_evenly_spaced():
    assert sample_indices((10,), 3) == ((0,), (3,), (6,))
    assert sample_indices((2, 2), 4) == ((0, 0), (0, 1), (1, 0), (1, 1))
    assert sample_indices((2, 3), 2) == ((0, 0), (1, 0))
    message = r"count must be between 1 and 4 for shape \[2,2\], got 5"
    with pytest.raises(GradcheckError, match=message):
        sample_indices((2, 2), 5)
    with pytest.raises(GradcheckError, match="got 0"):
        sample_indices((2,), 0)


def test_probe_is_not_mutated_and_objective_cannot_write():
    probe = np.array([1.0, 2.0])

    def sneaky(values: np.ndarray) -> float:
        values[0] = 100.0
        return 0.0

    with pytest.raises(ValueError, match="read-only"):
        gradcheck(probe, np.zeros(2), 1e-6, 1e-6, 2, sneaky)
    gradcheck(probe, 3 * probe**2, 1e-6, 1e-6, 2, cubic)
    assert probe.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("analytic", "step", "tolerance", "message"),
    [
        (np.zeros(3), 1e-6, 1e-6, r"analytic gradient shape must equal the probe shape: "
         r"expected \[2\] got \[3\]"),
        (np.zeros(2), 0.0, 1e-6, "step must be a positive finite number, got 0.0"),
        (np.zeros(2), 1e-6, -1.0, "tolerance must be finite and >= 0, got -1.0"),
    ],
)
def test_misconfiguration_is_rejected(analytic, step, tolerance, message):
    with pytest.raises(GradcheckError, match=message):
        gradcheck(np.array([1.0, 2.0]), analytic, step, tolerance, 2, cubic)
