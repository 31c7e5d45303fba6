"""Tests for engine/optim.py: SGD and Adam against hand computations, clipping, bookkeeping."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import ops
from engine.errors import ConfigError
from engine.optim import SGD, Adam, global_grad_norm
from engine.tensor import GraphRetention, TensorValue


def leaf_with_gradient(value, grad, name="p"):
    leaf = TensorValue.parameter(value, name=name)
    ops.mul(leaf, np.asarray(grad, dtype=np.float64)).sum_axis(0).backward()
    np.testing.assert_array_equal(leaf.gradient(), grad)
    return leaf


def test_sgd_step_is_the_manual_update_and_returns_the_norm():
    w = leaf_with_gradient([1.0, -2.0], [3.0, 4.0])
    optimizer = SGD([w], lr=0.1)
    norm = optimizer.step()
    assert norm == 5.0 and optimizer.last_grad_norm == 5.0
    np.testing.assert_array_equal(w.value, [1.0 - 0.1 * 3.0, -2.0 - 0.1 * 4.0])
    assert w.value.flags.writeable is False
    np.testing.assert_array_equal(w.gradient(), [3.0, 4.0])  # kept until zero_grad
    optimizer.zero_grad()
    assert w.gradient() is None


def test_leaves_without_a_gradient_are_skipped():
    used, unused = leaf_with_gradient([1.0], [2.0]), TensorValue.parameter([5.0])
    SGD([used, unused], lr=1.0).step()
    assert used.value.tolist() == [-1.0] and unused.value.tolist() == [5.0]
    adam = Adam([used, unused], lr=0.1)
    adam.step()
    assert unused.value.tolist() == [5.0]


def test_adam_first_step_matches_a_hand_computation():
    p0, g = np.array([0.5, -1.0, 2.0]), np.array([0.2, -3.0, 0.0])
    p = leaf_with_gradient(p0, g)
    lr, (b1, b2), eps = 0.01, (0.9, 0.999), 1e-8
    Adam([p], lr=lr, betas=(b1, b2), eps=eps).step()
    m_hat = (1 - b1) * g / (1 - b1)  # = g
    v_hat = (1 - b2) * g * g / (1 - b2)  # = g²
    np.testing.assert_allclose(p.value, p0 - lr * m_hat / (np.sqrt(v_hat) + eps), rtol=1e-15)
    # The first step moves every coordinate by about lr, whatever the gradient's size.
    np.testing.assert_allclose(p.value, p0 - lr * np.sign(g), atol=1e-9)


def test_adam_second_step_uses_bias_corrected_moments():
    p = TensorValue.parameter([1.0, 2.0])
    adam = Adam([p], lr=0.1, betas=(0.8, 0.9), eps=1e-6)
    grads = [np.array([1.0, -2.0]), np.array([0.5, 4.0])]
    m, v, expected = np.zeros(2), np.zeros(2), p.value_snapshot()
    for t, g in enumerate(grads, start=1):
        adam.zero_grad()
        ops.mul(p, g).sum_axis(0).backward()
        adam.step()
        m, v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
        expected = expected - 0.1 * (m / (1 - 0.8**t)) / (np.sqrt(v / (1 - 0.9**t)) + 1e-6)
        np.testing.assert_allclose(p.value, expected, rtol=1e-14)


def test_adam_weight_decay_is_decoupled():
    p = leaf_with_gradient([2.0], [0.0])  # zero gradient: only the decay moves p
    Adam([p], lr=0.1, weight_decay=0.5).step()
    assert p.value.tolist() == pytest.approx([2.0 - 0.1 * 0.5 * 2.0])


def test_clipping_scales_the_update_not_the_stored_gradient():
    a, b = leaf_with_gradient([0.0, 0.0], [3.0, 0.0], "a"), leaf_with_gradient([0.0], [4.0], "b")
    assert global_grad_norm([a, b]) == 5.0
    optimizer = SGD([a, b], lr=1.0, clip_norm=1.0)
    assert optimizer.step() == 5.0  # the pre-clip norm
    np.testing.assert_allclose(a.value, [-0.6, 0.0])
    np.testing.assert_allclose(b.value, [-0.8])
    np.testing.assert_array_equal(a.gradient(), [3.0, 0.0])


def test_clipping_leaves_small_gradients_alone():
    p = leaf_with_gradient([0.0], [0.5])
    assert SGD([p], lr=1.0, clip_norm=1.0).step() == 0.5
    assert p.value.tolist() == [-0.5]


def test_adam_clipping_feeds_clipped_gradients_to_the_moments():
    big = leaf_with_gradient([0.0, 0.0], [30.0, 40.0])
    twin = leaf_with_gradient([0.0, 0.0], [0.6, 0.8])
    first, second = Adam([big], lr=0.1, clip_norm=1.0), Adam([twin], lr=0.1)
    assert first.step() == 50.0
    second.step()
    for _ in range(2):  # same clipped gradient again: the states must stay equal
        first.step()
        second.step()
    np.testing.assert_allclose(big.value, twin.value, rtol=1e-15)


def test_training_reduces_a_least_squares_loss():
    rng = np.random.default_rng(0)
    x, target = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))
    for make in (lambda p: SGD(p, lr=0.1), lambda p: Adam(p, lr=0.05)):
        w = TensorValue.parameter(np.zeros((3, 2)), name="w")
        optimizer = make([w])
        losses = []
        for _ in range(50):
            optimizer.zero_grad()
            residual = ops.sub(ops.matmul(x, w), target)
            loss = ops.mean(ops.mul(residual, residual))
            loss.backward()
            optimizer.step()
            losses.append(float(loss.value))
        assert losses[-1] < 0.8 * losses[0]


def test_an_update_never_changes_a_recorded_forward():
    w = TensorValue.parameter([2.0])
    y = ops.mul(w, w)
    y.backward(GraphRetention.RETAIN)
    SGD([w], lr=0.5).step()  # w: 2 -> 0
    assert y.value.tolist() == [4.0]
    w.zero_grad()
    y.backward(GraphRetention.RETAIN)  # the tape still holds the old w: d(w²)/dw = 4
    assert w.gradient().tolist() == [4.0]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: SGD([], lr=0.1), "SGD: needs at least one parameter"),
        (lambda p: SGD(p, lr=0.1), "SGD: pass a list of parameters, got a single TensorValue"),
        (lambda p: SGD([p, p], lr=0.1), "SGD: parameter TensorValue(op=parameter name='w' "
                                        "shape=[1]) is listed twice"),
        (lambda p: SGD([TensorValue.constant(1.0)], lr=0.1),
         "SGD: every entry must be a parameter leaf, got TensorValue(op=constant shape=[])"),
        (lambda p: SGD([p * 2.0], lr=0.1), "SGD: every entry must be a parameter leaf, got "
                                           "TensorValue(op=scale shape=[1])"),
        (lambda p: SGD([p], lr=0.0), "SGD: lr must be a finite number > 0, got 0.0"),
        (lambda p: SGD([p], lr=math.inf), "SGD: lr must be a finite number > 0, got inf"),
        (lambda p: SGD([p], lr=0.1, clip_norm=-1), "SGD: clip_norm must be a finite number > 0"
                                                   ", got -1"),
        (lambda p: Adam([p], lr=0.1, betas=(0.9, 1.0)),
         "Adam: betas must be two numbers in [0, 1), got (0.9, 1.0)"),
        (lambda p: Adam([p], lr=0.1, betas=0.9), "Adam: betas must be two numbers in [0, 1), "
                                                 "got 0.9"),
        (lambda p: Adam([p], lr=0.1, eps=0), "Adam: eps must be a finite number > 0, got 0"),
        (lambda p: Adam([p], lr=0.1, weight_decay=-0.1),
         "Adam: weight_decay must be a finite number >= 0, got -0.1"),
    ],
)
def test_bad_settings_raise_config_errors(make, message):
    with pytest.raises(ConfigError) as caught:
        make(TensorValue.parameter([1.0], name="w"))
    assert str(caught.value) == message
