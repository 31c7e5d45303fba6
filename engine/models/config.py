"""`DecoderConfig`: every setting of the lab's decoder, checked on construction.

Fields (names as in the lab):
- ``vocab_size`` ``V``, ``context`` (the longest sequence ``T`` the position table covers),
  ``width`` ``d`` (the stream), ``depth`` ``L`` (blocks), ``heads`` (``d`` must divide by it),
  ``mlp_ratio`` (the MLP's hidden width is ``mlp_ratio · d``).
- ``variant``: ``residual`` (each sublayer adds to the stream, ``h ← h + F(h)``) or
  ``plain`` (no skip, ``h ← F(h)``).
- ``norm``: ``pre`` (RMSNorm inside the branch, on the sublayer's input) or ``post``
  (RMSNorm after the merge, on the stream itself).
- ``output_init``: how each branch's last matrix (attention ``wo``, MLP ``w2``) starts:
  ``default`` (Xavier-normal), ``scaled`` (Xavier shrunk by ``1/sqrt(2L)``, GPT-2 style) or
  ``zero`` (every branch starts as the zero function).
- ``tied``: read logits with the token embedding itself (``Eᵀ``) instead of a separate
  ``unembed`` matrix.
- ``seed``: fixes every initial weight.
- ``precision``: ``float64`` (the chapter's exact fixtures and the gradient checks) or
  ``float32`` (how language models train, and twice as fast here): every weight, and so
  the whole tape, is held in it. The initial weights are the float64 draws, rounded.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ConfigError, check_int
from engine.init import OUTPUT_STARTS

VARIANTS = ("residual", "plain")
NORMS = ("pre", "post")
OUTPUT_INITS = OUTPUT_STARTS  # engine.init.output_projection
PRECISIONS = ("float64", "float32")


@dataclass(frozen=True)
class DecoderConfig:
    """The decoder's architecture and seed (see the module docstring)."""

    vocab_size: int
    context: int
    width: int = 32
    depth: int = 2
    heads: int = 4
    mlp_ratio: int = 4
    variant: str = "residual"
    norm: str = "pre"
    output_init: str = "default"
    tied: bool = False
    seed: int = 0
    precision: str = "float64"

    def __post_init__(self) -> None:
        for label in ("vocab_size", "context", "width", "depth", "heads", "mlp_ratio"):
            check_int("DecoderConfig", label, getattr(self, label), 1)
        check_int("DecoderConfig", "seed", self.seed)
        if self.width % self.heads:
            raise ConfigError(f"DecoderConfig: width {self.width} must divide by heads "
                              f"{self.heads}")
        for label, allowed in (("variant", VARIANTS), ("norm", NORMS),
                               ("output_init", OUTPUT_INITS), ("precision", PRECISIONS)):
            if getattr(self, label) not in allowed:
                raise ConfigError(f"DecoderConfig: {label} must be one of {', '.join(allowed)}; "
                                  f"got {getattr(self, label)!r}")
        if not isinstance(self.tied, bool):
            raise ConfigError(f"DecoderConfig: tied must be a bool, got {self.tied!r}")

    @property
    def head_width(self) -> int:
        return self.width // self.heads

    @property
    def hidden(self) -> int:
        return self.mlp_ratio * self.width
