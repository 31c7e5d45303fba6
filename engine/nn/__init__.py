"""Layers built from `engine.ops`: a bias-free `Linear`, the exact-shape `residual_add` and the
other merges, and the one `Block` of both labs with the gradients lab's stacks of it
(`build_stack` in engine/nn/blocks.py)."""

from engine.nn.blocks import (
    MLP,
    Block,
    BlockPass,
    BlockStack,
    BlockStackConfig,
    Norm,
    build_stack,
)
from engine.nn.linear import Linear, named_linear
from engine.nn.residual import Merge, ScaledAdd, residual_add, write_only

__all__ = [
    "MLP",
    "Block",
    "BlockPass",
    "BlockStack",
    "BlockStackConfig",
    "Linear",
    "Merge",
    "Norm",
    "ScaledAdd",
    "build_stack",
    "named_linear",
    "residual_add",
    "write_only",
]
