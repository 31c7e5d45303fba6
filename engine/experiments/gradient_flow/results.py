"""All of the gradients lab at once: the producer of trace ``gradient-flow-v4``.

Contract: `gradient_flow_results()` runs every experiment the lab's modules register
(`engine.experiments.registry`) with its default configuration and the lab's seed, and
returns their results by name with the claims decided, the object the trace's declaration
(tracefile/schemas/gradient_flow.py) reads its values from. Every experiment draws its
randomness from generators seeded by ``(seed, purpose, ...)`` tuples, so the same seed gives
the same bits with the same kernels, which the results name (`engine.numerics`).
"""

from __future__ import annotations

from typing import Any

from engine.experiments.gradient_flow.common import TRACE
from engine.experiments.registry import Experiment, LabResults, register, run_lab
from engine.numerics import current
from tracefile.schemas.gradient_flow import SCHEMA

#: The lab's seed (the chapter's number); the experiments without randomness ignore it.
LAB_SEED = 24

register(Experiment(TRACE, "numerics", None, lambda seed, config: current()))


def gradient_flow_results(seed: int = LAB_SEED, configs: dict[type, Any] | None = None
                          ) -> LabResults:
    """Run every experiment of the lab, each with ``configs[its config class]`` if given (a
    smaller grid, say), else its default configuration."""
    return run_lab(SCHEMA, seed, configs)
