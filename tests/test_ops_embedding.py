"""Tests for engine/ops/embedding.py: row gathers with scatter-add backward, the causal mask."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine import ops
from engine.errors import IndicesError, ShapeError
from engine.tensor import TensorValue

INDEX_ARRAYS = [
    np.array(3),
    np.array([0, 4, 2]),
    np.array([[1, 1, 0], [4, 1, 3]]),  # repeated rows
    np.array([[[2]], [[2]]]),
]


@pytest.mark.parametrize("indices", INDEX_ARRAYS, ids=lambda i: str(i.shape))
def test_embedding_gathers_rows_and_matches_central_differences(indices):
    table = sample(5, 3, seed=71)
    out = ops.embedding(table, indices)
    assert out.shape == (*indices.shape, 3)
    np.testing.assert_array_equal(out.value, table[indices])
    check_op(lambda t: ops.embedding(t, indices), table)


def test_repeated_indices_accumulate_their_gradients():
    table = TensorValue.parameter(np.zeros((4, 2)))
    out = ops.embedding(table, [[1, 1], [3, 1]])
    out.backward_with_seed([[[1.0, 2.0], [10.0, 20.0]], [[5.0, 5.0], [100.0, 200.0]]])
    np.testing.assert_array_equal(
        table.gradient(), [[0.0, 0.0], [111.0, 222.0], [0.0, 0.0], [5.0, 5.0]]
    )


def test_embedding_index_and_table_errors():
    table = np.zeros((4, 2))
    with pytest.raises(IndicesError) as caught:
        ops.embedding(table, [[0, 1], [4, 0]])
    assert str(caught.value) == "embedding: indices must lie in [0, 4): got 4 at position [1,0]"
    with pytest.raises(IndicesError, match=r"^embedding: indices must lie in \[0, 4\): got -1"):
        ops.embedding(table, [-1])
    with pytest.raises(IndicesError, match=r"^embedding: indices must be integers, got dtype"):
        ops.embedding(table, [0.0])
    with pytest.raises(ShapeError) as caught:
        ops.embedding(np.zeros(4), [0])
    assert str(caught.value) == "embedding: the table must be a [V, d] matrix: got [4]"


def test_causal_mask_hides_entries_above_the_diagonal():
    scores = np.arange(12.0).reshape(3, 4)
    out = ops.causal_mask(scores).value
    expected = scores.copy()
    expected[np.triu_indices(3, k=1, m=4)] = -np.inf
    np.testing.assert_array_equal(out, expected)
    assert ops.causal_mask(scores, fill=-1e9).value[0, 1] == -1e9


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 2, 3, 5)])
def test_masked_softmax_gives_zero_weight_to_the_future(shape):
    scores = sample(*shape, seed=72)
    weights = ops.softmax(ops.causal_mask(scores)).value
    rows, columns = shape[-2:]
    future = np.triu(np.ones((rows, columns), dtype=bool), k=1)
    assert np.all(weights[..., future] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(weights[..., 0, 0], 1.0)  # the first position sees only itself
    check_op(lambda s: ops.softmax(ops.causal_mask(s)), scores)
    check_op(lambda s: ops.causal_mask(s, fill=-1e3), scores)


def test_masked_entries_receive_no_gradient():
    scores = TensorValue.parameter(np.zeros((2, 2)))
    ops.causal_mask(scores, fill=-5.0).backward_with_seed(np.ones((2, 2)))
    np.testing.assert_array_equal(scores.gradient(), [[1.0, 0.0], [1.0, 1.0]])


def test_causal_mask_errors():
    with pytest.raises(ShapeError) as caught:
        ops.causal_mask(np.zeros(3))
    assert str(caught.value) == "causal_mask: needs scores [..., T, S]: got [3]"
    with pytest.raises(TypeError, match="fill must be a real number"):
        ops.causal_mask(np.zeros((2, 2)), fill=None)  # type: ignore[arg-type]
