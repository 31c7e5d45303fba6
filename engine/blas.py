"""Run numpy's matrix products on one thread while the engine trains.

Contract: ``with single_threaded_blas():`` sets the thread count of every OpenBLAS library
loaded in the process (numpy's own ``scipy_openblas`` included) to 1 and restores each
library's previous count on exit. Where no OpenBLAS with a known setter is loaded (another
BLAS, another platform) it does nothing. It changes speed, never results: each product
still runs the same kernel, on one thread instead of several.

Why: the engine's products are tiny (``[480, 32] @ [32, 128]`` for the decoder lab).
OpenBLAS splits some of them across threads anyway, and on a two-core machine with any
other load the threads wait on each other: on the reference machine one weight gradient
then took 3 ms instead of 80 µs and a training step became ten times slower.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np  # noqa: F401  (loads numpy's OpenBLAS before we look for it)

_SETTERS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
            "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
            "openblas_get_num_threads")


def _loaded_openblas() -> list[tuple[ctypes._CFuncPtr, ctypes._CFuncPtr]]:
    """``(get, set)`` thread-count functions of each OpenBLAS mapped into this process."""
    maps = Path("/proc/self/maps")
    if not sys.platform.startswith("linux") or not maps.exists():
        return []
    paths = sorted({line.split()[-1] for line in maps.read_text().splitlines()
                    if "openblas" in line.lower() and line.split()[-1].startswith("/")})
    found = []
    for path in paths:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        getter = next((getattr(library, n) for n in _GETTERS if hasattr(library, n)), None)
        setter = next((getattr(library, n) for n in _SETTERS if hasattr(library, n)), None)
        if getter is not None and setter is not None:
            getter.restype, getter.argtypes = ctypes.c_int, ()
            setter.restype, setter.argtypes = None, (ctypes.c_int,)
            found.append((getter, setter))
    return found


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Every loaded OpenBLAS on one thread inside the block, as before after it."""
    libraries = _loaded_openblas()
    previous = [getter() for getter, _ in libraries]
    for _, setter in libraries:
        setter(1)
    try:
        yield
    finally:
        for (_, setter), count in zip(libraries, previous, strict=True):
            setter(count)


def blas_thread_counts() -> list[int]:
    """The current thread count of each loaded OpenBLAS (empty where none is found)."""
    return [getter() for getter, _ in _loaded_openblas()]
