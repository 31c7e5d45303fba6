"""All of the residual-stream lab at once: the producer of trace ``residual-stream-v4``.

Contract: `residual_stream_results()` runs every experiment the lab's modules register
(`engine.experiments.registry`) with its default configuration and the lab's seed, and
returns their results by name with the claims decided, the object the trace's declaration
(tracefile/schemas/residual_stream.py) reads its values from. The lab's decoders are trained
once (experiment 1, and the longer runs 1b); every analysis reads those trained weights and
changes none of them. Nothing timed enters the results, so the same seed gives the same bits
with the same kernels, which the results name (`engine.numerics`).
"""

from __future__ import annotations

from typing import Any

from engine.experiments.registry import Experiment, LabResults, register, run_lab
from engine.experiments.residual_stream.corpus import TRACE
from engine.numerics import current
from tracefile.schemas.residual_stream import SCHEMA

#: The lab's seed (the chapter's number).
LAB_SEED = 24

register(Experiment(TRACE, "numerics", None, lambda seed, config: current()))


def residual_stream_results(seed: int = LAB_SEED, configs: dict[type, Any] | None = None
                            ) -> LabResults:
    """Run every experiment of the lab, each with ``configs[its config class]`` if given (a
    smaller grid, say), else its default configuration."""
    return run_lab(SCHEMA, seed, configs)
