"""Comparing a freshly rendered trace with its golden file, floats within a tolerance.

`trace_differences(actual, golden, schema, tolerances)` parses both texts with ``schema`` and
lists every difference: a record missing, extra or out of order, a keyed record with another
key value, and any value that differs. Words, names, ints, bools and shapes must be equal;
floats (alone or in vectors, which must also have the same length) must satisfy
``|a - g| <= rtol * max(|a|, |g|) + atol``.

Why not bytes: the chapter's trace is compared byte for byte because its values are exact
binary fractions. The gradients lab multiplies and sums random float64 matrices through
OpenBLAS, whose summation order depends on the CPU kernel and thread count, so another machine
may differ in the last bits. The default ``rtol = 1e-9`` allows a million ulps of that, and
``atol = 1e-12`` covers values that are rounding error themselves (a deviation of 2e-16 on one
machine may be 0 on another). Keys that amplify such differences get their own tolerance, by
``"RECORD.key"`` or ``"RECORD.*"``, each with a measured reason where it is declared.
"""

from __future__ import annotations

from typing import Any

from tracefile import parse_trace
from tracefile.schema import RecordSpec, TraceSchema

RTOL = 1e-9
ATOL = 1e-12
Tolerances = dict[str, tuple[float, float]]


def trace_differences(actual: str, golden: str, schema: TraceSchema,
                      tolerances: Tolerances | None = None) -> list[str]:
    """Every difference between two traces of ``schema`` (empty: they match)."""
    got = parse_trace(actual, "<rendered>", schema)
    want = parse_trace(golden, "<golden>", schema)
    problems: list[str] = []
    for spec in schema.records:
        rows_got, rows_want = _rows(got, spec), _rows(want, spec)
        if len(rows_got) != len(rows_want):
            problems.append(f"{spec.kind}: {len(rows_got)} records, golden has {len(rows_want)}")
        for index, (row, expected) in enumerate(zip(rows_got, rows_want, strict=False)):
            where = f"{spec.kind}[{index}]"
            for key in spec.keys:
                rtol, atol = _tolerance(spec, key.name, tolerances or {})
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


def _tolerance(spec: RecordSpec, key: str, tolerances: Tolerances) -> tuple[float, float]:
    return tolerances.get(f"{spec.kind}.{key}") or tolerances.get(f"{spec.kind}.*") or (
        RTOL, ATOL)


def _compare(kind: str, got: Any, want: Any, rtol: float, atol: float) -> str:
    if kind == "float":
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
