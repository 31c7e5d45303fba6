"""The charts of the decoder lab (trace ``residual-stream-v2``), placed on
``docs/labs/residual-stream.md``.

Positions: a vector that starts with the embedding (stream norms, the logit lens, quantization
errors, gradients at each state) is drawn from position zero, so the value at position ``k`` is
the state after block ``k``; a vector with one value per block (writes, cosines, lost updates)
starts at position one, so block ``k`` sits above the state it produced.
"""

from __future__ import annotations

from diagrams.chart_spec import POSITIONS, Chart, Line

TRACE = "residual-stream-v2"
#: The trainability runs drawn against the step, in the order of the trace.
DEPTHS = (("two", "two blocks"), ("four", "four blocks"), ("eight", "eight blocks"))
STATE_AXIS = "blocks run (zero: the embedding)"
BLOCK_AXIS = "block"
#: Narrower than the plots' default, so that a phone, which scales a chart down to its column,
#: still shows the labels at a readable size.
SIZE = (4.8, 3.4)


def _curve(curve: str, label: str, style: int | None = None) -> Line:
    return Line(label, f"TRAINING[{curve}].eval-steps", f"TRAINING[{curve}].validation",
                style=style)


CHARTS = (
    Chart(
        "rs-training-residual", TRACE, "Validation loss of residual decoders by depth",
        "Validation loss during training for residual pre-norm decoders of three depths, all "
        "of one width and trained with the same steps, batch and learning rate.",
        "training step", "validation loss (nats per token)",
        tuple(_curve(f"residual-prenorm-{word}", label, style=place)
              for place, (word, label) in enumerate(DEPTHS)),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-training-plain", TRACE, "Validation loss of plain decoders by depth",
        "Validation loss during training for plain pre-norm decoders, the residual decoders "
        "with their adds removed, at the same three depths and with the same settings; the "
        "four-block and eight-block curves lie on top of each other.",
        "training step", "validation loss (nats per token)",
        tuple(_curve(f"plain-prenorm-{word}", label, style=place)
              for place, (word, label) in enumerate(DEPTHS)),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-norm-placement", TRACE, "Validation loss of pre-norm and post-norm residual decoders",
        "Validation loss during training for the deepest residual decoder with the norm inside "
        "each branch (pre-norm) and with the norm after each add (post-norm), both without "
        "warm-up.",
        "training step", "validation loss (nats per token)",
        (_curve("residual-prenorm-eight", "pre-norm, eight blocks", style=2),
         _curve("residual-postnorm-eight", "post-norm, eight blocks", style=4)),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-stream-norms", TRACE, "Stream norm and write norms, block by block",
        "For the deepest trained residual decoder, the mean norm of the stream after each "
        "block (the embedding first) and of what each block's attention and MLP wrote into it.",
        STATE_AXIS, "mean norm per token",
        (Line("stream after the block", POSITIONS, "STREAM.stream-norm", first=0),
         Line("attention write", POSITIONS, "STREAM.attention-write-norm"),
         Line("MLP write", POSITIONS, "STREAM.mlp-write-norm")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-cosine", TRACE, "Cosine of each state with the one before it",
        "For the deepest residual and plain decoders, the mean cosine similarity between the "
        "stream entering each block and the stream leaving it.",
        BLOCK_AXIS, "cosine of input and output",
        (Line("residual", POSITIONS, "STREAM.cosine"),
         Line("plain", POSITIONS, "STREAM.plain-cosine")),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-logit-lens", TRACE, "Loss of every state read out as if it were the last",
        "The logit lens: the validation loss of each stream state passed through the final "
        "norm and the unembedding, for the deepest residual and plain decoders, the embedding "
        "first.",
        STATE_AXIS, "validation loss (nats per token)",
        (Line("residual", POSITIONS, "LENS.residual", first=0),
         Line("plain", POSITIONS, "LENS.plain", first=0)),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-early-exit", TRACE, "Early exit: loss against blocks run",
        "For the deepest residual decoder, each exit threshold's mean number of blocks run per "
        "token and the validation loss it reached; a token stops once a block changes its "
        "state by less than the threshold relative to the state's norm.",
        "blocks run per token (mean)", "validation loss (nats per token)",
        (Line("early exit", "EARLY-EXIT[*].mean-blocks", "EARLY-EXIT[*].loss"),),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-pruning", TRACE, "Pruning blocks: loss against blocks removed",
        "For the deepest residual decoder without retraining, the validation loss after "
        "removing a number of blocks, chosen by angular distance or simply the last ones.",
        "blocks removed", "validation loss (nats per token)",
        (Line("closest in angle (a consecutive run)", POSITIONS, "PRUNING.angular", first=0),
         Line("the last blocks", POSITIONS, "PRUNING.last", first=0)),
        fmt="fixed6", size=SIZE),
    Chart(
        "rs-quantization", TRACE, "Quantization error of the stream, block by block",
        "The relative error of each stream state when every block matrix is rounded to eight "
        "or four bits, for the deepest residual and plain decoders; the embedding is not "
        "quantized, so its error is zero and falls off the logarithmic axis.",
        STATE_AXIS, "relative error of the state",
        (Line("residual, eight bits", POSITIONS, "QUANTIZATION[residual-eight-bit].stream-error",
              first=0),
         Line("residual, four bits", POSITIONS, "QUANTIZATION[residual-four-bit].stream-error",
              first=0),
         Line("plain, eight bits", POSITIONS, "QUANTIZATION[plain-eight-bit].stream-error",
              first=0),
         Line("plain, four bits", POSITIONS, "QUANTIZATION[plain-four-bit].stream-error",
              first=0)),
        yscale="log", size=SIZE),
    Chart(
        "rs-precision", TRACE, "Share of each block's update lost in half precision",
        "For the deepest residual decoder, the share of each block's update that is lost when "
        "its residual add is done in IEEE half precision or in bfloat.",
        BLOCK_AXIS, "share of the update lost",
        (Line("IEEE half precision", POSITIONS, "FORMAT[fp-sixteen].update-lost"),
         Line("bfloat, emulated", POSITIONS, "FORMAT[bf-sixteen].update-lost")),
        yscale="log", size=SIZE),
    Chart(
        "rs-projection", TRACE, "Gradient through stacks with projection shortcuts",
        "The gradient norm at each state of a stack of blocks that widen the stream, for three "
        "kinds of shortcut matrix, next to a stack of the same depth with identity shortcuts; "
        "the input first.",
        "blocks from the input (zero: the input)", "gradient norm",
        (Line("identity (no widening)", POSITIONS, "SHORTCUT[identity].gradient", first=0),
         Line("orthogonal", POSITIONS, "SHORTCUT[orthogonal].gradient", first=0),
         Line("random, well scaled", POSITIONS, "SHORTCUT[random].gradient", first=0),
         Line("random, badly scaled", POSITIONS, "SHORTCUT[badly-scaled].gradient", first=0)),
        yscale="log", size=SIZE),
)
