"""Keep freed memory in the process: glibc malloc settings for many short-lived arrays.

Contract: `keep_freed_memory()` raises glibc's mmap threshold (to its 32 MiB maximum on
64-bit) and its trim threshold (to 256 MiB) with ``mallopt``, once per process, and returns
whether it could. On a C library without ``mallopt`` (not glibc) it does nothing and
returns False. It changes speed, never results.

Why: a training step allocates and frees hundreds of arrays of a few hundred KiB (the MLP's
``[B, T, 4d]`` activations and their gradients). With glibc's defaults such a block either
comes from a fresh ``mmap`` or, once freed at the top of the heap, is handed back to the
system, so the next step page-faults on every page again. On the reference machine that
made an elementwise operation on a 480 KiB array cost about 350 µs instead of 15 µs and
doubled the decoder's step time. The runners call this (``python -m engine`` and
`engine.models.train`), never the import of a module.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 256 * 1024 * 1024


@functools.cache
def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds; False where ``mallopt`` is unavailable."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
