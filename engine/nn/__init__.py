"""Layers built from `engine.ops`: a bias-free `Linear`, the exact-shape `residual_add`, and
the MLP block stacks of the gradients lab (`build_stack` in engine/nn/blocks.py)."""

from engine.nn.blocks import MLP, Block, BlockStack, BlockStackConfig, Norm, build_stack
from engine.nn.linear import Linear, named_linear
from engine.nn.residual import residual_add

__all__ = [
    "MLP",
    "Block",
    "BlockStack",
    "BlockStackConfig",
    "Linear",
    "Norm",
    "build_stack",
    "named_linear",
    "residual_add",
]
