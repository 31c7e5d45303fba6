"""The suite passes off the reference numerics too: on a machine that cannot pin the engine's
kernels (ARM, an x86 without AVX2) the labs are held to measured tolerances and to their
verdicts instead of bytes (tests/trace_tolerance.py), and nothing else may depend on the
reference's last bits.

Shown here on the reference machine by running the fast loop (every test but the browser
tests and the full builds) and the decoder lab's fresh run in a nested session with the
kernels of an x86 without AVX2, as far as they can be forced: OpenBLAS's Sandybridge kernels
and numpy's baseline loops, unpinned (``ENGINE_NUMERICS=native``). What it cannot show: an
ARM machine's kernels, and the C library's own choice of maths routines on such a CPU.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from numerics_support import WITHOUT_AVX2, reference_machine, with_kernels
from paths import ROOT

FRESH_RUN = "tests/test_trace_residual_stream.py::test_a_fresh_run_matches_the_golden_file"


def nested(*args: str) -> subprocess.CompletedProcess[str]:
    """A pytest session of the project's own suite under ``WITHOUT_AVX2``, taking nothing of
    this session's (its options, worker ids, the path an outer worker set)."""
    env = {name: value for name, value in with_kernels(WITHOUT_AVX2).items()
           if not name.startswith("PYTEST_") and name != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=1200)


# Under two minutes on the reference machine: the full suite runs it.
@pytest.mark.slow
def test_the_fast_loop_and_the_labs_pass_off_the_reference_numerics() -> None:
    reference_machine()
    for args in (("-n", "2", "--dist", "loadgroup", "-m", "not slow and not browser"),
                 (FRESH_RUN,)):
        done = nested(*args)
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        assert " passed" in done.stdout.splitlines()[-1], done.stdout[-500:]
