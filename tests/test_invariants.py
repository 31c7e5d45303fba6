"""Tests for the declared invariants of residual-connections-v2: a trace must agree with itself.

Every invariant gets a well-formed but false trace (one value changed) that the parser must
reject at the right line, naming the invariant and both sides; the golden trace passes all.
"""

from __future__ import annotations

import pytest

from tracefile import parse_trace
from tracefile.errors import TraceError
from tracefile.schemas.residual_connections import INVARIANTS

# invariant → (text replaced once, replacement, line reported)
BREAKS = {
    "FORWARD.output = FORWARD.input + FORWARD.branch": (
        "output=[1.0,-3.25]", "output=[1.0,-3.5]", 3),
    "BACKWARD.identity = BACKWARD.upstream": (
        "identity=[1.0,1.0]", "identity=[1.0,0.5]", 4),
    "BACKWARD.input = BACKWARD.identity + BACKWARD.branch": (
        "input=[0.5,3.25]", "input=[0.5,3.5]", 4),
    "PARAMETER.gradient = FORWARD.inputᵀ BACKWARD.upstream": (
        "gradient=[2.0,2.0,-1.0,-1.0]", "gradient=[2.0,2.0,-7.5,-1.0]", 5),
    "ZERO-BRANCH.output = FORWARD.input": (
        "ZERO-BRANCH name=residual.zero.weight output=[2.0,-1.0]",
        "ZERO-BRANCH name=residual.zero.weight output=[2.0,-1.5]", 6),
    "ZERO-BRANCH.input-gradient = BACKWARD.upstream": (
        "input-gradient=[1.0,1.0]", "input-gradient=[1.0,2.0]", 6),
    "ZERO-BRANCH.weight-gradient-nonzero = (ZERO-BRANCH.weight-gradient ≠ 0)": (
        "weight-gradient-nonzero=true", "weight-gradient-nonzero=false", 6),
    "SHARED-OPERAND.gradient = 2 × SHARED-OPERAND.upstream": (
        "SHARED-OPERAND upstream=[1.0,1.0] gradient=[2.0,2.0]",
        "SHARED-OPERAND upstream=[1.0,1.0] gradient=[2.0,1.0]", 8),
    "STACK-CONFIG.residual-factor = 1 + STACK-CONFIG.branch-factor": (
        "residual-factor=0.75", "residual-factor=0.5", 12),
    "STACK[0] = FORWARD.input, plain and residual": (
        "STACK depth=0 plain=[2.0,-1.0]", "STACK depth=0 plain=[2.0,-2.0]", 13),
    "RETENTION.depth = STACK-CONFIG.layers": (
        "RETENTION depth=4", "RETENTION depth=5", 19),
    "RETENTION = STACK-GRADIENT[0] / BACKWARD.upstream[0], plain and residual": (
        "RETENTION depth=4 plain=0.00390625", "RETENTION depth=4 plain=0.0078125", 19),
    "ZERO-INPUT.jacobian = CONFIG.weightᵀ": (
        "jacobian=[0.5,2.0,-1.0,0.25]", "jacobian=[0.5,-1.0,2.0,0.25]", 23),
    "SILENT-SCALE.output = FORWARD.input (a zero scale silences the branch)": (
        "SILENT-SCALE alpha=0.0 output=[2.0,-1.0]", "SILENT-SCALE alpha=0.0 output=[1.0,-3.25]",
        24),
    "SILENT-SCALE.alpha-gradient = FORWARD.branch · BACKWARD.upstream": (
        "alpha-gradient=-3.25", "alpha-gradient=-3.0", 24),
    "SILENT-SCALE.weight-moves-first = (SILENT-SCALE.weight-gradient ≠ 0)": (
        "weight-moves-first=false", "weight-moves-first=true", 24),
    "GRADCHECK.passed = (GRADCHECK.max-error ≤ GRADCHECK.tolerance)": (
        "max-error=5.869134673213756e-10", "max-error=0.5", 20),
}


def test_every_invariant_has_a_breaking_case() -> None:
    assert sorted(BREAKS) == sorted(invariant.text for invariant in INVARIANTS)


def test_the_golden_trace_holds_every_invariant(trace_text: str) -> None:
    parse_trace(trace_text)


@pytest.mark.parametrize("text", sorted(BREAKS))
def test_a_false_but_well_formed_trace_is_rejected(trace_text: str, text: str) -> None:
    old, new, line = BREAKS[text]
    assert old in trace_text
    with pytest.raises(TraceError) as caught:
        parse_trace(trace_text.replace(old, new, 1), "false.trace")
    message = str(caught.value)
    assert message.startswith(f"false.trace:{line}: invariant {text} does not hold: ")
    assert "the left side is" in message and "the right side" in message
