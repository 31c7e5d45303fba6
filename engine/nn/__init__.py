"""Layers built from `engine.ops`: a bias-free `Linear` and the exact-shape `residual_add`."""

from engine.nn.linear import Linear, named_linear
from engine.nn.residual import residual_add

__all__ = ["Linear", "named_linear", "residual_add"]
