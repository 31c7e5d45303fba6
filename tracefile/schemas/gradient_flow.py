"""``gradient-flow-v4``: the gradients lab, "Gradients through depth", experiments 1-7.

One ``Key`` per traced value. ``source`` paths point into the engine's results, each
experiment's by its name (engine/experiments/registry.py); the parser ignores them. Every
gradient here was measured by the engine's backward. A value that overflowed is written as
±1.7976931348623157e+308 and flagged by the record's ``overflowed`` or ``diverged`` key. Lists
of integers (depths, counts, steps) use the ``shape`` kind, the grammar's list of non-negative
ints.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tracefile.claims import verdict_words
from tracefile.schema import Invariant, Key, RecordSpec, TraceSchema
from tracefile.schemas.gradient_claims import CLAIMS
from tracefile.schemas.gradient_training import TRAINING_INVARIANTS, TRAINING_RECORDS
from tracefile.schemas.numerics import NUMERICS

RECORDS = (
    NUMERICS,
    # -- 1. the +1 over ten layers ------------------------------------------------------------
    RecordSpec("TEN-LAYERS-CONFIG", (
        Key("layers", "int", doc="layers of every scalar stack"),
        Key("input", "float", doc="the input x (a linear stack's gradient does not depend on it)"),
        Key("upstream", "float", doc="the gradient seeded at the output"),
        Key("band", "float", doc="fate words: vanished below 1/band, exploded above band"),
    ), source="ten_layers",
        doc="scalar stacks: plain h <- f h, residual h <- h + f h, one branch factor f each"),
    RecordSpec("TEN-LAYERS", (
        Key("factor", "float", doc="the branch derivative f"),
        Key("plain", "float", doc="input gradient of the plain stack (f^L in theory)"),
        Key("residual", "float", doc="input gradient of the residual stack ((1+f)^L in theory)"),
        Key("plain-by-depth", "vector",
            doc="plain: gradient at the stream after l layers, l = 0..layers (0: the input)",
            along="after {i} layers"),
        Key("residual-by-depth", "vector", doc="the same for the residual stack",
            along="after {i} layers"),
        Key("plain-fate", "word", doc="dead (exactly 0), vanished, kept or exploded"),
        Key("residual-fate", "word", doc="the same for the residual stack"),
    ), source="ten_layers.runs", keyed_by="factor", doc="both stacks for one branch factor"),
    # -- 2. the product expanded into paths ---------------------------------------------------
    RecordSpec("CHAPTER-PATHS", (
        Key("layers", "int", doc="the chapter's stack: layers"),
        Key("branch-factor", "float", doc="every branch weight is this factor times I"),
        Key("alphas", "vector", doc="every branch scaled by alpha: the alphas measured"),
        Key("gradients", "vector", doc="input gradient (first component) at each alpha"),
        Key("contributions", "vector",
            doc="gradient carried by the paths through k branches, k = 0..layers (first "
                "component; the coefficients of the alpha polynomial, solved exactly)",
            along="the paths through {i} branches"),
        Key("counts", "shape", doc="how many paths have k branches, C(layers, k)",
            along="the paths through {i} branches"),
        Key("components-equal", "bool", doc="both input components gave the same split"),
        Key("total", "float", doc="sum of the contributions"),
        Key("gradient", "float", doc="the unscaled stack's input gradient, by one backward"),
        Key("held-out-alpha", "float", doc="an alpha not used by the fit"),
        Key("max-deviation", "float",
            doc="largest |fitted polynomial - backward| at the held-out alpha"),
        Key("exact", "bool",
            doc="every contribution is an exact float64, the deviation is 0 and the total "
                "equals the gradient"),
        Key("methods-agree", "bool",
            doc="a graded stack (one backward per path length) gives the same contributions"),
    ), source="chapter_paths", doc="the chapter's four-layer stack split by path length"),
    RecordSpec("RANDOM-PATHS", (
        Key("width", "int", doc="stream width d"), Key("layers", "int", doc="layers L"),
        Key("gain", "float", doc="branch weights are Gaussian with std gain/sqrt(width)"),
        Key("seed", "int", doc="the seed of weights, input and upstream gradient"),
        Key("gradient-norm", "float", doc="norm of the input gradient, by one backward"),
        Key("sum-deviation", "float",
            doc="norm of (sum of the contributions - gradient), relative to the gradient"),
        Key("vandermonde-deviation", "float",
            doc="alpha-polynomial fit at Chebyshev nodes in float64: its largest relative "
                "error over path lengths, against the graded split"),
        Key("peak-length", "int",
            doc="the path length whose paths together carry the largest gradient norm"),
        Key("gains", "vector", doc="the branch gains whose every path was enumerated"),
        Key("enumeration-deviation", "float",
            doc="every path enumerated one by one and summed by length, against the graded "
                "split: the largest difference over lengths, relative to the length's part"),
    ), source="random_paths",
        doc="a random linear residual stack split by path length with a graded stack"),
    RecordSpec("RANDOM-PATH", (
        Key("length", "int", doc="path length k (branches passed through)"),
        Key("count", "int", doc="how many paths have this length, C(L, k)"),
        Key("norm", "float", doc="norm of the gradient these paths carry together"),
        Key("per-path", "float",
            doc="norm over count: not one path's magnitude, since the paths' sum cancels"),
        Key("share", "float", doc="norm over the sum of the norms of every length"),
    ), source="random_paths.lengths", keyed_by="length", runs_to="RANDOM-PATHS.layers",
        doc="the random stack's paths of one length"),
    RecordSpec("PATH-MAGNITUDE", (
        Key("gain", "float", doc="branch weights Gaussian with std gain/sqrt(width)"),
        Key("lengths", "shape", doc="path lengths, from none to every branch"),
        Key("mean", "vector", doc="mean norm of one path's input gradient, at each length",
            along="paths of length {lengths}"),
        Key("low", "vector", doc="the least at each length",
            along="paths of length {lengths}"),
        Key("high", "vector", doc="the largest at each length",
            along="paths of length {lengths}"),
        Key("total", "vector", doc="the sum of those norms at each length (count times mean)",
            along="paths of length {lengths}"),
        Key("peak-length", "int", doc="the length with the largest total"),
    ), source="random_paths.magnitudes", keyed_by="gain",
        doc="every path of the random stack enumerated, one by one, at one branch gain (the "
            "same draws, scaled)"),
    # -- 3. depth sweep at initialization -----------------------------------------------------
    RecordSpec("SWEEP-CONFIG", (
        Key("width", "int", doc="stream width d"), Key("hidden", "int", doc="branch hidden width"),
        Key("batch", "int", doc="inputs per batch"),
        Key("depths", "shape", doc="the depths swept (a list of ints)"),
        Key("seed", "int", doc="seed of inputs, readout and weights"),
        Key("input-norm", "float", doc="root mean square of the inputs' norms"),
        Key("variants", "names", doc="variants, in the order of the SWEEP records"),
        Key("activations", "names", doc="branch activations"),
        Key("objective", "word",
            doc="random-readout: J = sum(G * h_L) with a fixed random G of norm 1"),
    ), source="sweep", doc="MLP stacks at initialization, depth by depth"),
    RecordSpec("SWEEP", (
        Key("curve", "word", doc="variant-activation"),
        Key("variant", "word",
            doc="plain, residual (default init), residual-scaled (W2 / sqrt(2L)), "
                "residual-zero (W2 = 0) or prenorm (RMSNorm inside the branch)"),
        Key("activation", "word", doc="relu or gelu"),
        Key("input-gradient", "vector",
            doc="norm of dJ/dx per depth of SWEEP-CONFIG.depths (the output's is 1)",
            along="depth {SWEEP-CONFIG.depths}"),
        Key("stream-norm", "vector", doc="root mean square of ||h_L|| per depth",
            along="depth {SWEEP-CONFIG.depths}"),
        Key("overflowed", "bool", doc="a value overflowed and was capped"),
    ), source="sweep.curves", keyed_by="curve", doc="one variant over every depth"),
    RecordSpec("DEEPEST", (
        Key("curve", "word", doc="variant-activation, as in SWEEP"),
        Key("depth", "int", doc="blocks of the deepest stack"),
        Key("first-weight-gradient", "vector",
            doc="norm of each block's W1 gradient, first block first",
            along="block {n}"),
        Key("projection-gradient", "vector",
            doc="norm of each block's W2 (output projection) gradient",
            along="block {n}"),
        Key("stream-gradient", "vector",
            doc="norm of dJ/dh_l for l = 0..depth (0: the input; the last is 1)",
            along="after {i} blocks"),
        Key("stream-norm", "vector", doc="root mean square of ||h_l|| for l = 0..depth",
            along="after {i} blocks"),
        Key("overflowed", "bool", doc="a value overflowed and was capped"),
    ), source="sweep.deepest", keyed_by="curve", doc="the deepest stack, layer by layer"),
    # -- 4. three ways to be silent -----------------------------------------------------------
    RecordSpec("SILENT-CONFIG", (
        Key("input", "vector", doc="x"), Key("upstream", "vector", doc="y-bar = dJ/dy"),
        Key("lr", "float", doc="SGD learning rate"), Key("steps", "int", doc="SGD steps"),
        Key("objective", "word", doc="linear: J = y-bar . y"),
        Key("last-row", "int", doc="index of the last SILENT-STEP record"),
    ), source="silent", doc="branches that start as the zero function, trained a few steps"),
    RecordSpec("SILENT", (
        Key("case", "word",
            doc="zero-weight (x W, W = 0), zero-scale (alpha x W, alpha = 0), "
                "zero-projection ((x W1) W2, W2 = 0) or all-zero (W1 = W2 = 0)"),
        Key("parameters", "names", doc="the case's parameters",
            along="parameter {n}"),
        Key("objective", "vector", doc="J before each step"),
        Key("branch-norm", "vector", doc="norm of F(x) before each step"),
        Key("first-moved", "shape",
            doc="per parameter, the step that first changed it (0: none did)"),
    ), source="silent.cases", keyed_by="case", doc="one silent branch over its steps"),
    RecordSpec("SILENT-STEP", (
        Key("index", "int", doc="row number"), Key("case", "word", doc="which case"),
        Key("step", "int", doc="step, from 1"), Key("parameter", "name", doc="which parameter"),
        Key("shape", "shape", doc="the parameter's shape"),
        Key("before", "vector", "shape", doc="its value before the update, row-major"),
        Key("gradient", "vector", "shape", doc="its gradient in this step"),
        Key("gradient-norm", "float", doc="norm of that gradient"),
        Key("after", "vector", "shape", doc="its value after the update"),
        Key("moved", "bool", doc="the update changed it"),
    ), source="silent.rows", keyed_by="index", runs_to="SILENT-CONFIG.last-row",
        doc="one parameter in one step"),
    # -- 5. where the norm goes ---------------------------------------------------------------
    RecordSpec("PLACEMENT-CONFIG", (
        Key("width", "int", doc="stream width d"), Key("hidden", "int", doc="branch hidden width"),
        Key("batch", "int", doc="inputs per batch"), Key("vocab", "int", doc="readout classes"),
        Key("repeats", "int", doc="seeds averaged over"),
        Key("seed", "int", doc="the first seed (repeat r uses seed + r)"),
        Key("activation", "word", doc="branch activation"), Key("norm", "word", doc="rms"),
        Key("readout", "word",
            doc="cross-entropy: softmax over vocab classes of h_L U, random labels"),
    ), source="placement", doc="post-norm and pre-norm stacks at initialization"),
    RecordSpec("PLACEMENT", (
        Key("curve", "name", doc="placement[-no-final-norm]-blocks"),
        Key("placement", "word", doc="postnorm (norm after the add) or prenorm (in the branch)"),
        Key("blocks", "int", doc="blocks in the stack"),
        Key("final-norm", "bool", doc="an RMSNorm before the readout (pre-norm only)"),
        Key("gradient-mean", "vector", doc="per block, mean over repeats of ||dJ/dW2||",
            along="block {n}"),
        Key("gradient-std", "vector", doc="per block, standard deviation over repeats",
            along="block {n}"),
        Key("gradient-low", "vector", doc="per block, smallest over repeats",
            along="block {n}"),
        Key("gradient-high", "vector", doc="per block, largest over repeats",
            along="block {n}"),
        Key("last-over-first", "float", doc="gradient-mean of the last block over the first's"),
        Key("ratio-low", "float", doc="smallest per-repeat last/first ratio"),
        Key("ratio-high", "float", doc="largest per-repeat last/first ratio"),
        Key("stream-norm-squared", "vector",
            doc="mean over batch and repeats of ||h_l||^2, l = 0..blocks",
            along="after {i} blocks"),
        Key("loss", "float", doc="mean initial loss"),
    ), source="placement.curves", keyed_by="curve", doc="one placement at one depth"),
    *TRAINING_RECORDS,
    # -- 7. explorer grid ---------------------------------------------------------------------
    RecordSpec("EXPLORER-CONFIG", (
        Key("max-depth", "int", doc="depths 1..max-depth"),
        Key("factors", "vector", doc="the branch factors f of the grid"),
        Key("last-cell", "int", doc="index of the last EXPLORER record"),
    ), source="explorer", doc="scalar stacks for every depth and factor of a grid"),
    RecordSpec("EXPLORER-FACTOR", (
        Key("factor", "float", doc="branch factor f"),
        Key("plain", "vector", doc="plain input gradient for depth 1..max-depth",
            along="depth {n}"),
        Key("residual", "vector", doc="residual input gradient for depth 1..max-depth",
            along="depth {n}"),
    ), source="explorer.curves", keyed_by="factor", doc="one factor over every depth"),
    RecordSpec("PATH-COUNT", (
        Key("depth", "int", doc="depth D"),
        Key("counts", "shape", doc="paths through k branches, k = 0..D (C(D, k))"),
    ), source="explorer.counts", keyed_by="depth", doc="how many paths of each length"),
    RecordSpec("EXPLORER", (
        Key("cell", "int", doc="row number (factor by factor, depth 1..max within each)"),
        Key("factor", "float", doc="branch factor f"), Key("depth", "int", doc="depth D"),
        Key("plain", "float", doc="plain input gradient"),
        Key("residual", "float", doc="residual input gradient"),
        Key("contributions", "vector",
            doc="gradient carried by the paths through k branches, k = 0..D; they sum to "
                "residual, and the last equals plain"),
        Key("peak-length", "int", doc="the k with the largest |contribution|"),
    ), source="explorer.cells", keyed_by="cell", runs_to="EXPLORER-CONFIG.last-cell",
        doc="one (factor, depth) of the grid"),
    RecordSpec("CLAIM", (
        Key("key", "word", doc="the claim, declared with its words and rule in the trace contract"),
        Key("verdict", "word", doc="supports, qualifies, contradicts or inconclusive"),
        Key("because", "paths", doc="the values the verdict was decided from"),
    ), source="claims", keyed_by="key",
        doc="a claim of the lab, decided by its rule over the values above"),
)

Get = Callable[[str], Any]


def _binomials(n: int) -> tuple[int, ...]:
    return tuple(math.comb(n, k) for k in range(n + 1))


def _exact_split(get: Get) -> tuple[Any, Any]:
    # The engine calls the split exact only when the total equals the gradient; otherwise
    # there is nothing to hold it to (both sides are then the flag itself).
    if get("CHAPTER-PATHS.exact"):
        return get("CHAPTER-PATHS.total"), get("CHAPTER-PATHS.gradient")
    return False, False


INVARIANTS = (
    Invariant("CHAPTER-PATHS.counts = C(layers, k) for every k from zero to layers",
              "CHAPTER-PATHS",
              lambda get: (get("CHAPTER-PATHS.counts"),
                           _binomials(get("CHAPTER-PATHS.layers")))),
    Invariant("CHAPTER-PATHS.exact ⇒ CHAPTER-PATHS.total = CHAPTER-PATHS.gradient",
              "CHAPTER-PATHS", _exact_split),
    Invariant("RANDOM-PATH.count = C(RANDOM-PATHS.layers, length) for every length", "RANDOM-PATH",
              lambda get: (tuple(get(f"RANDOM-PATH[{k}].count")
                                 for k in range(get("RANDOM-PATHS.layers") + 1)),
                           _binomials(get("RANDOM-PATHS.layers")))),
    Invariant("PATH-COUNT.counts = C(depth, k) for every k, at every depth up to "
              "EXPLORER-CONFIG.max-depth",
              "PATH-COUNT",
              lambda get: (tuple(get(f"PATH-COUNT[{d}].counts")
                                 for d in range(1, get("EXPLORER-CONFIG.max-depth") + 1)),
                           tuple(_binomials(d)
                                 for d in range(1, get("EXPLORER-CONFIG.max-depth") + 1)))),
    Invariant("EXPLORER-CONFIG: one cell per factor and depth, last-cell the count less one",
              "EXPLORER-CONFIG",
              lambda get: (get("EXPLORER-CONFIG.last-cell") + 1,
                           len(get("EXPLORER-CONFIG.factors"))
                           * get("EXPLORER-CONFIG.max-depth"))),
)

def _peaks(get: Get) -> tuple[list[int], list[int]]:
    gains = get("RANDOM-PATHS.gains")
    totals = [get(f"PATH-MAGNITUDE[{g!r}].total") for g in gains]
    return ([get(f"PATH-MAGNITUDE[{g!r}].peak-length") for g in gains],
            [max(range(len(t)), key=t.__getitem__) for t in totals])


INVARIANTS = (*INVARIANTS,
    Invariant("PATH-MAGNITUDE.peak-length is the length with the largest total", "PATH-MAGNITUDE",
              _peaks),
    *TRAINING_INVARIANTS,
    Invariant("each declared claim has one CLAIM record, its verdict a verdict word decided "
              "from values of this trace", "CLAIM",
              verdict_words(CLAIMS)),
)

SCHEMA = TraceSchema(
    "gradient-flow", 4, RECORDS, "engine.experiments.gradient_flow:gradient_flow_results",
    title="Gradients through depth",
    doc="the gradients lab: the added one over ten layers, paths, depth sweeps, silent branches, "
        "norm placement, trainability and the explorer grid",
    invariants=INVARIANTS, claims=CLAIMS,
)
