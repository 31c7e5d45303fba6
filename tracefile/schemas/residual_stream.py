"""``residual-stream-v4``: the decoder lab, "The residual stream in a small trained decoder".

One ``Key`` per traced value. ``source`` paths point into the engine's results, each
experiment's by its name (engine/experiments/registry.py); the parser ignores them. Losses are
mean cross-entropies in nats per predicted token. Norms of a stream state or a write are the
mean over tokens of each token's Euclidean norm unless a key says otherwise. Lists of ints use
the ``shape`` kind. Docs and titles are shown on pages and hold no digits.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

from tracefile.claims import verdict_words
from tracefile.schema import Invariant, Key, RecordSpec, TraceSchema
from tracefile.schemas.numerics import NUMERICS
from tracefile.schemas.stream_claims import CLAIMS

Get = Callable[[str], Any]

_TRAINING = (
    RecordSpec("CORPUS", (
        Key("vocab", "int",
            doc="vocabulary size: the ten digits, plus, equals and the semicolon that ends a "
                "problem and starts a sequence, one token each"),
        Key("digits", "int", doc="digits of each operand (the sum has one more)"),
        Key("problem-length", "int", doc="characters of one zero-padded problem"),
        Key("problems-per-sequence", "int", doc="problems in one training sequence"),
        Key("sequence-length", "int", doc="tokens the model reads per sequence"),
        Key("train-problems", "int", doc="distinct problems in the training split"),
        Key("validation-problems", "int",
            doc="distinct held-out problems, never seen in training"),
        Key("unigram", "float", doc="loss of the best model that ignores context"),
        Key("format-only", "float",
            doc="loss of a model that knows the layout but cannot add"),
        Key("generator", "float",
            doc="the generator's own entropy per token: the floor for validation loss"),
        Key("training-sampler", "float", doc="entropy of the training sampler itself"),
    ), source="corpus", doc="the synthetic addition corpus and its reference losses"),
    RecordSpec("TRAINING-CONFIG", (
        Key("width", "int", doc="stream width of every model"),
        Key("heads", "int", doc="attention heads"), Key("hidden", "int", doc="MLP hidden width"),
        Key("steps", "int", doc="Adam steps for every model"),
        Key("batch", "int", doc="sequences per step"),
        Key("precision", "name",
            doc="the floating-point format of every weight, activation and gradient in "
                "training (the analyses read the trained weights in double precision)"),
        Key("lr", "float", doc="peak learning rate, decayed along a cosine"),
        Key("warmup", "int", doc="warm-up steps (none: the post-norm comparison needs none)"),
        Key("seed", "int", doc="seed of weights and batches"),
        Key("depths", "shape", doc="the depths compared (a list of ints)"),
        Key("seeds", "shape", doc="the seeds every arm of the grid ran"),
        Key("lrs", "vector", doc="the peak learning rates of the pre-norm arms"),
        Key("arm-names", "names", doc="every arm of the grid, in order"),
        Key("margin", "float",
            doc="the rules' margin in nats: a seed trains when its final loss is more than "
                "this below the format-only loss, and one arm beats another when its worst "
                "seed ends more than this below the other's best"),
    ), source="training",
        doc="the training grid's settings; lr, warmup and seed pick the runs the analyses read"),
    RecordSpec("TRAINING", (
        Key("curve", "word", doc="variant, norm placement and depth in words"),
        Key("variant", "word", doc="residual (the stream adds each write) or plain"),
        Key("norm", "word", doc="pre (norm inside the branch) or post (norm after the add)"),
        Key("depth", "int", doc="blocks"), Key("parameters", "int", doc="parameter count"),
        Key("eval-steps", "shape", doc="steps at which the validation probe was read"),
        Key("validation", "vector",
            doc="loss on a fixed probe of validation sequences at each of eval-steps"),
        Key("train-steps", "shape", doc="last step of each window of the training curve"),
        Key("train-loss", "vector", doc="mean training-batch loss per window"),
        Key("final-validation", "float", doc="loss on the whole validation split at the end"),
        Key("final-train", "float", doc="loss on a fixed training subset at the end"),
        Key("sum-digit-loss", "float",
            doc="validation loss on the sum's digits alone, the tokens that need addition "
                "(a perfect adder scores zero there)"),
        Key("accuracy", "float",
            doc="share of held-out problems whose whole sum is the most likely continuation"),
        Key("diverged", "bool", doc="a loss stopped being finite"),
    ), source="training.runs", keyed_by="curve",
        doc="one trained model of the lab's seed and learning rate, without warm-up"),
    RecordSpec("ARM", (
        Key("arm", "name", doc="the architecture, its peak learning rate and its warm-up"),
        Key("curve", "word", doc="the architecture: variant, norm placement and depth"),
        Key("variant", "word", doc="residual or plain"),
        Key("norm", "word", doc="pre or post"), Key("depth", "int", doc="blocks"),
        Key("lr", "float", doc="peak learning rate"), Key("warmup", "int", doc="warm-up steps"),
        Key("seeds", "shape", doc="the seeds, in the order of the vectors below"),
        Key("final-validation", "vector", doc="each seed's final validation loss",
            along="seed {seeds}"),
        Key("median", "float", doc="their median"), Key("low", "float", doc="their least"),
        Key("high", "float", doc="their largest"),
        Key("sum-digit-loss", "vector", doc="each seed's loss on the sum's digits",
            along="seed {seeds}"),
        Key("accuracy", "vector",
            doc="each seed's share of held-out problems whose whole sum it predicts",
            along="seed {seeds}"),
        Key("trained", "int",
            doc="seeds that ended more than the margin below the format-only loss"),
        Key("diverged", "int", doc="seeds whose loss stopped being finite"),
        Key("eval-steps", "shape", doc="steps at which the validation probe was read"),
        Key("curve-low", "vector", doc="the least validation-probe loss over seeds, per step"),
        Key("curve-median", "vector", doc="the median over seeds, per step"),
        Key("curve-high", "vector", doc="the largest over seeds, per step"),
    ), source="training.arms", keyed_by="arm", doc="one arm of the training grid",
        label="{variant}, {norm}-norm, {depth} blocks, rate {lr}, warm-up {warmup}"),
    RecordSpec("BEST", (
        Key("curve", "word", doc="the architecture"),
        Key("arm", "name", doc="its arm with the lowest median final validation loss"),
        Key("lr", "float", doc="that arm's peak learning rate"),
        Key("warmup", "int", doc="that arm's warm-up steps"),
        Key("median", "float", doc="its median final validation loss over seeds"),
        Key("low", "float", doc="the least"), Key("high", "float", doc="the largest"),
        Key("accuracy", "float", doc="its median share of held-out sums predicted whole"),
        Key("eval-steps", "shape", doc="steps at which the validation probe was read"),
        Key("curve-low", "vector", doc="the least validation-probe loss over seeds, per step"),
        Key("curve-median", "vector", doc="the median over seeds, per step"),
        Key("curve-high", "vector", doc="the largest over seeds, per step"),
    ), source="training.best", keyed_by="curve",
        doc="each architecture at its best learning rate (and warm-up): a copy of that arm"),
    RecordSpec("SERIES", (
        Key("series", "name", doc="the architecture and its warm-up"),
        Key("curve", "word", doc="the architecture"), Key("warmup", "int", doc="warm-up steps"),
        Key("lrs", "vector", doc="its peak learning rates, in increasing order"),
        Key("median", "vector", doc="median final validation loss over seeds at each rate"),
        Key("low", "vector", doc="the least at each rate"),
        Key("high", "vector", doc="the largest at each rate"),
    ), source="training.series", keyed_by="series",
        doc="one architecture and warm-up across the learning rates"),
    RecordSpec("LONG-CONFIG", (
        Key("curves", "names", doc="the architectures trained again, for longer"),
        Key("steps", "int", doc="Adam steps of each long run (the schedule stretched to them)"),
        Key("seeds", "shape", doc="the seeds of every long run"),
        Key("window", "float",
            doc="the share of training at its end over which a flat curve may fall only by "
                "the tolerance"),
        Key("tolerance", "float",
            doc="how far, in nats, the median validation loss may fall over that window for "
                "the curve to count as flat (fixed before the run)"),
    ), source="long", doc="the long runs: which architectures, how long, the flatness test"),
    RecordSpec("LONG", (
        Key("curve", "word", doc="the architecture"),
        Key("arm", "name", doc="its best arm in the short grid, whose rate it trains at"),
        Key("lr", "float", doc="that arm's peak learning rate"),
        Key("warmup", "int", doc="that arm's warm-up steps"),
        Key("steps", "int", doc="Adam steps"),
        Key("seeds", "shape", doc="the seeds, in the order of the vectors below"),
        Key("final-validation", "vector", doc="each seed's final validation loss",
            along="seed {seeds}"),
        Key("median", "float", doc="their median"), Key("low", "float", doc="their least"),
        Key("high", "float", doc="their largest"),
        Key("accuracy", "vector",
            doc="each seed's share of held-out problems whose whole sum it predicts",
            along="seed {seeds}"),
        Key("accuracy-median", "float", doc="their median"),
        Key("accuracy-low", "float", doc="their least"),
        Key("accuracy-high", "float", doc="their largest"),
        Key("eval-steps", "shape", doc="steps at which the validation probe was read"),
        Key("curve-low", "vector", doc="the least validation-probe loss over seeds, per step"),
        Key("curve-median", "vector", doc="the median over seeds, per step"),
        Key("curve-high", "vector", doc="the largest over seeds, per step"),
        Key("window-start", "int", doc="the first probe step of the flatness window"),
        Key("last-drop", "float",
            doc="how far the median curve fell from the window's first probe to the last"),
        Key("flat", "bool", doc="the fall stayed below the tolerance"),
    ), source="long.runs", keyed_by="curve",
        doc="one architecture trained long, at its best short-grid rate, over the seeds"),
)

_STREAM = (
    RecordSpec("ANALYSIS", (
        Key("residual", "word", doc="the residual model the analyses read"),
        Key("plain", "word", doc="the plain model of the same depth, the contrast"),
        Key("sequences", "int", doc="validation sequences of the analysis batch"),
        Key("tokens", "int", doc="predicted tokens in the analysis batch"),
    ), source="analysis", doc="the trained models and the data every analysis reads"),
    RecordSpec("STREAM", (
        Key("depth", "int", doc="blocks"), Key("tokens", "int", doc="tokens measured"),
        Key("max-error", "float",
            doc="largest absolute difference between the last state and the embedding plus "
                "the sum of every write (writes summed first)"),
        Key("max-stream", "float", doc="largest absolute value in the last state"),
        Key("relative-error", "float", doc="max-error over max-stream"),
        Key("exact-in-order", "bool",
            doc="adding the writes to the embedding in the forward's order gives the last "
                "state bit for bit"),
        Key("stream-norm", "vector", doc="norm of each state, the embedding first",
            along="the state after {i} blocks (none: the embedding)"),
        Key("attention-write-norm", "vector", doc="norm of each block's attention write",
            along="block {n}"),
        Key("mlp-write-norm", "vector", doc="norm of each block's MLP write",
            along="block {n}"),
        Key("write-norm", "vector", doc="norm of each block's whole write",
            along="block {n}"),
        Key("write-over-stream", "vector",
            doc="each block's write norm over the norm of the state it was added to",
            along="block {n}"),
        Key("cosine", "vector",
            doc="mean cosine similarity of each state with the one before it",
            along="the state after {n} blocks against the one before it"),
        Key("plain-stream-norm", "vector", doc="the plain model's state norms",
            along="the state after {i} blocks (none: the embedding)"),
        Key("plain-cosine", "vector", doc="the plain model's consecutive cosines",
            along="the state after {n} blocks against the one before it"),
        Key("rank-one-share", "vector",
            doc="of each state, the embedding first: the share of a sequence's squared norm "
                "that its largest singular value holds (one: every token the same direction), "
                "the mean over sequences",
            along="the state after {i} blocks (none: the embedding)"),
        Key("plain-rank-one-share", "vector", doc="the same for the plain model",
            along="the state after {i} blocks (none: the embedding)"),
    ), source="stream", doc="the last state as the embedding plus every block's write"),
    RecordSpec("LENS", (
        Key("residual", "vector",
            doc="loss of each state read through the final norm and unembedding, the "
                "embedding first",
            along="the state after {i} blocks (none: the embedding)"),
        Key("plain", "vector", doc="the same for the plain model",
            along="the state after {i} blocks (none: the embedding)"),
        Key("best-layer", "int", doc="the residual state with the lowest loss"),
        Key("final-minus-best", "float", doc="last state's loss minus the best state's"),
    ), source="lens", doc="the logit lens: every state read out as if it were the last"),
    RecordSpec("EARLY-EXIT-CONFIG", (
        Key("depth", "int", doc="blocks"),
        Key("full-loss", "float", doc="loss with every block run"),
        Key("thresholds", "vector", doc="the thresholds tried, in the order of the records"),
    ), source="early_exit",
        doc="a token stops once a block changes its state by less than the threshold times "
            "its norm; later tokens still read its frozen state"),
    RecordSpec("EARLY-EXIT", (
        Key("threshold", "float", doc="relative change below which a token stops"),
        Key("mean-blocks", "float", doc="blocks run per token, on average"),
        Key("loss", "float", doc="validation loss with early exit"),
        Key("stopped-early", "float", doc="share of tokens that skipped at least one block"),
    ), source="early_exit.points", keyed_by="threshold", doc="one exit threshold"),
    RecordSpec("LESION", (
        Key("model", "word", doc="which trained model"), Key("depth", "int", doc="its blocks"),
        Key("intact", "float", doc="its loss with every block"),
        Key("loss", "vector", doc="its loss with one block deleted, first block first",
            along="block {n} deleted"),
        Key("worst", "float", doc="the largest of those losses"),
        Key("median-increase", "float", doc="median deleted-block loss minus intact"),
    ), source="lesions", keyed_by="model",
        doc="delete one block at a time, the stream passing it unchanged (no retraining)"),
    RecordSpec("PRUNING", (
        Key("depth", "int", doc="blocks of the residual model"),
        Key("block-distance", "vector",
            doc="angular distance between each block's input and output (arccos of the "
                "cosine over pi, mean over tokens)",
            along="block {n}"),
        Key("angular-start", "shape",
            doc="for each count of pruned blocks from none up, the first state of the "
                "consecutive run the angular rule removed (zero when it removed none)",
            along="{i} blocks removed"),
        Key("angular", "vector",
            doc="loss after removing the consecutive run whose input and output are closest "
                "in angle, for each count from none to every block",
            along="{i} blocks removed"),
        Key("each", "vector",
            doc="loss after removing the blocks with the smallest own angular distance"),
        Key("last", "vector", doc="loss after removing the last blocks",
            along="the last {i} blocks removed"),
        Key("angular-beats-last", "int",
            doc="counts (strictly between none and all) where the angular rule ends lower"),
    ), source="pruning", doc="pruning several blocks, three ways, without healing"),
    RecordSpec("REORDER", (
        Key("model", "word", doc="the model whose blocks were swapped"),
        Key("depth", "int", doc="its blocks"),
        Key("intact", "float", doc="validation loss with the blocks in their order"),
        Key("loss", "vector",
            doc="validation loss with each neighbouring pair swapped, the first pair first",
            along="blocks {n} and the one after it swapped"),
        Key("worst-increase", "float", doc="the largest rise over the intact loss"),
        Key("median-increase", "float", doc="the median swap's rise over the intact loss"),
    ), source="reordering", doc="neighbouring blocks swapped, one pair at a time"),
)

_PRECISION_AND_COST = (
    RecordSpec("QUANTIZATION", (
        Key("case", "word", doc="model and bit width"), Key("model", "word", doc="which model"),
        Key("bits", "int", doc="bits per weight, symmetric per output channel"),
        Key("loss", "float", doc="validation loss with dequantized block weights"),
        Key("float-loss", "float", doc="the same model's loss in float"),
        Key("logit-error", "float",
            doc="root mean square of the logit change over that of the logits"),
        Key("stream-error", "vector",
            doc="relative error of each state against float, the embedding first",
            along="the state after {i} blocks (none: the embedding)"),
        Key("growth", "float", doc="relative error after the last block over after the first"),
        Key("behaviour", "word",
            doc="bounded: below one everywhere and growth at most the depth; else compounding"),
    ), source="quantization", keyed_by="case", doc="block weights quantized to few bits"),
    RecordSpec("PRECISION", (
        Key("depth", "int", doc="blocks of the residual model"),
        Key("float-loss", "float", doc="its loss in float"),
        Key("stream-max", "vector", doc="largest absolute value of each state",
            along="the state after {i} blocks (none: the embedding)"),
        Key("stream-rms", "vector", doc="root mean square of each state",
            along="the state after {i} blocks (none: the embedding)"),
        Key("update-rms", "vector", doc="root mean square of each block's update",
            along="block {n}"),
        Key("normalized-rms", "float",
            doc="root mean square of the last state after the final norm"),
    ), source="precision", doc="the stream's magnitude layer by layer"),
    RecordSpec("FORMAT", (
        Key("format", "word",
            doc="fp-sixteen (IEEE half) or bf-sixteen (emulated: float single rounded to its "
                "upper half, eight significant bits)"),
        Key("largest", "float", doc="largest finite value"),
        Key("unit-roundoff", "float", doc="half the gap between one and the next value"),
        Key("smallest-normal", "float", doc="smallest positive normal value"),
        Key("update-lost", "vector",
            doc="share of each block's update lost when its add runs in this format",
            along="block {n}"),
        Key("stream-loss", "float",
            doc="validation loss with the stream rounded after every residual add"),
        Key("final-error", "float", doc="relative error of that run's last state"),
        Key("headroom", "float",
            doc="how many times the last state could grow before it overflows"),
        Key("overflowed", "bool", doc="the rounded run overflowed (values then capped)"),
    ), source="precision.formats", keyed_by="format", doc="one half-precision format"),
    RecordSpec("FLOPS", (
        Key("setting", "word", doc="lab (the trained model) or realistic (a small LM)"),
        Key("width", "int", doc="stream width"), Key("depth", "int", doc="blocks"),
        Key("context", "int", doc="sequence length"), Key("hidden", "int", doc="MLP width"),
        Key("heads", "int", doc="attention heads"),
        Key("add", "float", doc="forward operations per token and block in the two adds"),
        Key("attention", "float",
            doc="the same for attention: projections plus scores and mixing over the mean "
                "causal context"),
        Key("mlp", "float", doc="the same for the MLP's two matrices"),
        Key("add-share", "float", doc="the adds' share of the three"),
    ), source="flops", keyed_by="setting", doc="arithmetic per token, counted"),
    RecordSpec("INTENSITY", (
        Key("precision", "name", doc="the format of the forward measured"),
        Key("add-flops", "int", doc="floating-point operations of the residual adds"),
        Key("add-bytes", "int", doc="bytes they read and write, each operand and result once"),
        Key("add-intensity", "float", doc="their operations per byte"),
        Key("matmul-flops", "int", doc="floating-point operations of every matrix product"),
        Key("matmul-bytes", "int", doc="bytes they read and write, counted alike"),
        Key("matmul-intensity", "float", doc="their operations per byte"),
        Key("ratio", "float", doc="the adds' operations per byte over the products'"),
    ), source="intensity",
        doc="arithmetic against memory traffic, counted from one forward's tape"),
    RecordSpec("MEMORY", (
        Key("depth", "int", doc="blocks of the model measured"),
        Key("batch", "int", doc="sequences in the step"), Key("tokens", "int", doc="tokens"),
        Key("nodes", "int", doc="tape nodes reachable from the loss"),
        Key("total", "int", doc="bytes the tape holds before backward"),
        Key("stream-share", "float", doc="stream states' share of the total"),
        Key("activation-stream-share", "float",
            doc="stream states' share of everything but the parameters"),
        Key("largest-activation", "word", doc="the holder, parameters aside, with most bytes"),
    ), source="memory", doc="memory one training step's tape retains, measured"),
    RecordSpec("HOLDER", (
        Key("holder", "word",
            doc="parameters, stream, norm-outputs (what each norm hands on), attention-scores, "
                "mlp-hidden, other-values (queries, keys, values, writes, logits and the like) "
                "or backward-saved (arrays only backward closures hold)"),
        Key("bytes", "int", doc="bytes, each array counted once"),
        Key("share", "float", doc="share of the total"),
    ), source="memory.holders", keyed_by="holder", doc="what holds the tape's memory"),
    RecordSpec("PROJECTION", (
        Key("blocks", "int", doc="width-changing blocks"),
        Key("batch", "int", doc="random inputs"),
        Key("gain", "float", doc="the badly scaled shortcut's factor"),
        Key("seed", "int", doc="seed of inputs and weights"),
        Key("widths", "shape", doc="stream width before each block and after the last"),
    ), source="projection", doc="shortcut matrices in blocks that change the width"),
    RecordSpec("SHORTCUT", (
        Key("kind", "word",
            doc="identity (same depth, constant width), orthogonal, random or badly-scaled"),
        Key("widths", "shape", doc="the widths this stack used"),
        Key("gradient", "vector", doc="gradient norm at each state, the input first"),
        Key("ratio", "float", doc="gradient norm at the input over at the output"),
    ), source="projection.shortcuts", keyed_by="kind", doc="one kind of shortcut"),
)

_VERDICTS = (
    RecordSpec("CLAIM", (
        Key("key", "word", doc="the claim, declared with its words and rule in the trace contract"),
        Key("verdict", "word", doc="supports, qualifies, contradicts or inconclusive"),
        Key("because", "paths", doc="the values the verdict was decided from"),
    ), source="claims", keyed_by="key",
        doc="a claim of the lab, decided by its rule over the values above"),
)

RECORDS = (NUMERICS, *_TRAINING, *_STREAM, *_PRECISION_AND_COST, *_VERDICTS)

HOLDERS = ("parameters", "stream", "norm-outputs", "attention-scores", "mlp-hidden",
           "other-values", "backward-saved")


def _holders_total(get: Get) -> int:
    return sum(get(f"HOLDER[{h}].bytes") for h in HOLDERS)


def _spreads(get: Get) -> tuple[list[tuple[float, ...]], list[tuple[float, ...]]]:
    arms = [f"ARM[{name}]" for name in get("TRAINING-CONFIG.arm-names")]
    told = [(get(f"{a}.median"), get(f"{a}.low"), get(f"{a}.high")) for a in arms]
    finals = [get(f"{a}.final-validation") for a in arms]
    return told, [(statistics.median(f), min(f), max(f)) for f in finals]


_COPIED = ("lr", "warmup", "median", "low", "high", "eval-steps", "curve-low", "curve-median",
           "curve-high")


def _best(get: Get) -> tuple[list[Any], list[Any]]:
    lowest: dict[str, tuple[float, str]] = {}  # each curve's arm with the lowest median
    for name in get("TRAINING-CONFIG.arm-names"):
        curve = get(f"ARM[{name}].curve")
        lowest[curve] = min(lowest.get(curve, (math.inf, "")),
                            (statistics.median(get(f"ARM[{name}].final-validation")), name))
    told, want = [], []
    for curve, (_, arm) in lowest.items():
        told += [get(f"BEST[{curve}].arm"), get(f"BEST[{curve}].accuracy")]
        want += [arm, statistics.median(get(f"ARM[{arm}].accuracy"))]
        told += [get(f"BEST[{curve}].{name}") for name in _COPIED]
        want += [get(f"ARM[{arm}].{name}") for name in _COPIED]
    return told, want


def _series(get: Get) -> tuple[list[Any], list[Any]]:
    told, want = [], []
    arms = [f"ARM[{name}]" for name in get("TRAINING-CONFIG.arm-names")]
    for line in dict.fromkeys((get(f"{a}.curve"), get(f"{a}.warmup")) for a in arms):
        mine = sorted((a for a in arms if (get(f"{a}.curve"), get(f"{a}.warmup")) == line),
                      key=lambda a: get(f"{a}.lr"))
        series = f"SERIES[{line[0]}-warmup{line[1]}]"
        told += [get(f"{series}.{name}") for name in ("lrs", "median", "low", "high")]
        want += [tuple(get(f"{a}.{name}") for a in mine)
                 for name in ("lr", "median", "low", "high")]
    return told, want


def _long(get: Get) -> tuple[list[Any], list[Any]]:
    told, want = [], []
    for curve in get("LONG-CONFIG.curves"):
        run = f"LONG[{curve}]"
        finals, accuracy = get(f"{run}.final-validation"), get(f"{run}.accuracy")
        steps, middle = get(f"{run}.eval-steps"), get(f"{run}.curve-median")
        start = steps.index(get(f"{run}.window-start"))
        told += [get(f"{run}.{k}") for k in ("window-start", "arm", "median", "low", "high",
                                              "accuracy-median", "accuracy-low",
                                              "accuracy-high", "last-drop", "flat")]
        drop = middle[start] - middle[-1]
        begins = (1 - get("LONG-CONFIG.window")) * get("LONG-CONFIG.steps")
        want += [next(s for s in steps if s >= begins), get(f"BEST[{curve}].arm"),
                 statistics.median(finals), min(finals), max(finals),
                 statistics.median(accuracy), min(accuracy), max(accuracy), drop,
                 drop < get("LONG-CONFIG.tolerance")]
    return told, want


INVARIANTS = (
    Invariant("ARM median, low and high are those of its final-validation", "ARM", _spreads),
    Invariant("BEST is each architecture's arm with the lowest median", "BEST", _best),
    Invariant("SERIES are the ARM records of one architecture and warm-up", "SERIES", _series),
    Invariant("LONG spreads, its arm (the BEST) and its flatness follow from its values",
              "LONG", _long),
    Invariant("each declared claim has one CLAIM record, its verdict a verdict word decided "
              "from values of this trace", "CLAIM",
              verdict_words(CLAIMS)),
    Invariant("REORDER: one swap per neighbouring pair, its increases from its losses",
              "REORDER",
              lambda get: ((len(get("REORDER.loss")), get("REORDER.worst-increase"),
                            get("REORDER.median-increase")),
                           (get("REORDER.depth") - 1,
                            max(get("REORDER.loss")) - get("REORDER.intact"),
                            statistics.median(get("REORDER.loss")) - get("REORDER.intact")))),
    Invariant("INTENSITY: each intensity is its flops over its bytes, the ratio theirs",
              "INTENSITY",
              lambda get: ((get("INTENSITY.add-intensity"), get("INTENSITY.matmul-intensity"),
                            get("INTENSITY.ratio")),
                           (get("INTENSITY.add-flops") / get("INTENSITY.add-bytes"),
                            get("INTENSITY.matmul-flops") / get("INTENSITY.matmul-bytes"),
                            get("INTENSITY.add-intensity") / get("INTENSITY.matmul-intensity")))),
    Invariant("MEMORY.total = the sum of HOLDER bytes", "MEMORY",
              lambda get: (get("MEMORY.total"), _holders_total(get))),
    Invariant("STREAM.relative-error = STREAM.max-error / STREAM.max-stream", "STREAM",
              lambda get: (get("STREAM.relative-error"),
                           get("STREAM.max-error") / get("STREAM.max-stream"))),
    Invariant("EARLY-EXIT.loss at threshold zero = EARLY-EXIT-CONFIG.full-loss", "EARLY-EXIT",
              lambda get: (get("EARLY-EXIT[0.0].loss"), get("EARLY-EXIT-CONFIG.full-loss"))),
    Invariant("LENS.residual ends at PRUNING.angular's first loss (nothing pruned)", "LENS",
              lambda get: (get("LENS.residual")[-1], get("PRUNING.angular[0]"))),
)

SCHEMA = TraceSchema(
    "residual-stream", 4, RECORDS, "engine.experiments.residual_stream:residual_stream_results",
    title="The residual stream in a small trained decoder",
    doc="the decoder lab: trainability, the stream as a sum, the logit lens and early exit, "
        "lesions and pruning, quantization, half precision, cost, projection shortcuts",
    invariants=INVARIANTS, claims=CLAIMS,
)
