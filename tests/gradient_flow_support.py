"""The gradients lab run once per test process, shared by its test modules.

Its training grid is cut to the runs whose curves the page draws (the lab's seed and learning
rate, the original two initializations), so the run takes a few seconds; the experiment checks
and the trace checks share it. The whole lab, grid and all, runs in the slow golden test.
"""

from __future__ import annotations

from functools import cache

from engine.experiments.gradient_flow import gradient_flow_results
from engine.experiments.gradient_flow.clipping import ClippingConfig
from engine.experiments.gradient_flow.training import StackTrainingConfig
from engine.experiments.registry import LabResults
from engine.trace import trace_text

TRACE_ID = "gradient-flow-v4"
#: The grid cut to the runs the page's curves show.
LAB_TRAINING = StackTrainingConfig(seeds=(24,), lrs=(StackTrainingConfig().lr,),
                                   inits=("default", "zero"))
#: The clipping grid cut to one seed and a rate at which each model does its best.
LAB_CLIPPING = ClippingConfig(seeds=(24,), lrs=(0.01, 1.0))


@cache
def lab_results() -> LabResults:
    return gradient_flow_results(configs={StackTrainingConfig: LAB_TRAINING,
                                          ClippingConfig: LAB_CLIPPING})


@cache
def lab_trace() -> str:
    return trace_text(TRACE_ID, lab_results())
