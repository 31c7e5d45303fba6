"""Multi-head causal self-attention for the decoder (row-vector convention, no biases).

Contract: for a stream ``h`` of shape ``[B, T, d]`` and ``H`` heads of width ``e = d / H``,

    q, k, v = h @ wq, h @ wk, h @ wv                  each [B, T, d], split to [B, H, T, e]
    p = softmax(causal_mask(q kᵀ / sqrt(e)))          [B, H, T, T], row i sees keys 0..i
    out = merge_heads(p v) @ wo                       [B, T, d]

The four matrices are ``[d, d]`` parameters named ``{name}.wq``, ``.wk``, ``.wv``, ``.wo``;
``wo`` is the projection whose output joins the stream. `__call__` returns the output and
the attention pattern ``p`` (a tape value, kept for analysis).
"""

from __future__ import annotations

import math

from engine.nn import Linear
from engine.ops import attention_probabilities, matmul, reshape, transpose
from engine.tensor import TensorValue


class CausalSelfAttention:
    """``H``-head causal self-attention with projections ``wq, wk, wv, wo``."""

    def __init__(self, wq: Linear, wk: Linear, wv: Linear, wo: Linear, heads: int) -> None:
        self.wq, self.wk, self.wv, self.wo, self.heads = wq, wk, wv, wo, heads

    def __call__(self, h: TensorValue) -> tuple[TensorValue, TensorValue]:
        batch, length, width = h.shape
        head_width = width // self.heads
        q, k, v = (self._split(linear(h), batch, length, head_width)
                   for linear in (self.wq, self.wk, self.wv))
        probabilities = attention_probabilities(q, k, 1.0 / math.sqrt(head_width))
        mixed = transpose(matmul(probabilities, v), (0, 2, 1, 3))  # [B, T, H, e]
        return self.wo(reshape(mixed, (batch, length, width))), probabilities

    def _split(self, x: TensorValue, batch: int, length: int, head_width: int) -> TensorValue:
        return transpose(reshape(x, (batch, length, self.heads, head_width)), (0, 2, 1, 3))

    def parameters(self) -> list[TensorValue]:
        return [self.wq.weight, self.wk.weight, self.wv.weight, self.wo.weight]
