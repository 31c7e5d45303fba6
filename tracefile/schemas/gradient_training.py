"""The gradients lab's trained experiments in ``gradient-flow-v4``: trainability (6), learning
the identity (6b) and clipping (6c), their records and the invariants that tie each summary
to the seeds it summarises. `gradient_flow` places these records in the trace's order.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from tracefile.schema import Invariant, Key, RecordSpec

Get = Callable[[str], Any]

#: What every arm holds of its seeds' final losses.
OVER_SEEDS = (
    Key("median", "float", doc="their median"), Key("low", "float", doc="their least"),
    Key("high", "float", doc="their largest"),
    Key("diverged", "int", doc="seeds whose loss stopped being finite"),
)

TRAINING_RECORDS = (
    # -- 6. trainability ----------------------------------------------------------------------
    RecordSpec("TRAINING-CONFIG", (
        Key("width", "int", doc="stream width"), Key("hidden", "int", doc="branch hidden width"),
        Key("samples", "int", doc="training samples (full batch)"),
        Key("steps", "int", doc="SGD steps for every model"),
        Key("precision", "name",
            doc="the floating-point format of every weight, activation and gradient"),
        Key("lr", "float", doc="SGD lr"),
        Key("seed", "int", doc="seed of data, teacher and weights"),
        Key("teacher-gain", "float", doc="target t = tanh(gain x A) b, standardized"),
        Key("activation", "word", doc="branch activation"),
        Key("task", "word", doc="teacher-regression"), Key("loss", "word", doc="the loss"),
        Key("plain-init", "word", doc="W2 init of the plain stacks whose curves are drawn"),
        Key("residual-init", "word",
            doc="W2 init of the residual stacks whose curves are drawn (zero: identity)"),
        Key("seeds", "shape", doc="the seeds every arm of the grid ran (of task and weights)"),
        Key("lrs", "vector", doc="the learning rates of the grid"),
        Key("inits", "names",
            doc="the initializations of the output projections: default keeps the signal's "
                "variance per layer, scaled shrinks it with depth, zero starts each branch at "
                "the zero function"),
        Key("arm-names", "names", doc="every arm of the grid, in order"),
    ), source="training",
        doc="plain and residual deep-narrow MLPs trained on one task: the grid's settings, and "
            "lr and seed of the runs whose curves are drawn"),
    RecordSpec("TRAINING", (
        Key("curve", "name", doc="variant-depth"), Key("variant", "word", doc="plain or residual"),
        Key("depth", "int", doc="blocks"),
        Key("steps", "shape", doc="the steps the curve samples (a list of ints)"),
        Key("loss", "vector", doc="training loss before each sampled step",
            along="before step {steps}"),
        Key("initial-loss", "float", doc="loss before training"),
        Key("final-loss", "float", doc="loss after the last step"),
        Key("diverged", "bool", doc="the loss stopped being finite (then capped)"),
    ), source="training.curves", keyed_by="curve",
        doc="one model's training run, at the lab's seed and learning rate"),
    RecordSpec("ARM", (
        Key("arm", "name", doc="variant, initialization, depth and learning rate"),
        Key("stack", "name", doc="variant, initialization and depth"),
        Key("variant", "word", doc="plain or residual"),
        Key("init", "word", doc="the initialization of the output projections"),
        Key("depth", "int", doc="blocks"), Key("lr", "float", doc="learning rate"),
        Key("final-loss", "vector", doc="each seed's loss after the last step",
            along="seed {TRAINING-CONFIG.seeds}"),
        *OVER_SEEDS,
        Key("steps", "shape", doc="the steps the curves sample"),
        Key("curve-low", "vector", doc="the least loss over seeds, per sampled step",
            along="at step {steps}"),
        Key("curve-median", "vector", doc="the median over seeds, per sampled step",
            along="at step {steps}"),
        Key("curve-high", "vector", doc="the largest over seeds, per sampled step",
            along="at step {steps}"),
    ), source="training.arms", keyed_by="arm", doc="one arm of the training grid",
        label="{variant}, {init} start, {depth} blocks, rate {lr}"),
    RecordSpec("BEST", (
        Key("stack", "name", doc="variant, initialization and depth"),
        Key("arm", "name", doc="its arm with the lowest median final loss"),
        Key("lr", "float", doc="that arm's learning rate"),
        Key("median", "float", doc="its median final loss"),
        Key("low", "float", doc="its least final loss over the seeds"),
        Key("high", "float", doc="its largest final loss over the seeds"),
        Key("steps", "shape", doc="the steps the curves sample"),
        Key("curve-low", "vector", doc="the least loss over seeds, per sampled step"),
        Key("curve-median", "vector", doc="the median over seeds, per sampled step"),
        Key("curve-high", "vector", doc="the largest over seeds, per sampled step"),
    ), source="training.best", keyed_by="stack",
        doc="each architecture at its best learning rate: a copy of that arm"),
    RecordSpec("BY-DEPTH", (
        Key("line", "name", doc="variant and initialization"),
        Key("variant", "word", doc="plain or residual"),
        Key("init", "word", doc="the initialization of the output projections"),
        Key("depths", "shape", doc="the depths"),
        Key("median", "vector", doc="median final loss at each depth's best learning rate"),
        Key("low", "vector", doc="the least at each depth"),
        Key("high", "vector", doc="the largest at each depth"),
    ), source="training.by_depth", keyed_by="line",
        doc="one variant and initialization across the depths"),
    # -- 6b. learning the identity -------------------------------------------------------------
    RecordSpec("IDENTITY-CONFIG", (
        Key("width", "int", doc="the block's input and output width"),
        Key("hidden", "int", doc="its hidden width (twice the width represents the identity)"),
        Key("samples", "int", doc="standard normal inputs, the targets themselves"),
        Key("steps", "int", doc="full-batch gradient descent steps"),
        Key("lrs", "vector", doc="the learning rates"),
        Key("seeds", "shape", doc="the seeds of weights and inputs"),
        Key("models", "names",
            doc="the plain block, the residual block from the same initialization, and the "
                "residual block whose output projection starts at zero"),
        Key("arm-names", "names", doc="every model at every rate, in order"),
    ), source="identity", doc="one block fitted to the identity"),
    RecordSpec("IDENTITY", (
        Key("arm", "name", doc="the model and its learning rate"),
        Key("model", "name", doc="the model"), Key("lr", "float", doc="the learning rate"),
        Key("seeds", "shape", doc="the seeds, in the order of the vectors below"),
        Key("initial", "vector", doc="each seed's loss before the first step"),
        Key("final", "vector", doc="each seed's loss after the last step (capped if it diverged)"),
        *OVER_SEEDS,
    ), source="identity.arms", keyed_by="arm", doc="one model at one rate over the seeds"),
    RecordSpec("IDENTITY-BEST", (
        Key("model", "name", doc="the model"),
        Key("arm", "name", doc="its arm with the lowest median final loss"),
        Key("lr", "float", doc="that arm's rate"),
        Key("initial", "float", doc="its median loss before training"),
        Key("median", "float", doc="its median final loss"),
        Key("low", "float", doc="its least final loss over the seeds"),
        Key("high", "float", doc="its largest final loss over the seeds"),
    ), source="identity.best", keyed_by="model", doc="each model at its best rate"),
    # -- 6c. clipping the exploding stacks ------------------------------------------------------
    RecordSpec("CLIP-CONFIG", (
        Key("depths", "shape", doc="the depths"),
        Key("lrs", "vector", doc="the learning rates, the same for every model",
            along="rate {n} of the grid, counted from the lowest"),
        Key("clip-norm", "float",
            doc="the clipped model's updates: the global gradient norm scaled down to this"),
        Key("seeds", "shape", doc="the seeds of task and weights"),
        Key("steps", "int", doc="full-batch gradient descent steps, on the trainability task"),
        Key("zero-loss", "float",
            doc="the loss of predicting zero everywhere (the targets are standardized)"),
        Key("models", "names",
            doc="the residual stack with the default start, unclipped and clipped, and the "
                "control: the residual stack whose branches start at zero, unclipped"),
        Key("arm-names", "names", doc="every model, depth and rate, in order"),
        Key("stacks", "names", doc="every model at every depth, in order"),
    ), source="clipping", doc="residual stacks that explode, trained with and without clipping"),
    RecordSpec("CLIP-ARM", (
        Key("arm", "name", doc="the stack and its learning rate"),
        Key("stack", "name", doc="the model at one depth"), Key("depth", "int", doc="blocks"),
        Key("lr", "float", doc="the learning rate"),
        Key("final-loss", "vector", doc="each seed's loss after the last step (capped if it "
                                        "diverged)"),
        *OVER_SEEDS,
    ), source="clipping.arms", keyed_by="arm", doc="one stack at one rate over the seeds"),
    RecordSpec("CLIP-BEST", (
        Key("stack", "name", doc="the model at one depth"), Key("model", "name", doc="the model"),
        Key("depth", "int", doc="blocks"), Key("clipped", "bool", doc="its updates are clipped"),
        Key("lr", "float", doc="the rate of its arm with the lowest median final loss"),
        Key("initial", "float", doc="its median loss before training"),
        Key("median", "float", doc="its median final loss"),
        Key("low", "float", doc="its least final loss over the seeds"),
        Key("high", "float", doc="its largest final loss over the seeds"),
        Key("diverged", "int", doc="that arm's seeds whose loss stopped being finite"),
    ), source="clipping.best", keyed_by="stack", doc="each stack at its best rate",
        label="{model}, {depth} blocks"),
)


def _best(get: Get) -> tuple[list[Any], list[Any]]:
    told, want = [], []
    arms = [f"ARM[{name}]" for name in get("TRAINING-CONFIG.arm-names")]
    for name in dict.fromkeys(get(f"{a}.stack") for a in arms):
        mine = [a for a in arms if get(f"{a}.stack") == name]
        best = min(mine, key=lambda a: (get(f"{a}.median"), a))
        told.append(get(f"BEST[{name}].arm"))
        want.append(get(f"{best}.arm"))
        told += [get(f"BEST[{name}].{key}") for key in _COPIED]
        want += [get(f"{best}.{key}") for key in _COPIED]
    return told, want


_COPIED = ("lr", "median", "low", "high", "steps", "curve-low", "curve-median", "curve-high")


def _spreads(get: Get) -> tuple[list[Any], list[Any]]:
    arms = [f"ARM[{name}]" for name in get("TRAINING-CONFIG.arm-names")]
    told = [(get(f"{a}.median"), get(f"{a}.low"), get(f"{a}.high")) for a in arms]
    finals = [get(f"{a}.final-loss") for a in arms]
    return told, [(statistics.median(f), min(f), max(f)) for f in finals]


def _identity(get: Get) -> tuple[list[Any], list[Any]]:
    told, want = [], []
    arms = [f"IDENTITY[{name}]" for name in get("IDENTITY-CONFIG.arm-names")]
    for arm in arms:
        finals = get(f"{arm}.final")
        told += [get(f"{arm}.{k}") for k in ("median", "low", "high")]
        want += [statistics.median(finals), min(finals), max(finals)]
    for model in get("IDENTITY-CONFIG.models"):
        mine = [a for a in arms if get(f"{a}.model") == model]
        best = min(mine, key=lambda a: (get(f"{a}.median"), get(f"{a}.arm")))
        told += [get(f"IDENTITY-BEST[{model}].{k}") for k in ("arm", "median", "initial")]
        want += [get(f"{best}.arm"), get(f"{best}.median"),
                 statistics.median(get(f"{best}.initial"))]
    return told, want


def _clipping(get: Get) -> tuple[list[Any], list[Any]]:
    told, want = [], []
    arms = [f"CLIP-ARM[{name}]" for name in get("CLIP-CONFIG.arm-names")]
    for arm in arms:
        finals = get(f"{arm}.final-loss")
        told += [get(f"{arm}.{k}") for k in ("median", "low", "high")]
        want += [statistics.median(finals), min(finals), max(finals)]
    for stack in get("CLIP-CONFIG.stacks"):
        mine = [a for a in arms if get(f"{a}.stack") == stack]
        best = min(mine, key=lambda a: (get(f"{a}.median"), get(f"{a}.arm")))
        told += [get(f"CLIP-BEST[{stack}].{k}") for k in _CLIP_COPIED]
        want += [get(f"{best}.{k}") for k in _CLIP_COPIED]
    return told, want


_CLIP_COPIED = ("depth", "lr", "median", "low", "high", "diverged")

TRAINING_INVARIANTS = (
    Invariant("ARM median, low and high are those of its final-loss", "ARM", _spreads),
    Invariant("BEST is each architecture's arm with the lowest median", "BEST", _best),
    Invariant("IDENTITY spreads follow from the seeds, IDENTITY-BEST has the lowest median",
              "IDENTITY", _identity),
    Invariant("CLIP-ARM spreads follow from the seeds, CLIP-BEST is each stack's arm with the "
              "lowest median", "CLIP-ARM", _clipping),
)
