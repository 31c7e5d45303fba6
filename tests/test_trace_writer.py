"""Tests for engine/trace.py: the trace against its golden file and the grammar's rules."""

from __future__ import annotations

import dataclasses
import re

import pytest
from golden_support import GOLDEN_DIR, assert_matches_golden

from engine.errors import EngineError
from engine.fixtures import ScaledOutput, chapter_results
from engine.trace import (
    FOOTER,
    HEADER,
    render_trace,
    trace_float,
    trace_name,
    trace_names,
    trace_shape,
    trace_vector,
    trace_word,
)

GOLDEN = GOLDEN_DIR / "residual-connections-v1.trace"
RECORD = re.compile(r"[A-Z][A-Z-]*( [a-z][a-z-]*=[^ =]+)+")
ORDER = [
    "CONFIG", "FORWARD", "BACKWARD", "PARAMETER", "ZERO-BRANCH", "SHAPE-ERROR",
    "SHARED-OPERAND", "SCALED", "SCALED", "SCALED", "STACK-CONFIG", "STACK", "STACK",
    "STACK", "STACK", "STACK", "STACK-GRADIENT", "RETENTION", "GRADCHECK", "PROOF", "REPLAY",
]


def test_trace_matches_golden_byte_for_byte():
    assert_matches_golden(render_trace(), GOLDEN, "render_trace()")


def test_a_changed_result_fails_the_trace_gate():
    changed = dataclasses.replace(chapter_results(), replay_bitwise=False)
    expected = re.escape("-REPLAY bitwise=true\n+REPLAY bitwise=false")
    with pytest.raises(AssertionError, match=expected):
        assert_matches_golden(render_trace(changed), GOLDEN, "render_trace()")


def test_trace_layout_follows_the_grammar():
    text = render_trace()
    assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text
    lines = text.split("\n")[:-1]
    assert lines[0] == HEADER == "TRACE residual-connections-v1 BEGIN"
    assert lines[-1] == FOOTER == "TRACE residual-connections-v1 END"
    for line in lines[1:-1]:
        assert RECORD.fullmatch(line), line
    assert [line.split(" ", 1)[0] for line in lines[1:-1]] == ORDER


def test_gradcheck_record_carries_the_real_max_error():
    results = chapter_results()
    line = next(line for line in render_trace(results).splitlines() if "GRADCHECK" in line)
    assert f"max-error={results.gradcheck.max_error!r} " in line
    assert float(line.split("max-error=")[1].split()[0]) == results.gradcheck.max_error


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1.0"), (-2.25, "-2.25"), (2e-06, "2e-06"), (0.00390625, "0.00390625"),
     (0.1 + 0.2, "0.30000000000000004")],
)
def test_floats_are_shortest_round_trip(value, text):
    assert trace_float(value) == text
    assert float(text) == value


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_refused(value):
    with pytest.raises(EngineError, match=r"^trace: refusing to write the non-finite float"):
        trace_vector([1.0, value])


def test_value_writers():
    assert trace_vector([2, -1]) == "[2.0,-1.0]"
    assert trace_shape((2, 2)) == "[2,2]"
    assert trace_names(["a.b", "c"]) == "a.b,c"
    for bad in ["has space", "a=b", "a,b", "a[0]", ""]:
        with pytest.raises(EngineError, match="is not a valid name"):
            trace_name(bad)
    for bad in ["Exact", "9x", "a_b", ""]:
        with pytest.raises(EngineError, match="is not a valid word"):
            trace_word(bad)
    for writer, empty in [(trace_vector, []), (trace_shape, ()), (trace_names, [])]:
        with pytest.raises(EngineError, match="at least one"):
            writer(empty)


def test_trace_renders_the_results_it_is_given():
    results = chapter_results()
    failed = dataclasses.replace(results, replay_bitwise=False)
    assert render_trace(failed).endswith("REPLAY bitwise=false\n" + FOOTER + "\n")
    unordered = dataclasses.replace(
        results, scaled=(ScaledOutput(1.0, (1.0, 1.0)), ScaledOutput(0.5, (1.0, 1.0)))
    )
    with pytest.raises(EngineError, match="SCALED alphas must strictly increase"):
        render_trace(unordered)
