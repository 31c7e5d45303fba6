"""The residual merge ``y = x + F(x)``.

Contract: `residual_add` owns no parameters. It requires the branch output to have exactly
the identity's complete shape and raises `ResidualShapeError` otherwise, even where numpy
would broadcast the two. A valid merge is the ordinary differentiable `add`, so the output
keeps one tape edge to each operand and backward adds both contributions.
"""

from __future__ import annotations

from engine.errors import ResidualShapeError
from engine.ops import add
from engine.tensor import TensorValue


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
