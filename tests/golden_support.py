"""The freshness gate's one comparison: rendered text against a versioned golden file.

`assert_matches_golden(actual, golden, rendered_by)` passes only when the text equals the
file byte for byte; otherwise it fails with a unified diff (golden → rendered), so a change in
what the engine computes shows up in CI as a reviewable diff.

`assert_drawing_matches_golden(actual, golden, rendered_by)` is the same comparison for drawing
outputs (DOT texts, plot SVGs, the explorer's corner), whose goldens may be re-accepted after an
intended change with ``UPDATE_GOLDEN=1`` in the environment (the engine's traces never may: they
are the independent check of what it computes; ``./dev goldens`` rewrites them from a fresh run,
tests/refresh_goldens.py).

`scaled_records(trace_text, extra)` is a golden trace with `extra` more keyed `SCALED` records,
for the tests of the record limit.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path


def assert_matches_golden(actual: str, golden: Path, rendered_by: str = "rendered") -> None:
    expected = golden.read_bytes().decode("utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=str(golden),
            tofile=rendered_by,
        )
        raise AssertionError(f"{rendered_by} differs from the golden file:\n" + "".join(diff))


def assert_drawing_matches_golden(actual: str, golden: Path, rendered_by: str) -> None:
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(actual.encode("utf-8"))
    assert_matches_golden(actual, golden, f"{rendered_by} (UPDATE_GOLDEN=1 to accept)")


def scaled_records(trace_text: str, extra: int) -> str:
    """``trace_text`` with ``extra`` more SCALED records (keyed, increasing alphas) after its
    last one."""
    lines = trace_text.splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith("SCALED "))
    added = [f"SCALED alpha={2.0 + k / 1024!r} output=[2.0,-1.0]\n" for k in range(extra)]
    return "".join(lines[: last + 1] + added + lines[last + 1 :])
