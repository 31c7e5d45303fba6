"""Tests for engine/nn: the bias-free Linear layer and the exact-shape residual merge."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine.errors import ResidualShapeError, ShapeError
from engine.nn import Linear, named_linear, residual_add
from engine.tensor import GraphRetention, TensorValue

W = [[0.5, -1.0], [2.0, 0.25]]


def test_linear_is_row_vector_x_at_w_with_named_weight():
    layer = named_linear("demo.weight", W)
    x = TensorValue.parameter([2.0, -1.0])
    y = layer(x)
    assert layer.name == "demo.weight" and layer.weight.shape == (2, 2)
    assert layer.parameters() == [layer.weight]
    assert y.value.tolist() == [-1.0, -2.25]
    y.backward_with_seed([1.0, 1.0])
    assert layer.weight.gradient().tolist() == [[2.0, 2.0], [-1.0, -1.0]]  # outer(x, ȳ)
    assert x.gradient().tolist() == [-0.5, 2.25]  # W @ ȳ


def test_linear_accepts_batches():
    layer = named_linear("batch.weight", sample(3, 2, seed=11))
    check_op(lambda x, w: Linear(w).forward(x), sample(4, 5, 3, seed=12), layer.weight.value)


def test_linear_rejects_a_weight_that_is_not_a_matrix():
    with pytest.raises(ShapeError) as caught:
        Linear(TensorValue.parameter([1.0, 2.0]))
    assert str(caught.value) == "Linear: weight must be an [in, out] matrix: got [2]"


def test_residual_add_keeps_both_edges():
    layer = named_linear("residual.branch.weight", W)
    x = TensorValue.parameter([2.0, -1.0])
    y = residual_add(x, layer(x))
    assert y.value.tolist() == [1.0, -3.25]
    y.backward_with_seed([1.0, 1.0], GraphRetention.RETAIN)
    assert x.gradient().tolist() == [0.5, 3.25]  # [1, 1] + [-0.5, 2.25]


def test_residual_add_matches_central_differences():
    check_op(residual_add, sample(3, 4, seed=13), sample(3, 4, seed=14))


def test_residual_add_owns_no_parameters():
    x = TensorValue.parameter([1.0, 2.0], name="x")
    branch = TensorValue.parameter([3.0, 4.0], name="b")
    assert [p.name for p in residual_add(x, branch).parameters()] == ["x", "b"]


@pytest.mark.parametrize(
    ("identity", "branch"),
    [((2, 2), (2,)), ((2, 2), (1, 2)), ((2, 1), (2, 2)), ((2,), (3,)), ((2,), ())],
)
def test_residual_add_rejects_any_shape_difference(identity, branch):
    with pytest.raises(ResidualShapeError) as caught:
        residual_add(TensorValue.constant(np.ones(identity)), TensorValue.constant(np.ones(branch)))
    error = caught.value
    assert isinstance(error, ShapeError)
    assert (error.identity, error.branch) == (identity, branch)
    assert error.op == "residual_add"


def test_residual_shape_error_message_names_both_shapes():
    identity = TensorValue.parameter(np.ones((2, 2)))
    branch = TensorValue.parameter(np.ones(2))
    assert (identity + branch).shape == (2, 2)  # generic add broadcasts this pair
    with pytest.raises(ResidualShapeError) as caught:
        residual_add(identity, branch)
    assert str(caught.value) == (
        "residual_add: the branch must return the identity's exact shape "
        "(a residual merge never broadcasts): identity [2,2] vs branch [2]"
    )
