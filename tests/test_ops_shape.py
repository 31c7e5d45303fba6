"""Tests for engine/ops/shape.py: layouts match numpy, gradients by central differences."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine import ops
from engine.errors import ShapeError


@pytest.mark.parametrize(
    ("shape", "target"),
    [((6,), (2, 3)), ((2, 3), (3, 2)), ((2, 3, 4), (6, -1)), ((2, 3, 4), (24,)), ((1,), ()),
     ((), (1, 1)), ((4, 5), 20)],
)
def test_reshape_matches_numpy_and_central_differences(shape, target):
    x = sample(*shape, seed=31)
    np.testing.assert_array_equal(ops.reshape(x, target).value, x.reshape(target))
    check_op(lambda a: ops.reshape(a, target), x)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((2, 3), None), ((2, 3, 4), None), ((2, 3, 4), (1, 0, 2)), ((2, 3, 4), (2, 0, 1)),
     ((2, 3, 4, 5), (0, 1, 3, 2)), ((2, 3, 4), (-1, 0, 1)), ((5,), None), ((), None)],
)
def test_transpose_matches_numpy_and_central_differences(shape, axes):
    x = sample(*shape, seed=32)
    np.testing.assert_array_equal(ops.transpose(x, axes).value, np.transpose(x, axes))
    check_op(lambda a: ops.transpose(a, axes), x)


@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (2, 4, 3, 5)])
def test_swap_last_axes_transposes_every_matrix_of_a_batch(shape):
    x = sample(*shape, seed=33)
    np.testing.assert_array_equal(ops.swap_last_axes(x).value, np.swapaxes(x, -1, -2))
    check_op(ops.swap_last_axes, x)


def test_shape_errors_name_the_op_and_the_shape():
    x = np.ones((2, 3))
    with pytest.raises(ShapeError) as caught:
        ops.reshape(x, (4, 2))
    assert str(caught.value) == "reshape: 6 entries do not fit shape [4, 2]: got [2,3]"
    with pytest.raises(ShapeError) as caught:
        ops.transpose(x, (0, 0))
    assert str(caught.value) == "transpose: axes [0, 0] are not a permutation of 2 axes: got [2,3]"
    with pytest.raises(ShapeError, match=r"^transpose: axes \[0, 2\] are not a permutation"):
        ops.transpose(x, (0, 2))
    with pytest.raises(ShapeError, match=r"^transpose: axes \[0\] are not a permutation"):
        ops.transpose(x, (0,))
    with pytest.raises(ShapeError) as caught:
        ops.swap_last_axes(np.ones(3))
    assert str(caught.value) == "swap_last_axes: needs at least two axes: got [3]"
    with pytest.raises(TypeError, match="shape must be a sequence of ints"):
        ops.reshape(x, (2.0, 3))
    with pytest.raises(TypeError, match="axes must be ints"):
        ops.transpose(x, (1.0, 0))
