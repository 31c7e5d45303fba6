"""Tests for engine/ops/pointwise.py: values against numpy, gradients by central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from opcheck import away_from_zero, check_op, positive, sample

from engine import ops
from engine.errors import ShapeError
from engine.tensor import TensorValue

SHAPES = [(), (5,), (2, 3), (2, 3, 4)]


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    ("op", "reference", "inputs"),
    [
        (ops.relu, lambda x: np.maximum(x, 0.0), away_from_zero),
        (ops.tanh, np.tanh, sample),
        (ops.gelu, gelu_tanh, sample),
        (ops.exp, np.exp, sample),
        (ops.log, np.log, positive),
        (ops.sqrt, np.sqrt, positive),
    ],
    ids=["relu", "tanh", "gelu", "exp", "log", "sqrt"],
)
def test_unary_ops_match_numpy_and_central_differences(op, reference, inputs, shape):
    x = inputs(*shape, seed=21)
    out = op(TensorValue.constant(x))
    np.testing.assert_allclose(out.value, reference(x), rtol=1e-15, atol=0.0)
    assert out.shape == x.shape and out.value.dtype == np.float64
    check_op(op, x)


def test_relu_derivative_is_zero_at_the_kink_and_one_above():
    x = TensorValue.parameter([-1.0, 0.0, 2.0])
    ops.relu(x).backward_with_seed([1.0, 1.0, 1.0])
    assert x.gradient().tolist() == [0.0, 0.0, 1.0]


def test_gelu_is_the_tanh_approximation_close_to_the_erf_form():
    x = np.linspace(-6.0, 6.0, 241)
    exact = x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    approx = ops.gelu(x).value
    assert np.max(np.abs(approx - exact)) < 1e-3
    assert ops.gelu(1.0).value == pytest.approx(0.8411919906082768, abs=1e-15)


def test_domain_edges_follow_ieee_like_numpy():
    with np.errstate(divide="ignore", invalid="ignore"):
        assert ops.log([0.0, -1.0]).value[0] == -np.inf
        assert np.isnan(ops.log([0.0, -1.0]).value[1])
        assert np.isnan(ops.sqrt(-1.0).value)
        assert ops.div(1.0, 0.0).value == np.inf
    assert ops.sqrt(0.0).value == 0.0


PAIRS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 3), (2, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((4, 1, 3), (2, 1)),
]


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_div_broadcasts_and_matches_central_differences(left, right):
    a, b = sample(*left, seed=22), away_from_zero(*right, seed=23, margin=0.5)
    np.testing.assert_array_equal(ops.div(a, b).value, a / b)
    check_op(ops.div, a, b)


def test_div_operator_and_numbers():
    x = TensorValue.parameter([2.0, -4.0])
    np.testing.assert_array_equal((x / 2.0).value, [1.0, -2.0])
    np.testing.assert_array_equal((8.0 / x).value, [4.0, -2.0])
    (1.0 / x).sum_axis(0).backward()
    np.testing.assert_array_equal(x.gradient(), [-0.25, -0.0625])


def test_div_shape_error_names_op_and_shapes():
    with pytest.raises(ShapeError) as caught:
        ops.div(np.ones((2, 3)), np.ones(4))
    assert str(caught.value) == "div: shapes do not broadcast: got [2,3] and [4]"


def test_backward_uses_the_values_seen_by_forward():
    # Leaves copy their data, so writing to the source array afterwards changes nothing.
    source = np.array([1.0, 4.0])
    x = TensorValue.parameter(source)
    y = ops.sqrt(x)
    source[:] = 100.0
    y.backward_with_seed([1.0, 1.0])
    np.testing.assert_array_equal(x.gradient(), [0.5, 0.25])
