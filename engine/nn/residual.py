"""The residual merge ``y = x + F(x)``.

Contract: `residual_add` owns no parameters. It requires the branch output to have exactly
the identity's complete shape and raises `ResidualShapeError` otherwise, even where numpy
would broadcast the two. A valid merge is the ordinary differentiable `add`, so the output
keeps one tape edge to each operand and backward adds both contributions.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.errors import ResidualShapeError
from engine.ops import add, mul
from engine.tensor import TensorValue

#: How a block joins a sublayer's write to the stream: ``merge(stream, write)``.
Merge = Callable[[TensorValue, TensorValue], TensorValue]


# --8<-- [start:residual-add]
def residual_add(identity: TensorValue, branch_output: TensorValue) -> TensorValue:
    """Add a branch update to the unchanged stream it was computed from.

    Generic `add` broadcasts; a residual merge must not, because a branch that returns a
    different shape is not an update to this stream. Checking first and then reusing `add`
    keeps both tape edges, so the input receives identity + branch gradient.
    """
    if identity.shape != branch_output.shape:
        raise ResidualShapeError(identity.shape, branch_output.shape)
    return add(identity, branch_output)
# --8<-- [end:residual-add]


def write_only(stream: TensorValue, write: TensorValue) -> TensorValue:
    """A plain block's merge: the write replaces the stream."""
    return write


class ScaledAdd:
    """The merge ``x + α·F(x)`` with a learned scalar ``α`` (ReZero: α = 0 starts every block
    as the identity)."""

    def __init__(self, alpha: TensorValue) -> None:
        self.alpha = alpha

    def __call__(self, stream: TensorValue, write: TensorValue) -> TensorValue:
        return residual_add(stream, mul(self.alpha, write))
