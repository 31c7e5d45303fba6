"""Trace ``gradient-flow-v4``: its declaration, its size, and its golden file.

A fresh run is compared with the golden file (tests/golden/gradient-flow-v4.trace) byte for
byte on the reference numerics, within its measured tolerances elsewhere
(tests/trace_tolerance.py).
To refresh it after an intended change of the experiments (with the reference numerics)::

    python -m engine trace gradient-flow-v4 -o tests/golden/gradient-flow-v4.trace
"""

from __future__ import annotations

import re

import pytest
from gradient_flow_support import TRACE_ID, lab_trace
from paths import RECORDS_DIR
from trace_tolerance import (
    OFF_REFERENCE,
    assert_trace_matches_golden,
    on_reference_numerics,
    trace_differences,
)

from tracefile import SCHEMAS, parse_trace

# Both modules run the whole lab once (gradient_flow_support); one worker of the parallel fast
# loop takes them all, so it runs once there too.
pytestmark = pytest.mark.xdist_group("gradient-flow-lab")

SCHEMA = SCHEMAS[TRACE_ID]
GOLDEN = RECORDS_DIR / SCHEMA.file_name
#: The site loads the whole trace; keep it small.
MAX_BYTES = 400_000


@pytest.fixture(scope="module")
def text() -> str:
    return lab_trace()


def test_schema_is_registered_with_its_producer() -> None:
    assert SCHEMA.producer == "engine.experiments.gradient_flow:gradient_flow_results"
    assert SCHEMA.title and SCHEMA.doc


def test_every_record_and_key_is_documented() -> None:
    for spec in SCHEMA.records:
        assert spec.doc, spec.kind
        for key in spec.keys:
            assert key.doc, f"{spec.kind}.{key.name}"


def test_trace_parses_and_stays_small(text: str) -> None:
    trace = parse_trace(text, "<rendered>", SCHEMA)
    assert trace.trace_id == TRACE_ID
    assert len(text.encode()) < MAX_BYTES
    assert trace.resolve("CHAPTER-PATHS.contributions[2]") == 0.375
    assert trace.resolve("SILENT-STEP[3].gradient") == (-3.25,)
    assert trace.resolve("TEN-LAYERS[0.1].residual") == 2.5937424601


def test_trace_holds_finite_numbers_only(text: str) -> None:
    assert not re.search(r"(?i)\b(nan|inf)", text)


def test_the_cut_grid_reproduces_the_golden_curves(text: str) -> None:
    ours, golden = parse_trace(text, "<cut>", SCHEMA), parse_trace(
        GOLDEN.read_text(encoding="utf-8"), "<golden>", SCHEMA)
    exact = ours.numerics == golden.numerics and ours.numerics.reference
    rtol, atol = (0.0, 0.0) if exact else OFF_REFERENCE[TRACE_ID]["TRAINING.*"]
    assert ours.training and len(ours.training) == len(golden.training)
    for mine, theirs in zip(ours.training, golden.training, strict=True):
        assert (mine.curve, mine.steps, mine.diverged) == (theirs.curve, theirs.steps,
                                                           theirs.diverged)
        for got, want in zip((*mine.loss, mine.final_loss), (*theirs.loss, theirs.final_loss),
                             strict=True):
            assert abs(got - want) <= rtol * max(abs(got), abs(want)) + atol, mine.curve


def test_golden_was_written_on_the_reference_numerics() -> None:
    assert on_reference_numerics(GOLDEN.read_text(encoding="utf-8"), SCHEMA)


def test_golden_comparison_catches_a_changed_value() -> None:
    golden = GOLDEN.read_text(encoding="utf-8")
    assert trace_differences(golden, golden, SCHEMA, OFF_REFERENCE[TRACE_ID]) == []
    line = next(ln for ln in golden.splitlines() if ln.startswith("RANDOM-PATHS "))
    norm = re.search(r"gradient-norm=([^ ]+)", line)
    assert norm is not None
    nudged = repr(float(norm.group(1)) * (1 + 1e-7))
    changed = golden.replace(line, line.replace(norm.group(0), f"gradient-norm={nudged}"))
    assert trace_differences(changed, golden, SCHEMA, OFF_REFERENCE[TRACE_ID]) == [
        f"RANDOM-PATHS[0].gradient-norm: {float(nudged)!r} != golden {float(norm.group(1))!r}"]


def test_golden_comparison_catches_a_changed_word_and_vector() -> None:
    golden = GOLDEN.read_text(encoding="utf-8")
    changed = golden.replace("plain-fate=vanished", "plain-fate=kept", 1).replace(
        "contributions=[1.0,-1.0,0.375,", "contributions=[1.0,-1.0,0.376,", 1)
    problems = trace_differences(changed, golden, SCHEMA, OFF_REFERENCE[TRACE_ID])
    assert any("plain-fate: 'kept' != golden 'vanished'" in p for p in problems)
    assert any(p.startswith("CHAPTER-PATHS[0].contributions: element 2") for p in problems)
    assert len(problems) == 2


def test_golden_comparison_tolerates_last_bit_noise() -> None:
    golden = GOLDEN.read_text(encoding="utf-8")
    line = next(ln for ln in golden.splitlines() if ln.startswith("RANDOM-PATHS "))
    norm = re.search(r"gradient-norm=([^ ]+)", line)
    assert norm is not None
    nudged = repr(float(norm.group(1)) * (1 + 4e-16))
    changed = golden.replace(line, line.replace(norm.group(0), f"gradient-norm={nudged}"))
    assert changed != golden
    assert trace_differences(changed, golden, SCHEMA, OFF_REFERENCE[TRACE_ID]) == []


def test_bytes_are_compared_only_with_the_golden_files_numerics() -> None:
    golden = GOLDEN.read_text(encoding="utf-8")
    line = next(ln for ln in golden.splitlines() if ln.startswith("RANDOM-PATHS "))
    norm = re.search(r"gradient-norm=([^ ]+)", line)
    assert norm is not None
    nudged = repr(float(norm.group(1)) * (1 + 4e-16))
    noisy = golden.replace(line, line.replace(norm.group(0), f"gradient-norm={nudged}"))
    # With the golden file's numerics, one last bit is a change in what the engine computes.
    with pytest.raises(AssertionError, match="differs from the golden file"):
        assert_trace_matches_golden(noisy, GOLDEN, SCHEMA)
    # With another C library the same bit is rounding, held to the tolerances; a word is not.
    elsewhere = noisy.replace("libc=glibc-2.36", "libc=glibc-2.39", 1)
    assert elsewhere != noisy
    assert_trace_matches_golden(elsewhere, GOLDEN, SCHEMA)
    with pytest.raises(AssertionError, match="plain-fate"):
        assert_trace_matches_golden(elsewhere.replace("plain-fate=vanished", "plain-fate=kept",
                                                      1), GOLDEN, SCHEMA)
