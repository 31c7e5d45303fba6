"""Tests for engine/trace.py and tracefile/writer.py: the trace against its golden file, the
grammar's rules and the one value writer."""

from __future__ import annotations

import dataclasses
import re

import pytest
from golden_support import assert_matches_golden
from paths import GOLDEN_TRACE

from engine.errors import EngineError
from engine.trace import CHAPTER_TRACE, trace_text
from engine.worked_example import ScaledOutput, chapter_results
from tracefile.schemas import SCHEMAS
from tracefile.values import ValueProblem, write_value

HEADER = SCHEMAS[CHAPTER_TRACE].header
FOOTER = SCHEMAS[CHAPTER_TRACE].footer

RECORD = re.compile(r"[A-Z][A-Z-]*( [a-z][a-z-]*=[^ =]+)+")


def declared_order(results: object) -> list[str]:
    """The record kinds in declared order, a keyed record once per item of its source."""
    from tracefile.writer import lookup

    schema = SCHEMAS[CHAPTER_TRACE]
    return [spec.kind for spec in schema.records
            for _ in (lookup(results, spec.source) if spec.keyed_by else (None,))]


def test_trace_matches_golden_byte_for_byte():
    assert_matches_golden(trace_text(), GOLDEN_TRACE, "trace_text()")


def test_a_changed_result_fails_the_trace_gate():
    changed = dataclasses.replace(chapter_results(), replay_bitwise=False)
    expected = re.escape("-REPLAY bitwise=true\n+REPLAY bitwise=false")
    with pytest.raises(AssertionError, match=expected):
        assert_matches_golden(trace_text(CHAPTER_TRACE, changed), GOLDEN_TRACE, "trace_text()")


def test_trace_layout_follows_the_grammar():
    text = trace_text()
    assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text
    lines = text.split("\n")[:-1]
    assert lines[0] == HEADER == "TRACE residual-connections-v2 BEGIN"
    assert lines[-1] == FOOTER == "TRACE residual-connections-v2 END"
    for line in lines[1:-1]:
        assert RECORD.fullmatch(line), line
    assert [line.split(" ", 1)[0] for line in lines[1:-1]] == declared_order(chapter_results())
    assert declared_order(chapter_results())[:2] == ["CONFIG", "FORWARD"]


def test_gradcheck_record_carries_the_real_max_error():
    results = chapter_results()
    line = next(line for line in trace_text(CHAPTER_TRACE, results).splitlines()
                if "GRADCHECK" in line)
    assert f"max-error={results.gradcheck.max_error!r} " in line
    assert float(line.split("max-error=")[1].split()[0]) == results.gradcheck.max_error


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1.0"), (-2.25, "-2.25"), (2e-06, "2e-06"), (0.00390625, "0.00390625"),
     (0.1 + 0.2, "0.30000000000000004")],
)
def test_floats_are_shortest_round_trip(value, text):
    assert write_value("float", value) == text
    assert float(text) == value


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_refused(value):
    with pytest.raises(ValueProblem, match=r"^non-finite float"):
        write_value("vector", [1.0, value])


def test_value_writers():
    assert write_value("vector", [2, -1]) == "[2.0,-1.0]"
    assert write_value("shape", (2, 2)) == "[2,2]"
    assert write_value("names", ["a.b", "c"]) == "a.b,c"
    assert write_value("bool", True) == "true"
    for bad in ["has space", "a=b", "a,b", "a[0]", ""]:
        with pytest.raises(ValueProblem, match="bad name"):
            write_value("name", bad)
    for bad in ["Exact", "9x", "a_b", ""]:
        with pytest.raises(ValueProblem, match="bad word"):
            write_value("word", bad)
    for kind, empty in [("vector", []), ("shape", ()), ("names", [])]:
        with pytest.raises(ValueProblem, match="empty"):
            write_value(kind, empty)
    for bad in [-1, 1.5, True]:
        with pytest.raises(ValueProblem, match="not a non-negative int"):
            write_value("int", bad)


def test_trace_renders_the_results_it_is_given():
    results = chapter_results()
    failed = dataclasses.replace(results, replay_bitwise=False)
    assert "\nREPLAY bitwise=false\n" in trace_text(CHAPTER_TRACE, failed)


@pytest.mark.parametrize(("change", "message"), [
    ({"scaled": (ScaledOutput(1.0, (1.0, 1.0)), ScaledOutput(0.5, (1.0, 1.0)))},
     "SCALED alpha out of order"),
    ({"scaled": (ScaledOutput(0.5, (1.0, 1.0, 1.0)),)}, "output has 3 elements"),
    ({"name": "Not A Word"}, "CONFIG.name: bad word"),
    ({"replay_bitwise": 1.0}, "REPLAY.bitwise: not a bool"),
])
def test_the_writer_refuses_what_the_reader_would_reject(change, message):
    broken = dataclasses.replace(chapter_results(), **change)
    with pytest.raises(EngineError, match=message):
        trace_text(CHAPTER_TRACE, broken)


def test_an_unknown_trace_is_named():
    with pytest.raises(EngineError, match=r"no trace 'nope-v1'.*residual-connections-v2"):
        trace_text("nope-v1")


def test_each_labs_records_are_grouped_by_the_experiment_that_writes_them() -> None:
    for trace_id in ("gradient-flow-v4", "residual-stream-v4"):
        schema = SCHEMAS[trace_id]
        grouped = [spec.kind for specs in schema.experiments.values() for spec in specs]
        assert sorted(grouped) == sorted(spec.kind for spec in schema.records)  # each once
    experiments = SCHEMAS["gradient-flow-v4"].experiments
    assert [spec.kind for spec in experiments["ten-layers"]] == ["TEN-LAYERS-CONFIG",
                                                                 "TEN-LAYERS"]
    assert "claims" in experiments and "numerics" in experiments


def test_an_experiments_lines_are_its_lines_of_the_trace() -> None:
    from tracefile.writer import experiment_lines

    results, schema = chapter_results(), SCHEMAS[CHAPTER_TRACE]
    trace = trace_text(CHAPTER_TRACE, results).splitlines(keepends=True)
    printed = experiment_lines(schema, "primary", results.primary)
    assert printed.splitlines()[0].startswith("FORWARD ")
    assert printed == "".join(line for line in trace
                              if line.split(" ", 1)[0] in {"FORWARD", "BACKWARD", "PARAMETER"})
    assert experiment_lines(schema, "primary", results.primary, ("BACKWARD",)) == "".join(
        line for line in trace if line.startswith("BACKWARD "))


@pytest.mark.parametrize(("name", "kinds", "message"), [
    ("nope", (), r"residual-connections-v2 has no experiment 'nope' \(it has: primary, "),
    ("primary", ("STACK",), r"experiment primary writes no STACK record \(it writes FORWARD, "),
])
def test_an_experiment_or_record_the_trace_lacks_is_named(name, kinds, message) -> None:
    from tracefile.errors import TraceWriteError
    from tracefile.writer import experiment_lines

    with pytest.raises(TraceWriteError, match=message):
        experiment_lines(SCHEMAS[CHAPTER_TRACE], name, object(), kinds)
