"""Pinned numerics: every engine run computes with the same kernels, so a trace has the same
bytes on every x86-64 machine with AVX2 and the same libraries (the lock's numpy and
OpenBLAS, the reference kind's C library).

Contract:
- `pin()` must run before numpy is imported (``python -m engine``, the test suite's
  conftest.py, the benchmarks). It sets in ``os.environ`` what numpy and its OpenBLAS read
  once, when they load, replacing whatever the caller set: one BLAS thread always
  (``OPENBLAS_NUM_THREADS``), and on an x86-64 CPU with the x86-64-v3 features (AVX2, FMA
  and the rest) the reference kernels: OpenBLAS's Haswell ones (``OPENBLAS_CORETYPE``) and
  numpy's loops up to X86_V3 (``NPY_ENABLE_CPU_FEATURES``). ``ENGINE_NUMERICS=native``
  leaves the kernels to the machine and the caller (how benchmarks/bench_numerics.py forces
  others). It raises `NumericsError` when numpy is loaded already: its kernels are chosen by
  then.
- `current()` reads what actually runs from the loaded libraries (threadpoolctl for the
  BLAS, ``numpy.show_config`` for numpy's loops) as a frozen `Numerics`; its ``reference``
  is true exactly when those are the reference kernels, however they came to be chosen. The
  labs' traces carry it as their NUMERICS record.

Why both: on an AVX-512 machine OpenBLAS picks its SkylakeX kernels, whose products round
differently, and numpy its AVX-512 loops, whose float64 exp, log and power differ from the
X86_V3 ones in the last bit; training turns such bits into different losses and choices.
What no variable pins: on X86_V3, numpy takes float64 exp, log, power, expm1 and log1p from
the C library, so identical bytes also assume the same C library (the record names it).
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.errors import NumericsError

#: The variable that turns the pinning of kernels off (``native``); ``reference`` or unset: on.
MODE_VARIABLE = "ENGINE_NUMERICS"
#: The kernels every trace's bytes are defined by, and the variables that choose them.
REFERENCE_MACHINE = "x86_64"
REFERENCE_KERNEL = "Haswell"
REFERENCE_SIMD = "X86_V3"
REFERENCE_ENVIRONMENT = {"OPENBLAS_CORETYPE": REFERENCE_KERNEL,
                         "NPY_ENABLE_CPU_FEATURES": REFERENCE_SIMD}
#: numpy refuses to load with both set; the reference sets the first.
CONFLICTING = ("NPY_DISABLE_CPU_FEATURES",)
THREADS_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1"}
#: x86-64-v3 as /proc/cpuinfo spells it (abm: LZCNT): numpy's X86_V3 loops need every one,
#: OpenBLAS's Haswell kernels the AVX2 and FMA among them.
X86_V3_FLAGS = frozenset({"avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"})
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Numerics:
    """The kernels a run computed with, as the loaded libraries report them."""

    machine: str
    blas: str
    kernel: str
    threads: int
    numpy: str
    simd: tuple[str, ...]
    libc: str

    @property
    def reference(self) -> bool:
        """The reference kernels: OpenBLAS's Haswell ones on one thread, numpy's X86_V3."""
        return (self.machine == REFERENCE_MACHINE and self.blas.startswith("openblas-")
                and self.kernel == REFERENCE_KERNEL and self.threads == 1
                and self.simd[-1:] == (REFERENCE_SIMD,))


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (empty where it does not)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return frozenset(line.partition(":")[2].split())


def can_pin(machine: str | None = None, flags: frozenset[str] | None = None) -> bool:
    """This CPU can run the reference kernels: x86-64 with every x86-64-v3 feature."""
    machine = platform.machine() if machine is None else machine
    flags = cpu_flags() if flags is None else flags
    return machine == REFERENCE_MACHINE and flags >= X86_V3_FLAGS


def pinned_environment(mode: str | None, capable: bool) -> dict[str, str | None]:
    """The variables `pin` sets for ``mode`` (``ENGINE_NUMERICS``; None: unset) on a CPU that
    can (``capable``) or cannot run the reference kernels; None: the variable is removed."""
    mode = "reference" if mode is None else mode
    if mode not in ("reference", "native"):
        raise NumericsError(f"numerics: {MODE_VARIABLE} must be reference or native, "
                            f"got {mode!r}")
    if mode == "native" or not capable:
        return dict(THREADS_ENVIRONMENT)
    return {**THREADS_ENVIRONMENT, **dict.fromkeys(CONFLICTING), **REFERENCE_ENVIRONMENT}


def pin() -> None:
    """Fix the kernels numpy will load with (see the module docstring)."""
    if "numpy" in sys.modules:
        raise NumericsError("numerics: numpy is loaded already, so its kernels are chosen; "
                            "call engine.numerics.pin() before anything imports numpy")
    wanted = pinned_environment(os.environ.get(MODE_VARIABLE), can_pin())
    features = {name for name in ("NPY_ENABLE_CPU_FEATURES", *CONFLICTING)
                if (wanted[name] if name in wanted else os.environ.get(name))}
    if len(features) > 1:  # numpy would refuse to import, with a traceback
        raise NumericsError(f"numerics: {' and '.join(sorted(features))} are both set, and "
                            "numpy starts with one at most: unset one of them")
    for name, value in wanted.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def current() -> Numerics:
    """The kernels that run in this process now (numpy imported here if it was not)."""
    import numpy as np
    from threadpoolctl import threadpool_info

    blas = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    simd = np.show_config(mode="dicts")["SIMD Extensions"]
    libc_name, libc_version = platform.libc_ver()
    one = blas[0] if len(blas) == 1 else {}
    return Numerics(
        machine=platform.machine() or "unknown",
        blas=f"{one.get('internal_api', 'unknown')}-{one.get('version') or 'unknown'}",
        kernel=one.get("architecture") or "unknown",
        threads=int(one.get("num_threads") or 0),
        numpy=np.__version__,
        simd=(*simd.get("baseline", ()), *simd.get("found", ())) or ("none",),
        libc=f"{libc_name}-{libc_version}" if libc_name else "unknown",
    )
