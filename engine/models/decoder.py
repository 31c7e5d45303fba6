"""A tiny decoder-only transformer, written to be read (nanoGPT in spirit, numpy underneath).

Contract (``tokens`` is an integer array ``[B, T]`` with ``T <= context``):

    x_0 = E[tokens] + P[0..T-1]                          token + position embeddings
    for each block k = 1..L, with sublayers A_k (attention) and M_k (MLP, GELU):
      residual, pre-norm:   x ← x + A_k(norm(x));        x ← x + M_k(norm(x))
      residual, post-norm:  x ← norm(x + A_k(x));        x ← norm(x + M_k(x))
      plain, pre-norm:      x ← A_k(norm(x));            x ← M_k(norm(x))
      plain, post-norm:     x ← norm(A_k(x));            x ← norm(M_k(x))
    logits = norm_f(x_L) @ U          (U = Eᵀ when tied, else the ``unembed`` matrix)

Each block is `engine.nn.Block` (`decoder_block`), every merge `engine.nn.residual_add`
(`write_only` in the plain variant; a block's forward takes another ``merge``, the analyses'
way to round or bend the add), every norm an RMSNorm with a learned weight. The
final norm is there for every variant (for post-norm the last block already normalized, so
it is redundant but harmless): the read-out `readout` is then one function of a stream state
for all variants, which the logit lens needs. For the residual pre-norm model the stream is
the sum of the embedding and every write, ``x_L = x_0 + Σ_k (A_k + M_k)``.

Parameters, each drawn from its own generator ``default_rng((seed, slot...))`` so one seed
fixes the model and one matrix does not depend on how another was drawn:
``embed.token`` ``[V, d]`` and ``embed.position`` ``[context, d]`` (``N(0, 1/2)`` each, so
``x_0`` has unit variance per coordinate), per block ``block{k}.attn.norm.weight``,
``block{k}.attn.wq|wk|wv|wo`` ``[d, d]``, ``block{k}.mlp.norm.weight``,
``block{k}.mlp.w1`` ``[d, hidden]``, ``block{k}.mlp.w2`` ``[hidden, d]``, then
``final_norm.weight`` and (untied) ``unembed`` ``[d, V]``. ``wq, wk, wv, unembed`` are
Xavier-normal, ``w1`` He-normal; ``wo`` and ``w2`` follow ``output_init``. Blocks are
counted from 0 in names; the forward's lists count states from ``x_0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import init
from engine.errors import ConfigError, ShapeError
from engine.models.attention import CausalSelfAttention
from engine.models.config import DecoderConfig
from engine.nn import MLP, Block, Linear, Norm, named_linear, residual_add, write_only
from engine.ops import add, cross_entropy, embedding, matmul, transpose
from engine.ops._common import integer_indices
from engine.tensor import TensorValue


@dataclass(frozen=True)
class DecoderPass:
    """One forward: the logits and everything on the way (all tape values).

    ``streams`` holds ``x_0 .. x_L`` (after the embedding and after each block) and
    ``middles`` the stream between each block's attention and MLP. ``attention_writes`` and
    ``mlp_writes`` hold each sublayer's output ``A_k``, ``M_k`` (what a residual block adds),
    ``attention_patterns`` each block's ``[B, H, T, T]`` weights.
    """

    logits: TensorValue
    streams: tuple[TensorValue, ...]
    middles: tuple[TensorValue, ...]
    attention_writes: tuple[TensorValue, ...]
    mlp_writes: tuple[TensorValue, ...]
    attention_patterns: tuple[TensorValue, ...]


def decoder_block(config: DecoderConfig, index: int) -> Block:
    """Block ``index`` of the decoder: attention then a GELU MLP, merged and normalized as
    the config says (`engine.nn.Block`)."""
    name, d, hidden = f"block{index}", config.width, config.hidden

    def rng(slot: int) -> np.random.Generator:
        return np.random.default_rng((config.seed, 1 + index, slot))

    def linear(weight: str, values: np.ndarray) -> Linear:
        return named_linear(f"{name}.{weight}", values.astype(config.precision))

    def output(slot: int, fan_in: int) -> np.ndarray:
        return init.output_projection(config.output_init, rng(slot), fan_in, d, config.depth)

    attention = CausalSelfAttention(
        *(linear(f"attn.{w}", init.xavier_normal(rng(slot), d, d))
          for slot, w in enumerate(("wq", "wk", "wv"))),
        linear("attn.wo", output(3, d)),
        config.heads,
    )
    mlp = MLP(linear("mlp.w1", init.he_normal(rng(4), d, hidden)),
              linear("mlp.w2", output(5, hidden)), "gelu")
    return Block(mlp, residual_add if config.variant == "residual" else write_only, config.norm,
                 Norm("rms", d, f"{name}.mlp.norm", config.precision), attention,
                 Norm("rms", d, f"{name}.attn.norm", config.precision))


class Decoder:
    """The whole model for one `DecoderConfig`: embeddings, blocks, final norm, read-out."""

    def __init__(self, config: DecoderConfig) -> None:
        self.config = config
        v, d, std = config.vocab_size, config.width, float(np.sqrt(0.5))

        def weight(values: np.ndarray, name: str) -> TensorValue:
            return TensorValue.parameter(values.astype(config.precision), name)

        self.token_embedding = weight(
            init.normal(np.random.default_rng((config.seed, 0, 0)), (v, d), std), "embed.token")
        self.position_embedding = weight(
            init.normal(np.random.default_rng((config.seed, 0, 1)), (config.context, d), std),
            "embed.position")
        self.blocks = [decoder_block(config, k) for k in range(config.depth)]
        self.final_norm = Norm("rms", d, "final_norm", config.precision)
        self.unembed = None if config.tied else weight(
            init.xavier_normal(np.random.default_rng((config.seed, 0, 2)), d, v), "unembed")

    def embed(self, tokens: Any) -> TensorValue:
        """``x_0``: token plus position embeddings of ``tokens`` ``[B, T]``."""
        ids = integer_indices("Decoder", tokens, self.config.vocab_size, "tokens")
        if ids.ndim != 2 or not 1 <= ids.shape[1] <= self.config.context:
            raise ShapeError("Decoder", ids.shape, None,
                             f"tokens must be [B, T] with 1 <= T <= {self.config.context}")
        positions = np.arange(ids.shape[1])
        return add(embedding(self.token_embedding, ids),
                   embedding(self.position_embedding, positions))

    def forward(self, tokens: Any) -> DecoderPass:
        """Run the model on ``tokens`` ``[B, T]``; see `DecoderPass`."""
        x = self.embed(tokens)
        streams, passes = [x], []
        for block in self.blocks:
            passes.append(block.forward(x))
            x = passes[-1].output
            streams.append(x)
        return DecoderPass(self.readout(x), tuple(streams),
                           tuple(p.middle for p in passes),
                           tuple(p.attention_write for p in passes),
                           tuple(p.mlp_write for p in passes),
                           tuple(p.attention_pattern for p in passes))

    def __call__(self, tokens: Any) -> TensorValue:
        return self.forward(tokens).logits

    def readout(self, stream: TensorValue) -> TensorValue:
        """Logits ``norm_f(x) @ U`` for any stream state ``x`` ``[..., d]`` (the logit lens)."""
        unembed = transpose(self.token_embedding) if self.unembed is None else self.unembed
        return matmul(self.final_norm(stream), unembed)

    def loss(self, inputs: Any, targets: Any) -> TensorValue:
        """Mean next-token cross-entropy (nats) of ``targets`` given ``inputs``."""
        return cross_entropy(self(inputs), targets)

    def parameters(self) -> list[TensorValue]:
        """Every parameter leaf, in a fixed order (embeddings, blocks, final norm, read-out)."""
        own = [self.token_embedding, self.position_embedding]
        tail = [*self.final_norm.parameters(), *([] if self.unembed is None else [self.unembed])]
        return [*own, *(p for block in self.blocks for p in block.parameters()), *tail]

    def named_parameters(self) -> dict[str, TensorValue]:
        return {str(p.name): p for p in self.parameters()}

    def parameter_count(self) -> int:
        return sum(p.value.size for p in self.parameters())

    def load(self, values: dict[str, np.ndarray]) -> None:
        """Set every parameter from ``values`` (name → array), e.g. a trained snapshot."""
        named = self.named_parameters()
        if set(values) != set(named):
            raise ConfigError("Decoder.load: the names must be exactly the model's parameters")
        for name, parameter in named.items():
            parameter.set_value(values[name])

    def snapshot(self) -> dict[str, np.ndarray]:
        """Every parameter's current value (read-only arrays), by name."""
        return {name: p.value for name, p in self.named_parameters().items()}
