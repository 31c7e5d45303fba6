"""Softmax, log-softmax and the fused cross-entropy loss, all numerically stable.

Contract: every op subtracts the maximum along the normalized axis before exponentiating,
so no ``exp`` overflows; the results are the same in exact arithmetic. An entry of
``-inf`` (a masked score, see `causal_mask`) gets probability exactly 0, provided each
normalized slice keeps at least one finite entry. `cross_entropy` is one tape node whose
backward is ``(softmax - onehot) / N``; its integer targets are data, not tape values, and
receive no gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.ops._common import check_axis, integer_indices, lift
from engine.tensor import TensorValue


def _shifted_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmax(operand: Any, axis: int = -1) -> TensorValue:
    """``exp(x) / sum(exp(x), axis)``: probabilities that sum to 1 along ``axis``."""
    a = lift(operand, "softmax")
    axis = check_axis("softmax", a, axis)
    probabilities = np.exp(_shifted_log_softmax(a.value, axis))

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        # Jacobian diag(p) - p pᵀ applied without forming it.
        inner = np.sum(grad * probabilities, axis=axis, keepdims=True)
        return (probabilities * (grad - inner),)

    return TensorValue.from_op("softmax", probabilities, (a,), backward)


def log_softmax(operand: Any, axis: int = -1) -> TensorValue:
    """``x - log(sum(exp(x), axis))``, computed without forming ``exp(x)`` unshifted."""
    a = lift(operand, "log_softmax")
    axis = check_axis("log_softmax", a, axis)
    value = _shifted_log_softmax(a.value, axis)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad - np.exp(value) * np.sum(grad, axis=axis, keepdims=True),)

    return TensorValue.from_op("log_softmax", value, (a,), backward)


def cross_entropy(logits: Any, targets: Any) -> TensorValue:
    """Mean negative log-likelihood of integer ``targets`` under ``softmax(logits)``.

    ``logits`` has shape ``[..., V]`` (unnormalized scores over ``V`` classes, last axis);
    ``targets`` has shape ``[...]`` (the same leading axes) and holds integers in
    ``[0, V)``. The result is a scalar: ``-mean(log_softmax(logits)[..., target])`` over
    every position (every token of every sequence). Targets get no gradient; an integer
    outside ``[0, V)`` raises `IndicesError` naming the first bad position.
    """
    a = lift(logits, "cross_entropy")
    if a.value.ndim < 1:
        raise ShapeError("cross_entropy", a.shape, None, "logits need a class axis [..., V]")
    classes = integer_indices("cross_entropy", targets, a.shape[-1], "targets")
    if classes.shape != a.shape[:-1]:
        raise ShapeError(
            "cross_entropy", a.shape, classes.shape,
            "targets must have the logits' shape without the last axis",
            labels=("logits", "targets"),
        )
    if classes.size == 0:
        raise ShapeError("cross_entropy", a.shape, classes.shape, "needs at least one target",
                         labels=("logits", "targets"))
    log_probabilities = _shifted_log_softmax(a.value, -1)
    picked = np.take_along_axis(log_probabilities, classes[..., np.newaxis], axis=-1)
    count = classes.size

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        gradient = np.exp(log_probabilities)
        np.put_along_axis(
            gradient, classes[..., np.newaxis],
            np.take_along_axis(gradient, classes[..., np.newaxis], axis=-1) - 1.0, axis=-1,
        )
        return (gradient * (grad / count),)

    return TensorValue.from_op("cross_entropy", -np.mean(picked), (a,), backward)
