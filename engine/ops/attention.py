"""Fused causal attention weights: ``softmax(causal_mask(scale · q kᵀ))`` as one tape node.

Contract: ``q`` and ``k`` have shape ``[..., T, e]`` (the same leading axes, for instance
``[B, H, T, e]``); the result ``p`` has shape ``[..., T, T]``, and row ``i`` of every
``T × T`` slice is a probability distribution over keys ``0..i`` (entries above the diagonal
are exactly 0). It equals `softmax` of `causal_mask` of ``scale`` times ``q @ swap_last_axes(k)``
but records one node instead of five, because a decoder computes it in every block. Backward,
with ``g`` the upstream gradient: ``s̄ = p ⊙ (g - Σ_j g ⊙ p)`` (the softmax Jacobian; masked
entries have ``p = 0`` and so get nothing), then ``q̄ = scale · s̄ k`` and ``k̄ = scale · s̄ᵀ q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.ops._common import lift
from engine.tensor import TensorValue
from tracefile.values import is_real


def attention_probabilities(q: Any, k: Any, scale: float) -> TensorValue:
    """Causal attention weights ``softmax(mask(scale · q kᵀ))`` over the last axis."""
    a, b = lift(q, "attention_probabilities"), lift(k, "attention_probabilities")
    if a.value.ndim < 2 or a.shape != b.shape:
        raise ShapeError("attention_probabilities", a.shape, b.shape,
                         "q and k must both have shape [..., T, e]", labels=("q", "k"))
    if not is_real(scale):
        raise TypeError(f"attention_probabilities: scale must be a real number, got {scale!r}")
    scale = float(scale)
    q_value, k_value = a.value, b.value
    length = a.shape[-2]
    future = np.triu(np.ones((length, length), dtype=bool), k=1)
    scores = (q_value @ np.swapaxes(k_value, -1, -2)) * scale
    scores[..., future] = -np.inf
    scores -= np.max(scores, axis=-1, keepdims=True)
    probabilities = np.exp(scores)
    probabilities /= np.sum(probabilities, axis=-1, keepdims=True)

    def backward(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        inner = np.sum(grad * probabilities, axis=-1, keepdims=True)
        d_scores = probabilities * (grad - inner) * scale
        return d_scores @ k_value, np.swapaxes(d_scores, -1, -2) @ q_value

    return TensorValue.from_op("attention_probabilities", probabilities, (a, b), backward)
