"""The suite passes off the reference numerics too: on a machine that cannot pin the engine's
kernels (ARM, an x86 without AVX2) the labs are held to measured tolerances and to their
verdicts instead of bytes (tests/trace_tolerance.py), and nothing else may depend on the
reference's last bits.

Shown here on the reference machine by running the fast loop (every test but the browser
tests and the full builds) in a nested session, and the decoder lab's fresh run, with the
kernels of an x86 without AVX2, as far as they can be forced: OpenBLAS's Sandybridge kernels
and numpy's baseline loops, unpinned (``ENGINE_NUMERICS=native``); the lab's run is held to
its record within the measured tolerances (`trace_tolerance.assert_trace_matches_golden`).
What it cannot show: an ARM machine's kernels, and the C library's own choice of maths
routines on such a CPU.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from numerics_support import WITHOUT_AVX2, reference_machine, with_kernels
from paths import ROOT
from trace_tolerance import assert_trace_matches_golden

from tracefile.schemas import SCHEMAS

LAB = "residual-stream-v3"


def nested(*args: str) -> subprocess.CompletedProcess[str]:
    """A pytest session of the project's own suite under ``WITHOUT_AVX2``, taking nothing of
    this session's (its options, worker ids, the path an outer worker set)."""
    env = {name: value for name, value in with_kernels(WITHOUT_AVX2).items()
           if not name.startswith("PYTEST_") and name != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=1200)


@pytest.mark.slow
def test_the_fast_loop_passes_off_the_reference_numerics() -> None:
    reference_machine()
    done = nested("-n", "2", "--dist", "loadgroup", "-m", "not slow and not browser")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-500:]


@pytest.mark.slow
def test_the_decoder_lab_holds_to_its_record_off_the_reference_numerics(tmp_path) -> None:
    """A cold run of the lab with other kernels (about six minutes on two cores)."""
    reference_machine()
    env = {**with_kernels(WITHOUT_AVX2), "ENGINE_CELL_CACHE": str(tmp_path / "cells")}
    env.pop("ENGINE_CELL_RECORDS", None)
    done = subprocess.run([sys.executable, "-m", "engine", "trace", LAB], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "reference=false" in done.stdout.splitlines()[1]
    assert_trace_matches_golden(done.stdout, ROOT / "records" / SCHEMAS[LAB].file_name,
                                SCHEMAS[LAB])
