"""Worker processes for the build's CPU-bound parts (drawing charts, checking links).

Contract: ``worker_pool(jobs, initializer, initargs)`` yields a ``ProcessPoolExecutor`` of
forked workers, one per usable core (at most ``jobs``), or None when parallel work would not
pay or not be safe: one usable core, one job, or another thread running in this process
(forking beside a running thread can copy a lock it holds, the serve command's HTTP threads
say). Callers then do the work themselves, in turn; the results must be the same either way.
Forked workers inherit this process's modules as they are (a test's replacement included);
what is submitted must still be picklable: a module-level function, called by name.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def parallel_workers(jobs: int) -> int:
    """How many workers ``jobs`` independent jobs should get here; 0 or 1 means none."""
    if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    return min(usable_cores(), jobs)


@contextmanager
def worker_pool(jobs: int, initializer: Callable[..., object] | None = None,
                initargs: tuple[object, ...] = ()) -> Iterator[ProcessPoolExecutor | None]:
    workers = parallel_workers(jobs)
    if workers < 2:
        yield None
        return
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=initializer, initargs=initargs)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)
