"""Experiments 2 and 3: the stream is a sum; the logit lens and early exit.

Contract (every input is a trained `Decoder` and a fixed batch of validation sequences):
- `stream_sum` checks ``x_L = x_0 + Σ_k (A_k + M_k)`` with the writes taken from the engine's
  own forward: the largest absolute error of the sum taken in one go (writes first, then the
  embedding) and whether adding the writes in the forward's order gives the very same bits.
  Per layer it reports the mean over tokens of each norm (‖x_k‖, ‖A_k‖, ‖M_k‖, ‖F_k‖ with
  ``F_k = A_k + M_k``) and the mean cosine similarity of consecutive states, for the residual
  model and, as a contrast, the plain one (whose stream is no sum), with each state's
  rank-one share: of a sequence's states (a tokens-by-width matrix) the share of the squared
  norm its largest singular value holds, the mean over sequences. One means every token holds
  the same vector up to scale, the collapse Dong et al. proved for attention without skips.
- `logit_lens` reads every state out through the final norm and the unembedding and reports
  the validation loss by layer (``x_0`` first).
- `early_exit` stops a token once a block changed its state by less than ``threshold`` times
  its norm (``‖x_k - x_(k-1)‖ / ‖x_(k-1)‖``). A stopped token's state is carried forward
  unchanged and still read by later tokens' attention; its loss is read from that state. One
  point per threshold: the mean number of blocks run per token and the loss.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from engine.experiments.claims import Decided, Get
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.analysis import (
    LITTLE,
    AnalysisConfig,
    analysed,
)
from engine.experiments.residual_stream.common import (
    Vector,
    mean_loss,
    readout,
    row_norms,
    token_losses,
    walk,
    writes,
)
from engine.experiments.residual_stream.corpus import TRACE
from engine.experiments.residual_stream.training import Trainability
from engine.models import Decoder


@dataclass(frozen=True)
class StreamSum:
    depth: int
    tokens: int
    max_error: float
    max_stream: float
    relative_error: float
    exact_in_order: bool
    stream_norm: Vector
    attention_write_norm: Vector
    mlp_write_norm: Vector
    write_norm: Vector
    write_over_stream: Vector
    cosine: Vector
    plain_stream_norm: Vector
    plain_cosine: Vector
    rank_one_share: Vector
    plain_rank_one_share: Vector


def rank_one_share(states: np.ndarray) -> float:
    """Mean over sequences of σ₁² / Σσ² of the sequence's [tokens, width] states."""
    singular = np.linalg.svd(states, compute_uv=False)
    return float(np.mean(singular[:, 0] ** 2 / np.sum(singular ** 2, axis=-1)))


def mean_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over tokens of the cosine similarity of two states."""
    return float(np.mean(np.sum(a * b, axis=-1) / (row_norms(a) * row_norms(b))))


def stream_sum(residual: Decoder, plain: Decoder, tokens: np.ndarray) -> StreamSum:
    states = walk(residual, tokens)
    attention, mlp = writes(residual, tokens)
    total = sum(a + m for a, m in zip(attention, mlp, strict=True))
    error = float(np.max(np.abs(states[0] + total - states[-1])))
    in_order = states[0]
    for a, m in zip(attention, mlp, strict=True):
        in_order = in_order + a + m
    block_writes = [a + m for a, m in zip(attention, mlp, strict=True)]
    norms = [float(np.mean(row_norms(x))) for x in states]
    write_norms = [float(np.mean(row_norms(w))) for w in block_writes]
    plain_states = walk(plain, tokens)
    largest = float(np.max(np.abs(states[-1])))
    return StreamSum(
        depth=len(attention), tokens=int(tokens.size), max_error=error, max_stream=largest,
        relative_error=error / largest,
        exact_in_order=bool(np.array_equal(in_order, states[-1])),
        stream_norm=tuple(norms),
        attention_write_norm=tuple(float(np.mean(row_norms(a))) for a in attention),
        mlp_write_norm=tuple(float(np.mean(row_norms(m))) for m in mlp),
        write_norm=tuple(write_norms),
        write_over_stream=tuple(w / s for w, s in zip(write_norms, norms, strict=False)),
        cosine=_cosines(states),
        plain_stream_norm=tuple(float(np.mean(row_norms(x))) for x in plain_states),
        plain_cosine=_cosines(plain_states),
        rank_one_share=tuple(rank_one_share(x) for x in states),
        plain_rank_one_share=tuple(rank_one_share(x) for x in plain_states),
    )


def _cosines(states: list[np.ndarray]) -> Vector:
    return tuple(mean_cosine(a, b) for a, b in itertools.pairwise(states))


@dataclass(frozen=True)
class LogitLens:
    residual: Vector
    plain: Vector
    best_layer: int
    final_minus_best: float


def logit_lens(residual: Decoder, plain: Decoder, tokens: np.ndarray,
               targets: np.ndarray) -> LogitLens:
    losses = [tuple(mean_loss(model, x, targets) for x in walk(model, tokens))
              for model in (residual, plain)]
    best = int(np.argmin(losses[0]))
    return LogitLens(losses[0], losses[1], best, losses[0][-1] - losses[0][best])


@dataclass(frozen=True)
class ExitPoint:
    threshold: float
    mean_blocks: float
    loss: float
    stopped_early: float


@dataclass(frozen=True)
class EarlyExit:
    depth: int
    full_loss: float
    points: tuple[ExitPoint, ...]

    @property
    def thresholds(self) -> tuple[float, ...]:
        return tuple(point.threshold for point in self.points)


# --8<-- [start:early-exit]
def exit_point(model: Decoder, tokens: np.ndarray, targets: np.ndarray,
               threshold: float) -> ExitPoint:
    """One threshold: run the blocks, stopping each token as the module docstring says."""
    running = np.ones(tokens.shape, dtype=bool)
    blocks_run = np.zeros(tokens.shape)

    def after_block(k: int, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        state = np.where(running[..., np.newaxis], after, before)
        blocks_run[running] += 1
        change = row_norms(after - before) / row_norms(before)
        running[change < threshold] = False
        return state

    final = walk(model, tokens, after_block=after_block)[-1]
    loss = float(np.mean(token_losses(readout(model, final), targets)))
    depth = len(model.blocks)
    return ExitPoint(threshold, float(np.mean(blocks_run)), loss,
                     float(np.mean(blocks_run < depth)))
# --8<-- [end:early-exit]


def early_exit(model: Decoder, tokens: np.ndarray, targets: np.ndarray,
               thresholds: tuple[float, ...]) -> EarlyExit:
    full = mean_loss(model, walk(model, tokens)[-1], targets)
    return EarlyExit(len(model.blocks), full,
                     tuple(exit_point(model, tokens, targets, t) for t in sorted(thresholds)))


def stream_is_sum(get: Get) -> str:
    return "supports" if get("STREAM.exact-in-order") else "contradicts"


def blocks_nudge(get: Get) -> str:
    nudges = [share < 0.5 for share in get("STREAM.write-over-stream")]
    return "supports" if all(nudges) else "contradicts" if not any(nudges) else "qualifies"


def lens_improves(get: Get) -> str:
    losses = get("LENS.residual")
    if all(later < earlier for earlier, later in itertools.pairwise(losses)):
        return "supports"
    return "qualifies" if losses[-1] < losses[0] else "contradicts"


def early_exit_saves(get: Get) -> Decided:
    depth, full = get("EARLY-EXIT-CONFIG.depth"), get("EARLY-EXIT-CONFIG.full-loss")
    points = [(get(f"EARLY-EXIT[{t!r}].mean-blocks"), get(f"EARLY-EXIT[{t!r}].loss"),
               f"EARLY-EXIT[{t!r}]") for t in get("EARLY-EXIT-CONFIG.thresholds")]
    cheap = [point for point in points if point[1] < full * (1 + LITTLE)]
    # The cheapest exit that kept the loss, else the one that lost the least.
    blocks, _, record = min(cheap) if cheap else min(points, key=lambda point: point[1])
    because = ("EARLY-EXIT-CONFIG.depth", "EARLY-EXIT-CONFIG.full-loss",
               f"{record}.mean-blocks", f"{record}.loss")
    if cheap and blocks <= 0.9 * depth:
        return Decided("supports", because)
    return Decided("qualifies" if cheap and blocks < depth else "contradicts", because)


def _stream(seed: int, config: AnalysisConfig, training: Trainability) -> StreamSum:
    chosen = analysed(training, config)
    return stream_sum(chosen.residual.model, chosen.plain.model, chosen.tokens)


def _lens(seed: int, config: AnalysisConfig, training: Trainability) -> LogitLens:
    chosen = analysed(training, config)
    return logit_lens(chosen.residual.model, chosen.plain.model, chosen.tokens, chosen.targets)


def _early_exit(seed: int, config: AnalysisConfig, training: Trainability) -> EarlyExit:
    chosen = analysed(training, config)
    return early_exit(chosen.residual.model, chosen.tokens, chosen.targets, config.thresholds)


register(Experiment(TRACE, "stream", AnalysisConfig, _stream, needs=("training",),
                    rules={"stream-is-sum": stream_is_sum, "blocks-nudge": blocks_nudge}))
register(Experiment(TRACE, "lens", AnalysisConfig, _lens, needs=("training",),
                    rules={"lens-improves": lens_improves}))
register(Experiment(TRACE, "early_exit", AnalysisConfig, _early_exit, needs=("training",),
                    rules={"early-exit-saves": early_exit_saves}))
