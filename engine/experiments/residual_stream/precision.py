"""Experiment 6: the stream's magnitude against half-precision formats, and adds done in them.

Contract: two formats, each a rounding function from float64 values:
- ``fp16``: numpy's IEEE binary16 (eleven significant bits, largest finite 65504, smallest
  normal 2^-14), round half to even.
- ``bf16``: emulated. numpy has no bfloat16, so a value is rounded to float32 and then its
  float32 bit pattern is rounded to the upper sixteen bits (round half to even on the lower
  sixteen): eight significant bits (seven stored), float32's exponent range. NaN and
  infinity pass through; a value that rounds past the largest finite becomes infinity.

For a trained residual model, per stream state ``x_k``: the largest magnitude and the root
mean square. Per block ``k``: its update ``F_k = x_k - x_(k-1)`` (float64) and the fraction of
it lost when the add is done in the format, ``‖(r(r(x) + r(F)) - r(x)) - F‖ / ‖F‖`` with ``r``
the rounding (both operands stored in the format, the sum rounded once). Finally the whole
forward is run with the stream rounded after every residual add, and the validation loss is
compared with float64. The final RMSNorm divides the stream by its root mean square, so the
read-out does not depend on the stream's scale: ``headroom`` is how many times the final
stream could grow before its largest value overflows the format.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.experiments.claims import Get
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.analysis import (
    AnalysisConfig,
    analysed,
)
from engine.experiments.residual_stream.common import Vector, mean_loss, walk
from engine.experiments.residual_stream.corpus import TRACE
from engine.experiments.residual_stream.training import Trainability
from engine.models import Decoder
from engine.tensor import TensorValue


def round_fp16(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)


def round_bf16(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        single = np.ascontiguousarray(np.asarray(x, dtype=np.float64).astype(np.float32))
    bits = single.view(np.uint32).astype(np.uint64)
    finite = np.isfinite(single)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = np.where(finite, rounded, bits).astype(np.uint32).view(np.float32)
    return out.astype(np.float64)


#: name → (rounding, largest finite, unit roundoff, smallest normal)
FORMATS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float, float, float]] = {
    "fp": (round_fp16, 65504.0, 2.0**-11, 2.0**-14),
    "bf": (round_bf16, float((2 - 2.0**-7) * 2.0**127), 2.0**-8, 2.0**-126),
}


@dataclass(frozen=True)
class FormatResult:
    format: str
    largest: float
    unit_roundoff: float
    smallest_normal: float
    update_lost: Vector
    stream_loss: float
    final_error: float
    headroom: float
    overflowed: bool


@dataclass(frozen=True)
class Precision:
    depth: int
    float_loss: float
    stream_max: Vector
    stream_rms: Vector
    update_rms: Vector
    normalized_rms: float
    formats: tuple[FormatResult, ...]


# --8<-- [start:lost-fraction]
def lost_fraction(x: np.ndarray, update: np.ndarray,
                  rounding: Callable[[np.ndarray], np.ndarray]) -> float:
    base = rounding(x)
    applied = rounding(base + rounding(update)) - base
    return float(np.linalg.norm(applied - update) / np.linalg.norm(update))
# --8<-- [end:lost-fraction]


def format_result(model: Decoder, name: str, states: list[np.ndarray], tokens: np.ndarray,
                  targets: np.ndarray) -> FormatResult:
    rounding, largest, roundoff, smallest = FORMATS[name]
    lost = tuple(lost_fraction(a, b - a, rounding) for a, b in itertools.pairwise(states))
    rounded = walk(model, tokens, merge=lambda x, w: rounding(rounding(x) + rounding(w)))
    final = rounded[-1]
    finite = bool(np.all(np.isfinite(final)))
    error = float(np.linalg.norm(final - states[-1]) / np.linalg.norm(states[-1])) if finite \
        else float(np.finfo(np.float64).max)
    loss = mean_loss(model, final, targets) if finite else float(np.finfo(np.float64).max)
    return FormatResult(f"{name}-sixteen", largest, roundoff, smallest, lost, loss, error,
                        largest / float(np.max(np.abs(states[-1]))), not finite)


def precision(model: Decoder, tokens: np.ndarray, targets: np.ndarray) -> Precision:
    states = walk(model, tokens)
    final = model.final_norm(TensorValue.constant(states[-1])).value
    return Precision(
        depth=len(model.blocks),
        float_loss=mean_loss(model, states[-1], targets),
        stream_max=tuple(float(np.max(np.abs(x))) for x in states),
        stream_rms=tuple(_rms(x) for x in states),
        update_rms=tuple(_rms(b - a) for a, b in itertools.pairwise(states)),
        normalized_rms=_rms(final),
        formats=tuple(format_result(model, name, states, tokens, targets) for name in FORMATS),
    )


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x * x)))


def precision_loses_resolution(get: Get) -> str:
    grows = [lost[-1] > lost[0] for lost in (get(f"FORMAT[{f}].update-lost")
                                             for f in ("fp-sixteen", "bf-sixteen"))]
    return "supports" if all(grows) else "contradicts" if not any(grows) else "qualifies"


def _precision(seed: int, config: AnalysisConfig, training: Trainability) -> Precision:
    chosen = analysed(training, config)
    return precision(chosen.residual.model, chosen.tokens, chosen.targets)


register(Experiment(TRACE, "precision", AnalysisConfig, _precision, needs=("training",),
                    rules={"precision-loses-resolution": precision_loses_resolution}))
