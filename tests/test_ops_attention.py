"""Tests for engine/ops/attention.py: the fused causal attention weights equal the five-op
composition, hide the future, and have central-difference gradients."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import check_op, sample

from engine import ops
from engine.errors import ShapeError
from engine.tensor import TensorValue


def composed(q, k, scale):
    scores = ops.matmul(q, ops.swap_last_axes(k)) * scale
    return ops.softmax(ops.causal_mask(scores), axis=-1)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3), (2, 3, 4, 2)])
def test_fused_weights_equal_the_composition_in_value_and_gradient(shape):
    q, k = sample(*shape, seed=3), sample(*shape, seed=4)
    fused = ops.attention_probabilities(q, k, 0.7).value
    np.testing.assert_allclose(fused, composed(q, k, 0.7).value, rtol=1e-13, atol=1e-15)
    length = shape[-2]
    assert np.all(fused[..., np.triu_indices(length, 1)[0], np.triu_indices(length, 1)[1]] == 0)
    np.testing.assert_allclose(fused.sum(axis=-1), 1.0, rtol=1e-14)
    check_op(lambda a, b: ops.attention_probabilities(a, b, 0.7), q, k)

    upstream = sample(*shape[:-1], shape[-2], seed=5)
    grads = []
    for fn in (lambda a, b: ops.attention_probabilities(a, b, 0.7),
               lambda a, b: composed(a, b, 0.7)):
        a, b = TensorValue.parameter(q), TensorValue.parameter(k)
        fn(a, b).backward_with_seed(upstream)
        grads.append((a.gradient(), b.gradient()))
    for fused_grad, composed_grad in zip(*grads, strict=True):
        np.testing.assert_allclose(fused_grad, composed_grad, rtol=1e-12, atol=1e-14)


def test_large_scores_stay_finite():
    q = np.full((3, 2), 300.0)
    p = ops.attention_probabilities(q, q, 10.0).value
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p[2], [1 / 3] * 3)


def test_shapes_and_scale_are_checked():
    with pytest.raises(ShapeError, match="q and k must both have shape"):
        ops.attention_probabilities(np.ones((2, 3)), np.ones((3, 3)), 1.0)
    with pytest.raises(ShapeError):
        ops.attention_probabilities(np.ones(3), np.ones(3), 1.0)
    with pytest.raises(TypeError, match="scale must be a real number"):
        ops.attention_probabilities(np.ones((2, 3)), np.ones((2, 3)), None)
