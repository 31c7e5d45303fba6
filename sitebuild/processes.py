"""Child processes that never outlive the build: engine runs, MkDocs and Zensical, serve's
renders, and the chart workers.

Contract: ``child_command(module, args)`` runs ``python -m MODULE ARGS`` through this module,
which first has the kernel kill it when the build dies (Linux's ``PR_SET_PDEATHSIG``,
``die_with``), then execs the module unchanged. ``worker_pool(jobs)`` yields forked workers
killed so too, or None where parallel work would not pay or forking is unsafe (one core,
another thread running); callers then work in turn, with the same results.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import NoReturn

#: prctl's option that has the kernel signal this process when its parent dies.
PR_SET_PDEATHSIG = 1
# Loaded here: a process just forked to run ``die_with`` then loads nothing. The standard
# library has no call for this request and no maintained package wraps it alone.
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with(parent: int | None) -> None:
    """Be killed (SIGKILL) when the parent dies; exit now if ``parent`` (a pid) is gone."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if parent is not None and os.getppid() != parent:  # it died before the request
            os._exit(1)


def child_command(module: str, args: Sequence[str]) -> list[str]:
    """The command that runs ``python -m module *args``, killed when this process dies. (Not
    ``subprocess``'s ``preexec_fn``: it runs Python between fork and exec, unsafe beside
    threads, and runs at-fork hooks where Python drops a SIGTERM's exception.)"""
    return [sys.executable, "-m", __name__, str(os.getpid()), module, *args]


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def other_threads() -> bool:
    """Whether another thread runs here (a server's): forking beside it could copy a lock it
    holds."""
    return threading.active_count() > 1


def worker_count(jobs: int) -> int:
    """How many workers a pool for ``jobs`` gets: one per usable core, at most ``jobs``; none
    on one core, beside another thread, or where processes cannot fork."""
    forkable = "fork" in multiprocessing.get_all_start_methods()
    if usable_cores() < 2 or other_threads() or not forkable:
        return 0
    return min(usable_cores(), jobs)


@contextmanager
def worker_pool(jobs: int, initializer: Callable[..., object] | None = None,
                initargs: tuple[object, ...] = ()) -> Iterator[ProcessPoolExecutor | None]:
    """Forked workers that die with this process (see the module doc), or None. What is
    submitted must be a module-level function: it is called by name."""
    workers = worker_count(jobs)
    if not workers:
        yield None
        return
    pool = ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("fork"),
                               initializer=_start, initargs=(os.getpid(), initializer, initargs))
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


def _start(parent: int, initializer: Callable[..., object] | None,
           initargs: tuple[object, ...]) -> None:
    die_with(parent)
    if initializer is not None:
        initializer(*initargs)


def main(argv: list[str]) -> NoReturn:
    """``PID MODULE ARGS...``: die with PID, then become ``python -m MODULE ARGS``."""
    parent, module, *args = argv
    die_with(int(parent))
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
