"""Tests for engine/numerics.py: the pinned kernels, what a run reports, and that the pinning
holds: in this process, in ``python -m engine`` whatever the caller set, and against a forced
other kernel, which changes a lab's trace that the pinning keeps.

The tests that force OpenBLAS's kernels need an x86-64 CPU with AVX2 (the reference kind):
elsewhere they skip, and under CI (``CI=true``) they fail instead (tests/numerics_support.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from numerics_support import WITHOUT_AVX2, reference_machine, with_kernels
from paths import RECORDS_DIR, ROOT
from trace_tolerance import OFF_REFERENCE, trace_differences

from engine.errors import NumericsError
from engine.numerics import (
    CONFLICTING,
    MODE_VARIABLE,
    REFERENCE_ENVIRONMENT,
    THREADS_ENVIRONMENT,
    X86_V3_FLAGS,
    Numerics,
    can_pin,
    cpu_flags,
    current,
    pin,
    pinned_environment,
)
from sitebuild.engine_runs import NUMERICS_ENVIRONMENT
from tracefile import SCHEMAS, parse_trace

REFERENCE = Numerics("x86_64", "openblas-0.3.31.188.0", "Haswell", 1, "2.4.6",
                     ("X86_V2", "X86_V3"), "glibc-2.36")
LAB = "gradient-flow-v4"


def python(code: str, env: dict[str, str]) -> str:
    """``code`` in a fresh interpreter with ``env`` (numerics_support.with_kernels)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


REPORT = "from engine.numerics import pin, current; pin(); n = current(); print(n.reference, " \
         "n.kernel, n.threads, n.simd[-1])"
#: Retrain six recorded cells of the gradients lab's grid and count those whose bits differ.
RETRAIN = ("import io; from engine.numerics import pin; pin(); from engine import record_checks "
           "as r; refs = [x for x in r.sample('numerics', []) if x.label == "
           "'gradient-flow grid'][:6]; done, problems = r.rerun_cells(refs, io.StringIO()); "
           "print(f'{len(problems)} differ of {done}')")


# -- the environment pin sets -----------------------------------------------------------------

def test_reference_mode_sets_the_kernels_one_thread_and_drops_what_numpy_refuses() -> None:
    wanted = pinned_environment(None, capable=True)
    assert wanted == pinned_environment("reference", capable=True)
    assert wanted == {**THREADS_ENVIRONMENT, **dict.fromkeys(CONFLICTING),
                      **REFERENCE_ENVIRONMENT}
    assert wanted["OPENBLAS_CORETYPE"] == "Haswell"
    assert wanted["NPY_ENABLE_CPU_FEATURES"] == "X86_V3"
    assert wanted["NPY_DISABLE_CPU_FEATURES"] is None


def test_native_mode_and_an_incapable_cpu_set_one_thread_only() -> None:
    assert pinned_environment("native", capable=True) == THREADS_ENVIRONMENT
    assert pinned_environment(None, capable=False) == THREADS_ENVIRONMENT


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(NumericsError, match="ENGINE_NUMERICS must be reference or native, "
                                            "got 'fast'"):
        pinned_environment("fast", capable=True)


def test_pin_refuses_once_numpy_is_loaded() -> None:
    import numpy  # noqa: F401  (loaded with the kernels conftest.py pinned)

    with pytest.raises(NumericsError, match="numpy is loaded already"):
        pin()


def test_the_build_keys_its_engine_runs_by_the_variables_that_choose_the_kernels() -> None:
    chosen = {MODE_VARIABLE, *REFERENCE_ENVIRONMENT, *CONFLICTING}
    assert set(NUMERICS_ENVIRONMENT) == chosen


# -- which CPUs can pin -----------------------------------------------------------------------

def test_cpu_flags_are_read_from_the_first_flags_line(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx avx2 fma\nflags : ignored\n")
    assert cpu_flags(cpuinfo) == {"fpu", "avx", "avx2", "fma"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


def test_only_x86_64_with_every_x86_64_v3_feature_can_pin() -> None:
    assert can_pin("x86_64", X86_V3_FLAGS | {"avx512f"})
    assert not can_pin("x86_64", X86_V3_FLAGS - {"avx2"})
    assert not can_pin("x86_64", X86_V3_FLAGS - {"movbe"})
    assert not can_pin("aarch64", X86_V3_FLAGS)


# -- what a run reports -----------------------------------------------------------------------

def test_reference_means_haswell_on_one_thread_with_loops_up_to_x86_v3() -> None:
    assert REFERENCE.reference
    for other in (replace(REFERENCE, machine="aarch64"), replace(REFERENCE, kernel="SkylakeX"),
                  replace(REFERENCE, threads=2), replace(REFERENCE, blas="unknown-unknown"),
                  replace(REFERENCE, simd=("X86_V2", "X86_V3", "X86_V4")),
                  replace(REFERENCE, simd=("X86_V2",))):
        assert not other.reference, other


def test_this_process_computes_with_the_reference_kernels_wherever_it_asked() -> None:
    # conftest.py pinned before numpy loaded; a lost pin (numpy imported first, a variable
    # OpenBLAS or numpy ignored) shows here, and in every golden comparison of a lab.
    asked = pinned_environment(os.environ.get(MODE_VARIABLE), can_pin())
    numerics = current()
    if "OPENBLAS_CORETYPE" in asked:
        assert numerics.reference, numerics
    assert numerics.threads == 1


def test_pin_replaces_the_kernels_the_caller_chose() -> None:
    reference_machine()
    forced = with_kernels({"OPENBLAS_CORETYPE": "Sandybridge",
                           "NPY_DISABLE_CPU_FEATURES": "X86_V4", "OPENBLAS_NUM_THREADS": "2"})
    assert python(REPORT, forced) == "True Haswell 1 X86_V3"


def test_native_mode_keeps_the_kernels_the_caller_chose() -> None:
    reference_machine()
    assert python(REPORT, with_kernels(WITHOUT_AVX2)) == "False Sandybridge 1 X86_V2"


# -- a forced kernel changes a lab's trace that the pinning keeps -----------------------------

@pytest.mark.slow
@pytest.mark.longest
def test_a_forced_kernel_changes_the_trace_the_pinning_keeps() -> None:
    reference_machine()
    golden = (RECORDS_DIR / SCHEMAS[LAB].file_name).read_text(encoding="utf-8")

    def run(changes: dict[str, str]) -> str:
        # A whole lab's run: about two minutes here, more on a busy CI machine.
        done = subprocess.run([sys.executable, "-m", "engine", "trace", LAB], cwd=ROOT,
                              capture_output=True, text=True, timeout=900,
                              env=with_kernels(changes), check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    # Bytes: the pinning guarantees them, whatever the caller forced: recorded cells of the
    # lab's grid retrained under the forced variables, pinned, give their records' bits (the
    # whole lab's record is held to a pinned run by CI, docs/building.md).
    assert python(RETRAIN, with_kernels({**WITHOUT_AVX2, MODE_VARIABLE: "reference"})) == \
        "0 differ of 6"
    assert python(RETRAIN, with_kernels(WITHOUT_AVX2)) != "0 differ of 6"
    forced = run(WITHOUT_AVX2)
    assert forced != golden
    numerics = parse_trace(forced, "<forced>", SCHEMAS[LAB]).numerics
    assert (numerics.reference, numerics.kernel, numerics.simd) == (
        False, "Sandybridge", ("X86_V2",))
    # Off the reference, the lab is held to its measured tolerances, and holds.
    assert trace_differences(forced, golden, SCHEMAS[LAB], OFF_REFERENCE[LAB]) == []
