"""Tests for engine/ops/norms.py: values against numpy formulas, fused backward by central
differences, one tape node per call, shape and eps errors."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine import ops
from engine.errors import ShapeError
from engine.tensor import TensorValue

SHAPES = [(4,), (3, 5), (2, 3, 4), (2, 1, 2, 6)]


def rms_reference(x, weight=None, eps=1e-5):
    y = x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)
    return y if weight is None else y * weight


def layer_reference(x, weight=None, bias=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    y = centred / np.sqrt(np.mean(centred**2, axis=-1, keepdims=True) + eps)
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("with_weight", [False, True])
def test_rms_norm_matches_formula_and_central_differences(shape, with_weight):
    x, w = sample(*shape, seed=41), sample(shape[-1], seed=42)
    operands = (x, w) if with_weight else (x,)
    np.testing.assert_allclose(ops.rms_norm(*operands).value, rms_reference(*operands),
                               rtol=1e-14, atol=1e-15)
    check_op(ops.rms_norm, *operands)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", ["none", "weight", "weight+bias"])
def test_layer_norm_matches_formula_and_central_differences(shape, affine):
    x = sample(*shape, seed=43)
    w, b = sample(shape[-1], seed=44), sample(shape[-1], seed=45)
    operands = {"none": (x,), "weight": (x, w), "weight+bias": (x, w, b)}[affine]
    np.testing.assert_allclose(ops.layer_norm(*operands).value, layer_reference(*operands),
                               rtol=1e-14, atol=1e-14)
    check_op(ops.layer_norm, *operands)


def test_layer_norm_with_bias_only():
    x, b = sample(3, 4, seed=46), sample(4, seed=47)
    fn = lambda a, c: ops.layer_norm(a, bias=c)  # noqa: E731
    np.testing.assert_allclose(fn(x, b).value, layer_reference(x, bias=b), atol=1e-14)
    check_op(fn, x, b)


def test_other_eps_values_and_the_all_zero_vector():
    x = sample(2, 5, seed=48)
    check_op(lambda a: ops.rms_norm(a, eps=0.5), x)
    check_op(lambda a: ops.layer_norm(a, eps=0.5), x)
    assert ops.rms_norm(np.zeros(3)).value.tolist() == [0.0, 0.0, 0.0]
    assert ops.layer_norm(np.full(3, 7.0)).value.tolist() == [0.0, 0.0, 0.0]


def test_outputs_are_normalized():
    x = sample(6, 8, seed=49) * 10.0 + 3.0
    y = ops.layer_norm(x, eps=1e-12).value
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-10)
    r = ops.rms_norm(x, eps=1e-12).value
    np.testing.assert_allclose(np.mean(r**2, axis=-1), 1.0, rtol=1e-10)


@pytest.mark.parametrize("norm", [ops.rms_norm, ops.layer_norm])
def test_each_norm_is_one_tape_node(norm):
    x = TensorValue.parameter(sample(2, 3, seed=50))
    w = TensorValue.parameter(np.ones(3))
    out = norm(x, w)
    assert out.op == norm.__name__
    out.sum_axis(-1).sum_axis(0).backward()
    assert x.gradient().shape == (2, 3) and w.gradient().shape == (3,)


def test_constant_weight_gets_no_gradient_but_x_does():
    seed = sample(2, 3, seed=52)
    x = TensorValue.parameter(sample(2, 3, seed=51))
    ops.layer_norm(x, np.full(3, 1.5), np.zeros(3)).backward_with_seed(seed)
    # The same values as parameters: x's gradient must not depend on how w and b were given.
    x2, w, b = (TensorValue.parameter(v) for v in (sample(2, 3, seed=51), np.full(3, 1.5),
                                                   np.zeros(3)))
    ops.layer_norm(x2, w, b).backward_with_seed(seed)
    np.testing.assert_array_equal(x.gradient(), x2.gradient())
    assert np.abs(x.gradient()).max() > 0 and w.gradient() is not None


@pytest.mark.parametrize("norm", [ops.rms_norm, ops.layer_norm])
def test_norm_errors_name_the_op(norm):
    name = norm.__name__
    with pytest.raises(ShapeError) as caught:
        norm(np.ones((2, 3)), np.ones(4))
    assert str(caught.value) == (
        f"{name}: weight must be 1-D of the last axis's size: expected [3] got [4]"
    )
    with pytest.raises(ShapeError) as caught:
        norm(np.ones((2, 3)), np.ones((1, 3)))
    assert str(caught.value).endswith("expected [3] got [1,3]")
    with pytest.raises(ShapeError) as caught:
        norm(1.0)
    assert str(caught.value) == f"{name}: needs a last axis with at least one entry: got []"
    with pytest.raises(ValueError, match=f"^{name}: eps must be a positive real number"):
        norm(np.ones(3), eps=0.0)


def test_layer_norm_bias_shape_error():
    with pytest.raises(ShapeError) as caught:
        ops.layer_norm(np.ones((2, 3)), None, np.ones(2))
    assert str(caught.value) == (
        "layer_norm: bias must be 1-D of the last axis's size: expected [3] got [2]"
    )
