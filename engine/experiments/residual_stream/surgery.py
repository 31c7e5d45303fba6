"""Experiment 4: lesions and pruning of trained decoders (no retraining, no healing).

Contract:
- `lesions` deletes one block at a time (the stream passes that block unchanged, as in
  Veit et al. 2016) and reports, for each model it is given (residual and plain), the
  validation loss for each deleted block next to the intact loss.
- `pruning` removes ``n`` blocks of the residual model for ``n = 0 .. L`` three ways:
  ``angular`` (Gromov et al. 2024: the ``n`` consecutive blocks ``l+1 .. l+n`` whose input
  ``x_l`` and output ``x_(l+n)`` are closest in angular distance ``arccos(cos) / π``, averaged
  over every token; the paper used the last token and healed the cut by fine-tuning, this
  lab does neither), ``each`` (the ``n`` blocks with the smallest angular distance between
  their own input and output, not necessarily consecutive) and ``last`` (the last ``n``).
- `reordering` swaps each pair of neighbouring blocks ``k, k+1`` of a model in turn (the same
  weights, run in the other order) and reports the validation loss of each swap next to the
  intact loss.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from engine.experiments.claims import Get
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.analysis import (
    LITTLE,
    AnalysisConfig,
    analysed,
)
from engine.experiments.residual_stream.common import Vector, mean_loss, row_norms, walk
from engine.experiments.residual_stream.corpus import TRACE
from engine.experiments.residual_stream.training import Trainability
from engine.models import Decoder


def skipped_loss(model: Decoder, tokens: np.ndarray, targets: np.ndarray,
                 skip: tuple[int, ...]) -> float:
    """Validation loss with the blocks in ``skip`` (counted from zero) deleted."""
    return mean_loss(model, walk(model, tokens, skip=skip)[-1], targets)


@dataclass(frozen=True)
class Lesion:
    """One model with each of its blocks deleted in turn (block ``k`` is element ``k``)."""

    model: str
    depth: int
    intact: float
    loss: Vector
    worst: float
    median_increase: float


def lesion(label: str, model: Decoder, tokens: np.ndarray, targets: np.ndarray) -> Lesion:
    losses = tuple(skipped_loss(model, tokens, targets, (k,)) for k in range(len(model.blocks)))
    intact = skipped_loss(model, tokens, targets, ())
    return Lesion(label, len(model.blocks), intact, losses, max(losses),
                  float(np.median(losses)) - intact)


def lesions(models: dict[str, Decoder], tokens: np.ndarray,
            targets: np.ndarray) -> tuple[Lesion, ...]:
    return tuple(lesion(label, model, tokens, targets) for label, model in models.items())


@dataclass(frozen=True)
class Reordering:
    """One model with each neighbouring pair of blocks swapped in turn (the pair ``k, k+1``
    is element ``k``)."""

    model: str
    depth: int
    intact: float
    loss: Vector
    worst_increase: float
    median_increase: float


def swapped(model: Decoder, k: int) -> Decoder:
    """``model`` with blocks ``k`` and ``k + 1`` run in each other's place (weights shared)."""
    other = copy.copy(model)
    other.blocks = [*model.blocks[:k], model.blocks[k + 1], model.blocks[k], *model.blocks[k + 2:]]
    return other


def reordering(label: str, model: Decoder, tokens: np.ndarray,
               targets: np.ndarray) -> Reordering:
    intact = skipped_loss(model, tokens, targets, ())
    losses = tuple(skipped_loss(swapped(model, k), tokens, targets, ())
                   for k in range(len(model.blocks) - 1))
    return Reordering(label, len(model.blocks), intact, losses, max(losses) - intact,
                      float(np.median(losses)) - intact)


def angular_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over tokens of ``arccos(cos(a, b)) / π`` (zero: same direction)."""
    cosine = np.sum(a * b, axis=-1) / (row_norms(a) * row_norms(b))
    return float(np.mean(np.arccos(np.clip(cosine, -1.0, 1.0)) / np.pi))


@dataclass(frozen=True)
class Pruning:
    depth: int
    block_distance: Vector
    angular_start: tuple[int, ...]
    angular: Vector
    each: Vector
    last: Vector
    angular_beats_last: int


# --8<-- [start:pruning]
def pruning(model: Decoder, tokens: np.ndarray, targets: np.ndarray) -> Pruning:
    states = walk(model, tokens)
    depth = len(model.blocks)
    single = [angular_distance(states[k], states[k + 1]) for k in range(depth)]
    by_rank = [int(k) for k in np.argsort(single, kind="stable")]
    starts, angular, each, last = [], [], [], []
    for n in range(depth + 1):
        distances = [angular_distance(states[s], states[s + n]) for s in range(depth - n + 1)]
        # Removing none has no start to choose (its distances are rounding error).
        start = int(np.argmin(distances)) if n else 0
        starts.append(start)
        angular.append(skipped_loss(model, tokens, targets, tuple(range(start, start + n))))
        each.append(skipped_loss(model, tokens, targets, tuple(sorted(by_rank[:n]))))
        last.append(skipped_loss(model, tokens, targets, tuple(range(depth - n, depth))))
    wins = sum(a < b for a, b in zip(angular[1:-1], last[1:-1], strict=True))
    return Pruning(depth, tuple(single), tuple(starts), tuple(angular), tuple(each),
                   tuple(last), wins)
# --8<-- [end:pruning]


def single_blocks_removable(get: Get) -> str:
    lesion = "LESION[residual-prenorm-eight]"
    intact, losses = get(f"{lesion}.intact"), get(f"{lesion}.loss")
    if all(loss < intact * (1 + LITTLE) for loss in losses):
        return "supports"
    return "qualifies" if get(f"{lesion}.median-increase") < intact * LITTLE else "contradicts"


def reordering_little_damage(get: Get) -> str:
    intact = get("REORDER.intact")
    if get("REORDER.worst-increase") < intact * LITTLE:
        return "supports"
    return "qualifies" if get("REORDER.median-increase") < intact * LITTLE else "contradicts"


def angular_pruning(get: Get) -> str:
    beats, counts = get("PRUNING.angular-beats-last"), get("PRUNING.depth") - 1
    return "supports" if beats == counts else "contradicts" if beats == 0 else "qualifies"


def _lesions(seed: int, config: AnalysisConfig, training: Trainability) -> tuple[Lesion, ...]:
    chosen = analysed(training, config)
    runs = (chosen.residual, chosen.plain, *chosen.shallow)
    return lesions({r.curve: r.model for r in runs}, chosen.tokens, chosen.targets)


def _pruning(seed: int, config: AnalysisConfig, training: Trainability) -> Pruning:
    chosen = analysed(training, config)
    return pruning(chosen.residual.model, chosen.tokens, chosen.targets)


def _reordering(seed: int, config: AnalysisConfig, training: Trainability) -> Reordering:
    chosen = analysed(training, config)
    return reordering(chosen.residual.curve, chosen.residual.model, chosen.tokens,
                      chosen.targets)


register(Experiment(TRACE, "lesions", AnalysisConfig, _lesions, needs=("training",),
                    rules={"single-blocks-removable": single_blocks_removable}))
register(Experiment(TRACE, "pruning", AnalysisConfig, _pruning, needs=("training",),
                    rules={"angular-pruning": angular_pruning}))
register(Experiment(TRACE, "reordering", AnalysisConfig, _reordering, needs=("training",),
                    rules={"reordering-little-damage": reordering_little_damage}))
