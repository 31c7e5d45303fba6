"""The charts of the decoder lab (trace ``residual-stream-v4``), placed on
``docs/labs/residual-stream.md``.

Positions: a vector that starts with the embedding (stream norms, the logit lens, quantization
errors, gradients at each state) is drawn from position zero, so the value at position ``k`` is
the state after block ``k``; a vector with one value per block (writes, cosines, lost updates)
starts at position one, so block ``k`` sits above the state it produced.
"""

from __future__ import annotations

from diagrams.chart_spec import POSITIONS, Chart, Line, Yardstick

TRACE = "residual-stream-v4"
#: The trainability runs drawn against the step, in the order of the trace.
DEPTHS = (("two", "two blocks"), ("four", "four blocks"), ("eight", "eight blocks"))
STATE_AXIS = "blocks run (zero: the embedding)"
BLOCK_AXIS = "block"
#: Narrower than the plots' default, so that a phone, which scales a chart down to its column,
#: still shows the labels at a readable size.
SIZE = (4.8, 3.4)


def _best(curve: str, label: str, look: str) -> Line:
    """An architecture at its best learning rate: the median over seeds, the band their
    range."""
    best = f"BEST[{curve}]"
    return Line(label, f"{best}.eval-steps", f"{best}.curve-median", low=f"{best}.curve-low",
                high=f"{best}.curve-high", look=look)


def _rates(series: str, label: str, look: str) -> Line:
    """Final validation loss against the peak learning rate: median, band the range."""
    at = f"SERIES[{series}]"
    return Line(label, f"{at}.lrs", f"{at}.median", low=f"{at}.low", high=f"{at}.high",
                look=look)


LOSS_AXIS = "validation loss (nats per token)"
#: The corpus's yardsticks, drawn on every loss chart of the training grid.
YARDSTICKS = (Yardstick("unigram", "CORPUS.unigram"),
              Yardstick("format only", "CORPUS.format-only"),
              Yardstick("generator’s floor", "CORPUS.generator"))
YARDSTICK_TEXT = (" Dotted lines: the unigram loss, the format-only loss and the generator's "
                  "floor.")
BAND = " The line is the median over seeds, the shaded band their range."

CHARTS = (
    Chart(
        "rs-training-residual", TRACE, "Validation loss of residual decoders by depth",
        "Validation loss during training for residual pre-norm decoders of three depths, each "
        "at its own best learning rate." + BAND + YARDSTICK_TEXT,
        "training step", LOSS_AXIS,
        tuple(_best(f"residual-prenorm-{word}", f"residual, {label}", f"residual/{word}")
              for word, label in DEPTHS),
        fmt="fixed6", size=SIZE, references=YARDSTICKS, shares_y_with=("rs-training-plain",)),
    Chart(
        "rs-training-plain", TRACE, "Validation loss of plain decoders by depth",
        "Validation loss during training for plain pre-norm decoders, the residual decoders "
        "with their adds removed, at the same three depths, each at its own best learning "
        "rate." + BAND + YARDSTICK_TEXT,
        "training step", LOSS_AXIS,
        tuple(_best(f"plain-prenorm-{word}", f"plain, {label}", f"plain/{word}")
              for word, label in DEPTHS),
        fmt="fixed6", size=SIZE, references=YARDSTICKS, shares_y_with=("rs-training-residual",)),
    Chart(
        "rs-learning-rates", TRACE, "Final validation loss against the learning rate",
        "Final validation loss of every pre-norm decoder, residual and plain at each depth, "
        "at each peak learning rate of the grid." + BAND + YARDSTICK_TEXT,
        "peak learning rate", LOSS_AXIS,
        (*(_rates(f"residual-prenorm-{word}-warmup0", f"residual, {label}", f"residual/{word}")
           for word, label in DEPTHS),
         *(_rates(f"plain-prenorm-{word}-warmup0", f"plain, {label}", f"plain/{word}")
           for word, label in DEPTHS)),
        xscale="log", fmt="fixed6", size=SIZE, references=YARDSTICKS),
    Chart(
        "rs-norm-placement", TRACE, "Post-norm's final loss by learning rate and warm-up",
        "Final validation loss of the deepest residual decoder with the norm after each add "
        "(post-norm), at each peak learning rate, without warm-up and with the longest "
        "warm-up, beside pre-norm without warm-up." + BAND + YARDSTICK_TEXT,
        "peak learning rate", LOSS_AXIS,
        (_rates("residual-prenorm-eight-warmup0", "pre-norm, no warm-up", "pre-norm"),
         _rates("residual-postnorm-eight-warmup0", "post-norm, no warm-up", "post-norm"),
         _rates("residual-postnorm-eight-warmup100", "post-norm, warm-up", "post-norm/warm-up")),
        xscale="log", fmt="fixed6", size=SIZE, references=YARDSTICKS),
    Chart(
        "rs-long-training", TRACE, "Validation loss of the two-block decoders trained longer",
        "Validation loss during the long runs: the two-block residual and plain pre-norm "
        "decoders, each at its best learning rate of the grid, trained for many more steps "
        "than the grid's runs." + BAND + YARDSTICK_TEXT,
        "training step", LOSS_AXIS,
        tuple(Line(label, f"LONG[{curve}].eval-steps", f"LONG[{curve}].curve-median",
                   low=f"LONG[{curve}].curve-low", high=f"LONG[{curve}].curve-high",
                   look=look)
              for curve, label, look in (("residual-prenorm-two", "residual, two blocks",
                                          "residual/two"),
                                         ("plain-prenorm-two", "plain, two blocks", "plain/two"))),
        fmt="fixed6", size=SIZE, references=YARDSTICKS),
    Chart(
        "rs-stream-norms", TRACE, "Stream norm and write norms, block by block",
        "For the deepest trained residual decoder, the mean norm of the stream after each "
        "block (the embedding first) and of what each block's attention and MLP wrote into it.",
        STATE_AXIS, "mean norm per token",
        (Line("stream after the block", POSITIONS, "STREAM.stream-norm", first=0,
              look="quantity/1"),
         Line("attention write", POSITIONS, "STREAM.attention-write-norm", look="quantity/2"),
         Line("MLP write", POSITIONS, "STREAM.mlp-write-norm", look="quantity/3")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-cosine", TRACE, "Cosine of each state with the one before it",
        "For the deepest residual and plain decoders, the mean cosine similarity between the "
        "stream entering each block and the stream leaving it.",
        BLOCK_AXIS, "cosine of input and output",
        (Line("residual", POSITIONS, "STREAM.cosine", look="residual"),
         Line("plain", POSITIONS, "STREAM.plain-cosine", look="plain")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-rank-collapse", TRACE, "How much of each state lies in one direction",
        "For the deepest residual and plain decoders, the share of a sequence's squared stream "
        "norm that its largest singular value holds, the embedding first: one means every "
        "token carries the same vector up to scale.",
        STATE_AXIS, "share in the top direction",
        (Line("residual", POSITIONS, "STREAM.rank-one-share", first=0, look="residual"),
         Line("plain", POSITIONS, "STREAM.plain-rank-one-share", first=0, look="plain")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-logit-lens", TRACE, "Loss of every state read out as if it were the last",
        "The logit lens: the validation loss of each stream state passed through the final "
        "norm and the unembedding, for the deepest residual and plain decoders, the embedding "
        "first.",
        STATE_AXIS, "validation loss (nats per token)",
        (Line("residual", POSITIONS, "LENS.residual", first=0, look="residual"),
         Line("plain", POSITIONS, "LENS.plain", first=0, look="plain")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-early-exit", TRACE, "Early exit: loss against blocks run",
        "For the deepest residual decoder, each exit threshold's mean number of blocks run per "
        "token and the validation loss it reached; a token stops once a block changes its "
        "state by less than the threshold relative to the state's norm.",
        "blocks run per token (mean)", "validation loss (nats per token)",
        (Line("early exit", "EARLY-EXIT[*].mean-blocks", "EARLY-EXIT[*].loss",
              look="quantity/1"),),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-pruning", TRACE, "Pruning blocks: loss against blocks removed",
        "For the deepest residual decoder without retraining, the validation loss after "
        "removing a number of blocks, chosen by angular distance or simply the last ones.",
        "blocks removed", "validation loss (nats per token)",
        (Line("closest in angle (a consecutive run)", POSITIONS, "PRUNING.angular", first=0,
              look="quantity/1"),
         Line("the last blocks", POSITIONS, "PRUNING.last", first=0, look="quantity/2")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-quantization", TRACE, "Quantization error of the stream, block by block",
        "The relative error of each stream state when every block matrix is rounded to eight "
        "or four bits, for the deepest residual and plain decoders; the embedding is not "
        "quantized, so its error is zero and falls off the logarithmic axis.",
        STATE_AXIS, "relative error of the state",
        tuple(Line(f"{model}, {bits} bits", POSITIONS,
                   f"QUANTIZATION[{model}-{bits}-bit].stream-error", first=0,
                   look=f"{model}/{bits}-bit")
              for model in ("residual", "plain") for bits in ("eight", "four")),
        yscale="log", size=SIZE),
    Chart(
        "rs-precision", TRACE, "Share of each block's update lost in half precision",
        "For the deepest residual decoder, the share of each block's update that is lost when "
        "its residual add is done in IEEE half precision or in bfloat.",
        BLOCK_AXIS, "share of the update lost",
        (Line("IEEE half precision", POSITIONS, "FORMAT[fp-sixteen].update-lost",
              look="quantity/1"),
         Line("bfloat, emulated", POSITIONS, "FORMAT[bf-sixteen].update-lost",
              look="quantity/2")),
        yscale="log", size=SIZE),
    Chart(
        "rs-projection", TRACE, "Gradient through stacks with projection shortcuts",
        "The gradient norm at each state of a stack of blocks that widen the stream, for three "
        "kinds of shortcut matrix, next to a stack of the same depth with identity shortcuts; "
        "the input first.",
        "blocks from the input (zero: the input)", "gradient norm",
        tuple(Line(label, POSITIONS, f"SHORTCUT[{kind}].gradient", first=0,
                   look=f"quantity/{place}")
              for place, (kind, label) in enumerate(
                  (("identity", "identity (no widening)"), ("orthogonal", "orthogonal"),
                   ("random", "random, well scaled"), ("badly-scaled", "random, badly scaled")),
                  1)),
        yscale="log", size=SIZE),
)
