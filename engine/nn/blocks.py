"""The one block of both labs, and the gradients lab's stacks of MLP-only blocks.

Contract (row-vector convention, the stream ``h`` has shape ``[..., d]``):
- `Block`: nanoGPT's block. An optional attention sublayer (the decoder's), then the MLP
  ``F(h) = act(h @ W1) @ W2`` (``W1 [d, hidden]``, ``W2 [hidden, d]``, no biases; ``act``
  relu, gelu (tanh form), tanh or identity). Each sublayer's write joins the stream through
  ``merge(stream, write)``; its norm (`rms_norm` or `layer_norm` with a learned weight, and
  bias) sits on its input (``norm_at="pre"``), on the stream after the merge (``"post"``) or
  nowhere. `Block.forward` returns a `BlockPass`: the stream after it and what was on the way.
- The gradients lab's variants, as `build_stack` makes them (settings in `BlockStackConfig`):
  ``plain`` ``h ← F(h)`` (merge `write_only`); ``residual`` ``h ← h + F(h)`` (`residual_add`,
  which refuses to broadcast); ``scaled`` ``h ← h + α F(h)`` with a learned scalar ``α``
  (`ScaledAdd`); ``prenorm`` ``h ← h + F(norm(h))``; ``postnorm`` ``h ← norm(h + F(h))``.
  Every matrix is drawn from its own generator, ``numpy.random.default_rng((seed, block,
  slot))``, so one seed fixes the whole stack and a block's ``W1`` does not depend on the
  variant or on how ``W2`` is initialized.
- Parameter names: ``block{i}.w1``, ``block{i}.w2``, ``block{i}.alpha``,
  ``block{i}.norm.weight``, ``block{i}.norm.bias``, with ``i`` counted from 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from engine import init as initializers
from engine.errors import ConfigError, ShapeError, check_int
from engine.nn.linear import Linear, named_linear
from engine.nn.residual import Merge, ScaledAdd, residual_add, write_only
from engine.ops import gelu, layer_norm, relu, rms_norm, tanh
from engine.tensor import TensorValue
from tracefile.values import is_real

ACTIVATIONS: dict[str, Callable[[TensorValue], TensorValue]] = {
    "relu": relu, "gelu": gelu, "tanh": tanh, "identity": lambda h: h,
}
VARIANTS = ("plain", "residual", "scaled", "prenorm", "postnorm")
INITS = initializers.OUTPUT_STARTS
NORMS = ("rms", "layer")
NORM_PLACES = (None, "pre", "post")


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
    """The branch ``F(h) = act(h @ W1) @ W2``."""

    def __init__(self, w1: Linear, w2: Linear, activation: str) -> None:
        _choose("MLP", "activation", activation, tuple(ACTIVATIONS))
        self.w1, self.w2, self.activation = w1, w2, activation

    def __call__(self, h: TensorValue) -> TensorValue:
        return self.w2(ACTIVATIONS[self.activation](self.w1(h)))

    def parameters(self) -> list[TensorValue]:
        return [self.w1.weight, self.w2.weight]


class Attention(Protocol):
    """A sublayer that also returns its attention pattern (the decoder's
    ``engine.models.attention.CausalSelfAttention``)."""

    def __call__(self, h: TensorValue) -> tuple[TensorValue, TensorValue]: ...

    def parameters(self) -> list[TensorValue]: ...


@dataclass(frozen=True)
class BlockPass:
    """One block's forward (tape values): the stream after it (``output``), the stream
    between its attention and MLP (``middle``; its input when it has no attention), both
    writes and the attention pattern (None without attention)."""

    output: TensorValue
    middle: TensorValue
    attention_write: TensorValue | None
    mlp_write: TensorValue
    attention_pattern: TensorValue | None


class Block:
    """One block of either lab, nanoGPT's ``Block``: attention (the decoder's; the gradients
    lab's stacks have none), then the MLP, each write joined to the stream by ``merge``
    (`residual_add`; `write_only` in a plain block; `ScaledAdd`). ``norm_at`` puts each
    sublayer's norm on its input (``pre``), on the stream after the merge (``post``) or
    nowhere (None)."""

    def __init__(self, mlp: MLP, merge: Merge = residual_add, norm_at: str | None = None,
                 mlp_norm: Norm | None = None, attn: Attention | None = None,
                 attn_norm: Norm | None = None) -> None:
        _choose("Block", "norm_at", norm_at, NORM_PLACES)
        if (norm_at is None) != (mlp_norm is None) or (
                (norm_at is not None and attn is not None) != (attn_norm is not None)):
            raise ConfigError("Block: every sublayer takes a norm exactly when norm_at is "
                              f"pre or post; got norm_at={norm_at!r}")
        self.mlp, self.merge, self.norm_at = mlp, merge, norm_at
        self.mlp_norm, self.attn, self.attn_norm = mlp_norm, attn, attn_norm

    # --8<-- [start:block-forward]
    def forward(self, x: TensorValue, merge: Merge | None = None) -> BlockPass:
        """The block on the stream ``x``; ``merge`` stands in for the block's own (the
        analyses' way to round or bend the add)."""
        merge = merge or self.merge
        attention_write = pattern = None
        if self.attn is not None:
            attention_write, pattern = self.attn(self._before(self.attn_norm, x))
            x = self._after(self.attn_norm, merge(x, attention_write))
        middle = x
        mlp_write = self.mlp(self._before(self.mlp_norm, x))
        output = self._after(self.mlp_norm, merge(x, mlp_write))
        return BlockPass(output, middle, attention_write, mlp_write, pattern)

    def _before(self, norm: Norm | None, x: TensorValue) -> TensorValue:
        return norm(x) if norm is not None and self.norm_at == "pre" else x

    def _after(self, norm: Norm | None, x: TensorValue) -> TensorValue:
        return norm(x) if norm is not None and self.norm_at == "post" else x
    # --8<-- [end:block-forward]

    def __call__(self, x: TensorValue) -> TensorValue:
        return self.forward(x).output

    def parameters(self) -> list[TensorValue]:
        """The attention's norm and weights, the MLP's norm and weights, then the merge's."""
        def norm(n: Norm | None) -> list[TensorValue]:
            return [] if n is None else n.parameters()
        attention = [] if self.attn is None else self.attn.parameters()
        own = [self.merge.alpha] if isinstance(self.merge, ScaledAdd) else []
        return [*norm(self.attn_norm), *attention, *norm(self.mlp_norm),
                *self.mlp.parameters(), *own]


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
    mlp = MLP(named_linear(f"{name}.w1", draw_w1(first, width, hidden)),
              named_linear(f"{name}.w2", w2), config.activation)
    variant = config.variant
    if variant in ("prenorm", "postnorm"):
        return Block(mlp, residual_add, variant.removesuffix("norm"),
                     Norm(config.norm, width, f"{name}.norm"))
    if variant == "scaled":
        alpha = TensorValue.parameter(float(config.alpha_init), name=f"{name}.alpha")
        return Block(mlp, ScaledAdd(alpha))
    return Block(mlp, write_only if variant == "plain" else residual_add)


def _choose(owner: str, label: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{owner}: {label} must be one of {', '.join(map(str, allowed))}; "
                          f"got {value!r}")
