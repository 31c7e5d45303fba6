"""Keep freed memory in the process: glibc's malloc settings for many short-lived arrays.

Contract: `keep_freed_memory()` puts ``MALLOC_ENVIRONMENT`` into ``os.environ`` (a value the
caller set wins), so that every process a run starts from then on (the grid's workers, a
notebook's kernel) keeps its freed memory: glibc reads the two variables once, when a process
starts, raising the mmap threshold to its 32 MiB maximum on 64-bit and the trim threshold to
256 MiB. The process that calls it starts with whatever its own environment held (``./dev``
exports them). Other C libraries ignore them. It changes speed, never results.

Why: a training step allocates and frees hundreds of arrays of a few hundred KiB (the MLP's
``[B, T, 4d]`` activations and their gradients). With glibc's defaults such a block either
comes from a fresh ``mmap`` or, once freed at the top of the heap, is handed back to the
system, so the next step page-faults on every page again: the decoder's step took 75 ms
instead of 53 ms at eight blocks (benchmarks/bench_engine.py, with and without them). The
runners call this (``python -m engine``), never the import of a module.
"""

from __future__ import annotations

import os

#: What glibc's malloc reads at a process's start (mallopt(3): M_MMAP_THRESHOLD, M_TRIM_THRESHOLD).
MALLOC_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": str(32 * 1024 * 1024),
                      "MALLOC_TRIM_THRESHOLD_": str(256 * 1024 * 1024)}


def keep_freed_memory() -> None:
    """Every process started from now on keeps its freed memory (see the module doc)."""
    for name, value in MALLOC_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
