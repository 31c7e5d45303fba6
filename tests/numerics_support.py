"""Running the engine with chosen kernels, for the tests of the pinned numerics.

- `with_kernels(changes)` is this process's environment without any variable that chooses
  the kernels (``NUMERICS_ENVIRONMENT``: conftest.py's pin set some), then ``changes``.
- `WITHOUT_AVX2` is as near to an x86 without AVX2 as one can force on an x86 with it:
  OpenBLAS's Sandybridge (AVX) kernels and numpy's baseline loops, every dispatched level
  turned off by name, unpinned (``ENGINE_NUMERICS=native``).
- `reference_machine()` skips a test (fails it under CI) where OpenBLAS's x86 kernels cannot
  be forced: not an x86-64 CPU with AVX2.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from browser_support import in_ci

from engine.numerics import MODE_VARIABLE, can_pin
from sitebuild.engine_runs import NUMERICS_ENVIRONMENT

_SIMD = np.show_config(mode="dicts")["SIMD Extensions"]
#: numpy's dispatched levels, whether this CPU has them or not (numpy refuses other names).
DISPATCHED = (*_SIMD.get("found", ()), *_SIMD.get("not found", ()))
WITHOUT_AVX2 = {MODE_VARIABLE: "native", "OPENBLAS_CORETYPE": "Sandybridge",
                "NPY_DISABLE_CPU_FEATURES": " ".join(DISPATCHED)}


def with_kernels(changes: dict[str, str]) -> dict[str, str]:
    """This environment, none of its kernel choices, then ``changes``."""
    kept = {k: v for k, v in os.environ.items() if k not in NUMERICS_ENVIRONMENT}
    return {**kept, **changes}


def reference_machine() -> None:
    """Skip (fail under CI) where OpenBLAS's x86 kernels cannot be forced."""
    if can_pin():
        return
    reason = "needs an x86-64 CPU with AVX2 to force OpenBLAS's kernels"
    if in_ci():
        pytest.fail(f"cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)
