"""The freshness gate's one comparison: rendered text against a versioned golden file.

`assert_matches_golden(actual, golden, rendered_by)` passes only when the text equals the
file byte for byte; otherwise it fails with a unified diff (golden → rendered), so a change in
what the engine computes shows up in CI as a reviewable diff.
"""

from __future__ import annotations

import difflib
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
