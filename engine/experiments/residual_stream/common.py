"""Helpers shared by the residual-stream experiments: plain values, and one forward walk that
the analyses bend (skip a block, freeze a token, round the stream).

Contract:
- Results leave the engine as plain Python values (tuples of floats or ints, words, bools);
  a curve holds at most `MAX_POINTS` points.
- `walk(model, tokens, ...)` runs a trained `Decoder` block by block, through the model's own
  embedding and block forward, and returns every stream state ``x_0 .. x_L`` as arrays. With
  no options these are `Decoder.forward`'s streams bit for bit; ``merge`` (on arrays)
  replaces the block's merge, ``skip`` deletes blocks (the stream passes unchanged) and
  ``after_block`` may replace the state a block produced (early exit freezes tokens so).
- `token_losses` is the per-token cross-entropy (nats) of logits against targets.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np

from engine.models import Decoder
from engine.tensor import TensorValue
from engine.worked_example.common import Vector as Vector  # re-exported to the experiments

Merge = Callable[[np.ndarray, np.ndarray], np.ndarray]
AfterBlock = Callable[[int, np.ndarray, np.ndarray], np.ndarray]

#: Curves hold at most this many points (the page draws them as they are).
MAX_POINTS = 50


def token_losses(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Cross-entropy (nats) of each target under ``softmax(logits)``, shape of ``targets``."""
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    return -np.take_along_axis(log_probabilities, targets[..., np.newaxis], axis=-1)[..., 0]


def mean_loss(model: Decoder, stream: np.ndarray, targets: np.ndarray) -> float:
    """Mean cross-entropy of the read-out (final norm, unembedding) of any stream state."""
    return float(np.mean(token_losses(readout(model, stream), targets)))


def readout(model: Decoder, stream: np.ndarray) -> np.ndarray:
    """The logits ``norm_f(x) U`` of a stream state (the logit lens), as an array."""
    return model.readout(TensorValue.constant(stream)).value


def walk(model: Decoder, tokens: np.ndarray, *, merge: Merge | None = None,
         skip: Collection[int] = (), after_block: AfterBlock | None = None,
         ) -> list[np.ndarray]:
    """Stream states ``x_0 .. x_L`` (a skipped block repeats its input); see the docstring."""
    # The block merges tape values; the analyses round and compare plain arrays.
    block_merge = None if merge is None else (
        lambda x, write: TensorValue.constant(merge(x.value, write.value)))
    x = model.embed(tokens).value
    states = [x]
    for k, block in enumerate(model.blocks):
        if k not in skip:
            start = x
            x = block.forward(TensorValue.constant(x), block_merge).output.value
            if after_block is not None:
                x = after_block(k, start, x)
        states.append(x)
    return states


def writes(model: Decoder, tokens: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each block's attention and MLP writes ``A_k``, ``M_k`` from the engine's own forward."""
    run = model.forward(tokens)
    return ([w.value for w in run.attention_writes], [w.value for w in run.mlp_writes])


def row_norms(x: np.ndarray) -> np.ndarray:
    """The Euclidean norm of every token's vector (the last axis)."""
    return np.sqrt(np.sum(x * x, axis=-1))
