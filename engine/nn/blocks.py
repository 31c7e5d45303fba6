"""Stacks of MLP blocks for the gradients lab: plain, residual, scaled, pre-norm, post-norm.

Contract (row-vector convention, the stream ``h`` has shape ``[..., d]``):
- Branch: ``F(h) = act(h @ W1) @ W2`` with ``W1 [d, hidden]``, ``W2 [hidden, d]``, no
  biases; ``act`` is relu, gelu (tanh form), tanh or identity. A branch may carry a norm
  applied to its input, which is what makes a pre-norm block.
- Block variants: ``plain`` ``h ← F(h)``; ``residual`` ``h ← h + F(h)``; ``scaled``
  ``h ← h + α F(h)`` with a learned scalar ``α``; ``prenorm`` ``h ← h + F(norm(h))``;
  ``postnorm`` ``h ← norm(h + F(h))``. Every merge is `residual_add`, which refuses to
  broadcast. ``norm`` is `rms_norm` or `layer_norm` with a learned weight (and bias).
- `build_stack` (settings in `BlockStackConfig`) draws every matrix from its own generator,
  ``numpy.random.default_rng((seed, block, slot))``, so one seed fixes the whole stack and
  a block's ``W1`` does not depend on the variant or on how ``W2`` is initialized.
- Parameter names: ``block{i}.w1``, ``block{i}.w2``, ``block{i}.alpha``,
  ``block{i}.norm.weight``, ``block{i}.norm.bias``, with ``i`` counted from 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import init as initializers
from engine.errors import ConfigError, ShapeError, check_int, is_real
from engine.nn.linear import Linear, named_linear
from engine.nn.residual import residual_add
from engine.ops import gelu, layer_norm, mul, relu, rms_norm, tanh
from engine.tensor import TensorValue

ACTIVATIONS: dict[str, Callable[[TensorValue], TensorValue]] = {
    "relu": relu, "gelu": gelu, "tanh": tanh, "identity": lambda h: h,
}
VARIANTS = ("plain", "residual", "scaled", "prenorm", "postnorm")
INITS = initializers.OUTPUT_STARTS
NORMS = ("rms", "layer")


class Norm:
    """`rms_norm` or `layer_norm` over the last axis with a learned weight (and bias)."""

    def __init__(self, kind: str, width: int, name: str, precision: str = "float64") -> None:
        _choose("Norm", "kind", kind, NORMS)
        self.kind = kind
        self.weight = TensorValue.parameter(np.ones(width, precision), name=f"{name}.weight")
        self.bias = (TensorValue.parameter(np.zeros(width, precision), name=f"{name}.bias")
                     if kind == "layer" else None)

    def __call__(self, h: TensorValue) -> TensorValue:
        if self.bias is None:
            return rms_norm(h, self.weight)
        return layer_norm(h, self.weight, self.bias)

    def parameters(self) -> list[TensorValue]:
        return [self.weight] if self.bias is None else [self.weight, self.bias]


class MLP:
    """The branch ``F(h) = act(norm(h) @ W1) @ W2`` (``norm`` only if one is given)."""

    def __init__(self, w1: Linear, w2: Linear, activation: str, norm: Norm | None = None) -> None:
        _choose("MLP", "activation", activation, tuple(ACTIVATIONS))
        self.w1, self.w2, self.activation, self.norm = w1, w2, activation, norm

    def __call__(self, h: TensorValue) -> TensorValue:
        x = h if self.norm is None else self.norm(h)
        return self.w2(ACTIVATIONS[self.activation](self.w1(x)))

    def parameters(self) -> list[TensorValue]:
        norm = [] if self.norm is None else self.norm.parameters()
        return [*norm, self.w1.weight, self.w2.weight]


class Block:
    """One update of the stream; ``variant`` says how the branch output is merged."""

    def __init__(self, variant: str, mlp: MLP, alpha: TensorValue | None = None,
                 norm: Norm | None = None) -> None:
        _choose("Block", "variant", variant, VARIANTS)
        if (variant == "scaled") != (alpha is not None):
            raise ConfigError("Block: exactly the scaled variant takes an alpha parameter")
        if (variant == "postnorm") != (norm is not None):
            raise ConfigError("Block: exactly the postnorm variant takes its own norm")
        if (variant == "prenorm") != (mlp.norm is not None):
            raise ConfigError("Block: exactly the prenorm variant normalizes the branch input")
        self.variant, self.mlp, self.alpha, self.norm = variant, mlp, alpha, norm

    def __call__(self, h: TensorValue) -> TensorValue:
        branch = self.mlp(h)
        if self.variant == "plain":
            return branch
        if self.alpha is not None:
            branch = mul(self.alpha, branch)
        merged = residual_add(h, branch)
        return merged if self.norm is None else self.norm(merged)

    def parameters(self) -> list[TensorValue]:
        own = [self.alpha] if self.alpha is not None else []
        return [*self.mlp.parameters(), *own, *(self.norm.parameters() if self.norm else [])]


class BlockStack:
    """Blocks applied in order to a stream of width ``config.width``."""

    def __init__(self, blocks: list[Block], config: BlockStackConfig) -> None:
        self.blocks, self.config, self.width = blocks, config, config.width

    def __call__(self, h: Any) -> TensorValue:
        return self.stream(h)[-1]

    def stream(self, h: Any) -> list[TensorValue]:
        """The stream before the first block and after each one: ``[h0, h1, ..., hL]``."""
        state = h if isinstance(h, TensorValue) else TensorValue.constant(h)
        if state.value.ndim < 1 or state.shape[-1] != self.width:
            raise ShapeError("BlockStack", state.shape, None,
                             f"the stream's last axis must be the stack width {self.width}")
        states = [state]
        for block in self.blocks:
            states.append(block(states[-1]))
        return states

    def parameters(self) -> list[TensorValue]:
        return [p for block in self.blocks for p in block.parameters()]

    def named_parameters(self) -> dict[str, TensorValue]:
        return {str(p.name): p for p in self.parameters()}


@dataclass(frozen=True)
class BlockStackConfig:
    """Everything `build_stack` needs; checked on construction (`ConfigError`)."""

    depth: int
    width: int
    hidden: int
    variant: str
    seed: int
    activation: str = "relu"
    init: str = "default"
    norm: str = "rms"
    alpha_init: float = 0.0

    def __post_init__(self) -> None:
        for label in ("depth", "width", "hidden"):
            check_int("build_stack", label, getattr(self, label), 1)
        check_int("build_stack", "seed", self.seed)
        _choose("build_stack", "variant", self.variant, VARIANTS)
        _choose("build_stack", "activation", self.activation, tuple(ACTIVATIONS))
        _choose("build_stack", "init", self.init, INITS)
        _choose("build_stack", "norm", self.norm, NORMS)
        if not is_real(self.alpha_init):
            raise ConfigError(f"build_stack: alpha_init must be a number, got {self.alpha_init!r}")


def build_stack(
    depth: int,
    width: int,
    hidden: int,
    variant: str = "residual",
    *,
    seed: int,
    activation: str = "relu",
    init: str = "default",
    norm: str = "rms",
    alpha_init: float = 0.0,
) -> BlockStack:
    """``depth`` blocks of one ``variant`` on a stream of size ``width``, seeded by ``seed``.

    ``W1`` is He-normal for relu and gelu, Xavier-normal for tanh and identity. ``W2``, the
    projection whose output joins the stream, follows ``init``: ``default``
    (Xavier-normal), ``scaled`` (shrunk by ``1/sqrt(2·depth)``, see
    `engine.init.scaled_output`) or ``zero`` (every branch starts as the zero function).
    ``norm`` (``rms`` or ``layer``) is used by the prenorm and postnorm variants only.
    The scaled variant's ``α`` starts at ``alpha_init``; the default 0 makes every block
    the identity at initialization, as in ReZero (Bachlechner et al., 2020).
    """
    config = BlockStackConfig(depth, width, hidden, variant, seed, activation, init, norm,
                              alpha_init)
    return BlockStack([_build_block(config, index) for index in range(depth)], config)


def _build_block(config: BlockStackConfig, index: int) -> Block:
    name, width, hidden = f"block{index}", config.width, config.hidden
    # One generator per matrix: W1 must not depend on how (or whether) W2 draws.
    first = np.random.default_rng((int(config.seed), index, 1))
    second = np.random.default_rng((int(config.seed), index, 2))
    draw_w1 = initializers.he_normal if config.activation in ("relu", "gelu") else (
        initializers.xavier_normal
    )
    w2 = initializers.output_projection(config.init, second, hidden, width, config.depth)
    variant, norm = config.variant, config.norm
    mlp = MLP(
        named_linear(f"{name}.w1", draw_w1(first, width, hidden)),
        named_linear(f"{name}.w2", w2),
        config.activation,
        Norm(norm, width, f"{name}.norm") if variant == "prenorm" else None,
    )
    alpha = (
        TensorValue.parameter(float(config.alpha_init), name=f"{name}.alpha")
        if variant == "scaled" else None
    )
    post = Norm(norm, width, f"{name}.norm") if variant == "postnorm" else None
    return Block(variant, mlp, alpha, post)


def _choose(owner: str, label: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{owner}: {label} must be one of {', '.join(allowed)}; got {value!r}")
