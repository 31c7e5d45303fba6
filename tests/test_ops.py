"""Tests for engine/ops/: every op's gradient against central differences, shape errors."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine import ops
from engine.errors import EngineError, OperandError, ShapeError
from engine.ops import unbroadcast
from engine.tensor import TensorValue

BROADCAST_PAIRS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 3), (2, 1)),
    ((3,), (1,)),
    ((1,), (3,)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((1, 1), (3,)),
    ((4, 1, 3), (2, 1)),
]


@pytest.mark.parametrize(("left", "right"), BROADCAST_PAIRS)
@pytest.mark.parametrize("op", [ops.add, ops.sub, ops.mul])
def test_broadcasting_ops_match_central_differences(op, left, right):
    check_op(op, sample(*left, seed=1), sample(*right, seed=2))


@pytest.mark.parametrize(
    ("left", "right"),
    [((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 5, 2, 3), (3, 1))],
)
def test_matmul_matches_central_differences(left, right):
    check_op(ops.matmul, sample(*left, seed=3), sample(*right, seed=4))


BATCHED_PAIRS = [
    ((5, 2, 3), (5, 3, 4)),  # same batch
    ((2, 3), (5, 3, 4)),  # one left matrix against a batch
    ((3,), (5, 3, 4)),  # one row against a batch: the row axis is dropped again
    ((4, 1, 2, 3), (5, 3, 2)),  # batch axes broadcast both ways
    ((2, 5, 2, 3), (1, 5, 3, 2)),
    ((1, 2, 3), (4, 3, 4)),  # a stretched batch axis on the left
    ((2, 3, 2, 4), (2, 3, 4, 2)),  # heads x batch, as in attention
]


@pytest.mark.parametrize(("left", "right"), BATCHED_PAIRS)
def test_batched_matmul_matches_numpy_and_central_differences(left, right):
    a, b = sample(*left, seed=8), sample(*right, seed=9)
    out = ops.matmul(a, b)
    np.testing.assert_array_equal(out.value, a @ b)
    check_op(ops.matmul, a, b)


def test_a_shared_right_matrix_collects_every_batch_position():
    # The 2-D right operand keeps its fast path: one outer-product sum over all rows.
    a, w = sample(3, 4, 2, seed=10), TensorValue.parameter(sample(2, 5, seed=11))
    ops.matmul(a, w).backward_with_seed(np.ones((3, 4, 5)))
    np.testing.assert_allclose(w.gradient(), a.reshape(-1, 2).T @ np.ones((12, 5)), rtol=1e-15)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_axis_matches_central_differences(axis, keepdims):
    check_op(lambda a: ops.sum_axis(a, axis, keepdims), sample(2, 3, 4, seed=5))


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_matches_central_differences(axis, keepdims):
    check_op(lambda a: ops.mean(a, axis, keepdims), sample(2, 3, seed=6))


@pytest.mark.parametrize(
    "fn", [ops.neg, lambda a: ops.scale(a, -0.25), lambda a: a * 3, lambda a: 0.5 * a]
)
def test_unary_ops_match_central_differences(fn):
    check_op(fn, sample(2, 3, seed=7))


def test_operators_build_the_same_graph_as_the_functions():
    a = TensorValue.parameter([[1.0, 2.0], [3.0, 4.0]])
    b = TensorValue.parameter([0.5, -1.0])
    out = ((a + b) * a - b) @ a
    expected = ((a.value + b.value) * a.value - b.value) @ a.value
    np.testing.assert_array_equal(out.value, expected)
    np.testing.assert_array_equal((-a).value, -a.value)
    check_op(lambda x, y: ((x + y) * x - y) @ x, a.value, b.value)


def test_numbers_on_either_side_become_constants_or_scales():
    x = TensorValue.parameter([1.0, -2.0])
    assert (x * 2).op == "scale"
    assert (2 * x).op == "scale"
    (1.0 - x + 3.0).sum_axis(0).backward()
    np.testing.assert_array_equal(x.gradient(), [-1.0, -1.0])


def test_unbroadcast_sums_prepended_and_stretched_axes():
    grad = np.arange(24.0).reshape(4, 2, 3)
    np.testing.assert_array_equal(unbroadcast(grad, (2, 3)), grad.sum(axis=0))
    np.testing.assert_array_equal(unbroadcast(grad, (2, 1)), grad.sum(axis=(0, 2))[:, None])
    np.testing.assert_array_equal(unbroadcast(grad, ()), grad.sum())
    assert unbroadcast(grad, (4, 2, 3)) is grad


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (ops.add, "add: shapes do not broadcast: got [2,3] and [4]"),
        (ops.sub, "sub: shapes do not broadcast: got [2,3] and [4]"),
        (ops.mul, "mul: shapes do not broadcast: got [2,3] and [4]"),
    ],
)
def test_broadcast_shape_errors_name_op_and_both_shapes(fn, message):
    with pytest.raises(ShapeError) as caught:
        fn(TensorValue.parameter(np.ones((2, 3))), TensorValue.parameter(np.ones(4)))
    assert str(caught.value) == message
    assert (caught.value.op, caught.value.left, caught.value.right) == (fn.__name__, (2, 3), (4,))


def test_matmul_shape_errors():
    with pytest.raises(ShapeError) as caught:
        TensorValue.constant(np.ones((2, 3))) @ TensorValue.constant(np.ones((4, 5)))
    assert str(caught.value) == "matmul: inner sizes differ (3 vs 4): got [2,3] and [4,5]"
    with pytest.raises(ShapeError) as caught:
        TensorValue.constant(np.ones((2, 3))) @ TensorValue.constant(np.ones(3))
    assert str(caught.value) == (
        "matmul: expected [..., k] @ [k, m] or [..., n, k] @ [..., k, m]: got [2,3] and [3]"
    )
    with pytest.raises(ShapeError) as caught:
        TensorValue.constant(np.ones((2, 2, 3))) @ TensorValue.constant(np.ones((3, 3, 4)))
    assert str(caught.value) == "matmul: batch axes do not broadcast: got [2,2,3] and [3,3,4]"
    with pytest.raises(ShapeError) as caught:
        TensorValue.constant(np.ones((5, 2, 3))) @ TensorValue.constant(np.ones((5, 4, 1)))
    assert str(caught.value) == "matmul: inner sizes differ (3 vs 4): got [5,2,3] and [5,4,1]"
    with pytest.raises(ShapeError, match=r"^matmul: expected \[\.\.\., k\] @ \[k, m\]: got \[\]"):
        TensorValue.constant(1.0) @ TensorValue.constant(np.ones((1, 1)))


def test_axis_errors():
    x = TensorValue.constant(np.ones((2, 3)))
    with pytest.raises(ShapeError) as caught:
        x.sum_axis(2)
    assert str(caught.value) == "sum_axis: axis 2 is out of range: got [2,3]"
    with pytest.raises(ShapeError, match=r"^mean: axis -3 is out of range: got \[2,3\]$"):
        x.mean(-3)
    with pytest.raises(ShapeError, match=r"^mean: needs at least one element: got \[0\]$"):
        TensorValue.constant(np.ones(0)).mean()
    with pytest.raises(TypeError, match="axis must be an int"):
        x.sum_axis(1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="factor must be a real number"):
        x.scale(np.ones(2))  # type: ignore[arg-type]


def test_constant_operands_record_no_tape():
    out = TensorValue.constant([1.0, 2.0]) + TensorValue.constant([3.0, 4.0])
    assert not out.requires_grad
    assert out.is_leaf


NOT_NUMERIC = [
    (None, "None"),
    ("abc", "str 'abc'"),
    ("1.5", "str '1.5'"),
    (np.array([1.0, None], dtype=object), "an array of dtype object"),
    (np.array([1.0, 2.0], dtype=object), "an array of dtype object"),
    (np.array(["a", "b"]), "an array of dtype <U1"),
    ([1.0, "a"], "an array of dtype <U32"),
    ([[1.0, 2.0], [3.0]], "a list"),
    (1 + 2j, "a complex"),
    ({"a": 1}, "a dict"),
]


@pytest.mark.parametrize(("operand", "described"), NOT_NUMERIC)
@pytest.mark.parametrize("op", [ops.add, ops.sub, ops.mul, ops.matmul])
def test_non_numeric_operands_raise_an_operand_error_naming_the_op(op, operand, described):
    x = TensorValue.parameter(np.ones((2, 2)))
    for call in (lambda: op(x, operand), lambda: op(operand, x)):
        with pytest.raises(OperandError) as caught:
            call()
        assert str(caught.value) == (
            f"{op.__name__}: operands must be real numbers or arrays of them: got {described}"
        )
        assert isinstance(caught.value, EngineError) and caught.value.op == op.__name__
    assert x.gradient() is None


def test_operators_and_unary_ops_refuse_non_numeric_operands_too():
    x = TensorValue.parameter([1.0, 2.0])
    with pytest.raises(OperandError, match=r"^add: .*got None$"):
        x + None
    with pytest.raises(OperandError, match=r"^neg: .*got str 'x'$"):
        ops.neg("x")
    with pytest.raises(OperandError, match=r"^mean: "):
        ops.mean(None)


def test_real_numeric_operands_are_still_lifted():
    # Lifted as float64 constants: the sum is numpy's, and the gradient reaches x alone.
    for other in (2, 2.5, np.int32(3), np.array([1, 2]), [True, False], np.float32(0.5)):
        x = TensorValue.parameter([1.0, 2.0])
        out = ops.add(x, other)
        assert out.value.dtype == np.float64
        np.testing.assert_array_equal(
            out.value, np.array([1.0, 2.0]) + np.asarray(other, dtype=np.float64))
        out.backward_with_seed(np.array([3.0, 5.0]))
        np.testing.assert_array_equal(x.gradient(), [3.0, 5.0])
