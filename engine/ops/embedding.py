"""Token-model plumbing: `embedding` (a row gather) and `causal_mask` (hide the future).

Contract: `embedding` reads rows of a ``[V, d]`` table at an integer index array of any
shape; its backward scatter-adds with ``np.add.at``, so a row used at several positions
receives the sum of their gradients. `causal_mask` leaves the entries on and below the
diagonal of the last two axes untouched, replaces the ones above it by a fill value and
passes no gradient to those.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import ShapeError
from engine.ops._common import integer_indices, is_number, lift
from engine.tensor import TensorValue


def embedding(table: Any, indices: Any) -> TensorValue:
    """Rows of ``table`` ``[V, d]`` at ``indices`` (integers in ``[0, V)``, any shape).

    The result has shape ``[*indices.shape, d]``. The indices are data and get no gradient;
    an index outside ``[0, V)`` raises `IndicesError` naming the first bad position.
    """
    a = lift(table, "embedding")
    if a.value.ndim != 2:
        raise ShapeError("embedding", a.shape, None, "the table must be a [V, d] matrix")
    rows = integer_indices("embedding", indices, a.shape[0], "indices")
    table_shape = a.shape

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        gradient = np.zeros(table_shape, grad.dtype)
        # Plain fancy-index assignment would keep only the last write to a repeated row.
        np.add.at(gradient, rows, grad)
        return (gradient,)

    return TensorValue.from_op("embedding", a.value[rows], (a,), backward)


def causal_mask(scores: Any, fill: float = -np.inf) -> TensorValue:
    """Set ``scores[..., i, j]`` to ``fill`` wherever ``j > i`` (the future of position i).

    Apply it to attention scores ``[..., T, S]`` right before `softmax` over the last
    axis: with the default ``fill = -inf`` a masked entry gets probability exactly 0, and
    row ``i`` keeps its entries ``0..i``, so no row is masked entirely. A finite ``fill``
    (say -1e9) is also accepted. Masked entries receive no gradient. Since ``-inf`` times
    0 is nan, feed the result to softmax rather than to products.
    """
    a = lift(scores, "causal_mask")
    if a.value.ndim < 2:
        raise ShapeError("causal_mask", a.shape, None, "needs scores [..., T, S]")
    if not is_number(fill):
        raise TypeError(f"causal_mask: fill must be a real number, got {type(fill).__name__}")
    rows, columns = a.shape[-2:]
    future = np.triu(np.ones((rows, columns), dtype=bool), k=1)

    def backward(grad: np.ndarray) -> tuple[np.ndarray]:
        return (np.where(future, 0.0, grad),)

    return TensorValue.from_op("causal_mask", np.where(future, fill, a.value), (a,), backward)
