"""The charts of the gradients lab (trace ``gradient-flow-v1``)."""

from __future__ import annotations

from diagrams.chart_spec import Chart, Line

TRACE = "gradient-flow-v1"
VARIANTS = (("plain", "plain"), ("residual", "residual, default init"),
            ("residual-scaled", "residual, scaled output"),
            ("residual-zero", "residual, zero output"), ("prenorm", "pre-norm residual"))

CHARTS = (
    Chart(
        "gf-sweep-gradient", TRACE, "Gradient reaching the input against depth",
        "For each variant of the ReLU stack, the norm of the gradient that reaches the input, "
        "relative to the one that leaves the output, as the stack grows deeper.",
        "depth (blocks)", "input gradient / output gradient",
        tuple(Line(label, "SWEEP-CONFIG.depths", f"SWEEP[{variant}-relu].input-gradient")
              for variant, label in VARIANTS),
        xscale="log2", yscale="log"),
    Chart(
        "gf-sweep-stream", TRACE, "Stream norm against depth",
        "For each variant of the ReLU stack, the norm of the stream after the last block.",
        "depth (blocks)", "stream norm",
        tuple(Line(label, "SWEEP-CONFIG.depths", f"SWEEP[{variant}-relu].stream-norm")
              for variant, label in VARIANTS),
        xscale="log2", yscale="log"),
)
