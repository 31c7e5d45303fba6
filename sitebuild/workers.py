"""Worker processes for the build's CPU-bound parts (drawing charts, checking links).

Contract: ``worker_pool(jobs, initializer, initargs)`` yields a ``ProcessPoolExecutor`` with
one worker per usable core, at most ``jobs`` (a single job too: its caller works beside it), or
None when parallel work would not pay: one usable core. Callers then do the work
themselves, in turn; the results must be the same either way. What is submitted must be
picklable: a module-level function, called by name.

How workers start depends on this process:
- no other thread running (a build): forked, so they inherit this process's modules as they
  are (imports done, a test's replacement of a function included) and start at once;
- another thread running (a server's HTTP and watcher threads, as when a plain
  ``mkdocs serve`` has the hook draw the figures): forking beside a running thread could copy
  a lock it holds, so workers come from a forkserver, a clean process started on first use
  and kept for the life of this one, which imports ``PRELOAD`` first; the pool's arguments
  are pickled to it. (``build_site.py serve`` starts no workers after its first build: its
  in-process rebuilds reuse the figures and find unchanged pages in its memo; the exception
  is a rebuild after a build that failed before storing its figures, which draws them.)

A worker dies with the process that started it, even one killed outright (SIGKILL): on Linux
the kernel is asked to kill it then (``sitebuild.tether``). Otherwise it would wait for work
forever, holding what it inherited, the build folder's lock among them, and the next build
would wait for it.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from sitebuild.tether import die_with

#: What a forkserver imports once, so its workers start with it: the program's main module
#: (each worker would import it again otherwise; it must keep its work under a
#: ``__name__ == "__main__"`` guard) and the modules whose functions are submitted (named,
#: not imported, here).
PRELOAD = ("__main__", "sitebuild.gates", "sitebuild.drawing", "diagrams.charts")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def start_method() -> str | None:
    """How workers would start here: "fork", "forkserver", or None (neither is available)."""
    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else None


@contextmanager
def worker_pool(jobs: int, initializer: Callable[..., object] | None = None,
                initargs: tuple[object, ...] = ()) -> Iterator[ProcessPoolExecutor | None]:
    cores, method = usable_cores(), start_method()
    if cores < 2 or jobs < 1 or method is None:
        yield None
        return
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(list(PRELOAD))  # heeded until the server starts
    pool = ProcessPoolExecutor(max_workers=min(cores, jobs), mp_context=context,
                               initializer=_start, initargs=(
                                   os.getpid() if method == "fork" else None, initializer,
                                   initargs))
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


def _start(parent: int | None, initializer: Callable[..., object] | None,
           initargs: tuple[object, ...]) -> None:
    """A worker's first act: die with its parent (``parent``: this process's pid, when it
    forked the worker itself; a forkserver's workers die with the forkserver, which ends with
    this process), then the caller's own start."""
    die_with(parent)
    if initializer is not None:
        initializer(*initargs)
