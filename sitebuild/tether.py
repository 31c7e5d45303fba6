"""Processes that die with the one that started them, even when it is killed outright.

Contract: ``die_with(parent)`` asks the kernel (Linux, ``PR_SET_PDEATHSIG``) to kill this
process with SIGKILL when its parent dies, and ends it at once if ``parent`` is gone already;
elsewhere it does nothing. ``tethered(module, args)`` is the command line that runs
``python -m MODULE ARGS`` so tethered to this process: ``python -m sitebuild.tether PID
MODULE ARGS`` calls ``die_with(PID)`` first, then execs ``python -m MODULE ARGS``.

The kernel acts when the *thread* that started the child ends, not the process: start
tethered children from a thread that outlives them (the build starts its engine runs and
forks its workers from its main thread).

The chart workers call ``die_with`` as their first act; the engine runs start through
``tethered``. Not through ``subprocess``'s ``preexec_fn``: that runs Python in the child of a
fork, which is unsafe beside threads (serve has some), and makes ``subprocess`` run this
process's at-fork hooks, where Python drops a SIGTERM's exception (``sitebuild.interrupts``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

#: prctl's option that has the kernel signal this process when its parent dies.
PR_SET_PDEATHSIG = 1

#: The C library, loaded here: a process just forked to run ``die_with`` loads nothing.
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with(parent: int | None) -> None:
    """Have the kernel kill this process when its parent dies (Linux), and end it now if the
    parent (``parent``, its pid; None: not known) is gone already: an engine run or a chart
    worker whose build was killed must not compute on, or hold the build folder's lock."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if parent is not None and os.getppid() != parent:  # it died before the request
            os._exit(1)


def tethered(module: str, args: Sequence[str]) -> list[str]:
    """The command that runs ``python -m module *args``, killed when this process dies."""
    return [sys.executable, "-m", __name__, str(os.getpid()), module, *args]


def main(argv: list[str]) -> NoReturn:
    """``PID MODULE ARGS...``: die with PID, then become ``python -m MODULE ARGS`` (the
    kernel's request outlives the exec), so the module runs, fails and reports exactly as
    it would started plainly."""
    parent, module, *args = argv
    die_with(int(parent))
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
