"""Trace ``residual-stream-v1``: its declaration, its golden file, and (slow) a fresh run.

The golden file (tests/golden/residual-stream-v1.trace) is compared with a tolerance, not byte
for byte: see tests/trace_tolerance.py for the default tolerances and `TOLERANCES` below for
the looser ones training needs. The fast tests read only the golden file; the one slow test
runs the whole lab once (about half a minute) and compares. To refresh the golden file after
an intended change of the experiments::

    python -m engine trace residual-stream-v1 -o tests/golden/residual-stream-v1.trace
"""

from __future__ import annotations

import re

import pytest
from paths import GOLDEN_DIR
from trace_tolerance import assert_matches_golden_within, trace_differences

from engine.experiments.residual_stream.common import MAX_POINTS
from tracefile import SCHEMAS, parse_trace

TRACE_ID = "residual-stream-v1"
SCHEMA = SCHEMAS[TRACE_ID]
GOLDEN = GOLDEN_DIR / SCHEMA.file_name
MAX_BYTES = 100_000

# Measured: training the lab's models again with one weight of the token embedding moved by
# one ulp (what another machine's BLAS does to many values at every step) moved the deepest
# residual model's validation curve by up to 1.7e-4 (relative), its final loss by 3.6e-6, its
# stream norms by 3.7e-4, the logit lens by 2.4e-4 and early exit's block counts by 4.9e-4;
# the shallow and the stalled models by at most 4e-9. Quantization errors moved by 2.3e-2 and
# the share of an update lost in half precision by 1.8e-2 (they are differences of nearby
# numbers). Tolerances below leave about a factor of five above those.
_TRAINED = (1e-3, 1e-12)
_DIFFERENCES = (0.1, 1e-12)
TOLERANCES = {
    "TRAINING.*": _TRAINED,
    "STREAM.*": _TRAINED,
    # Rounding error itself: only its size matters.
    "STREAM.max-error": (0.0, 1e-12),
    "STREAM.relative-error": (0.0, 1e-14),
    "LENS.*": _TRAINED,
    "EARLY-EXIT-CONFIG.*": _TRAINED,
    "EARLY-EXIT.*": (2e-3, 1e-12),
    "LESION.*": _TRAINED,
    "PRUNING.*": _TRAINED,
    "QUANTIZATION.*": _DIFFERENCES,
    "PRECISION.*": _TRAINED,
    "FORMAT.*": _DIFFERENCES,
}


@pytest.fixture(scope="module")
def golden() -> str:
    return GOLDEN.read_text(encoding="utf-8")


def test_schema_is_registered_with_its_producer() -> None:
    assert SCHEMA.producer == "engine.experiments.residual_stream:residual_stream_results"
    assert SCHEMA.title and SCHEMA.doc


def test_every_record_and_key_is_documented_without_digits() -> None:
    texts = [SCHEMA.title, SCHEMA.doc]
    for spec in SCHEMA.records:
        assert spec.doc, spec.kind
        texts.append(spec.doc)
        for key in spec.keys:
            assert key.doc, f"{spec.kind}.{key.name}"
            assert re.fullmatch(r"[a-z][a-z-]*", key.name), key.name
            texts.append(key.doc)
    assert not [t for t in texts if re.search(r"\d", t)]


def test_golden_parses_holds_its_invariants_and_stays_small(golden: str) -> None:
    trace = parse_trace(golden, "golden", SCHEMA)
    assert len(golden.encode()) < MAX_BYTES
    assert not re.search(r"(?i)\b(nan|inf)", golden)
    assert trace.resolve("CORPUS.vocab") == 13
    assert trace.resolve("STREAM.exact-in-order") is True
    for run in trace.training:
        assert len(run.validation) == len(run.eval_steps) <= MAX_POINTS
        assert len(run.train_loss) == len(run.train_steps) <= MAX_POINTS


def test_golden_comparison_catches_a_changed_value_and_word(golden: str) -> None:
    assert trace_differences(golden, golden, SCHEMA, TOLERANCES) == []
    changed = golden.replace("behaviour=bounded", "behaviour=compounding", 1)
    line = next(ln for ln in golden.splitlines() if ln.startswith("FLOPS setting=lab"))
    changed = changed.replace(line, line.replace("add=64.0", "add=64.5"))
    problems = trace_differences(changed, golden, SCHEMA, TOLERANCES)
    assert any("behaviour: 'compounding' != golden 'bounded'" in p for p in problems)
    assert any(p.startswith("FLOPS[0].add:") for p in problems)


def test_golden_comparison_tolerates_training_noise(golden: str) -> None:
    line = next(ln for ln in golden.splitlines() if ln.startswith("TRAINING "))
    final = re.search(r"final-validation=([^ ]+)", line)
    assert final is not None
    nudged = repr(float(final.group(1)) * (1 + 1e-5))
    changed = golden.replace(line, line.replace(final.group(0), f"final-validation={nudged}"))
    assert changed != golden and trace_differences(changed, golden, SCHEMA, TOLERANCES) == []


@pytest.mark.slow
def test_a_fresh_run_matches_the_golden_file(golden: str) -> None:
    from engine.trace import render_trace

    assert_matches_golden_within(render_trace(TRACE_ID), golden, SCHEMA, TOLERANCES)
