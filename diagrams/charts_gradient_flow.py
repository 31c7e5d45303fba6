"""The charts of the gradients lab (trace ``gradient-flow-v4``), placed on
``docs/labs/gradient-flow.md``."""

from __future__ import annotations

from diagrams.chart_spec import POSITIONS, Chart, Line

TRACE = "gradient-flow-v4"
#: The variants of the depth sweep: (trace name, legend label, look).
VARIANTS = (("plain", "plain", "plain"), ("residual", "residual, default init", "residual"),
            ("residual-scaled", "residual, scaled output", "residual-scaled"),
            ("residual-zero", "residual, zero output", "residual-zero"),
            ("prenorm", "pre-norm residual", "pre-norm"))
#: The training curves, in the order of the trace: (curve, legend label, look). Plain stacks
#: start at the default initialization, residual ones with their branches at zero.
TRAINED = (("plain-2", "plain, two blocks", "plain/two"),
           ("plain-8", "plain, eight blocks", "plain/eight"),
           ("plain-32", "plain, thirty-two blocks", "plain/thirty-two"),
           ("residual-2", "residual, zero start, two blocks", "residual-zero/two"),
           ("residual-8", "residual, zero start, eight blocks", "residual-zero/eight"),
           ("residual-32", "residual, zero start, thirty-two blocks",
            "residual-zero/thirty-two"))


def _placement(blocks: str, words: str) -> Chart:
    return Chart(
        f"gf-placement-{words}", TRACE,
        f"Output-projection gradient per block, post-norm and pre-norm, {words} blocks",
        "For post-norm and pre-norm stacks at initialization, the mean over seeds of the "
        "gradient norm of each block's output projection, from the input side to the output "
        "side; the shaded band runs from the smallest to the largest seed.",
        "block (input side first)", "gradient norm of the output projection",
        (Line("post-norm", POSITIONS, f"PLACEMENT[postnorm-{blocks}].gradient-mean",
              f"PLACEMENT[postnorm-{blocks}].gradient-low",
              f"PLACEMENT[postnorm-{blocks}].gradient-high", look="post-norm"),
         Line("pre-norm", POSITIONS, f"PLACEMENT[prenorm-{blocks}].gradient-mean",
              f"PLACEMENT[prenorm-{blocks}].gradient-low",
              f"PLACEMENT[prenorm-{blocks}].gradient-high", look="pre-norm")),
        fmt="fixed6")


#: The (variant, initialization) lines of the by-depth chart: every start but the residual
#: default one, whose deeper stacks diverge (their losses are capped at the largest float).
DRAWN_STARTS = (("plain", "default", "plain/default-start"),
                ("plain", "scaled", "plain/scaled-start"), ("plain", "zero", "plain/zero-start"),
                ("residual", "scaled", "residual-scaled"), ("residual", "zero", "residual-zero"))

#: The branch gain of the random stack, and the gains whose paths were enumerated, in words.
STACK_GAIN = "0.5"
PATH_GAINS = (("0.25", "one quarter"), ("0.5", "one half"), ("1.0", "one"))

CHARTS = (
    Chart(
        "gf-sweep-gradient", TRACE, "Gradient reaching the input against depth",
        "For each variant of the ReLU stack, the norm of the gradient that reaches the input, "
        "relative to the one that leaves the output, as the stack grows deeper.",
        "depth (blocks)", "input gradient / output gradient",
        tuple(Line(label, "SWEEP-CONFIG.depths", f"SWEEP[{variant}-relu].input-gradient",
                   look=look) for variant, label, look in VARIANTS),
        xscale="log2", yscale="log"),
    Chart(
        "gf-sweep-stream", TRACE, "Stream norm against depth",
        "For each variant of the ReLU stack, the norm of the stream after the last block.",
        "depth (blocks)", "stream norm",
        tuple(Line(label, "SWEEP-CONFIG.depths", f"SWEEP[{variant}-relu].stream-norm",
                   look=look) for variant, label, look in VARIANTS),
        xscale="log2", yscale="log"),
    Chart(
        "gf-deepest-first", TRACE, "First-layer weight gradient per block of the deepest stacks",
        "For each variant of the deepest ReLU stack except the zero-output one, whose "
        "first-layer gradients are all exactly zero, the norm of the gradient of each block's "
        "first weight matrix, from the input side to the output side.",
        "block (input side first)", "gradient norm of the first weight",
        tuple(Line(label, POSITIONS, f"DEEPEST[{variant}-relu].first-weight-gradient",
                   look=look)
              for variant, label, look in VARIANTS if variant != "residual-zero"),
        yscale="log"),
    Chart(
        "gf-deepest-projection", TRACE,
        "Output-projection gradient per block of the deepest stacks",
        "For each variant of the deepest ReLU stack, the norm of the gradient of each block's "
        "output projection, the matrix whose product joins the stream, from the input side "
        "to the output side.",
        "block (input side first)", "gradient norm of the output projection",
        tuple(Line(label, POSITIONS, f"DEEPEST[{variant}-relu].projection-gradient", look=look)
              for variant, label, look in VARIANTS),
        yscale="log"),
    Chart(
        "gf-random-paths", TRACE, "Gradient by path length in a random linear residual stack",
        "For the random linear residual stack, by path length (the number of branches a path "
        "passes through): how many paths there are, the mean magnitude of one path's "
        "gradient, every path enumerated, with the band from the least to the largest, and "
        "the norm of the gradient all paths of that length carry together.",
        "path length (branches passed through)", "value (log scale)",
        (Line("number of paths", "RANDOM-PATH[*].length", "RANDOM-PATH[*].count",
              look="quantity/1"),
         Line("magnitude of one path", f"PATH-MAGNITUDE[{STACK_GAIN}].lengths",
              f"PATH-MAGNITUDE[{STACK_GAIN}].mean", low=f"PATH-MAGNITUDE[{STACK_GAIN}].low",
              high=f"PATH-MAGNITUDE[{STACK_GAIN}].high", look="quantity/2"),
         Line("norm of all paths of this length together", "RANDOM-PATH[*].length",
              "RANDOM-PATH[*].norm", look="quantity/3")),
        yscale="log"),
    Chart(
        "gf-path-gains", TRACE, "Where the gradient's paths peak, by branch gain",
        "Every path of the random linear residual stack enumerated at three branch gains (the "
        "same weights, scaled): for each path length, the sum of the magnitudes of its paths' "
        "gradients.",
        "path length (branches passed through)", "total magnitude of its paths (log scale)",
        tuple(Line(f"gain {label}", f"PATH-MAGNITUDE[{gain}].lengths",
                   f"PATH-MAGNITUDE[{gain}].total", look=f"quantity/{place}")
              for place, (gain, label) in enumerate(PATH_GAINS, 1)),
        yscale="log"),
    _placement("12", "twelve"),
    _placement("24", "twenty-four"),
    Chart(
        "gf-training", TRACE, "Training loss of plain and residual stacks",
        "Full-batch training loss of plain and residual ReLU stacks of three depths, all "
        "trained on one regression task with the same steps and learning rate.",
        "step", "training loss (mean squared error)",
        tuple(Line(label, f"TRAINING[{curve}].steps", f"TRAINING[{curve}].loss", look=look)
              for curve, label, look in TRAINED),
        yscale="log", fmt="fixed6"),
    Chart(
        "gf-training-depth", TRACE, "Final loss by depth, each initialization at its best rate",
        "Final training loss of plain and residual stacks against depth, for each "
        "initialization of the output projections that trains at some depth, each depth at "
        "its best learning rate (residual stacks with the default start diverge past the "
        "smallest depth and are not drawn). The line is the median over seeds, the shaded "
        "band their range.",
        "blocks", "final loss (mean squared error)",
        tuple(Line(f"{variant}, {init} start", f"BY-DEPTH[{variant}-{init}].depths",
                   f"BY-DEPTH[{variant}-{init}].median", low=f"BY-DEPTH[{variant}-{init}].low",
                   high=f"BY-DEPTH[{variant}-{init}].high", look=look)
              for variant, init, look in DRAWN_STARTS),
        xscale="log2", yscale="log", fmt="fixed6"),
)
