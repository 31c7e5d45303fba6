"""Experiment 7: what the adds cost, in arithmetic and in memory.

Contract:
- `flops` counts forward floating-point operations per token and per block, a multiply-add
  counting two: the two residual adds ``2 d``; attention ``8 d²`` for the four projections
  plus ``4 d t`` for scores and the weighted sum, with ``t = (T + 1) / 2`` the mean number of
  keys a token sees under the causal mask; the MLP ``4 d h`` for its two matrices (``h`` the
  hidden width). Norms, softmax and activations are left out (a few ``d`` each).
- `tape_memory` runs one training forward of a model (a batch from the corpus, the loss) and,
  before any backward, walks the tape from the loss (`engine.tensor.tape_nodes`). Every array
  held is counted once (views share their base's memory) and charged to the first holder
  that claims it: ``parameters``; ``stream`` (the states ``x_0 .. x_L`` and the states between
  attention and MLP); ``norm-outputs`` (what each RMSNorm hands its branch or the read-out);
  ``attention-scores`` (the attention probabilities); ``mlp-hidden``
  (the MLP's hidden-width values before and after the activation); ``other-values`` (every
  other node's value: queries, keys, values, mixed heads, writes, logits); and
  ``backward-saved`` (arrays that backward closures captured and no node holds). Korthikanti
  et al. 2022 count, per layer, the residual-stream inputs as a small part of activation
  memory next to the attention scores and the MLP's wide intermediates.
- `intensity` walks the tape of one forward of the same batch and counts, for the residual
  adds (the ``add`` nodes that produce the stream's states after the embedding) and for the
  matrix products, their floating-point operations (an add one per element, a product two
  per multiply-add) and the bytes they move, each operand read once and the result written
  once (the fewest loads and stores the op can make), in the model's precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.data import ArithmeticCorpus
from engine.experiments.claims import Get
from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.analysis import deepest_residual
from engine.experiments.residual_stream.corpus import TRACE, lab_corpus
from engine.experiments.residual_stream.training import DecoderTrainingConfig, Trainability
from engine.models import Decoder
from engine.ops import cross_entropy
from engine.tensor import TensorValue, saved_arrays, tape_nodes

HOLDERS = ("parameters", "stream", "norm-outputs", "attention-scores", "mlp-hidden",
           "other-values", "backward-saved")


@dataclass(frozen=True)
class Flops:
    setting: str
    width: int
    depth: int
    context: int
    hidden: int
    heads: int
    add: float
    attention: float
    mlp: float
    add_share: float


# --8<-- [start:flops]
def flops(setting: str, width: int, depth: int, context: int, hidden: int,
          heads: int) -> Flops:
    keys = (context + 1) / 2
    add = 2.0 * width
    attention = 8.0 * width * width + 4.0 * width * keys
    mlp = 4.0 * width * hidden
    return Flops(setting, width, depth, context, hidden, heads, add, attention, mlp,
                 add / (add + attention + mlp))
# --8<-- [end:flops]


@dataclass(frozen=True)
class Holder:
    holder: str
    bytes: int
    share: float


@dataclass(frozen=True)
class TapeMemory:
    depth: int
    batch: int
    tokens: int
    nodes: int
    total: int
    holders: tuple[Holder, ...]
    stream_share: float
    activation_stream_share: float
    largest_activation: str


def _buffer(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


# --8<-- [start:tape-holders]
def _holder(node: TensorValue, stream_ids: set[int], hidden: int) -> str:
    if node.op == "parameter":
        return "parameters"
    if id(node) in stream_ids:
        return "stream"
    if node.op == "rms_norm":
        return "norm-outputs"
    if node.op == "attention_probabilities":
        return "attention-scores"
    if node.op in ("matmul", "gelu") and node.shape[-1] == hidden:
        return "mlp-hidden"
    return "other-values"
# --8<-- [end:tape-holders]


@dataclass(frozen=True)
class Intensity:
    precision: str
    add_flops: int
    add_bytes: int
    add_intensity: float
    matmul_flops: int
    matmul_bytes: int
    matmul_intensity: float
    ratio: float


# --8<-- [start:intensity]
def intensity(model: Decoder, corpus: ArithmeticCorpus, batch: int, seed: int) -> Intensity:
    inputs, _ = corpus.batch("train", batch, np.random.default_rng((seed, 7)))
    run = model.forward(inputs)
    residual = {id(x) for x in (*run.streams[1:], *run.middles)}
    flops = {"add": 0, "matmul": 0}
    moved = {"add": 0, "matmul": 0}
    for node in tape_nodes(run.logits):
        is_residual_add = node.op == "add" and id(node) in residual
        kind = "add" if is_residual_add else "matmul" if node.op == "matmul" else None
        if kind is None:
            continue
        per_element = 1 if kind == "add" else 2 * node.parents[0].shape[-1]
        flops[kind] += per_element * node.value.size
        moved[kind] += node.value.nbytes + sum(p.value.nbytes for p in node.parents)
    add, product = flops["add"] / moved["add"], flops["matmul"] / moved["matmul"]
    return Intensity(model.token_embedding.value.dtype.name, flops["add"], moved["add"], add,
                     flops["matmul"], moved["matmul"], product, add / product)
# --8<-- [end:intensity]


def tape_memory(model: Decoder, corpus: ArithmeticCorpus, batch: int,
                seed: int) -> TapeMemory:
    inputs, targets = corpus.batch("train", batch, np.random.default_rng((seed, 7)))
    run = model.forward(inputs)
    loss = cross_entropy(run.logits, targets)
    stream_ids = {id(x) for x in (*run.streams, *run.middles)}
    nodes = tape_nodes(loss)
    counted: set[int] = set()
    totals = dict.fromkeys(HOLDERS, 0)
    for node in nodes:
        base = _buffer(node.value)
        if id(base) not in counted:
            counted.add(id(base))
            totals[_holder(node, stream_ids, model.config.hidden)] += base.nbytes
    for node in nodes:
        for array in saved_arrays(node):
            base = _buffer(array)
            if id(base) not in counted:
                counted.add(id(base))
                totals["backward-saved"] += base.nbytes
    total = sum(totals.values())
    activations = {k: v for k, v in totals.items() if k != "parameters"}
    return TapeMemory(
        depth=len(model.blocks), batch=batch, tokens=int(inputs.size), nodes=len(nodes),
        total=total, holders=tuple(Holder(k, v, v / total) for k, v in totals.items()),
        stream_share=totals["stream"] / total,
        activation_stream_share=totals["stream"] / sum(activations.values()),
        largest_activation=max(activations, key=lambda k: activations[k]))


#: The realistic small model of experiment seven: width, depth, context, hidden width, heads.
REALISTIC = (768, 12, 1024, 3072, 12)


def add_is_cheap(get: Get) -> str:
    shares = [get(f"FLOPS[{setting}].add-share") for setting in ("lab", "realistic")]
    if all(share < 0.01 for share in shares):
        return "supports"
    return "contradicts" if any(share > 0.1 for share in shares) else "qualifies"


def add_moves_memory(get: Get) -> str:
    ratio = get("INTENSITY.ratio")
    return "supports" if ratio < 0.1 else "contradicts" if ratio >= 0.5 else "qualifies"


def stream_dominates_memory(get: Get) -> str:
    share = get("MEMORY.activation-stream-share")
    return "supports" if share > 0.5 else "contradicts" if share < 0.25 else "qualifies"


def _flops(seed: int, config: DecoderTrainingConfig) -> tuple[Flops, ...]:
    return (flops("lab", config.width, max(config.depths), lab_corpus().sequence_length,
                  config.width * config.mlp_ratio, config.heads), flops("realistic", *REALISTIC))


def _intensity(seed: int, config: DecoderTrainingConfig, training: Trainability) -> Intensity:
    return intensity(deepest_residual(training).model, lab_corpus(), config.batch, seed)


def _memory(seed: int, config: DecoderTrainingConfig, training: Trainability) -> TapeMemory:
    return tape_memory(deepest_residual(training).model, lab_corpus(), config.batch, seed)


register(Experiment(TRACE, "flops", DecoderTrainingConfig, _flops,
                    rules={"add-is-cheap": add_is_cheap}))
register(Experiment(TRACE, "intensity", DecoderTrainingConfig, _intensity, needs=("training",),
                    rules={"add-moves-memory": add_moves_memory}))
register(Experiment(TRACE, "memory", DecoderTrainingConfig, _memory, needs=("training",),
                    rules={"stream-dominates-memory": stream_dominates_memory}))
