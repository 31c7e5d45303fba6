"""Experiment 5: weight quantization of trained decoders, int8 and int4, dequantized.

Contract: every matrix inside the blocks (attention ``wq, wk, wv, wo``, MLP ``w1, w2``) is
quantized symmetrically per output channel (per column of the ``[in, out]`` matrix): with
``b`` bits the scale is ``s = max|W[:, j]| / (2^(b-1) - 1)`` and the stored integer is
``round(W / s)`` (round half to even), so int8 keeps integers in ``-127 .. 127`` and int4 in
``-7 .. 7``; inference multiplies back (``q · s``, in float64). Embeddings, norms and the
read-out stay float64. For each model and width, `quantize_model` reports the validation
loss, the logit error (root mean square of the logit difference over the root mean square
of the float64 logits) and the relative stream error after every block,
``‖x_k' - x_k‖ / ‖x_k‖`` over all tokens (``k = 0`` is the embedding, untouched, so zero).

``growth`` is the error after the last block over the error after the first. The word
``bounded`` says that the relative error stays below one at every layer and its growth is at
most the depth (no faster than independent per-block errors adding up); else ``compounding``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.experiments.claims import Get
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.analysis import (
    AnalysisConfig,
    analysed,
)
from engine.experiments.residual_stream.common import Vector, readout, token_losses, walk
from engine.experiments.residual_stream.corpus import TRACE
from engine.experiments.residual_stream.training import Trainability
from engine.models import Decoder

#: The block matrices quantized (name suffixes of `Decoder.snapshot`).
QUANTIZED = (".attn.wq", ".attn.wk", ".attn.wv", ".attn.wo", ".mlp.w1", ".mlp.w2")


# --8<-- [start:quantize]
def quantize(weight: np.ndarray, bits: int) -> np.ndarray:
    """Symmetric per-output-channel quantization of ``weight`` ``[in, out]``, dequantized."""
    levels = 2 ** (bits - 1) - 1
    scale = np.max(np.abs(weight), axis=0, keepdims=True) / levels
    scale = np.where(scale == 0.0, 1.0, scale)
    return np.clip(np.round(weight / scale), -levels, levels) * scale
# --8<-- [end:quantize]


def quantized_copy(model: Decoder, bits: int) -> Decoder:
    """A new decoder with the same configuration and ``bits``-bit block matrices."""
    values = {name: quantize(value, bits) if name.endswith(QUANTIZED) else value
              for name, value in model.snapshot().items()}
    copy = Decoder(model.config)
    copy.load(values)
    return copy


@dataclass(frozen=True)
class Quantized:
    case: str
    model: str
    bits: int
    loss: float
    float_loss: float
    logit_error: float
    stream_error: Vector
    growth: float
    behaviour: str


def quantize_model(model: Decoder, label: str, bits: int, tokens: np.ndarray,
                   targets: np.ndarray) -> Quantized:
    exact = walk(model, tokens)
    copy = quantized_copy(model, bits)
    approximate = walk(copy, tokens)
    logits, logits_q = readout(model, exact[-1]), readout(copy, approximate[-1])
    errors = tuple(float(np.linalg.norm(a - e) / np.linalg.norm(e))
                   for a, e in zip(approximate, exact, strict=True))
    depth = len(model.blocks)
    growth = errors[-1] / errors[1]
    bounded = max(errors) < 1.0 and growth <= depth
    return Quantized(
        case=f"{label}-{_bits_word(bits)}-bit", model=label, bits=bits,
        loss=float(np.mean(token_losses(logits_q, targets))),
        float_loss=float(np.mean(token_losses(logits, targets))),
        logit_error=float(np.sqrt(np.mean((logits_q - logits) ** 2) / np.mean(logits ** 2))),
        stream_error=errors, growth=growth,
        behaviour="bounded" if bounded else "compounding")


def _bits_word(bits: int) -> str:
    return {8: "eight", 4: "four"}.get(bits, "other")


def quantization(models: dict[str, Decoder], bits: tuple[int, ...], tokens: np.ndarray,
                 targets: np.ndarray) -> tuple[Quantized, ...]:
    return tuple(quantize_model(model, label, b, tokens, targets)
                 for label, model in models.items() for b in bits)


def quantization_bounded(get: Get) -> str:
    cases = ("eight-bit", "four-bit")
    if any(get(f"QUANTIZATION[residual-{c}].behaviour") != "bounded" for c in cases):
        return "contradicts"
    plain_trained = get("TRAINING[plain-prenorm-eight].final-validation") < get(
        "CORPUS.format-only")
    plain_compounds = any(get(f"QUANTIZATION[plain-{c}].behaviour") != "bounded" for c in cases)
    return "supports" if plain_trained and plain_compounds else "qualifies"


def _quantization(seed: int, config: AnalysisConfig, training: Trainability
                  ) -> tuple[Quantized, ...]:
    chosen = analysed(training, config)
    return quantization({"residual": chosen.residual.model, "plain": chosen.plain.model},
                        config.bits, chosen.tokens, chosen.targets)


register(Experiment(TRACE, "quantization", AnalysisConfig, _quantization, needs=("training",),
                    rules={"quantization-bounded": quantization_bounded}))
