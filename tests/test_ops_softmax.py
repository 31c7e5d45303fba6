"""Tests for engine/ops/softmax.py: values, stability, gradients by central differences and
target validation for the fused cross-entropy."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine import ops
from engine.errors import IndicesError, ShapeError
from engine.tensor import TensorValue


def softmax_reference(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


CASES = [((5,), -1), ((2, 3), -1), ((2, 3), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((3, 1), -1)]


@pytest.mark.parametrize(("shape", "axis"), CASES)
def test_softmax_and_log_softmax_match_numpy_and_central_differences(shape, axis):
    x = sample(*shape, seed=61)
    p = ops.softmax(x, axis).value
    np.testing.assert_allclose(p, softmax_reference(x, axis), rtol=1e-14)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-14)
    np.testing.assert_allclose(ops.log_softmax(x, axis).value, np.log(softmax_reference(x, axis)),
                               rtol=1e-13, atol=1e-15)
    check_op(lambda a: ops.softmax(a, axis), x)
    check_op(lambda a: ops.log_softmax(a, axis), x)


def test_large_logits_do_not_overflow():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]])
    p = ops.softmax(x).value
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p[0], softmax_reference(x[0] - 1000.0))
    np.testing.assert_allclose(p[1], [1 / 3] * 3)
    assert np.all(np.isfinite(ops.log_softmax(x).value))
    loss = ops.cross_entropy(x, np.array([1, 0]))
    assert np.isfinite(loss.value)
    check_op(ops.softmax, x)


def test_minus_infinity_gets_probability_zero():
    x = TensorValue.parameter([[0.0, -np.inf, 1.0]])
    p = ops.softmax(x)
    assert p.value[0, 1] == 0.0
    p.backward_with_seed([[1.0, 2.0, 3.0]])
    assert np.all(np.isfinite(x.gradient())) and x.gradient()[0, 1] == 0.0


def cross_entropy_reference(logits, targets):
    logp = np.log(softmax_reference(logits))
    return -np.mean(np.take_along_axis(logp, targets[..., None], axis=-1))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 5), (2, 2, 2, 3)])
def test_cross_entropy_matches_reference_and_central_differences(shape):
    logits = sample(*shape, seed=62) * 2.0
    targets = np.random.default_rng(63).integers(0, shape[-1], size=shape[:-1])
    loss = ops.cross_entropy(logits, targets)
    assert loss.shape == ()
    assert loss.value == pytest.approx(cross_entropy_reference(logits, targets), rel=1e-14)
    check_op(lambda a: ops.cross_entropy(a, targets), logits)


def test_cross_entropy_is_one_node_and_targets_are_copied():
    logits = TensorValue.parameter(sample(2, 3, seed=64))
    targets = np.array([2, 0])
    loss = ops.cross_entropy(logits, targets)
    targets[:] = 1  # must not change the recorded backward
    loss.backward()
    expected = softmax_reference(logits.value)
    expected[[0, 1], [2, 0]] -= 1.0
    np.testing.assert_allclose(logits.gradient(), expected / 2, rtol=1e-14)
    assert loss.op == "cross_entropy"


def test_cross_entropy_accepts_python_lists_and_uint_targets():
    logits = sample(3, 4, seed=65)
    a = ops.cross_entropy(logits, [0, 3, 1]).value
    b = ops.cross_entropy(logits, np.array([0, 3, 1], dtype=np.uint8)).value
    assert a == b


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        ([0, 4], "cross_entropy: targets must lie in [0, 4): got 4 at position [1]"),
        ([-1, 0], "cross_entropy: targets must lie in [0, 4): got -1 at position [0]"),
        ([0.0, 1.0], "cross_entropy: targets must be integers, got dtype float64"),
        ([True, False], "cross_entropy: targets must be integers, got dtype bool"),
        (TensorValue.constant([0, 1]),
         "cross_entropy: targets must be an integer array, not a TensorValue (which holds "
         "float64)"),
    ],
)
def test_cross_entropy_validates_targets(targets, message):
    with pytest.raises(IndicesError) as caught:
        ops.cross_entropy(np.zeros((2, 4)), targets)
    assert str(caught.value) == message


def test_cross_entropy_shape_errors():
    with pytest.raises(ShapeError) as caught:
        ops.cross_entropy(np.zeros((2, 3, 4)), np.zeros((2,), dtype=int))
    assert str(caught.value) == (
        "cross_entropy: targets must have the logits' shape without the last axis: "
        "logits [2,3,4] targets [2]"
    )
    with pytest.raises(ShapeError, match=r"^cross_entropy: logits need a class axis"):
        ops.cross_entropy(1.0, 0)
    with pytest.raises(ShapeError, match=r"^cross_entropy: needs at least one target"):
        ops.cross_entropy(np.zeros((0, 3)), np.zeros((0,), dtype=int))


def test_softmax_axis_errors():
    with pytest.raises(ShapeError, match=r"^softmax: axis 2 is out of range: got \[2,3\]$"):
        ops.softmax(np.zeros((2, 3)), 2)
    with pytest.raises(ShapeError, match=r"^log_softmax: axis -1 is out of range: got \[\]$"):
        ops.log_softmax(1.0)
