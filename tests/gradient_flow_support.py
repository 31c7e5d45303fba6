"""The gradients lab run once per test process, shared by its test modules.

The full run takes a few seconds, so the experiment checks and the trace checks share one
run (and one rendering of it) instead of each module running the lab again.
"""

from __future__ import annotations

from functools import cache

from engine.experiments.gradient_flow import GradientFlowResults, gradient_flow_results
from engine.trace import render_trace

TRACE_ID = "gradient-flow-v2"


@cache
def lab_results() -> GradientFlowResults:
    return gradient_flow_results()


@cache
def lab_trace() -> str:
    return render_trace(TRACE_ID, lab_results())
