"""Comparing an engine run's fresh trace with its golden file, on any machine.

`assert_trace_matches_golden(actual, golden, schema)` decides by the NUMERICS records. When
the fresh run's equals the golden file's (the reference kernels, the same numpy, OpenBLAS
and C library) it compares bytes: the pinning (engine/numerics.py) guarantees the same bytes
on every x86-64 machine with AVX2 and those libraries, so any difference is a change in what
the engine computes. Otherwise (ARM, an x86 without AVX2, a run whose pinning was turned
off, another C library) the golden file's rounding cannot be had, and the run is held to the
lab's ``OFF_REFERENCE`` tolerances, measured below: every word, name, int, bool and shape
equal (the claims' verdicts among them), every float within its tolerance, NUMERICS aside.

`trace_differences(actual, golden, schema, tolerances)` lists every difference: a record
missing, extra or out of order, a keyed record with another key value, and any value that
differs. Floats (alone or in vectors, which must also have the same length) must satisfy
``|a - g| <= rtol * max(|a|, |g|) + atol``: by default ``rtol = 1e-9``, a million ulps, and
``atol = 1e-12`` for values that are rounding error themselves (a deviation of 2e-16 with one
kernel may be 0 with another). Keys that amplify rounding get their own tolerance, by
``"RECORD.key"`` or ``"RECORD.*"``, each with its measured reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from golden_support import assert_matches_golden

from tracefile import parse_trace
from tracefile.schema import RecordSpec, TraceSchema
from tracefile.schemas.numerics import NUMERICS

RTOL = 1e-9
ATOL = 1e-12
Tolerances = dict[str, tuple[float, float]]


# Measured over fourteen kernel choices other than the reference (OpenBLAS's Prescott,
# Nehalem, Sandybridge, Haswell and SkylakeX kernels, each with numpy's loops at its AVX-512
# level, its AVX2 level and its baseline, Haswell with AVX2 aside: benchmarks/README.md).
# The gradients lab: everything but these moved by at most 8.6e-12 (relative).
_GRADIENT_FLOW = {
    # 250 SGD steps: the losses moved by at most 1.5e-9 (relative).
    "TRAINING.*": (1e-6, 1e-12),
    # How far a float64 Vandermonde fit strays: rounding error itself, only its size matters
    # (it moved by 8e-8).
    "RANDOM-PATHS.vandermonde-deviation": (0.0, 1e-5),
    # The grid, measured under OpenBLAS's Sandybridge kernels without numpy's AVX2 loops: the
    # stacks at the edge of trainability (the deepest plain ones) end elsewhere, a median by
    # 0.10 and a curve's least by 0.26 (relative); no best rate, int or verdict changed.
    "ARM.*": (0.6, 1e-12),
    "BEST.*": (0.6, 1e-12),
    "BY-DEPTH.*": (0.6, 1e-12),
    # One block fitted to the identity in float64, measured the same way (see the note below).
    "IDENTITY.*": (1e-6, 1e-12),
    "IDENTITY-BEST.*": (1e-6, 1e-12),
    # The clipped stacks, measured the same way, are chaotic: from a loss of 1e8 or 6e2 the
    # clipped steps take another path with every rounding. A seed's final loss moved by up to
    # 0.97 (relative), an arm's median by 0.78, and the best rate of the deepest clipped stack
    # went from 0.3 to 1 (medians 1.32 and 1.38 at the reference, a near tie). No diverged
    # count and no verdict changed. So any value of the same sign passes.
    "CLIP-ARM.*": (1.0, 1e-12),
    "CLIP-BEST.*": (1.0, 1e-12),
}

# The decoder lab trains in float32, whose roundings training amplifies more than float64's:
# measured under OpenBLAS's Sandybridge kernels without numpy's AVX2 loops (the whole lab run
# so, against the reference golden), the largest relative change of each group was: TRAINING's
# curves 2.0e-2 and final losses 4.2e-3; STREAM 9.2e-2 (a write's norm); LENS 4.0e-3;
# EARLY-EXIT's block counts 6.1e-2 and its share stopped early 8.5e-2 absolute; LESION 4.8e-2
# (its median increase, a difference of nearby losses, 0.25); PRUNING 4.7e-2; QUANTIZATION
# 0.31 and FORMAT 6.4e-2 (differences of nearby numbers); PRECISION 4.3e-2. The grid: an arm's
# curve 0.40, a seed's final loss 0.23, a best arm's curve 0.15 and its median 2.9e-3; one
# arm's count of seeds that trained moved from two to three; accuracies by at most 1.4e-2.
# The long runs: whether one seed learns to add is chaotic (one seed's share of sums right
# went from 0.935 to 0.403, the median share by 0.21). No word, bool or verdict changed. The
# tolerances leave a margin of two to five above those (the accuracies of single long runs
# are shares, so any share passes).
_RESIDUAL_STREAM = {
    "TRAINING.*": (0.15, 1e-12),
    "TRAINING.final-validation": (2e-2, 1e-12),
    "TRAINING.final-train": (2e-2, 1e-12),
    "TRAINING.sum-digit-loss": (5e-2, 1e-12),
    "TRAINING.accuracy": (0.0, 5e-2),
    "STREAM.*": (0.3, 1e-12),
    # Rounding error itself: only its size matters.
    "STREAM.max-error": (0.0, 1e-12),
    "STREAM.relative-error": (0.0, 1e-14),
    "LENS.*": (2e-2, 1e-12),
    "EARLY-EXIT-CONFIG.*": (2e-2, 1e-12),
    "EARLY-EXIT.*": (0.3, 1e-12),
    "EARLY-EXIT.stopped-early": (0.0, 0.3),
    "LESION.*": (1.0, 1e-12),
    "REORDER.*": (1.0, 1e-12),
    "PRUNING.*": (0.25, 1e-12),
    "QUANTIZATION.*": (1.0, 1e-12),
    "PRECISION.*": (0.25, 1e-12),
    "FORMAT.*": (0.3, 1e-12),
    "ARM.*": (0.8, 1e-12),
    "ARM.trained": (0.6, 0.0),  # an int: seeds near the format-only loss may cross it
    "ARM.accuracy": (0.0, 5e-2),
    "SERIES.*": (0.8, 1e-12),
    "BEST.*": (0.6, 1e-12),
    "BEST.accuracy": (0.0, 5e-2),
    "LONG.*": (0.8, 1e-12),
    **{f"LONG.{key}": (0.0, 1.0) for key in ("accuracy", "accuracy-median", "accuracy-low",
                                            "accuracy-high")},
}
#: Each lab's tolerances off the reference numerics ("RECORD.key" or "RECORD.*": rtol, atol).
OFF_REFERENCE: dict[str, Tolerances] = {"gradient-flow-v4": _GRADIENT_FLOW,
                                        "residual-stream-v4": _RESIDUAL_STREAM}


def on_reference_numerics(text: str, schema: TraceSchema) -> bool:
    """The trace says the pinned reference kernels computed it."""
    return bool(parse_trace(text, "<trace>", schema).numerics.reference)


def same_numerics(actual: str, golden: str, schema: TraceSchema) -> bool:
    """Both traces were computed with the reference kernels and the same libraries."""
    mine = parse_trace(actual, "<rendered>", schema).numerics
    return mine.reference and mine == parse_trace(golden, "<golden>", schema).numerics


def assert_trace_matches_golden(actual: str, golden: Path, schema: TraceSchema) -> None:
    """Bytes with the golden file's numerics; otherwise its ``OFF_REFERENCE``, equal words."""
    expected = golden.read_text(encoding="utf-8")
    if same_numerics(actual, expected, schema):
        assert_matches_golden(actual, golden, f"a fresh run of {schema.trace_id}")
        return
    assert_matches_golden_within(actual, expected, schema, OFF_REFERENCE[schema.trace_id])


def trace_differences(actual: str, golden: str, schema: TraceSchema,
                      tolerances: Tolerances | None = None) -> list[str]:
    """Every difference between two traces of ``schema`` (empty: they match)."""
    got = parse_trace(actual, "<rendered>", schema)
    want = parse_trace(golden, "<golden>", schema)
    problems: list[str] = []
    for spec in schema.records:
        if spec == NUMERICS:  # which kernels ran: differs off the reference by definition
            continue
        rows_got, rows_want = _rows(got, spec), _rows(want, spec)
        if len(rows_got) != len(rows_want):
            problems.append(f"{spec.kind}: {len(rows_got)} records, golden has {len(rows_want)}")
        for index, (row, expected) in enumerate(zip(rows_got, rows_want, strict=False)):
            where = f"{spec.kind}[{index}]"
            for key in spec.keys:
                rtol, atol = _tolerance(spec, key.name, key.kind, tolerances or {})
                problem = _compare(key.kind, getattr(row, key.attr), getattr(expected, key.attr),
                                   rtol, atol)
                if problem:
                    problems.append(f"{where}.{key.name}: {problem}")
    return problems


def assert_matches_golden_within(actual: str, golden: str, schema: TraceSchema,
                                 tolerances: Tolerances | None = None) -> None:
    problems = trace_differences(actual, golden, schema, tolerances)
    if problems:
        shown = "\n".join(problems[:20])
        more = f"\n… and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise AssertionError(f"the trace differs from its golden file:\n{shown}{more}")


def _rows(trace: Any, spec: RecordSpec) -> tuple[Any, ...]:
    held = getattr(trace, spec.attr)
    return held if spec.keyed_by else (held,)


def _tolerance(spec: RecordSpec, key: str, kind: str,
               tolerances: Tolerances) -> tuple[float, float]:
    """A key's own tolerance, else its record's (``KIND.*``); an int only by its own name."""
    own = tolerances.get(f"{spec.kind}.{key}")
    if own or kind == "int":
        return own or (RTOL, ATOL)
    return tolerances.get(f"{spec.kind}.*") or (RTOL, ATOL)


def _compare(kind: str, got: Any, want: Any, rtol: float, atol: float) -> str:
    if kind in ("float", "int"):
        return "" if _close(got, want, rtol, atol) else f"{got!r} != golden {want!r}"
    if kind == "vector":
        if len(got) != len(want):
            return f"{len(got)} elements, golden has {len(want)}"
        bad = [i for i, (a, g) in enumerate(zip(got, want, strict=True))
               if not _close(a, g, rtol, atol)]
        return f"element {bad[0]}: {got[bad[0]]!r} != golden {want[bad[0]]!r}" if bad else ""
    return "" if got == want else f"{got!r} != golden {want!r}"


def _close(got: float, want: float, rtol: float, atol: float) -> bool:
    return abs(got - want) <= rtol * max(abs(got), abs(want)) + atol
